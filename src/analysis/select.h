/* SPDX-License-Identifier: MIT */
/*
 * Selections: a view of an experiment restricted to some threads, a time
 * window and frames of a minimum duration, for the trace exports
 * (`strobe export --threads/--processes/--from/--to/--min-duration`).
 *
 * The selection is attached to the experiment, and the event iterator
 * (strobe_stream_open/next, experiment.h) applies it: every consumer of the
 * streams, i.e. every trace exporter, sees the same filtered events without
 * code of its own. Exporters only ask strobe_thread_selected() and
 * strobe_process_selected() which locations, lanes or rows to define.
 *
 * What a selected stream contains:
 *   - threads not selected: no events;
 *   - window [from, to] (closed): events at from <= t <= to. A frame
 *     [b, e] that shares an instant with the window (e >= from, b <= to) is
 *     clipped to it: a frame open at `from` is re-entered at `from` (an
 *     event marked synthetic, same type and region as its ENTER or
 *     INHERIT), one still open at `to` is left at `to`; so nesting stays
 *     balanced in every format;
 *   - min_duration D: a frame whose recorded duration e - b is below D is
 *     dropped with everything inside it (a child never lasts longer than
 *     its parent, so its subtree is short too). The recorded duration
 *     decides, not the clipped one: a long frame cut by the window stays.
 *
 * Streaming: whether a frame is kept is only known at its EXIT, but its
 * ENTER must be written first. strobe_experiment_select() therefore reads
 * each selected stream once ahead and keeps one bit per ENTER (kept or
 * not); the export's own pass then decides each ENTER from its bit. Memory
 * is 1 bit per ENTER (125 MB for 10^9 frames), independent of nesting and
 * of how far away the EXIT is; a bounded lookahead would not be: the EXIT
 * of a frame can be anywhere up to the end of the stream. The same pass
 * counts exactly what the selection will emit, for the size estimate.
 * Without a window and a minimum duration no pass is made.
 */
#ifndef STROBE_ANALYSIS_SELECT_H
#define STROBE_ANALYSIS_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/experiment.h"

struct strobe_select_opts {
    uint64_t from_ns, to_ns;  /* experiment ns; [0, UINT64_MAX] = everything */
    uint64_t min_duration_ns; /* 0 keeps every frame */
    const bool *threads;      /* [exp->nthreads]; NULL = all threads */
};

struct strobe_select_summary {
    uint64_t events;       /* events the selection emits: exact when a pass ran
                              (window or minimum duration), else the records of
                              the selected threads */
    uint64_t short_frames; /* frames (sharing an instant with the window) dropped
                              for being shorter than min_duration_ns */
    uint64_t short_events; /* the events those frames would have emitted:
                              their ENTER/EXIT and everything inside them */
    uint32_t threads;      /* selected threads */
};

/* Attaches the selection O to EXP (replacing any previous one), reading
 * the selected streams once when O has a window or a minimum duration.
 * Fills *sum when not NULL. Returns 0 or a reader error / -ENOMEM (message
 * in eb); on error EXP has no selection. Not thread-safe with iterators of
 * EXP that are open. */
int strobe_experiment_select(struct strobe_experiment *exp, const struct strobe_select_opts *o,
                             struct strobe_select_summary *sum, struct strobe_errbuf *eb);

/* true when the selection keeps thread T (always without a selection). */
bool strobe_thread_selected(const struct strobe_experiment *exp, uint32_t t);
/* true when the selection keeps a thread of process P. */
bool strobe_process_selected(const struct strobe_experiment *exp, uint32_t p);

/* The selection's time window, [0, UINT64_MAX] without one. */
void strobe_selection_window(const struct strobe_experiment *exp, uint64_t *from, uint64_t *to);

/* Frees a selection; strobe_experiment_close() calls it. */
void strobe__selection_free(struct strobe_selection *s);

/* ---- the iterator's side (experiment.c) ---- */
struct strobe__filter;

/* A filter for THREAD of the selection S, or NULL with -ENOMEM. */
int strobe__filter_open(const struct strobe_selection *s, uint32_t thread, struct strobe__filter **out);
/* strobe_stream_next() through the filter: pulls unfiltered events with
 * strobe__stream_next_raw(). Same returns. */
int strobe__filter_next(struct strobe__filter *f, struct strobe_stream_iter *it, struct strobe_event *ev,
                        struct strobe_errbuf *eb);
void strobe__filter_close(struct strobe__filter *f);

/* The unfiltered strobe_stream_next() (experiment.c). */
int strobe__stream_next_raw(struct strobe_stream_iter *it, struct strobe_event *ev, struct strobe_errbuf *eb);

#endif
