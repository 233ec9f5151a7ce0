/* SPDX-License-Identifier: MIT */
/*
 * The timeline of the HTML report: per thread (one lane), intervals on
 * nested rows, reduced to a size budget by a level-of-detail scheme, so a
 * trace of any length gives a page of bounded size.
 *
 * Two timelines use it: the frames of the event streams (row = nesting
 * depth, key = global region id) and the TMbox states of `--tm-monitor
 * events` runs (one row, key = enum strobe_tm_state).
 *
 * The scheme (docs/report-html.md, "Timeline"): an interval at least
 * cell_ns long is kept exactly, as a bar; a shorter one is summed into the
 * cell of width cell_ns its start falls in, per lane and row: how many
 * intervals, their busy time, the key with the most time. cell_ns is 0
 * (every interval a bar: exact) when everything fits the budget, else a
 * power of two nanoseconds. The streams are read once: intervals are kept
 * at the current width while the estimated size stays within the budget;
 * when it does not, the lanes read so far are measured exactly and, if
 * over 15/16 of the budget, re-aggregated in memory at wider cells (from
 * exact: the width half of the bars are shorter than; then doubling) until
 * they are within it. At the end the same is done against the whole
 * budget. So the encoded size (strobe_timeline.bytes) is at most the
 * budget unless even one cell per lane and row does not fit, memory stays
 * in proportion to the budget, and cell_ns is the finest width that fits
 * or, when the trace grew past 15/16 of the budget at that width, twice it.
 */
#ifndef STROBE_ANALYSIS_TIMELINE_H
#define STROBE_ANALYSIS_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/experiment.h"

/* Budgets of the report's page (docs/report-html.md): the whole page stays
 * under 10 MB with room for the report's own data. */
#define STROBE_TIMELINE_BUDGET ((size_t)5 << 20)
#define STROBE_TM_TIMELINE_BUDGET ((size_t)1 << 20)

/* An interval kept exactly. */
struct strobe_timeline_bar {
    uint64_t begin, end; /* experiment ns */
    uint32_t row, key;
};

/* The intervals shorter than cell_ns that start in [cell * cell_ns,
 * (cell + 1) * cell_ns) on one row. */
struct strobe_timeline_cell {
    uint64_t cell;
    uint32_t row, key; /* key: the one with the most time of those tracked (the
                          first 8 distinct keys of the cell) */
    uint64_t count;    /* intervals */
    uint64_t busy_ns;  /* their summed time (may exceed cell_ns: the last one
                          can run into the next cell) */
    uint64_t key_ns;   /* the part of busy_ns spent in `key` */
    bool mixed;        /* other keys than `key` too */
};

/* One thread. Bars are sorted by (begin, row), cells by (cell, row). */
struct strobe_timeline_lane {
    uint32_t thread; /* global thread index */
    bool traced;     /* it has an event stream (else: no intervals) */
    bool damaged;    /* its stream could not be read to the end: the intervals
                        that ended before the damage (frames open there are lost) */
    uint32_t rows;   /* 1 + deepest row with an interval, 0 when none */
    uint64_t intervals;
    struct strobe_timeline_bar *bars;
    size_t nbars;
    struct strobe_timeline_cell *cells;
    size_t ncells;
};

struct strobe_timeline {
    uint64_t cell_ns;                   /* 0: every interval is a bar */
    size_t budget;                      /* bytes asked for */
    size_t bytes;                       /* the encoded size of the lanes' arrays (see below) */
    uint64_t intervals;                 /* over all lanes */
    uint64_t nbars;                     /* of them kept as bars */
    struct strobe_timeline_lane *lanes; /* [nlanes], one per thread, in thread order */
    size_t nlanes;
    size_t ndamaged;             /* lanes with a damaged stream */
    struct strobe_errbuf damage; /* the first one's reader error */
};

/* The frames of every traced thread (selection applied by the reader;
 * INHERIT opens a frame like ENTER; frames left open end at the thread's
 * end). A stream the reader fails on is a damaged lane (the model's
 * damage has the message), not a failure. Returns 0 and *out (free with
 * strobe_timeline_free) or -ENOMEM (message in eb). */
int strobe_timeline_build(const struct strobe_experiment *exp, size_t budget, struct strobe_timeline **out,
                          struct strobe_errbuf *eb);

/* The TMbox state intervals of every thread (strobe_tm_walk_thread).
 * -ENOENT when the experiment has no TM event log (exp->tm_logging, or
 * tm level "events"). */
int strobe_tm_timeline_build(const struct strobe_experiment *exp, size_t budget, struct strobe_timeline **out,
                             struct strobe_errbuf *eb);

void strobe_timeline_free(struct strobe_timeline *tl);

/* The encoding the budget counts (and the HTML report writes): per lane,
 * bars as a flat integer array "begin delta, duration, row, key" (begin
 * delta from the previous bar's begin, the first from 0) and cells as
 * "cell delta, row, key, count, busy per mille, mixed 0/1", each number
 * followed by a comma (one too many per array: the closing bracket's). */
static inline size_t strobe_timeline_digits(uint64_t v)
{
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* busy per mille of a cell, 0..1000 */
static inline uint64_t strobe_timeline_busy_pm(const struct strobe_timeline *tl,
                                               const struct strobe_timeline_cell *c)
{
    uint64_t pm = tl->cell_ns ? c->busy_ns * 1000 / tl->cell_ns : 1000;
    return pm > 1000 ? 1000 : pm;
}

#endif
