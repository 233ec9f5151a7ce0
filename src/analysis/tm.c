/* SPDX-License-Identifier: MIT */
/* The transactional-memory view of an experiment (see tm.h). */
#include "analysis/tm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/format.h"
#include "strobe/tm.h"

void strobe_tm_model_free(struct strobe_tm_model *m)
{
    if (!m)
        return;
    free(m->blocks);
    free(m->cells);
    free(m->states);
    free(m->aborted_by);
    free(m);
}

/* Global metric id of NAME, or STROBE_NONE. */
static uint32_t metric_id(const struct strobe_experiment *exp, const char *name)
{
    for (size_t i = 0; i < exp->nmetrics; i++)
        if (strcmp(exp->metrics[i].name, name) == 0)
            return (uint32_t)i;
    return STROBE_NONE;
}

/* Counts from the COUNTS records; marks the cells they fill in `counted`
 * (several records for one cell are added: two call sites on one line). */
static void counts_from_records(struct strobe_tm_model *m, const struct strobe_experiment *exp,
                                const uint32_t *block_of, bool *counted)
{
    for (size_t i = 0; i < exp->ntm_counts; i++) {
        const struct strobe_tm_counts *k = &exp->tm_counts[i];
        size_t cell = block_of[k->block] * m->nthreads + k->thread;
        counted[cell] = true;
        strobe_tm_cell_add(&m->cells[cell], &k->counts);
    }
    m->has_counts = exp->ntm_counts > 0;
}

/* Counts from the profile: visits of atomic-block nodes and their tm.*
 * metrics, summed over the call paths each block appears on, for the cells
 * no COUNTS record filled. */
static void counts_from_profile(struct strobe_tm_model *m, const struct strobe_experiment *exp,
                                const struct strobe_profile *prof, const uint32_t *block_of,
                                const bool *counted)
{
    uint32_t ids[2 + STROBE_TM_NSERIAL] = {
        metric_id(exp, "tm.rollbacks"), metric_id(exp, "tm.cancels"), metric_id(exp, "tm.serialized.irrevocable"),
        metric_id(exp, "tm.serialized.max_rollbacks"), metric_id(exp, "tm.serialized.other")};
    for (size_t n = 0; n < prof->nnodes; n++) {
        const struct strobe_cnode *node = &prof->nodes[n];
        if (node->region == STROBE_NONE || block_of[node->region] == STROBE_NONE)
            continue;
        for (size_t t = 0; t < m->nthreads; t++) {
            size_t cell = block_of[node->region] * m->nthreads + t;
            struct strobe_tm_cell *c = &m->cells[cell];
            if (counted[cell])
                continue;
            if (node->per_thread)
                c->transactions += node->per_thread[t].visits;
            if (!node->thread_metrics)
                continue;
            uint64_t v[2 + STROBE_TM_NSERIAL] = {0};
            for (int k = 0; k < 2 + STROBE_TM_NSERIAL; k++)
                if (ids[k] != STROBE_NONE)
                    v[k] = (uint64_t)node->thread_metrics[t * exp->nmetrics + ids[k]].sum;
            c->rollbacks += v[0];
            c->cancels += v[1];
            for (int k = 0; k < STROBE_TM_NSERIAL; k++)
                c->serialized[k] += v[2 + k];
        }
    }
}

/* The TMbox state machine of one thread's attempts (format.h, STROBE_EXT_TM:
 * the block's ENTER starts the first attempt, its EXIT ends the last). */
struct walk {
    const struct strobe_tm_visitor *v;
    uint32_t block;  /* region of the open atomic block, or STROBE_NONE */
    bool open;       /* an attempt started and has not ended */
    bool have_locked, abort_pending;
    uint64_t start, try_t, locked, abort_t;
};

static int emit_state(struct walk *w, int state, uint64_t b, uint64_t e)
{
    return w->v->state && e > b ? w->v->state(w->v->arg, w->block, state, b, e) : 0;
}

static int end_attempt(struct walk *w, uint64_t now, int outcome)
{
    if (!w->open)
        return 0;
    w->open = false;
    int rc;
    if (outcome == 1 && w->have_locked) {
        if ((rc = emit_state(w, STROBE_TM_STATE_COMPUTE, w->start, w->try_t)) ||
            (rc = emit_state(w, STROBE_TM_STATE_TRY_LOCK, w->try_t, w->locked)) ||
            (rc = emit_state(w, STROBE_TM_STATE_COMMIT_LOCKED, w->locked, now)))
            return rc;
    } else if ((rc = emit_state(w, outcome == 1 ? STROBE_TM_STATE_COMPUTE : STROBE_TM_STATE_WASTED, w->start,
                                now))) {
        return rc;
    }
    return w->v->attempt ? w->v->attempt(w->v->arg, w->block, outcome, w->start, now) : 0;
}

static void start_attempt(struct walk *w, uint64_t now)
{
    w->open = true;
    w->have_locked = false;
    w->start = now;
}

static int walk_tm_event(struct walk *w, const struct strobe_event *ev)
{
    uint64_t now = ev->time_ns;
    int rc = 0;
    switch (ev->tm_event) {
    case STROBE_TM_LOGGING:
        return w->v->logging ? w->v->logging(w->v->arg) : 0;
    case STROBE_TM_START:
        if (w->abort_pending && (rc = emit_state(w, STROBE_TM_STATE_ABORT, w->abort_t, now)))
            return rc;
        w->abort_pending = false;
        start_attempt(w, now);
        return 0;
    case STROBE_TM_LOCKED: /* value: ns since the commit was requested */
        w->have_locked = true;
        w->locked = now;
        w->try_t = (uint64_t)ev->value <= now - w->start ? now - (uint64_t)ev->value : w->start;
        return 0;
    case STROBE_TM_ABORT:
        if ((rc = end_attempt(w, now, 2)))
            return rc;
        w->abort_pending = true;
        w->abort_t = now;
        return w->v->abort ? w->v->abort(w->v->arg, w->block, now, (int)ev->value, ev->other_thread) : 0;
    case STROBE_TM_CANCEL:
        return ev->value == 1 ? end_attempt(w, now, 3) : 0;
    default: /* SERIAL: the profile counts serializations */
        return 0;
    }
}

int strobe_tm_walk_thread(const struct strobe_experiment *exp, uint32_t thread, const struct strobe_tm_visitor *v,
                          struct strobe_errbuf *eb)
{
    struct strobe_stream_iter *it;
    int rc = strobe_stream_open(exp, thread, &it, eb);
    if (rc)
        return rc;
    struct walk w = {.v = v, .block = STROBE_NONE};
    struct strobe_event ev;
    while ((rc = strobe_stream_next(it, &ev, eb)) == 1) {
        rc = 0;
        if (ev.type == STROBE_EVENT_TM) {
            rc = walk_tm_event(&w, &ev);
        } else if (ev.type == STROBE_EVENT_ENTER && w.block == STROBE_NONE &&
                   exp->regions[ev.region].kind == STROBE_REGION_TM_ATOMIC) {
            w.block = ev.region; /* the first attempt starts */
            start_attempt(&w, ev.time_ns);
            rc = v->block ? v->block(v->arg, ev.region, ev.time_ns) : 0;
        } else if (ev.type == STROBE_EVENT_EXIT && ev.region == w.block) {
            /* the last attempt ends: it committed unless a cancel or an
             * abort (of a trace cut before the retry) already closed it */
            if ((rc = end_attempt(&w, ev.time_ns, 1)) == 0 && w.abort_pending)
                rc = emit_state(&w, STROBE_TM_STATE_ABORT, w.abort_t, ev.time_ns);
            w.abort_pending = false;
            w.block = STROBE_NONE;
            if (rc == 0 && v->block)
                rc = v->block(v->arg, STROBE_NONE, ev.time_ns);
        }
        if (rc)
            break;
    }
    strobe_stream_close(it);
    return rc < 0 ? rc : 0;
}

/* ---- the model: the walk's results summed ---- */

struct model_walk {
    struct strobe_tm_model *m;
    const uint32_t *block_of;
    const bool *counted; /* cells whose abort causes came from COUNTS */
    uint32_t thread;
};

static int model_logging(void *arg)
{
    ((struct model_walk *)arg)->m->has_events = true;
    return 0;
}

static int model_state(void *arg, uint32_t block, int state, uint64_t begin, uint64_t end)
{
    struct model_walk *mw = arg;
    (void)block;
    mw->m->states[(size_t)mw->thread * STROBE_TM_STATE_COUNT + state] += end - begin;
    return 0;
}

static int model_attempt(void *arg, uint32_t block, int outcome, uint64_t start, uint64_t end)
{
    struct model_walk *mw = arg;
    struct strobe_tm_cell *c = &mw->m->cells[mw->block_of[block] * mw->m->nthreads + mw->thread];
    if (outcome == 1)
        c->committed_ns += end - start;
    else
        c->aborted_ns += end - start;
    if (outcome == 3)
        c->cancelled_ns += end - start;
    return 0;
}

static int model_abort(void *arg, uint32_t block, uint64_t when, int cause, uint32_t culprit)
{
    struct model_walk *mw = arg;
    struct strobe_tm_model *m = mw->m;
    (void)when;
    size_t cell = block != STROBE_NONE ? mw->block_of[block] * m->nthreads + mw->thread : 0;
    if (block != STROBE_NONE && cause >= 1 && cause <= STROBE_TM_NCAUSES && !mw->counted[cell])
        m->cells[cell].aborts[cause - 1]++;
    size_t row = culprit < m->nthreads ? culprit : m->nthreads;
    m->aborted_by[row * m->nthreads + mw->thread]++;
    return 0;
}

int strobe_tm_model_build(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                          struct strobe_tm_model **out, struct strobe_errbuf *eb)
{
    struct strobe_tm_model *m = calloc(1, sizeof *m);
    uint32_t *block_of = malloc((exp->nregions ? exp->nregions : 1) * sizeof *block_of);
    if (!m || !block_of) {
        free(m);
        free(block_of);
        return strobe__error(eb, -ENOMEM, "out of memory");
    }
    m->nthreads = exp->nthreads;
    for (size_t r = 0; r < exp->nregions; r++)
        block_of[r] = exp->regions[r].kind == STROBE_REGION_TM_ATOMIC ? (uint32_t)m->nblocks++ : STROBE_NONE;
    size_t nt = m->nthreads ? m->nthreads : 1;
    m->blocks = malloc((m->nblocks ? m->nblocks : 1) * sizeof *m->blocks);
    m->cells = calloc((m->nblocks ? m->nblocks : 1) * nt, sizeof *m->cells);
    m->states = calloc(nt * STROBE_TM_STATE_COUNT, sizeof *m->states);
    m->aborted_by = calloc((nt + 1) * nt, sizeof *m->aborted_by);
    bool *counted = calloc((m->nblocks ? m->nblocks : 1) * nt, sizeof *counted);
    int rc = 0;
    if (!m->blocks || !m->cells || !m->states || !m->aborted_by || !counted) {
        rc = strobe__error(eb, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t r = 0; r < exp->nregions; r++)
        if (block_of[r] != STROBE_NONE)
            m->blocks[block_of[r]] = (uint32_t)r;
    if (m->nblocks == 0)
        goto out;
    counts_from_records(m, exp, block_of, counted);
    counts_from_profile(m, exp, prof, block_of, counted);
    struct model_walk mw = {.m = m, .block_of = block_of, .counted = counted};
    struct strobe_tm_visitor v = {.arg = &mw,
                                  .logging = model_logging,
                                  .state = model_state,
                                  .attempt = model_attempt,
                                  .abort = model_abort};
    /* only an event log is worth a second read of the streams */
    bool logged = exp->tm_logging || (exp->tm && exp->tm_level == STROBE_TM_MONITOR_EVENTS);
    for (uint32_t t = 0; t < exp->nthreads && rc == 0 && logged; t++) {
        mw.thread = t;
        if (exp->threads[t].stream_path)
            rc = strobe_tm_walk_thread(exp, t, &v, eb);
    }
out:
    m->has_aborts = m->has_counts || m->has_events;
    free(block_of);
    free(counted);
    if (rc) {
        strobe_tm_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}
