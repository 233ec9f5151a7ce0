/* SPDX-License-Identifier: MIT */
/*
 * The experiment report: a Cube-like "metric x call path x system" view of
 * one experiment, rendered as text for people (`strobe report`) or as JSON
 * for programs (`strobe report --format json`, schema in
 * docs/formats/report-json.md). Both renderers only format the model from
 * src/analysis/experiment.h; every number comes from the reader and
 * strobe_profile_build(). The report reads the model's fields only, so it
 * can be tested on a model built in memory.
 */
#ifndef STROBE_REPORT_REPORT_H
#define STROBE_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/blame.h"
#include "analysis/blocks.h"
#include "analysis/experiment.h"
#include "analysis/locks.h"
#include "analysis/malloc.h"
#include "analysis/samples.h"
#include "analysis/mpi.h"
#include "analysis/taskgraph.h"
#include "analysis/tm.h"

/* Version of the JSON schema ("version" field); bump on incompatible change. */
#define STROBE_REPORT_JSON_VERSION 1

enum strobe_report_sort {
    STROBE_REPORT_SORT_EXCL = 0, /* exclusive time (default) */
    STROBE_REPORT_SORT_INCL = 1, /* inclusive time */
    STROBE_REPORT_SORT_VISITS = 2,
};

/* `--by`: per-group rows and min/avg/max over the groups per call path. */
enum strobe_report_by {
    STROBE_REPORT_BY_NONE = 0,
    STROBE_REPORT_BY_PROCESS = 1, /* every process image */
    STROBE_REPORT_BY_RANK = 2,    /* the processes of each MPI rank together */
};

#define STROBE_REPORT_TOP_DEFAULT 20

struct strobe_report_opts {
    int sort;                         /* enum strobe_report_sort: flat profile rows, call-tree children */
    size_t top;                       /* text: rows of the flat profile, children shown per call-tree
                                         node, regions of the thread x region table (at most 8);
                                         0 = all. JSON ignores it and is always complete. */
    bool threads;                     /* text: add the per-thread section (JSON always has it) */
    int by;                           /* enum strobe_report_by: add the per-rank or per-process
                                         section (text and JSON); by rank fails with -ENOENT
                                         when no process has a rank */
    const struct strobe_tm_model *tm; /* add the transactional-memory section
                                         (strobe_tm_model_build); NULL: none */
    const struct strobe_malloc_model *malloc; /* add the memory section
                                                 (strobe_malloc_model_build); NULL: none */
    const struct strobe_sample_model *samples; /* add the sampled section
                                                  (strobe_sample_model_build); NULL: none */
    const struct strobe_blame_model *blame;   /* JSON: add the blame section
                                                 (strobe_blame_model_build); NULL: none.
                                                 The text form is report/blame.h's. */
    const struct strobe_lock_model *locks;    /* JSON: add the synchronization section
                                                 (strobe_lock_model_build); NULL: none.
                                                 The text form is report/locks.h's. */
    const struct strobe_mpi_model *mpi;       /* add the MPI section (strobe_mpi_model_build);
                                                 NULL: none */
    const struct strobe_taskgraph *taskgraph; /* add the task-graph section
                                                 (strobe_taskgraph_build); NULL: none.
                                                 The text form is report/taskgraph.h's. */
    const struct strobe_blocks_summary *blocks; /* the experiment's block streams
                                                   (strobe_blocks_summarize): summary
                                                   lines / the "blocks" member; NULL: none */
    bool tree_columns;                        /* JSON: the call tree as columns ("calltree_columns",
                                                 docs/report-html.md) instead of node objects */
};

/* Default options: sort by excl, top 20, no optional section. */
void strobe_report_opts_init(struct strobe_report_opts *opts);

/* Parses "incl" / "excl" / "visits"; returns the enum value or -1. */
int strobe_report_sort_parse(const char *s);
/* "excl", "incl" or "visits". */
const char *strobe_report_sort_name(int sort);

/* Write the report of EXP (with profile PROF, built from EXP) to OUT.
 * opts may be NULL for the defaults. Return 0, -ENOMEM, STROBE_ERR_FORMAT
 * when the model is inconsistent (a child index out of range, a cycle, an
 * unknown region), or -EIO / -errno when writing OUT failed. Thread-safe
 * as long as OUT is not shared. */
int strobe_report_text(FILE *out, const struct strobe_experiment *exp, const struct strobe_profile *prof,
                       const struct strobe_report_opts *opts);
int strobe_report_json(FILE *out, const struct strobe_experiment *exp, const struct strobe_profile *prof,
                       const struct strobe_report_opts *opts);

#endif
