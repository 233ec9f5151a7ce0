/* SPDX-License-Identifier: MIT */
/*
 * The synchronization model behind `strobe report --locks`: per lock
 * object and acquiring call path, and per barrier, what the interposer
 * (src/core/sync.c) counted in the threads' profile SYNC slots, merged over
 * threads. Objects are named by their ELF symbol when they are globals
 * (symbols.h), else by their address.
 */
#ifndef STROBE_ANALYSIS_LOCKS_H
#define STROBE_ANALYSIS_LOCKS_H

#include "analysis/experiment.h"

/* A thread's share of a row. */
struct strobe_lock_thread {
    uint32_t thread; /* global thread index */
    uint64_t acquisitions;
};

/* One object (mutex, rwlock, spin lock, semaphore, condition variable)
 * used from one call path. */
struct strobe_lock_row {
    uint32_t process;
    uint32_t kind;                    /* enum strobe_sync_kind (format.h) */
    uint64_t object;                  /* run-time address in its process */
    char *name;                       /* symbol of a global object, NULL otherwise */
    uint32_t *path;                   /* global region ids, outermost first */
    uint32_t depth;                   /* 0: outside every measured region */
    uint64_t acquisitions, contended; /* condition variables: waits, all contended */
    uint64_t wait_ns, max_wait_ns;
    /* Total hold time, estimated from the timed holds (hold_samples of the
     * acquisitions, format.h) scaled to all acquisitions; 0 with no sample
     * (semaphores, condition variables). */
    uint64_t hold_ns;
    uint64_t hold_samples;
    struct strobe_lock_thread *threads; /* by thread index */
    size_t nthreads;
};

/* One barrier, over all call paths. */
struct strobe_barrier_row {
    uint32_t process;
    uint64_t object;
    char *name;
    uint64_t episodes; /* the most waits of one thread */
    uint64_t waits;    /* over all threads */
    uint64_t wait_ns, max_wait_ns;
    size_t nthreads;
};

/* Where threads waited on one object: every wait the trace recorded
 * (SYNC records), by the first frame of its stack outside the runtime. It
 * names the waiting code even in a program without instrumentation. */
struct strobe_lock_site {
    uint32_t process;
    uint32_t kind; /* enum strobe_sync_kind */
    uint64_t object;
    char *name;     /* symbol of a global object, NULL otherwise */
    char *function; /* the waiting function ("module+0xoffset" without a symbol) */
    char *file;     /* "" when unknown */
    unsigned line;  /* of the waiting call, 0 when unknown */
    uint64_t waits, wait_ns, max_wait_ns;
};

struct strobe_lock_model {
    struct strobe_lock_row *rows; /* by wait time, longest first */
    size_t nrows;
    struct strobe_barrier_row *barriers; /* by wait time, longest first */
    size_t nbarriers;
    size_t profiled_threads;        /* threads with a profile file (the only source) */
    struct strobe_lock_site *sites; /* by wait time, longest first; from the
                                       traces (records with frames) */
    size_t nsites;
};

/* Builds the model from every thread's profile file, and the sites from
 * their traces. Returns 0 and *out
 * (free with strobe_lock_model_free) or a negative code with a one-line
 * message in eb. */
int strobe_lock_model_build(const struct strobe_experiment *exp, struct strobe_lock_model **out,
                            struct strobe_errbuf *eb);
void strobe_lock_model_free(struct strobe_lock_model *m);

#endif
