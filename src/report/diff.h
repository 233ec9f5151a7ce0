/* SPDX-License-Identifier: MIT */
/*
 * The comparison report (`strobe report --diff A B`): the diff model of
 * src/analysis/diff.h as text, as JSON (schema docs/formats/diff-json.md)
 * and as the data of the HTML report's differential flame graph. Call
 * paths come by impact: the absolute change of the sort key, largest
 * first.
 */
#ifndef STROBE_REPORT_DIFF_H
#define STROBE_REPORT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/diff.h"

/* Version of the diff JSON schema; bump on incompatible change. */
#define STROBE_DIFF_JSON_VERSION 1

struct strobe__jw;

struct strobe_diff_report_opts {
    const char *const *dirs[2]; /* the runs' directories, side A and B */
    int sort;                   /* enum strobe_report_sort: the change ranked (default incl) */
    size_t top;                 /* text: call paths shown, 0 = all; JSON is complete */
    bool gate;                  /* --fail-above given: strobe_diff_gate was run */
    double fail_above;          /* percent */
    uint64_t min_ns;            /* the gate's noise floor */
    size_t nfailed;             /* strobe_diff_gate's result */
};

/* Write the comparison to OUT. Return 0, -ENOMEM, or -errno / -EIO when
 * writing failed. */
int strobe_report_diff_text(FILE *out, const struct strobe_diff *d, const struct strobe_diff_report_opts *o);
int strobe_report_diff_json(FILE *out, const struct strobe_diff *d, const struct strobe_diff_report_opts *o);

/* The union tree as columns for the HTML page's differential flame graph
 * (member KEY of the enclosing object; docs/report-html.md). */
void strobe__report_diff_html_data(struct strobe__jw *w, const char *key, const struct strobe_diff *d,
                                   const struct strobe_diff_report_opts *o);

#endif
