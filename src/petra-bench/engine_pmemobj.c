/* SPDX-License-Identifier: MIT */
/*
 * petra-bench engine "pmemobj": the baseline of seed 002, section 5.3
 * ("PMDK (libpmemobj++ protected using read-write locks)"), in C on
 * libpmemobj 1.x. One pool file holds one of the three structures, built
 * the textbook way for an undo-log PTM:
 *
 *   list      sorted singly linked list of nodes {key, value, next}
 *   skiplist  sorted skiplist, random levels (p = 1/2, at most 20 = log2 of
 *             the 1M key range), one allocation per node with its tower
 *   map       fixed array of buckets (the same count PETRA's map is given,
 *             65536 by default), each a sorted list like `list`
 *
 * Concurrency: one pthread reader-writer lock per pool. A transaction of
 * only FINDs takes it shared and reads without a libpmemobj transaction
 * (there is nothing to undo or persist; wrapping it in TX_BEGIN/TX_END
 * would only add cost to the baseline). Any other transaction takes it
 * exclusive and runs inside TX_BEGIN/TX_END: pmemobj_tx_add_range_direct
 * snapshots each word before it is written, new nodes come from
 * pmemobj_tx_alloc, removed nodes go to pmemobj_tx_free. The operations
 * run in order; the first failed precondition (INSERT: key present;
 * DELETE/UPDATE/FIND: key absent) calls pmemobj_tx_abort, which rolls the
 * earlier operations back from the undo log: the semantics of
 * strobe_petra_execute.
 *
 * Why this is fair: same operations, same keys, same bucket count, same
 * file-backed mapping (a regular file; with PMEM_IS_PMEM_FORCE=1
 * libpmemobj persists with cache-line flushes and fences like PETRA
 * instead of msync), nodes found by the same kind of search. Writers are
 * serialized, which is what the seed measured; readers run in parallel.
 *
 * Engine "pmemobj-bucket" (maps only) is the strong baseline: the same map
 * and transactions, but one PMEMrwlock per bucket, kept in the pool next
 * to the bucket heads, instead of the pool-wide lock. A transaction takes
 * the locks of the buckets its operations touch in ascending bucket order
 * (two-phase locking: no deadlock), exclusive for a bucket it writes,
 * shared otherwise, and holds them to the end of its libpmemobj
 * transaction; transactions on disjoint buckets run in parallel.
 *
 * Counting flushes and fences: libpmemobj persists only through libpmem
 * (pmem_flush, pmem_drain, pmem_persist, pmem_memcpy/memmove/memset,
 * pmem_deep_flush, pmem_msync), which it calls through the PLT. This file
 * defines those symbols, so the dynamic linker binds libpmemobj's calls to
 * them; each counts and forwards to libpmem's own (dlsym RTLD_NEXT).
 * Counted: cache lines covered by a flush, or written by a libpmem copy
 * that flushes (with clwb/clflushopt or non-temporal stores: both write
 * the line back), and one fence per drain (pmem_drain, pmem_persist, a
 * copy without PMEM_F_MEM_NODRAIN). A nesting guard keeps libpmem's own
 * internal calls (pmem_persist -> pmem_flush) from counting twice. If
 * libpmemobj ever calls pmem_msync (the pool is not treated as pmem), the
 * counts are reported as unknown.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <libpmem.h>
#include <libpmemobj.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "engine.h"

#define POOL_LAYOUT "strobe-petra-bench"
#define SKIP_MAX_LEVEL 20
#define CACHE_LINE 64u

enum { TYPE_ROOT = 0, TYPE_LIST_NODE = 1, TYPE_SKIP_NODE = 2, TYPE_BUCKETS = 3, TYPE_LOCKS = 4 };

/* ---- persistent layout --------------------------------------------------- */

struct list_node {
    uint64_t key, value;
    PMEMoid next;
};

struct skip_node {
    uint64_t key, value;
    uint32_t level; /* entries in next[] */
    uint32_t pad;
    PMEMoid next[]; /* next[i]: successor at level i */
};

struct pool_root {
    uint32_t kind;    /* enum strobe_petra_kind */
    uint32_t buckets; /* map only */
    PMEMoid head;     /* list: first node; skiplist: head tower (key 0); map: bucket array */
    PMEMoid locks;    /* pmemobj-bucket: a PMEMrwlock per bucket */
};

/* ---- flush/fence counting (libpmem interposition) ------------------------ */

struct flush_count {
    uint64_t lines, fences;
};

/* libpmem entry points the wrappers forward to, resolved on first use (a
 * race resolves the same address twice: benign). The interposed symbols
 * have no context argument, so this table and the per-thread pointer
 * below are the only process-wide state of the engine. */
static struct libpmem_real {
    void (*_Atomic flush)(const void *, size_t);
    void (*_Atomic deep_flush)(const void *, size_t);
    void (*_Atomic persist)(const void *, size_t);
    void (*_Atomic drain)(void);
    int (*_Atomic msync)(const void *, size_t);
    void *(*_Atomic memcpy)(void *, const void *, size_t, unsigned);
    void *(*_Atomic memmove)(void *, const void *, size_t, unsigned);
    void *(*_Atomic memset)(void *, int, size_t, unsigned);
    atomic_int msync_seen; /* counts are not meaningful then */
} libpmem_real;

/* Per thread: where this thread's counts go (a struct in its engine
 * thread state; NULL: not counted, e.g. pool creation) and the nesting
 * depth of wrappers (libpmem calling its own exported functions). */
static __thread struct pmem_interpose {
    struct flush_count *count;
    int depth;
} pmem_interpose;

static void *resolve(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "petra-bench: libpmem has no %s\n", name);
        abort();
    }
    return f;
}

#define REAL(field, name)                                                                  \
    ({                                                                                     \
        __typeof__(atomic_load_explicit(&libpmem_real.field, memory_order_relaxed)) f_ =   \
            atomic_load_explicit(&libpmem_real.field, memory_order_relaxed);               \
        if (!f_) {                                                                         \
            f_ = resolve(name);                                                            \
            atomic_store_explicit(&libpmem_real.field, f_, memory_order_relaxed);          \
        }                                                                                  \
        f_;                                                                                \
    })

static uint64_t lines_of(const void *addr, size_t len)
{
    if (len == 0)
        return 0;
    uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(CACHE_LINE - 1);
    uintptr_t e = (uintptr_t)addr + len;
    return (e - a + CACHE_LINE - 1) / CACHE_LINE;
}

static void count(uint64_t lines, uint64_t fences)
{
    struct flush_count *c = pmem_interpose.count;
    if (c && pmem_interpose.depth == 0) {
        c->lines += lines;
        c->fences += fences;
    }
}

static uint64_t copy_lines(const void *dest, size_t len, unsigned flags)
{
    return (flags & PMEM_F_MEM_NOFLUSH) ? 0 : lines_of(dest, len);
}

static uint64_t copy_fences(unsigned flags)
{
    return (flags & (PMEM_F_MEM_NODRAIN | PMEM_F_MEM_NOFLUSH)) ? 0 : 1;
}

void pmem_flush(const void *addr, size_t len)
{
    count(lines_of(addr, len), 0);
    pmem_interpose.depth++;
    REAL(flush, "pmem_flush")(addr, len);
    pmem_interpose.depth--;
}

void pmem_deep_flush(const void *addr, size_t len)
{
    count(lines_of(addr, len), 0);
    pmem_interpose.depth++;
    REAL(deep_flush, "pmem_deep_flush")(addr, len);
    pmem_interpose.depth--;
}

void pmem_persist(const void *addr, size_t len)
{
    count(lines_of(addr, len), 1);
    pmem_interpose.depth++;
    REAL(persist, "pmem_persist")(addr, len);
    pmem_interpose.depth--;
}

void pmem_drain(void)
{
    count(0, 1);
    pmem_interpose.depth++;
    REAL(drain, "pmem_drain")();
    pmem_interpose.depth--;
}

int pmem_msync(const void *addr, size_t len)
{
    /* only while counting: pool creation msyncs its headers regardless */
    if (pmem_interpose.count)
        atomic_store_explicit(&libpmem_real.msync_seen, 1, memory_order_relaxed);
    return REAL(msync, "pmem_msync")(addr, len);
}

void *pmem_memcpy(void *dest, const void *src, size_t len, unsigned flags)
{
    count(copy_lines(dest, len, flags), copy_fences(flags));
    pmem_interpose.depth++;
    void *r = REAL(memcpy, "pmem_memcpy")(dest, src, len, flags);
    pmem_interpose.depth--;
    return r;
}

void *pmem_memmove(void *dest, const void *src, size_t len, unsigned flags)
{
    count(copy_lines(dest, len, flags), copy_fences(flags));
    pmem_interpose.depth++;
    void *r = REAL(memmove, "pmem_memmove")(dest, src, len, flags);
    pmem_interpose.depth--;
    return r;
}

void *pmem_memset(void *dest, int c, size_t len, unsigned flags)
{
    count(copy_lines(dest, len, flags), copy_fences(flags));
    pmem_interpose.depth++;
    void *r = REAL(memset, "pmem_memset")(dest, c, len, flags);
    pmem_interpose.depth--;
    return r;
}

/* ---- engine state ------------------------------------------------------------ */

struct pmemobj_engine {
    PMEMobjpool *pop;
    struct pool_root *root;
    enum strobe_petra_kind kind;
    uint32_t bucket_mask;
    pthread_rwlock_t lock; /* shared: all-FIND transactions; exclusive: others */
    PMEMrwlock *bucket_locks; /* pmemobj-bucket: instead of lock */
    pthread_mutex_t threads_lock;
    struct pmemobj_thread *threads; /* live thread states, for stats */
    struct flush_count retired;     /* counts of stopped threads */
};

struct pmemobj_thread {
    struct pmemobj_engine *eng;
    struct pmemobj_thread *next;
    uint64_t level_rng; /* skiplist levels; separate from the op stream */
    struct flush_count count;
};

static inline void *D(PMEMoid oid)
{
    return pmemobj_direct(oid);
}

/* ---- sorted list (list set and map buckets) ---------------------------------- */

/* The link that points at the first node with key >= key (*link may be
 * OID_NULL); *node is that node or NULL. */
static PMEMoid *list_search(PMEMoid *link, uint64_t key, struct list_node **node)
{
    struct list_node *n;
    while ((n = D(*link)) != NULL && n->key < key)
        link = &n->next;
    *node = n;
    return link;
}

/* 1 if the precondition held and the operation was applied, 0 if not.
 * Writers run inside a transaction; a failed allocation aborts it from
 * within pmemobj_tx_alloc. */
static int list_apply(PMEMoid *head, strobe__bench_op *op)
{
    struct list_node *n;
    PMEMoid *link = list_search(head, op->key, &n);
    int present = n && n->key == op->key;
    switch (op->type) {
    case STROBE_PETRA_FIND:
        if (present)
            op->value = n->value;
        return present;
    case STROBE_PETRA_INSERT: {
        if (present)
            return 0;
        PMEMoid oid = pmemobj_tx_alloc(sizeof(struct list_node), TYPE_LIST_NODE);
        struct list_node *fresh = D(oid);
        fresh->key = op->key;
        fresh->value = op->value;
        fresh->next = *link;
        pmemobj_tx_add_range_direct(link, sizeof(*link));
        *link = oid;
        return 1;
    }
    case STROBE_PETRA_DELETE: {
        if (!present)
            return 0;
        PMEMoid victim = *link;
        pmemobj_tx_add_range_direct(link, sizeof(*link));
        *link = n->next;
        pmemobj_tx_free(victim);
        return 1;
    }
    case STROBE_PETRA_UPDATE:
        if (!present)
            return 0;
        pmemobj_tx_add_range_direct(&n->value, sizeof(n->value));
        n->value = op->value;
        return 1;
    default:
        return 0;
    }
}

/* ---- skiplist ------------------------------------------------------------------ */

static unsigned skip_random_level(uint64_t *rng)
{
    uint64_t x = *rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *rng = x;
    /* trailing ones of a random word: P(level >= l) = 2^-(l-1) */
    unsigned level = 1;
    while ((x & 1) && level < SKIP_MAX_LEVEL) {
        level++;
        x >>= 1;
    }
    return level;
}

static int skip_apply(struct pmemobj_thread *t, strobe__bench_op *op)
{
    struct skip_node *preds[SKIP_MAX_LEVEL];
    struct skip_node *x = D(t->eng->root->head), *nx = NULL;
    for (int l = SKIP_MAX_LEVEL - 1; l >= 0; l--) {
        while ((nx = D(x->next[l])) != NULL && nx->key < op->key)
            x = nx;
        preds[l] = x;
    }
    nx = D(x->next[0]);
    int present = nx && nx->key == op->key;
    switch (op->type) {
    case STROBE_PETRA_FIND:
        if (present)
            op->value = nx->value;
        return present;
    case STROBE_PETRA_INSERT: {
        if (present)
            return 0;
        unsigned level = skip_random_level(&t->level_rng);
        PMEMoid oid = pmemobj_tx_alloc(sizeof(struct skip_node) + level * sizeof(PMEMoid),
                                       TYPE_SKIP_NODE);
        struct skip_node *fresh = D(oid);
        fresh->key = op->key;
        fresh->value = op->value;
        fresh->level = level;
        for (unsigned l = 0; l < level; l++) {
            fresh->next[l] = preds[l]->next[l];
            pmemobj_tx_add_range_direct(&preds[l]->next[l], sizeof(PMEMoid));
            preds[l]->next[l] = oid;
        }
        return 1;
    }
    case STROBE_PETRA_DELETE: {
        if (!present)
            return 0;
        PMEMoid victim = preds[0]->next[0];
        for (unsigned l = 0; l < nx->level; l++) {
            pmemobj_tx_add_range_direct(&preds[l]->next[l], sizeof(PMEMoid));
            preds[l]->next[l] = nx->next[l];
        }
        pmemobj_tx_free(victim);
        return 1;
    }
    case STROBE_PETRA_UPDATE:
        if (!present)
            return 0;
        pmemobj_tx_add_range_direct(&nx->value, sizeof(nx->value));
        nx->value = op->value;
        return 1;
    default:
        return 0;
    }
}

static int apply(struct pmemobj_thread *t, strobe__bench_op *op)
{
    struct pmemobj_engine *e = t->eng;
    switch (e->kind) {
    case STROBE_PETRA_LIST: return list_apply(&e->root->head, op);
    case STROBE_PETRA_SKIPLIST: return skip_apply(t, op);
    default: {
        PMEMoid *buckets = D(e->root->head);
        return list_apply(&buckets[strobe__mix64(op->key) & e->bucket_mask], op);
    }
    }
}

/* ---- vtable ------------------------------------------------------------------ */

static int engine_open(const struct strobe__bench_config *cfg, const char *path, int per_bucket,
                       void **out, char *why, size_t why_len)
{
    if (per_bucket && cfg->kind != STROBE_PETRA_MAP) {
        snprintf(why, why_len, "the pmemobj-bucket engine has only the map (per-bucket locks)");
        return -EINVAL;
    }
    if (cfg->kind == STROBE_PETRA_MAP && (cfg->buckets == 0 || (cfg->buckets & (cfg->buckets - 1)))) {
        snprintf(why, why_len, "--buckets %u: the pmemobj map needs a power of two", cfg->buckets);
        return -EINVAL;
    }
    struct pmemobj_engine *e = calloc(1, sizeof(*e));
    if (!e) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    e->kind = cfg->kind;
    e->bucket_mask = cfg->buckets - 1;
    e->pop = pmemobj_create(path, POOL_LAYOUT, (size_t)cfg->heap_bytes, 0600);
    if (!e->pop) {
        int err = errno ? errno : EIO;
        snprintf(why, why_len, "%s: pmemobj_create (%llu bytes): %s", path,
                 (unsigned long long)cfg->heap_bytes, pmemobj_errormsg());
        free(e);
        return -err;
    }
    PMEMoid root = pmemobj_root(e->pop, sizeof(struct pool_root));
    e->root = D(root);
    volatile int rc = 0;
    TX_BEGIN(e->pop) {
        pmemobj_tx_add_range(root, 0, sizeof(struct pool_root));
        e->root->kind = (uint32_t)cfg->kind;
        e->root->buckets = cfg->kind == STROBE_PETRA_MAP ? cfg->buckets : 0;
        if (cfg->kind == STROBE_PETRA_SKIPLIST)
            e->root->head = pmemobj_tx_zalloc(
                sizeof(struct skip_node) + SKIP_MAX_LEVEL * sizeof(PMEMoid), TYPE_SKIP_NODE);
        else if (cfg->kind == STROBE_PETRA_MAP)
            e->root->head = pmemobj_tx_zalloc((size_t)cfg->buckets * sizeof(PMEMoid), TYPE_BUCKETS);
        /* zeroed PMEMrwlocks are valid unlocked locks */
        if (per_bucket)
            e->root->locks = pmemobj_tx_zalloc((size_t)cfg->buckets * sizeof(PMEMrwlock), TYPE_LOCKS);
        if (cfg->kind == STROBE_PETRA_SKIPLIST)
            ((struct skip_node *)D(e->root->head))->level = SKIP_MAX_LEVEL;
    } TX_ONABORT {
        rc = -(pmemobj_tx_errno() ? pmemobj_tx_errno() : EIO);
    } TX_END
    if (rc < 0) {
        snprintf(why, why_len, "%s: cannot set up the pool: %s", path, pmemobj_errormsg());
        pmemobj_close(e->pop);
        free(e);
        return rc;
    }
    pthread_rwlock_init(&e->lock, NULL);
    pthread_mutex_init(&e->threads_lock, NULL);
    e->bucket_locks = per_bucket ? D(e->root->locks) : NULL;
    *out = e;
    return 0;
}

static int pmemobj_engine_open(const struct strobe__bench_config *cfg, const char *path, void **out,
                               char *why, size_t why_len)
{
    return engine_open(cfg, path, 0, out, why, why_len);
}

static int pmemobj_bucket_engine_open(const struct strobe__bench_config *cfg, const char *path,
                                      void **out, char *why, size_t why_len)
{
    return engine_open(cfg, path, 1, out, why, why_len);
}

/* The buckets a transaction touches, ascending and unique, each with
 * whether it writes there; returns how many. */
struct bucket_lock {
    uint64_t bucket;
    int write;
};

static int cmp_bucket_lock(const void *a, const void *b)
{
    const struct bucket_lock *x = a, *y = b;
    return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

static unsigned tx_buckets(const struct pmemobj_engine *e, const strobe__bench_op *ops, unsigned n,
                           struct bucket_lock *v)
{
    for (unsigned i = 0; i < n; i++)
        v[i] = (struct bucket_lock){strobe__mix64(ops[i].key) & e->bucket_mask,
                                    ops[i].type != STROBE_PETRA_FIND};
    qsort(v, n, sizeof(*v), cmp_bucket_lock);
    unsigned m = 0;
    for (unsigned i = 0; i < n; i++) {
        if (m && v[m - 1].bucket == v[i].bucket)
            v[m - 1].write |= v[i].write;
        else
            v[m++] = v[i];
    }
    return m;
}

/* Take the locks of a transaction (pool-wide, or per bucket in order). */
static unsigned tx_lock(struct pmemobj_engine *e, const strobe__bench_op *ops, unsigned n, int read_only,
                        struct bucket_lock *v)
{
    if (!e->bucket_locks) {
        if (read_only)
            pthread_rwlock_rdlock(&e->lock);
        else
            pthread_rwlock_wrlock(&e->lock);
        return 0;
    }
    unsigned m = tx_buckets(e, ops, n, v);
    for (unsigned i = 0; i < m; i++) {
        if (v[i].write)
            pmemobj_rwlock_wrlock(e->pop, &e->bucket_locks[v[i].bucket]);
        else
            pmemobj_rwlock_rdlock(e->pop, &e->bucket_locks[v[i].bucket]);
    }
    return m;
}

static void tx_unlock(struct pmemobj_engine *e, const struct bucket_lock *v, unsigned m)
{
    if (!e->bucket_locks) {
        pthread_rwlock_unlock(&e->lock);
        return;
    }
    while (m--)
        pmemobj_rwlock_unlock(e->pop, &e->bucket_locks[v[m].bucket]);
}

static int pmemobj_thread_start(void *engine, unsigned index, void **out)
{
    struct pmemobj_engine *e = engine;
    struct pmemobj_thread *t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->eng = e;
    t->level_rng = 0x9e3779b97f4a7c15ULL * (index + 1) | 1;
    pthread_mutex_lock(&e->threads_lock);
    t->next = e->threads;
    e->threads = t;
    pthread_mutex_unlock(&e->threads_lock);
    pmem_interpose.count = &t->count;
    *out = t;
    return 0;
}

static void pmemobj_thread_stop(void *thread)
{
    struct pmemobj_thread *t = thread, **p;
    struct pmemobj_engine *e = t->eng;
    pmem_interpose.count = NULL;
    pthread_mutex_lock(&e->threads_lock);
    for (p = &e->threads; *p != t; p = &(*p)->next)
        ;
    *p = t->next;
    e->retired.lines += t->count.lines;
    e->retired.fences += t->count.fences;
    pthread_mutex_unlock(&e->threads_lock);
    free(t);
}

static int pmemobj_execute(void *thread, strobe__bench_op *ops, unsigned n)
{
    struct pmemobj_thread *t = thread;
    struct pmemobj_engine *e = t->eng;
    int read_only = 1;
    for (unsigned i = 0; i < n; i++)
        if (ops[i].type != STROBE_PETRA_FIND)
            read_only = 0;

    struct bucket_lock locks[STROBE_PETRA_MAX_OPS];
    if (read_only) {
        int rc = 0;
        unsigned m = tx_lock(e, ops, n, 1, locks);
        for (unsigned i = 0; i < n && rc == 0; i++)
            if (!apply(t, &ops[i]))
                rc = STROBE_ERR_ABORTED;
        tx_unlock(e, locks, m);
        return rc;
    }

    volatile int rc = 0; /* set after setjmp: must be volatile */
    unsigned m = tx_lock(e, ops, n, 0, locks);
    TX_BEGIN(e->pop) {
        for (unsigned i = 0; i < n; i++)
            if (!apply(t, &ops[i]))
                pmemobj_tx_abort(ECANCELED); /* does not return */
    } TX_ONABORT {
        int err = pmemobj_tx_errno();
        if (err == ECANCELED)
            rc = STROBE_ERR_ABORTED;
        else if (err == ENOMEM)
            rc = -ENOSPC; /* pmemobj_tx_alloc: the pool is full */
        else
            rc = -(err ? err : EIO);
    } TX_END
    tx_unlock(e, locks, m);
    return rc;
}

/* Walk a sorted list: strictly increasing keys above `after`; in a map
 * bucket (mask != 0) every key must hash to `bucket`. */
static int check_list(PMEMoid head, uint64_t bucket, uint32_t mask, uint64_t *keys, char *why,
                      size_t why_len)
{
    uint64_t prev = 0;
    for (struct list_node *n = D(head); n; n = D(n->next)) {
        if (n->key <= prev) {
            snprintf(why, why_len, "key %llu after key %llu: not sorted", (unsigned long long)n->key,
                     (unsigned long long)prev);
            return STROBE_ERR_FORMAT;
        }
        if (mask && (strobe__mix64(n->key) & mask) != bucket) {
            snprintf(why, why_len, "key %llu in bucket %llu", (unsigned long long)n->key,
                     (unsigned long long)bucket);
            return STROBE_ERR_FORMAT;
        }
        prev = n->key;
        ++*keys;
    }
    return 0;
}

static int pmemobj_engine_check(void *engine, uint64_t *keys, char *why, size_t why_len)
{
    struct pmemobj_engine *e = engine;
    *keys = 0;
    if (e->kind == STROBE_PETRA_LIST)
        return check_list(e->root->head, 0, 0, keys, why, why_len);
    if (e->kind == STROBE_PETRA_MAP) {
        PMEMoid *buckets = D(e->root->head);
        for (uint64_t b = 0; b <= e->bucket_mask; b++) {
            int rc = check_list(buckets[b], b, e->bucket_mask, keys, why, why_len);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    /* skiplist: level 0 sorted; each level a sublist of the one below,
     * holding exactly the nodes that tall */
    struct skip_node *head = D(e->root->head);
    uint64_t prev = 0;
    for (struct skip_node *n = D(head->next[0]); n; n = D(n->next[0])) {
        if (n->key <= prev || n->level < 1 || n->level > SKIP_MAX_LEVEL) {
            snprintf(why, why_len, "skiplist key %llu (level %u) after key %llu",
                     (unsigned long long)n->key, n->level, (unsigned long long)prev);
            return STROBE_ERR_FORMAT;
        }
        prev = n->key;
        ++*keys;
    }
    for (unsigned l = 1; l < SKIP_MAX_LEVEL; l++) {
        struct skip_node *below = D(head->next[0]);
        for (struct skip_node *n = D(head->next[l]); n; n = D(n->next[l])) {
            while (below && below != n) {
                if (below->level > l) {
                    snprintf(why, why_len, "skiplist key %llu (level %u) missing at level %u",
                             (unsigned long long)below->key, below->level, l);
                    return STROBE_ERR_FORMAT;
                }
                below = D(below->next[0]);
            }
            if (!below || n->level <= l) {
                snprintf(why, why_len, "skiplist key %llu linked at level %u", (unsigned long long)n->key, l);
                return STROBE_ERR_FORMAT;
            }
            below = D(below->next[0]);
        }
        for (; below; below = D(below->next[0]))
            if (below->level > l) {
                snprintf(why, why_len, "skiplist key %llu (level %u) missing at level %u",
                         (unsigned long long)below->key, below->level, l);
                return STROBE_ERR_FORMAT;
            }
    }
    return 0;
}

static void pmemobj_engine_stats(void *engine, struct strobe__bench_stats *out)
{
    struct pmemobj_engine *e = engine;
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&e->threads_lock);
    out->flushes = e->retired.lines;
    out->fences = e->retired.fences;
    for (struct pmemobj_thread *t = e->threads; t; t = t->next) {
        out->flushes += t->count.lines;
        out->fences += t->count.fences;
    }
    pthread_mutex_unlock(&e->threads_lock);
    out->counted = !atomic_load_explicit(&libpmem_real.msync_seen, memory_order_relaxed);
}

static void pmemobj_engine_close(void *engine)
{
    struct pmemobj_engine *e = engine;
    pmemobj_close(e->pop);
    pthread_rwlock_destroy(&e->lock);
    pthread_mutex_destroy(&e->threads_lock);
    free(e);
}

/* The two engines differ only in how they open (which locks) */
#define PMEMOBJ_ENGINE(engine_name, open_fn)                                                        \
    {                                                                                              \
        .name = engine_name, .open = open_fn, .thread_start = pmemobj_thread_start,                \
        .thread_stop = pmemobj_thread_stop, .execute = pmemobj_execute,                            \
        .check = pmemobj_engine_check, .stats = pmemobj_engine_stats, .close = pmemobj_engine_close \
    }
const struct strobe__bench_engine strobe__bench_engine_pmemobj = PMEMOBJ_ENGINE("pmemobj", pmemobj_engine_open);
const struct strobe__bench_engine strobe__bench_engine_pmemobj_bucket =
    PMEMOBJ_ENGINE("pmemobj-bucket", pmemobj_bucket_engine_open);
