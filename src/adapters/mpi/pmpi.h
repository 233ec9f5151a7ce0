/* SPDX-License-Identifier: MIT */
/*
 * The live counters of libstrobe-mpi.so (pmpi.c) as the generated
 * wrappers use them: STROBE__MPI_COUNT after a successful call, started by
 * MPI_Init and stopped by MPI_Finalize. Internal to the library.
 */
#ifndef STROBE_ADAPTERS_MPI_PMPI_H
#define STROBE_ADAPTERS_MPI_PMPI_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "adapters/mpi/counters.h"

#define WRAPPER __attribute__((visibility("default")))

/* NULL until MPI_Init has published the set, and again from MPI_Finalize
 * on. */
extern const struct strobe__mpi_counters *_Atomic strobe__mpi_live;
/* When the set is next stamped (coarse monotonic ns). */
extern _Atomic uint64_t strobe__mpi_next_tick;

/* Publishes the set (after PMPI_Init) / unpublishes it (before
 * PMPI_Finalize: no other thread may use MPI any more then). */
void strobe__mpi_live_start(void);
void strobe__mpi_live_stop(void);

/* Stamps the set and beats the heart; a thread that finds another one
 * doing it returns at once. */
void strobe__mpi_tick(uint64_t now);

static inline uint64_t strobe__mpi_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The counters when fn is being counted, else NULL. */
static inline const struct strobe__mpi_counters *strobe__mpi_counting(enum strobe__mpi_fn fn)
{
    const struct strobe__mpi_counters *c = atomic_load_explicit(&strobe__mpi_live, memory_order_acquire);
    return c && c->counted[fn] ? c : NULL;
}

static inline void strobe__mpi_count_call(const struct strobe__mpi_counters *c, enum strobe__mpi_fn fn,
                                          uint64_t bytes)
{
    strobe__mpi_count(c, fn, bytes);
    uint64_t now = strobe__mpi_coarse_ns();
    if (__builtin_expect(now >= atomic_load_explicit(&strobe__mpi_next_tick, memory_order_relaxed), 0))
        strobe__mpi_tick(now);
}

/* Counts fn with the bytes expression evaluated only when the query needs
 * it: in a wrapper after the real call succeeded (MPI_Finalize: before it
 * runs, since it ends counting). */
#define STROBE__MPI_COUNT(fn, bytes_expr)                                                                    \
    do {                                                                                                     \
        const struct strobe__mpi_counters *c_ = strobe__mpi_counting(fn);                                    \
        if (c_)                                                                                              \
            strobe__mpi_count_call(c_, fn, c_->need_size[fn] ? (uint64_t)(bytes_expr) : 0);                  \
    } while (0)

#endif
