/* SPDX-License-Identifier: MIT */
/*
 * petra-crash: the expected-state model and the durable-linearizability
 * check of one recovered heap against it (docs/petra-crash.md).
 *
 * What a correct PETRA heap must show after a crash (seed 002, 5.1.5 and
 * 5.2: durable linearizability for transactions):
 *  - private keys: exactly the model after every transaction the owning
 *    thread saw committed, plus its one in-flight transaction either
 *    applied as a whole or not at all; aborted ones leave no trace;
 *  - shared keys: the count of present keys is the count at the start of
 *    the round (every transaction conserves it); every present value is
 *    well formed, written by a transaction that is acknowledged committed
 *    (or is the in-flight one, applied) and contains exactly that write,
 *    and not overwritten later by the same thread; a key that was present
 *    or written this round is absent only if a committed transaction
 *    deleted it; a key untouched by committed transactions keeps its value.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "petra-crash/model.h"

const char *const strobe__pc_struct_names[PC_NSTRUCT] = { "list", "skiplist", "map" };

static const char *const op_names[] = { "?", "FIND", "INSERT", "DELETE", "UPDATE", "PUT" };

static uint32_t check20(unsigned t, uint64_t seq, int s, uint64_t k, unsigned op)
{
    uint64_t x = (uint64_t)t * 0x9E3779B97F4A7C15ULL ^ seq * 0xC2B2AE3D27D4EB4FULL ^
                 (uint64_t)(s + 1) * 0x165667B19E3779F9ULL ^ k * 0xD6E8FEB86659FD93ULL ^
                 (uint64_t)(op + 1) * 0xFF51AFD7ED558CCDULL;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 29;
    return (uint32_t)(x & 0xfffff);
}

uint64_t strobe__pc_value(unsigned t, uint64_t seq, int s, uint64_t k, unsigned op)
{
    return (uint64_t)(t & 0xff) << 56 | (seq & 0xffffffffu) << 24 | (uint64_t)(op & 0xf) << 20 |
           check20(t, seq, s, k, op & 0xf);
}

int strobe__pc_value_decode(uint64_t v, int s, uint64_t k, unsigned *t, uint64_t *seq)
{
    *t = (unsigned)(v >> 56);
    *seq = (v >> 24) & 0xffffffffu;
    return check20(*t, *seq, s, k, (unsigned)(v >> 20) & 0xf) == (v & 0xfffff) ? 0 : -1;
}

void *strobe__pc_alloc_nofork(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    madvise(p, bytes, MADV_DONTFORK);
    return p;
}

void strobe__pc_model_init(struct pc_model *m, unsigned threads)
{
    memset(m, 0, sizeof *m);
    m->threads = threads;
    m->nkeys[PC_LIST] = PC_LIST_KEYS;
    m->nkeys[PC_SKIP] = PC_SKIP_KEYS;
    m->nkeys[PC_MAP] = PC_MAP_KEYS;
    for (unsigned t = 0; t < threads; t++)
        m->next_seq[t] = 1;
    for (int s = 0; s < PC_NSTRUCT; s++) {
        unsigned j = 0;
        for (uint64_t k = 1; k <= m->nkeys[s]; k++) {
            if (pc_owner(m, s, k) != PC_SHARED || j++ % 2)
                continue;
            m->present[s][k] = 1;
            m->value[s][k] = strobe__pc_value(PC_INIT_WRITER, 0, s, k, 0);
            m->shared_count++;
        }
    }
}

void strobe__pc_violation(struct pc_ctx *c, const char *fmt, ...)
{
    c->violations++;
    if (++c->round_violations > 20 && !c->verbose) {
        if (c->round_violations == 21)
            fprintf(stderr, "petra-crash: round %" PRIu64 ": more violations (--verbose shows all)\n",
                    c->round);
        return;
    }
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "petra-crash: round %" PRIu64 " (seed %" PRIu64 "): %s\n", c->round, c->seed, line);
}

void strobe__pc_child_problem(struct pc_shared *sh, const char *fmt, ...)
{
    uint32_t i = atomic_fetch_add_explicit(&sh->nmsg, 1, memory_order_relaxed);
    if (i >= PC_MAX_MSGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sh->msg[i], PC_MSG_LEN, fmt, ap);
    va_end(ap);
    /* pairs with the parent's acquire load: the text is complete */
    atomic_store_explicit(&sh->msg_done[i], 1, memory_order_release);
}

/* "present 0x... (thread 1 tx 17, committed)" or "absent" */
static void describe(struct pc_ctx *c, int s, uint64_t k, int present, uint64_t v, char *out, size_t len)
{
    if (!present) {
        snprintf(out, len, "absent");
        return;
    }
    unsigned t;
    uint64_t seq;
    if (strobe__pc_value_decode(v, s, k, &t, &seq) < 0) {
        snprintf(out, len, "present 0x%016" PRIx64 " (malformed value)", v);
        return;
    }
    if (t == PC_INIT_WRITER) {
        snprintf(out, len, "present 0x%016" PRIx64 " (initial value)", v);
        return;
    }
    const char *st = "earlier round";
    if (t < c->threads && seq >= c->sh->tlog[t].first_seq) {
        uint64_t n = atomic_load_explicit(&c->sh->tlog[t].count, memory_order_acquire);
        uint64_t i = seq - c->sh->tlog[t].first_seq;
        st = "never submitted";
        if (i < n) {
            static const char *const names[] = { "?", "in flight", "committed", "aborted", "failed" };
            uint32_t x = atomic_load_explicit(&pc_rec_at(c, t, i)->state, memory_order_acquire);
            st = names[x <= PC_REC_ERROR ? x : 0];
        }
    }
    snprintf(out, len, "present 0x%016" PRIx64 " (thread %u tx %" PRIu64 ", %s)", v, t, seq, st);
}

static void report_key(struct pc_ctx *c, const char *what, int s, uint64_t k, int ep, uint64_t ev,
                       int fp, uint64_t fv)
{
    char e[160], f[160];
    describe(c, s, k, ep, ev, e, sizeof e);
    describe(c, s, k, fp, fv, f, sizeof f);
    strobe__pc_violation(c, "%s %s key %" PRIu64 ": expected %s, found %s", what,
                         strobe__pc_struct_names[s], k, e, f);
}

static int is_write(uint8_t type)
{
    return type == STROBE_PETRA_INSERT || type == STROBE_PETRA_DELETE || type == STROBE_PETRA_UPDATE ||
           type == STROBE_PETRA_PUT;
}

/* structure index of an op (ops carry heap ids) */
static int op_struct(const struct pc_ctx *c, const struct strobe_petra_op *op)
{
    for (int s = 0; s < PC_NSTRUCT; s++)
        if (c->sid[s] == op->structure)
            return s;
    return -1;
}

/* Per-round scratch for the shared partition. */
struct shared_scratch {
    uint8_t touched[PC_NSTRUCT][PC_KEY_SLOTS]; /* written by an applied tx */
    uint8_t deleted[PC_NSTRUCT][PC_KEY_SLOTS]; /* deleted by an applied tx */
    uint8_t reported[PC_NSTRUCT][PC_KEY_SLOTS];
    /* last applied write per thread; 0: none */
    uint64_t last_write[PC_MAX_THREADS][PC_NSTRUCT][PC_KEY_SLOTS];
    uint8_t last_is_delete[PC_MAX_THREADS][PC_NSTRUCT][PC_KEY_SLOTS];
};

size_t strobe__pc_scratch_size(void)
{
    return sizeof(struct shared_scratch);
}

static void apply_private(struct pc_ctx *c, const struct pc_rec *r, unsigned t)
{
    struct pc_model *m = c->model;
    for (unsigned j = 0; j < r->nops; j++) {
        const struct strobe_petra_op *op = &r->ops[j];
        int s = op_struct(c, op);
        if (s < 0 || !is_write(op->type) || pc_owner(m, s, op->key) != t)
            continue;
        if (op->type == STROBE_PETRA_DELETE) {
            m->present[s][op->key] = 0;
            m->value[s][op->key] = 0;
        } else {
            m->present[s][op->key] = 1;
            m->value[s][op->key] = op->value;
        }
    }
}

static void note_shared(struct pc_ctx *c, struct shared_scratch *x, const struct pc_rec *r, unsigned t)
{
    for (unsigned j = 0; j < r->nops; j++) {
        const struct strobe_petra_op *op = &r->ops[j];
        int s = op_struct(c, op);
        if (s < 0 || !is_write(op->type) || pc_owner(c->model, s, op->key) != PC_SHARED)
            continue;
        x->touched[s][op->key] = 1;
        if (op->type == STROBE_PETRA_DELETE)
            x->deleted[s][op->key] = 1;
        x->last_write[t][s][op->key] = r->seq;
        x->last_is_delete[t][s][op->key] = op->type == STROBE_PETRA_DELETE;
    }
}

/* 1 if a later op of r writes the key op j writes: only a key's last write
 * in a transaction decides its state after it */
static int rewritten(const struct pc_rec *r, unsigned j)
{
    for (unsigned i = j + 1; i < r->nops; i++)
        if (r->ops[i].structure == r->ops[j].structure && r->ops[i].key == r->ops[j].key &&
            is_write(r->ops[i].type))
            return 1;
    return 0;
}

/* The in-flight transaction of thread t: applied as a whole, or not at
 * all. Returns 1 if applied (the model is advanced), 0 if not. */
static int settle_inflight(struct pc_ctx *c, struct shared_scratch *x, const struct pc_found *f,
                           const struct pc_rec *r, unsigned t)
{
    struct pc_model *m = c->model;
    unsigned writes = 0, as_applied = 0, as_not = 0;
    for (unsigned j = 0; j < r->nops; j++) {
        const struct strobe_petra_op *op = &r->ops[j];
        int s = op_struct(c, op);
        if (s < 0 || !is_write(op->type) || pc_owner(m, s, op->key) != t || rewritten(r, j))
            continue;
        uint64_t k = op->key;
        int post_p = op->type != STROBE_PETRA_DELETE;
        uint64_t post_v = post_p ? op->value : 0;
        writes++;
        as_applied += f->present[s][k] == post_p && (!post_p || f->value[s][k] == post_v);
        as_not += f->present[s][k] == m->present[s][k] && (!m->present[s][k] || f->value[s][k] == m->value[s][k]);
    }
    int applied;
    if (as_not == writes) {
        applied = 0;
    } else if (as_applied == writes && r->expect != PC_EXPECT_ABORT) {
        applied = 1;
    } else {
        if (r->expect == PC_EXPECT_ABORT && as_applied == writes)
            strobe__pc_violation(c, "thread %u tx %" PRIu64 " (in flight, one precondition fails) "
                                    "is applied",
                                 t, r->seq);
        else
            strobe__pc_violation(c, "thread %u tx %" PRIu64 " (in flight) partly applied: "
                                    "%u of %u private keys written as it leaves them, %u as before",
                                 t, r->seq, as_applied, writes, as_not);
        for (unsigned j = 0; j < r->nops; j++) {
            const struct strobe_petra_op *op = &r->ops[j];
            int s = op_struct(c, op);
            if (s < 0 || pc_owner(m, s, op->key) != t)
                continue;
            char fnd[160];
            describe(c, s, op->key, f->present[s][op->key], f->value[s][op->key], fnd, sizeof fnd);
            strobe__pc_violation(c, "  op %u: %s %s key %" PRIu64 " value 0x%016" PRIx64 "; found %s", j,
                                 op_names[op->type <= 5 ? op->type : 0], strobe__pc_struct_names[s],
                                 op->key, op->value, fnd);
            x->reported[s][op->key] = 1;
        }
        /* count its shared writes as applied: more lenient, so the
         * shared checks report only what this line does not explain */
        applied = 1;
    }
    c->inflight_applied += applied;
    c->inflight_dropped += !applied;
    if (applied) {
        apply_private(c, r, t);
        note_shared(c, x, r, t);
        m->last_seq[t] = r->seq;
    }
    return applied;
}

static void check_shared_key(struct pc_ctx *c, struct shared_scratch *x, const struct pc_found *f,
                             const int *applied_inflight, int s, uint64_t k)
{
    struct pc_model *m = c->model;
    if (!f->present[s][k]) {
        /* the last write in the serial order is a DELETE, so it is the
         * last write to k of its own thread */
        int last_delete = 0;
        for (unsigned t = 0; t < c->threads; t++)
            last_delete |= x->last_is_delete[t][s][k];
        if ((m->present[s][k] || x->touched[s][k]) && !last_delete) {
            char e[160];
            describe(c, s, k, m->present[s][k], m->value[s][k], e, sizeof e);
            strobe__pc_violation(c, "shared %s key %" PRIu64 " is absent, but no committed "
                                    "transaction deleted it last (at round start: %s%s)",
                                 strobe__pc_struct_names[s], k, e,
                                 x->deleted[s][k] ? "; deleted, then written again this round"
                                 : x->touched[s][k] ? "; written this round" : "");
        }
        return;
    }
    uint64_t v = f->value[s][k];
    unsigned t;
    uint64_t seq;
    char fnd[160];
    /* described only for a violation: a snprintf per key costs milliseconds */
#define FND() (describe(c, s, k, 1, v, fnd, sizeof fnd), fnd)
    if (strobe__pc_value_decode(v, s, k, &t, &seq) < 0) {
        strobe__pc_violation(c, "shared %s key %" PRIu64 ": malformed value 0x%016" PRIx64,
                             strobe__pc_struct_names[s], k, v);
        return;
    }
    if (t == PC_INIT_WRITER || (t < c->threads && seq < c->sh->tlog[t].first_seq)) {
        /* written before this round: must be the value at round start, and
         * no committed write this round may have replaced it */
        if (!m->present[s][k] || m->value[s][k] != v)
            strobe__pc_violation(c, "shared %s key %" PRIu64 ": %s, but at round start it was %s",
                                 strobe__pc_struct_names[s], k, FND(),
                                 m->present[s][k] ? "another value" : "absent");
        else if (x->touched[s][k])
            strobe__pc_violation(c, "shared %s key %" PRIu64 ": still %s although a committed "
                                    "transaction wrote or deleted it this round",
                                 strobe__pc_struct_names[s], k, FND());
        return;
    }
    if (t >= c->threads) {
        strobe__pc_violation(c, "shared %s key %" PRIu64 ": %s: no such thread", strobe__pc_struct_names[s],
                             k, FND());
        return;
    }
    uint64_t n = atomic_load_explicit(&c->sh->tlog[t].count, memory_order_acquire);
    uint64_t i = seq - c->sh->tlog[t].first_seq;
    if (i >= n) {
        strobe__pc_violation(c, "shared %s key %" PRIu64 ": %s", strobe__pc_struct_names[s], k, FND());
        return;
    }
    const struct pc_rec *r = pc_rec_at(c, t, i);
    uint32_t st = atomic_load_explicit(&r->state, memory_order_acquire);
    if (!(st == PC_REC_COMMITTED || (st == PC_REC_INFLIGHT && applied_inflight[t]))) {
        strobe__pc_violation(c, "shared %s key %" PRIu64 ": %s%s", strobe__pc_struct_names[s], k, FND(),
                             st == PC_REC_INFLIGHT ? ", which recovery treated as not applied" : "");
        return;
    }
    int wrote = 0;
    for (unsigned j = 0; j < r->nops; j++)
        wrote |= r->ops[j].structure == c->sid[s] && r->ops[j].key == k && r->ops[j].value == v &&
                 is_write(r->ops[j].type) && r->ops[j].type != STROBE_PETRA_DELETE;
    if (!wrote) {
        strobe__pc_violation(c, "shared %s key %" PRIu64 ": %s, but that transaction did not write it",
                             strobe__pc_struct_names[s], k, FND());
        return;
    }
    if (x->last_write[t][s][k] != seq)
        strobe__pc_violation(c, "shared %s key %" PRIu64 ": %s, but the same thread's later committed "
                                "tx %" PRIu64 " wrote or deleted it",
                             strobe__pc_struct_names[s], k, FND(), x->last_write[t][s][k]);
#undef FND
}

void strobe__pc_check_round(struct pc_ctx *c, const struct pc_found *f)
{
    struct pc_model *m = c->model;
    /* kept across rounds and not shared with the children: otherwise every
     * page takes a fault (copy on write after fork) each round */
    if (!c->scratch && !(c->scratch = strobe__pc_alloc_nofork(sizeof(struct shared_scratch)))) {
        strobe__pc_violation(c, "out of memory for the check");
        return;
    }
    struct shared_scratch *x = c->scratch;
    memset(x, 0, sizeof *x);
    int applied_inflight[PC_MAX_THREADS] = { 0 };
    /* 1. private partitions: replay each thread's acknowledged history */
    for (unsigned t = 0; t < c->threads; t++) {
        uint64_t n = atomic_load_explicit(&c->sh->tlog[t].count, memory_order_acquire);
        if (n > c->log_cap)
            n = c->log_cap;
        for (uint64_t i = 0; i < n; i++) {
            const struct pc_rec *r = pc_rec_at(c, t, i);
            uint32_t st = atomic_load_explicit(&r->state, memory_order_acquire);
            c->txs_aborted += st == PC_REC_ABORTED;
            if (st == PC_REC_COMMITTED) {
                c->txs_committed++;
                apply_private(c, r, t);
                note_shared(c, x, r, t);
                m->last_seq[t] = r->seq;
            } else if (st == PC_REC_INFLIGHT) {
                if (i + 1 != n)
                    strobe__pc_violation(c, "thread %u: log record %" PRIu64 " of %" PRIu64
                                            " still in flight (harness bug)",
                                         t, i, n);
                else
                    applied_inflight[t] = settle_inflight(c, x, f, r, t);
            }
        }
        m->next_seq[t] = c->sh->tlog[t].first_seq + n;
    }
    /* 2. every key */
    uint64_t shared = 0;
    for (int s = 0; s < PC_NSTRUCT; s++) {
        uint64_t hi = s == PC_MAP ? PC_MAP_KEYS + c->threads : m->nkeys[s];
        for (uint64_t k = 1; k <= hi; k++) {
            unsigned o = pc_owner(m, s, k);
            if (o == PC_SHARED) {
                shared += f->present[s][k];
                check_shared_key(c, x, f, applied_inflight, s, k);
            } else if (!x->reported[s][k] &&
                       (f->present[s][k] != m->present[s][k] ||
                        (f->present[s][k] && f->value[s][k] != m->value[s][k]))) {
                char what[64];
                snprintf(what, sizeof what, "thread %u's", o);
                report_key(c, what, s, k, m->present[s][k], m->value[s][k], f->present[s][k],
                           f->value[s][k]);
            }
        }
    }
    if (shared != m->shared_count)
        strobe__pc_violation(c, "shared partition holds %" PRIu64 " keys, expected %" PRIu64
                                " (every transaction conserves the count)",
                             shared, m->shared_count);
    /* 3. the recovered state is the next round's expectation */
    memcpy(m->present, f->present, sizeof m->present);
    memcpy(m->value, f->value, sizeof m->value);
    m->shared_count = shared;
}
