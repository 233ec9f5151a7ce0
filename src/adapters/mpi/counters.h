/* SPDX-License-Identifier: MIT */
/*
 * The MPI profiler's counting core, kept apart from the PMPI wrappers so
 * that it can be tested without MPI or a shared-memory index: the "mpi"
 * metric-set schema a query asks for, the set's instance name, and the
 * O(1) update each wrapper makes after a call (seed 002, section 4.2: one
 * dedicated counter per event and property).
 *
 * The counters live in the published set itself and are updated in place
 * with relaxed atomic adds (strobe_set_add_u64), so a reader always sees
 * the current counts, several threads of a process and several processes
 * sharing an aggregated set may count at once, and nothing has to be
 * flushed when the application stops. Each value is exact on its own; a
 * reader may see a function's calls and bytes one call apart.
 */
#ifndef STROBE_ADAPTERS_MPI_COUNTERS_H
#define STROBE_ADAPTERS_MPI_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapters/mpi/query.h"
#include "strobe/metric_set.h"

#define STROBE__MPI_SCHEMA "mpi"
#define STROBE__MPI_NO_METRIC UINT32_MAX

/* What the wrappers read on every call; written once before profiling is
 * switched on, read-only afterwards. */
struct strobe__mpi_counters {
    strobe_set *set;
    uint64_t size_min, size_max;          /* inclusive, for functions that move a message */
    uint32_t calls[STROBE__MPI_FN_COUNT]; /* metric index or STROBE__MPI_NO_METRIC */
    uint32_t bytes[STROBE__MPI_FN_COUNT];
    bool counted[STROBE__MPI_FN_COUNT];   /* selected by the query */
    bool sized[STROBE__MPI_FN_COUNT];     /* the size range applies to it */
    bool need_size[STROBE__MPI_FN_COUNT]; /* the wrapper must compute the size */
};

/* The schema a query asks for: meta metrics "rank" (per-rank sets only)
 * and "size" (ranks in MPI_COMM_WORLD), then for each selected function in
 * table order "<MPI_Function>.calls" and/or "<MPI_Function>.bytes" (u64).
 * Returns 0 and a schema the caller frees, or a negative code. */
int strobe__mpi_schema_new(const struct strobe__mpi_query *q, strobe_schema **out);

/* Instance name of the set: "<producer>/mpi/<job>/rank<rank>" per rank,
 * "<producer>/mpi/<job>" aggregated. Returns 0, -EINVAL for an empty
 * producer or job or one holding '/', or -ENAMETOOLONG beyond
 * STROBE_SET_NAME_MAX. */
int strobe__mpi_instance(char *buf, size_t cap, const char *producer, const char *job, bool per_rank,
                         int rank);

/* Points c at a set made from strobe__mpi_schema_new(q): resolves the
 * metric indices once so that counting does no name lookup. Returns 0, or
 * -ENOENT when the set lacks a metric of the query (another schema). */
int strobe__mpi_counters_bind(struct strobe__mpi_counters *c, const struct strobe__mpi_query *q,
                              strobe_set *set);

/* Stores the meta metrics (rank is ignored by aggregated sets). Meta
 * values bump the set's meta generation, so this is done once, by one
 * writer. */
void strobe__mpi_counters_identify(const struct strobe__mpi_counters *c, uint64_t rank, uint64_t size);

/* Counts one call of fn that moved `bytes` (ignored when fn moves no
 * message). O(1), lock-free, no allocation; safe from any thread and from
 * several processes sharing the set. Callers skip it when !c->counted[fn]
 * and compute bytes only when c->need_size[fn]. */
static inline void strobe__mpi_count(const struct strobe__mpi_counters *c, enum strobe__mpi_fn fn,
                                     uint64_t bytes)
{
    if (c->sized[fn] && (bytes < c->size_min || bytes > c->size_max))
        return;
    if (c->calls[fn] != STROBE__MPI_NO_METRIC)
        strobe_set_add_u64(c->set, c->calls[fn], 0, 1);
    if (c->bytes[fn] != STROBE__MPI_NO_METRIC)
        strobe_set_add_u64(c->set, c->bytes[fn], 0, bytes);
}

#endif
