/* SPDX-License-Identifier: MIT */
/* Derived views of a call-path profile for the renderers (see view.h). */
#define _GNU_SOURCE /* qsort_r */
#include "report/view.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "strobe/strobe.h"

static const struct strobe_stats zero_stats = {.min_ns = UINT64_MAX};

const struct strobe_stats *strobe__node_thread(const struct strobe__report_view *v, uint32_t n, size_t t)
{
    const struct strobe_cnode *node = &v->prof->nodes[n];
    return node->per_thread ? &node->per_thread[t] : &zero_stats;
}

const char *strobe__report_meta(const struct strobe_experiment *exp, const char *key)
{
    for (size_t i = 0; i < exp->nmeta; i++)
        if (exp->meta_keys[i] && strcmp(exp->meta_keys[i], key) == 0)
            return exp->meta_values[i];
    return NULL;
}

int strobe__report_flush(FILE *out)
{
    if (fflush(out) != 0)
        return errno ? -errno : -EIO;
    return ferror(out) ? -EIO : 0;
}

double strobe__stddev(uint64_t visits, uint64_t sum_ns, double sumsq_ns)
{
    if (visits < 2)
        return 0;
    double mean = (double)sum_ns / (double)visits;
    double var = sumsq_ns / (double)visits - mean * mean;
    /* E[x^2] - E[x]^2 can come out slightly negative from rounding */
    return var > 0 ? sqrt(var) : 0;
}

static uint64_t stats_key(const struct strobe_stats *s, int sort)
{
    switch (sort) {
    case STROBE_REPORT_SORT_INCL:
        return s->incl_ns;
    case STROBE_REPORT_SORT_VISITS:
        return s->visits;
    default:
        return s->excl_ns;
    }
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
    return a < b ? 1 : a > b ? -1 : 0;
}

/* Children order: sort key descending, then region name, then node index,
 * so equal profiles always print the same way. */
static int cmp_kids(const void *pa, const void *pb, void *arg)
{
    const struct strobe__report_view *v = arg;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const struct strobe_cnode *na = &v->prof->nodes[a], *nb = &v->prof->nodes[b];
    int c = cmp_u64_desc(stats_key(&na->total, v->sort), stats_key(&nb->total, v->sort));
    if (c)
        return c;
    c = strcmp(v->exp->regions[na->region].name, v->exp->regions[nb->region].name);
    if (c)
        return c;
    return a < b ? -1 : a > b;
}

static uint64_t flat_key(const struct strobe__flat_row *r, int sort)
{
    switch (sort) {
    case STROBE_REPORT_SORT_INCL:
        return r->incl_ns;
    case STROBE_REPORT_SORT_VISITS:
        return r->visits;
    default:
        return r->excl_ns;
    }
}

static int cmp_flat(const void *pa, const void *pb, void *arg)
{
    const struct strobe__report_view *v = arg;
    const struct strobe__flat_row *a = pa, *b = pb;
    int c = cmp_u64_desc(flat_key(a, v->sort), flat_key(b, v->sort));
    if (c)
        return c;
    c = strcmp(v->exp->regions[a->region].name, v->exp->regions[b->region].name);
    if (c)
        return c;
    return a->region < b->region ? -1 : a->region > b->region;
}

void strobe__report_view_free(struct strobe__report_view *v)
{
    free(v->kids);
    free(v->kids_start);
    free(v->outermost);
    free(v->flat);
    free(v->thread_visits);
    free(v->thread_incl_ns);
    free(v->thread_events);
    memset(v, 0, sizeof *v);
}

/* Checks the child links and fills kids/kids_start in link order. Every
 * node but the root must be the child of the node it names as parent,
 * exactly once, and carry a defined region, so the walks below terminate,
 * index arrays safely and see every node. */
static int build_children(struct strobe__report_view *v)
{
    const struct strobe_profile *p = v->prof;
    size_t n = p->nnodes;
    uint8_t *seen = calloc(n, 1);
    v->kids_start = calloc(n + 1, sizeof *v->kids_start);
    v->kids = malloc((n > 1 ? n - 1 : 1) * sizeof *v->kids);
    if (!seen || !v->kids_start || !v->kids) {
        free(seen);
        return -ENOMEM;
    }
    size_t total = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        v->kids_start[i] = (uint32_t)total;
        for (uint32_t c = p->nodes[i].first_child; c != STROBE_NONE; c = p->nodes[c].next_sibling) {
            if (c == 0 || c >= n || seen[c] || p->nodes[c].parent != i ||
                p->nodes[c].region >= v->exp->nregions) {
                rc = STROBE_ERR_FORMAT;
                break;
            }
            seen[c] = 1;
            v->kids[total++] = c;
        }
    }
    v->kids_start[n] = (uint32_t)total;
    free(seen);
    if (rc == 0 && total != n - 1)
        rc = STROBE_ERR_FORMAT; /* a node no path from the root reaches */
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        qsort_r(v->kids + v->kids_start[i], v->kids_start[i + 1] - v->kids_start[i], sizeof *v->kids,
                cmp_kids, v);
    return 0;
}

/* Walks the call tree in pre-order (strobe__report_preorder: call paths
 * can be as deep as the recursion of the measured program). Marks
 * outermost occurrences with a per-region on-path counter, kept along the
 * path from the root, and sums the flat profile and the per-thread
 * visits. */
static int walk(struct strobe__report_view *v, struct strobe__flat_row *rows, bool *present)
{
    const struct strobe_profile *p = v->prof;
    const struct strobe_experiment *exp = v->exp;
    uint32_t *order, *depth, *path = malloc(p->nnodes * sizeof *path);
    uint32_t *onpath = calloc(exp->nregions ? exp->nregions : 1, sizeof *onpath);
    size_t n;
    if (!path || !onpath || strobe__report_preorder(v, &order, &depth, &n) != 0) {
        free(path);
        free(onpath);
        return -ENOMEM;
    }
    size_t len = 0; /* regions on the path to the current node */
    for (size_t i = 0; i < n; i++) {
        uint32_t c = order[i];
        while (len >= depth[i]) /* leave the nodes the path no longer holds */
            onpath[path[--len]]--;
        const struct strobe_cnode *node = &p->nodes[c];
        uint32_t r = node->region;
        v->outermost[c] = onpath[r] == 0;
        onpath[r]++;
        path[len++] = r;
        struct strobe__flat_row *row = &rows[r];
        present[r] = true;
        row->visits += node->total.visits;
        row->excl_ns += node->total.excl_ns;
        row->sum_incl_ns += node->total.incl_ns;
        if (v->outermost[c])
            row->incl_ns += node->total.incl_ns;
        if (node->total.min_ns < row->min_ns)
            row->min_ns = node->total.min_ns;
        if (node->total.max_ns > row->max_ns)
            row->max_ns = node->total.max_ns;
        row->sumsq_ns += node->total.sumsq_ns;
        row->open_at_end += node->total.open_at_end;
        v->open_at_end += node->total.open_at_end;
        v->total_excl_ns += node->total.excl_ns;
        for (size_t t = 0; t < exp->nthreads; t++) {
            const struct strobe_stats *s = strobe__node_thread(v, c, t);
            v->thread_visits[t] += s->visits;
            if (depth[i] == 1) /* a child of the root */
                v->thread_incl_ns[t] += s->incl_ns;
        }
    }
    free(order);
    free(depth);
    free(path);
    free(onpath);
    return 0;
}

double strobe__report_event_cost(const struct strobe_experiment *exp, size_t t)
{
    uint32_t p = exp->threads[t].process;
    return p < exp->nprocesses && exp->processes[p].overhead_ns_per_event > 0
               ? exp->processes[p].overhead_ns_per_event
               : 0;
}

static void summarize(struct strobe__report_view *v)
{
    const struct strobe_experiment *exp = v->exp;
    for (size_t t = 0; t < exp->nthreads; t++) {
        const struct strobe_thread_info *th = &exp->threads[t];
        if (th->stream_path || th->summarized) {
            v->thread_events[t] = th->events;
        } else {
            /* profile only, killed: each visit cost an enter and an exit */
            v->thread_events[t] = 2 * v->thread_visits[t];
            v->events_estimated = true;
        }
        v->thread_time_ns += th->end_ns > th->begin_ns ? th->end_ns - th->begin_ns : v->thread_incl_ns[t];
        uint64_t cost_events = v->thread_events[t] + th->dropped;
        v->overhead_events += cost_events;
        double cost = strobe__report_event_cost(exp, t);
        if (cost > 0) {
            v->overhead_known = true;
            v->overhead_ns += (double)cost_events * cost;
        }
    }
}

int strobe__report_view_build(struct strobe__report_view *v, const struct strobe_experiment *exp,
                              const struct strobe_profile *prof, int sort)
{
    memset(v, 0, sizeof *v);
    v->exp = exp;
    v->prof = prof;
    v->sort = sort;
    if (prof->nnodes == 0 || prof->nnodes > UINT32_MAX || prof->nodes[0].region != STROBE_NONE)
        return STROBE_ERR_FORMAT;
    size_t nt = exp->nthreads ? exp->nthreads : 1;
    size_t nr = exp->nregions ? exp->nregions : 1;
    struct strobe__flat_row *rows = calloc(nr, sizeof *rows);
    bool *present = calloc(nr, sizeof *present);
    v->outermost = calloc(prof->nnodes, sizeof *v->outermost);
    v->thread_visits = calloc(nt, sizeof *v->thread_visits);
    v->thread_incl_ns = calloc(nt, sizeof *v->thread_incl_ns);
    v->thread_events = calloc(nt, sizeof *v->thread_events);
    int rc = -ENOMEM;
    if (!rows || !present || !v->outermost || !v->thread_visits || !v->thread_incl_ns || !v->thread_events)
        goto fail;
    for (size_t r = 0; r < exp->nregions; r++) {
        rows[r].region = (uint32_t)r;
        rows[r].min_ns = UINT64_MAX;
    }
    if ((rc = build_children(v)) != 0 || (rc = walk(v, rows, present)) != 0)
        goto fail;
    /* compact to the regions that occur in the tree, then sort */
    for (size_t r = 0; r < exp->nregions; r++)
        if (present[r])
            rows[v->nflat++] = rows[r];
    qsort_r(rows, v->nflat, sizeof *rows, cmp_flat, v);
    v->flat = rows;
    free(present);
    summarize(v);
    return 0;
fail:
    free(rows);
    free(present);
    strobe__report_view_free(v);
    return rc;
}

int strobe__report_region_threads(const struct strobe__report_view *v, const uint32_t *regs, size_t nregs,
                                  uint64_t **incl, uint64_t **visits)
{
    const struct strobe_experiment *exp = v->exp;
    size_t nt = exp->nthreads;
    size_t cells = nregs * nt > 0 ? nregs * nt : 1;
    uint32_t *slot = malloc((exp->nregions ? exp->nregions : 1) * sizeof *slot);
    *incl = calloc(cells, sizeof **incl);
    *visits = calloc(cells, sizeof **visits);
    if (!slot || !*incl || !*visits) {
        free(slot);
        free(*incl);
        free(*visits);
        *incl = *visits = NULL;
        return -ENOMEM;
    }
    for (size_t r = 0; r < exp->nregions; r++)
        slot[r] = STROBE_NONE;
    for (size_t k = 0; k < nregs; k++)
        slot[regs[k]] = (uint32_t)k;
    /* the outermost nodes of a region cover all its time without overlap;
     * deeper recursive occurrences add visits only */
    for (size_t i = 1; i < v->prof->nnodes; i++) {
        uint32_t r = v->prof->nodes[i].region;
        if (r >= exp->nregions || slot[r] == STROBE_NONE)
            continue;
        size_t k = slot[r];
        for (size_t t = 0; t < nt; t++) {
            const struct strobe_stats *s = strobe__node_thread(v, (uint32_t)i, t);
            (*visits)[k * nt + t] += s->visits;
            if (v->outermost[i])
                (*incl)[k * nt + t] += s->incl_ns;
        }
    }
    free(slot);
    return 0;
}

/* ---- Groups (--by) ----------------------------------------------------- */

void strobe__report_groups_free(struct strobe__report_groups *g)
{
    free(g->leader);
    free(g->nprocesses);
    free(g->nthreads);
    free(g->of_thread);
    free(g->visits);
    free(g->incl_ns);
    free(g->events);
    free(g->paths);
    free(g->path_depth);
    free(g->path_visits);
    free(g->path_incl_ns);
    memset(g, 0, sizeof *g);
}

int strobe__report_preorder(const struct strobe__report_view *v, uint32_t **nodes, uint32_t **depths,
                            size_t *n)
{
    size_t nn = v->prof->nnodes;
    uint32_t *stack = malloc(nn * sizeof *stack);
    size_t *pos = malloc(nn * sizeof *pos);
    *nodes = malloc(nn * sizeof **nodes);
    *depths = malloc(nn * sizeof **depths);
    *n = 0;
    if (!stack || !pos || !*nodes || !*depths) {
        free(stack);
        free(pos);
        free(*nodes);
        free(*depths);
        *nodes = *depths = NULL;
        return -ENOMEM;
    }
    size_t sp = 0;
    stack[sp] = 0;
    pos[sp++] = v->kids_start[0];
    while (sp > 0) {
        uint32_t top = stack[sp - 1];
        if (pos[sp - 1] == v->kids_start[top + 1]) {
            sp--;
            continue;
        }
        uint32_t c = v->kids[pos[sp - 1]++];
        (*nodes)[*n] = c;
        (*depths)[(*n)++] = (uint32_t)sp;
        stack[sp] = c;
        pos[sp++] = v->kids_start[c];
    }
    free(stack);
    free(pos);
    return 0;
}

int strobe__report_groups_build(struct strobe__report_groups *g, const struct strobe__report_view *v, int by)
{
    const struct strobe_experiment *exp = v->exp;
    memset(g, 0, sizeof *g);
    size_t np = exp->nprocesses ? exp->nprocesses : 1, nt = exp->nthreads ? exp->nthreads : 1;
    uint32_t *of_process = malloc(np * sizeof *of_process);
    g->leader = calloc(np, sizeof *g->leader);
    g->nprocesses = calloc(np, sizeof *g->nprocesses);
    g->nthreads = calloc(np, sizeof *g->nthreads);
    g->of_thread = malloc(nt * sizeof *g->of_thread);
    g->visits = calloc(np, sizeof *g->visits);
    g->incl_ns = calloc(np, sizeof *g->incl_ns);
    g->events = calloc(np, sizeof *g->events);
    int rc = of_process && g->leader && g->nprocesses && g->nthreads && g->of_thread && g->visits &&
                     g->incl_ns && g->events
                 ? 0
                 : -ENOMEM;
    /* the model lists ranked processes first, by rank, a rank's together */
    for (size_t p = 0; p < exp->nprocesses && rc == 0; p++) {
        const struct strobe_process_info *pi = &exp->processes[p];
        if (by == STROBE_REPORT_BY_RANK && !pi->has_rank) {
            of_process[p] = STROBE_NONE;
            g->left_out++;
            continue;
        }
        if (by != STROBE_REPORT_BY_RANK || g->n == 0 || exp->processes[g->leader[g->n - 1]].rank != pi->rank)
            g->leader[g->n++] = (uint32_t)p;
        of_process[p] = (uint32_t)(g->n - 1);
        g->nprocesses[g->n - 1]++;
    }
    if (rc == 0 && g->n == 0 && by == STROBE_REPORT_BY_RANK)
        rc = -ENOENT;
    for (size_t t = 0; t < exp->nthreads && rc == 0; t++) {
        uint32_t k = g->of_thread[t] = of_process[exp->threads[t].process];
        if (k == STROBE_NONE)
            continue;
        g->nthreads[k]++;
        g->visits[k] += v->thread_visits[t];
        g->incl_ns[k] += v->thread_incl_ns[t];
        g->events[k] += v->thread_events[t];
    }
    free(of_process);
    if (rc == 0)
        rc = strobe__report_preorder(v, &g->paths, &g->path_depth, &g->npaths);
    if (rc == 0) {
        g->path_visits = calloc(g->npaths * g->n + 1, sizeof *g->path_visits);
        g->path_incl_ns = calloc(g->npaths * g->n + 1, sizeof *g->path_incl_ns);
        if (!g->path_visits || !g->path_incl_ns)
            rc = -ENOMEM;
    }
    for (size_t i = 0; i < g->npaths && rc == 0; i++)
        for (size_t t = 0; t < exp->nthreads; t++) {
            if (g->of_thread[t] == STROBE_NONE)
                continue;
            const struct strobe_stats *s = strobe__node_thread(v, g->paths[i], t);
            g->path_visits[i * g->n + g->of_thread[t]] += s->visits;
            g->path_incl_ns[i * g->n + g->of_thread[t]] += s->incl_ns;
        }
    if (rc)
        strobe__report_groups_free(g);
    return rc;
}
