/* SPDX-License-Identifier: MIT */
/*
 * Comparing experiments (`strobe report --diff A B`): the call trees of
 * the runs of side A and of side B merged into one union tree whose paths
 * are matched by function name and source file (region ids differ between
 * runs), with per run the visits, inclusive and exclusive time, samples
 * and user metrics of each path, per side their spread over repeated runs
 * (mean, min, max), and the regression gate's verdict. TM statistics per
 * atomic block and MPI summaries per function are matched by name the same
 * way. Threads are folded as the call-path profile folds them (one tree
 * over all threads); the renderers are src/report/diff.c.
 */
#ifndef STROBE_ANALYSIS_DIFF_H
#define STROBE_ANALYSIS_DIFF_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/experiment.h"
#include "analysis/mpi.h"
#include "analysis/samples.h"
#include "analysis/tm.h"

/* One run: its experiment and the models built from it. The diff borrows
 * names from exp; it must outlive the diff. samples, tm, mpi may be NULL
 * (the run did not record them). */
struct strobe_diff_run {
    const struct strobe_experiment *exp;
    const struct strobe_profile *prof;
    const struct strobe_sample_model *samples;
    const struct strobe_tm_model *tm;
    const struct strobe_mpi_model *mpi;
};

/* The values compared per path and run. */
enum strobe_diff_value {
    STROBE_DIFF_VISITS = 0,
    STROBE_DIFF_INCL = 1, /* ns */
    STROBE_DIFF_EXCL = 2, /* ns */
    STROBE_DIFF_SAMPLES = 3,
    STROBE_DIFF_NVALUES = 4,
};

/* One value of one side over its runs (a run without the path counts 0). */
struct strobe_diff_spread {
    double mean, min, max;
};

/* A path of the union tree. */
struct strobe_diff_node {
    uint32_t parent;         /* STROBE_NONE for the root */
    uint32_t depth;          /* root = 0 */
    const char *name, *file; /* from the first run that has the path */
    bool in[2];              /* some run of side A (0) / B (1) has it */
    struct strobe_diff_spread v[2][STROBE_DIFF_NVALUES];
    /* the regression gate (strobe_diff_gate): grew beyond the threshold */
    bool failed;
    /* repeated runs: the sides' ranges of inclusive time do not overlap
     * (always true with one run per side when the means differ) */
    bool beyond_spread;
};

/* Per-run values of a named item (metric of a path, TM block, MPI function). */
struct strobe_diff_item {
    const char *name;
    uint32_t node; /* metrics: the path; else STROBE_NONE */
    double *runs;  /* [nfields * nruns]: field f of run r at f * nruns + r */
};

struct strobe_diff {
    size_t nruns[2]; /* runs of side A and B */
    size_t nruns_all;
    struct strobe_diff_node *nodes; /* node 0 is the root; parents before children */
    size_t nnodes;
    bool samples[2];    /* every run of the side sampled */
    bool tm[2], mpi[2]; /* every run of the side has TM statistics / MPI calls */

    /* user metrics per path: fields count, sum (only paths with a metric) */
    struct strobe_diff_item *metrics;
    size_t nmetrics;
    /* TM per atomic block (fields: STROBE_DIFF_TM_*), when both sides have it */
    struct strobe_diff_item *tm_blocks;
    size_t ntm_blocks;
    /* MPI per function (fields calls, ns) and totals, when both sides have it */
    struct strobe_diff_item *mpi_funcs;
    size_t nmpi_funcs;
    double *mpi_totals; /* [STROBE_DIFF_MPI_NTOTALS * nruns_all] */
};

#define STROBE_DIFF_METRIC_FIELDS 2 /* count, sum */
/* TM block fields: transactions, commits, rollbacks, then aborts by cause */
#define STROBE_DIFF_TM_FIELDS (3 + STROBE_TM_NCAUSES)
#define STROBE_DIFF_MPI_FIELDS 2 /* calls, ns */
/* MPI totals: time in MPI, calls, messages, bytes */
#define STROBE_DIFF_MPI_NTOTALS 4

/* Builds the diff of the runs a[0..na) against b[0..nb) (na, nb >= 1).
 * Returns 0 or -ENOMEM; on failure *out is NULL. */
int strobe_diff_build(const struct strobe_diff_run *a, size_t na, const struct strobe_diff_run *b, size_t nb,
                      struct strobe_diff **out);
void strobe_diff_free(struct strobe_diff *d);

/* Mean, min and max of v[0..n), n >= 1. Inline, like the two below: the
 * report uses them without the analysis library. */
static inline struct strobe_diff_spread strobe_diff_spread_of(const double *v, size_t n)
{
    struct strobe_diff_spread s = {0, v[0], v[0]};
    for (size_t i = 0; i < n; i++) {
        s.mean += v[i];
        s.min = v[i] < s.min ? v[i] : s.min;
        s.max = v[i] > s.max ? v[i] : s.max;
    }
    s.mean /= (double)n;
    return s;
}

/* Mean, min and max of field f of item it for side s (0 = A, 1 = B). */
static inline struct strobe_diff_spread
strobe_diff_item_spread(const struct strobe_diff *d, const struct strobe_diff_item *it, size_t f, int s)
{
    return strobe_diff_spread_of(&it->runs[f * d->nruns_all + (s ? d->nruns[0] : 0)], d->nruns[s]);
}

/* Relative change from a to b in percent; NaN when a is 0. */
static inline double strobe_diff_rel(double a, double b)
{
    return a == 0 ? NAN : (b - a) / a * 100.0;
}

/* The regression gate: marks `failed` every path whose inclusive time
 * (the larger side's mean) is at least min_ns, that grew by more than
 * pct percent, and, with repeated runs, beyond the spread (B's minimum
 * above A's maximum). Returns how many failed. */
size_t strobe_diff_gate(struct strobe_diff *d, double pct, uint64_t min_ns);

#endif
