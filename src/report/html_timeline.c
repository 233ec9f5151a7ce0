/* SPDX-License-Identifier: MIT */
/*
 * The timelines of the HTML report's data (members "timeline" and
 * "tm_timeline", docs/report-html.md): the models of analysis/timeline.h
 * as flat, delta-encoded integer arrays, the encoding their byte budget
 * counts. The page's timeline.js decodes them.
 */
#include "report/html_timeline.h"

#include "analysis/tm.h"

static void write_lane(struct strobe__jw *w, const struct strobe_timeline *tl,
                       const struct strobe_timeline_lane *l)
{
    strobe__jw_open(w, NULL, '{', true);
    strobe__jw_u64(w, "thread", l->thread);
    strobe__jw_bool(w, "traced", l->traced);
    if (l->damaged)
        strobe__jw_bool(w, "damaged", true);
    strobe__jw_u64(w, "rows", l->rows);
    strobe__jw_u64(w, "intervals", l->intervals);
    /* begin delta, duration, row, key */
    strobe__jw_open(w, "bars", '[', true);
    uint64_t prev = 0;
    for (size_t i = 0; i < l->nbars; i++) {
        const struct strobe_timeline_bar *b = &l->bars[i];
        strobe__jw_u64(w, NULL, b->begin - prev);
        strobe__jw_u64(w, NULL, b->end - b->begin);
        strobe__jw_u64(w, NULL, b->row);
        strobe__jw_u64(w, NULL, b->key);
        prev = b->begin;
    }
    strobe__jw_close(w);
    /* cell delta, row, key, count, busy per mille, mixed */
    strobe__jw_open(w, "cells", '[', true);
    prev = 0;
    for (size_t i = 0; i < l->ncells; i++) {
        const struct strobe_timeline_cell *c = &l->cells[i];
        strobe__jw_u64(w, NULL, c->cell - prev);
        strobe__jw_u64(w, NULL, c->row);
        strobe__jw_u64(w, NULL, c->key);
        strobe__jw_u64(w, NULL, c->count);
        strobe__jw_u64(w, NULL, strobe_timeline_busy_pm(tl, c));
        strobe__jw_u64(w, NULL, c->mixed);
        prev = c->cell;
    }
    strobe__jw_close(w);
    strobe__jw_close(w);
}

void strobe__html_timeline(struct strobe__jw *w, const char *key, const struct strobe_timeline *tl,
                           bool tm_states)
{
    strobe__jw_open(w, key, '{', false);
    strobe__jw_u64(w, "cell_ns", tl->cell_ns);
    strobe__jw_u64(w, "budget", tl->budget);
    strobe__jw_u64(w, "bytes", tl->bytes);
    strobe__jw_u64(w, "intervals", tl->intervals);
    strobe__jw_u64(w, "bars", tl->nbars);
    if (tl->ndamaged)
        strobe__jw_str(w, "damage", tl->damage.msg);
    if (tm_states) {
        strobe__jw_open(w, "states", '[', true);
        for (int s = 0; s < STROBE_TM_STATE_COUNT; s++)
            strobe__jw_str(w, NULL, strobe_tm_state_name(s));
        strobe__jw_close(w);
    }
    strobe__jw_open(w, "lanes", '[', false);
    for (size_t i = 0; i < tl->nlanes; i++)
        write_lane(w, tl, &tl->lanes[i]);
    strobe__jw_close(w);
    strobe__jw_close(w);
}
