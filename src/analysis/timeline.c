/* SPDX-License-Identifier: MIT */
/*
 * The report's timelines (see timeline.h): a census pass chooses the cell
 * width from the budget, a build pass keeps the long intervals as bars and
 * sums the short ones into cells.
 */
#include "analysis/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/tm.h"
#include "strobe/tm.h"

/* Duration classes: 0 for 0 ns, else 1 + floor(log2(ns)); an interval is
 * at least 2^k ns long iff its class is > k. */
#define NCLASSES 65
/* Bytes the encoding spends per lane around its arrays, and an estimate
 * per cell, for the census (the build measures the real size). */
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

/* Grows *p (elements of size sz) so that it holds at least n; 0 or -ENOMEM. */
static int reserve(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < n)
        c *= 2;
    void *q = realloc(*p, c * sz);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = c;
    return 0;
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
            if ((rc = reserve((void **)&stack, &cap, depth + 1, sizeof *stack)))
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

/* ---- census: how many intervals of which length, how many cells ---- */

/* Per row of the lane being counted: for each cell width 2^k, the begin of
 * the last interval shorter than 2^k (valid when bit k of `seen`). */
struct row_cells {
    uint64_t seen;
    uint64_t last[64];
};

struct census {
    uint64_t count[NCLASSES]; /* intervals per duration class */
    uint64_t bytes[NCLASSES]; /* their bar encoding without the begin delta */
    uint64_t cells[64];       /* [k]: cells of width 2^k, exactly */
    struct row_cells *rows;   /* of the lane being counted */
    size_t nrows, cap;
};

/* An interval of class c is a cell's for every k >= c; it opens a new cell
 * where its begin is in another 2^k block than the previous short one's.
 * Once it is in the same block at some k, it is at every larger k too (the
 * previous short interval for k + 1 began between the two), so the loop
 * stops there: the cost is one step per new cell, not 64 per interval. */
static int census_interval(void *arg, uint32_t row, uint32_t key, uint64_t begin, uint64_t end)
{
    struct census *c = arg;
    if (row >= c->nrows) {
        if (reserve((void **)&c->rows, &c->cap, (size_t)row + 1, sizeof *c->rows))
            return -ENOMEM;
        memset(c->rows + c->nrows, 0, ((size_t)row + 1 - c->nrows) * sizeof *c->rows);
        c->nrows = (size_t)row + 1;
    }
    struct row_cells *r = &c->rows[row];
    unsigned cls = duration_class(end - begin);
    c->count[cls]++;
    c->bytes[cls] +=
        strobe_timeline_digits(end - begin) + strobe_timeline_digits(row) + strobe_timeline_digits(key) + 4;
    for (unsigned k = cls; k < 64; k++) {
        bool same = (r->seen >> k & 1) && r->last[k] >> k == begin >> k;
        r->last[k] = begin;
        r->seen |= (uint64_t)1 << k;
        if (same)
            break;
        c->cells[k]++;
    }
    return 0;
}

/* Estimated bytes with cells of width 2^k (k = -1: no cells). */
static uint64_t census_estimate(const struct census *c, int k, uint64_t duration, size_t nlanes)
{
    uint64_t bars = 0, bytes = 0, shorter = 0;
    for (unsigned i = 0; i < NCLASSES; i++) {
        if ((int)i > k) {
            bars += c->count[i];
            bytes += c->bytes[i];
        } else {
            shorter += c->count[i];
        }
    }
    /* begin deltas: the lanes' bars spread evenly over the run */
    uint64_t per_lane = bars / (nlanes ? nlanes : 1);
    bytes += bars * strobe_timeline_digits(duration / (per_lane ? per_lane : 1));
    if (k >= 0) {
        uint64_t cells = c->cells[k] < shorter ? c->cells[k] : shorter;
        bytes += cells * CELL_BYTES;
    }
    return bytes + (uint64_t)nlanes * LANE_BYTES;
}

/* ---- build: bars and cells for one cell width ---- */

struct accum {
    bool open, mixed;
    uint64_t cell, count, busy;
    unsigned nkeys;
    uint32_t keys[CELL_KEYS];
    uint64_t key_busy[CELL_KEYS];
};

struct builder {
    uint64_t cell_ns;
    struct strobe_timeline_lane *lane;
    size_t bar_cap, cell_cap;
    struct accum *acc; /* per row */
    size_t nacc, acc_cap;
};

static int flush_cell(struct builder *b, uint32_t row)
{
    struct accum *a = &b->acc[row];
    if (!a->open)
        return 0;
    struct strobe_timeline_lane *l = b->lane;
    if (reserve((void **)&l->cells, &b->cell_cap, l->ncells + 1, sizeof *l->cells))
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
                                                          .mixed = a->mixed};
    a->open = false;
    return 0;
}

static int build_interval(void *arg, uint32_t row, uint32_t key, uint64_t begin, uint64_t end)
{
    struct builder *b = arg;
    struct strobe_timeline_lane *l = b->lane;
    l->intervals++;
    if (row + 1 > l->rows)
        l->rows = row + 1;
    if (end - begin >= b->cell_ns) {
        if (reserve((void **)&l->bars, &b->bar_cap, l->nbars + 1, sizeof *l->bars))
            return -ENOMEM;
        l->bars[l->nbars++] = (struct strobe_timeline_bar){begin, end, row, key};
        return 0;
    }
    if (row >= b->nacc) {
        if (reserve((void **)&b->acc, &b->acc_cap, (size_t)row + 1, sizeof *b->acc))
            return -ENOMEM;
        memset(b->acc + b->nacc, 0, ((size_t)row + 1 - b->nacc) * sizeof *b->acc);
        b->nacc = (size_t)row + 1;
    }
    struct accum *a = &b->acc[row];
    uint64_t cell = begin / b->cell_ns;
    if (a->open && a->cell != cell) {
        int rc = flush_cell(b, row);
        if (rc)
            return rc;
    }
    if (!a->open)
        *a = (struct accum){.open = true, .cell = cell};
    a->count++;
    a->busy += end - begin;
    unsigned i = 0;
    while (i < a->nkeys && a->keys[i] != key)
        i++;
    if (i == a->nkeys && i < CELL_KEYS) {
        a->keys[a->nkeys++] = key;
        a->key_busy[i] = 0;
    }
    if (i < CELL_KEYS)
        a->key_busy[i] += end - begin;
    a->mixed = a->mixed || a->nkeys > 1 || i == CELL_KEYS;
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

static void free_lanes(struct strobe_timeline *tl)
{
    for (size_t i = 0; i < tl->nlanes; i++) {
        free(tl->lanes[i].bars);
        free(tl->lanes[i].cells);
    }
    free(tl->lanes);
    tl->lanes = NULL;
    tl->nlanes = 0;
}

static int build_lanes(const struct strobe_experiment *exp, struct strobe_timeline *tl, walk_fn walk,
                       struct strobe_errbuf *eb)
{
    tl->lanes = calloc(exp->nthreads ? exp->nthreads : 1, sizeof *tl->lanes);
    if (!tl->lanes)
        return strobe__error(eb, -ENOMEM, "out of memory");
    tl->nlanes = exp->nthreads;
    tl->intervals = tl->nbars = 0;
    tl->bytes = 0;
    struct builder b = {.cell_ns = tl->cell_ns};
    int rc = 0;
    for (uint32_t t = 0; t < exp->nthreads && rc == 0; t++) {
        struct strobe_timeline_lane *l = &tl->lanes[t];
        l->thread = t;
        l->traced = exp->threads[t].stream_path != NULL;
        if (!l->traced)
            continue;
        b.lane = l;
        b.bar_cap = b.cell_cap = 0;
        b.nacc = 0;
        if ((rc = walk(exp, t, build_interval, &b, eb)))
            break;
        for (uint32_t r = 0; r < b.nacc && rc == 0; r++)
            rc = flush_cell(&b, r);
        qsort(l->bars, l->nbars, sizeof *l->bars, cmp_bar);
        qsort(l->cells, l->ncells, sizeof *l->cells, cmp_cell);
        tl->intervals += l->intervals;
        tl->nbars += l->nbars;
        tl->bytes += lane_bytes(tl, l);
    }
    free(b.acc);
    if (rc == -ENOMEM && !eb->msg[0])
        strobe__error(eb, rc, "out of memory");
    return rc;
}

/* Whether every interval fits the budget as a bar, by the experiment's
 * counts alone: at most per_event intervals per recorded event (a frame
 * has its ENTER or INHERIT; a TM state ends at an event that ends at most
 * two others), rows and keys below the event count and nkeys, times below
 * the duration. Small traces then skip the census. */
static bool surely_exact(const struct strobe_experiment *exp, size_t budget, uint64_t per_event,
                         uint64_t nkeys)
{
    uint64_t events = 0;
    for (size_t t = 0; t < exp->nthreads; t++)
        if (exp->threads[t].stream_path)
            events += exp->threads[t].events;
    size_t bar = 2 * strobe_timeline_digits(exp->duration_ns) + strobe_timeline_digits(events) +
                 strobe_timeline_digits(nkeys) + 4;
    uint64_t lanes = (uint64_t)exp->nthreads * LANE_BYTES;
    return lanes <= budget && events * per_event <= (budget - lanes) / bar;
}

static int timeline_build(const struct strobe_experiment *exp, size_t budget, walk_fn walk,
                          uint64_t per_event, uint64_t nkeys, struct strobe_timeline **out,
                          struct strobe_errbuf *eb)
{
    struct strobe_timeline *tl = calloc(1, sizeof *tl);
    struct census c;
    memset(&c, 0, sizeof c);
    if (!tl)
        return strobe__error(eb, -ENOMEM, "out of memory");
    tl->budget = budget;
    int rc = 0;
    bool exact = surely_exact(exp, budget, per_event, nkeys);
    for (uint32_t t = 0; t < exp->nthreads && rc == 0 && !exact; t++) {
        if (!exp->threads[t].stream_path)
            continue;
        rc = walk(exp, t, census_interval, &c, eb);
        c.nrows = 0;
    }
    free(c.rows);
    if (rc) {
        if (rc == -ENOMEM && !eb->msg[0])
            strobe__error(eb, rc, "out of memory");
        free(tl);
        return rc;
    }
    /* exact when it fits, else the finest power of two that fits */
    int k = -1;
    while (!exact && k < 63 && census_estimate(&c, k, exp->duration_ns, exp->nthreads) > budget)
        k++;
    for (;;) {
        tl->cell_ns = k < 0 ? 0 : (uint64_t)1 << k;
        if ((rc = build_lanes(exp, tl, walk, eb)) || tl->bytes <= budget || k >= 62)
            break;
        free_lanes(tl);
        k++;
    }
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
    return timeline_build(exp, budget, walk_frames, 1, exp->nregions, out, eb);
}

int strobe_tm_timeline_build(const struct strobe_experiment *exp, size_t budget, struct strobe_timeline **out,
                             struct strobe_errbuf *eb)
{
    if (!exp->tm_logging && !(exp->tm && exp->tm_level == STROBE_TM_MONITOR_EVENTS))
        return -ENOENT;
    return timeline_build(exp, budget, walk_tm_states, 3, STROBE_TM_STATE_COUNT, out, eb);
}

void strobe_timeline_free(struct strobe_timeline *tl)
{
    if (!tl)
        return;
    free_lanes(tl);
    free(tl);
}
