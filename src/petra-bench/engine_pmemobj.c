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
 * Engine "pmemobj-node" (lists and skiplists) is their strong baseline: a
 * PMEMrwlock in every node (struct lnode; the list is a skiplist of one
 * level) and no pool-wide lock. The design is the lazy list (Heller et
 * al., OPODIS 2005) and the lazy skiplist (Herlihy, Lev, Luchangco and
 * Shavit, SIROCCO 2007), the commonly published lock-based ones: search
 * without locks, lock the predecessors, validate, update; extended to
 * transactions of K operations by strict two-phase locking:
 *
 *   phase 1  the operations, stably sorted by key (operations on
 *            different keys commute; those on one key keep their order),
 *            are each searched without locks. The transaction then locks,
 *            all at once in ascending (key, address) order, so that no two
 *            transactions deadlock: for an INSERT the predecessors at the
 *            new node's levels, for a DELETE those at the victim's levels
 *            and the victim, for FIND and UPDATE the level-0 predecessor,
 *            whose lock guards the key (inserting or deleting it, or
 *            changing its value, needs that lock too); exclusive where the
 *            transaction writes, shared where it only reads. It validates
 *            every search (each locked predecessor unmarked and still
 *            linking to what the search saw, a victim unmarked and linked
 *            at all its levels) and, on a change, unlocks and searches
 *            again. The preconditions are then decided on the locked
 *            state: a failed one aborts before anything was written, with
 *            no libpmemobj transaction at all.
 *   phase 2  one libpmemobj transaction allocates the new nodes (each
 *            locked by its creator before it is linked), then applies the
 *            operations in key order from the locked predecessors. Every
 *            lock is released after TX_END: no other transaction reads or
 *            links to anything uncommitted, so an undo never has to undo
 *            what someone else built on.
 *
 * Why not hand-over-hand locking: it locks every node on the search path,
 * so every transaction passes through the head's lock one at a time; the
 * lazy design locks only the few nodes a transaction changes or reads.
 * What lock-free searches cost in C: a search may hold a pointer to a node
 * a DELETE unlinks, so the node is not freed by the transaction
 * (pmemobj_tx_free would free it at commit, under that search) but retired
 * and freed with pmemobj_free once every transaction that began before the
 * unlink has ended (epoch-based reclamation). A crash between that commit
 * and that free leaks the node (the structure stays consistent; a reopen
 * could find such nodes with POBJ_FOREACH_TYPE, and petra-bench never
 * reopens). Links are read and written with atomic loads and stores of
 * the PMEMoid offset, resolved against the pool base as pmemobj_direct
 * does. Persistence per operation is that of the other pmemobj engines
 * plus the snapshot of a DELETE's `marked`.
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
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "engine.h"

#define POOL_LAYOUT "strobe-petra-bench"
#define SKIP_MAX_LEVEL 20
#define CACHE_LINE 64u

enum {
    TYPE_ROOT = 0,
    TYPE_LIST_NODE = 1,
    TYPE_SKIP_NODE = 2,
    TYPE_BUCKETS = 3,
    TYPE_LOCKS = 4,
    TYPE_LOCKED_NODE = 5
};

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

/* pmemobj-node: one layout for the list (every node one level) and the
 * skiplist. The lock is in the node; `marked` is set, under the lock and
 * in the transaction, by the DELETE that unlinks the node, so a node
 * reached without a lock can be recognised as gone once it is locked. */
struct lnode {
    PMEMrwlock lock;
    uint64_t key, value;
    uint32_t level;  /* entries in next[] */
    uint32_t marked; /* unlinked by a committed (or running) DELETE */
    PMEMoid next[];  /* next[i].off is read without the lock: atomically */
};

struct pool_root {
    uint32_t kind;    /* enum strobe_petra_kind */
    uint32_t buckets; /* map only */
    PMEMoid head;     /* list: first node; skiplist: head tower (key 0); map: bucket array;
                         pmemobj-node: head tower (key 0) of struct lnode */
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

enum locking { LOCK_POOL, LOCK_BUCKET, LOCK_NODE };

/* A node unlinked by a committed DELETE of pmemobj-node, freed once no
 * transaction that may still hold a pointer to it runs (epochs, below). */
struct retired {
    PMEMoid oid;
    uint64_t epoch;
};

struct retired_list {
    struct retired *v;
    size_t n, cap;
};

struct pmemobj_engine {
    PMEMobjpool *pop;
    struct pool_root *root;
    enum strobe_petra_kind kind;
    enum locking locking;
    uint32_t bucket_mask;
    pthread_rwlock_t lock; /* LOCK_POOL: shared for all-FIND transactions, else exclusive */
    PMEMrwlock *bucket_locks; /* LOCK_BUCKET: instead of lock */
    struct lnode *node_head;  /* LOCK_NODE */
    unsigned node_levels;     /* LOCK_NODE: 1 (list) or SKIP_MAX_LEVEL */
    _Atomic uint64_t epoch;   /* LOCK_NODE: global reclamation epoch, from 1 */
    pthread_mutex_t threads_lock;
    struct pmemobj_thread *threads; /* live thread states, for stats and epochs */
    struct flush_count retired;     /* counts of stopped threads */
    struct retired_list orphans;    /* retired nodes of stopped threads, freed on close */
};

struct pmemobj_thread {
    struct pmemobj_engine *eng;
    struct pmemobj_thread *next;
    uint64_t level_rng; /* skiplist levels; separate from the op stream */
    struct flush_count count;
    _Atomic uint64_t epoch; /* LOCK_NODE: the global epoch when its transaction began; 0: none */
    struct retired_list limbo;
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

/* ---- two-phase locking on PMEMrwlocks (pmemobj-bucket, pmemobj-node) ------- */

/* A lock a transaction needs, and whether it writes under it. A
 * transaction takes all of its locks at once, sorted by (rank, address),
 * and holds them to its end: no two transactions wait for each other in a
 * cycle. rank: the bucket, or the node's key (a retired node can share a
 * key with a live one: the address breaks the tie; keys never change while
 * a node exists). */
struct lock_req {
    uint64_t rank;
    PMEMrwlock *lock;
    int write;
};

static int cmp_lock_req(const void *a, const void *b)
{
    const struct lock_req *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (uintptr_t)x->lock < (uintptr_t)y->lock ? -1 : (uintptr_t)x->lock > (uintptr_t)y->lock;
}

/* Sort v[0..n), merge the requests for one lock (exclusive if one
 * writes), take them in order. Returns how many locks are held: the first
 * ones of v. */
static unsigned lock_all(PMEMobjpool *pop, struct lock_req *v, unsigned n)
{
    qsort(v, n, sizeof(*v), cmp_lock_req);
    unsigned m = 0;
    for (unsigned i = 0; i < n; i++) {
        if (m && v[m - 1].lock == v[i].lock)
            v[m - 1].write |= v[i].write;
        else
            v[m++] = v[i];
    }
    for (unsigned i = 0; i < m; i++) {
        if (v[i].write)
            pmemobj_rwlock_wrlock(pop, v[i].lock);
        else
            pmemobj_rwlock_rdlock(pop, v[i].lock);
    }
    return m;
}

static void unlock_all(PMEMobjpool *pop, const struct lock_req *v, unsigned m)
{
    while (m--)
        pmemobj_rwlock_unlock(pop, v[m].lock);
}

/* ---- pmemobj-node: a lock per node, two-phase locking ------------------------ */

/* Links are read without locks while writers change them: the offset is
 * loaded atomically (acquire, pairing with the release store in
 * node_link, so a new node's key and links are seen initialised) and
 * resolved against the pool base, which is what pmemobj_direct does. */
static inline struct lnode *node_next(const struct pmemobj_engine *e, struct lnode *n, unsigned l)
{
    uint64_t off = atomic_load_explicit((_Atomic uint64_t *)&n->next[l].off, memory_order_acquire);
    return off ? (struct lnode *)((char *)e->pop + off) : NULL;
}

/* Inside the libpmemobj transaction, with n locked exclusive. */
static void node_link(struct lnode *n, unsigned l, PMEMoid to)
{
    pmemobj_tx_add_range_direct(&n->next[l], sizeof(PMEMoid));
    n->next[l].pool_uuid_lo = to.pool_uuid_lo;
    atomic_store_explicit((_Atomic uint64_t *)&n->next[l].off, to.off, memory_order_release);
}

/* Epoch-based reclamation (Fraser, "Practical lock-freedom", 2004, 5.2.3):
 * a transaction announces the global epoch while it may hold pointers
 * to nodes reached without locks; a node unlinked in epoch r is freed
 * once the global epoch reached r + 2, which needs every running
 * transaction to have announced r + 1, i.e. to have started after the
 * unlink. seq_cst: the announcement and the re-load of the global epoch
 * must be ordered against the reclaimer's scan of the announcements. */
static void node_enter(struct pmemobj_thread *t)
{
    uint64_t g = atomic_load(&t->eng->epoch);
    for (;;) {
        atomic_store(&t->epoch, g);
        uint64_t now = atomic_load(&t->eng->epoch);
        if (now == g)
            return;
        g = now;
    }
}

static void node_exit(struct pmemobj_thread *t)
{
    atomic_store_explicit(&t->epoch, 0, memory_order_release); /* pairs with the scan's acquire */
}

static int retired_push(struct retired_list *r, PMEMoid oid, uint64_t epoch)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        struct retired *v = realloc(r->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (struct retired){oid, epoch};
    return 0;
}

/* Advance the global epoch if every running transaction announced it,
 * then free the thread's nodes retired two epochs ago. Outside any
 * libpmemobj transaction (pmemobj_free is an atomic action of its own). */
static void node_reclaim(struct pmemobj_thread *t)
{
    struct pmemobj_engine *e = t->eng;
    pthread_mutex_lock(&e->threads_lock);
    uint64_t g = atomic_load(&e->epoch);
    int all = 1;
    for (struct pmemobj_thread *o = e->threads; o && all; o = o->next) {
        uint64_t a = atomic_load(&o->epoch);
        all = a == 0 || a == g;
    }
    if (all)
        atomic_compare_exchange_strong(&e->epoch, &g, g + 1);
    pthread_mutex_unlock(&e->threads_lock);
    g = atomic_load(&e->epoch);
    size_t kept = 0;
    for (size_t i = 0; i < t->limbo.n; i++) {
        if (t->limbo.v[i].epoch + 2 <= g)
            pmemobj_free(&t->limbo.v[i].oid);
        else
            t->limbo.v[kept++] = t->limbo.v[i];
    }
    t->limbo.n = kept;
}

/* What phase 1 found for one operation: the predecessors and successors
 * at each level (a lock-free search), how many levels it locks, and the
 * node it deletes if that node was there. */
struct node_op {
    struct lnode *preds[SKIP_MAX_LEVEL], *succs[SKIP_MAX_LEVEL];
    struct lnode *victim;
    unsigned levels;    /* preds[0 .. levels-1] are locked and validated */
    unsigned new_level; /* INSERT */
};

static void node_search(const struct pmemobj_engine *e, uint64_t key, struct node_op *o)
{
    struct lnode *x = e->node_head, *nx;
    for (int l = (int)e->node_levels - 1; l >= 0; l--) {
        while ((nx = node_next(e, x, (unsigned)l)) != NULL && nx->key < key)
            x = nx;
        o->preds[l] = x;
        o->succs[l] = nx;
    }
}

/* Phase 1 for the operations in key order: search, collect the nodes to
 * lock (exclusive where the transaction writes), lock them in order,
 * validate every search against the locked nodes; retry on a change.
 * Returns how many locks are held, in v[]. */
static unsigned node_lock_all(struct pmemobj_engine *e, const strobe__bench_op *ops,
                              const unsigned *order, unsigned n, struct node_op *s,
                              struct lock_req *v)
{
    for (;;) {
        unsigned m = 0;
        for (unsigned i = 0; i < n; i++) {
            const strobe__bench_op *op = &ops[order[i]];
            struct node_op *o = &s[order[i]];
            node_search(e, op->key, o);
            o->victim = NULL;
            o->levels = 1;
            if (op->type == STROBE_PETRA_INSERT) {
                o->levels = o->new_level;
            } else if (op->type == STROBE_PETRA_DELETE) {
                if (o->succs[0] && o->succs[0]->key == op->key) {
                    o->victim = o->succs[0];
                    o->levels = o->victim->level;
                }
                /* the node may be one an earlier INSERT of this
                 * transaction links: its levels too */
                for (unsigned j = 0; j < i; j++)
                    if (ops[order[j]].key == op->key && ops[order[j]].type == STROBE_PETRA_INSERT &&
                        s[order[j]].new_level > o->levels)
                        o->levels = s[order[j]].new_level;
            }
            int write = op->type != STROBE_PETRA_FIND;
            for (unsigned l = 0; l < o->levels; l++)
                v[m++] = (struct lock_req){o->preds[l]->key, &o->preds[l]->lock, write};
            if (o->victim)
                v[m++] = (struct lock_req){o->victim->key, &o->victim->lock, 1};
        }
        unsigned u = lock_all(e->pop, v, m);
        /* Valid if every locked predecessor is still in the structure
         * and still links to what the search saw: then, all locks held,
         * the searches describe one state, and no one else can change
         * the parts of it the transaction reads or writes. */
        int valid = 1;
        for (unsigned i = 0; i < n && valid; i++) {
            const struct node_op *o = &s[order[i]];
            for (unsigned l = 0; l < o->levels && valid; l++)
                valid = !o->preds[l]->marked && node_next(e, o->preds[l], l) == o->succs[l];
            if (o->victim) {
                valid = valid && !o->victim->marked;
                for (unsigned l = 0; l < o->victim->level && valid; l++)
                    valid = o->succs[l] == o->victim;
            }
        }
        if (valid)
            return u;
        unlock_all(e->pop, v, u);
    }
}

/* Phase 2, one operation, the preconditions known to hold: walk from the
 * validated predecessors (or, where an earlier operation of this
 * transaction deleted one, from where that operation stood at that
 * level, cursor[l]) through the locked region to the key, and apply.
 * fresh: the node an INSERT links. Returns the node a DELETE unlinked. */
static struct lnode *node_apply(struct pmemobj_engine *e, strobe__bench_op *op, const struct node_op *o,
                                struct lnode **cursor, PMEMoid fresh)
{
    struct lnode *preds[SKIP_MAX_LEVEL], *nx;
    for (int l = (int)o->levels - 1; l >= 0; l--) {
        struct lnode *p = o->preds[l]->marked ? cursor[l] : o->preds[l];
        while ((nx = node_next(e, p, (unsigned)l)) != NULL && nx->key < op->key)
            p = nx;
        preds[l] = cursor[l] = p;
    }
    nx = node_next(e, preds[0], 0);
    switch (op->type) {
    case STROBE_PETRA_FIND:
        op->value = nx->value;
        return NULL;
    case STROBE_PETRA_UPDATE:
        pmemobj_tx_add_range_direct(&nx->value, sizeof(nx->value));
        nx->value = op->value;
        return NULL;
    case STROBE_PETRA_INSERT: {
        struct lnode *f = D(fresh);
        for (unsigned l = 0; l < f->level; l++) {
            f->next[l] = preds[l]->next[l]; /* f is not reachable yet */
            node_link(preds[l], l, fresh);
        }
        return NULL;
    }
    default: /* DELETE */
        pmemobj_tx_add_range_direct(&nx->marked, sizeof(nx->marked));
        nx->marked = 1;
        for (unsigned l = 0; l < nx->level; l++)
            node_link(preds[l], l, nx->next[l]);
        return nx;
    }
}

/* The preconditions of the operations in key order, against the
 * validated searches: presence of a key is what the search found, then
 * what this transaction's earlier operations on it made it. */
static int node_preconditions(const strobe__bench_op *ops, const unsigned *order, unsigned n,
                              const struct node_op *s)
{
    int present = 0;
    for (unsigned i = 0; i < n; i++) {
        const strobe__bench_op *op = &ops[order[i]];
        if (i == 0 || ops[order[i - 1]].key != op->key) {
            const struct lnode *succ = s[order[i]].succs[0];
            present = succ && succ->key == op->key;
        }
        if ((op->type == STROBE_PETRA_INSERT) == present)
            return 0;
        if (op->type == STROBE_PETRA_INSERT || op->type == STROBE_PETRA_DELETE)
            present = op->type == STROBE_PETRA_INSERT;
    }
    return 1;
}

/* Phase 2 of a writing transaction, in one libpmemobj transaction. The
 * new nodes (locked) go to fresh[], the unlinked ones to victims[].
 * 0, or -ENOSPC when the pool is full: then nothing is unlinked (the
 * rollback relinked the victims) and the new nodes are freed, but another
 * transaction may have reached one and wait for its lock, so they are
 * marked (the waiter's validation fails) and left to be unlocked.
 * Allocation comes first, so the pool being full normally aborts before
 * anything was linked; only the undo log growing later can fail after,
 * and the run stops on that error anyway. */
static int node_write(struct pmemobj_engine *e, strobe__bench_op *ops, const unsigned *order, unsigned n,
                      const struct node_op *s, struct lnode **fresh, unsigned *nfresh,
                      struct lnode **victims, unsigned *nvictims)
{
    volatile int rc = 0; /* set after setjmp: must be volatile */
    *nfresh = *nvictims = 0;
    TX_BEGIN(e->pop) {
        /* Allocate first: a full pool aborts before anything another
         * thread can see was written. */
        PMEMoid oids[STROBE_PETRA_MAX_OPS];
        for (unsigned i = 0; i < n; i++) {
            oids[i] = OID_NULL;
            if (ops[order[i]].type != STROBE_PETRA_INSERT)
                continue;
            unsigned level = s[order[i]].new_level;
            oids[i] = pmemobj_tx_zalloc(sizeof(struct lnode) + level * sizeof(PMEMoid), TYPE_LOCKED_NODE);
            struct lnode *f = D(oids[i]);
            f->key = ops[order[i]].key;
            f->value = ops[order[i]].value;
            f->level = level;
            /* held to the end like the others: a transaction that reaches
             * the node waits until this one has committed. Nobody can
             * reach it yet, so a try succeeds (and, not being a wait, is
             * outside the lock order) */
            if (pmemobj_rwlock_trywrlock(e->pop, &f->lock) != 0)
                pmemobj_tx_abort(EDEADLK);
            fresh[(*nfresh)++] = f;
        }
        struct lnode *cursor[SKIP_MAX_LEVEL];
        for (unsigned i = 0; i < n; i++) {
            struct lnode *gone = node_apply(e, &ops[order[i]], &s[order[i]], cursor, oids[i]);
            if (gone)
                victims[(*nvictims)++] = gone;
        }
    } TX_ONABORT {
        int err = pmemobj_tx_errno();
        rc = err == ENOMEM ? -ENOSPC : -(err ? err : EIO);
        for (unsigned i = 0; i < *nfresh; i++)
            fresh[i]->marked = 1;
        *nvictims = 0;
    } TX_END
    return rc;
}

static int node_execute(struct pmemobj_thread *t, strobe__bench_op *ops, unsigned n)
{
    struct pmemobj_engine *e = t->eng;
    /* Operations on different keys commute; sorting them by key, stably
     * (those on one key keep their order), gives the same outcome and
     * makes every transaction lock in ascending key order. */
    unsigned order[STROBE_PETRA_MAX_OPS];
    for (unsigned i = 0; i < n; i++) {
        unsigned j = i;
        for (; j > 0 && ops[order[j - 1]].key > ops[i].key; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    struct node_op s[STROBE_PETRA_MAX_OPS];
    int read_only = 1;
    for (unsigned i = 0; i < n; i++) {
        if (ops[i].type == STROBE_PETRA_INSERT)
            s[i].new_level = e->node_levels == 1 ? 1 : skip_random_level(&t->level_rng);
        if (ops[i].type != STROBE_PETRA_FIND)
            read_only = 0;
    }

    struct lock_req locks[STROBE_PETRA_MAX_OPS * (SKIP_MAX_LEVEL + 1)];
    struct lnode *fresh[STROBE_PETRA_MAX_OPS], *victims[STROBE_PETRA_MAX_OPS];
    unsigned nfresh = 0, nvictims = 0;
    int rc = 0;
    node_enter(t);
    unsigned m = node_lock_all(e, ops, order, n, s, locks);
    if (!node_preconditions(ops, order, n, s)) {
        rc = STROBE_ERR_ABORTED; /* nothing written: no libpmemobj transaction to roll back */
    } else if (read_only) {
        struct lnode *cursor[SKIP_MAX_LEVEL]; /* unused: FINDs delete nothing */
        for (unsigned i = 0; i < n; i++)
            node_apply(e, &ops[order[i]], &s[order[i]], cursor, OID_NULL);
    } else {
        rc = node_write(e, ops, order, n, s, fresh, &nfresh, victims, &nvictims);
    }
    for (unsigned i = 0; i < nfresh; i++)
        pmemobj_rwlock_unlock(e->pop, &fresh[i]->lock);
    unlock_all(e->pop, locks, m);
    node_exit(t);
    /* unlinked before this load: no transaction that begins in this
     * epoch or later can reach them */
    uint64_t epoch = atomic_load(&e->epoch);
    for (unsigned i = 0; i < nvictims && rc == 0; i++)
        if (retired_push(&t->limbo, pmemobj_oid(victims[i]), epoch) < 0)
            rc = -ENOMEM;
    if (t->limbo.n >= 256)
        node_reclaim(t);
    return rc;
}

/* ---- vtable ------------------------------------------------------------------ */

static int engine_open(const struct strobe__bench_config *cfg, const char *path, enum locking locking,
                       void **out, char *why, size_t why_len)
{
    if (locking == LOCK_BUCKET && cfg->kind != STROBE_PETRA_MAP) {
        snprintf(why, why_len, "the pmemobj-bucket engine has only the map (per-bucket locks; "
                               "pmemobj-node has the list and the skiplist)");
        return -EINVAL;
    }
    if (locking == LOCK_NODE && cfg->kind == STROBE_PETRA_MAP) {
        snprintf(why, why_len, "the pmemobj-node engine has only the list and the skiplist "
                               "(per-node locks; pmemobj-bucket has the map)");
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
    e->locking = locking;
    e->bucket_mask = cfg->buckets - 1;
    e->node_levels = cfg->kind == STROBE_PETRA_LIST ? 1 : SKIP_MAX_LEVEL;
    atomic_init(&e->epoch, 1);
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
        if (locking == LOCK_NODE)
            e->root->head = pmemobj_tx_zalloc(sizeof(struct lnode) + e->node_levels * sizeof(PMEMoid),
                                              TYPE_LOCKED_NODE);
        else if (cfg->kind == STROBE_PETRA_SKIPLIST)
            e->root->head = pmemobj_tx_zalloc(
                sizeof(struct skip_node) + SKIP_MAX_LEVEL * sizeof(PMEMoid), TYPE_SKIP_NODE);
        else if (cfg->kind == STROBE_PETRA_MAP)
            e->root->head = pmemobj_tx_zalloc((size_t)cfg->buckets * sizeof(PMEMoid), TYPE_BUCKETS);
        /* zeroed PMEMrwlocks are valid unlocked locks */
        if (locking == LOCK_BUCKET)
            e->root->locks = pmemobj_tx_zalloc((size_t)cfg->buckets * sizeof(PMEMrwlock), TYPE_LOCKS);
        if (locking == LOCK_NODE)
            ((struct lnode *)D(e->root->head))->level = e->node_levels;
        else if (cfg->kind == STROBE_PETRA_SKIPLIST)
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
    e->bucket_locks = locking == LOCK_BUCKET ? D(e->root->locks) : NULL;
    e->node_head = locking == LOCK_NODE ? D(e->root->head) : NULL;
    *out = e;
    return 0;
}

static int pmemobj_engine_open(const struct strobe__bench_config *cfg, const char *path, void **out,
                               char *why, size_t why_len)
{
    return engine_open(cfg, path, LOCK_POOL, out, why, why_len);
}

static int pmemobj_bucket_engine_open(const struct strobe__bench_config *cfg, const char *path,
                                      void **out, char *why, size_t why_len)
{
    return engine_open(cfg, path, LOCK_BUCKET, out, why, why_len);
}

static int pmemobj_node_engine_open(const struct strobe__bench_config *cfg, const char *path,
                                    void **out, char *why, size_t why_len)
{
    return engine_open(cfg, path, LOCK_NODE, out, why, why_len);
}

/* Take the locks of a transaction: pool-wide, or those of the buckets
 * its operations touch (two-phase locking). Returns how many of v are
 * held. */
static unsigned tx_lock(struct pmemobj_engine *e, const strobe__bench_op *ops, unsigned n, int read_only,
                        struct lock_req *v)
{
    if (!e->bucket_locks) {
        if (read_only)
            pthread_rwlock_rdlock(&e->lock);
        else
            pthread_rwlock_wrlock(&e->lock);
        return 0;
    }
    for (unsigned i = 0; i < n; i++) {
        uint64_t bucket = strobe__mix64(ops[i].key) & e->bucket_mask;
        v[i] = (struct lock_req){bucket, &e->bucket_locks[bucket], ops[i].type != STROBE_PETRA_FIND};
    }
    return lock_all(e->pop, v, n);
}

static void tx_unlock(struct pmemobj_engine *e, const struct lock_req *v, unsigned m)
{
    if (!e->bucket_locks)
        pthread_rwlock_unlock(&e->lock);
    else
        unlock_all(e->pop, v, m);
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
    /* other threads may still hold pointers to them: freed on close
     * (on -ENOMEM they stay allocated in the pool, which is removed) */
    for (size_t i = 0; i < t->limbo.n; i++)
        if (retired_push(&e->orphans, t->limbo.v[i].oid, t->limbo.v[i].epoch) < 0)
            break;
    pthread_mutex_unlock(&e->threads_lock);
    free(t->limbo.v);
    free(t);
}

static int pmemobj_execute(void *thread, strobe__bench_op *ops, unsigned n)
{
    struct pmemobj_thread *t = thread;
    struct pmemobj_engine *e = t->eng;
    if (e->locking == LOCK_NODE)
        return node_execute(t, ops, n);
    int read_only = 1;
    for (unsigned i = 0; i < n; i++)
        if (ops[i].type != STROBE_PETRA_FIND)
            read_only = 0;

    struct lock_req locks[STROBE_PETRA_MAX_OPS];
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

/* Where a tower node keeps its fields: the check reads skip_node and
 * lnode alike. marked: SIZE_MAX when the layout has no such field. */
struct tower_layout {
    size_t key, level, next, marked;
};

static const struct tower_layout skip_layout = {offsetof(struct skip_node, key),
                                                offsetof(struct skip_node, level),
                                                offsetof(struct skip_node, next), SIZE_MAX};
static const struct tower_layout lnode_layout = {offsetof(struct lnode, key), offsetof(struct lnode, level),
                                                 offsetof(struct lnode, next), offsetof(struct lnode, marked)};

static uint64_t tw_key(const struct tower_layout *lay, const void *n)
{
    return *(const uint64_t *)((const char *)n + lay->key);
}

static unsigned tw_level(const struct tower_layout *lay, const void *n)
{
    return *(const uint32_t *)((const char *)n + lay->level);
}

static void *tw_next(const struct tower_layout *lay, const void *n, unsigned l)
{
    return D(((const PMEMoid *)((const char *)n + lay->next))[l]);
}

/* Towers of at most `levels` levels from the head tower: level 0 sorted,
 * no node marked deleted; each level a sublist of the one below, holding
 * exactly the nodes that tall. Counts the keys into *keys. */
static int check_towers(const void *head, const struct tower_layout *lay, unsigned levels,
                        uint64_t *keys, char *why, size_t why_len)
{
    uint64_t prev = 0;
    for (const void *n = tw_next(lay, head, 0); n; n = tw_next(lay, n, 0)) {
        uint64_t key = tw_key(lay, n);
        unsigned level = tw_level(lay, n);
        if (key <= prev || level < 1 || level > levels) {
            snprintf(why, why_len, "key %llu (level %u) after key %llu", (unsigned long long)key, level,
                     (unsigned long long)prev);
            return STROBE_ERR_FORMAT;
        }
        if (lay->marked != SIZE_MAX && *(const uint32_t *)((const char *)n + lay->marked)) {
            snprintf(why, why_len, "key %llu is linked but marked deleted", (unsigned long long)key);
            return STROBE_ERR_FORMAT;
        }
        prev = key;
        ++*keys;
    }
    for (unsigned l = 1; l < levels; l++) {
        const void *below = tw_next(lay, head, 0);
        for (const void *n = tw_next(lay, head, l); n; n = tw_next(lay, n, l)) {
            while (below && below != n) {
                if (tw_level(lay, below) > l) {
                    snprintf(why, why_len, "skiplist key %llu (level %u) missing at level %u",
                             (unsigned long long)tw_key(lay, below), tw_level(lay, below), l);
                    return STROBE_ERR_FORMAT;
                }
                below = tw_next(lay, below, 0);
            }
            if (!below || tw_level(lay, n) <= l) {
                snprintf(why, why_len, "skiplist key %llu linked at level %u",
                         (unsigned long long)tw_key(lay, n), l);
                return STROBE_ERR_FORMAT;
            }
            below = tw_next(lay, below, 0);
        }
        for (; below; below = tw_next(lay, below, 0))
            if (tw_level(lay, below) > l) {
                snprintf(why, why_len, "skiplist key %llu (level %u) missing at level %u",
                         (unsigned long long)tw_key(lay, below), tw_level(lay, below), l);
                return STROBE_ERR_FORMAT;
            }
    }
    return 0;
}

static int pmemobj_engine_check(void *engine, uint64_t *keys, char *why, size_t why_len)
{
    struct pmemobj_engine *e = engine;
    *keys = 0;
    if (e->locking == LOCK_NODE)
        return check_towers(e->node_head, &lnode_layout, e->node_levels, keys, why, why_len);
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
    return check_towers(D(e->root->head), &skip_layout, SKIP_MAX_LEVEL, keys, why, why_len);
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
    for (size_t i = 0; i < e->orphans.n; i++)
        pmemobj_free(&e->orphans.v[i].oid);
    free(e->orphans.v);
    pmemobj_close(e->pop);
    pthread_rwlock_destroy(&e->lock);
    pthread_mutex_destroy(&e->threads_lock);
    free(e);
}

/* The three engines differ only in how they open (which locks) */
#define PMEMOBJ_ENGINE(engine_name, open_fn)                                                        \
    {                                                                                              \
        .name = engine_name, .open = open_fn, .thread_start = pmemobj_thread_start,                \
        .thread_stop = pmemobj_thread_stop, .execute = pmemobj_execute,                            \
        .check = pmemobj_engine_check, .stats = pmemobj_engine_stats, .close = pmemobj_engine_close \
    }
const struct strobe__bench_engine strobe__bench_engine_pmemobj = PMEMOBJ_ENGINE("pmemobj", pmemobj_engine_open);
const struct strobe__bench_engine strobe__bench_engine_pmemobj_bucket =
    PMEMOBJ_ENGINE("pmemobj-bucket", pmemobj_bucket_engine_open);
const struct strobe__bench_engine strobe__bench_engine_pmemobj_node =
    PMEMOBJ_ENGINE("pmemobj-node", pmemobj_node_engine_open);
