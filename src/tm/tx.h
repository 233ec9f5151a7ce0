/* SPDX-License-Identifier: MIT */
/*
 * The transaction engine of libstrobe-tm: a word-based software TM after
 * TL2 (Dice, Shalev, Shavit, DISC 2006) with LSA-style snapshot extension
 * (Riegel, Felber, Fetzer, DISC 2006). docs/tm.md gives the design and why.
 *
 *  - One global version clock; a table of 2^20 versioned locks, one per
 *    8-byte word modulo the table size. An unlocked lock holds the commit
 *    time of the last write and the TM thread number of its writer (so an
 *    abort can name its culprit); a locked one holds its owner's number.
 *  - Encounter-time locking with write-through and an undo log, like
 *    libitm's default method (ml_wt) and TinySTM's WT mode: a write locks
 *    its word, logs the old bytes and writes in place. Code compiled by GCC
 *    may read memory that the same transaction wrote through a barrier
 *    without a barrier (locals of transactional clones, memory it just
 *    allocated), so memory must always hold the transaction's own view;
 *    a redo log would break such programs.
 *  - Every read checks its lock against the snapshot time and extends the
 *    snapshot after re-validating the read set (LSA), so a transaction
 *    never sees an inconsistent state (opacity).
 *  - Commit takes a commit time from the clock, validates the read set and
 *    releases the locks with the new version. An abort undoes the writes
 *    and releases its locks with a fresh version, so a reader can never
 *    mistake undone data for the old version (ABA).
 *  - Privatization safety as GCC's model requires: a writing transaction,
 *    after its commit, waits until every transaction that started before
 *    it has finished (quiescence), as libitm does.
 *  - Serial mode: one transaction runs alone, either irrevocably (I/O,
 *    unsafe calls, __transaction_relaxed) or, when it may cancel, through
 *    the barriers with the undo log but without locks or validation.
 *
 * Everything here is per thread except the clock, the lock table, the
 * thread table and the serial flag, which live in the one runtime context
 * `strobe__tm_rt`.
 */
#ifndef STROBE_TM_TX_H
#define STROBE_TM_TX_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/format.h"
#include "strobe/tm.h"
#include "tm/itm.h"

#define TM_LIKELY(x) __builtin_expect(!!(x), 1)
#define TM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TM_HIDDEN __attribute__((visibility("hidden")))

#define TM_LOCK_BITS 20
#define TM_MAX_THREADS 2048 /* TM thread numbers are 11 bits of a lock word */
#define TM_INACTIVE UINT64_MAX

/* Lock word: bit 0 set = locked, bits 1..11 owner; clear = bits 1..11
 * last writer, bits 12..63 version (commit time). */
#define TM_LOCKED 1u
#define TM_OWNER(l) ((uint32_t)(((l) >> 1) & (TM_MAX_THREADS - 1)))
#define TM_VERSION(l) ((l) >> 12)
#define TM_MAKE_VERSION(ts, slot) (((uint64_t)(ts) << 12) | ((uint64_t)(slot) << 1))
#define TM_MAKE_LOCKED(slot) (((uint64_t)(slot) << 1) | TM_LOCKED)

/* Why an attempt aborted (the values of the trace format's TM records). */
enum tm_abort_cause {
    TM_ABORT_READ_CONFLICT = STROBE_TM_ABORT_READ_CONFLICT,   /* a read met a word locked by another */
    TM_ABORT_WRITE_CONFLICT = STROBE_TM_ABORT_WRITE_CONFLICT, /* a write met a word locked by another */
    TM_ABORT_VALIDATION = STROBE_TM_ABORT_VALIDATION,         /* a location read was overwritten since */
    TM_ABORT_EXPLICIT = STROBE_TM_ABORT_EXPLICIT,             /* a user retry */
    TM_ABORT_IRREVOCABLE = STROBE_TM_ABORT_IRREVOCABLE,       /* restarted to run irrevocably */
    TM_ABORT_OTHER = STROBE_TM_ABORT_OTHER,                   /* e.g. yielded to a serial transaction */
    TM_ABORT_HW_CONFLICT = STROBE_TM_ABORT_HW_CONFLICT,       /* hardware transaction: a conflict */
    TM_ABORT_HW_CAPACITY = STROBE_TM_ABORT_HW_CAPACITY,       /* hardware transaction: out of cache */
};

/* Why a transaction runs in serial mode. ALONE is not a serialization in
 * the statistics' sense: the only thread that uses transactions runs them
 * serially because that is cheapest (as libitm does); not counted. */
enum tm_serial_cause {
    TM_SERIAL_NONE = 0,
    TM_SERIAL_JMV = STROBE_TM_SERIAL_IRREVOCABLE,
    TM_SERIAL_MAXRB = STROBE_TM_SERIAL_MAX_ROLLBACKS,
    TM_SERIAL_OTHER = STROBE_TM_SERIAL_OTHER,
    TM_SERIAL_ALONE = 4,
};

enum tm_mode {
    TM_MODE_STM = 0,         /* through the barriers */
    TM_MODE_IRREVOCABLE = 1, /* alone, reads and writes memory directly */
    TM_MODE_SERIAL = 2,      /* alone but can cancel: direct reads, writes in place with the
                                undo log, no locks */
    TM_MODE_HTM = 3,         /* a hardware transaction (htm.c): direct reads and writes, the
                                processor detects conflicts and undoes */
};

/* Register checkpoint of _ITM_beginTransaction (checkpoint.S). */
struct tm_jmpbuf {
    uint64_t cfa; /* the caller's stack pointer after the call returns */
    uint64_t rbx, rbp, r12, r13, r14, r15;
    uint64_t rip; /* return address = the atomic block's call site */
};

/* Old contents of 1..8 bytes that do not cross an 8-byte word. */
struct tm_undo {
    uintptr_t addr;
    uint64_t old;
    uint32_t size;
};

struct tm_held_lock {
    _Atomic uint64_t *lock;
    uint64_t old;
};

/* A (possibly nested) transaction that can be cancelled on its own: the
 * log lengths to truncate back to. Only nested transactions that may
 * cancel (no pr_hasNoAbort) get one besides the outermost. */
struct tm_checkpoint {
    struct tm_jmpbuf jb;
    uint32_t props;
    uint32_t nesting;
    size_t nlog, nundo, ncommit, nalloc, nfree;
    uint32_t ncatch, nuncaught; /* C++ exception state to return to (cxx.c) */
};

struct tm_action {
    void (*fn)(void *);
    void *arg;
};

/* A block of memory and the function that gives it back (free, operator
 * delete, sized operator delete: size is passed on, 0 when unknown). */
typedef void (*tm_release_fn)(void *p, size_t size);
struct tm_block {
    void *p;
    size_t size;
    tm_release_fn release;
};

/* A growable array of T, grown by tm_vec_grow (never shrinks). */
#define TM_VEC(T)                                                                                  \
    struct {                                                                                       \
        T *v;                                                                                      \
        size_t n, cap;                                                                             \
    }

enum tm_stat {
    TM_STAT_TRANSACTIONS,
    TM_STAT_ROLLBACKS,
    TM_STAT_SER_JMV,
    TM_STAT_SER_MAXRB,
    TM_STAT_SER_OTHER,
    TM_STAT_CANCELS,
    TM_STAT_HW_COMMITS,
    TM_STAT_COUNT
};
struct tm_stats {
    _Atomic unsigned long c[TM_STAT_COUNT];
};

/* Counts of one atomic block on one thread (monitoring level counters and
 * up, monitor.c): indexes of c[]. */
enum tm_block_count {
    TM_BC_TRANSACTIONS,
    TM_BC_ROLLBACKS,
    TM_BC_SER_JMV,
    TM_BC_SER_MAXRB,
    TM_BC_SER_OTHER,
    TM_BC_CANCELS,
    TM_BC_ABORTS, /* + abort cause - 1 */
    TM_BC_COUNT = TM_BC_ABORTS + TM_ABORT_HW_CAPACITY
};
/* Written by the thread that runs the block; read at exit by the exiting
 * thread while the others may still run, hence relaxed atomics. Never
 * moved or freed: the exit writer walks them without stopping anyone. */
struct tm_block_counts {
    uintptr_t site;
    int32_t thread; /* strobe thread number of the thread that ran them */
    _Atomic uint64_t c[TM_BC_COUNT];
    _Atomic(struct tm_block_counts *) next;
};

/* Counts of one atomic block under one call path of its thread (level
 * stats, monitor.c): added to the thread's profile before its measurement
 * ends. Owner only. */
struct tm_path_counts {
    uint64_t path; /* strobe_adapter_path() at the block's start; 0 = free slot */
    uintptr_t site;
    uint64_t visits;
    uint64_t rollbacks_n; /* transactions that rolled back, and their rollbacks: */
    int64_t rollbacks_sum, rollbacks_min, rollbacks_max;
    uint64_t serialized[3]; /* by enum tm_serial_cause - 1 */
    uint64_t cancels;
};

/* Per-thread transaction descriptor. Owned by its thread; other threads
 * read only `active` and the statistics (relaxed atomics). */
struct tm_tx {
    /* hot: touched by every barrier */
    uint64_t rv;     /* snapshot time */
    uint32_t nesting;
    uint32_t mode;   /* enum tm_mode */
    uint32_t slot;   /* TM thread number */
    uint32_t retries;
    TM_VEC(_Atomic uint64_t *) rset;
    TM_VEC(struct tm_undo) log;
    TM_VEC(struct tm_held_lock) held;
    TM_VEC(struct tm_checkpoint) cps;
    TM_VEC(struct tm_action) undo; /* _ITM_addUserUndoAction */
    TM_VEC(struct tm_action) commit_actions;
    TM_VEC(struct tm_block) allocs; /* allocated in this transaction: released on abort */
    TM_VEC(struct tm_block) frees;  /* released in it: given back after commit */
    unsigned *cxx_uncaught; /* libsupc++'s uncaught-exception count of this thread, or NULL (cxx.c) */
    uint32_t cxx_catches;   /* catch handlers entered in transactions and not left (cxx.c) */

    uint32_t serial_cause; /* enum tm_serial_cause of the running transaction */
    uint32_t next_serial;  /* serial cause requested for the next attempt */
    bool holds_serial;     /* owns the serial lock */
    bool in_use;           /* a live thread owns this descriptor */
    bool spec;             /* running a speculative chunk (spec.c) */
    bool stm_counted;      /* counted in rt.stm_running (htm.c) */
    uint64_t spec_seq;     /* that chunk's commit order (read by other threads) */
    void *spec_ctx;        /* its loop (read by other threads) */
    uintptr_t stack_lo;    /* lowest address of this thread's stack */
    uint64_t rng;
    itm_transaction_id_t id;
    uint64_t count; /* transactions begun by this thread */

    _Alignas(64) _Atomic uint64_t active; /* snapshot published, or TM_INACTIVE */
    _Atomic int kill;                     /* an older speculative chunk needs our locks */
    _Atomic int32_t core_thread;          /* strobe thread number (t<N>), -1 unmonitored */
    uintptr_t site;                       /* call site of the running outermost transaction */
    uint64_t try_ticks;                   /* monitor: when the commit was requested */
    uint64_t locked_ticks;                /* monitor: when its commit time was taken */
    struct tm_block_counts *block;        /* monitor: counts of the running block */
    _Atomic(struct tm_block_counts *) blocks; /* monitor: this thread's blocks */
    struct tm_block_counts **block_index; /* monitor: open addressing by site, owner only */
    unsigned block_index_bits, nblocks;
    uint64_t path;                       /* monitor (stats): call path of the running block */
    struct tm_path_counts *path_counts;  /* monitor (stats): its counts */
    struct tm_path_counts *paths;        /* monitor (stats): open addressing by (path, site) */
    unsigned paths_bits, npaths;
    struct tm_stats stats;
};

struct tm_clone_table;
struct tm_clone_index;

/* The runtime context: the only global mutable state of libstrobe-tm. */
struct tm_runtime {
    _Alignas(64) _Atomic uint64_t clock;
    /* The serial lock: 1 while a serial transaction runs or waits for the
     * others to drain. Taken by compare-and-swap, one atomic instruction,
     * because the only thread with transactions takes it every time. */
    _Alignas(64) _Atomic int serial;
    /* Transactions in STM mode now, counted only when hardware transactions
     * may run (htm.c): those read it and this word, so that neither kind
     * ever runs beside the other. */
    _Atomic uint32_t stm_running;
    pthread_mutex_t reg_mutex; /* thread table, retired statistics, clone tables */
    struct tm_clone_table *clone_tables;            /* registered tables (abi.c) */
    _Atomic(struct tm_clone_index *) clone_index;   /* lock-free lookup index (abi.c) */
    _Atomic(struct tm_tx *) slots[TM_MAX_THREADS];
    _Atomic uint32_t nslots; /* high-water mark of used slots */
    _Atomic uint32_t live;   /* descriptors in use by live threads */
    struct tm_stats retired; /* statistics of ended threads */
    unsigned long retired_threads;
    unsigned max_retries;
    bool htm; /* hardware transactions first (htm.c); set once at start-up */
    pthread_key_t key;
    _Atomic unsigned long se[6]; /* strobe_se_report_t counters, in its order */
    struct tm_block_counts *retired_blocks; /* block counts of ended threads (monitor.c) */
};

TM_HIDDEN extern struct tm_runtime strobe__tm_rt;
TM_HIDDEN extern _Atomic uint64_t strobe__tm_locks[1u << TM_LOCK_BITS];
TM_HIDDEN extern __thread struct tm_tx *strobe__tm_self __attribute__((tls_model("initial-exec")));

static inline _Atomic uint64_t *tm_lock_of(uintptr_t word)
{
    return &strobe__tm_locks[(word >> 3) & ((1u << TM_LOCK_BITS) - 1)];
}

/* Hardware transactions (htm.c). init decides at start-up whether they are
 * used (rt.htm). attempt runs the outermost transaction as one: it returns
 * the ITM actions once the hardware transaction runs, or 0 when the
 * transaction must go to the STM (or to serial mode, tx->next_serial).
 * abort ends the running hardware transaction, which resumes in attempt
 * with `why` (enum tm_htm_abort); commit ends it successfully. */
enum tm_htm_abort { TM_HTM_BUSY = 0xf0, TM_HTM_CANCEL, TM_HTM_IRREVOCABLE, TM_HTM_RETRY };
TM_HIDDEN void strobe__tm_htm_init(void);
TM_HIDDEN uint32_t strobe__tm_htm_attempt(struct tm_tx *tx, uint32_t props);
TM_HIDDEN __attribute__((noreturn)) void strobe__tm_htm_abort(enum tm_htm_abort why);
TM_HIDDEN void strobe__tm_htm_commit(void);

/* The calling thread's descriptor, created on first use. */
TM_HIDDEN struct tm_tx *strobe__tm_tx_slow(void);
static inline struct tm_tx *tm_tx(void)
{
    struct tm_tx *tx = strobe__tm_self;
    return TM_LIKELY(tx != NULL) ? tx : strobe__tm_tx_slow();
}

/* Starts a transaction (called by checkpoint.S with the register
 * checkpoint on its stack); returns the ITM action bits. */
TM_HIDDEN uint32_t strobe__tm_begin(uint32_t props, const struct tm_jmpbuf *jb);
/* Commits the innermost transaction; may abort (never returns then). */
TM_HIDDEN void strobe__tm_commit(struct tm_tx *tx);
/* Aborts the current attempt and restarts it (or, for a cancel, resumes
 * after the cancelled block). Never returns. */
TM_HIDDEN __attribute__((noreturn)) void strobe__tm_abort(struct tm_tx *tx, enum tm_abort_cause cause,
                                                          int culprit);
TM_HIDDEN __attribute__((noreturn)) void strobe__tm_cancel(struct tm_tx *tx, uint32_t reason);
/* Switches the running transaction to irrevocable mode (may restart it). */
TM_HIDDEN void strobe__tm_go_irrevocable(struct tm_tx *tx, enum tm_serial_cause cause);
/* Restores the checkpoint: returns into the atomic block's call site with
 * `action` as _ITM_beginTransaction's result (checkpoint.S). */
TM_HIDDEN __attribute__((noreturn)) void strobe__tm_longjmp(uint32_t action, const struct tm_jmpbuf *jb);

/* Memory management inside transactions (GCC's semantics): a block
 * allocated by the running transaction is released if it aborts or is
 * cancelled; a block released by it is given back only after it commits
 * and once no transaction that might still read the block is running
 * (tm_commit). Outside a transaction, or in an irrevocable one (nothing
 * else runs), alloc_record does nothing and release releases at once. */
TM_HIDDEN void strobe__tm_alloc_record(struct tm_tx *tx, void *p, size_t size, tm_release_fn release);
TM_HIDDEN void strobe__tm_release(struct tm_tx *tx, void *p, size_t size, tm_release_fn release);

/* C++ exceptions in transactions (cxx.c). uncaught_counter: the calling
 * thread's count of uncaught exceptions in the C++ runtime, NULL in a
 * process without one. rollback: undoes the exception handling of the
 * attempt back to checkpoint cp (open catch handlers, the uncaught count,
 * an exception in flight from a failed commit); called before the
 * attempt's allocations are released. */
TM_HIDDEN unsigned *strobe__tm_cxx_uncaught_counter(void);
TM_HIDDEN void strobe__tm_cxx_rollback(struct tm_tx *tx, const struct tm_checkpoint *cp);

/* The barriers' work (tx.c): n = 1..8 bytes at addr that do not cross an
 * 8-byte word boundary. */
TM_HIDDEN uint64_t strobe__tm_load(struct tm_tx *tx, const void *addr, unsigned n);
TM_HIDDEN void strobe__tm_store(struct tm_tx *tx, void *addr, uint64_t val, unsigned n);
TM_HIDDEN void strobe__tm_vec_grow(void *vec, size_t elem);

/* Speculative chunks commit in order (spec.c). wait_turn waits, inside the
 * attempt, until every earlier chunk has committed; it aborts the attempt
 * if a serial transaction or an older chunk needs it out of the way.
 * wait_turn_idle waits outside any attempt. committed passes the turn on. */
TM_HIDDEN void strobe__tm_spec_wait_turn(struct tm_tx *tx);
TM_HIDDEN void strobe__tm_spec_wait_turn_idle(struct tm_tx *tx);
TM_HIDDEN void strobe__tm_spec_committed(struct tm_tx *tx);
TM_HIDDEN bool strobe__tm_spec_is_older(const struct tm_tx *a, const struct tm_tx *b);
/* The call site of the speculative loop a chunk belongs to. */
TM_HIDDEN uintptr_t strobe__tm_spec_site(const struct tm_tx *tx);

static inline void tm_stat_inc(struct tm_tx *tx, enum tm_stat which)
{
    /* single writer: a plain increment made visible to readers */
    _Atomic unsigned long *c = &tx->stats.c[which];
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* One step of a wait for another thread: pause, and after a while yield,
 * since spinning forever on 2 vCPUs starves the thread waited for. */
static inline void tm_wait_step(unsigned *spins)
{
    if (++*spins < 1024)
        __builtin_ia32_pause();
    else
        sched_yield();
}

/* Waits until no serial transaction runs or waits to run. */
static inline void tm_wait_serial(void)
{
    unsigned spins = 0;
    while (atomic_load_explicit(&strobe__tm_rt.serial, memory_order_acquire))
        tm_wait_step(&spins);
}

/* Slot of key in an open-addressing table of 2^bits slots (bits >= 1):
 * Fibonacci hashing, the top bits of the key times 2^64 / phi. */
static inline size_t tm_hash(uint64_t key, unsigned bits)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

/* Frames below the innermost checkpoint's stack pointer were created
 * inside the transaction: their memory needs neither locks nor undo. */
static inline uintptr_t tm_live_stack_top(const struct tm_tx *tx)
{
    return (uintptr_t)tx->cps.v[tx->cps.n - 1].jb.cfa;
}

#define tm_vec_push(vec, item)                                                                     \
    do {                                                                                           \
        if (TM_UNLIKELY((vec).n == (vec).cap))                                                     \
            strobe__tm_vec_grow(&(vec), sizeof *(vec).v);                                          \
        (vec).v[(vec).n++] = (item);                                                               \
    } while (0)

#endif /* STROBE_TM_TX_H */
