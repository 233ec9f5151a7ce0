/* SPDX-License-Identifier: MIT */
/*
 * petra-crash internals (docs/petra-crash.md): the expected-state model,
 * the acknowledgement log the child's threads share with the parent, and
 * the checks run on a recovered heap.
 *
 * The model is exact. Every key of every structure has one owner: a worker
 * thread (its private partition: only that thread ever touches the key, so
 * the key's history is that thread's sequence of transactions) or nobody
 * (the shared partition: transactions there only move, update or read keys,
 * so the number of present shared keys is constant). Every transaction also
 * PUTs its sequence number to the thread's stamp key, which tells after a
 * crash whether the one transaction in flight was applied or not.
 */
#ifndef STROBE_PETRA_CRASH_MODEL_H
#define STROBE_PETRA_CRASH_MODEL_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "common/rng.h"
#include "strobe/petra.h"

#define PC_NSTRUCT 3
#define PC_LIST 0
#define PC_SKIP 1
#define PC_MAP 2
#define PC_MAX_THREADS 16
#define PC_LIST_KEYS 256u
#define PC_SKIP_KEYS 4096u
#define PC_MAP_KEYS 4096u
/* Map keys PC_MAP_KEYS + 1 + t are thread t's stamp keys. */
#define PC_KEY_SLOTS (PC_MAP_KEYS + 2 + PC_MAX_THREADS)
#define PC_SHARED 0xffu       /* owner of a shared key */
#define PC_INIT_WRITER 0xfeu  /* "thread" that wrote the initial shared keys */
#define PC_MAX_MSGS 32        /* child-detected problems kept verbatim */
#define PC_MSG_LEN 512

/* Record states in the acknowledgement log. */
enum {
    PC_REC_INFLIGHT = 1, /* written before strobe_petra_execute */
    PC_REC_COMMITTED,    /* execute returned 0 */
    PC_REC_ABORTED,      /* execute returned STROBE_ERR_ABORTED */
    PC_REC_ERROR,        /* execute returned anything else (a violation) */
};

/* What the thread knows of a transaction's outcome before running it. */
enum {
    PC_EXPECT_COMMIT = 1, /* private partition only, every precondition holds */
    PC_EXPECT_ABORT,      /* a private precondition is made to fail */
    PC_EXPECT_EITHER,     /* shared keys involved: depends on other threads */
};

/* One transaction as the thread submitted it. ops[] are exactly what was
 * passed to strobe_petra_execute (with FIND results after it returned). */
struct pc_rec {
    _Atomic uint32_t state;
    uint8_t nops, expect;
    int32_t result;
    uint64_t seq;
    struct strobe_petra_op ops[STROBE_PETRA_MAX_OPS];
};

/* Per worker thread: records [0, count) are published. A thread fills a
 * record, then publishes it with a release store of count (pairs with the
 * parent's acquire load after the child is dead); the state changes are
 * release stores too, read with acquire by the parent. */
struct pc_thread_log {
    _Atomic uint64_t count;
    uint64_t first_seq; /* seq of record 0 (set by the parent before fork) */
    char pad[48];
};

/* Shared with the child (MAP_SHARED|MAP_ANONYMOUS, created before fork). */
struct pc_shared {
    _Atomic uint32_t ready;   /* child: all threads attached and running */
    _Atomic uint32_t nmsg;    /* child-detected problems (may exceed PC_MAX_MSGS) */
    _Atomic uint32_t msg_done[PC_MAX_MSGS];
    char msg[PC_MAX_MSGS][PC_MSG_LEN];
    struct pc_thread_log tlog[PC_MAX_THREADS];
};

/* Expected durable state of the heap. key index = key (0 unused). */
struct pc_model {
    unsigned threads;
    uint32_t nkeys[PC_NSTRUCT]; /* highest ordinary key per structure */
    uint8_t present[PC_NSTRUCT][PC_KEY_SLOTS];
    uint64_t value[PC_NSTRUCT][PC_KEY_SLOTS];
    uint64_t next_seq[PC_MAX_THREADS]; /* next sequence number per thread (>= 1) */
    uint64_t last_seq[PC_MAX_THREADS]; /* last applied transaction (0: none yet) */
    uint64_t shared_count;             /* present shared keys, all structures */
};

/* Everything one run needs; no other mutable state exists. */
struct pc_ctx {
    /* options */
    int powerfail, fresh, verbose;
    int distinct_keys; /* no key twice in one transaction */
    unsigned threads, max_delay_ms;
    uint64_t crashes, seed;
    const char *dir;
    const char *inject; /* self-test: a fault the checks must report */
    char path[4096];
    /* heap */
    int sid[PC_NSTRUCT]; /* structure ids */
    /* state */
    struct pc_model *model;
    struct pc_shared *sh;
    struct pc_rec *recs; /* PC_MAX_THREADS * log_cap records, shared */
    uint64_t log_cap;
    uint64_t round;
    uint64_t violations;
    uint64_t round_violations;
    uint64_t rng;
    uint64_t ready_ns;    /* last fork-to-ready time of the child */
    uint64_t early_kills; /* rounds killed before the workload started */
    uint64_t inflight_applied, inflight_dropped; /* in-flight txs at the kill */
    uint64_t txs_committed, txs_aborted;         /* acknowledged, all rounds */
    void *scratch;                               /* the check's, kept across rounds */
    struct pc_found *found;                      /* the recovered state, ditto */
};

extern const char *const strobe__pc_struct_names[PC_NSTRUCT];

/* Owner of key k of structure s: a thread index or PC_SHARED. */
static inline unsigned pc_owner(const struct pc_model *m, int s, uint64_t k)
{
    if (s == PC_MAP && k > PC_MAP_KEYS)
        return (unsigned)(k - PC_MAP_KEYS - 1);
    unsigned o = (unsigned)(k % (m->threads + 1));
    return o == m->threads ? PC_SHARED : o;
}

static inline uint64_t pc_stamp_key(unsigned t)
{
    return PC_MAP_KEYS + 1 + t;
}

static inline struct pc_rec *pc_rec_at(struct pc_ctx *c, unsigned t, uint64_t i)
{
    return &c->recs[(uint64_t)t * c->log_cap + i];
}

/* Value written by op number `op` (0..15) of thread t's transaction seq to
 * key k of structure s: writer (8 bits), sequence number (32), op (4) and
 * a 20-bit check of all five, so every write of a run has its own value
 * and a stale, misplaced or torn value is recognised. */
uint64_t strobe__pc_value(unsigned t, uint64_t seq, int s, uint64_t k, unsigned op);
/* Decode v as written to (s, k): 0 and the writer/seq, or -1 if malformed. */
int strobe__pc_value_decode(uint64_t v, int s, uint64_t k, unsigned *t, uint64_t *seq);

/* Zeroed memory the parent keeps across rounds and children do not
 * inherit (MADV_DONTFORK); NULL if out of memory. */
void *strobe__pc_alloc_nofork(size_t bytes);

/* Fresh model: every private key absent, every other shared key present. */
void strobe__pc_model_init(struct pc_model *m, unsigned threads);

/* Report a violation of the current round: one line on stderr (the first
 * 20 per round unless --verbose), counted either way. */
void strobe__pc_violation(struct pc_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Child side: record a problem a worker saw (thread-safe). */
void strobe__pc_child_problem(struct pc_shared *sh, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The recovered heap's state as read through foreach/get. */
struct pc_found {
    uint8_t present[PC_NSTRUCT][PC_KEY_SLOTS];
    uint64_t value[PC_NSTRUCT][PC_KEY_SLOTS];
};

/* Check `found` against the model and this round's log (the child is
 * dead), report every violation, then make `found` the model and advance
 * the sequence numbers. */
void strobe__pc_check_round(struct pc_ctx *c, const struct pc_found *f);
/* Bytes of c->scratch (allocated by the first check). */
size_t strobe__pc_scratch_size(void);

/* Child: run worker thread t's transactions until killed. */
void *strobe__pc_worker(void *arg);
struct pc_worker_arg {
    struct pc_ctx *c;
    strobe_petra_thread *th;
    unsigned t;
    _Atomic unsigned *running;
};

#endif
