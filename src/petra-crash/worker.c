/* SPDX-License-Identifier: MIT */
/*
 * petra-crash: one worker thread of the child process. It runs random
 * transactions of 1..16 operations over the three structures until the
 * parent kills the process, and logs each one in the acknowledgement log
 * before and after strobe_petra_execute (docs/petra-crash.md).
 *
 * Private keys (owned by this thread) are modelled exactly, so the thread
 * knows whether each transaction must commit or must abort, and what each
 * FIND must return. Shared keys are touched only by "moves" (DELETE a +
 * INSERT b), UPDATEs and FINDs, which conserve the number of present
 * shared keys; whether those commit depends on the other threads.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "petra-crash/model.h"

/* A transaction being drawn, with the private keys it touched and their
 * state as its later operations see it (a transaction sees its own
 * earlier operations: docs/petra.md). */
struct tx_build {
    struct strobe_petra_op ops[STROBE_PETRA_MAX_OPS];
    unsigned n;
    int has_shared, must_abort;
    unsigned nview;
    struct {
        int s;
        uint64_t k;
        uint8_t present;
        uint64_t value;
    } view[STROBE_PETRA_MAX_OPS];
};

/* state of private key (s, k) at this point of the transaction */
static void view_get(const struct tx_build *b, const struct pc_model *m, int s, uint64_t k, int *present,
                     uint64_t *value)
{
    for (unsigned i = 0; i < b->nview; i++)
        if (b->view[i].s == s && b->view[i].k == k) {
            *present = b->view[i].present;
            *value = b->view[i].value;
            return;
        }
    *present = m->present[s][k];
    *value = m->value[s][k];
}

static void view_set(struct tx_build *b, int s, uint64_t k, int present, uint64_t value)
{
    unsigned i = 0;
    while (i < b->nview && !(b->view[i].s == s && b->view[i].k == k))
        i++;
    if (i == b->nview)
        b->nview++;
    b->view[i].s = s;
    b->view[i].k = k;
    b->view[i].present = (uint8_t)present;
    b->view[i].value = value;
}

static int used(const struct tx_build *b, int sid, uint64_t k)
{
    for (unsigned i = 0; i < b->n; i++)
        if (b->ops[i].structure == sid && b->ops[i].key == k)
            return 1;
    return 0;
}

static void push(struct tx_build *b, uint8_t type, int sid, uint64_t k, uint64_t v)
{
    b->ops[b->n].type = type;
    b->ops[b->n].structure = (uint8_t)sid;
    b->ops[b->n].key = k;
    b->ops[b->n].value = v;
    b->n++;
}

/* random key of structure s owned by `owner` (a thread or PC_SHARED) */
static uint64_t pick_key(const struct pc_model *m, int s, unsigned owner, uint64_t *rng)
{
    unsigned stride = m->threads + 1, slot = owner == PC_SHARED ? m->threads : owner;
    for (;;) {
        uint64_t k = (strobe__xorshift64s(rng) % (m->nkeys[s] / stride + 1)) * stride + slot;
        if (k >= 1 && k <= m->nkeys[s])
            return k;
    }
}

/* A shared key of a random structure whose current presence (as far as
 * strobe_petra_get tells: another thread may change it before we commit,
 * which is the point) is `want`. Returns 0 and the key, or -1. */
static int pick_shared(struct pc_ctx *c, strobe_petra_thread *th, const struct tx_build *b, int want,
                       uint64_t *rng, int *s_out, uint64_t *k_out)
{
    for (int tries = 0; tries < 8; tries++) {
        int s = (int)(strobe__xorshift64s(rng) % PC_NSTRUCT);
        uint64_t k = pick_key(c->model, s, PC_SHARED, rng), v;
        if (used(b, c->sid[s], k))
            continue;
        int present = strobe_petra_get(th, c->sid[s], k, &v) == 0;
        if (present == want || tries == 7) {
            *s_out = s;
            *k_out = k;
            return 0;
        }
    }
    return -1;
}

static void build(struct pc_ctx *c, strobe_petra_thread *th, unsigned t, uint64_t seq, uint64_t *rng,
                  struct tx_build *b)
{
    struct pc_model *m = c->model;
    unsigned total = 1 + (unsigned)(strobe__xorshift64s(rng) % STROBE_PETRA_MAX_OPS);
    int shared = strobe__xorshift64s(rng) % 2 == 0;
    int inject = strobe__xorshift64s(rng) % 8 == 0;
    memset(b, 0, sizeof *b);
    while (b->n + 1 < total) {
        unsigned left = total - 1 - b->n;
        uint64_t r = strobe__xorshift64s(rng) % 8;
        int s;
        uint64_t k, k2;
        if (shared && left >= 2 && r < 3) { /* move a -> b */
            int s2;
            if (pick_shared(c, th, b, 1, rng, &s, &k) < 0)
                break;
            push(b, STROBE_PETRA_DELETE, c->sid[s], k, 0);
            if (pick_shared(c, th, b, 0, rng, &s2, &k2) < 0) {
                b->n--;
                break;
            }
            push(b, STROBE_PETRA_INSERT, c->sid[s2], k2, strobe__pc_value(t, seq, s2, k2, b->n));
            b->has_shared = 1;
            continue;
        }
        if (shared && r == 3) { /* update or read a shared key */
            if (pick_shared(c, th, b, 1, rng, &s, &k) < 0)
                break;
            if (strobe__xorshift64s(rng) % 2)
                push(b, STROBE_PETRA_UPDATE, c->sid[s], k, strobe__pc_value(t, seq, s, k, b->n));
            else
                push(b, STROBE_PETRA_FIND, c->sid[s], k, 0);
            b->has_shared = 1;
            continue;
        }
        /* private key: one in four reuses a key this transaction already
         * touched (its precondition then depends on the earlier ops) */
        if (b->nview && !c->distinct_keys && strobe__xorshift64s(rng) % 4 == 0) {
            unsigned i = (unsigned)(strobe__xorshift64s(rng) % b->nview);
            s = b->view[i].s;
            k = b->view[i].k;
        } else {
            int tries = 0;
            do {
                s = (int)(strobe__xorshift64s(rng) % PC_NSTRUCT);
                k = pick_key(m, s, t, rng);
            } while (used(b, c->sid[s], k) && ++tries < 8);
            if (tries == 8)
                break;
        }
        int present;
        uint64_t cur, v = strobe__pc_value(t, seq, s, k, b->n);
        view_get(b, m, s, k, &present, &cur);
        uint64_t x = strobe__xorshift64s(rng);
        uint8_t type;
        if (inject && !b->must_abort) { /* a precondition that fails */
            b->must_abort = 1;
            type = present ? STROBE_PETRA_INSERT
                   : x % 3 == 0 ? STROBE_PETRA_DELETE
                   : x % 3 == 1 ? STROBE_PETRA_UPDATE
                                : STROBE_PETRA_FIND;
        } else if (present) {
            static const uint8_t types[] = { STROBE_PETRA_DELETE, STROBE_PETRA_DELETE, STROBE_PETRA_UPDATE,
                                             STROBE_PETRA_PUT, STROBE_PETRA_FIND };
            type = types[x % 5];
        } else {
            type = x % 4 == 0 ? STROBE_PETRA_PUT : STROBE_PETRA_INSERT;
        }
        push(b, type, c->sid[s], k, v);
        if (type == STROBE_PETRA_FIND)
            view_set(b, s, k, present, cur);
        else
            view_set(b, s, k, type != STROBE_PETRA_DELETE, type != STROBE_PETRA_DELETE ? v : 0);
    }
    /* the stamp, inserted at a random position (the others keep their
     * order, which matters for repeated keys) */
    uint64_t sk = pc_stamp_key(t);
    uint8_t type = STROBE_PETRA_PUT;
    if (inject && !b->must_abort) {
        /* no room was left for the failing op: make the stamp fail instead
         * (a stamp is absent only before the thread's first commit, so
         * INSERT when present, UPDATE when absent) */
        b->must_abort = 1;
        type = m->present[PC_MAP][sk] ? STROBE_PETRA_INSERT : STROBE_PETRA_UPDATE;
    }
    unsigned p = (unsigned)(strobe__xorshift64s(rng) % (b->n + 1));
    memmove(&b->ops[p + 1], &b->ops[p], (b->n - p) * sizeof b->ops[0]);
    b->ops[p] = (struct strobe_petra_op){ type, (uint8_t)c->sid[PC_MAP], sk,
                                          strobe__pc_value(t, seq, PC_MAP, sk, 15) };
    b->n++;
}

static int sid_index(const struct pc_ctx *c, int sid)
{
    for (int s = 0; s < PC_NSTRUCT; s++)
        if (c->sid[s] == sid)
            return s;
    return 0;
}

/* After a commit: check FIND results and advance the model of private
 * keys, op by op (a FIND sees the transaction's earlier writes). */
static void committed(struct pc_ctx *c, unsigned t, uint64_t seq, const struct strobe_petra_op *ops,
                      unsigned n)
{
    struct pc_model *m = c->model;
    for (unsigned j = 0; j < n; j++) {
        int s = sid_index(c, ops[j].structure);
        uint64_t k = ops[j].key;
        unsigned wt;
        uint64_t wseq;
        if (pc_owner(m, s, k) != t) {
            if (ops[j].type == STROBE_PETRA_FIND && strobe__pc_value_decode(ops[j].value, s, k, &wt, &wseq) < 0)
                strobe__pc_child_problem(c->sh,
                                         "thread %u tx %" PRIu64 " committed: FIND shared %s key %" PRIu64
                                         " returned malformed value 0x%016" PRIx64,
                                         t, seq, strobe__pc_struct_names[s], k, ops[j].value);
            continue;
        }
        if (ops[j].type == STROBE_PETRA_FIND) {
            if (!m->present[s][k] || ops[j].value != m->value[s][k])
                strobe__pc_child_problem(c->sh,
                                         "thread %u tx %" PRIu64 " committed: op %u FIND %s key %" PRIu64
                                         " returned 0x%016" PRIx64 ", expected %s0x%016" PRIx64,
                                         t, seq, j, strobe__pc_struct_names[s], k, ops[j].value,
                                         m->present[s][k] ? "" : "absent ", m->value[s][k]);
            continue;
        }
        m->present[s][k] = ops[j].type != STROBE_PETRA_DELETE;
        m->value[s][k] = m->present[s][k] ? ops[j].value : 0;
    }
}

/* "INSERT list:17 DELETE map:4097 ..." */
static void format_ops(const struct pc_ctx *c, const struct strobe_petra_op *ops, unsigned n, char *out,
                       size_t len)
{
    static const char *const names[] = { "?", "FIND", "INSERT", "DELETE", "UPDATE", "PUT" };
    size_t at = 0;
    out[0] = 0;
    for (unsigned j = 0; j < n && at < len; j++)
        at += (size_t)snprintf(out + at, len - at, "%s%s %s:%" PRIu64, j ? ", " : "",
                               names[ops[j].type <= 5 ? ops[j].type : 0],
                               strobe__pc_struct_names[sid_index(c, ops[j].structure)], ops[j].key);
}

void *strobe__pc_worker(void *arg)
{
    struct pc_worker_arg *a = arg;
    struct pc_ctx *c = a->c;
    unsigned t = a->t;
    struct pc_thread_log *log = &c->sh->tlog[t];
    uint64_t rng = c->seed * 0x9E3779B97F4A7C15ULL ^ (c->round + 1) * 0xBF58476D1CE4E5B9ULL ^ (t + 1);
    if (!rng)
        rng = 1;
    atomic_fetch_add_explicit(a->running, 1, memory_order_relaxed);
    for (uint64_t i = 0; i < c->log_cap; i++) {
        uint64_t seq = log->first_seq + i;
        struct tx_build b;
        build(c, a->th, t, seq, &rng, &b);
        struct pc_rec *r = pc_rec_at(c, t, i);
        memcpy(r->ops, b.ops, sizeof b.ops);
        r->nops = (uint8_t)b.n;
        r->seq = seq;
        r->expect = b.must_abort ? PC_EXPECT_ABORT : b.has_shared ? PC_EXPECT_EITHER : PC_EXPECT_COMMIT;
        atomic_store_explicit(&r->state, PC_REC_INFLIGHT, memory_order_relaxed);
        /* publish the record before running it: pairs with the parent's
         * acquire load of count once the child is dead */
        atomic_store_explicit(&log->count, i + 1, memory_order_release);
        int rc = strobe_petra_execute(a->th, b.ops, b.n);
        r->result = rc;
        if (rc == 0) {
            if (r->expect == PC_EXPECT_ABORT) {
                char ops[400];
                format_ops(c, b.ops, b.n, ops, sizeof ops);
                strobe__pc_child_problem(c->sh,
                                         "thread %u tx %" PRIu64 " committed although one of its "
                                         "preconditions fails: %s",
                                         t, seq, ops);
            }
            committed(c, t, seq, b.ops, b.n);
            /* pairs with the parent's acquire load of the state */
            atomic_store_explicit(&r->state, PC_REC_COMMITTED, memory_order_release);
        } else if (rc == STROBE_ERR_ABORTED) {
            if (r->expect == PC_EXPECT_COMMIT) {
                char ops[400];
                format_ops(c, b.ops, b.n, ops, sizeof ops);
                strobe__pc_child_problem(c->sh,
                                         "thread %u tx %" PRIu64 " aborted although all its "
                                         "preconditions hold (private keys only): %s",
                                         t, seq, ops);
            }
            atomic_store_explicit(&r->state, PC_REC_ABORTED, memory_order_release);
        } else {
            strobe__pc_child_problem(c->sh, "thread %u tx %" PRIu64 ": strobe_petra_execute: %s", t, seq,
                                     strobe_strerror(rc));
            atomic_store_explicit(&r->state, PC_REC_ERROR, memory_order_release);
            break;
        }
    }
    /* log full or an error: wait for the kill */
    for (;;)
        pause();
    return NULL;
}
