/* SPDX-License-Identifier: MIT */
/* The transactional-memory view of an experiment (see tm.h). */
#include "analysis/tm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/format.h"

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

/* Counts from the profile: visits of atomic-block nodes and their tm.*
 * metrics, summed over the call paths each block appears on. */
static void counts_from_profile(struct strobe_tm_model *m, const struct strobe_experiment *exp,
                                const struct strobe_profile *prof, const uint32_t *block_of)
{
    uint32_t ids[2 + STROBE_TM_NSERIAL] = {
        metric_id(exp, "tm.rollbacks"), metric_id(exp, "tm.cancels"), metric_id(exp, "tm.serialized.irrevocable"),
        metric_id(exp, "tm.serialized.max_rollbacks"), metric_id(exp, "tm.serialized.other")};
    for (size_t n = 0; n < prof->nnodes; n++) {
        const struct strobe_cnode *node = &prof->nodes[n];
        if (node->region == STROBE_NONE || block_of[node->region] == STROBE_NONE)
            continue;
        for (size_t t = 0; t < m->nthreads; t++) {
            struct strobe_tm_cell *c = &m->cells[block_of[node->region] * m->nthreads + t];
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

/* The TMbox state machine of one thread's attempts. */
struct attempt {
    uint32_t block;     /* block index of the open atomic block, or STROBE_NONE */
    bool open;          /* an attempt started and has not ended */
    bool have_try, have_locked, abort_pending;
    uint64_t start, try_t, locked, abort_t;
};

static void end_attempt(struct strobe_tm_model *m, uint32_t t, struct attempt *a, uint64_t now, bool committed)
{
    if (!a->open)
        return;
    uint64_t *st = &m->states[(size_t)t * STROBE_TM_STATE_COUNT];
    struct strobe_tm_cell *c = a->block != STROBE_NONE ? &m->cells[a->block * m->nthreads + t] : NULL;
    if (committed) {
        if (a->have_try) {
            st[STROBE_TM_STATE_COMPUTE] += a->try_t - a->start;
            if (a->have_locked) {
                st[STROBE_TM_STATE_TRY_LOCK] += a->locked - a->try_t;
                st[STROBE_TM_STATE_COMMIT_LOCKED] += now - a->locked;
            } else {
                st[STROBE_TM_STATE_TRY_LOCK] += now - a->try_t;
            }
        } else {
            st[STROBE_TM_STATE_COMPUTE] += now - a->start;
        }
        if (c)
            c->committed_ns += now - a->start;
    } else {
        st[STROBE_TM_STATE_WASTED] += now - a->start;
        if (c)
            c->aborted_ns += now - a->start;
    }
    a->open = false;
}

static void tm_event(struct strobe_tm_model *m, uint32_t t, struct attempt *a, const struct strobe_event *ev)
{
    uint64_t now = ev->time_ns;
    switch (ev->tm_event) {
    case STROBE_TM_START:
        if (a->abort_pending)
            m->states[(size_t)t * STROBE_TM_STATE_COUNT + STROBE_TM_STATE_ABORT] += now - a->abort_t;
        a->abort_pending = false;
        a->open = true;
        a->have_try = a->have_locked = false;
        a->start = now;
        break;
    case STROBE_TM_TRY_LOCK: /* the event */
        a->have_try = true;
        a->try_t = now;
        break;
    case STROBE_TM_LOCKED:
        a->have_locked = true;
        a->locked = now;
        break;
    case STROBE_TM_COMMIT:
        end_attempt(m, t, a, now, true);
        break;
    case STROBE_TM_ABORT: {
        end_attempt(m, t, a, now, false);
        if (a->block != STROBE_NONE && ev->value >= 1 && ev->value <= STROBE_TM_NCAUSES)
            m->cells[a->block * m->nthreads + t].aborts[ev->value - 1]++;
        size_t culprit = ev->other_thread < m->nthreads ? ev->other_thread : m->nthreads;
        m->aborted_by[culprit * m->nthreads + t]++;
        a->abort_pending = true;
        a->abort_t = now;
        break;
    }
    case STROBE_TM_CANCEL:
        if (ev->value == 1)
            end_attempt(m, t, a, now, false);
        break;
    default: /* SERIAL: counted from the profile */
        break;
    }
}

static int events_of_thread(struct strobe_tm_model *m, const struct strobe_experiment *exp, uint32_t t,
                            const uint32_t *block_of, struct strobe_errbuf *eb)
{
    struct strobe_stream_iter *it;
    int rc = strobe_stream_open(exp, t, &it, eb);
    if (rc)
        return rc;
    struct attempt a = {.block = STROBE_NONE};
    struct strobe_event ev;
    while ((rc = strobe_stream_next(it, &ev, eb)) == 1) {
        if (ev.type == STROBE_EVENT_TM) {
            m->has_events = true;
            tm_event(m, t, &a, &ev);
        } else if (ev.type == STROBE_EVENT_ENTER && block_of[ev.region] != STROBE_NONE && a.block == STROBE_NONE) {
            a.block = block_of[ev.region];
        } else if (ev.type == STROBE_EVENT_EXIT && a.block != STROBE_NONE && block_of[ev.region] == a.block) {
            /* the block ends: a START never came after a last abort only
             * if the trace was cut; nothing of it is left open */
            end_attempt(m, t, &a, ev.time_ns, false);
            a = (struct attempt){.block = STROBE_NONE};
        }
    }
    strobe_stream_close(it);
    return rc < 0 ? rc : 0;
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
    int rc = 0;
    if (!m->blocks || !m->cells || !m->states || !m->aborted_by) {
        rc = strobe__error(eb, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t r = 0; r < exp->nregions; r++)
        if (block_of[r] != STROBE_NONE)
            m->blocks[block_of[r]] = (uint32_t)r;
    if (m->nblocks == 0)
        goto out;
    counts_from_profile(m, exp, prof, block_of);
    for (uint32_t t = 0; t < exp->nthreads && rc == 0; t++)
        if (exp->threads[t].stream_path)
            rc = events_of_thread(m, exp, t, block_of, eb);
out:
    free(block_of);
    if (rc) {
        strobe_tm_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}
