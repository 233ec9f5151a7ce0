/* SPDX-License-Identifier: MIT */
/*
 * The MPI profiler's counting core: schema from a query, instance names,
 * binding a set's metric indices (see counters.h).
 */
#include "adapters/mpi/counters.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int add_metric(strobe_schema *s, const char *fn, const char *what, const char *unit)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%s", fn, what);
    int rc = strobe_schema_add(s, name, unit, STROBE_MT_U64, 1, STROBE_METRIC_COUNTER); /* since MPI_Init */
    return rc < 0 ? rc : 0;
}

int strobe__mpi_schema_new(const struct strobe__mpi_query *q, strobe_schema **out)
{
    strobe_schema *s;
    int rc = strobe_schema_new(STROBE__MPI_SCHEMA, &s);
    if (rc < 0)
        return rc;
    if (q->per_rank)
        rc = strobe_schema_add(s, "rank", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META);
    if (rc >= 0)
        rc = strobe_schema_add(s, "size", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META);
    for (int f = 0; f < STROBE__MPI_FN_COUNT && rc >= 0; f++) {
        if (!(q->functions >> f & 1))
            continue;
        const char *name = strobe__mpi_fn_name((enum strobe__mpi_fn)f);
        if (q->columns & STROBE__MPI_COL_CALLS)
            rc = add_metric(s, name, "calls", "calls");
        if (rc >= 0 && (q->columns & STROBE__MPI_COL_BYTES))
            rc = add_metric(s, name, "bytes", "B");
    }
    if (rc < 0) {
        strobe_schema_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int strobe__mpi_instance(char *buf, size_t cap, const char *producer, const char *job, bool per_rank,
                         int rank)
{
    /* a '/' in either part would make the name ambiguous to anyone who
     * splits it; an empty one would leave "//" */
    if (!producer[0] || !job[0] || strchr(producer, '/') || strchr(job, '/'))
        return -EINVAL;
    int n = per_rank ? snprintf(buf, cap, "%s/" STROBE__MPI_SCHEMA "/%s/rank%d", producer, job, rank)
                     : snprintf(buf, cap, "%s/" STROBE__MPI_SCHEMA "/%s", producer, job);
    if (n < 0 || (size_t)n >= cap || n > STROBE_SET_NAME_MAX)
        return -ENAMETOOLONG;
    return 0;
}

static uint32_t find(strobe_set *set, const char *fn, const char *what, int *missing)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%s", fn, what);
    int i = strobe_set_metric_index(set, name);
    if (i < 0) {
        *missing = 1;
        return STROBE__MPI_NO_METRIC;
    }
    return (uint32_t)i;
}

int strobe__mpi_counters_bind(struct strobe__mpi_counters *c, const struct strobe__mpi_query *q,
                              strobe_set *set)
{
    int missing = 0;
    bool full_range = q->size_min == 0 && q->size_max == UINT64_MAX;
    memset(c, 0, sizeof *c);
    c->set = set;
    c->size_min = q->size_min;
    c->size_max = q->size_max;
    for (int f = 0; f < STROBE__MPI_FN_COUNT; f++) {
        const char *name = strobe__mpi_fn_name((enum strobe__mpi_fn)f);
        bool on = q->functions >> f & 1;
        c->calls[f] = on && (q->columns & STROBE__MPI_COL_CALLS) ? find(set, name, "calls", &missing)
                                                                 : STROBE__MPI_NO_METRIC;
        c->bytes[f] = on && (q->columns & STROBE__MPI_COL_BYTES) ? find(set, name, "bytes", &missing)
                                                                 : STROBE__MPI_NO_METRIC;
        c->counted[f] = on;
        c->sized[f] =
            on && !full_range && (strobe__mpi_fn_class((enum strobe__mpi_fn)f) & STROBE__MPI_CLASS_MESSAGE);
        c->need_size[f] = c->sized[f] || c->bytes[f] != STROBE__MPI_NO_METRIC;
    }
    return missing ? -ENOENT : 0;
}

void strobe__mpi_counters_identify(const struct strobe__mpi_counters *c, uint64_t rank, uint64_t size)
{
    int i = strobe_set_metric_index(c->set, "rank");
    if (i >= 0)
        strobe_set_u64(c->set, (uint32_t)i, 0, rank);
    i = strobe_set_metric_index(c->set, "size");
    if (i >= 0)
        strobe_set_u64(c->set, (uint32_t)i, 0, size);
}
