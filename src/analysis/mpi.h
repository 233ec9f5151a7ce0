/* SPDX-License-Identifier: MIT */
/*
 * The MPI view of a `strobe run --mpi` experiment, behind the MPI summary
 * of `strobe report`: time in MPI per rank and per MPI function (from the
 * call-path profile's regions of kind MPI), and the messages of the MPI
 * records (format.h, STROBE_EXT_MPI) as the senders recorded them: counts
 * and bytes, a histogram of message sizes and the rank x rank matrix.
 * Ranks are MPI_COMM_WORLD ranks.
 */
#ifndef STROBE_ANALYSIS_MPI_H
#define STROBE_ANALYSIS_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/experiment.h"
#include "common/format.h"

/* Message size buckets: 0 bytes, then [2^(k-1), 2^k) for k = 1..39, and
 * everything from 2^39 bytes in the last. */
#define STROBE_MPI_HIST_BUCKETS 41

struct strobe_mpi_rank {
    bool present;                      /* a process of this rank was measured */
    uint64_t mpi_ns;                   /* time in MPI calls, over its threads */
    uint64_t thread_ns;                /* time of its threads that call MPI (begin to end) */
    uint64_t calls;                    /* MPI calls */
    uint64_t sent, sent_bytes;         /* point-to-point messages it sent */
    uint64_t received, received_bytes; /* and received */
};

/* One MPI function: calls and time, per rank too. */
struct strobe_mpi_call {
    uint32_t region; /* global region id (kind STROBE_REGION_MPI) */
    uint64_t calls, ns;
    uint64_t *rank_ns; /* [nranks] */
};

struct strobe_mpi_coll_stats {
    uint64_t calls, sent_bytes, received_bytes; /* over all ranks */
};

struct strobe_mpi_model {
    uint32_t nranks;
    struct strobe_mpi_rank *ranks; /* [nranks], by world rank */
    struct strobe_mpi_call *calls; /* by time, longest first */
    size_t ncalls;
    uint64_t messages, bytes;               /* point-to-point, as sent */
    uint64_t hist[STROBE_MPI_HIST_BUCKETS]; /* messages per size bucket */
    uint64_t hist_bytes[STROBE_MPI_HIST_BUCKETS];
    uint64_t *matrix_bytes; /* [sender * nranks + receiver] */
    uint64_t *matrix_messages;
    struct strobe_mpi_coll_stats colls[STROBE_MPI_NCOLLS]; /* by enum strobe_mpi_coll */
    bool traced; /* the streams were there to read (messages need them) */
    /* Clock skew seen in the messages: sends and receives matched in
     * order per sender, receiver, communicator and tag (MPI's
     * non-overtaking rule; ANY_SOURCE/ANY_TAG receives carry the matched
     * values). A receive's record is written when it has ended and a
     * send's before it starts, so with exact clocks every receive record
     * is later than its send's. skew_ns: the largest send time minus
     * receive time over the pairs (> 0: a receive ended before its send
     * started, by that much; <= 0: none did, with that much slack at the
     * tightest pair), on the aligned timebase; skew_unaligned_ns the same
     * with every process's clock as recorded (align.h). Meaningless when
     * pairs is 0. */
    uint64_t pairs;
    int64_t skew_ns, skew_unaligned_ns;
};

/* True when the experiment has MPI calls (regions of kind MPI). */
bool strobe_mpi_present(const struct strobe_experiment *exp);

/* Bucket of a message of `bytes` (see STROBE_MPI_HIST_BUCKETS) and the
 * smallest size it holds. Inline: the report uses them without the
 * analysis library. */
static inline unsigned strobe_mpi_bucket(uint64_t bytes)
{
    unsigned b = bytes ? 64 - (unsigned)__builtin_clzll(bytes) : 0;
    return b < STROBE_MPI_HIST_BUCKETS ? b : STROBE_MPI_HIST_BUCKETS - 1;
}

static inline uint64_t strobe_mpi_bucket_low(unsigned bucket)
{
    return bucket ? (uint64_t)1 << (bucket - 1) : 0;
}

/* Name of a collective ("MPI_Bcast"), NULL for an unknown one. */
static inline const char *strobe_mpi_coll_name(unsigned coll)
{
    static const char *const names[STROBE_MPI_NCOLLS] = {NULL,
                                                         "MPI_Barrier",
                                                         "MPI_Bcast",
                                                         "MPI_Gather",
                                                         "MPI_Gatherv",
                                                         "MPI_Scatter",
                                                         "MPI_Scatterv",
                                                         "MPI_Allgather",
                                                         "MPI_Allgatherv",
                                                         "MPI_Alltoall",
                                                         "MPI_Alltoallv",
                                                         "MPI_Alltoallw",
                                                         "MPI_Allreduce",
                                                         "MPI_Reduce",
                                                         "MPI_Reduce_scatter",
                                                         "MPI_Scan",
                                                         "MPI_Exscan",
                                                         "MPI_Reduce_scatter_block"};
    return coll < STROBE_MPI_NCOLLS ? names[coll] : NULL;
}

/* Builds the model; -ENOENT when the experiment has no MPI calls. Returns
 * 0 and *out (free with strobe_mpi_model_free) or a negative code with a
 * one-line message in eb. */
int strobe_mpi_model_build(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                           struct strobe_mpi_model **out, struct strobe_errbuf *eb);
void strobe_mpi_model_free(struct strobe_mpi_model *m);

#endif
