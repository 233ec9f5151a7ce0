/* SPDX-License-Identifier: MIT */
/*
 * libstrobe-mpi.so: the MPI application profiler of seed 002, section 4.2.
 * Loaded with LD_PRELOAD into an unmodified, dynamically linked MPI
 * program, it defines the MPI_* entry points, calls the real ones through
 * the PMPI profiling interface, and counts calls and bytes per function
 * into a metric set published in the node's shared-memory index (section
 * 4.3), where strobed's `shm` sampler and `strobe ls` read it live.
 * docs/mpi-profiler.md is the user's guide.
 *
 * MPI_Init/MPI_Init_thread read STROBE_MPI_QUERY and publish the set;
 * MPI_Finalize unpublishes it. In between, each wrapper does O(1) work
 * after the real call: a relaxed load to see whether the function is
 * counted, at most one PMPI_Type_size_x, one or two relaxed atomic adds
 * into the set, and one coarse-clock read (about 3 ns through the vDSO) that,
 * every TICK_NS, stamps the set and, every HEARTBEAT_NS, tells the index
 * the process is alive. No locks, no allocation, and no system call
 * outside those rare ticks.
 *
 * Only the MPI_* wrappers are exported (-fvisibility=hidden and
 * exports.map); the
 * library's own PMPI calls do not come back through the wrappers, so the
 * profiler never counts itself. Calls are counted when they return
 * MPI_SUCCESS (an erroneous datatype is then never handed to
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

#include "adapters/mpi/counters.h"
#include "strobe/shm.h"

#define WRAPPER __attribute__((visibility("default")))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* How often the set's transaction stamp (timestamp, data generation) is
 * refreshed, and how often the index hears from the process. */
#define TICK_NS 100000000ull       /* 100 ms */
#define HEARTBEAT_NS 1000000000ull /* 1 s */

/* NULL until MPI_Init has published the set, and again from MPI_Finalize
 * on. The release store in start() pairs with the acquire load in
 * counting(): a wrapper that sees the pointer sees the bound counters. */
static const struct strobe__mpi_counters *_Atomic g_active;
static struct strobe__mpi_counters g_counters;
static strobe_shm_pub *g_pub;
/* This process stamps the set: always for a per-rank set; for a set that
 * the ranks of a node share, only the node's first rank, because
 * strobe_set_end's generation increment is a plain read-modify-write and
 * two processes doing it at once could make the generation go back. */
static int g_stamps;
static _Atomic uint64_t g_next_tick;
/* Only touched by the thread holding g_tick_busy. */
static uint64_t g_next_heartbeat;
static atomic_int g_tick_busy;

static uint64_t coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Stamps the set and beats the heart. A try-lock rather than a lock: a
 * thread that finds another one ticking has nothing left to do, so it
 * never waits. The acquire/release pair hands g_next_heartbeat and the
 * set's header from one ticking thread to the next. */
static __attribute__((noinline)) void tick(uint64_t now)
{
    if (atomic_exchange_explicit(&g_tick_busy, 1, memory_order_acquire))
        return;
    /* another thread may have ticked between our check and the exchange */
    if (now >= atomic_load_explicit(&g_next_tick, memory_order_relaxed)) {
        atomic_store_explicit(&g_next_tick, now + TICK_NS, memory_order_relaxed);
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

/* The counters when fn is being counted, else NULL. */
static inline const struct strobe__mpi_counters *counting(enum strobe__mpi_fn fn)
{
    const struct strobe__mpi_counters *c = atomic_load_explicit(&g_active, memory_order_acquire);
    return c && c->counted[fn] ? c : NULL;
}

static inline void count_call(const struct strobe__mpi_counters *c, enum strobe__mpi_fn fn, uint64_t bytes)
{
    strobe__mpi_count(c, fn, bytes);
    uint64_t now = coarse_ns();
    if (UNLIKELY(now >= atomic_load_explicit(&g_next_tick, memory_order_relaxed)))
        tick(now);
}

/* Bytes of count elements of type; 0 when the size is unknown or does not
 * fit (MPI_UNDEFINED). */
static uint64_t msg_bytes(int count, MPI_Datatype type)
{
    if (count <= 0)
        return 0;
#if MPI_VERSION >= 3
    MPI_Count size;
    if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
#else
    int size;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
#endif
    return (uint64_t)count * (uint64_t)size;
}

/* After the real call returned rc: count fn when rc is MPI_SUCCESS, with
 * the bytes expression evaluated only when the query needs it. */
#define COUNT(fn, bytes_expr)                                                                                \
    do {                                                                                                     \
        const struct strobe__mpi_counters *c_ = counting(fn);                                                \
        if (c_ && rc == MPI_SUCCESS)                                                                         \
            count_call(c_, fn, c_->need_size[fn] ? (uint64_t)(bytes_expr) : 0);                              \
    } while (0)

/* ---- start and stop ---------------------------------------------------------- */

/* Rank 0 alone reports problems that every rank has (a bad query), so that
 * a thousand-rank job prints one line. */
static void start(void)
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
    uint64_t now = coarse_ns();
    g_next_heartbeat = now + HEARTBEAT_NS;
    atomic_store_explicit(&g_next_tick, now + TICK_NS, memory_order_relaxed);
    atomic_store_explicit(&g_active, &g_counters, memory_order_release);

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
static void stop(void)
{
    const struct strobe__mpi_counters *c = atomic_exchange_explicit(&g_active, NULL, memory_order_acq_rel);
    if (!c)
        return;
    if (g_stamps) {
        strobe_set_begin(c->set);
        strobe_set_end(c->set);
    }
    strobe_shm_unpublish(g_pub);
    g_pub = NULL;
}

/* ---- setup and teardown ------------------------------------------------------ */

WRAPPER int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        start();
    COUNT(STROBE__MPI_INIT, 0);
    return rc;
}

WRAPPER int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        start();
    COUNT(STROBE__MPI_INIT_THREAD, 0);
    return rc;
}

WRAPPER int MPI_Finalize(void)
{
    int rc = MPI_SUCCESS;
    COUNT(STROBE__MPI_FINALIZE, 0);
    stop();
    return PMPI_Finalize();
}

/* ---- point-to-point: bytes of the buffer the call sends or receives into --- */

WRAPPER int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int rc = PMPI_Send(buf, count, type, dest, tag, comm);
    COUNT(STROBE__MPI_SEND, msg_bytes(count, type));
    return rc;
}

WRAPPER int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int rc = PMPI_Ssend(buf, count, type, dest, tag, comm);
    COUNT(STROBE__MPI_SSEND, msg_bytes(count, type));
    return rc;
}

WRAPPER int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int rc = PMPI_Bsend(buf, count, type, dest, tag, comm);
    COUNT(STROBE__MPI_BSEND, msg_bytes(count, type));
    return rc;
}

WRAPPER int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int rc = PMPI_Rsend(buf, count, type, dest, tag, comm);
    COUNT(STROBE__MPI_RSEND, msg_bytes(count, type));
    return rc;
}

WRAPPER int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
    COUNT(STROBE__MPI_ISEND, msg_bytes(count, type));
    return rc;
}

WRAPPER int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                       MPI_Request *req)
{
    int rc = PMPI_Issend(buf, count, type, dest, tag, comm, req);
    COUNT(STROBE__MPI_ISSEND, msg_bytes(count, type));
    return rc;
}

/* A receive counts the buffer it posts (count x type), not the possibly
 * shorter message that arrives: the same rule for Recv and Irecv, known
 * when the call is made, and no status to inspect. */
WRAPPER int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                     MPI_Status *status)
{
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
    COUNT(STROBE__MPI_RECV, msg_bytes(count, type));
    return rc;
}

WRAPPER int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
    COUNT(STROBE__MPI_IRECV, msg_bytes(count, type));
    return rc;
}

/* Sendrecv: the message it sends, like every other call that sends. */
WRAPPER int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                         MPI_Comm comm, MPI_Status *status)
{
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                           recvtag, comm, status);
    COUNT(STROBE__MPI_SENDRECV, msg_bytes(sendcount, sendtype));
    return rc;
}

/* Completions move no message of their own (the call that started the
 * request counted it): bytes 0, and the WHERE range does not apply. */
WRAPPER int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    int rc = PMPI_Wait(req, status);
    COUNT(STROBE__MPI_WAIT, 0);
    return rc;
}

WRAPPER int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    int rc = PMPI_Waitall(count, reqs, statuses);
    COUNT(STROBE__MPI_WAITALL, 0);
    return rc;
}

/* ---- collectives: bytes of one block, from arguments significant on every
 * rank (docs/mpi-profiler.md, "What counts as bytes") ---------------------- */

WRAPPER int MPI_Barrier(MPI_Comm comm)
{
    int rc = PMPI_Barrier(comm);
    COUNT(STROBE__MPI_BARRIER, 0);
    return rc;
}

WRAPPER int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    int rc = PMPI_Bcast(buf, count, type, root, comm);
    COUNT(STROBE__MPI_BCAST, msg_bytes(count, type));
    return rc;
}

WRAPPER int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                       MPI_Comm comm)
{
    int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    COUNT(STROBE__MPI_REDUCE, msg_bytes(count, type));
    return rc;
}

WRAPPER int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm)
{
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    COUNT(STROBE__MPI_ALLREDUCE, msg_bytes(count, type));
    return rc;
}

/* Gather, Allgather, Alltoall: the block this rank sends (with MPI_IN_PLACE
 * the send arguments are ignored and the receive block has the same size). */
WRAPPER int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    COUNT(STROBE__MPI_GATHER,
          sendbuf == MPI_IN_PLACE ? msg_bytes(recvcount, recvtype) : msg_bytes(sendcount, sendtype));
    return rc;
}

WRAPPER int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    COUNT(STROBE__MPI_ALLGATHER,
          sendbuf == MPI_IN_PLACE ? msg_bytes(recvcount, recvtype) : msg_bytes(sendcount, sendtype));
    return rc;
}

WRAPPER int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    COUNT(STROBE__MPI_ALLTOALL,
          sendbuf == MPI_IN_PLACE ? msg_bytes(recvcount, recvtype) : msg_bytes(sendcount, sendtype));
    return rc;
}

/* Scatter: the block this rank receives, since the send arguments mean
 * something only at the root (which, with MPI_IN_PLACE, keeps its block
 * where it is: the send block has the same size). */
WRAPPER int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    COUNT(STROBE__MPI_SCATTER,
          recvbuf == MPI_IN_PLACE ? msg_bytes(sendcount, sendtype) : msg_bytes(recvcount, recvtype));
    return rc;
}
