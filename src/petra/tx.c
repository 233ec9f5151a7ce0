/* SPDX-License-Identifier: MIT */
/*
 * PETRA transactions (seed 002 section 5.1) on LFTT.
 *
 * A transaction is a descriptor in the owner's log. Executing it installs,
 * node by node, a NodeInfo naming (descriptor, operation index) with
 * UpdateInfo (Algorithm 5.3); a thread that finds a node owned by another
 * live transaction helps it finish first (ExecuteOps from the next
 * operation), with a per-thread help stack against cycles. The status is
 * then set by one CAS (Committed/Aborted) and a committed descriptor
 * persisted (Algorithm 5.4): a flush per operation, one for the header,
 * one fence.
 *
 * Invariants:
 *  - a node's logical state is a function of its info (Algorithm 5.2): the
 *    operation's effect if its transaction is Committed and Persisted (or
 *    is the viewer itself, still Active), else the state before it;
 *  - an info on a node is replaced only after its transaction is final and
 *    persisted (UpdateInfo helps it first), so per key the TXIDs of the
 *    transactions that touched it increase: recovery orders by TXID;
 *  - a key's old node is unlinked (MarkDelete) only after the deleting
 *    transaction persisted, so a new node for the key belongs to a later
 *    TXID too;
 *  - ops[i].result is set before any executor moves past operation i, and
 *    closed by the owner when the transaction has ended; once the owner
 *    has finished, no node names the descriptor (finish_nodes).
 * Deviation from Algorithm 5.2, on purpose: a Committed but not yet
 * Persisted DELETE reports the key present (the old state), not absent;
 * otherwise a reader could observe a deletion that a crash then undoes.
 */
#include "petra/tx.h"

#include <errno.h>
#include <string.h>

#include "common/rng.h"
#include "petra/checkpoint.h"
#include "petra/ebr.h"
#include "petra/heap.h"
#include "petra/pmem.h"
#include "petra/skiplist.h"

enum { R_OK, R_FAIL, R_RETRY, R_NOSPC };

/* ops[i].result once the owner has finished: no info is a multiple of 16,
 * so this never names one (see finish_nodes) */
#define RESULT_CLOSED ((pref)1)

#define INFO_CLASS PETRA_INFO_CLASS

static void execute_ops(struct strobe_petra_thread *t, struct petra_desc *d, unsigned from, int *rc);
static void settle_node(struct strobe_petra_thread *t, const struct petra_struct *ps, uint64_t key,
                        pref n, pref r);

unsigned strobe__tx_node_class(unsigned height)
{
    return petra_class(sizeof(struct petra_node) + 8u * height);
}

pref strobe__tx_head(const struct strobe_petra *h, const struct petra_struct *ps, uint64_t key)
{
    (void)h;
    if (ps->kind != STROBE_PETRA_MAP)
        return ps->heads;
    return ps->heads + (strobe__mix64(key) & (ps->buckets - 1)) * ps->head_size;
}

unsigned strobe__tx_random_height(struct strobe_petra_thread *t, const struct petra_struct *ps)
{
    if (ps->kind != STROBE_PETRA_SKIPLIST)
        return 1;
    uint64_t x = t->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t->rng = x;
    unsigned lvl = 1;
    while ((x & 1) && lvl < PETRA_MAX_LEVEL) {
        lvl++;
        x >>= 1;
    }
    return lvl;
}

uint64_t strobe__tx_desc_check(const struct petra_desc *d)
{
    uint64_t buf[3 + 3 * STROBE_PETRA_MAX_OPS];
    unsigned n = d->nops <= STROBE_PETRA_MAX_OPS ? d->nops : STROBE_PETRA_MAX_OPS;
    buf[0] = (uint64_t)d->magic | (uint64_t)n << 32 |
             (uint64_t)atomic_load_explicit(&d->status, memory_order_relaxed) << 40 |
             (uint64_t)d->slot << 48;
    buf[1] = atomic_load_explicit(&d->txid, memory_order_relaxed);
    for (unsigned i = 0; i < n; i++) {
        buf[2 + 3 * i] = (uint64_t)d->ops[i].type | (uint64_t)d->ops[i].structure << 8;
        buf[3 + 3 * i] = d->ops[i].key;
        buf[4 + 3 * i] = d->ops[i].value;
    }
    /* prev only when set: descriptors written before it existed have 0
     * there and keep their checksum */
    size_t words = 2 + 3 * (size_t)n;
    if (d->prev)
        buf[words++] = d->prev;
    return strobe__petra_hash(buf, 8 * words, 0x6465736364ull);
}

static pref op_result(struct petra_dop *op, pref info)
{
    pref r = atomic_load(&op->result);
    if (r)
        return r;
    if (atomic_compare_exchange_strong(&op->result, &r, info))
        return info;
    return r;
}

/* The state after operation op on a key whose state was prev. */
static struct petra_kstate apply(const struct petra_dop *op, struct petra_kstate prev)
{
    switch (op->type) {
    case STROBE_PETRA_INSERT:
    case STROBE_PETRA_UPDATE:
    case STROBE_PETRA_PUT: return (struct petra_kstate){ 1, op->value };
    case STROBE_PETRA_DELETE: return (struct petra_kstate){ 0, 0 };
    default: return prev;
    }
}

static struct petra_kstate info_old(const struct petra_info *I)
{
    return (struct petra_kstate){ (I->flags & PETRA_OLD_PRESENT) != 0, I->old_value };
}

static struct petra_kstate info_cur(const struct petra_info *I)
{
    return (struct petra_kstate){ (I->flags & PETRA_CUR_PRESENT) != 0, I->cur_value };
}

struct petra_kstate strobe__tx_node_state(struct strobe_petra *h, pref info,
                                          const struct petra_desc *viewer)
{
    const struct petra_info *I = petra_info(h, info);
    if (!I->desc)
        return info_old(I);
    struct petra_desc *d = petra_desc(h, I->desc);
    if (op_result(&d->ops[I->opid], info) != info)
        return info_old(I); /* a late helper's duplicate insertion */
    uint8_t st = atomic_load(&d->status);
    if (st == PETRA_ACTIVE)
        return d == viewer ? info_cur(I) : info_old(I);
    if (st == PETRA_COMMITTED && atomic_load(&d->pstatus) == PETRA_PERSISTED)
        return info_cur(I);
    return info_old(I);
}

void strobe__tx_retire_node(struct strobe_petra_thread *t, pref n, pref info)
{
    struct petra_node *N = petra_node(t->h, n);
    strobe__ebr_retire(t, petra_unmark(info), INFO_CLASS);
    strobe__ebr_retire(t, n, strobe__tx_node_class(N->height));
}

bool strobe__tx_delete_node(struct strobe_petra_thread *t, const struct petra_struct *ps, pref head,
                            pref n, pref info)
{
    struct petra_node *N = petra_node(t->h, n);
    pref exp = info;
    if (!atomic_compare_exchange_strong(&N->info, &exp, info | PETRA_MARK))
        return false;
    if (strobe__sl_remove(t->h, head, ps->height, n))
        strobe__tx_retire_node(t, n, info);
    return true;
}

/* Algorithm 5.4. Every thread that finds the descriptor not yet persisted
 * does the work (a delayed owner must not hold others up); the TXID is
 * assigned once, by CAS. */
static void persist(struct strobe_petra_thread *t, struct petra_desc *d)
{
    struct strobe_petra *h = t->h;
    uint8_t ps = atomic_load(&d->pstatus);
    if (ps == PETRA_PERSISTED)
        return;
    if (atomic_load(&d->status) == PETRA_ABORTED) {
        /* Nothing to make durable: an aborted transaction has no effect,
         * recovery ignores it, and its nodes read as the state before it
         * whether or not it is persisted (the seed persists it because its
         * Algorithm 5.2 reads pstatus for aborted deletes). The TXID only
         * lets a checkpoint retire its log space. */
        if (atomic_load(&d->txid) == 0) {
            uint64_t id = atomic_fetch_add(&h->next_txid, 1), zero = 0;
            atomic_compare_exchange_strong(&d->txid, &zero, id);
        }
        atomic_store_explicit(&d->pstatus, PETRA_PERSISTED, memory_order_release);
        return;
    }
    if (ps == PETRA_MAYBE)
        atomic_compare_exchange_strong(&d->pstatus, &ps, PETRA_INPROGRESS);
    if (atomic_load(&d->txid) == 0) {
        uint64_t id = atomic_fetch_add(&h->next_txid, 1), zero = 0;
        atomic_compare_exchange_strong(&d->txid, &zero, id);
    }
    atomic_store_explicit(&d->check, strobe__tx_desc_check(d), memory_order_relaxed);
    unsigned flushes = 0;
    for (unsigned i = 0; i < d->nops; i++)
        flushes += strobe__pmem_flush(h, t, &d->ops[i]);
    flushes += strobe__pmem_flush(h, t, d);
    strobe__pmem_fence(h, t);
    /* pairs with the acquire loads in node_state: whoever sees Persisted
     * sees a descriptor that is durable */
    atomic_store_explicit(&d->pstatus, PETRA_PERSISTED, memory_order_release);
    atomic_store_explicit(&t->tx_flushes,
                          atomic_load_explicit(&t->tx_flushes, memory_order_relaxed) + flushes,
                          memory_order_relaxed);
    atomic_store_explicit(&t->tx_fences,
                          atomic_load_explicit(&t->tx_fences, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

static void finish(struct strobe_petra_thread *t, struct petra_desc *d, bool ok)
{
    uint8_t exp = PETRA_ACTIVE;
    atomic_compare_exchange_strong(&d->status, &exp, ok ? PETRA_COMMITTED : PETRA_ABORTED);
    persist(t, d);
}

/* Help another transaction to its end (LFTT's helping). A descriptor that
 * is already on this thread's help stack means a cycle of helpers: abort it,
 * which breaks the cycle. */
static void help(struct strobe_petra_thread *t, struct petra_desc *od, unsigned from)
{
    for (unsigned k = 0; k < t->help_depth; k++)
        if (t->help[k] == od) {
            finish(t, od, false);
            return;
        }
    if (t->help_depth == PETRA_HELP_MAX) {
        finish(t, od, false);
        return;
    }
    t->help[t->help_depth++] = od;
    int rc = 0;
    execute_ops(t, od, from, &rc);
    t->help_depth--;
}

static int precondition(uint8_t type, int present)
{
    switch (type) {
    case STROBE_PETRA_INSERT: return !present;
    case STROBE_PETRA_PUT: return 1;
    default: return present;
    }
}

static pref new_info(struct strobe_petra_thread *t, pref desc, unsigned i, struct petra_kstate old,
                     struct petra_kstate cur, pref node)
{
    pref r = strobe__arena_alloc(t, INFO_CLASS);
    if (!r)
        return 0;
    struct petra_info *I = petra_info(t->h, r);
    I->desc = desc;
    I->opid = i;
    I->flags = (old.present ? PETRA_OLD_PRESENT : 0) | (cur.present ? PETRA_CUR_PRESENT : 0);
    I->old_value = old.present ? old.value : 0;
    I->cur_value = cur.present ? cur.value : 0;
    I->node = node;
    I->pad = 0;
    return r;
}

/* Algorithm 5.3 on node n for operation i of d. */
static int update_info(struct strobe_petra_thread *t, const struct petra_struct *ps, pref head,
                       pref n, struct petra_desc *d, unsigned i)
{
    struct strobe_petra *h = t->h;
    struct petra_node *N = petra_node(h, n);
    struct petra_dop *op = &d->ops[i];
    pref old = atomic_load(&N->info);
    if (petra_marked(old)) {
        if (strobe__sl_remove(h, head, ps->height, n))
            strobe__tx_retire_node(t, n, old);
        return R_RETRY;
    }
    const struct petra_info *I = petra_info(h, old);
    pref dref = petra_ref(h, d);
    if (I->desc == dref) {
        if (I->opid >= i) {
            if (I->opid == i)
                op_result(op, old);
            return R_OK; /* done already, by us or a helper */
        }
    } else if (I->desc) {
        struct petra_desc *od = petra_desc(h, I->desc);
        if (atomic_load(&od->status) == PETRA_ACTIVE ||
            atomic_load(&od->pstatus) != PETRA_PERSISTED)
            help(t, od, I->opid + 1);
    }
    /* before: the key's state before this transaction; prev: as this
     * transaction sees it now (after its own earlier operations) */
    struct petra_kstate before, prev;
    if (I->desc == dref) {
        before = info_old(I);
        prev = info_cur(I);
    } else {
        before = prev = strobe__tx_node_state(h, old, d);
    }
    if (!precondition(op->type, prev.present))
        return R_FAIL;
    if (atomic_load(&d->status) != PETRA_ACTIVE)
        return R_FAIL;
    pref ni = new_info(t, dref, i, before, apply(op, prev), n);
    if (!ni)
        return R_NOSPC;
    if (atomic_compare_exchange_strong(&N->info, &old, ni)) {
        strobe__ebr_retire(t, old, INFO_CLASS);
        if (op_result(op, ni) != ni)
            settle_node(t, ps, op->key, n, ni); /* late: see finish_nodes */
        return R_OK;
    }
    strobe__arena_free(t, ni, INFO_CLASS); /* never published */
    return R_RETRY;
}

static int do_op(struct strobe_petra_thread *t, struct petra_desc *d, unsigned i)
{
    struct strobe_petra *h = t->h;
    struct petra_dop *op = &d->ops[i];
    const struct petra_struct *ps = &h->structs[op->structure];
    pref head = strobe__tx_head(h, ps, op->key);
    pref preds[PETRA_MAX_LEVEL], succs[PETRA_MAX_LEVEL];
    for (;;) {
        if (atomic_load(&d->status) != PETRA_ACTIVE)
            return R_OK; /* finished by someone else; the caller's loop stops */
        pref n = strobe__sl_find(h, head, ps->height, op->key, preds, succs, false);
        if (n) {
            int r = update_info(t, ps, head, n, d, i);
            if (r == R_RETRY)
                continue;
            return r;
        }
        if (op->type != STROBE_PETRA_INSERT && op->type != STROBE_PETRA_PUT)
            return R_FAIL;
        /* Key physically absent: insert a node already owned by (d, i). */
        unsigned height = strobe__tx_random_height(t, ps);
        pref nn = strobe__arena_alloc(t, strobe__tx_node_class(height));
        struct petra_kstate absent = { 0, 0 };
        pref ni = nn ? new_info(t, petra_ref(h, d), i, absent, apply(op, absent), nn) : 0;
        if (!ni) {
            if (nn)
                strobe__arena_free(t, nn, strobe__tx_node_class(height));
            return R_NOSPC;
        }
        struct petra_node *N = petra_node(h, nn);
        N->key = op->key;
        N->height = height;
        N->pad = 0;
        atomic_store_explicit(&N->info, ni, memory_order_relaxed);
        if (strobe__sl_link(h, head, ps->height, nn, preds, succs)) {
            strobe__arena_free(t, nn, strobe__tx_node_class(height));
            strobe__arena_free(t, ni, INFO_CLASS);
            continue;
        }
        if (op_result(op, ni) != ni) {
            /* Operation i was performed before (and its node possibly
             * deleted since): this node is a duplicate; remove it. */
            strobe__tx_delete_node(t, ps, head, nn, ni);
        }
        return R_OK;
    }
}

/* ExecuteOps (Figure 5.1) from operation `from`, then commit or abort and
 * persist. */
static void execute_ops(struct strobe_petra_thread *t, struct petra_desc *d, unsigned from, int *rc)
{
    bool ok = true;
    for (unsigned i = from; i < d->nops && atomic_load(&d->status) == PETRA_ACTIVE; i++) {
        int r = do_op(t, d, i);
        if (r == R_FAIL || r == R_NOSPC) {
            if (r == R_NOSPC)
                *rc = -ENOSPC;
            ok = false;
            break;
        }
    }
    finish(t, d, ok);
}

/* Node n carries info r of a finished transaction: unlink it if its key
 * is absent (MarkDelete), else give it a resolved info with the same state,
 * so that it no longer refers to the descriptor. Nothing happens if its
 * info is no longer r. */
static void settle_node(struct strobe_petra_thread *t, const struct petra_struct *ps, uint64_t key,
                        pref n, pref r)
{
    struct strobe_petra *h = t->h;
    struct petra_node *N = petra_node(h, n);
    if (atomic_load(&N->info) != r)
        return; /* a later operation of d, or a later transaction */
    struct petra_kstate st = strobe__tx_node_state(h, r, NULL);
    if (!st.present) {
        strobe__tx_delete_node(t, ps, strobe__tx_head(h, ps, key), n, r);
        return;
    }
    pref R = new_info(t, 0, 0, st, st, n);
    if (!R) {
        /* out of space: the next checkpoint walks every node and resolves
         * this one before the descriptor is retired */
        atomic_store(&h->ckpt_force_full, 1);
        return;
    }
    pref exp = r;
    if (atomic_compare_exchange_strong(&N->info, &exp, R))
        strobe__ebr_retire(t, r, INFO_CLASS);
    else
        strobe__arena_free(t, R, INFO_CLASS);
}

/* Post-execution (Figure 5.1), once the transaction is final and
 * persisted: settle every node that still carries one of its infos. An
 * operation without a result is closed first: a helper that performs it
 * late (it passed its "still active?" check before another thread aborted
 * the transaction) then finds its info is not the result and settles its
 * node itself; if the helper was first, the result is its info and it is
 * settled here. Either way no node keeps naming the descriptor. */
static void finish_nodes(struct strobe_petra_thread *t, struct petra_desc *d)
{
    struct strobe_petra *h = t->h;
    for (unsigned i = 0; i < d->nops; i++) {
        pref r = 0;
        if (atomic_compare_exchange_strong(&d->ops[i].result, &r, RESULT_CLOSED))
            continue;
        if (r == RESULT_CLOSED)
            continue;
        const struct petra_struct *ps = &h->structs[d->ops[i].structure];
        settle_node(t, ps, d->ops[i].key, petra_info(h, r)->node, r);
    }
}

/* The final state of each key a committed transaction changed, for the
 * next checkpoint's delta (checkpoint.c). */
static void note(struct strobe_petra_thread *t, struct petra_desc *d)
{
    struct strobe_petra *h = t->h;
    struct petra_kstate st[STROBE_PETRA_MAX_OPS];
    unsigned idx[STROBE_PETRA_MAX_OPS], n = 0;
    for (unsigned i = 0; i < d->nops; i++) {
        const struct petra_dop *o = &d->ops[i];
        if (o->type == STROBE_PETRA_FIND)
            continue;
        unsigned j = i + 1;
        while (j < d->nops && !(d->ops[j].type != STROBE_PETRA_FIND && d->ops[j].key == o->key &&
                                d->ops[j].structure == o->structure))
            j++;
        if (j < d->nops)
            continue; /* a later operation sets the final state */
        st[n] = info_cur(petra_info(h, atomic_load(&o->result)));
        idx[n++] = i;
    }
    strobe__ckpt_note(t, d, idx, st, n);
}

int strobe__tx_execute(struct strobe_petra_thread *t, struct strobe_petra_op *ops, unsigned n)
{
    struct strobe_petra *h = t->h;
    if (n < 1 || n > STROBE_PETRA_MAX_OPS)
        return -EINVAL;
    for (unsigned i = 0; i < n; i++) {
        if (ops[i].type < STROBE_PETRA_FIND || ops[i].type > STROBE_PETRA_PUT ||
            ops[i].structure >= STROBE_PETRA_MAX_STRUCTURES || !h->structs[ops[i].structure].used ||
            ops[i].key < STROBE_PETRA_KEY_MIN || ops[i].key > STROBE_PETRA_KEY_MAX)
            return -EINVAL;
    }
    struct petra_desc *d;
    int rc = strobe__log_alloc(t, petra_desc_size(n), &d);
    if (rc)
        return rc;
    atomic_store_explicit(&d->txid, 0, memory_order_relaxed);
    d->magic = PETRA_DESC_MAGIC;
    d->nops = (uint8_t)n;
    atomic_store_explicit(&d->status, PETRA_ACTIVE, memory_order_relaxed);
    atomic_store_explicit(&d->pstatus, PETRA_MAYBE, memory_order_relaxed);
    d->slot = (uint8_t)t->slot;
    atomic_store_explicit(&d->check, 0, memory_order_relaxed);
    d->prev = t->last_committed;
    for (unsigned i = 0; i < n; i++) {
        struct petra_dop *o = &d->ops[i];
        o->type = ops[i].type;
        o->structure = ops[i].structure;
        o->pad16 = 0;
        o->pad32 = 0;
        o->key = ops[i].key;
        o->value = ops[i].type == STROBE_PETRA_DELETE || ops[i].type == STROBE_PETRA_FIND ? 0 : ops[i].value;
        atomic_store_explicit(&o->result, 0, memory_order_relaxed);
    }
    strobe__ebr_enter(t);
    t->help_depth = 0;
    t->help[t->help_depth++] = d;
    int err = 0;
    execute_ops(t, d, 0, &err);
    t->help_depth = 0;
    bool committed = atomic_load(&d->status) == PETRA_COMMITTED;
    if (committed) {
        t->last_committed = atomic_load_explicit(&d->txid, memory_order_relaxed);
        for (unsigned i = 0; i < n; i++)
            if (ops[i].type == STROBE_PETRA_FIND)
                ops[i].value = petra_info(h, atomic_load(&d->ops[i].result))->cur_value;
        /* inside the critical section: a checkpoint's grace period then
         * guarantees it sees the note of every descriptor it retires */
        note(t, d);
    }
    finish_nodes(t, d);
    strobe__ebr_exit(t);
    if (committed) {
        atomic_store_explicit(&t->committed, atomic_load_explicit(&t->committed, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        atomic_store_explicit(&t->ops_committed,
                              atomic_load_explicit(&t->ops_committed, memory_order_relaxed) + n,
                              memory_order_relaxed);
        return 0;
    }
    atomic_store_explicit(&t->aborted, atomic_load_explicit(&t->aborted, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return err ? err : STROBE_ERR_ABORTED;
}

int strobe__tx_get(struct strobe_petra_thread *t, int structure, uint64_t key, uint64_t *value)
{
    struct strobe_petra *h = t->h;
    if (structure < 0 || structure >= STROBE_PETRA_MAX_STRUCTURES || !h->structs[structure].used ||
        key < STROBE_PETRA_KEY_MIN || key > STROBE_PETRA_KEY_MAX)
        return -EINVAL;
    const struct petra_struct *ps = &h->structs[structure];
    pref preds[PETRA_MAX_LEVEL], succs[PETRA_MAX_LEVEL];
    int rc = -ENOENT;
    strobe__ebr_enter(t);
    pref n = strobe__sl_find(h, strobe__tx_head(h, ps, key), ps->height, key, preds, succs, false);
    if (n) {
        pref info = atomic_load(&petra_node(h, n)->info);
        if (!petra_marked(info)) {
            struct petra_kstate s = strobe__tx_node_state(h, info, NULL);
            if (s.present) {
                if (value)
                    *value = s.value;
                rc = 0;
            }
        }
    }
    strobe__ebr_exit(t);
    return rc;
}

int strobe__tx_visit(struct strobe_petra *h, const struct petra_struct *ps,
                     int (*fn)(void *arg, struct petra_node *n, pref info, struct petra_kstate st),
                     void *arg)
{
    int rc = 0;
    for (uint32_t b = 0; b < ps->buckets && !rc; b++) {
        pref c = petra_unmark(atomic_load(petra_next(h, ps->heads + (uint64_t)b * ps->head_size, 0)));
        while (c && !rc) {
            struct petra_node *N = petra_node(h, c);
            pref s = atomic_load(&N->next[0]);
            pref info = atomic_load(&N->info);
            if (!petra_marked(s) && !petra_marked(info))
                rc = fn(arg, N, info, strobe__tx_node_state(h, info, NULL));
            c = petra_unmark(s);
        }
    }
    return rc;
}

struct foreach_arg {
    int (*fn)(void *arg, uint64_t key, uint64_t value);
    void *arg;
};

static int foreach_visit(void *arg, struct petra_node *n, pref info, struct petra_kstate st)
{
    (void)info;
    const struct foreach_arg *a = arg;
    return st.present ? a->fn(a->arg, n->key, st.value) : 0;
}

int strobe__tx_foreach(struct strobe_petra_thread *t, int structure,
                       int (*fn)(void *arg, uint64_t key, uint64_t value), void *arg)
{
    struct strobe_petra *h = t->h;
    if (structure < 0 || structure >= STROBE_PETRA_MAX_STRUCTURES || !h->structs[structure].used)
        return -EINVAL;
    struct foreach_arg a = { fn, arg };
    strobe__ebr_enter(t);
    int rc = strobe__tx_visit(h, &h->structs[structure], foreach_visit, &a);
    strobe__ebr_exit(t);
    return rc;
}
