/* SPDX-License-Identifier: MIT */
/* Clock alignment of the processes of an experiment (align.h). */
#include "analysis/align.h"

#include <stdlib.h>
#include <string.h>

unsigned strobe_align_domain(const struct strobe_experiment *exp, uint32_t p, const char **original)
{
    const char *dir = exp->processes[p].dir;
    size_t n = strlen(dir);
    if (original)
        *original = dir;
    for (size_t i = 0; i < exp->nmeta; i++) {
        const char *v = exp->meta_values[i];
        if (strcmp(exp->meta_keys[i], "merge_process") != 0 || strncmp(v, dir, n) != 0 || v[n] != ' ')
            continue;
        char *end;
        unsigned long d = strtoul(v + n + 1, &end, 10);
        if (original && *end == ' ' && end[1])
            *original = end + 1;
        return d > UINT32_MAX ? 0 : (unsigned)d;
    }
    return 0;
}

int64_t strobe_align_unaligned_ns(const struct strobe_experiment *exp, uint32_t p, uint64_t ns)
{
    const struct strobe_process_info *pi = &exp->processes[p];
    /* the offset where it was measured, moved by the drift since: the
     * drift is ppm, so the aligned time stands in for the raw one */
    long double since = (long double)ns + (long double)exp->origin_ns - (long double)pi->align_at_ns;
    long double off = (long double)pi->align_offset_ns + (long double)pi->align_drift * since;
    return (int64_t)((long double)ns - off + (off < 0 ? -0.5L : 0.5L));
}

/* Process ns before alignment (origin not applied). */
static long double raw(const struct strobe_process_info *p, uint64_t ticks)
{
    return (long double)p->base_ns +
           (long double)(int64_t)(ticks - p->base_ticks) * (long double)p->ns_per_tick;
}

static bool has_peer_offsets(const struct strobe__defs *d)
{
    for (int k = 0; k < 2; k++)
        if (d->have_offset[k] && d->offsets[k].rank != d->offsets[k].reference)
            return true;
    return false;
}

/* The process whose offsets stand for p's clock: p itself, or a process
 * of p's rank and input that measured them (p is its fork child). */
static uint32_t offsets_of(const struct strobe_experiment *exp, const struct strobe__defs *const *defs,
                           uint32_t p, const unsigned *domain)
{
    if (has_peer_offsets(defs[p]))
        return p;
    const struct strobe_process_info *pi = &exp->processes[p];
    for (uint32_t q = 0; q < exp->nprocesses && pi->has_rank; q++)
        if (has_peer_offsets(defs[q]) && domain[q] == domain[p] && exp->processes[q].has_rank &&
            exp->processes[q].rank == pi->rank)
            return q;
    return STROBE_NONE;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC of p's input, from its first process
 * that is not a fork child (a child's realtime was read at the fork, its
 * first sync point is its parent's). false when there is none. */
static bool anchor(const struct strobe_experiment *exp, const struct strobe__defs *const *defs, uint32_t p,
                   const unsigned *domain, long double *out, uint32_t *source)
{
    for (uint32_t k = 0; k <= exp->nprocesses; k++) {
        uint32_t q = k == 0 ? p : k - 1; /* p itself first */
        const struct strobe__defs *d = defs[q];
        if (domain[q] != domain[p] || (d->parent_dir && d->parent_dir[0]) || !d->nsyncs || !d->realtime_ns)
            continue;
        *out = (long double)d->realtime_ns - (long double)d->syncs[0].ns;
        *source = q;
        return true;
    }
    return false;
}

/* Moves p's line by offset(raw) = c0 + c1 * (raw - x0). */
static void shift_line(struct strobe_process_info *p, long double c0, long double c1, long double x0)
{
    long double base = (long double)p->base_ns;
    p->align_offset_ns = (double)c0;
    p->align_at_ns = (double)(x0 + c0);
    p->align_drift = (double)c1;
    p->base_ns = (double)(base + c0 + c1 * (base - x0));
    p->ns_per_tick = (double)((long double)p->ns_per_tick * (1 + c1));
}

/* The MPI offset line of q's measurements against the reference r. */
static void mpi_line(struct strobe_experiment *exp, const struct strobe__defs *dq, uint32_t q, uint32_t r,
                     long double *c0, long double *c1, long double *x0, uint64_t *bound)
{
    long double x[2], o[2];
    int n = 0;
    *bound = 0;
    for (int k = 0; k < 2; k++) {
        const struct strobe__clock_offset *m = &dq->offsets[k];
        if (!dq->have_offset[k] || m->rank == m->reference)
            continue;
        const struct strobe_process_info *pq = &exp->processes[q];
        long double send = raw(pq, m->send), recv = raw(pq, m->send + m->rtt);
        x[n] = (send + recv) / 2;
        o[n] = raw(&exp->processes[r], m->reply) - x[n];
        uint64_t half = (uint64_t)((recv - send) / 2 + 0.5L);
        if (half > *bound)
            *bound = half;
        n++;
    }
    *c0 = o[0];
    *x0 = x[0];
    *c1 = n == 2 && x[1] > x[0] ? (o[1] - o[0]) / (x[1] - x[0]) : 0;
}

void strobe__align_clocks(struct strobe_experiment *exp, const struct strobe__defs *const *defs)
{
    uint32_t n = (uint32_t)exp->nprocesses;
    const char *mode = strobe_experiment_meta(exp, "clock_align");
    bool off = mode && strcmp(mode, "off") == 0;
    /* the reference: rank 0's process that answered the others, else the
     * first process (ranked ones come first, by rank) */
    uint32_t ref = 0;
    bool mpi = false;
    for (uint32_t p = 0; p < n && !mpi; p++)
        for (int k = 0; k < 2; k++)
            if (defs[p]->have_offset[k] && defs[p]->offsets[k].rank == defs[p]->offsets[k].reference) {
                ref = p;
                mpi = true;
            }
    exp->align_reference = ref;
    unsigned *domain = malloc(sizeof *domain * (n ? n : 1));
    for (uint32_t p = 0; p < n && domain; p++)
        domain[p] = strobe_align_domain(exp, p, NULL);
    long double ref_anchor = 0;
    uint32_t ref_source = STROBE_NONE;
    bool have_ref_anchor = domain && anchor(exp, defs, ref, domain, &ref_anchor, &ref_source);
    /* the lines of every process are needed unmoved while the offsets are
     * computed: first decide, then move */
    struct plan {
        long double c0, c1, x0;
    } *plan = calloc(n ? n : 1, sizeof *plan);
    for (uint32_t p = 0; p < n; p++) {
        struct strobe_process_info *pi = &exp->processes[p];
        pi->align_source = STROBE_NONE;
        pi->align_domain = domain ? domain[p] : 0;
        if (off || !domain || !plan) {
            pi->align = off ? STROBE_ALIGN_OFF : STROBE_ALIGN_NONE;
            continue;
        }
        uint32_t q = mpi ? offsets_of(exp, defs, p, domain) : STROBE_NONE;
        long double a;
        uint32_t source;
        if (q != STROBE_NONE && defs[q]->offsets[defs[q]->have_offset[0] ? 0 : 1].reference ==
                                    defs[ref]->offsets[defs[ref]->have_offset[0] ? 0 : 1].rank) {
            pi->align = STROBE_ALIGN_MPI;
            pi->align_source = q;
            mpi_line(exp, defs[q], q, ref, &plan[p].c0, &plan[p].c1, &plan[p].x0, &pi->align_bound_ns);
        } else if (domain[p] == domain[ref]) {
            pi->align = STROBE_ALIGN_REFERENCE;
        } else if (have_ref_anchor && anchor(exp, defs, p, domain, &a, &source)) {
            pi->align = STROBE_ALIGN_REALTIME;
            pi->align_source = source;
            plan[p].c0 = a - ref_anchor;
        } else {
            pi->align = STROBE_ALIGN_NONE;
        }
    }
    for (uint32_t p = 0; p < n && plan; p++)
        if (exp->processes[p].align == STROBE_ALIGN_MPI || exp->processes[p].align == STROBE_ALIGN_REALTIME)
            shift_line(&exp->processes[p], plan[p].c0, plan[p].c1, plan[p].x0);
    free(plan);
    free(domain);
}
