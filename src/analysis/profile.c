/* SPDX-License-Identifier: MIT */
/*
 * Builds the merged call-path profile (experiment.h) either from the
 * per-thread profile files the runtime keeps (t<N>.prof) or by replaying
 * the event streams. Both charge a frame still open when a thread's
 * measurement ended (exit() under it, a worker that never returns) the
 * time up to that end, and count it in open_at_end, so they agree. For a
 * killed thread only the stream knows what was open: the profile files
 * then lack that time (profile->incomplete), the replay charges it up to
 * the last event.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "analysis/decode.h"
#include "analysis/experiment.h"
#include "analysis/keymap.h"
#include "strobe/strobe.h"

struct builder {
    const struct strobe_experiment *exp;
    struct strobe_profile *p;
    size_t cap;
    struct strobe__keymap children;
    struct strobe_errbuf *eb;
};

static int new_node(struct builder *b, uint32_t parent, uint32_t region, uint32_t *out)
{
    struct strobe_profile *p = b->p;
    size_t nt = b->exp->nthreads ? b->exp->nthreads : 1;
    if (p->nnodes == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        void *n = realloc(p->nodes, cap * sizeof *p->nodes);
        if (!n)
            return -ENOMEM;
        p->nodes = n;
        b->cap = cap;
    }
    struct strobe_cnode *n = &p->nodes[p->nnodes];
    memset(n, 0, sizeof *n);
    n->region = region;
    n->parent = parent;
    n->first_child = n->next_sibling = STROBE_NONE;
    n->total.min_ns = UINT64_MAX;
    n->per_thread = calloc(nt, sizeof *n->per_thread);
    if (!n->per_thread)
        return -ENOMEM;
    for (size_t i = 0; i < nt; i++)
        n->per_thread[i].min_ns = UINT64_MAX;
    uint32_t id = (uint32_t)p->nnodes++;
    if (parent != STROBE_NONE) {
        struct strobe_cnode *par = &p->nodes[parent];
        n->depth = par->depth + 1;
        /* children keep creation order: append at the tail */
        uint32_t *link = &par->first_child;
        while (*link != STROBE_NONE)
            link = &p->nodes[*link].next_sibling;
        *link = id;
    }
    *out = id;
    return 0;
}

static int child(struct builder *b, uint32_t parent, uint32_t region, uint32_t *out)
{
    uint32_t key[2] = { parent, region };
    uint32_t id = (uint32_t)b->p->nnodes;
    int rc = strobe__keymap_get_or_put(&b->children, key, sizeof key, &id);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        *out = id;
        return 0;
    }
    return new_node(b, parent, region, out);
}

static int add_metric(struct builder *b, uint32_t node, uint32_t thread, uint32_t metric, uint64_t count,
                      int64_t sum, int64_t min, int64_t max)
{
    const struct strobe_experiment *exp = b->exp;
    struct strobe_cnode *n = &b->p->nodes[node];
    if (!n->thread_metrics) {
        n->thread_metrics = calloc(exp->nthreads * exp->nmetrics, sizeof *n->thread_metrics);
        n->metrics = calloc(exp->nmetrics, sizeof *n->metrics);
        if (!n->thread_metrics || !n->metrics)
            return -ENOMEM;
    }
    struct strobe_metric_stats *s[2] = { &n->thread_metrics[(size_t)thread * exp->nmetrics + metric],
                                         &n->metrics[metric] };
    for (int i = 0; i < 2; i++) {
        if (s[i]->count == 0 || min < s[i]->min)
            s[i]->min = min;
        if (s[i]->count == 0 || max > s[i]->max)
            s[i]->max = max;
        s[i]->count += count;
        s[i]->sum += sum;
    }
    return 0;
}

static void add_time(struct strobe_stats *s, uint64_t d)
{
    s->incl_ns += d;
    if (d < s->min_ns)
        s->min_ns = d;
    if (d > s->max_ns)
        s->max_ns = d;
    s->sumsq_ns += (double)d * (double)d;
}

/* ---- from profile files ---------------------------------------------- */

static int from_file(struct builder *b, uint32_t thread)
{
    const struct strobe_experiment *exp = b->exp;
    const struct strobe_thread_info *t = &exp->threads[thread];
    const struct strobe_process_info *proc = &exp->processes[t->process];
    const char *path = t->profile_path;
    const char *name = path + strlen(exp->dir) + 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return strobe__error(b->eb, -errno, "%s: %s", name, strerror(errno));
    struct stat st;
    void *map = NULL;
    size_t len = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        len = (size_t)st.st_size;
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    close(fd);
    if (map == MAP_FAILED)
        return strobe__error(b->eb, -errno, "%s: %s", name, strerror(errno));
    struct strobe__prof_view v;
    int rc = strobe__prof_check(map, len, name, &v, b->eb);
    uint32_t *slot_node = rc ? NULL : malloc(v.hdr.slot_count * sizeof *slot_node);
    if (rc == 0 && !slot_node)
        rc = -ENOMEM;
    if (rc == 0 && v.hdr.thread_index != t->index)
        rc = strobe__error(b->eb, STROBE_ERR_FORMAT, "%s: offset 20: header names thread %u", name,
                           v.hdr.thread_index);
    double npt = proc->ns_per_tick;
    for (uint32_t i = 0; i < (rc ? 0 : v.hdr.slot_count) && rc == 0; i++) {
        const uint8_t *s = v.slots + (size_t)i * 64;
        size_t off = 64 + (size_t)i * 64;
        uint32_t tag;
        memcpy(&tag, s, 4);
        if (i == 0) {
            slot_node[0] = 0;
            continue;
        }
        if (tag == STROBE_SLOT_NODE) {
            struct strobe_prof_node n;
            memcpy(&n, s, sizeof n);
            if (n.region >= proc->region_map_len || proc->region_map[n.region] == STROBE_NONE) {
                rc = strobe__error(b->eb, STROBE_ERR_FORMAT, "%s: offset %zu: slot %u: region id %u not defined in %s/defs",
                                   name, off, i, n.region, proc->dir);
                break;
            }
            if ((rc = child(b, slot_node[n.parent], proc->region_map[n.region], &slot_node[i])))
                break;
            struct strobe_stats *ps = &b->p->nodes[slot_node[i]].per_thread[thread];
            ps->visits += n.visits;
            ps->incl_ns += (uint64_t)llround((double)n.incl_ticks * npt);
            if (n.min_ticks != UINT64_MAX) {
                uint64_t mn = (uint64_t)llround((double)n.min_ticks * npt);
                uint64_t mx = (uint64_t)llround((double)n.max_ticks * npt);
                if (mn < ps->min_ns)
                    ps->min_ns = mn;
                if (mx > ps->max_ns)
                    ps->max_ns = mx;
            }
            ps->sumsq_ns += n.sumsq_ticks * npt * npt;
        } else if (tag == STROBE_SLOT_SYNC) { /* the lock model's (locks.c) */
            slot_node[i] = STROBE_NONE;
        } else {
            struct strobe_prof_metric m;
            memcpy(&m, s, sizeof m);
            slot_node[i] = STROBE_NONE;
            if (m.metric >= proc->metric_map_len || proc->metric_map[m.metric] == STROBE_NONE) {
                rc = strobe__error(b->eb, STROBE_ERR_FORMAT, "%s: offset %zu: slot %u: metric id %u not defined in %s/defs",
                                   name, off, i, m.metric, proc->dir);
                break;
            }
            if (m.count)
                rc = add_metric(b, slot_node[m.node], thread, proc->metric_map[m.metric], m.count, m.sum, m.min,
                                m.max);
        }
    }
    /* Frames open at the end: the visit was counted at entry, its time
     * runs to the thread's end (as the trace's synthetic exits do). */
    for (size_t k = 0; k < t->nopen && rc == 0; k++) {
        const struct strobe_open_frame *f = &t->open[k];
        if (f->slot == STROBE_NONE)
            continue;
        if (f->slot == 0 || f->slot >= v.hdr.slot_count || slot_node[f->slot] == STROBE_NONE ||
            b->p->nodes[slot_node[f->slot]].region != f->region) {
            rc = strobe__error(b->eb, STROBE_ERR_FORMAT, "%s/defs: open frame %zu of t%u names slot %u, which is not a "
                               "node of its region in %s", proc->dir, k, t->index, f->slot, name);
            break;
        }
        struct strobe_stats *ps = &b->p->nodes[slot_node[f->slot]].per_thread[thread];
        add_time(ps, t->end_ns > f->start_ns ? t->end_ns - f->start_ns : 0);
        ps->open_at_end++;
    }
    if (!t->summarized)
        b->p->incomplete = true;
    free(slot_node);
    if (map)
        munmap(map, len);
    return rc;
}

/* ---- from traces ------------------------------------------------------- */

struct frame {
    uint32_t node;
    uint64_t start;
    bool inherited;
};

static int from_trace(struct builder *b, uint32_t thread)
{
    struct strobe_stream_iter *it;
    int rc = strobe_stream_open(b->exp, thread, &it, b->eb);
    if (rc)
        return rc;
    struct frame *stack = NULL;
    size_t depth = 0, cap = 0;
    struct strobe_event ev;
    while ((rc = strobe_stream_next(it, &ev, b->eb)) == 1) {
        uint32_t top = depth ? stack[depth - 1].node : 0;
        switch (ev.type) {
        case STROBE_EVENT_ENTER:
        case STROBE_EVENT_INHERIT: {
            if (depth == cap) {
                cap = cap ? cap * 2 : 64;
                struct frame *s = realloc(stack, cap * sizeof *s);
                if (!s) {
                    rc = -ENOMEM;
                    break;
                }
                stack = s;
            }
            uint32_t n;
            if ((rc = child(b, top, ev.region, &n)))
                break;
            bool inherited = ev.type == STROBE_EVENT_INHERIT;
            /* a frame open where the chunks read begin (synthetic) was
             * visited in a chunk before */
            if (!inherited && !ev.synthetic)
                b->p->nodes[n].per_thread[thread].visits++;
            stack[depth++] = (struct frame){ n, ev.time_ns, inherited };
            break;
        }
        case STROBE_EVENT_EXIT: {
            struct frame *f = &stack[--depth]; /* the iterator guarantees nesting */
            struct strobe_stats *ps = &b->p->nodes[f->node].per_thread[thread];
            add_time(ps, ev.time_ns - f->start);
            ps->open_at_end += ev.synthetic;
            break;
        }
        case STROBE_EVENT_METRIC:
            rc = add_metric(b, top, thread, ev.metric, 1, ev.value, ev.value, ev.value);
            break;
        default:
            break;
        }
        if (rc < 0)
            break;
    }
    free(stack);
    strobe_stream_close(it);
    return rc < 0 ? rc : 0;
}

/* ---- totals ------------------------------------------------------------- */

static void finish(struct strobe_profile *p, size_t nthreads)
{
    for (size_t i = 0; i < p->nnodes; i++)
        for (size_t t = 0; t < nthreads; t++)
            p->nodes[i].per_thread[t].excl_ns = p->nodes[i].per_thread[t].incl_ns;
    for (size_t i = 1; i < p->nnodes; i++) {
        struct strobe_cnode *n = &p->nodes[i], *par = &p->nodes[n->parent];
        for (size_t t = 0; t < nthreads; t++) {
            uint64_t c = n->per_thread[t].incl_ns;
            uint64_t *e = &par->per_thread[t].excl_ns;
            /* a parent open at a kill may have less time than a child
             * that completed: clamp rather than wrap */
            *e = *e > c ? *e - c : 0;
        }
    }
    for (size_t i = 0; i < p->nnodes; i++) {
        struct strobe_cnode *n = &p->nodes[i];
        struct strobe_stats *s = &n->total;
        for (size_t t = 0; t < nthreads; t++) {
            const struct strobe_stats *q = &n->per_thread[t];
            s->visits += q->visits;
            s->incl_ns += q->incl_ns;
            s->excl_ns += q->excl_ns;
            s->sumsq_ns += q->sumsq_ns;
            s->open_at_end += q->open_at_end;
            if (q->min_ns < s->min_ns)
                s->min_ns = q->min_ns;
            if (q->max_ns > s->max_ns)
                s->max_ns = q->max_ns;
        }
    }
}

int strobe_profile_build(const struct strobe_experiment *exp, int source, struct strobe_profile **out,
                         struct strobe_errbuf *eb)
{
    for (size_t t = 0; t < exp->nthreads; t++) {
        const struct strobe_thread_info *th = &exp->threads[t];
        if (source == STROBE_PROFILE_FILES && !th->profile_path)
            return strobe__error(eb, -ENOENT, "%s: %s/t%u has no profile file (profiling was off)", exp->dir,
                                 exp->processes[th->process].dir, th->index);
        if (source == STROBE_PROFILE_TRACE && !th->stream_path && th->profile_path)
            return strobe__error(eb, -ENOENT, "%s: %s/t%u has no event stream (tracing was off)", exp->dir,
                                 exp->processes[th->process].dir, th->index);
    }
    struct strobe_profile *p = calloc(1, sizeof *p);
    if (!p)
        return strobe__error(eb, -ENOMEM, "%s: out of memory", exp->dir);
    struct builder b = { exp, p, 0, { 0 }, eb };
    uint32_t root;
    int rc = new_node(&b, STROBE_NONE, STROBE_NONE, &root);
    for (uint32_t t = 0; t < exp->nthreads && rc == 0; t++) {
        const struct strobe_thread_info *th = &exp->threads[t];
        /* A killed thread's profile lacks the time of the frames it had
         * open; its stream has it, unless it is a ring (flight recorder),
         * which kept only its newest events. */
        bool file = source == STROBE_PROFILE_FILES ||
                    (source == STROBE_PROFILE_AUTO && th->profile_path && (th->summarized || !th->stream_path || th->ring));
        if (file) {
            rc = from_file(&b, t);
        } else if (th->stream_path) {
            rc = from_trace(&b, t);
            p->traced++;
        }
    }
    p->source = source != STROBE_PROFILE_AUTO ? source
                : p->traced == 0              ? STROBE_PROFILE_FILES
                : p->traced == exp->nthreads  ? STROBE_PROFILE_TRACE
                                              : STROBE_PROFILE_MIXED;
    strobe__keymap_free(&b.children);
    if (rc) {
        if (rc == -ENOMEM)
            strobe__error(eb, rc, "%s: out of memory", exp->dir);
        strobe_profile_free(p);
        return rc;
    }
    finish(p, exp->nthreads);
    *out = p;
    return 0;
}

void strobe_profile_free(struct strobe_profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nnodes; i++) {
        free(p->nodes[i].per_thread);
        free(p->nodes[i].metrics);
        free(p->nodes[i].thread_metrics);
    }
    free(p->nodes);
    free(p);
}
