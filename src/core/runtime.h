/* SPDX-License-Identifier: MIT */
/*
 * The runtime context: the one place where libstrobe.so keeps process-wide
 * mutable state (configuration, experiment directories, the defs writer,
 * the region/metric/module registry, the thread list, real libc entry
 * points). Per-thread state lives in struct strobe__thread (thread.h).
 *
 * Locking: `lock` protects everything below it in the struct; it is taken
 * only on slow paths (registration, chunk switches, thread start/end) and
 * never by the per-event hot path. The runtime never holds it while
 * calling into the program. `state` is read with a relaxed load on every
 * event; it changes only at start-up, at exit and at fork.
 *
 * Lifecycle (`state`):
 *   UNINIT -> INITIALIZING -> ACTIVE -> FINISHED   (exit)
 *                          -> OFF                   (STROBE_ENABLE=0, bad
 *                                                    configuration, no
 *                                                    experiment directory)
 */
#ifndef STROBE_CORE_RUNTIME_H
#define STROBE_CORE_RUNTIME_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/format.h"
#include "core/bb.h"
#include "core/malloc.h"
#include "core/mfile.h"
#include "core/sync.h"
#include "strobe/strobe.h"

enum strobe__state {
    STROBE__UNINIT = 0,
    STROBE__INITIALIZING = 1,
    STROBE__ACTIVE = 2,
    STROBE__OFF = 3,
    STROBE__FINISHED = 4,
};

#define STROBE__MAX_THREAD_END_HOOKS 8

/* Defaults of the environment switches (docs in runtime.c). */
#define STROBE__TRACE_LIMIT_DEFAULT (1ull << 30)
#define STROBE__PROFILE_LIMIT_DEFAULT (64ull << 20)

struct strobe__config {
    bool trace;             /* STROBE_TRACE */
    bool profile;           /* STROBE_PROFILE */
    bool locks;             /* STROBE_LOCKS */
    bool locks_all;         /* STROBE_LOCKS=all: sync_all from the start */
    int clock_kind;         /* enum strobe_clock_kind (STROBE_CLOCK) */
    uint32_t chunk_size;    /* STROBE_CHUNK_SIZE */
    uint64_t trace_limit;   /* STROBE_TRACE_LIMIT, bytes per stream, 0 = none */
    uint64_t profile_limit; /* STROBE_PROFILE_LIMIT, bytes per profile file */
    bool malloc;            /* STROBE_MALLOC */
    uint64_t malloc_large;  /* STROBE_MALLOC_LARGE */
    uint32_t sample_hz;     /* STROBE_SAMPLE, 0 = no sampling */
    int sample_source;      /* STROBE_SAMPLE_SOURCE: enum strobe_sample_source */
    int64_t test_clock_shift_ns;  /* STROBE_TEST_CLOCK_SHIFT_NS (test hook) */
    int64_t test_clock_drift_ppm; /* STROBE_TEST_CLOCK_DRIFT_PPM (test hook) */
};

/* A loaded object (executable, shared library) as written in a MODULE
 * record. Symbols are only loaded when a filter needs function names. */
struct strobe__module {
    uint64_t lo, hi; /* [lo, hi): union of its PT_LOAD segments */
    uint64_t bias;
    uint64_t path_hash; /* identity together with lo/hi (dlclose + dlopen) */
    uint32_t sym_first; /* its slice of strobe__rt.syms, sorted by addr */
    uint32_t sym_count;
};

/* A function symbol of a module: runtime address, offset of its name in
 * strobe__rt.names, STROBE__SYM_* flags (symbols.h). */
struct strobe__symbol {
    uint64_t addr;
    uint32_t name;
    uint32_t flags;
};

/* Process table entry: function address -> region id (0 = excluded by the
 * filter). addr 0 = empty slot. */
struct strobe__addr_slot {
    uintptr_t addr;
    uint32_t id;
    uint32_t unused;
};

/* pthread_t -> thread index, for THREAD_JOIN records. */
struct strobe__join_slot {
    pthread_t thread;
    uint32_t index_plus1; /* 0 = empty slot */
    uint32_t unused;
};

struct strobe_filter;
struct strobe__thread;
struct strobe__dw;

struct strobe__runtime {
    /* Read by every event: on a cache line of its own with read-mostly
     * neighbours, away from the counters below that threads write. */
    _Alignas(64) _Atomic int state; /* enum strobe__state */
    struct strobe__config cfg;
    uint32_t mode; /* STROBE__MODE_* bits for new threads (thread.h) */
    /* Task-graph synchronization recording (sync.c): every interposed call
     * is recorded with a ticket. Set by the first module registered for
     * block tracing (bb.c) unless STROBE_LOCKS=0; never cleared. */
    _Atomic bool sync_all;
    pid_t pid;
    struct strobe_filter *filter; /* STROBE_FILTER, NULL = measure everything */
    uint64_t overhead_ticks;      /* self-measured cost of one event */
    pthread_key_t thread_key;     /* its destructor ends threads that exit unseen */

    /* Exit status for PROCESS_END, from the exit() wrapper or main()'s
     * return value (see runtime.c). */
    _Atomic int exit_status;
    _Atomic bool exit_known;
    int (*real_main)(int, char **, char **);

    /* strobe_adapter_at_thread_end: called on each thread before its
     * measurement ends. Appended once each, read without the lock. */
    void (*thread_end_hooks[STROBE__MAX_THREAD_END_HOOKS])(int process_exit);
    _Atomic uint32_t nthread_end_hooks;

    /* Real implementations behind the interposed functions. */
    int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    int (*real_pthread_join)(pthread_t, void **);
    int (*real_pthread_tryjoin_np)(pthread_t, void **);
    int (*real_pthread_timedjoin_np)(pthread_t, void **, const struct timespec *);
    void (*real_pthread_exit)(void *) __attribute__((noreturn));
    pid_t (*real_fork)(void);
    void (*real_exit)(int) __attribute__((noreturn));
    void *(*real_dlopen)(const char *, int);
    int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
    void (*(*real_signal)(int, void (*)(int)))(int);
    struct strobe__sync_real sync; /* sync.c */

    /* Sampling (sample.h): fixed after start-up, except prog_sigprof,
     * which the sigaction wrapper changes under `lock`. */
    _Atomic bool sampling;
    _Atomic bool sample_use_timer; /* perf_event_open was refused: CPU-time timers */
    uint32_t sample_metric;        /* id of "strobe.samples" */
    strobe_metric_t sample_metric_handle;
    struct sigaction prog_sigprof; /* the program's SIGPROF disposition */

    /* Allocation tracking (malloc.h): its own locks, not `lock`. */
    struct strobe__mem mem;

    /* Directories: all fixed after start-up (re-set in a fork child). */
    char exp_dir[PATH_MAX]; /* absolute */
    char proc_name[64];     /* proc-<pid>[-<n>] */
    char exe[PATH_MAX];     /* /proc/self/exe */
    int proc_fd;            /* the process directory, O_DIRECTORY */

    /* The last synchronization ticket handed out (strobe__sync_ticket), on
     * a cache line of its own: every thread increments it in task-graph
     * recording. */
    _Alignas(64) _Atomic uint64_t sync_ticket;

    _Alignas(64) _Atomic uint32_t next_index; /* thread index of the next created thread */
    /* Exits of regions that were not on the stack (ignored); kept for a
     * debugger, the format has no place for it. */
    _Atomic uint64_t unmatched_exits;

    pthread_mutex_t lock;
    /* ---- everything below is protected by lock ---- */
    struct strobe__mfile defs;
    uint8_t *defs_pos;
    uint64_t last_sync_ns; /* CLOCK_MONOTONIC of the latest CLOCK_SYNC */

    uint32_t region_count; /* ids 1..region_count are taken */
    uint32_t metric_count; /* ids 1..metric_count are taken */
    struct strobe__addr_slot *addrs;
    size_t addrs_cap, addrs_used;

    struct strobe__module *modules;
    size_t nmodules, modules_cap;
    struct strobe__symbol *syms;
    size_t nsyms, syms_cap;
    char *names;
    size_t names_len, names_cap;
    struct strobe__dw *dw; /* libdw entry points once loaded (symbols.c) */

    struct strobe__thread *threads; /* every thread with open files */
    struct strobe__join_slot *joins;
    size_t joins_cap, joins_used;

    /* Block tracing (bb.h; partly read without the lock, as it says). */
    struct strobe__bb bb;
};

extern struct strobe__runtime strobe__rt;

static inline bool strobe__active(void)
{
    return atomic_load_explicit(&strobe__rt.state, memory_order_relaxed) == STROBE__ACTIVE;
}

/* Whether every synchronization call is recorded (task-graph recording,
 * sync_all; on from the start with STROBE_LOCKS=all). One relaxed load: a
 * thread that sees the switch a few calls late records those calls as the
 * default mode does; a lock taken before the switch may have its release
 * recorded without its acquire. */
static inline bool strobe__sync_all(void)
{
    return atomic_load_explicit(&strobe__rt.sync_all, memory_order_relaxed);
}

/* The next synchronization ticket (format.h, STROBE_EXT_SYNC): 1, 2, ...
 * process-wide. A relaxed read-modify-write is enough for the order the
 * tickets promise, consistency with happens-before: all RMWs of one atomic
 * object are in one total modification order, each RMW reads the value
 * just before its own in it (C11 7.17.7.5, "atomic_fetch_add"), and that
 * order agrees with happens-before (write-write coherence, C11 5.1.2.4
 * #19). So when the call taking ticket a happens before the call taking
 * ticket b (program order, or a release passed on by the pthread object to
 * the acquire that waits for it), a < b. The counter publishes nothing
 * else, so it needs no acquire or release of its own: the pthread objects
 * do the synchronizing. Thread-safe and async-signal-safe. */
static inline uint64_t strobe__sync_ticket(void)
{
    return atomic_fetch_add_explicit(&strobe__rt.sync_ticket, 1, memory_order_relaxed) + 1;
}

/* Starts the runtime if nobody has yet (the constructor normally did).
 * Returns the resulting state. Thread-safe; a call made while another
 * thread, or this one further up its stack, is starting the runtime
 * returns INITIALIZING at once instead of waiting. */
int strobe__runtime_ensure(void);

/* Runs the strobe_adapter_at_thread_end hooks on the calling thread
 * (while its measurement is still on). */
void strobe__run_thread_end_hooks(int process_exit);

/* The next definition of `name` after this library's (dlsym RTLD_NEXT),
 * cached in *slot: a wrapper can run before the runtime's constructor. */
void *strobe__real(void **slot, const char *name);

/* The C library's dlopen, for the runtime's own (which must not pass
 * through the wrapper in interpose.c: it may run under `lock`). */
void *strobe__real_dlopen(const char *file, int mode);

/* Writes a CLOCK_SYNC point unless one was written less than min_gap_ns
 * ago (0 = always). Caller holds lock. */
void strobe__clock_sync_locked(uint64_t min_gap_ns);

#endif
