/* SPDX-License-Identifier: MIT */
/*
 * The report's timelines (see timeline.h): one pass over the streams keeps
 * the intervals as bars while they fit the budget; when they no longer do,
 * what was read so far is re-aggregated in memory with wider cells, and
 * the pass goes on with those.
 */
#include "analysis/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/keymap.h"
#include "analysis/tm.h"
#include "strobe/tm.h"

/* Duration classes: 0 for 0 ns, else 1 + floor(log2(ns)); an interval is
 * at least 2^k ns long iff its class is > k. */
#define NCLASSES 65
/* Bytes the encoding spends per lane around its arrays, and an estimate
 * per cell while reading (a fit measures the real size). */
#define LANE_BYTES 96
#define CELL_BYTES 16
/* keys tracked per cell for its dominant one */
#define CELL_KEYS 8

/* Reports one interval; within a row, intervals come in time order. */
typedef int (*interval_fn)(void *arg, uint32_t row, uint32_t key, uint64_t begin, uint64_t end);
/* Walks one thread's intervals. */
typedef int (*walk_fn)(const struct strobe_experiment *exp, uint32_t thread, interval_fn fn, void *arg,
                       struct strobe_errbuf *eb);

static unsigned duration_class(uint64_t d)
{
    return d ? 64 - (unsigned)__builtin_clzll(d) : 0;
}

/* ---- the frames of the event streams ---- */

struct open_frame {
    uint32_t region;
    uint64_t begin;
};

static int walk_frames(const struct strobe_experiment *exp, uint32_t thread, interval_fn fn, void *arg,
                       struct strobe_errbuf *eb)
{
    struct strobe_stream_iter *it;
    int rc = strobe_stream_open(exp, thread, &it, eb);
    if (rc)
        return rc;
    struct open_frame *stack = NULL;
    size_t depth = 0, cap = 0;
    struct strobe_event ev;
    while ((rc = strobe_stream_next(it, &ev, eb)) == 1) {
        rc = 0;
        if (ev.type == STROBE_EVENT_ENTER || ev.type == STROBE_EVENT_INHERIT) {
            if ((rc = strobe__grow((void **)&stack, &cap, depth + 1, sizeof *stack)))
                break;
            stack[depth++] = (struct open_frame){ev.region, ev.time_ns};
        } else if (ev.type == STROBE_EVENT_EXIT && depth) { /* the iterator guarantees nesting */
            struct open_frame *f = &stack[--depth];
            rc = fn(arg, (uint32_t)depth, f->region, f->begin, ev.time_ns);
        }
        if (rc)
            break;
    }
    free(stack);
    strobe_stream_close(it);
    return rc < 0 ? rc : 0;
}

/* ---- the TMbox states ---- */

struct tm_adapter {
    interval_fn fn;
    void *arg;
};

static int tm_state(void *arg, uint32_t block, int state, uint64_t begin, uint64_t end)
{
    struct tm_adapter *a = arg;
    (void)block;
    return a->fn(a->arg, 0, (uint32_t)state, begin, end);
}

static int walk_tm_states(const struct strobe_experiment *exp, uint32_t thread, interval_fn fn, void *arg,
                          struct strobe_errbuf *eb)
{
    struct tm_adapter a = {fn, arg};
    struct strobe_tm_visitor v = {.arg = &a, .state = tm_state};
    return strobe_tm_walk_thread(exp, thread, &v, eb);
}

/* ---- build: one pass, coarsened in memory whenever over the budget ---- */

struct accum {
    bool open, mixed;
    uint64_t cell, count, busy;
    unsigned nkeys;
    uint32_t keys[CELL_KEYS];
    uint64_t key_busy[CELL_KEYS];
};

struct builder {
    struct strobe_timeline *tl;
    size_t budget;
    uint64_t est;                      /* bytes: measured at the last fit, estimated since */
    struct strobe_timeline_lane *lane; /* being read */
    size_t *bar_cap, *cell_cap;        /* per lane */
    struct accum *acc;                 /* per row of the lane being read */
    size_t nacc, acc_cap;
};

static int flush_cell(struct builder *b, uint32_t row)
{
    struct accum *a = &b->acc[row];
    if (!a->open)
        return 0;
    struct strobe_timeline_lane *l = b->lane;
    if (strobe__grow((void **)&l->cells, &b->cell_cap[l->thread], l->ncells + 1, sizeof *l->cells))
        return -ENOMEM;
    unsigned best = 0;
    for (unsigned i = 1; i < a->nkeys; i++)
        if (a->key_busy[i] > a->key_busy[best])
            best = i;
    l->cells[l->ncells++] = (struct strobe_timeline_cell){.cell = a->cell,
                                                          .row = row,
                                                          .key = a->keys[best],
                                                          .count = a->count,
                                                          .busy_ns = a->busy,
                                                          .key_ns = a->key_busy[best],
                                                          .mixed = a->mixed};
    a->open = false;
    return 0;
}

static int cmp_bar(const void *x, const void *y)
{
    const struct strobe_timeline_bar *a = x, *b = y;
    if (a->begin != b->begin)
        return a->begin < b->begin ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

static int cmp_cell(const void *x, const void *y)
{
    const struct strobe_timeline_cell *a = x, *b = y;
    if (a->cell != b->cell)
        return a->cell < b->cell ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

/* Bytes of the lane's encoded arrays (timeline.h) plus LANE_BYTES. */
static size_t lane_bytes(const struct strobe_timeline *tl, const struct strobe_timeline_lane *l)
{
    size_t n = LANE_BYTES;
    uint64_t prev = 0;
    for (size_t i = 0; i < l->nbars; i++) {
        const struct strobe_timeline_bar *r = &l->bars[i];
        n += strobe_timeline_digits(r->begin - prev) + strobe_timeline_digits(r->end - r->begin) +
             strobe_timeline_digits(r->row) + strobe_timeline_digits(r->key) + 4;
        prev = r->begin;
    }
    prev = 0;
    for (size_t i = 0; i < l->ncells; i++) {
        const struct strobe_timeline_cell *c = &l->cells[i];
        n += strobe_timeline_digits(c->cell - prev) + strobe_timeline_digits(c->row) +
             strobe_timeline_digits(c->key) + strobe_timeline_digits(c->count) +
             strobe_timeline_digits(strobe_timeline_busy_pm(tl, c)) + 1 + 6;
        prev = c->cell;
    }
    return n;
}

/* Sorts a lane's bars and cells and merges the cells of one row and cell
 * (an accumulator flushed by a fit, a coarsening): the key with the more
 * time wins. */
static void normalize_lane(struct strobe_timeline_lane *l)
{
    if (l->nbars > 1) /* (qsort's array must not be NULL, even empty) */
        qsort(l->bars, l->nbars, sizeof *l->bars, cmp_bar);
    if (l->ncells > 1)
        qsort(l->cells, l->ncells, sizeof *l->cells, cmp_cell);
    size_t n = 0;
    for (size_t i = 0; i < l->ncells; i++) {
        struct strobe_timeline_cell *c = &l->cells[i], *m = n ? &l->cells[n - 1] : NULL;
        if (!m || m->cell != c->cell || m->row != c->row) {
            l->cells[n++] = *c;
            continue;
        }
        m->count += c->count;
        m->busy_ns += c->busy_ns;
        m->mixed = m->mixed || c->mixed || m->key != c->key;
        if (m->key == c->key) {
            m->key_ns += c->key_ns;
        } else if (c->key_ns > m->key_ns) {
            m->key = c->key;
            m->key_ns = c->key_ns;
        }
    }
    l->ncells = n;
}

/* Normalizes the lanes read so far and measures them exactly. */
static void measure(struct builder *b)
{
    struct strobe_timeline *tl = b->tl;
    b->est = 0;
    for (size_t t = 0; t < tl->nlanes; t++) {
        normalize_lane(&tl->lanes[t]);
        b->est += lane_bytes(tl, &tl->lanes[t]);
    }
}

/* The next cell width: from exact, the smallest power of two that at
 * least half of the bars are shorter than; else twice the width. */
static uint64_t next_width(const struct strobe_timeline *tl)
{
    if (tl->cell_ns)
        return tl->cell_ns * 2;
    uint64_t count[NCLASSES] = {0}, bars = 0;
    for (size_t t = 0; t < tl->nlanes; t++)
        for (size_t i = 0; i < tl->lanes[t].nbars; i++, bars++)
            count[duration_class(tl->lanes[t].bars[i].end - tl->lanes[t].bars[i].begin)]++;
    uint64_t longer = bars;
    unsigned k = 0;
    while (k < 62 && (longer -= count[k]) > bars / 2)
        k++;
    return (uint64_t)1 << k;
}

/* Re-aggregates every lane read so far with cells of width w (a power of
 * two above the current one): the bars shorter than w become cells, the
 * cells are merged into the wider ones. */
static int coarsen(struct builder *b, uint64_t w)
{
    struct strobe_timeline *tl = b->tl;
    for (size_t t = 0; t < tl->nlanes; t++) {
        struct strobe_timeline_lane *l = &tl->lanes[t];
        for (size_t i = 0; i < l->ncells; i++)
            l->cells[i].cell /= w / tl->cell_ns; /* cells exist only when cell_ns > 0 */
        size_t kept = 0;
        for (size_t i = 0; i < l->nbars; i++) {
            struct strobe_timeline_bar *r = &l->bars[i];
            uint64_t d = r->end - r->begin;
            if (d >= w) {
                l->bars[kept++] = *r;
                continue;
            }
            if (strobe__grow((void **)&l->cells, &b->cell_cap[t], l->ncells + 1, sizeof *l->cells))
                return -ENOMEM;
            l->cells[l->ncells++] = (struct strobe_timeline_cell){
                .cell = r->begin / w, .row = r->row, .key = r->key, .count = 1, .busy_ns = d, .key_ns = d};
        }
        l->nbars = kept;
    }
    tl->cell_ns = w;
    measure(b);
    return 0;
}

/* Brings the lanes read so far within the budget (15/16 of it while
 * reading, so that the next check is some way off; all of it at the end),
 * coarsening as often as needed. */
static int fit(struct builder *b, size_t limit)
{
    int rc = 0;
    if (b->lane)
        for (uint32_t r = 0; r < b->nacc && rc == 0; r++)
            rc = flush_cell(b, r);
    if (rc)
        return rc;
    measure(b);
    while (b->est > limit && b->tl->cell_ns < (uint64_t)1 << 62)
        if ((rc = coarsen(b, next_width(b->tl))))
            return rc;
    return 0;
}

static int build_interval(void *arg, uint32_t row, uint32_t key, uint64_t begin, uint64_t end)
{
    struct builder *b = arg;
    struct strobe_timeline_lane *l = b->lane;
    uint64_t w = b->tl->cell_ns, d = end - begin;
    l->intervals++;
    if (row + 1 > l->rows)
        l->rows = row + 1;
    if (d >= w) {
        if (strobe__grow((void **)&l->bars, &b->bar_cap[l->thread], l->nbars + 1, sizeof *l->bars))
            return -ENOMEM;
        l->bars[l->nbars++] = (struct strobe_timeline_bar){begin, end, row, key};
        /* the begin delta estimated by the duration */
        b->est +=
            2 * strobe_timeline_digits(d) + strobe_timeline_digits(row) + strobe_timeline_digits(key) + 4;
    } else {
        if (row >= b->nacc) {
            if (strobe__grow((void **)&b->acc, &b->acc_cap, (size_t)row + 1, sizeof *b->acc))
                return -ENOMEM;
            memset(b->acc + b->nacc, 0, ((size_t)row + 1 - b->nacc) * sizeof *b->acc);
            b->nacc = (size_t)row + 1;
        }
        struct accum *a = &b->acc[row];
        uint64_t cell = begin / w;
        int rc;
        if (a->open && a->cell != cell && (rc = flush_cell(b, row)))
            return rc;
        if (!a->open) {
            *a = (struct accum){.open = true, .cell = cell};
            b->est += CELL_BYTES;
        }
        a->count++;
        a->busy += d;
        unsigned i = 0;
        while (i < a->nkeys && a->keys[i] != key)
            i++;
        if (i == a->nkeys && i < CELL_KEYS) {
            a->keys[a->nkeys++] = key;
            a->key_busy[i] = 0;
        }
        if (i < CELL_KEYS)
            a->key_busy[i] += d;
        a->mixed = a->mixed || a->nkeys > 1 || i == CELL_KEYS;
    }
    /* (at the coarsest width, only the end checks) */
    return b->est > b->budget && w < (uint64_t)1 << 62 ? fit(b, b->budget - b->budget / 16) : 0;
}

static int timeline_build(const struct strobe_experiment *exp, size_t budget, walk_fn walk,
                          struct strobe_timeline **out, struct strobe_errbuf *eb)
{
    struct strobe_timeline *tl = calloc(1, sizeof *tl);
    size_t n = exp->nthreads ? exp->nthreads : 1;
    struct builder b = {.tl = tl,
                        .budget = budget,
                        .bar_cap = calloc(n, sizeof(size_t)),
                        .cell_cap = calloc(n, sizeof(size_t))};
    int rc = 0;
    if (!tl || !b.bar_cap || !b.cell_cap || !(tl->lanes = calloc(n, sizeof *tl->lanes))) {
        rc = -ENOMEM;
        goto out;
    }
    tl->budget = budget;
    tl->nlanes = exp->nthreads;
    for (uint32_t t = 0; t < exp->nthreads && rc == 0; t++) {
        struct strobe_timeline_lane *l = &tl->lanes[t];
        l->thread = t;
        l->traced = exp->threads[t].stream_path != NULL;
        if (!l->traced)
            continue;
        b.lane = l;
        b.nacc = 0;
        rc = walk(exp, t, build_interval, &b, eb);
        if (rc < 0 && rc != -ENOMEM) {
            /* a damaged stream: the lane keeps what was read before */
            l->damaged = true;
            if (tl->ndamaged++ == 0)
                tl->damage = *eb;
            rc = 0;
        }
        for (uint32_t r = 0; r < b.nacc && rc == 0; r++)
            rc = flush_cell(&b, r);
    }
    b.lane = NULL;
    if (rc == 0)
        rc = fit(&b, budget);
    if (rc == 0) {
        tl->bytes = b.est;
        for (size_t t = 0; t < tl->nlanes; t++) {
            tl->intervals += tl->lanes[t].intervals;
            tl->nbars += tl->lanes[t].nbars;
        }
    }
out:
    free(b.acc);
    free(b.bar_cap);
    free(b.cell_cap);
    if (rc == -ENOMEM && !eb->msg[0])
        strobe__error(eb, rc, "out of memory");
    if (rc) {
        strobe_timeline_free(tl);
        return rc;
    }
    *out = tl;
    return 0;
}

int strobe_timeline_build(const struct strobe_experiment *exp, size_t budget, struct strobe_timeline **out,
                          struct strobe_errbuf *eb)
{
    return timeline_build(exp, budget, walk_frames, out, eb);
}

int strobe_tm_timeline_build(const struct strobe_experiment *exp, size_t budget, struct strobe_timeline **out,
                             struct strobe_errbuf *eb)
{
    if (!exp->tm_logging && !(exp->tm && exp->tm_level == STROBE_TM_MONITOR_EVENTS))
        return -ENOENT;
    return timeline_build(exp, budget, walk_tm_states, out, eb);
}

void strobe_timeline_free(struct strobe_timeline *tl)
{
    if (!tl)
        return;
    for (size_t i = 0; i < tl->nlanes; i++) {
        free(tl->lanes[i].bars);
        free(tl->lanes[i].cells);
    }
    free(tl->lanes);
    free(tl);
}
