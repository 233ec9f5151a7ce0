/* SPDX-License-Identifier: MIT */
/*
 * Selections of an experiment (select.h): the look-ahead pass that decides
 * which frames are long enough and counts what will be emitted, and the
 * per-thread filter the event iterator runs every event through.
 */
#include "analysis/select.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct strobe_selection {
    uint64_t from_ns, to_ns, min_duration_ns;
    size_t nthreads;
    bool *threads;   /* [nthreads] */
    bool *processes; /* [nprocesses]: has a selected thread */
    uint64_t **keep; /* [nthreads] bit i = the thread's ENTER i is kept; NULL without min_duration */
    size_t *keep_bits;
};

void strobe__selection_free(struct strobe_selection *s)
{
    if (!s)
        return;
    for (size_t t = 0; s->keep && t < s->nthreads; t++)
        free(s->keep[t]);
    free(s->keep);
    free(s->keep_bits);
    free(s->threads);
    free(s->processes);
    free(s);
}

bool strobe_thread_selected(const struct strobe_experiment *exp, uint32_t t)
{
    return !exp->selection || (t < exp->selection->nthreads && exp->selection->threads[t]);
}

bool strobe_process_selected(const struct strobe_experiment *exp, uint32_t p)
{
    return !exp->selection || (p < exp->nprocesses && exp->selection->processes[p]);
}

void strobe_selection_window(const struct strobe_experiment *exp, uint64_t *from, uint64_t *to)
{
    *from = exp->selection ? exp->selection->from_ns : 0;
    *to = exp->selection ? exp->selection->to_ns : UINT64_MAX;
}

static bool in_window(const struct strobe_selection *s, uint64_t t)
{
    return t >= s->from_ns && t <= s->to_ns;
}

/* ---- the look-ahead pass ------------------------------------------------ */

struct count_frame {
    uint64_t begin, ordinal;
    uint64_t inner; /* events emitted inside the frame if it is kept */
};

/* Makes room for `need` elements of ELEM bytes in *v (capacity *cap,
 * doubled as needed); new elements are zeroed. 0 or -ENOMEM. */
static int reserve(void *v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    char *p = realloc(*(void **)v, n * elem);
    if (!p)
        return -ENOMEM;
    memset(p + *cap * elem, 0, (n - *cap) * elem);
    *(void **)v = p;
    *cap = n;
    return 0;
}

/* Reads THREAD's stream (unfiltered: no selection is attached yet), sets
 * the keep bits and adds what the filter will emit to *sum. Without a
 * minimum duration the pass stops at the first event after the window:
 * the frames open then are clipped at `to`, so each emits two events. */
static int count_thread(const struct strobe_experiment *exp, struct strobe_selection *s, uint32_t thread,
                        struct strobe_select_summary *sum, struct strobe_errbuf *eb)
{
    struct strobe_stream_iter *it;
    int rc = strobe_stream_open(exp, thread, &it, eb);
    if (rc)
        return rc;
    struct count_frame *stack = NULL;
    size_t depth = 0, cap = 0, words = 0;
    uint64_t ordinal = 0, top = 0; /* top: emitted outside any frame */
    uint64_t *bits = NULL;
    struct strobe_event ev;
    while ((rc = strobe_stream_next(it, &ev, eb)) == 1) {
        uint64_t t = ev.time_ns;
        uint64_t *outer = depth ? &stack[depth - 1].inner : &top;
        rc = 0;
        if (!s->min_duration_ns && t > s->to_ns)
            break;
        if (ev.type == STROBE_EVENT_ENTER || ev.type == STROBE_EVENT_INHERIT) {
            if ((rc = reserve(&stack, &cap, depth + 1, sizeof *stack)) < 0)
                break;
            stack[depth++] = (struct count_frame){t, ordinal++, 0};
        } else if (ev.type == STROBE_EVENT_EXIT && depth > 0) {
            struct count_frame f = stack[--depth];
            outer = depth ? &stack[depth - 1].inner : &top;
            bool overlaps = t >= s->from_ns && f.begin <= s->to_ns;
            uint64_t total = f.inner + (overlaps ? 2 : 0);
            if (s->min_duration_ns && t - f.begin < s->min_duration_ns) {
                if (overlaps) {
                    sum->short_frames++;
                    sum->short_events += total;
                }
            } else {
                *outer += total;
                if (s->min_duration_ns) {
                    if ((rc = reserve(&bits, &words, f.ordinal / 64 + 1, sizeof *bits)) < 0)
                        break;
                    bits[f.ordinal / 64] |= 1ull << (f.ordinal % 64);
                }
            }
        } else if (in_window(s, t)) {
            *outer += 1;
        }
    }
    /* frames still open after an early stop: clipped at `to` */
    for (; rc >= 0 && depth > 0; depth--) {
        uint64_t *outer = depth > 1 ? &stack[depth - 2].inner : &top;
        *outer += stack[depth - 1].inner + 2;
    }
    strobe_stream_close(it);
    free(stack);
    if (rc == -ENOMEM)
        strobe__error(eb, rc, "%s: out of memory", exp->dir);
    if (rc < 0) {
        free(bits);
        return rc;
    }
    sum->events += top;
    if (s->keep) {
        s->keep[thread] = bits;
        s->keep_bits[thread] = words * 64;
    }
    return 0;
}

int strobe_experiment_select(struct strobe_experiment *exp, const struct strobe_select_opts *o,
                             struct strobe_select_summary *sum, struct strobe_errbuf *eb)
{
    struct strobe_select_summary local;
    if (!sum)
        sum = &local;
    memset(sum, 0, sizeof *sum);
    strobe__selection_free(exp->selection);
    exp->selection = NULL;
    struct strobe_selection *s = calloc(1, sizeof *s);
    size_t nt = exp->nthreads ? exp->nthreads : 1;
    if (s) {
        s->from_ns = o->from_ns;
        s->to_ns = o->to_ns;
        s->min_duration_ns = o->min_duration_ns;
        s->nthreads = exp->nthreads;
        s->threads = calloc(nt, sizeof *s->threads);
        s->processes = calloc(exp->nprocesses ? exp->nprocesses : 1, sizeof *s->processes);
        if (o->min_duration_ns) {
            s->keep = calloc(nt, sizeof *s->keep);
            s->keep_bits = calloc(nt, sizeof *s->keep_bits);
        }
    }
    if (!s || !s->threads || !s->processes || (o->min_duration_ns && (!s->keep || !s->keep_bits))) {
        strobe__selection_free(s);
        return strobe__error(eb, -ENOMEM, "%s: out of memory", exp->dir);
    }
    bool pass = o->from_ns > 0 || o->to_ns < UINT64_MAX || o->min_duration_ns > 0;
    for (uint32_t t = 0; t < exp->nthreads; t++) {
        if (o->threads && !o->threads[t])
            continue;
        s->threads[t] = true;
        s->processes[exp->threads[t].process] = true;
        sum->threads++;
        if (!exp->threads[t].stream_path)
            continue;
        if (!pass) {
            sum->events += exp->threads[t].events;
            continue;
        }
        int rc = count_thread(exp, s, t, sum, eb);
        if (rc < 0) {
            strobe__selection_free(s);
            return rc;
        }
    }
    exp->selection = s;
    return 0;
}

/* ---- the filter ---------------------------------------------------------- */

enum { BEFORE, INSIDE, AFTER };

struct open_frame {
    int type; /* ENTER or INHERIT */
    uint32_t region;
};

struct strobe__filter {
    const struct strobe_selection *s;
    bool selected;
    bool pass_through;    /* selected, no window, no minimum duration */
    bool min_duration;    /* frames are kept by their bit in keep */
    const uint64_t *keep; /* NULL when no frame of the thread is kept */
    size_t keep_bits;
    uint64_t ordinal; /* ENTERs seen */
    int phase;
    struct open_frame *stack;
    size_t depth, cap;
    size_t hidden; /* index of the outermost dropped open frame, or SIZE_MAX */
    /* events ready to be returned: the clipped re-entries or exits, then
     * the event that caused them */
    struct strobe_event *queue;
    size_t qhead, qlen, qcap;
};

int strobe__filter_open(const struct strobe_selection *s, uint32_t thread, struct strobe__filter **out)
{
    struct strobe__filter *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    f->s = s;
    f->selected = thread < s->nthreads && s->threads[thread];
    f->pass_through = s->from_ns == 0 && s->to_ns == UINT64_MAX && s->min_duration_ns == 0;
    if (s->keep && thread < s->nthreads) {
        f->min_duration = true;
        f->keep = s->keep[thread];
        f->keep_bits = s->keep_bits[thread];
    }
    f->phase = BEFORE;
    f->hidden = SIZE_MAX;
    *out = f;
    return 0;
}

void strobe__filter_close(struct strobe__filter *f)
{
    if (!f)
        return;
    free(f->stack);
    free(f->queue);
    free(f);
}

/* Open frames that are emitted: those outside any dropped frame. */
static size_t visible_depth(const struct strobe__filter *f)
{
    return f->hidden == SIZE_MAX ? f->depth : f->hidden;
}

static int enqueue(struct strobe__filter *f, const struct strobe_event *ev)
{
    if (reserve(&f->queue, &f->qcap, f->qlen + 1, sizeof *f->queue) < 0)
        return -ENOMEM;
    f->queue[f->qlen++] = *ev;
    return 0;
}

/* An ENTER/INHERIT (enter) or EXIT of open frame i at time t, added by
 * the window's clipping. */
static int enqueue_clip(struct strobe__filter *f, size_t i, bool enter, uint64_t t, uint64_t offset)
{
    struct strobe_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = enter ? f->stack[i].type : STROBE_EVENT_EXIT;
    ev.region = f->stack[i].region;
    ev.metric = ev.other_thread = STROBE_NONE;
    ev.time_ns = t;
    ev.depth = (uint32_t)(enter ? i + 1 : i);
    ev.offset = offset;
    ev.synthetic = true;
    return enqueue(f, &ev);
}

/* Follows the nesting; returns whether ev is outside every dropped frame. */
static int track(struct strobe__filter *f, const struct strobe_event *ev, bool *visible)
{
    if (ev->type == STROBE_EVENT_ENTER || ev->type == STROBE_EVENT_INHERIT) {
        uint64_t n = f->ordinal++;
        bool kept = !f->min_duration || (n < f->keep_bits && (f->keep[n / 64] >> (n % 64) & 1));
        if (reserve(&f->stack, &f->cap, f->depth + 1, sizeof *f->stack) < 0)
            return -ENOMEM;
        f->stack[f->depth++] = (struct open_frame){ev->type, ev->region};
        if (!kept && f->hidden == SIZE_MAX)
            f->hidden = f->depth - 1;
        *visible = f->hidden == SIZE_MAX;
        return 0;
    }
    *visible = f->hidden == SIZE_MAX;
    if (ev->type == STROBE_EVENT_EXIT && f->depth > 0 && --f->depth == f->hidden)
        f->hidden = SIZE_MAX;
    return 0;
}

int strobe__filter_next(struct strobe__filter *f, struct strobe_stream_iter *it, struct strobe_event *ev,
                        struct strobe_errbuf *eb)
{
    if (!f->selected)
        return 0;
    if (f->pass_through)
        return strobe__stream_next_raw(it, ev, eb);
    const struct strobe_selection *s = f->s;
    for (;;) {
        if (f->qhead < f->qlen) {
            *ev = f->queue[f->qhead++];
            return 1;
        }
        f->qhead = f->qlen = 0;
        if (f->phase == AFTER)
            return 0; /* the rest of the stream is after the window */
        int rc = strobe__stream_next_raw(it, ev, eb);
        if (rc <= 0)
            return rc;
        rc = 0;
        if (f->phase == BEFORE && ev->time_ns >= s->from_ns) {
            /* entering the window: re-enter the frames open at `from` */
            for (size_t i = 0; i < visible_depth(f) && rc == 0; i++)
                rc = enqueue_clip(f, i, true, s->from_ns, ev->offset);
            f->phase = INSIDE;
        }
        if (rc == 0 && ev->time_ns > s->to_ns) {
            /* leaving it (from <= to: the window was entered above) */
            for (size_t i = visible_depth(f); i > 0 && rc == 0; i--)
                rc = enqueue_clip(f, i - 1, false, s->to_ns, ev->offset);
            f->phase = AFTER;
            if (rc < 0)
                return strobe__error(eb, rc, "out of memory");
            continue;
        }
        bool visible = false;
        if (rc == 0)
            rc = track(f, ev, &visible);
        if (rc == 0 && visible && f->phase == INSIDE) {
            ev->depth = (uint32_t)visible_depth(f);
            rc = enqueue(f, ev);
        }
        if (rc < 0)
            return strobe__error(eb, rc, "out of memory");
    }
}
