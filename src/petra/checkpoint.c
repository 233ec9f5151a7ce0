/* SPDX-License-Identifier: MIT */
/*
 * Checkpoints and recovery (checkpoint.h).
 *
 * When a transaction ends, its owner gives every node that still carries
 * one of its infos a resolved info (tx.c, finish_nodes) and, if it
 * committed, notes the final state of each key it changed. So once it has
 * ended, nothing in the structures refers to its descriptor, and its
 * effects are known without reading the structures.
 *
 * Checkpoint with S = the next TXID to be handed out:
 *  1. wait out every critical section running now: afterwards every
 *     descriptor with TXID < S is final, persisted, resolved and noted;
 *  2. write a snapshot block: a delta of the noted states of TXID < S (the
 *     last one per key), or a base of every present key, walked from the
 *     structures; flush, fence;
 *  3. write the record in the other of the two record slots, flush, fence:
 *     the new checkpoint is durable;
 *  4. wait out critical sections again (a thread may still hold an old
 *     descriptor), then publish retired_below = S: log owners reuse the
 *     space of descriptors below S.
 * A base walks concurrently with transactions; a key's recorded state may
 * already include transactions with TXID >= S. Those stay in the logs and
 * recovery replays them after the snapshot, in TXID order, which yields
 * the same state (replay sets states, it does not re-check them).
 *
 * Recovery (Figure 5.4): load the chain into the key-descriptor map, apply
 * every persisted committed descriptor with TXID >= S in TXID order (the
 * last one per key wins), rebuild each structure from the result with
 * resolved infos, and take a base checkpoint. We rebuild instead of
 * repairing the old nodes in place: under power failure, nodes that were
 * never flushed can hold anything, and with checkpoints retiring
 * descriptors the old nodes are no longer needed to know the state.
 */
#include "petra/checkpoint.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "petra/ebr.h"
#include "petra/heap.h"
#include "petra/pmem.h"
#include "petra/skiplist.h"
#include "petra/tx.h"

#define SNAP_MAGIC 0x32304b4c42545350ull /* "PSTBLK02" */
enum { BLOCK_BASE = 0, BLOCK_DELTA = 1 };

/* A snapshot block. A base holds every present key of every structure
 * (sections of sorted entries); a delta holds the state of the keys
 * touched by the descriptors it retires ({key, value, sid | present << 8}
 * entries) and names the block before it, with that block's checksum. */
struct snap_header {
    uint64_t magic;
    uint64_t kind;
    uint64_t count; /* base: sections; delta: entries */
    uint64_t retired_below;
    uint64_t prev_off, prev_bytes, prev_check;
    uint64_t pad;
};
struct snap_section {
    uint64_t structure;
    uint64_t count;
};
struct snap_entry {
    uint64_t key;
    uint64_t value;
};
struct delta_entry {
    uint64_t key;
    uint64_t value;
    uint64_t sid_present;
};

struct buf {
    char *p;
    size_t n, cap;
};

static int buf_add(struct buf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1 << 16;
        while (cap < b->n + n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return -ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
    return 0;
}

static void count(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

void strobe__ckpt_note(struct strobe_petra_thread *t, const struct petra_desc *d, const unsigned *idx,
                       const struct petra_kstate *st, unsigned n)
{
    uint64_t txid = atomic_load_explicit(&d->txid, memory_order_relaxed);
    pthread_mutex_lock(&t->dirty_lock);
    if (t->ndirty + n > t->dirty_cap) {
        size_t cap = t->dirty_cap ? t->dirty_cap * 2 : 1024;
        struct petra_dirty *v = realloc(t->dirty, cap * sizeof *v);
        if (!v) {
            /* cannot remember the states: the next checkpoint walks all */
            atomic_store(&t->h->ckpt_force_full, 1);
            pthread_mutex_unlock(&t->dirty_lock);
            return;
        }
        t->dirty = v;
        t->dirty_cap = cap;
    }
    for (unsigned k = 0; k < n; k++) {
        const struct petra_dop *o = &d->ops[idx[k]];
        t->dirty[t->ndirty++] = (struct petra_dirty){ txid, o->key, st[k].present ? st[k].value : 0,
                                                      o->structure, (uint32_t)(st[k].present != 0) };
    }
    pthread_mutex_unlock(&t->dirty_lock);
}

/* Take every noted key of a transaction with TXID < S (a prefix of each
 * thread's list: a thread notes its transactions in TXID order). */
static int drain_dirty(struct strobe_petra *h, uint64_t S, struct petra_dirty **out, size_t *nout)
{
    struct petra_dirty *v = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (unsigned i = 0; i <= h->max_threads; i++) {
        struct strobe_petra_thread *t = &h->threads[i];
        pthread_mutex_lock(&t->dirty_lock);
        size_t k = 0;
        while (k < t->ndirty && t->dirty[k].txid < S)
            k++;
        if (n + k > cap) {
            size_t c = cap ? cap : 1024;
            while (c < n + k)
                c *= 2;
            struct petra_dirty *g = realloc(v, c * sizeof *g);
            if (!g) {
                rc = -ENOMEM; /* keep them: retried by the next checkpoint */
                pthread_mutex_unlock(&t->dirty_lock);
                break;
            }
            v = g;
            cap = c;
        }
        if (k) {
            memcpy(v + n, t->dirty, k * sizeof *v);
            n += k;
            memmove(t->dirty, t->dirty + k, (t->ndirty - k) * sizeof *v);
            t->ndirty -= k;
        }
        pthread_mutex_unlock(&t->dirty_lock);
    }
    *out = v;
    *nout = n;
    return rc;
}

static int cmp_dirty(const void *a, const void *b)
{
    const struct petra_dirty *x = a, *y = b;
    if (x->sid != y->sid)
        return x->sid < y->sid ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->txid < y->txid ? -1 : x->txid > y->txid;
}

/* A node still naming a descriptor below S (its owner could not allocate
 * the resolved info): resolve it here, before that descriptor is retired. */
static void resolve_old(struct strobe_petra_thread *t, struct petra_node *N, pref info,
                        struct petra_kstate st, uint64_t S)
{
    struct strobe_petra *h = t->h;
    const struct petra_info *I = petra_info(h, info);
    uint64_t txid = I->desc ? atomic_load(&petra_desc(h, I->desc)->txid) : 0;
    if (!I->desc || !txid || txid >= S)
        return;
    pref r = strobe__arena_alloc(t, PETRA_INFO_CLASS);
    if (!r)
        return; /* recovery never needs it; the walk after the next grows */
    *petra_info(h, r) = (struct petra_info){ .flags = st.present ? PETRA_OLD_PRESENT : 0,
                                             .old_value = st.value, .node = I->node };
    if (atomic_compare_exchange_strong(&N->info, &info, r))
        strobe__ebr_retire(t, info, PETRA_INFO_CLASS);
    else
        strobe__arena_free(t, r, PETRA_INFO_CLASS);
}

struct walk {
    struct strobe_petra_thread *t;
    uint64_t S;
    struct buf *b;
    uint64_t count;
};

static int walk_visit(void *arg, struct petra_node *n, pref info, struct petra_kstate st)
{
    struct walk *w = arg;
    resolve_old(w->t, n, info, st, w->S);
    if (!st.present)
        return 0;
    struct snap_entry e = { n->key, st.value };
    w->count++;
    return buf_add(w->b, &e, sizeof e);
}

/* A base block: every present key of every structure, as it is now (at
 * least as new as every transaction below S). */
static int walk_all(struct strobe_petra_thread *t, uint64_t S, struct buf *b, uint64_t *nsect)
{
    struct strobe_petra *h = t->h;
    int rc = 0;
    for (int id = 0; id < STROBE_PETRA_MAX_STRUCTURES && !rc; id++) {
        const struct petra_struct *ps = &h->structs[id];
        if (!ps->used)
            continue;
        struct snap_section sec = { (uint64_t)id, 0 };
        size_t at = b->n;
        rc = buf_add(b, &sec, sizeof sec);
        struct walk w = { t, S, b, 0 };
        strobe__ebr_enter(t);
        if (!rc)
            rc = strobe__tx_visit(h, ps, walk_visit, &w);
        strobe__ebr_exit(t);
        sec.count = w.count;
        memcpy(b->p + at, &sec, sizeof sec);
        ++*nsect;
    }
    return rc;
}

/* A delta block: the last noted state of each key (notes of TXID < S). */
static int write_delta(struct petra_dirty *v, size_t n, struct buf *b, uint64_t *entries)
{
    int rc = 0;
    if (n)
        qsort(v, n, sizeof *v, cmp_dirty);
    for (size_t i = 0; i < n && !rc; i++) {
        if (i + 1 < n && v[i + 1].sid == v[i].sid && v[i + 1].key == v[i].key)
            continue; /* a later transaction set it again */
        struct delta_entry e = { v[i].key, v[i].value, v[i].sid | (uint64_t)v[i].present << 8 };
        rc = buf_add(b, &e, sizeof e);
        ++*entries;
    }
    return rc;
}

static uint64_t record_check(const struct petra_ckpt_record *r)
{
    return strobe__petra_hash(r, offsetof(struct petra_ckpt_record, check), 0x636b7074ull);
}

static void free_blocks(struct strobe_petra *h, const struct petra_block *v, unsigned n)
{
    pthread_mutex_lock(&h->lock);
    for (unsigned i = 0; i < n; i++)
        strobe__heap_chunks_free(h, v[i].off, v[i].chunks);
    pthread_mutex_unlock(&h->lock);
}

int strobe__ckpt_run(struct strobe_petra *h, struct strobe_petra_thread *t)
{
    pthread_mutex_lock(&h->ckpt_lock);
    uint64_t S = atomic_load(&h->next_txid);
    strobe__ebr_synchronize(h);
    struct petra_dirty *dirty = NULL;
    size_t ndirty = 0;
    int rc = drain_dirty(h, S, &dirty, &ndirty);
    /* A delta while the deltas stay smaller than twice the base (so
     * recovery reads at most three times the live data) and the chain has
     * room; otherwise a new base. */
    uint64_t base_bytes = h->chain_len ? h->chain[0].bytes : 0, delta_bytes = 0, chain_chunks = 0;
    for (unsigned i = 0; i < h->chain_len; i++) {
        delta_bytes += i ? h->chain[i].bytes : 0;
        chain_chunks += h->chain[i].chunks;
    }
    int full = !h->chain_len || h->chain_len == PETRA_CHAIN_MAX || atomic_load(&h->ckpt_force_full) ||
               delta_bytes + ndirty * sizeof(struct delta_entry) > 2 * base_bytes ||
               (h->chain_len > 1 && chain_chunks >= h->nchunks / 8);
    if (full)
        atomic_store(&h->ckpt_force_full, 0);
    struct buf b = { 0 };
    struct snap_header hd = { SNAP_MAGIC, full ? BLOCK_BASE : BLOCK_DELTA, 0, S, 0, 0, 0, 0 };
    if (!full) {
        const struct petra_block *prev = &h->chain[h->chain_len - 1];
        hd.prev_off = prev->off;
        hd.prev_bytes = prev->bytes;
        hd.prev_check = prev->check;
    }
    if (!rc)
        rc = buf_add(&b, &hd, sizeof hd);
    if (!rc)
        rc = full ? walk_all(t, S, &b, &hd.count) : write_delta(dirty, ndirty, &b, &hd.count);
    free(dirty);
    /* Nothing to record: the new record only moves S, on the same chain. */
    int reuse = !rc && !full && hd.count == 0;
    struct petra_block blk = { 0, b.n, (b.n + PETRA_CHUNK - 1) / PETRA_CHUNK, 0 };
    if (reuse)
        blk = h->chain[h->chain_len - 1];
    if (!rc && !reuse) {
        memcpy(b.p, &hd, sizeof hd);
        pthread_mutex_lock(&h->lock);
        blk.off = strobe__heap_chunks_alloc(h, blk.chunks, 2);
        pthread_mutex_unlock(&h->lock);
        if (!blk.off)
            rc = -ENOSPC;
    }
    if (!rc && !reuse) {
        memcpy(h->base + blk.off, b.p, b.n);
        blk.check = strobe__petra_hash(h->base + blk.off, b.n, 0);
        count(&t->ckpt_flushes, strobe__pmem_flush_range(h, t, h->base + blk.off, b.n));
        rc = strobe__pmem_fence(h, t);
        count(&t->ckpt_fences, 1);
    }
    if (!rc) {
        struct petra_ckpt_record r = { .seq = h->ckpt_seq + 1, .retired_below = S, .snap_off = blk.off,
                                       .snap_bytes = blk.bytes, .snap_check = blk.check };
        r.check = record_check(&r);
        void *dst = h->base + h->ckpt_off + (r.seq & 1) * sizeof r;
        memcpy(dst, &r, sizeof r);
        count(&t->ckpt_flushes, strobe__pmem_flush(h, t, dst));
        rc = strobe__pmem_fence(h, t);
        count(&t->ckpt_fences, 1);
    }
    free(b.p);
    if (rc) {
        /* The keys drained for this attempt are lost to the next delta:
         * make it a base, which walks everything. */
        atomic_store(&h->ckpt_force_full, 1);
        if (blk.off && !reuse)
            free_blocks(h, &blk, 1);
        atomic_store(&h->ckpt_error, rc);
    } else {
        if (full) {
            free_blocks(h, h->chain, h->chain_len);
            h->chain_len = 0;
        }
        if (!reuse)
            h->chain[h->chain_len++] = blk;
        h->ckpt_seq++;
        strobe__ebr_synchronize(h);
        atomic_store(&h->ckpt_error, 0);
        atomic_store_explicit(&h->retired_below, S, memory_order_release);
        atomic_fetch_add(&h->checkpoints, 1);
    }
    pthread_mutex_lock(&h->ckpt_wait_lock);
    pthread_cond_broadcast(&h->ckpt_cond);
    pthread_mutex_unlock(&h->ckpt_wait_lock);
    pthread_mutex_unlock(&h->ckpt_lock);
    return rc;
}

void strobe__ckpt_request(struct strobe_petra *h)
{
    if (atomic_load_explicit(&h->ckpt_requested, memory_order_relaxed))
        return;
    pthread_mutex_lock(&h->ckpt_wait_lock);
    atomic_store(&h->ckpt_requested, 1);
    pthread_cond_broadcast(&h->ckpt_cond);
    pthread_mutex_unlock(&h->ckpt_wait_lock);
}

int strobe__ckpt_wait(struct strobe_petra *h, uint64_t seen)
{
    pthread_mutex_lock(&h->ckpt_wait_lock);
    atomic_store(&h->ckpt_requested, 1);
    pthread_cond_broadcast(&h->ckpt_cond);
    int rc = 0;
    while (atomic_load(&h->retired_below) == seen && !h->ckpt_stop) {
        pthread_cond_wait(&h->ckpt_cond, &h->ckpt_wait_lock);
        rc = atomic_load(&h->ckpt_error);
        if (rc)
            break;
    }
    pthread_mutex_unlock(&h->ckpt_wait_lock);
    return rc;
}

static void *checkpointer(void *arg)
{
    struct strobe_petra *h = arg;
    for (;;) {
        pthread_mutex_lock(&h->ckpt_wait_lock);
        while (!atomic_load(&h->ckpt_requested) && !h->ckpt_stop)
            pthread_cond_wait(&h->ckpt_cond, &h->ckpt_wait_lock);
        int stop = h->ckpt_stop;
        atomic_store(&h->ckpt_requested, 0);
        pthread_mutex_unlock(&h->ckpt_wait_lock);
        if (stop)
            return NULL;
        strobe__ckpt_run(h, &h->threads[h->max_threads]);
    }
}

int strobe__ckpt_start(struct strobe_petra *h)
{
    int rc = pthread_create(&h->ckpt_thread, NULL, checkpointer, h);
    if (rc)
        return -rc;
    h->ckpt_running = 1;
    return 0;
}

void strobe__ckpt_stop(struct strobe_petra *h)
{
    if (!h->ckpt_running)
        return;
    pthread_mutex_lock(&h->ckpt_wait_lock);
    h->ckpt_stop = 1;
    pthread_cond_broadcast(&h->ckpt_cond);
    pthread_mutex_unlock(&h->ckpt_wait_lock);
    pthread_join(h->ckpt_thread, NULL);
    h->ckpt_running = 0;
    h->ckpt_stop = 0;
}

/* ---- Recovery ----------------------------------------------------------- */

/* The key-descriptor map: the durable state of every key, in DRAM. */
struct kd_entry {
    uint64_t key;
    uint32_t sid; /* structure id + 1; 0 = empty slot */
    uint32_t present;
    uint64_t value;
};
struct kdmap {
    struct kd_entry *v;
    size_t cap, n;
};

static uint64_t kd_hash(uint64_t key, uint32_t sid)
{
    uint64_t x = key ^ ((uint64_t)sid << 56) ^ sid;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static struct kd_entry *kd_slot(struct kdmap *m, uint64_t key, uint32_t sid)
{
    size_t i = kd_hash(key, sid) & (m->cap - 1);
    while (m->v[i].sid && !(m->v[i].sid == sid && m->v[i].key == key))
        i = (i + 1) & (m->cap - 1);
    return &m->v[i];
}

static int kd_set(struct kdmap *m, uint64_t key, uint32_t sid, int present, uint64_t value)
{
    if ((m->n + 1) * 2 > m->cap) {
        struct kdmap g = { calloc(m->cap ? m->cap * 2 : 1024, sizeof *g.v), m->cap ? m->cap * 2 : 1024, 0 };
        if (!g.v)
            return -ENOMEM;
        for (size_t i = 0; i < m->cap; i++)
            if (m->v[i].sid) {
                *kd_slot(&g, m->v[i].key, m->v[i].sid) = m->v[i];
                g.n++;
            }
        free(m->v);
        *m = g;
    }
    struct kd_entry *e = kd_slot(m, key, sid);
    if (!e->sid)
        m->n++;
    *e = (struct kd_entry){ key, sid, (uint32_t)present, value };
    return 0;
}

static int bad_block(struct strobe_petra *h, uint64_t seq, unsigned depth, const char *what, char *why,
                     size_t why_len)
{
    strobe__petra_why(why, why_len, "%s: checkpoint %llu, snapshot block %u: %s", h->path,
                      (unsigned long long)seq, depth, what);
    return STROBE_ERR_FORMAT;
}

static int apply_base(struct strobe_petra *h, const char *p, uint64_t bytes, uint64_t nsect,
                      struct kdmap *m, const char **what)
{
    uint64_t at = sizeof(struct snap_header);
    if (nsect > STROBE_PETRA_MAX_STRUCTURES)
        return *what = "too many sections", STROBE_ERR_FORMAT;
    for (uint64_t s = 0; s < nsect; s++) {
        struct snap_section sec;
        if (bytes - at < sizeof sec)
            return *what = "truncated", STROBE_ERR_FORMAT;
        memcpy(&sec, p + at, sizeof sec);
        at += sizeof sec;
        if (sec.structure >= STROBE_PETRA_MAX_STRUCTURES || !h->structs[sec.structure].used)
            return *what = "names a structure that does not exist", STROBE_ERR_FORMAT;
        if (sec.count > (bytes - at) / sizeof(struct snap_entry))
            return *what = "truncated", STROBE_ERR_FORMAT;
        for (uint64_t i = 0; i < sec.count; i++) {
            struct snap_entry e;
            memcpy(&e, p + at, sizeof e);
            at += sizeof e;
            if (e.key < STROBE_PETRA_KEY_MIN || e.key > STROBE_PETRA_KEY_MAX)
                return *what = "key out of range", STROBE_ERR_FORMAT;
            int rc = kd_set(m, e.key, (uint32_t)sec.structure + 1, 1, e.value);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int apply_delta(struct strobe_petra *h, const char *p, uint64_t bytes, uint64_t n,
                       struct kdmap *m, const char **what)
{
    if (n > (bytes - sizeof(struct snap_header)) / sizeof(struct delta_entry))
        return *what = "truncated", STROBE_ERR_FORMAT;
    for (uint64_t i = 0; i < n; i++) {
        struct delta_entry e;
        memcpy(&e, p + sizeof(struct snap_header) + i * sizeof e, sizeof e);
        uint64_t sid = e.sid_present & 0xff, present = e.sid_present >> 8;
        if (sid >= STROBE_PETRA_MAX_STRUCTURES || !h->structs[sid].used || present > 1)
            return *what = "bad entry", STROBE_ERR_FORMAT;
        if (e.key < STROBE_PETRA_KEY_MIN || e.key > STROBE_PETRA_KEY_MAX)
            return *what = "key out of range", STROBE_ERR_FORMAT;
        int rc = kd_set(m, e.key, (uint32_t)sid + 1, (int)present, e.value);
        if (rc)
            return rc;
    }
    return 0;
}

/* Follow the chain from the record's block back to its base, check every
 * block, then apply the base and the deltas oldest first. */
static int load_chain(struct strobe_petra *h, const struct petra_ckpt_record *r, struct kdmap *m,
                      char *why, size_t why_len)
{
    uint64_t end = h->data_off + h->nchunks * PETRA_CHUNK;
    struct petra_block v[PETRA_CHAIN_MAX];
    struct snap_header hd[PETRA_CHAIN_MAX];
    struct petra_block cur = { r->snap_off, r->snap_bytes, 0, r->snap_check };
    unsigned n = 0;
    for (;;) {
        if (n == PETRA_CHAIN_MAX)
            return bad_block(h, r->seq, n, "chain too long", why, why_len);
        if (cur.off < h->data_off || cur.off % PETRA_CHUNK || cur.bytes < sizeof(struct snap_header) ||
            cur.bytes > end - cur.off)
            return bad_block(h, r->seq, n, "outside the data region", why, why_len);
        const char *p = h->base + cur.off;
        if (strobe__petra_hash(p, cur.bytes, 0) != cur.check)
            return bad_block(h, r->seq, n, "checksum mismatch", why, why_len);
        memcpy(&hd[n], p, sizeof hd[n]);
        if (hd[n].magic != SNAP_MAGIC || hd[n].kind > BLOCK_DELTA)
            return bad_block(h, r->seq, n, "bad header", why, why_len);
        cur.chunks = (cur.bytes + PETRA_CHUNK - 1) / PETRA_CHUNK;
        for (unsigned k = 0; k < n; k++)
            if (cur.off < v[k].off + v[k].chunks * PETRA_CHUNK && v[k].off < cur.off + cur.chunks * PETRA_CHUNK)
                return bad_block(h, r->seq, n, "overlaps another block", why, why_len);
        v[n++] = cur;
        if (hd[n - 1].kind == BLOCK_BASE)
            break;
        cur = (struct petra_block){ hd[n - 1].prev_off, hd[n - 1].prev_bytes, 0, hd[n - 1].prev_check };
    }
    h->chain_len = 0;
    for (unsigned k = n; k-- > 0;) {
        const char *what = NULL, *p = h->base + v[k].off;
        int rc = hd[k].kind == BLOCK_BASE ? apply_base(h, p, v[k].bytes, hd[k].count, m, &what)
                                          : apply_delta(h, p, v[k].bytes, hd[k].count, m, &what);
        if (rc && what)
            return bad_block(h, r->seq, k, what, why, why_len);
        if (rc)
            return rc;
        h->chain[h->chain_len++] = v[k];
    }
    return 0;
}

struct found {
    uint64_t txid;
    const struct petra_desc *d;
    unsigned slot;
    uint64_t off;
};

static int cmp_found(const void *a, const void *b)
{
    const struct found *x = a, *y = b;
    return x->txid < y->txid ? -1 : x->txid > y->txid;
}

/* Where the header of descriptor txid is in log slot, whatever its
 * checksum says; UINT64_MAX if no header there carries it. */
static uint64_t find_header(const struct strobe_petra *h, unsigned slot, uint64_t txid)
{
    const char *base = petra_log_base(h, slot);
    for (uint64_t off = 0; off + 64 <= h->log_bytes; off += 64) {
        const struct petra_desc *d = (const void *)(base + off);
        if (d->magic == PETRA_DESC_MAGIC && atomic_load_explicit(&d->txid, memory_order_relaxed) == txid)
            return off;
    }
    return UINT64_MAX;
}

/* A torn write can only be a log's last descriptor: each one is persisted
 * before its thread starts the next. So every committed descriptor after
 * the checkpoint must find its predecessor (prev) in its log, unless that
 * one is older than the checkpoint; a missing one was damaged. The
 * earliest such TXID, or UINT64_MAX; the message names the first. */
static uint64_t check_chains(const struct strobe_petra *h, uint64_t S, const struct found *v, size_t n,
                             char *why, size_t why_len)
{
    uint64_t cutoff = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        uint64_t p = v[i].d->prev;
        if (p < S || p >= cutoff)
            continue;
        const struct found key = { .txid = p };
        const struct found *pred = bsearch(&key, v, n, sizeof *v, cmp_found);
        if (pred && pred->slot == v[i].slot)
            continue;
        cutoff = p;
        uint64_t at = find_header(h, v[i].slot, p);
        if (at != UINT64_MAX)
            strobe__petra_why(why, why_len,
                              "%s: log %u offset %llu: descriptor TXID %llu is damaged (checksum "
                              "mismatch; TXID %llu at offset %llu follows it)",
                              h->path, v[i].slot, (unsigned long long)at, (unsigned long long)p,
                              (unsigned long long)v[i].txid, (unsigned long long)v[i].off);
        else
            strobe__petra_why(why, why_len,
                              "%s: log %u: descriptor TXID %llu is damaged or missing (TXID %llu at "
                              "offset %llu follows it)",
                              h->path, v[i].slot, (unsigned long long)p, (unsigned long long)v[i].txid,
                              (unsigned long long)v[i].off);
    }
    return cutoff;
}

/* Step 1 of Figure 5.4: the persisted descriptors after the checkpoint.
 * Recovery (strict = 0) ignores a descriptor whose checksum fails as torn,
 * then refuses the logs if it was not a log's last (check_chains) or, with
 * h->salvage, keeps only the descriptors before the damaged one. verify
 * (strict = 1) runs on an open heap, where no write is torn: there a
 * checksum that fails on a descriptor after the checkpoint is damage. */
static int scan_logs(struct strobe_petra *h, uint64_t S, int strict, struct found **out, size_t *nout,
                     uint64_t *max_txid, char *why, size_t why_len)
{
    struct found *v = NULL;
    size_t n = 0, cap = 0;
    for (unsigned slot = 0; slot < h->max_threads; slot++) {
        const char *base = petra_log_base(h, slot);
        for (uint64_t off = 0; off + 64 <= h->log_bytes; off += 64) {
            const struct petra_desc *d = (const void *)(base + off);
            if (d->magic != PETRA_DESC_MAGIC || d->nops < 1 || d->nops > STROBE_PETRA_MAX_OPS ||
                petra_desc_size(d->nops) > h->log_bytes - off)
                continue;
            uint64_t txid = atomic_load_explicit(&d->txid, memory_order_relaxed);
            /* TXIDs restart above every one in the logs, even torn ones:
             * a torn descriptor must never look newer than the checkpoint
             * that follows recovery (2^62 bounds what damage can claim) */
            if (txid > *max_txid && txid < (1ull << 62))
                *max_txid = txid;
            uint64_t check = atomic_load_explicit(&d->check, memory_order_relaxed);
            if (txid < S)
                continue; /* retired */
            if (check != strobe__tx_desc_check(d)) {
                /* 0: never persisted (active or aborted) */
                if (strict && check && txid < (1ull << 62)) {
                    strobe__petra_why(why, why_len,
                                      "%s: log %u offset %llu: descriptor TXID %llu is damaged "
                                      "(checksum mismatch)",
                                      h->path, slot, (unsigned long long)off, (unsigned long long)txid);
                    free(v);
                    return STROBE_ERR_FORMAT;
                }
                continue; /* torn: never completely persisted */
            }
            if (txid >= (1ull << 62)) {
                strobe__petra_why(why, why_len, "%s: log %u offset %llu: descriptor TXID %llu is impossible",
                                  h->path, slot, (unsigned long long)off, (unsigned long long)txid);
                free(v);
                return STROBE_ERR_FORMAT;
            }
            uint8_t st = atomic_load_explicit(&d->status, memory_order_relaxed);
            if (st != PETRA_COMMITTED)
                continue;
            for (unsigned i = 0; i < d->nops; i++) {
                const struct petra_dop *o = &d->ops[i];
                if (o->type < STROBE_PETRA_FIND || o->type > STROBE_PETRA_PUT ||
                    o->structure >= STROBE_PETRA_MAX_STRUCTURES || !h->structs[o->structure].used ||
                    o->key < STROBE_PETRA_KEY_MIN || o->key > STROBE_PETRA_KEY_MAX) {
                    strobe__petra_why(why, why_len,
                                      "%s: log %u offset %llu: descriptor %llu operation %u is invalid "
                                      "(type %u, structure %u)",
                                      h->path, slot, (unsigned long long)off, (unsigned long long)txid, i,
                                      o->type, o->structure);
                    free(v);
                    return STROBE_ERR_FORMAT;
                }
            }
            if (n == cap) {
                cap = cap ? cap * 2 : 256;
                struct found *g = realloc(v, cap * sizeof *v);
                if (!g) {
                    free(v);
                    return -ENOMEM;
                }
                v = g;
            }
            v[n++] = (struct found){ txid, d, slot, off };
        }
    }
    if (n)
        qsort(v, n, sizeof *v, cmp_found);
    for (size_t i = 1; i < n; i++)
        if (v[i].txid == v[i - 1].txid) {
            strobe__petra_why(why, why_len, "%s: two descriptors carry TXID %llu", h->path,
                              (unsigned long long)v[i].txid);
            free(v);
            return STROBE_ERR_FORMAT;
        }
    uint64_t cutoff = check_chains(h, S, v, n, why, why_len);
    if (cutoff != UINT64_MAX) {
        if (strict || !h->salvage) {
            free(v);
            return STROBE_ERR_FORMAT;
        }
        while (n && v[n - 1].txid >= cutoff)
            n--;
    }
    *out = v;
    *nout = n;
    return 0;
}

int strobe__ckpt_check_logs(struct strobe_petra *h, char *why, size_t why_len)
{
    struct found *v = NULL;
    size_t n = 0;
    uint64_t max_txid = 0;
    int rc = scan_logs(h, atomic_load(&h->retired_below), 1, &v, &n, &max_txid, why, why_len);
    free(v);
    return rc;
}

/* Heads of a structure in a fresh arena. */
int strobe__ckpt_build_heads(struct strobe_petra_thread *t, struct petra_struct *ps)
{
    struct strobe_petra *h = t->h;
    ps->head_size = (uint32_t)((strobe__tx_node_class(ps->height) + 1) * PETRA_GRAIN);
    /* Heads of all structures share chunks (bucket arrays must be
     * contiguous); they live until the next recovery rebuilds them. */
    uint64_t bytes = ((uint64_t)ps->head_size * ps->buckets + 63) & ~63ull;
    pthread_mutex_lock(&h->lock);
    if (h->heads_end - h->heads_next < bytes) {
        uint64_t chunks = (bytes + PETRA_CHUNK - 1) / PETRA_CHUNK;
        pref c = strobe__heap_chunks_alloc(h, chunks, 3);
        if (c) {
            h->heads_next = c;
            h->heads_end = c + chunks * PETRA_CHUNK;
        }
    }
    pref heads = 0;
    if (h->heads_end - h->heads_next >= bytes) {
        heads = h->heads_next;
        h->heads_next += bytes;
    }
    pthread_mutex_unlock(&h->lock);
    if (!heads)
        return -ENOSPC;
    memset(h->base + heads, 0, bytes);
    ps->heads = heads;
    for (uint32_t b = 0; b < ps->buckets; b++)
        petra_node(h, heads + (uint64_t)b * ps->head_size)->height = ps->height;
    return 0;
}

struct kv {
    uint64_t order; /* bucket for maps, 0 otherwise */
    uint64_t key, value;
};

static int cmp_kv(const void *a, const void *b)
{
    const struct kv *x = a, *y = b;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* Link sorted keys in order: O(n), no searches. */
static int bulk_build(struct strobe_petra_thread *t, struct petra_struct *ps, struct kv *v, size_t n)
{
    struct strobe_petra *h = t->h;
    pref last[PETRA_MAX_LEVEL];
    uint64_t cur_bucket = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        if (v[i].order != cur_bucket) {
            cur_bucket = v[i].order;
            for (unsigned l = 0; l < ps->height; l++)
                last[l] = ps->heads + cur_bucket * ps->head_size;
        }
        unsigned height = strobe__tx_random_height(t, ps);
        pref info = strobe__arena_alloc(t, PETRA_INFO_CLASS);
        pref nn = info ? strobe__arena_alloc(t, strobe__tx_node_class(height)) : 0;
        if (!nn)
            return -ENOSPC;
        *petra_info(h, info) = (struct petra_info){ .flags = PETRA_OLD_PRESENT | PETRA_CUR_PRESENT,
                                                    .old_value = v[i].value, .cur_value = v[i].value,
                                                    .node = nn };
        struct petra_node *N = petra_node(h, nn);
        N->key = v[i].key;
        N->height = height;
        N->pad = 0;
        atomic_store_explicit(&N->info, info, memory_order_relaxed);
        for (unsigned l = 0; l < height; l++) {
            atomic_store_explicit(&N->next[l], 0, memory_order_relaxed);
            atomic_store_explicit(petra_next(h, last[l], l), nn, memory_order_relaxed);
            last[l] = nn;
        }
    }
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int strobe__recover(struct strobe_petra *h, char *why, size_t why_len)
{
    uint64_t t0 = now_ns();
    struct strobe_petra_thread *t = &h->threads[h->max_threads];
    const struct petra_ckpt_record *cur = NULL;
    for (int i = 0; i < 2; i++) {
        const struct petra_ckpt_record *r = (const void *)(h->base + h->ckpt_off + (uint64_t)i * 64);
        if (r->seq && r->check == record_check(r) && (!cur || r->seq > cur->seq))
            cur = r;
    }
    if (!cur) {
        strobe__petra_why(why, why_len, "%s: no valid checkpoint record", h->path);
        return STROBE_ERR_FORMAT;
    }
    struct petra_ckpt_record rec = *cur;
    struct kdmap m = { 0 };
    struct found *found = NULL;
    size_t nfound = 0;
    uint64_t max_txid = 0;
    struct kv *kv = NULL;
    int rc = load_chain(h, &rec, &m, why, why_len);
    if (!rc)
        rc = scan_logs(h, rec.retired_below, 0, &found, &nfound, &max_txid, why, why_len);
    for (size_t i = 0; i < nfound && !rc; i++) {
        const struct petra_desc *d = found[i].d;
        for (unsigned k = 0; k < d->nops && !rc; k++) {
            const struct petra_dop *o = &d->ops[k];
            if (o->type == STROBE_PETRA_FIND)
                continue;
            rc = kd_set(&m, o->key, o->structure + 1u, o->type != STROBE_PETRA_DELETE,
                        o->type == STROBE_PETRA_DELETE ? 0 : o->value);
        }
    }
    if (rc)
        goto out;
    /* Validated: from here on the file is written. */
    memset(h->chunk_use, 0, h->nchunks);
    h->heads_next = h->heads_end = 0;
    for (unsigned k = 0; k < h->chain_len; k++)
        memset(h->chunk_use + (h->chain[k].off - h->data_off) / PETRA_CHUNK, 2, h->chain[k].chunks);
    h->ckpt_seq = rec.seq;
    kv = malloc((m.n ? m.n : 1) * sizeof *kv);
    if (!kv) {
        rc = -ENOMEM;
        goto out;
    }
    for (int id = 0; id < STROBE_PETRA_MAX_STRUCTURES && !rc; id++) {
        struct petra_struct *ps = &h->structs[id];
        if (!ps->used)
            continue;
        rc = strobe__ckpt_build_heads(t, ps);
        size_t n = 0;
        for (size_t i = 0; i < m.cap && !rc; i++) {
            const struct kd_entry *e = &m.v[i];
            if (e->sid == (uint32_t)id + 1 && e->present)
                kv[n++] = (struct kv){ (strobe__tx_head(h, ps, e->key) - ps->heads) / ps->head_size,
                                       e->key, e->value };
        }
        qsort(kv, n, sizeof *kv, cmp_kv);
        if (!rc)
            rc = bulk_build(t, ps, kv, n);
    }
    if (rc) {
        strobe__petra_why(why, why_len, "%s: no room to rebuild the structures (%s)", h->path,
                          strobe_strerror(rc));
        goto out;
    }
    uint64_t next = rec.retired_below > max_txid ? rec.retired_below : max_txid + 1;
    atomic_store(&h->next_txid, next);
    atomic_store(&h->retired_below, rec.retired_below);
    h->recovered_descriptors = nfound;
    /* the checkpoint below retires the replayed descriptors: a base records
     * their effects (recovery is linear in the live data anyway) */
    atomic_store(&h->ckpt_force_full, 1);
    rc = strobe__ckpt_run(h, t);
    if (rc)
        strobe__petra_why(why, why_len, "%s: checkpoint after recovery: %s", h->path, strobe_strerror(rc));
    h->recovery_ns = now_ns() - t0;
out:
    free(kv);
    free(found);
    free(m.v);
    return rc;
}
