/* SPDX-License-Identifier: MIT */
/*
 * The live half of libstrobe-mpi.so, the MPI application profiler of seed
 * 002, section 4.2: calls and bytes per function counted into a metric
 * set published in the node's shared-memory index (section 4.3), where
 * strobed's `shm` sampler and `strobe ls` read it live.
 * docs/mpi-profiler.md is the user's guide. The MPI_* wrappers that call
 * it are generated (gen_wrappers.py); the trace half is trace.c.
 *
 * MPI_Init/MPI_Init_thread read STROBE_MPI_QUERY and publish the set;
 * MPI_Finalize unpublishes it. In between, each counted wrapper does O(1)
 * work after the real call: a relaxed load to see whether the function is
 * counted, at most one PMPI_Type_size_x, one or two relaxed atomic adds
 * into the set, and one coarse-clock read (about 3 ns through the vDSO)
 * that, every TICK_NS, stamps the set and, every HEARTBEAT_NS, tells the
 * index the process is alive. No locks, no allocation, and no system call
 * outside those rare ticks.
 *
 * Only the MPI_* wrappers are exported (-fvisibility=hidden and
 * exports.map); the library's own PMPI calls do not come back through the
 * wrappers, so the profiler never counts itself. Calls are counted when
 * they return MPI_SUCCESS (an erroneous datatype is then never handed to
 * PMPI_Type_size_x); MPI_Finalize is counted before it runs, since the set
 * is gone afterwards.
 */
#include <errno.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adapters/mpi/pmpi.h"
#include "strobe/shm.h"

/* How often the set's transaction stamp (timestamp, data generation) is
 * refreshed, and how often the index hears from the process. */
#define TICK_NS 100000000ull       /* 100 ms */
#define HEARTBEAT_NS 1000000000ull /* 1 s */

/* The release store in start() pairs with the acquire load in
 * strobe__mpi_counting(). */
const struct strobe__mpi_counters *_Atomic strobe__mpi_live;
static struct strobe__mpi_counters g_counters;
static strobe_shm_pub *g_pub;
/* This process stamps the set: always for a per-rank set; for a set that
 * the ranks of a node share, only the node's first rank, because
 * strobe_set_end's generation increment is a plain read-modify-write and
 * two processes doing it at once could make the generation go back. */
static int g_stamps;
_Atomic uint64_t strobe__mpi_next_tick;
/* Only touched by the thread holding g_tick_busy. */
static uint64_t g_next_heartbeat;
static atomic_int g_tick_busy;

/* Stamps the set and beats the heart. A try-lock rather than a lock: a
 * thread that finds another one ticking has nothing left to do, so it
 * never waits. The acquire/release pair hands g_next_heartbeat and the
 * set's header from one ticking thread to the next. */
void strobe__mpi_tick(uint64_t now)
{
    if (atomic_exchange_explicit(&g_tick_busy, 1, memory_order_acquire))
        return;
    /* another thread may have ticked between our check and the exchange */
    if (now >= atomic_load_explicit(&strobe__mpi_next_tick, memory_order_relaxed)) {
        atomic_store_explicit(&strobe__mpi_next_tick, now + TICK_NS, memory_order_relaxed);
        /* The values are updated in place between stamps: the empty
         * transaction only refreshes the timestamp and data generation a
         * reader compares, it does not order the adds. */
        if (g_stamps) {
            strobe_set_begin(g_counters.set);
            strobe_set_end(g_counters.set);
        }
        if (now >= g_next_heartbeat) {
            g_next_heartbeat = now + HEARTBEAT_NS;
            strobe_shm_heartbeat(g_pub);
        }
    }
    atomic_store_explicit(&g_tick_busy, 0, memory_order_release);
}

/* ---- start and stop ---------------------------------------------------------- */

/* Rank 0 alone reports problems that every rank has (a bad query), so that
 * a thousand-rank job prints one line. */
void strobe__mpi_live_start(void)
{
    int rank = 0, size = 1, rc;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);

    const char *text = getenv("STROBE_MPI_QUERY");
    if (!text || !text[0])
        text = STROBE__MPI_QUERY_DEFAULT;
    struct strobe__mpi_query q;
    char err[256];
    if (strobe__mpi_query_parse(text, &q, err, sizeof err) < 0) {
        if (rank == 0)
            fprintf(stderr, "strobe-mpi: STROBE_MPI_QUERY: %s; not profiling\n", err);
        return;
    }

    /* The node's first rank stamps an aggregated set. Every rank of the
     * job takes part in this collective (all parse the same query), which
     * is why every rank must load the library. */
    int stamps = 1;
    if (!q.per_rank) {
        MPI_Comm node;
        if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
            MPI_SUCCESS) {
            int node_rank = 0;
            PMPI_Comm_rank(node, &node_rank);
            stamps = node_rank == 0;
            PMPI_Comm_free(&node);
        }
    }

    char producer[STROBE_SET_NAME_MAX + 1], job[STROBE_SET_NAME_MAX + 1];
    const char *env = getenv("STROBE_MPI_PRODUCER");
    if (env && env[0]) {
        snprintf(producer, sizeof producer, "%s", env);
    } else if (gethostname(producer, sizeof producer) != 0 || !producer[0]) {
        snprintf(producer, sizeof producer, "localhost");
    }
    producer[sizeof producer - 1] = 0;
    /* The launcher's process on this node (mpirun, orted, slurmstepd,
     * hydra_pmi_proxy) is the parent of every local rank of one job and
     * of no rank of another: it names the job in the node's index without
     * knowing the launcher or communicating. */
    env = getenv("STROBE_MPI_JOB");
    if (env && env[0])
        snprintf(job, sizeof job, "%s", env);
    else
        snprintf(job, sizeof job, "%ld", (long)getppid());

    char instance[STROBE_SET_NAME_MAX + 1];
    rc = strobe__mpi_instance(instance, sizeof instance, producer, job, q.per_rank, rank);
    if (rc < 0) {
        fprintf(stderr,
                "strobe-mpi: rank %d: cannot name the set (producer '%s', job '%s'): %s; not profiling\n",
                rank, producer, job, strerror(-rc));
        return;
    }
    strobe_schema *schema;
    rc = strobe__mpi_schema_new(&q, &schema);
    strobe_set *set = NULL;
    if (rc == 0) {
        rc = strobe_shm_publish(NULL, schema, producer, instance, &g_pub, &set);
        strobe_schema_free(schema);
    }
    if (rc == 0 && (rc = strobe__mpi_counters_bind(&g_counters, &q, set)) < 0)
        strobe_shm_unpublish(g_pub);
    if (rc < 0) {
        fprintf(stderr, "strobe-mpi: rank %d: cannot publish %s: %s; not profiling\n", rank, instance,
                rc == -EEXIST ? "the index holds a set of that name for another query" : strobe_strerror(rc));
        return;
    }
    g_stamps = stamps;
    if (stamps) {
        strobe__mpi_counters_identify(&g_counters, (uint64_t)rank, (uint64_t)size);
        /* the first stamp makes the set consistent: readers skip sets
         * that never were */
        strobe_set_begin(set);
        strobe_set_end(set);
    }
    uint64_t now = strobe__mpi_coarse_ns();
    g_next_heartbeat = now + HEARTBEAT_NS;
    atomic_store_explicit(&strobe__mpi_next_tick, now + TICK_NS, memory_order_relaxed);
    atomic_store_explicit(&strobe__mpi_live, &g_counters, memory_order_release);

    env = getenv("STROBE_MPI_VERBOSE");
    if (env && env[0] && strcmp(env, "0") != 0) {
        char canon[1024];
        if (strobe__mpi_query_format(&q, canon, sizeof canon) < 0)
            snprintf(canon, sizeof canon, "%s", text);
        fprintf(stderr, "strobe-mpi: rank %d: publishing %s: %s\n", rank, instance, canon);
    }
}

/* The MPI standard has MPI_Finalize called once every other thread is
 * done with MPI, so no wrapper can still be using the set. */
void strobe__mpi_live_stop(void)
{
    const struct strobe__mpi_counters *c =
        atomic_exchange_explicit(&strobe__mpi_live, NULL, memory_order_acq_rel);
    if (!c)
        return;
    if (g_stamps) {
        strobe_set_begin(c->set);
        strobe_set_end(c->set);
    }
    strobe_shm_unpublish(g_pub);
    g_pub = NULL;
}
