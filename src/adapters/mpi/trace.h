/* SPDX-License-Identifier: MIT */
/*
 * The trace half of libstrobe-mpi.so (trace.c): what the generated
 * wrappers record into the experiment of `strobe run --mpi` through
 * libstrobe.so's adapter interface (include/strobe/adapter.h). Every MPI
 * call is a region of kind STROBE_REGION_MPI; the calls that move
 * messages write STROBE_EXT_MPI records, and communicators get
 * STROBE_DEF_MPI_COMM definitions (src/common/format.h,
 * docs/formats/trace.md).
 *
 * All functions do nothing when the process is not measured (the library
 * preloaded alone, for its live counters). They are thread-safe: the
 * communicator and request tables are behind one spin lock (not a pthread
 * mutex, which the lock interposer would record). Ranks in records are
 * MPI_COMM_WORLD ranks, translated through each communicator's group.
 */
#ifndef STROBE_ADAPTERS_MPI_TRACE_H
#define STROBE_ADAPTERS_MPI_TRACE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/format.h"
#include "strobe/adapter.h"

/* libstrobe.so measures this process (read once when the library loads). */
extern bool strobe__mpi_tracing;

static inline void strobe__mpi_enter(uintptr_t fn)
{
    if (strobe__mpi_tracing)
        strobe_code_region_enter(fn, STROBE_REGION_MPI);
}

static inline void strobe__mpi_leave(uintptr_t fn)
{
    if (strobe__mpi_tracing)
        strobe_code_region_exit(fn, STROBE_REGION_MPI);
}

/* After a successful MPI_Init(_thread): live counters, clock offsets
 * (clocks.h), MPI_COMM_WORLD and MPI_COMM_SELF defined, INIT record.
 * Before MPI_Finalize: live counters stopped, clock offsets, FINALIZE
 * record. */
void strobe__mpi_started(void);
void strobe__mpi_stopping(void);

/* Bytes of count elements of type; 0 when the size is unknown or does not
 * fit. Only for arguments significant at the calling rank. */
uint64_t strobe__mpi_bytes(int count, MPI_Datatype type);
/* Sum of counts[i] x type size over the ranks of comm (its remote group
 * for an intercommunicator), and counts[own rank] x type size. */
uint64_t strobe__mpi_vbytes(const int counts[], MPI_Datatype type, MPI_Comm comm);
uint64_t strobe__mpi_rank_bytes(const int counts[], MPI_Datatype type, MPI_Comm comm);
/* Ranks of comm (the remote group of an intercommunicator). */
uint64_t strobe__mpi_comm_size(MPI_Comm comm);
/* The calling rank is the root of a rooted collective. */
bool strobe__mpi_is_root(int root, MPI_Comm comm);

/* Point-to-point: a blocking send returned; a receive returned status. */
void strobe__mpi_send(int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
void strobe__mpi_recv(MPI_Comm comm, const MPI_Status *status);
/* A nonblocking send/receive was posted (persistent: a persistent request
 * was made, recorded at each MPI_Start). */
void strobe__mpi_isend(int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request req,
                       int persistent);
void strobe__mpi_irecv(int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request req,
                       int persistent);
void strobe__mpi_start(int n, const MPI_Request reqs[]);
void strobe__mpi_request_freed(MPI_Request req);

/* The requests a Wait/Test call is given, saved before it runs (the call
 * sets completed ones to MPI_REQUEST_NULL), and the statuses it fills:
 * the caller's, or the wrapper's own when the caller ignores them. */
#define STROBE__MPI_SAVED_INLINE 16
struct strobe__mpi_saved {
    int n;             /* 0: nothing to match (not measured) */
    MPI_Request *reqs; /* n */
    MPI_Status *st;    /* the statuses the call fills */
    void *heap;        /* for more than STROBE__MPI_SAVED_INLINE */
    MPI_Request req_inline[STROBE__MPI_SAVED_INLINE];
    MPI_Status st_inline[STROBE__MPI_SAVED_INLINE];
};
/* Saves n requests; returns the status argument to pass on (array: an
 * array of n statuses, else one). */
MPI_Status *strobe__mpi_save(struct strobe__mpi_saved *s, int n, const MPI_Request reqs[], MPI_Status *status,
                             int array);
/* Request i completed (status i of an array, or the one status). */
void strobe__mpi_completed(struct strobe__mpi_saved *s, int i);
void strobe__mpi_completed_all(struct strobe__mpi_saved *s);
/* Waitany/Testany: request index (MPI_UNDEFINED: none) with the one status. */
void strobe__mpi_completed_any(struct strobe__mpi_saved *s, int index);
/* Waitsome/Testsome: outcount requests, statuses in the order of indices. */
void strobe__mpi_completed_some(struct strobe__mpi_saved *s, int outcount, const int indices[]);
void strobe__mpi_saved_free(struct strobe__mpi_saved *s);

/* A blocking collective begins / ended on comm (root in comm's numbering,
 * -1 for none; bytes sent and received by this rank). */
void strobe__mpi_coll_begin(void);
void strobe__mpi_coll_end(unsigned coll, MPI_Comm comm, int root, uint64_t sent, uint64_t received);

/* A call made *comm (MPI_COMM_NULL: not at this rank), collectively over
 * its members: they agree on its id here. Before MPI_Comm_free: forgotten. */
void strobe__mpi_comm_created(const MPI_Comm *comm);
void strobe__mpi_comm_freed(MPI_Comm comm);

#endif
