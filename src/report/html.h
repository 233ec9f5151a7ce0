/* SPDX-License-Identifier: MIT */
/*
 * The HTML report (`strobe report DIR --format html -o FILE`): one
 * self-contained page, the static template of src/report/html (CSS and
 * JavaScript inlined at build time by cmake/EmbedHtml.cmake) around the
 * experiment's data as JSON. The data is the JSON report's document
 * (docs/formats/report-json.md) plus what only the page draws; each view
 * of the page is one script that reads it (docs/report-html.md).
 */
#ifndef STROBE_REPORT_HTML_H
#define STROBE_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "report/report.h"

struct strobe_timeline;
struct strobe_diff;
struct strobe_diff_report_opts;

struct strobe_html_opts {
    struct strobe_report_opts report; /* the sections present, as for the JSON report */
    const char *const *problems;      /* parts of the experiment that could not be read,
                                         one line each, shown at the top of the page */
    size_t nproblems;
    const char *generated; /* when the report was written (shown in the footer), or NULL */
    /* analysis/timeline.h, NULL when absent: the frames per thread, and the
     * TMbox states of a `--tm-monitor events` run */
    const struct strobe_timeline *timeline, *tm_timeline;
    /* report/diff.h, NULL when absent: the comparison the differential
     * flame graph draws (`strobe report --diff A B`; the page is B's) */
    const struct strobe_diff *diff;
    const struct strobe_diff_report_opts *diff_opts;
};

/* Writes the page to OUT. Returns 0 or strobe_report_json's codes. */
int strobe_report_html(FILE *out, const struct strobe_experiment *exp, const struct strobe_profile *prof,
                       const struct strobe_html_opts *opts);

#endif
