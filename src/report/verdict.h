/* SPDX-License-Identifier: MIT */
/*
 * The verdict on one atomic block of `strobe report --tm`: what its counts
 * and times say about transactional memory there, graded by the share of
 * work it wastes, not by whether anything went wrong at all. The thresholds
 * are stated in docs/tm.md ("Verdict") and the report prints the figures
 * next to the grade, so a reader can check it. Shared by the text and JSON
 * renderers; a pure function of one cell, so it is tested directly.
 */
#ifndef STROBE_REPORT_VERDICT_H
#define STROBE_REPORT_VERDICT_H

#include <stdbool.h>

#include "analysis/tm.h"

/* Thresholds (fractions). good: every figure below its GOOD bound;
 * contention: rollback rate or wasted share at or above its POOR bound;
 * serialization: serialized share at or above its POOR bound; fair:
 * anything else. */
#define STROBE__TM_GOOD_ROLLBACK_RATE 0.05
#define STROBE__TM_GOOD_WASTED 0.10
#define STROBE__TM_GOOD_SERIALIZED 0.01
#define STROBE__TM_POOR_ROLLBACK_RATE 0.50
#define STROBE__TM_POOR_WASTED 0.50
#define STROBE__TM_POOR_SERIALIZED 0.10

enum strobe__tm_grade {
    STROBE__TM_NONE = 0,          /* no completed transaction */
    STROBE__TM_GOOD = 1,          /* TM works well */
    STROBE__TM_FAIR = 2,          /* TM works; conflicts cost some work */
    STROBE__TM_CONTENTION = 3,    /* contention too high for TM */
    STROBE__TM_SERIALIZATION = 4, /* serialized transactions dominate */
};

struct strobe__tm_verdict {
    int grade;              /* enum strobe__tm_grade */
    double rollback_rate;   /* rollbacks / (transactions + rollbacks) */
    double wasted;          /* time in rolled-back attempts (aborted but not
                               cancelled) / time in all attempts; < 0 when
                               unknown (no event log) */
    double serialized;      /* serialized transactions / transactions */
    const char *grade_name; /* "none", "good", "fair", "contention", "serialization" */
    const char *summary;    /* "TM works well", ... */
    const char *advice;     /* one sentence, capitalized, no final period */
};

/* Grades C (a block's cell summed over threads); times: the cell's
 * committed_ns and aborted_ns were measured (event log). Thread-safe. */
void strobe__tm_verdict(const struct strobe_tm_cell *c, bool times, struct strobe__tm_verdict *out);

#endif
