/* SPDX-License-Identifier: MIT */
/*
 * The MPI profiler's query language (seed 002, section 4.2, Listing 4.1;
 * grammar in docs/mpi-profiler.md): which MPI functions to count, which
 * columns to publish, which message sizes to count, and whether each rank
 * publishes its own set or all ranks of a node share one.
 *
 *   SELECT calls, bytes FROM MPI_Send, MPI_Recv, MPI_Isend
 *   WHERE size > 10 AND size <= 65536 GROUP BY function, rank
 *
 * Also the table of wrapped MPI functions, shared by the parser, the
 * metric-set schema and the wrappers, so that a function name in a query
 * and a metric name in a set can never disagree.
 */
#ifndef STROBE_ADAPTERS_MPI_QUERY_H
#define STROBE_ADAPTERS_MPI_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every wrapped function, in metric order. Keep strobe__mpi_fn_info in
 * query.c in the same order. */
enum strobe__mpi_fn {
    STROBE__MPI_INIT,
    STROBE__MPI_INIT_THREAD,
    STROBE__MPI_FINALIZE,
    STROBE__MPI_SEND,
    STROBE__MPI_RECV,
    STROBE__MPI_ISEND,
    STROBE__MPI_IRECV,
    STROBE__MPI_SSEND,
    STROBE__MPI_ISSEND,
    STROBE__MPI_BSEND,
    STROBE__MPI_RSEND,
    STROBE__MPI_SENDRECV,
    STROBE__MPI_WAIT,
    STROBE__MPI_WAITALL,
    STROBE__MPI_BARRIER,
    STROBE__MPI_BCAST,
    STROBE__MPI_REDUCE,
    STROBE__MPI_ALLREDUCE,
    STROBE__MPI_GATHER,
    STROBE__MPI_ALLGATHER,
    STROBE__MPI_SCATTER,
    STROBE__MPI_ALLTOALL,
    STROBE__MPI_FN_COUNT
};

/* Function classes: the query groups `p2p` and `collective` are these
 * classes; STROBE__MPI_CLASS_MESSAGE marks calls that move a message and
 * therefore have a size the WHERE clause can filter on. */
#define STROBE__MPI_CLASS_P2P 0x1u /* message-based point-to-point */
#define STROBE__MPI_CLASS_COLLECTIVE 0x2u
#define STROBE__MPI_CLASS_MESSAGE 0x4u

/* Canonical name ("MPI_Send") and class bits of a function. */
const char *strobe__mpi_fn_name(enum strobe__mpi_fn fn);
unsigned strobe__mpi_fn_class(enum strobe__mpi_fn fn);

/* SELECT columns */
#define STROBE__MPI_COL_CALLS 0x1u
#define STROBE__MPI_COL_BYTES 0x2u

/* Default when STROBE_MPI_QUERY is unset or empty. */
#define STROBE__MPI_QUERY_DEFAULT "SELECT calls, bytes FROM all GROUP BY function, rank"

/* A parsed query. The size range is inclusive and never empty; a query
 * without WHERE has [0, UINT64_MAX]. */
struct strobe__mpi_query {
    unsigned columns;   /* STROBE__MPI_COL_* */
    uint64_t functions; /* bit (1 << fn) per selected enum strobe__mpi_fn */
    uint64_t size_min;
    uint64_t size_max;
    bool per_rank; /* GROUP BY ..., rank */
};

/* Parses a NUL-terminated query. Returns 0 and fills *q, or
 * STROBE_ERR_SYNTAX with a one-line message in err
 * ("query:LINE:COLUMN: problem", 1-based, naming the offending token); err
 * is always NUL-terminated when errlen > 0. Pure: no allocation, no global
 * state, thread-safe. */
int strobe__mpi_query_parse(const char *text, struct strobe__mpi_query *q, char *err, size_t errlen);

/* Canonical text of a query (what the parser reads back as the same
 * query): functions in table order, no WHERE when the range is full.
 * Returns 0 or -ENOSPC when it does not fit. */
int strobe__mpi_query_format(const struct strobe__mpi_query *q, char *buf, size_t cap);

#endif
