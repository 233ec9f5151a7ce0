/* SPDX-License-Identifier: MIT */
/*
 * Derived views of a call-path profile shared by the text and JSON
 * renderers: validated and sorted children of every call-tree node, the
 * flat profile (per region), per-thread totals and the measurement summary.
 * Everything is computed from struct strobe_profile / strobe_experiment;
 * nothing is re-measured or re-parsed here.
 */
#ifndef STROBE_REPORT_VIEW_H
#define STROBE_REPORT_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/experiment.h"

/* One region of the flat profile. */
struct strobe__flat_row {
    uint32_t region;
    uint64_t visits;  /* all visits, recursive ones included */
    uint64_t incl_ns; /* outermost occurrences on each call path only, so
                         recursion does not count the same time twice */
    uint64_t excl_ns;
    uint64_t sum_incl_ns; /* inclusive time of every visit (for avg/stddev) */
    uint64_t min_ns;      /* per visit; UINT64_MAX when no visit completed */
    uint64_t max_ns;
    double sumsq_ns; /* sum of squared per-visit inclusive times */
    uint64_t open_at_end; /* visits still open when measurement ended */
};

struct strobe__report_view {
    const struct strobe_experiment *exp;
    const struct strobe_profile *prof;
    int sort; /* enum strobe_report_sort */

    /* children of node n, sorted by the sort key (descending, ties by region
     * name then node index): kids[kids_start[n] .. kids_start[n + 1]) */
    uint32_t *kids;
    uint32_t *kids_start; /* [nnodes + 1] */
    bool *outermost;      /* [nnodes]: region not on the path above the node */

    struct strobe__flat_row *flat; /* regions present in the tree, sorted */
    size_t nflat;
    uint64_t total_excl_ns; /* sum of excl over all nodes but the root */

    /* per thread [nthreads] */
    uint64_t *thread_visits;  /* visits of all nodes */
    uint64_t *thread_incl_ns; /* inclusive time of the root's children */
    uint64_t *thread_events;  /* recorded events (or measured, without a trace),
                                 else 2 x visits (old experiments, killed threads) */

    uint64_t thread_time_ns;  /* sum over threads of end - begin (or of
                                 thread_incl_ns when the thread has no span) */
    uint64_t overhead_events; /* events the overhead estimate is based on:
                                 recorded and dropped (a dropped event cost
                                 the program the hook call all the same) */
    double overhead_ns;       /* sum of events x the process's ns/event */
    /* What the measured slowdown came to on the bench programs, as a share
     * of that estimate (docs/performance.md: bench/command.py's tight loop
     * 0.88-0.91, bench/real.sh's SPLASH-3 programs 0.64-1.69 by CPU time over
     * every repetition):
     * the report prints overhead_ns x [LOW, HIGH] as the likely range. */
#define STROBE__OVERHEAD_LOW 0.6
#define STROBE__OVERHEAD_HIGH 1.7
    uint64_t open_at_end;     /* visits still open at the end, all nodes */
    bool overhead_known;      /* some process measured its cost per event */
    bool events_estimated;    /* some thread had no trace: events = 2 x visits */
};

/* Builds the view. Returns 0, -ENOMEM, or STROBE_ERR_FORMAT when the tree
 * links are inconsistent. On failure the view needs no free. */
int strobe__report_view_build(struct strobe__report_view *v, const struct strobe_experiment *exp,
                              const struct strobe_profile *prof, int sort);
void strobe__report_view_free(struct strobe__report_view *v);

/* Threads grouped by MPI rank or by process (`strobe report --by`), with
 * each group's sums: Cube's system-tree view of the call paths. */
struct strobe__report_groups {
    size_t n;             /* groups: ranks in rank order, or processes in model order */
    uint32_t *leader;     /* [n] first process of the group (the model keeps a rank's together) */
    uint32_t *nprocesses; /* [n] */
    uint32_t *nthreads;   /* [n] */
    uint32_t *of_thread;  /* [nthreads] group of each thread, STROBE_NONE when in none */
    size_t left_out;      /* processes in no group (by rank: those without a rank) */
    uint64_t *visits, *incl_ns, *events; /* [n] sums of the view's per-thread totals */
    /* call paths: every node but the root, in the view's pre-order (sorted
     * children), so paths[i] has id i + 1 in the JSON call tree */
    uint32_t *paths;
    uint32_t *path_depth; /* [npaths] root's children = 1 */
    size_t npaths;
    uint64_t *path_visits, *path_incl_ns; /* [path * n + group] */
};

/* The call tree in pre-order over the sorted children, without the root:
 * nodes[i] at depth depths[i] (the root's children: 1); node i has id
 * i + 1 in the JSON call tree. Returns 0 or -ENOMEM; the caller frees
 * both arrays. */
int strobe__report_preorder(const struct strobe__report_view *v, uint32_t **nodes, uint32_t **depths,
                            size_t *n);

/* Builds the groups (by = enum strobe_report_by, not NONE). Returns 0,
 * -ENOMEM, or -ENOENT when grouping by rank and no process has one. On
 * failure g needs no free. */
int strobe__report_groups_build(struct strobe__report_groups *g, const struct strobe__report_view *v, int by);
void strobe__report_groups_free(struct strobe__report_groups *g);

/* Stats of node n for thread t (zeroed stats when the node has none). */
const struct strobe_stats *strobe__node_thread(const struct strobe__report_view *v, uint32_t n, size_t t);

/* Per-thread outermost inclusive time and visits of the regions
 * regs[0..nregs): incl[k * nthreads + t], visits[k * nthreads + t].
 * Returns 0 or -ENOMEM; the caller frees both arrays. */
int strobe__report_region_threads(const struct strobe__report_view *v, const uint32_t *regs, size_t nregs,
                                  uint64_t **incl, uint64_t **visits);

/* Measurement cost in ns of one event of thread t: what the runtime
 * measured in the thread's process at start-up, 0 when unknown. */
double strobe__report_event_cost(const struct strobe_experiment *exp, size_t t);

/* Standard deviation of the per-visit inclusive time; 0 when < 2 visits. */
double strobe__stddev(uint64_t visits, uint64_t sum_ns, double sumsq_ns);

/* Flushes a rendered report: 0, or -errno / -EIO when writing failed. */
int strobe__report_flush(FILE *out);

struct strobe__jw;
struct strobe_report_opts;
/* The JSON report as one object (member KEY of the enclosing object, or
 * the document when KEY is NULL) on writer W: strobe_report_json's
 * document, also embedded in the HTML report's data. Returns 0 or
 * strobe_report_json's error codes; nothing is flushed. */
int strobe__report_json_object(struct strobe__jw *w, const char *key, const struct strobe_experiment *exp,
                               const struct strobe_profile *prof, const struct strobe_report_opts *opts);

/* Value of a meta key or NULL (first match; the model keeps file order). */
const char *strobe__report_meta(const struct strobe_experiment *exp, const char *key);

#endif
