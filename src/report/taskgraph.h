/* SPDX-License-Identifier: MIT */
/*
 * The task graph's outputs (docs/taskgraph.md): the analyses as a text
 * section and as the "taskgraph" JSON object (`strobe report --taskgraph`,
 * `strobe taskgraph`), and the graph itself streamed as JSON
 * (docs/formats/taskgraph.md) or Graphviz DOT while it is built. Formats
 * the model of src/analysis/taskgraph.h only.
 */
#ifndef STROBE_REPORT_TASKGRAPH_H
#define STROBE_REPORT_TASKGRAPH_H

#include <stdio.h>

#include "analysis/experiment.h"
#include "analysis/taskgraph.h"
#include "report/jsonw.h"

/* Version of the graph's JSON schema ("version"). */
#define STROBE_TASKGRAPH_JSON_VERSION 1

/* Writes the analyses as text. `top`: rows per table, 0 = all. Returns 0
 * or -EIO when writing failed. */
int strobe_report_taskgraph_text(FILE *out, const struct strobe_experiment *exp,
                                 const struct strobe_taskgraph *g, size_t top);

/* Writes the member "taskgraph": the analyses, in the JSON report and the
 * graph file alike. */
void strobe__taskgraph_json(struct strobe__jw *w, const struct strobe_taskgraph *g);

enum strobe_tg_format {
    STROBE_TG_FORMAT_JSON = 1,
    STROBE_TG_FORMAT_DOT = 2,
};

/* The graph written while it is built: begin, give `sink` to
 * strobe_taskgraph_build, then end with its result (JSON: tasks, edges,
 * analyses; DOT: the digraph). JSON edges are kept in a temporary file
 * until the tasks are written. */
struct strobe__tg_writer {
    const struct strobe_experiment *exp;
    int format;
    FILE *out, *edges;       /* edges: JSON only */
    struct strobe__jw w, ew; /* JSON: the document, the edges array */
};

/* 0 or -errno (the temporary file). */
int strobe__tg_writer_begin(struct strobe__tg_writer *tw, FILE *out, const struct strobe_experiment *exp,
                            int format, struct strobe_tg_sink *sink);
/* Finishes the document (g NULL: only releases the writer). Returns 0 or
 * -EIO. */
int strobe__tg_writer_end(struct strobe__tg_writer *tw, const struct strobe_taskgraph *g);

#endif
