/* SPDX-License-Identifier: MIT */
/*
 * The timelines of the HTML report's data (see html_timeline.c).
 */
#ifndef STROBE_REPORT_HTML_TIMELINE_H
#define STROBE_REPORT_HTML_TIMELINE_H

#include <stdbool.h>

#include "analysis/timeline.h"
#include "report/jsonw.h"

/* Writes TL as the member KEY of the object open in W: {cell_ns, budget,
 * bytes, intervals, bars, [damage: the first damaged stream's error],
 * [states: the TMbox state names when tm_states], lanes: [{thread, traced,
 * [damaged: true], rows, intervals, bars: [...], cells: [...]}]}. */
void strobe__html_timeline(struct strobe__jw *w, const char *key, const struct strobe_timeline *tl,
                           bool tm_states);

#endif
