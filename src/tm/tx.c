/* SPDX-License-Identifier: MIT */
/*
 * The transaction engine: begin, the load/store work of the barriers,
 * commit, abort and cancel, serial and irrevocable mode, the thread table
 * and the statistics API. The algorithm and its invariants are in tx.h.
 */
#define _GNU_SOURCE
#include "tm/tx.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tm/monitor.h"
#include "tm/site.h"

struct tm_runtime strobe__tm_rt = {
    .reg_mutex = PTHREAD_MUTEX_INITIALIZER,
    .max_retries = 10,
};
_Atomic uint64_t strobe__tm_locks[1u << TM_LOCK_BITS];
__thread struct tm_tx *strobe__tm_self __attribute__((tls_model("initial-exec")));

#define rt strobe__tm_rt

/* How long a transaction spins on a lock held by another before it gives
 * up (aborts); commits hold locks for a short time only. */
#define TM_LOCK_SPINS 256

static __attribute__((noreturn, cold)) void tm_fatal(const char *msg)
{
    fprintf(stderr, "strobe-tm: %s\n", msg);
    abort();
}

static inline void tm_pause(void)
{
    __builtin_ia32_pause();
}

void strobe__tm_vec_grow(void *vec, size_t elem)
{
    struct {
        void *v;
        size_t n, cap;
    } *g = vec;
    size_t cap = g->cap ? g->cap * 2 : 64;
    void *v = realloc(g->v, cap * elem);
    if (v == NULL)
        tm_fatal("out of memory for a transaction log");
    g->v = v;
    g->cap = cap;
}

/* ---- thread table ------------------------------------------------------ */

static pthread_once_t tm_key_once = PTHREAD_ONCE_INIT;

static void tm_stats_add(struct tm_stats *to, struct tm_stats *from, bool reset)
{
    for (int i = 0; i < TM_STAT_COUNT; i++) {
        unsigned long v = atomic_load_explicit(&from->c[i], memory_order_relaxed);
        atomic_fetch_add_explicit(&to->c[i], v, memory_order_relaxed);
        if (reset)
            atomic_store_explicit(&from->c[i], 0, memory_order_relaxed);
    }
}

/* Thread exit: the descriptor goes back to the table for reuse. It is never
 * freed, because other threads scan the table without a lock. */
static void tm_thread_end(void *p)
{
    struct tm_tx *tx = p;
    strobe__tm_mon_thread_end(tx);
    pthread_mutex_lock(&rt.reg_mutex);
    tm_stats_add(&rt.retired, &tx->stats, true);
    rt.retired_threads++;
    tx->in_use = false;
    atomic_fetch_sub_explicit(&rt.live, 1, memory_order_relaxed);
    pthread_mutex_unlock(&rt.reg_mutex);
    strobe__tm_self = NULL;
}

static void tm_key_create(void)
{
    if (pthread_key_create(&rt.key, tm_thread_end) != 0)
        tm_fatal("cannot create the thread key");
}

struct tm_tx *strobe__tm_tx_slow(void)
{
    pthread_once(&tm_key_once, tm_key_create);
    struct tm_tx *tx = NULL;
    pthread_mutex_lock(&rt.reg_mutex);
    uint32_t n = atomic_load_explicit(&rt.nslots, memory_order_relaxed);
    for (uint32_t i = 0; i < n && tx == NULL; i++) {
        struct tm_tx *t = atomic_load_explicit(&rt.slots[i], memory_order_relaxed);
        if (!t->in_use)
            tx = t;
    }
    if (tx == NULL) {
        if (n == TM_MAX_THREADS)
            tm_fatal("more than 2048 threads use transactions at the same time");
        tx = aligned_alloc(64, (sizeof *tx + 63) & ~(size_t)63);
        if (tx == NULL)
            tm_fatal("out of memory for a thread descriptor");
        memset(tx, 0, sizeof *tx);
        tx->slot = n;
        atomic_init(&tx->active, TM_INACTIVE);
        /* release: a scanner that sees the slot sees an initialised tx */
        atomic_store_explicit(&rt.slots[n], tx, memory_order_release);
        atomic_store_explicit(&rt.nslots, n + 1, memory_order_release);
    }
    tx->in_use = true;
    atomic_fetch_add_explicit(&rt.live, 1, memory_order_relaxed);
    pthread_mutex_unlock(&rt.reg_mutex);

    pthread_attr_t attr;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &lo, &size);
        pthread_attr_destroy(&attr);
    }
    tx->stack_lo = (uintptr_t)lo;
    tx->rng = 0x9e3779b97f4a7c15ull * (tx->slot + 1);
    tx->cxx_uncaught = strobe__tm_cxx_uncaught_counter();
    strobe__tm_self = tx;
    pthread_setspecific(rt.key, tx);
    strobe__tm_mon_thread_begin(tx);
    return tx;
}

static uint64_t tm_rand(struct tm_tx *tx)
{
    uint64_t x = tx->rng; /* xorshift64 */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return tx->rng = x;
}

/* ---- serial mode and quiescence ---------------------------------------- */

/* Waits until no other thread runs a transaction. The seq_cst loads pair
 * with the seq_cst store of `active` in tm_publish: a thread either sees
 * the serial flag there and backs off, or is seen active here. */
static void tm_drain(struct tm_tx *self)
{
    uint32_t n = atomic_load_explicit(&rt.nslots, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct tm_tx *t = atomic_load_explicit(&rt.slots[i], memory_order_acquire);
        unsigned spins = 0;
        while (t != self && atomic_load_explicit(&t->active, memory_order_seq_cst) != TM_INACTIVE)
            tm_wait_step(&spins);
    }
}

/* Privatization safety: after a commit at time wv, waits for every
 * transaction whose snapshot is older (it might still read or undo data
 * that the committed transaction made private). */
static void tm_quiesce(struct tm_tx *self, uint64_t wv)
{
    uint32_t n = atomic_load_explicit(&rt.nslots, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct tm_tx *t = atomic_load_explicit(&rt.slots[i], memory_order_acquire);
        unsigned spins = 0;
        while (t != self && atomic_load_explicit(&t->active, memory_order_seq_cst) < wv)
            tm_wait_step(&spins);
    }
}

/* Takes the serial lock (the caller runs no transaction attempt right now)
 * and waits until every other transaction has finished. */
static void tm_serial_acquire(struct tm_tx *tx)
{
    if (tx->spec)
        strobe__tm_spec_wait_turn_idle(tx);
    /* seq_cst: the Dekker pairing with tm_publish (see tm_drain) */
    unsigned spins = 0;
    int free_ = 0;
    while (!atomic_compare_exchange_weak_explicit(&rt.serial, &free_, 1, memory_order_seq_cst,
                                                  memory_order_relaxed)) {
        free_ = 0;
        tm_wait_step(&spins);
    }
    tx->holds_serial = true;
    tm_drain(tx);
}

static void tm_serial_release(struct tm_tx *tx)
{
    if (!tx->holds_serial)
        return;
    tx->holds_serial = false;
    atomic_store_explicit(&rt.serial, 0, memory_order_release);
}

/* Makes the transaction visible to serial drains and quiescence, and takes
 * the snapshot: the published time is never newer than the snapshot. */
static void tm_publish(struct tm_tx *tx)
{
    if (rt.htm && !tx->stm_counted) {
        /* seq_cst: visible before any read of data (htm.c) */
        atomic_fetch_add_explicit(&rt.stm_running, 1, memory_order_seq_cst);
        tx->stm_counted = true;
    }
    for (;;) {
        uint64_t now = atomic_load_explicit(&rt.clock, memory_order_acquire);
        atomic_store_explicit(&tx->active, now, memory_order_seq_cst);
        if (!atomic_load_explicit(&rt.serial, memory_order_seq_cst))
            break;
        atomic_store_explicit(&tx->active, TM_INACTIVE, memory_order_release);
        tm_wait_serial();
    }
    tx->rv = atomic_load_explicit(&rt.clock, memory_order_seq_cst);
}

static void tm_count_serial(struct tm_tx *tx, enum tm_serial_cause cause)
{
    tx->serial_cause = cause;
    if (cause == TM_SERIAL_ALONE)
        return;
    if (!tx->spec) /* speculative chunks are counted by spec.c */
        tm_stat_inc(tx, cause == TM_SERIAL_JMV     ? TM_STAT_SER_JMV
                        : cause == TM_SERIAL_MAXRB ? TM_STAT_SER_MAXRB
                                                   : TM_STAT_SER_OTHER);
    strobe__tm_mon_serialize(tx, cause);
}

/* Starts an attempt of the outermost transaction; returns the ITM actions. */
static uint32_t tm_attempt(struct tm_tx *tx)
{
    uint32_t props = tx->cps.v[0].props;
    if (tx->next_serial != TM_SERIAL_NONE) {
        if (!tx->holds_serial)
            tm_serial_acquire(tx);
        if (tx->serial_cause == TM_SERIAL_NONE)
            tm_count_serial(tx, tx->next_serial);
        tx->rv = atomic_load_explicit(&rt.clock, memory_order_acquire);
        strobe__tm_mon_attempt(tx);
        /* Alone and unable to cancel: run the fast uninstrumented code. A
         * transaction that may cancel keeps its undo log, nothing else. */
        if (tx->next_serial == TM_SERIAL_JMV || (props & ITM_PR_HAS_NO_ABORT) ||
            !(props & ITM_PR_INSTRUMENTED_CODE)) {
            tx->mode = TM_MODE_IRREVOCABLE;
            return (props & ITM_PR_UNINSTRUMENTED_CODE) ? ITM_A_RUN_UNINSTRUMENTED_CODE
                                                        : ITM_A_RUN_INSTRUMENTED_CODE;
        }
        tx->mode = TM_MODE_SERIAL;
        return ITM_A_RUN_INSTRUMENTED_CODE;
    }
    tx->mode = TM_MODE_STM;
    tm_publish(tx);
    strobe__tm_mon_attempt(tx);
    return ITM_A_RUN_INSTRUMENTED_CODE;
}

/* Copies the checkpoint word by word. checkpoint.S has just stored it with
 * 8-byte stores; the 16-byte loads of a vectorised struct copy cannot be
 * forwarded from them and stall (a third of an uncontended transaction). */
static inline void tm_copy_jmpbuf(struct tm_jmpbuf *dst, const struct tm_jmpbuf *src)
{
    const uint64_t *s = (const uint64_t *)src;
    uint64_t *d = (uint64_t *)dst;
    for (size_t i = 0; i < sizeof *src / 8; i++) {
        uint64_t v = s[i];
        __asm__("" : "+r"(v)); /* keeps the copy scalar */
        d[i] = v;
    }
}

static void tm_push_checkpoint(struct tm_tx *tx, uint32_t props, const struct tm_jmpbuf *jb)
{
    /* filled in place: a local copy would be moved with 16-byte loads too */
    if (TM_UNLIKELY(tx->cps.n == tx->cps.cap))
        strobe__tm_vec_grow(&tx->cps, sizeof *tx->cps.v);
    struct tm_checkpoint *cp = &tx->cps.v[tx->cps.n++];
    tm_copy_jmpbuf(&cp->jb, jb);
    cp->props = props;
    cp->nesting = tx->nesting;
    cp->nlog = tx->log.n;
    cp->nundo = tx->undo.n;
    cp->ncommit = tx->commit_actions.n;
    cp->nalloc = tx->allocs.n;
    cp->nfree = tx->frees.n;
    cp->ncatch = tx->cxx_catches;
    cp->nuncaught = tx->cxx_uncaught != NULL ? *tx->cxx_uncaught : 0;
}

uint32_t strobe__tm_begin(uint32_t props, const struct tm_jmpbuf *jb)
{
    struct tm_tx *tx = tm_tx();
    if (tx->nesting > 0) {
        /* Nested: flattened into the outer transaction, with a checkpoint
         * of its own only if it can be cancelled. */
        tx->nesting++;
        if (tx->mode == TM_MODE_HTM) {
            /* the hardware undoes all or nothing: a block that may cancel
             * alone, or must become irrevocable, needs the STM */
            if (!(props & ITM_PR_HAS_NO_ABORT))
                strobe__tm_htm_abort(TM_HTM_CANCEL);
            if (!(props & ITM_PR_INSTRUMENTED_CODE) || (props & ITM_PR_DOES_GO_IRREVOCABLE))
                strobe__tm_htm_abort(TM_HTM_IRREVOCABLE);
        }
        if (tx->mode == TM_MODE_IRREVOCABLE || tx->mode == TM_MODE_HTM)
            return (props & ITM_PR_UNINSTRUMENTED_CODE) ? ITM_A_RUN_UNINSTRUMENTED_CODE
                                                        : ITM_A_RUN_INSTRUMENTED_CODE;
        if (!(props & ITM_PR_HAS_NO_ABORT))
            tm_push_checkpoint(tx, props, jb);
        if (!(props & ITM_PR_INSTRUMENTED_CODE) || (props & ITM_PR_DOES_GO_IRREVOCABLE)) {
            strobe__tm_go_irrevocable(tx, TM_SERIAL_JMV);
            return (props & ITM_PR_UNINSTRUMENTED_CODE) ? ITM_A_RUN_UNINSTRUMENTED_CODE
                                                        : ITM_A_RUN_INSTRUMENTED_CODE;
        }
        return ITM_A_RUN_INSTRUMENTED_CODE;
    }
    tx->nesting = 1;
    tx->retries = 0;
    tx->serial_cause = TM_SERIAL_NONE;
    tx->next_serial = ((props & ITM_PR_DOES_GO_IRREVOCABLE) || !(props & ITM_PR_INSTRUMENTED_CODE))
                          ? TM_SERIAL_JMV
                          : TM_SERIAL_NONE;
    /* The only thread with transactions runs them serially: on the
     * uninstrumented code (no barriers at all), or, if the block may
     * cancel, with barriers that only keep the undo log. A thread that
     * starts a transaction meanwhile waits at its start, as for any serial
     * one. An irrevocable action in an uninstrumented one goes unseen
     * unless GCC marked the block as always irrevocable (then it is counted
     * above); it costs nothing, as the transaction runs alone anyway. */
    if (tx->next_serial == TM_SERIAL_NONE && !tx->spec && (props & ITM_PR_INSTRUMENTED_CODE) &&
        atomic_load_explicit(&rt.live, memory_order_relaxed) == 1)
        tx->next_serial = TM_SERIAL_ALONE;
    /* unique without a shared counter: thread slot and a per-thread count */
    tx->id = ((uint64_t)(tx->slot + 1) << 44) + ++tx->count;
    tx->cps.n = 0;
    strobe__tm_mon_begin(tx, tx->spec ? strobe__tm_spec_site(tx) : (uintptr_t)jb->rip);
    /* Hardware first for a block that cannot cancel (htm.c); a speculative
     * chunk needs the STM's commit order. The hardware undoes by itself:
     * the checkpoint is only needed on the way to the STM. */
    if (rt.htm && tx->next_serial == TM_SERIAL_NONE && !tx->spec && (props & ITM_PR_HAS_NO_ABORT)) {
        uint32_t a = strobe__tm_htm_attempt(tx, props);
        if (a != 0)
            return a;
    }
    tm_push_checkpoint(tx, props, jb);
    return tm_attempt(tx) | ITM_A_SAVE_LIVE_VARIABLES;
}

/* ---- validation --------------------------------------------------------- */

/* True if every location read is unchanged since the snapshot; otherwise
 * *culprit is the thread that wrote or holds it. */
static bool tm_validate(struct tm_tx *tx, int *culprit)
{
    for (size_t i = 0; i < tx->rset.n; i++) {
        uint64_t l = atomic_load_explicit(tx->rset.v[i], memory_order_acquire);
        if (l & TM_LOCKED) {
            /* Ours: the write barrier checked its version when it locked. */
            if (TM_OWNER(l) == tx->slot)
                continue;
            *culprit = (int)TM_OWNER(l);
            return false;
        }
        if (TM_VERSION(l) > tx->rv) {
            *culprit = (int)TM_OWNER(l);
            return false;
        }
    }
    return true;
}

/* LSA snapshot extension: moves the snapshot to now if nothing read has
 * changed. The clock is read before validating, so a change after the
 * validation has a version newer than the new snapshot. */
static bool tm_extend(struct tm_tx *tx, int *culprit)
{
    uint64_t now = atomic_load_explicit(&rt.clock, memory_order_acquire);
    if (!tm_validate(tx, culprit))
        return false;
    tx->rv = now;
    return true;
}

/* ---- the barriers' work ------------------------------------------------- */

static inline bool tm_on_dead_stack(const struct tm_tx *tx, uintptr_t a, uintptr_t cfa)
{
    return a >= tx->stack_lo && a < cfa;
}

static inline uint64_t tm_raw_load(const void *addr, unsigned n)
{
    switch (n) {
    case 1:
        return __atomic_load_n((const uint8_t *)addr, __ATOMIC_RELAXED);
    case 2:
        return __atomic_load_n((const uint16_t *)addr, __ATOMIC_RELAXED);
    case 4:
        return __atomic_load_n((const uint32_t *)addr, __ATOMIC_RELAXED);
    case 8:
        return __atomic_load_n((const uint64_t *)addr, __ATOMIC_RELAXED);
    default: {
        uint64_t v = 0;
        for (unsigned i = 0; i < n; i++)
            v |= (uint64_t)__atomic_load_n((const uint8_t *)addr + i, __ATOMIC_RELAXED) << (8 * i);
        return v;
    }
    }
}

static inline void tm_raw_store(void *addr, uint64_t v, unsigned n)
{
    switch (n) {
    case 1:
        __atomic_store_n((uint8_t *)addr, (uint8_t)v, __ATOMIC_RELAXED);
        break;
    case 2:
        __atomic_store_n((uint16_t *)addr, (uint16_t)v, __ATOMIC_RELAXED);
        break;
    case 4:
        __atomic_store_n((uint32_t *)addr, (uint32_t)v, __ATOMIC_RELAXED);
        break;
    case 8:
        __atomic_store_n((uint64_t *)addr, v, __ATOMIC_RELAXED);
        break;
    default:
        for (unsigned i = 0; i < n; i++)
            __atomic_store_n((uint8_t *)addr + i, (uint8_t)(v >> (8 * i)), __ATOMIC_RELAXED);
    }
}

/* A lock held by another transaction: wait a little for its commit to
 * finish, then give up. Returns the lock's new value, or aborts. In a
 * speculative loop an older chunk instead asks the younger owner to abort
 * and waits, since the younger one cannot commit before it anyway. */
static uint64_t tm_wait_unlock(struct tm_tx *tx, _Atomic uint64_t *lock, uint64_t l,
                               enum tm_abort_cause cause)
{
    struct tm_tx *owner = atomic_load_explicit(&rt.slots[TM_OWNER(l)], memory_order_acquire);
    bool older = tx->spec && strobe__tm_spec_is_older(tx, owner);
    for (unsigned spins = 0;; spins++) {
        if (older)
            atomic_store_explicit(&owner->kill, 1, memory_order_relaxed);
        else if (spins >= TM_LOCK_SPINS)
            strobe__tm_abort(tx, cause, (int)TM_OWNER(l));
        if (tx->spec && atomic_load_explicit(&tx->kill, memory_order_relaxed))
            strobe__tm_abort(tx, TM_ABORT_OTHER, -1);
        tm_pause();
        l = atomic_load_explicit(lock, memory_order_acquire);
        if (!(l & TM_LOCKED) || TM_OWNER(l) == tx->slot)
            return l;
        if (spins > 1024)
            sched_yield();
    }
}

uint64_t strobe__tm_load(struct tm_tx *tx, const void *addr, unsigned n)
{
    if (tx->mode != TM_MODE_STM || tm_on_dead_stack(tx, (uintptr_t)addr, tm_live_stack_top(tx)))
        return tm_raw_load(addr, n);
    _Atomic uint64_t *lock = tm_lock_of((uintptr_t)addr);
    for (;;) {
        uint64_t l1 = atomic_load_explicit(lock, memory_order_acquire);
        if (l1 & TM_LOCKED) {
            if (TM_OWNER(l1) == tx->slot)
                return tm_raw_load(addr, n); /* write-through: memory holds ours */
            tm_wait_unlock(tx, lock, l1, TM_ABORT_READ_CONFLICT);
            continue;
        }
        uint64_t v = tm_raw_load(addr, n);
        /* the data load must complete before the lock is read again */
        atomic_thread_fence(memory_order_acquire);
        uint64_t l2 = atomic_load_explicit(lock, memory_order_relaxed);
        if (l1 != l2)
            continue;
        if (TM_VERSION(l1) > tx->rv) {
            int culprit = -1;
            if (!tm_extend(tx, &culprit))
                strobe__tm_abort(tx, TM_ABORT_VALIDATION, culprit);
            /* The extension validated the earlier reads, not this one (it
             * is not in the read set yet): a commit to this location
             * between the read and the new snapshot would go unseen, and
             * the stale value would pass every later validation. */
            if (atomic_load_explicit(lock, memory_order_acquire) != l1)
                continue;
        }
        tm_vec_push(tx->rset, lock);
        return v;
    }
}

void strobe__tm_store(struct tm_tx *tx, void *addr, uint64_t val, unsigned n)
{
    if (tx->mode != TM_MODE_STM || tm_on_dead_stack(tx, (uintptr_t)addr, tm_live_stack_top(tx))) {
        if (tx->mode == TM_MODE_SERIAL && !tm_on_dead_stack(tx, (uintptr_t)addr, tm_live_stack_top(tx))) {
            struct tm_undo u = {(uintptr_t)addr, tm_raw_load(addr, n), n};
            tm_vec_push(tx->log, u);
        }
        tm_raw_store(addr, val, n);
        return;
    }
    if (TM_UNLIKELY(tx->spec) && atomic_load_explicit(&tx->kill, memory_order_relaxed))
        strobe__tm_abort(tx, TM_ABORT_OTHER, -1);
    _Atomic uint64_t *lock = tm_lock_of((uintptr_t)addr);
    uint64_t l = atomic_load_explicit(lock, memory_order_acquire);
    while (!(l & TM_LOCKED) || TM_OWNER(l) != tx->slot) {
        if (l & TM_LOCKED) {
            l = tm_wait_unlock(tx, lock, l, TM_ABORT_WRITE_CONFLICT);
            continue;
        }
        /* A newer version may mean a value this transaction read is stale:
         * extend (re-validate) before taking ownership. */
        if (TM_VERSION(l) > tx->rv) {
            int culprit = -1;
            if (!tm_extend(tx, &culprit))
                strobe__tm_abort(tx, TM_ABORT_VALIDATION, culprit);
        }
        if (atomic_compare_exchange_weak_explicit(lock, &l, TM_MAKE_LOCKED(tx->slot), memory_order_acquire,
                                                  memory_order_acquire)) {
            struct tm_held_lock h = {lock, l};
            tm_vec_push(tx->held, h);
            /* The seqlock writer's fence: a reader whose data load sees
             * the write below also sees the lock taken (its acquire fence
             * in strobe__tm_load pairs with this one). Free on x86. */
            atomic_thread_fence(memory_order_release);
            break;
        }
    }
    struct tm_undo u = {(uintptr_t)addr, tm_raw_load(addr, n), n};
    tm_vec_push(tx->log, u);
    tm_raw_store(addr, val, n);
}

/* ---- end of a transaction ----------------------------------------------- */

/* Undoes the writes logged after entry `from`, newest first, except on
 * stack frames that no longer exist (below cfa): the code running now may
 * live there. */
static void tm_undo_log(struct tm_tx *tx, size_t from, uintptr_t cfa)
{
    for (size_t i = tx->log.n; i-- > from;) {
        struct tm_undo *u = &tx->log.v[i];
        if (!tm_on_dead_stack(tx, u->addr, cfa))
            tm_raw_store((void *)u->addr, u->old, u->size);
    }
    tx->log.n = from;
}

static void tm_run_undo_actions(struct tm_tx *tx, size_t from)
{
    for (size_t i = tx->undo.n; i-- > from;)
        tx->undo.v[i].fn(tx->undo.v[i].arg);
    tx->undo.n = from;
}

static void tm_release_blocks(struct tm_block *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i].release(b[i].p, b[i].size);
}

/* Blocks allocated by an aborted or cancelled attempt: nobody else can
 * hold a pointer to them, since every location the attempt wrote one to
 * stayed locked until the undo log restored it. */
static void tm_free_allocs(struct tm_tx *tx, size_t from)
{
    tm_release_blocks(tx->allocs.v + from, tx->allocs.n - from);
    tx->allocs.n = from;
}

void strobe__tm_alloc_record(struct tm_tx *tx, void *p, size_t size, tm_release_fn release)
{
    if (p == NULL || tx->nesting == 0 || tx->mode == TM_MODE_IRREVOCABLE)
        return;
    struct tm_block b = {p, size, release};
    tm_vec_push(tx->allocs, b);
}

void strobe__tm_release(struct tm_tx *tx, void *p, size_t size, tm_release_fn release)
{
    if (p == NULL)
        return;
    if (tx->nesting == 0 || tx->mode == TM_MODE_IRREVOCABLE) {
        release(p, size);
        return;
    }
    struct tm_block b = {p, size, release};
    tm_vec_push(tx->frees, b);
}

/* Releases the locks of an aborted attempt with a new version: readers
 * that saw the old version must not accept the undone bytes as unchanged. */
static void tm_release_aborted(struct tm_tx *tx)
{
    if (tx->held.n == 0)
        return;
    uint64_t v = atomic_fetch_add_explicit(&rt.clock, 1, memory_order_acq_rel) + 1;
    for (size_t i = 0; i < tx->held.n; i++)
        atomic_store_explicit(tx->held.v[i].lock, TM_MAKE_VERSION(v, tx->slot), memory_order_release);
    tx->held.n = 0;
}

static void tm_clear(struct tm_tx *tx)
{
    tx->rset.n = 0;
    tx->log.n = 0;
    tx->held.n = 0;
    tx->undo.n = 0;
    tx->commit_actions.n = 0;
    tx->allocs.n = 0;
}

/* The outermost transaction is over (committed or cancelled). */
static void tm_finish(struct tm_tx *tx, bool cancelled)
{
    atomic_store_explicit(&tx->active, TM_INACTIVE, memory_order_release);
    if (tx->stm_counted) {
        atomic_fetch_sub_explicit(&rt.stm_running, 1, memory_order_release);
        tx->stm_counted = false;
    }
    tm_serial_release(tx);
    tx->nesting = 0;
    tx->mode = TM_MODE_STM;
    if (!tx->spec) {
        tm_stat_inc(tx, TM_STAT_TRANSACTIONS);
        if (cancelled)
            tm_stat_inc(tx, TM_STAT_CANCELS);
    }
    strobe__tm_mon_end(tx, cancelled);
}

void strobe__tm_commit(struct tm_tx *tx)
{
    if (tx->nesting > 1) {
        if (tx->cps.n > 1 && tx->cps.v[tx->cps.n - 1].nesting == tx->nesting)
            tx->cps.n--;
        tx->nesting--;
        return;
    }
    uint64_t wv = 0;
    /* Neither a serial nor a hardware transaction overlapped with another
     * that could still read what it freed (htm.c). */
    bool alone = tx->holds_serial || tx->mode == TM_MODE_HTM;
    if (tx->mode == TM_MODE_HTM) {
        strobe__tm_htm_commit();
        tm_stat_inc(tx, TM_STAT_HW_COMMITS);
        /* The common case in full: nothing to run, release or clear (the
         * transaction was never published). A hardware transaction costs
         * a few tens of nanoseconds, so the general path would show. */
        if (tx->commit_actions.n == 0 && tx->frees.n == 0 && tx->allocs.n == 0 && tx->undo.n == 0) {
            tx->nesting = 0;
            tx->mode = TM_MODE_STM;
            tm_stat_inc(tx, TM_STAT_TRANSACTIONS);
            strobe__tm_mon_end(tx, false);
            return;
        }
    }
    if (tx->mode == TM_MODE_STM) {
        strobe__tm_mon_try_lock(tx);
        if (tx->spec)
            strobe__tm_spec_wait_turn(tx);
        int culprit = -1;
        if (tx->held.n > 0) {
            wv = atomic_fetch_add_explicit(&rt.clock, 1, memory_order_acq_rel) + 1;
            if (wv != tx->rv + 1 && !tm_validate(tx, &culprit))
                strobe__tm_abort(tx, TM_ABORT_VALIDATION, culprit);
            strobe__tm_mon_locked(tx);
            for (size_t i = 0; i < tx->held.n; i++)
                atomic_store_explicit(tx->held.v[i].lock, TM_MAKE_VERSION(wv, tx->slot),
                                      memory_order_release);
            strobe__tm_mon_published(tx);
        } else if (tx->spec && !tm_extend(tx, &culprit)) {
            /* read-only chunk: its reads must still hold at its turn */
            strobe__tm_abort(tx, TM_ABORT_VALIDATION, culprit);
        }
    }
    if (tx->spec)
        strobe__tm_spec_committed(tx);
    for (size_t i = 0; i < tx->commit_actions.n; i++)
        tx->commit_actions.v[i].fn(tx->commit_actions.v[i].arg);
    tm_clear(tx);
    tm_finish(tx, false);
    /* Blocks released by the transaction go back only when every
     * transaction that might still read them has ended: one that started
     * before this commit may hold a pointer to a block it unlinked, and
     * reads it until its next validation fails. A transaction that wrote
     * nothing waits for all that started before now. */
    if (tx->frees.n > 0 && !alone && wv == 0)
        wv = atomic_load_explicit(&rt.clock, memory_order_acquire) + 1;
    if (wv != 0)
        tm_quiesce(tx, wv);
    if (tx->frees.n > 0) {
        tm_release_blocks(tx->frees.v, tx->frees.n);
        tx->frees.n = 0;
    }
}

/* Randomised exponential back-off after a conflict. */
static void tm_backoff(struct tm_tx *tx)
{
    unsigned shift = tx->retries < 12 ? tx->retries : 12;
    uint64_t spins = tm_rand(tx) & ((16ull << shift) - 1);
    for (uint64_t i = 0; i < spins; i++)
        tm_pause();
}

void strobe__tm_abort(struct tm_tx *tx, enum tm_abort_cause cause, int culprit)
{
    if (tx->mode == TM_MODE_HTM)
        strobe__tm_htm_abort(TM_HTM_RETRY);
    if (tx->mode == TM_MODE_IRREVOCABLE)
        tm_fatal("an irrevocable transaction cannot abort");
    strobe__tm_mon_abort(tx, cause, culprit);
    tm_undo_log(tx, 0, tx->cps.v[0].jb.cfa);
    tm_release_aborted(tx);
    tm_run_undo_actions(tx, 0);
    strobe__tm_cxx_rollback(tx, &tx->cps.v[0]);
    tm_free_allocs(tx, 0);
    tm_clear(tx);
    tx->frees.n = 0; /* they stay in use: the transaction never happened */
    atomic_store_explicit(&tx->active, TM_INACTIVE, memory_order_release);
    atomic_store_explicit(&tx->kill, 0, memory_order_relaxed);
    tx->retries++;
    if (!tx->spec)
        tm_stat_inc(tx, TM_STAT_ROLLBACKS);
    if (tx->holds_serial && tx->next_serial == TM_SERIAL_NONE)
        tx->next_serial = tx->serial_cause;
    if (tx->next_serial == TM_SERIAL_NONE && tx->retries >= rt.max_retries)
        tx->next_serial = TM_SERIAL_MAXRB;
    if (cause != TM_ABORT_EXPLICIT && tx->next_serial == TM_SERIAL_NONE)
        tm_backoff(tx);
    tx->nesting = 1;
    tx->cps.n = 1;
    uint32_t action = tm_attempt(tx) | ITM_A_RESTORE_LIVE_VARIABLES;
    strobe__tm_longjmp(action, &tx->cps.v[0].jb);
}

void strobe__tm_cancel(struct tm_tx *tx, uint32_t reason)
{
    if (reason & ITM_USER_RETRY)
        strobe__tm_abort(tx, TM_ABORT_EXPLICIT, -1);
    if (tx->mode == TM_MODE_HTM) /* not reached: such blocks do not start in hardware */
        strobe__tm_htm_abort(TM_HTM_CANCEL);
    if (tx->mode == TM_MODE_IRREVOCABLE) {
        char where[512];
        strobe__tm_describe_site(tx->cps.v[0].jb.rip, where, sizeof where);
        fprintf(stderr,
                "strobe-tm: __transaction_cancel in the transaction that starts at %s, which had become "
                "irrevocable (it did I/O or called a function without a transactional clone, or an "
                "enclosing __transaction_relaxed did); nothing it did can be undone. Cancel before the "
                "irrevocable action, or keep unsafe calls out of transactions that may cancel\n",
                where);
        abort();
    }
    size_t k = (reason & ITM_OUTER_ABORT) ? 0 : tx->cps.n - 1;
    if (k == 0 && tx->spec)
        strobe__tm_spec_wait_turn(tx); /* the turn passes only in order */
    struct tm_checkpoint cp = tx->cps.v[k];
    strobe__tm_mon_cancel(tx, k == 0);
    tm_undo_log(tx, cp.nlog, cp.jb.cfa);
    tm_run_undo_actions(tx, cp.nundo);
    strobe__tm_cxx_rollback(tx, &cp);
    tm_free_allocs(tx, cp.nalloc);
    tx->commit_actions.n = cp.ncommit;
    tx->frees.n = cp.nfree;
    if (k == 0) {
        /* Nothing was written to shared memory that stays: the locks can
         * go back with a new version, like an abort's. */
        tm_release_aborted(tx);
        tm_clear(tx);
        tx->frees.n = 0;
        if (tx->spec)
            strobe__tm_spec_committed(tx);
        tm_finish(tx, true);
    } else {
        tx->cps.n = k;
        tx->nesting = cp.nesting - 1;
    }
    strobe__tm_longjmp(ITM_A_ABORT_TRANSACTION | ITM_A_RESTORE_LIVE_VARIABLES, &cp.jb);
}

void strobe__tm_go_irrevocable(struct tm_tx *tx, enum tm_serial_cause cause)
{
    if (tx->mode == TM_MODE_HTM)
        strobe__tm_htm_abort(TM_HTM_IRREVOCABLE);
    if (tx->mode == TM_MODE_IRREVOCABLE) {
        if (tx->serial_cause == TM_SERIAL_ALONE)
            tm_count_serial(tx, cause); /* it would have had to serialize */
        return;
    }
    if (!tx->holds_serial) {
        /* Waiting for the serial lock while running could deadlock with
         * the holder, which waits for us to finish: restart instead. A
         * speculative chunk must also wait for its turn first. */
        int free_ = 0;
        if (tx->spec || !atomic_compare_exchange_strong_explicit(&rt.serial, &free_, 1, memory_order_seq_cst,
                                                                 memory_order_relaxed)) {
            tx->next_serial = cause;
            strobe__tm_abort(tx, TM_ABORT_IRREVOCABLE, -1);
        }
        tx->holds_serial = true;
        tm_drain(tx);
    }
    int culprit = -1;
    if (!tm_extend(tx, &culprit)) {
        tx->next_serial = cause;
        strobe__tm_abort(tx, TM_ABORT_VALIDATION, culprit);
    }
    /* Alone, and memory already holds our writes: publish them and go on
     * without barriers. Nothing can be undone from here on. */
    if (tx->held.n > 0) {
        uint64_t v = atomic_fetch_add_explicit(&rt.clock, 1, memory_order_acq_rel) + 1;
        for (size_t i = 0; i < tx->held.n; i++)
            atomic_store_explicit(tx->held.v[i].lock, TM_MAKE_VERSION(v, tx->slot), memory_order_release);
        tx->held.n = 0;
    }
    tx->log.n = 0;
    tx->rset.n = 0;
    tx->undo.n = 0;
    tx->cps.n = 1;
    tx->mode = TM_MODE_IRREVOCABLE;
    if (tx->serial_cause == TM_SERIAL_NONE || tx->serial_cause == TM_SERIAL_ALONE)
        tm_count_serial(tx, cause); /* alone, it would have had to serialize */
}

/* ---- statistics API ----------------------------------------------------- */

static void tm_report_from(strobe_tm_report_t *out, struct tm_stats *s)
{
    unsigned long v[TM_STAT_COUNT];
    for (int i = 0; i < TM_STAT_COUNT; i++)
        v[i] = atomic_load_explicit(&s->c[i], memory_order_relaxed);
    out->total_transactions = v[TM_STAT_TRANSACTIONS];
    out->total_rollbacks = v[TM_STAT_ROLLBACKS];
    out->total_serialized_jmv = v[TM_STAT_SER_JMV];
    out->total_serialized_maxrb = v[TM_STAT_SER_MAXRB];
    out->total_serialized_other = v[TM_STAT_SER_OTHER];
    out->total_cancels = v[TM_STAT_CANCELS];
    out->total_hw_commits = v[TM_STAT_HW_COMMITS];
}

int strobe_tm_get_stats(strobe_tm_report_t *out)
{
    struct tm_tx *tx = tm_tx();
    tm_report_from(out, &tx->stats);
    out->hw_thread_id = tx->slot;
    return 0;
}

int strobe_tm_hardware(void)
{
    return rt.htm;
}

int strobe_tm_get_all_stats(strobe_tm_report_t *out)
{
    struct tm_stats sum;
    memset(&sum, 0, sizeof sum);
    pthread_mutex_lock(&rt.reg_mutex);
    tm_stats_add(&sum, &rt.retired, false);
    unsigned long threads = rt.retired_threads;
    uint32_t n = atomic_load_explicit(&rt.nslots, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++) {
        struct tm_tx *t = atomic_load_explicit(&rt.slots[i], memory_order_relaxed);
        if (t->in_use) {
            tm_stats_add(&sum, &t->stats, false);
            threads++;
        }
    }
    pthread_mutex_unlock(&rt.reg_mutex);
    tm_report_from(out, &sum);
    out->hw_thread_id = threads;
    return 0;
}

/* ---- start-up ----------------------------------------------------------- */

__attribute__((constructor)) static void tm_init(void)
{
    const char *s = getenv("STROBE_TM_MAX_RETRIES");
    if (s != NULL && *s != '\0') {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (*end != '\0' || v == 0 || v > 1000000)
            fprintf(stderr,
                    "strobe-tm: STROBE_TM_MAX_RETRIES=%s: expected a number of rollbacks from 1 to "
                    "1000000; using %u\n",
                    s, rt.max_retries);
        else
            rt.max_retries = (unsigned)v;
    }
    strobe__tm_mon_init();
    strobe__tm_htm_init();
}
