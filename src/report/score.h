/* SPDX-License-Identifier: MIT */
/*
 * Filter advice, like Score-P's scorep-score (`strobe report --score`):
 * what each region costs in events, trace bytes and measurement overhead,
 * the estimate for a full run (events the size limit dropped included),
 * and the set of tiny, hot functions to exclude so that the estimate meets
 * a target, written as a ready `--filter` file. The numbers come from the
 * report view (view.h: thread time, cost per event, per-thread visits);
 * the text and JSON renderers are strobe__score_text (text.c) and
 * strobe__score_json (json.c). docs/cli.md, "Filter advice", has the rule.
 */
#ifndef STROBE_REPORT_SCORE_H
#define STROBE_REPORT_SCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/view.h"

enum strobe__score_target_kind {
    STROBE__SCORE_OVERHEAD = 0, /* estimated overhead <= pct % of the thread time */
    STROBE__SCORE_SIZE = 1,     /* estimated trace size <= bytes */
};

struct strobe__score_target {
    int kind;       /* enum strobe__score_target_kind */
    double pct;     /* OVERHEAD: 0..100 */
    uint64_t bytes; /* SIZE */
};

/* What `--score` aims at when no --target is given. */
#define STROBE__SCORE_TARGET_DEFAULT "5%"

/* Parses "5%", "0.5%" (a share of the thread time, 0..100) or a size as
 * strobe__parse_size reads it ("500MB" = 500 MiB). Returns 0 or
 * STROBE_ERR_SYNTAX. */
int strobe__score_target_parse(const char *s, struct strobe__score_target *t);

/* "overhead <= 5% of thread time" or "trace <= 500.0 MiB". */
void strobe__score_target_describe(const struct strobe__score_target *t, char *buf, size_t size);

/* What the advice does with a region. Regions other than KEEP and EXCLUDE
 * are never excluded, whatever the target. */
enum strobe__score_filter {
    STROBE__SCORE_KEEP = 0, /* a candidate the target does not need excluded */
    STROBE__SCORE_EXCLUDE,  /* in the filter */
    STROBE__SCORE_NEVER_MAIN,
    STROBE__SCORE_NEVER_USER,   /* annotated region: the user asked for it */
    STROBE__SCORE_NEVER_ATOMIC, /* TM atomic block */
    STROBE__SCORE_NEVER_OMP,    /* OpenMP construct */
    STROBE__SCORE_NEVER_NAME,   /* no symbol name a rule can match exactly */
    STROBE__SCORE_NEVER_OPEN,   /* no completed visit: no time per visit */
};

/* "exclude", "keep", "never:main", "never:user", "never:atomic",
 * "never:omp", "never:name", "never:open". */
const char *strobe__score_filter_name(int filter);

struct strobe__score_estimate {
    uint64_t events;
    uint64_t bytes;
    double overhead_ns;
};

/* e += r. */
void strobe__score_add(struct strobe__score_estimate *e, const struct strobe__score_estimate *r);

struct strobe__score_row {
    uint32_t region;
    uint64_t visits;  /* all visits, recursive ones included */
    uint64_t incl_ns; /* inclusive time of every visit */
    uint64_t excl_ns;
    bool timed; /* a visit completed, so the times mean something */
    /* events: 2 x visits (an enter and an exit each); bytes: their
     * estimated trace size; overhead: events x the cost per event of
     * the process of each thread that made them */
    struct strobe__score_estimate cost;
    int filter; /* enum strobe__score_filter */
};

struct strobe__score {
    struct strobe__report_view view;
    struct strobe__score_target target;
    struct strobe__score_row *rows; /* regions by events, descending */
    size_t nrows;
    /* bytes per event: measured (total bytes / total events of the trace),
     * or derived from the record format per region (no trace) */
    bool bytes_measured;
    double bytes_per_event;                 /* measured, or the sum of the rows' estimate */
    struct strobe__score_estimate full;     /* a full run: every event, dropped ones too */
    struct strobe__score_estimate filtered; /* the same run with the filter */
    struct strobe__score_estimate regions;  /* sum of the rows */
    struct strobe__score_estimate kept;     /* sum of the rows not excluded */
    size_t nexcluded;                       /* rows with STROBE__SCORE_EXCLUDE */
    size_t ncandidates;                     /* rows with KEEP or EXCLUDE */
    bool evaluable;                         /* an overhead target needs a measured cost per event */
    bool met;                               /* filtered meets the target (false when !evaluable) */
};

/* Builds the advice for target T. Returns 0, -ENOMEM or STROBE_ERR_FORMAT
 * (inconsistent profile, as strobe__report_view_build). On failure S needs
 * no free. */
int strobe__score_build(struct strobe__score *s, const struct strobe_experiment *exp,
                        const struct strobe_profile *prof, const struct strobe__score_target *t);
void strobe__score_free(struct strobe__score *s);

/* The outcome in one line without newline: target met by excluding N
 * functions, met without a filter, not met (what was reached and why), or
 * not evaluable (why). */
void strobe__score_outcome(const struct strobe__score *s, char *buf, size_t size);

/* "4000000 events, 9.5 MiB, overhead 40.000 ms (12.34% of thread time)"
 * for estimate e ("overhead unknown" without a measured cost per event). */
void strobe__score_estimate_str(const struct strobe__score *s, const struct strobe__score_estimate *e,
                                char *buf, size_t size);

/* Writes the filter file (docs/cli.md, "Filter files"): a comment header
 * (what produced it, the target, the estimate before and after, the rule,
 * what is never excluded), then one `exclude` rule per excluded region
 * with a glob matching exactly its name. Returns 0 or -EIO (the caller
 * still checks fclose). */
int strobe__score_write_filter(FILE *out, const struct strobe__score *s);

/* Renderers: the estimate and the table (top rows, 0 = all; the rest
 * summed in one line) as text, or everything as JSON (schema
 * "strobe-score", docs/formats/report-json.md). Return 0 or -EIO / -errno. */
int strobe__score_text(FILE *out, const struct strobe__score *s, size_t top);
int strobe__score_json(FILE *out, const struct strobe__score *s);

#endif
