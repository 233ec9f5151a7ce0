/* SPDX-License-Identifier: MIT */
/*
 * Clock offsets to rank 0 (clocks.h), Score-P's scheme (Knüpfer et al.,
 * "Score-P: a joint performance measurement run-time infrastructure",
 * 2012, timer synchronization; the same as Doleschal et al., "Internal
 * timer synchronization for parallel event tracing", 2008): each rank in
 * turn makes ping-pongs with rank 0 (at least 10, more while they get
 * shorter); rank 0 answers each ping with its clock, and the rank keeps
 * the round trip that was shortest, which bounds the error of
 * offset = t_reply - (t_send + t_receive) / 2 by half of it. Done at MPI_Init and at MPI_Finalize so that readers can
 * interpolate linearly between the two (a drifting clock).
 *
 * The ticks are those of the calling thread's stream (strobe_adapter_ticks):
 * readers convert them with each process's own tick->ns line, so the
 * record needs no clock of its own. The ping-pongs run on a duplicate of
 * MPI_COMM_WORLD, so they cannot match an application's messages, and
 * through PMPI, so they are not recorded as the application's.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adapters/mpi/clocks.h"
#include "adapters/mpi/trace.h"

/* Score-P makes 10; the shortest of them is within a few hundred ns of
 * the fastest possible on a quiet network. On a loaded machine (ranks
 * waiting for a CPU) a round trip can take tens of µs, so a rank goes on
 * while the shortest keeps improving: until PATIENCE trips in a row did
 * not beat it, at most MAX_TRIPS. */
#define MIN_TRIPS 10
#define PATIENCE 10
#define MAX_TRIPS 200

static MPI_Comm g_comm = MPI_COMM_NULL; /* the duplicate, while measuring */

static void define(unsigned when, int rank, int trips, uint64_t send, uint64_t rtt, uint64_t reply)
{
    uint8_t buf[7 * 10], *p = buf;
    p = strobe_uleb_put(p, when);
    p = strobe_uleb_put(p, (uint64_t)rank);
    p = strobe_uleb_put(p, 0); /* reference rank */
    p = strobe_uleb_put(p, (uint64_t)trips);
    p = strobe_uleb_put(p, send);
    p = strobe_uleb_put(p, rtt);
    p = strobe_uleb_put(p, reply);
    strobe_adapter_define(STROBE_DEF_CLOCK_OFFSET, buf, (size_t)(p - buf));
}

/* Rank 0's side: answers every ping of every rank, in rank order, until
 * the rank says it is done (a ping of 0). */
static void serve(int size)
{
    for (int r = 1; r < size; r++)
        for (;;) {
            uint64_t t;
            PMPI_Recv(&t, 1, MPI_UINT64_T, r, 0, g_comm, MPI_STATUS_IGNORE);
            if (!t)
                break;
            t = strobe_adapter_ticks();
            PMPI_Send(&t, 1, MPI_UINT64_T, r, 0, g_comm);
        }
}

/* A rank's side: the round trip with the fewest ticks. */
static void ping(unsigned when, int rank)
{
    uint64_t best_send = 0, best_rtt = UINT64_MAX, best_reply = 0, more = 1, done = 0;
    int trips = 0;
    for (int since_best = 0; trips < MAX_TRIPS && (trips < MIN_TRIPS || since_best < PATIENCE); trips++) {
        uint64_t t0 = strobe_adapter_ticks(), reply;
        PMPI_Send(&more, 1, MPI_UINT64_T, 0, 0, g_comm);
        PMPI_Recv(&reply, 1, MPI_UINT64_T, 0, 0, g_comm, MPI_STATUS_IGNORE);
        uint64_t t1 = strobe_adapter_ticks();
        since_best++;
        if (t0 && t1 >= t0 && t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            best_send = t0;
            best_reply = reply;
            since_best = 0;
        }
    }
    PMPI_Send(&done, 1, MPI_UINT64_T, 0, 0, g_comm);
    if (best_rtt != UINT64_MAX && best_reply)
        define(when, rank, trips, best_send, best_rtt, best_reply);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void strobe__mpi_clock_offsets(unsigned when)
{
    uint64_t start = now_ns();
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (when == STROBE_CLOCK_OFFSET_INIT) {
        /* A rank that is not measured (its runtime is off) would make
         * the others wait for answers it never sends, or ping a rank 0
         * that never serves: all ranks measure or none. */
        int all = strobe__mpi_tracing, everyone = 0;
        if (PMPI_Allreduce(&all, &everyone, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS ||
            !everyone || PMPI_Comm_dup(MPI_COMM_WORLD, &g_comm) != MPI_SUCCESS)
            return;
    } else if (g_comm == MPI_COMM_NULL) {
        return;
    }
    if (rank == 0) {
        uint64_t now = strobe_adapter_ticks();
        if (now)
            define(when, 0, 0, now, 0, now);
        serve(size);
    } else {
        ping(when, rank);
    }
    if (when == STROBE_CLOCK_OFFSET_FINALIZE)
        PMPI_Comm_free(&g_comm);
    /* what it cost, for bench/merge.sh (docs/performance.md) */
    const char *verbose = getenv("STROBE_MPI_VERBOSE");
    if (verbose && verbose[0] && strcmp(verbose, "0") != 0)
        fprintf(stderr, "strobe-mpi: rank %d: clock offsets at %s took %.1f us\n", rank,
                when == STROBE_CLOCK_OFFSET_INIT ? "MPI_Init" : "MPI_Finalize",
                (double)(now_ns() - start) / 1e3);
}
