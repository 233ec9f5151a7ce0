/* SPDX-License-Identifier: MIT */
/*
 * Builds the sampled view (samples.h): per process, the SAMPLE records of
 * its threads' streams are collected with the instrumented call path open
 * at each, their distinct code addresses symbolized once (symbols.h),
 * then every sample is expanded into its logical frames (inline chains
 * included) and counted into the flat profile, the call tree, the hybrid
 * paths and the distinct stacks.
 */
#define _GNU_SOURCE
#include "analysis/samples.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/decode.h"
#include "analysis/keymap.h"
#include "analysis/symbols.h"
#include "common/format.h"
#include "strobe/strobe.h"

struct raw_sample {
    uint32_t thread, path; /* path: merged profile node + 1, 0 = none */
    size_t first;          /* its frames in builder.pool */
    uint32_t n;
    uint64_t weight;
};

/* Self and total samples of one (function, file, line). */
struct line_count {
    uint32_t func;
    const char *file; /* owned by the code_loc it came from (kept to the end) */
    unsigned line;
    uint64_t self, total;
};

struct path_count {
    uint32_t path, func;
    uint64_t self;
};

struct builder {
    const struct strobe_experiment *exp;
    const struct strobe_profile *prof;
    struct strobe_errbuf *eb;
    struct strobe_sample_model *m;
    size_t funcs_cap, nodes_cap;
    struct strobe__keymap func_ids, child_ids, line_ids, pathfunc_ids, nodethread_ids, stack_ids;
    size_t node_threads_cap, locs_cap, loc_frames_cap, stacks_cap, stack_locs_cap;
    uint32_t *loc_of; /* [this process's distinct addresses]: its entry in m->locs, or STROBE_NONE */
    uint32_t *stack;  /* the sample being counted: its locations, outermost first */
    size_t stack_cap;
    struct line_count *lines;
    size_t nlines, lines_cap;
    struct path_count *pf;
    size_t npf, pf_cap;
    uint64_t *path_samples; /* [prof->nnodes + 1], index = path */
    /* this process's samples */
    struct raw_sample *raw;
    size_t nraw, raw_cap;
    uint64_t *pool;
    size_t npool, pool_cap;
    /* every process's resolved addresses, freed at the end */
    struct strobe__code_loc **locs;
    size_t *nlocs;
    size_t nlocsets;
    uint64_t *stamp; /* [nfuncs]: sample number that last counted the function's total */
    size_t stamp_cap;
};

/* The merged profile node of the open regions stack[0..depth) (local
 * ids of process p) + 1, or 0 when the profile has no such path. */
static uint32_t path_of(const struct builder *b, const struct strobe_process_info *p, const uint64_t *stack,
                        size_t depth)
{
    const struct strobe_profile *prof = b->prof;
    if (!prof || prof->nnodes == 0)
        return 0;
    uint32_t n = 0;
    for (size_t i = 0; i < depth; i++) {
        if (stack[i] >= p->region_map_len || p->region_map[stack[i]] == STROBE_NONE)
            return 0;
        uint32_t r = p->region_map[stack[i]], c = prof->nodes[n].first_child;
        while (c != STROBE_NONE && prof->nodes[c].region != r)
            c = prof->nodes[c].next_sibling;
        if (c == STROBE_NONE)
            return 0;
        n = c;
    }
    return n + 1;
}

/* The SAMPLE records of thread t into b->raw / b->pool. */
static int read_thread(struct builder *b, uint32_t t)
{
    const struct strobe_experiment *exp = b->exp;
    const struct strobe_thread_info *ti = &exp->threads[t];
    const struct strobe_process_info *p = &exp->processes[ti->process];
    const char *shown = strobe__shown_path(exp, ti->stream_path);
    const uint8_t *buf = NULL;
    size_t len = 0;
    int rc = strobe__file_map(ti->stream_path, shown, &buf, &len, b->eb);
    if (rc)
        return rc;
    struct strobe__stream_decoder d;
    struct strobe__raw_event ev;
    struct strobe_sample_thread *st = &b->m->threads[t];
    if ((rc = strobe__stream_begin(&d, buf, len, shown, b->eb)) == 0) {
        while ((rc = strobe__stream_decode(&d, &ev, b->eb)) == 1) {
            if (ev.kind != STROBE__RAW_SAMPLE)
                continue;
            st->records++;
            st->samples += ev.parent;
            st->missed += (uint64_t)ev.value;
            st->truncated += ev.id & STROBE_SAMPLE_TRUNCATED;
            if (strobe__grow((void **)&b->raw, &b->raw_cap, b->nraw + 1, sizeof *b->raw) ||
                strobe__grow((void **)&b->pool, &b->pool_cap, b->npool + ev.nframes, sizeof *b->pool)) {
                rc = strobe__error(b->eb, -ENOMEM, "%s: out of memory", exp->dir);
                break;
            }
            b->raw[b->nraw++] =
                (struct raw_sample){t, path_of(b, p, d.stack, d.depth), b->npool, ev.nframes, ev.parent};
            /* a return address is looked up at its call, the byte before */
            for (uint32_t i = 0; i < ev.nframes; i++)
                b->pool[b->npool++] = i == 0 ? d.frames[0] : d.frames[i] - 1;
        }
        strobe__stream_end(&d);
    }
    strobe__file_unmap(buf, len);
    return rc < 0 ? rc : 0;
}

/* A thread without a stream (`--no-trace`): its samples per instrumented
 * call path from its profile (the metric strobe.samples), without stacks. */
static void from_profile(struct builder *b, uint32_t t)
{
    const struct strobe_experiment *exp = b->exp;
    const struct strobe_profile *prof = b->prof;
    uint32_t metric = STROBE_NONE;
    for (uint32_t i = 0; i < exp->nmetrics; i++)
        if (strcmp(exp->metrics[i].name, STROBE_SAMPLE_METRIC) == 0)
            metric = i;
    if (!prof || metric == STROBE_NONE)
        return;
    struct strobe_sample_thread *st = &b->m->threads[t];
    for (size_t n = 0; n < prof->nnodes; n++) {
        const struct strobe_metric_stats *ms =
            prof->nodes[n].thread_metrics ? &prof->nodes[n].thread_metrics[(size_t)t * exp->nmetrics + metric]
                                          : NULL;
        if (!ms || !ms->count || ms->sum <= 0)
            continue;
        st->records += ms->count;
        st->samples += (uint64_t)ms->sum;
        st->unstacked += (uint64_t)ms->sum;
        b->path_samples[n + 1] += (uint64_t)ms->sum;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The function id of (module, name), added when new. */
static int func_id(struct builder *b, const char *module, const char *name, uint32_t *id)
{
    /* an ELF symbol version ("__libc_start_main@@GLIBC_2.34") is not
     * part of the function's name */
    size_t lm = strlen(module), ln = strcspn(name, "@");
    char *key = malloc(lm + ln + 2);
    if (!key)
        return -ENOMEM;
    memcpy(key, module, lm + 1);
    memcpy(key + lm + 1, name, ln);
    key[lm + 1 + ln] = 0;
    struct strobe_sample_model *m = b->m;
    *id = (uint32_t)m->nfuncs;
    int rc = strobe__keymap_get_or_put(&b->func_ids, key, lm + ln + 2, id);
    free(key);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    size_t nt = b->exp->nthreads ? b->exp->nthreads : 1;
    if (strobe__grow((void **)&m->funcs, &b->funcs_cap, m->nfuncs + 1, sizeof *m->funcs) ||
        strobe__grow((void **)&b->stamp, &b->stamp_cap, m->nfuncs + 1, sizeof *b->stamp))
        return -ENOMEM;
    struct strobe_sample_func *f = &m->funcs[m->nfuncs];
    memset(f, 0, sizeof *f);
    f->name = strndup(name, ln);
    f->module = strdup(module);
    f->thread_self = calloc(nt, sizeof *f->thread_self);
    f->thread_total = calloc(nt, sizeof *f->thread_total);
    b->stamp[m->nfuncs] = UINT64_MAX;
    m->nfuncs++;
    return f->name && f->module && f->thread_self && f->thread_total ? 0 : -ENOMEM;
}

static int count_line(struct builder *b, uint32_t func, const char *file, unsigned line, bool self,
                      uint64_t w)
{
    size_t lf = strlen(file);
    char *key = malloc(8 + lf);
    if (!key)
        return -ENOMEM;
    memcpy(key, &func, 4);
    memcpy(key + 4, &line, 4);
    memcpy(key + 8, file, lf);
    uint32_t id = (uint32_t)b->nlines;
    int rc = strobe__keymap_get_or_put(&b->line_ids, key, 8 + lf, &id);
    free(key);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (strobe__grow((void **)&b->lines, &b->lines_cap, b->nlines + 1, sizeof *b->lines))
            return -ENOMEM;
        b->lines[b->nlines++] = (struct line_count){func, file, line, 0, 0};
    }
    b->lines[id].self += self ? w : 0;
    b->lines[id].total += self ? 0 : w;
    return 0;
}

/* The call-tree child of `parent` for `func`, added when new. */
static int child_of(struct builder *b, uint32_t parent, uint32_t func, uint32_t *out)
{
    struct strobe_sample_model *m = b->m;
    uint32_t key[2] = {parent, func};
    *out = (uint32_t)m->nnodes;
    int rc = strobe__keymap_get_or_put(&b->child_ids, key, sizeof key, out);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (strobe__grow((void **)&m->nodes, &b->nodes_cap, m->nnodes + 1, sizeof *m->nodes))
        return -ENOMEM;
    m->nodes[m->nnodes] =
        (struct strobe_sample_node){func, parent, STROBE_NONE, m->nodes[parent].first_child, 0, 0};
    m->nodes[parent].first_child = (uint32_t)m->nnodes;
    m->nnodes++;
    return 0;
}

static int count_path(struct builder *b, uint32_t path, uint32_t func, uint64_t w)
{
    uint32_t key[2] = {path, func}, id = (uint32_t)b->npf;
    int rc = strobe__keymap_get_or_put(&b->pathfunc_ids, key, sizeof key, &id);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (strobe__grow((void **)&b->pf, &b->pf_cap, b->npf + 1, sizeof *b->pf))
            return -ENOMEM;
        b->pf[b->npf++] = (struct path_count){path, func, 0};
    }
    b->pf[id].self += w;
    b->path_samples[path] += w;
    return 0;
}

static int count_node_thread(struct builder *b, uint32_t node, uint32_t thread, uint64_t w)
{
    struct strobe_sample_model *m = b->m;
    uint32_t key[2] = {node, thread}, id = (uint32_t)m->nnode_threads;
    int rc = strobe__keymap_get_or_put(&b->nodethread_ids, key, sizeof key, &id);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (strobe__grow((void **)&m->node_threads, &b->node_threads_cap, m->nnode_threads + 1,
                         sizeof *m->node_threads))
            return -ENOMEM;
        m->node_threads[m->nnode_threads++] = (struct strobe_sample_node_thread){node, thread, 0};
    }
    m->node_threads[id].self += w;
    return 0;
}

static int cmp_node_thread(const void *a, const void *b)
{
    const struct strobe_sample_node_thread *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* The entry in m->locs of the process's distinct address l (index i),
 * added with its inline chain when new. */
static int loc_id(struct builder *b, size_t i, const struct strobe__code_loc *l, uint32_t *out)
{
    struct strobe_sample_model *m = b->m;
    if (b->loc_of[i] == STROBE_NONE) {
        if (strobe__grow((void **)&m->locs, &b->locs_cap, m->nlocs + 1, sizeof *m->locs) ||
            strobe__grow((void **)&m->loc_frames, &b->loc_frames_cap, m->nloc_frames + l->nframes,
                         sizeof *m->loc_frames))
            return -ENOMEM;
        m->locs[m->nlocs] =
            (struct strobe_sample_loc){l->rel, (uint32_t)m->nloc_frames, (uint32_t)l->nframes};
        for (size_t k = 0; k < l->nframes; k++) {
            struct strobe_sample_frame *f = &m->loc_frames[m->nloc_frames++];
            int rc = func_id(b, l->module, l->frames[k].name, &f->func);
            if (rc)
                return rc;
            f->line = l->frames[k].line;
            f->col = l->frames[k].col;
        }
        b->loc_of[i] = (uint32_t)m->nlocs++;
    }
    *out = b->loc_of[i];
    return 0;
}

/* Counts the stack b->stack[0..n) (outermost first) of thread's sample. */
static int count_stack(struct builder *b, uint32_t thread, size_t n, uint64_t w)
{
    struct strobe_sample_model *m = b->m;
    size_t klen = (n + 1) * sizeof *b->stack;
    uint32_t *key = malloc(klen), id = (uint32_t)m->nstacks;
    if (!key)
        return -ENOMEM;
    key[0] = thread;
    for (size_t i = 0; i < n; i++) /* innermost first */
        key[1 + i] = b->stack[n - 1 - i];
    int rc = strobe__keymap_get_or_put(&b->stack_ids, key, klen, &id);
    if (rc == 0) {
        if (strobe__grow((void **)&m->stacks, &b->stacks_cap, m->nstacks + 1, sizeof *m->stacks) ||
            strobe__grow((void **)&m->stack_locs, &b->stack_locs_cap, m->nstack_locs + n,
                         sizeof *m->stack_locs))
            rc = -ENOMEM;
        else {
            m->stacks[m->nstacks++] =
                (struct strobe_sample_stack){thread, (uint32_t)m->nstack_locs, (uint32_t)n, 0};
            memcpy(m->stack_locs + m->nstack_locs, key + 1, n * sizeof *key);
            m->nstack_locs += n;
        }
    }
    free(key);
    if (rc < 0)
        return rc;
    m->stacks[id].samples += w;
    return 0;
}

/* Counts one sample whose addresses resolved to locs (indexed like addrs). */
static int count_sample(struct builder *b, const struct raw_sample *s, const uint64_t *addrs, size_t naddrs,
                        const struct strobe__code_loc *locs, uint64_t serial)
{
    struct strobe_sample_model *m = b->m;
    uint32_t node = 0, innermost = STROBE_NONE;
    const struct strobe__code_frame *inner_frame = NULL;
    uint64_t w = s->weight;
    size_t depth = 0;
    if (strobe__grow((void **)&b->stack, &b->stack_cap, s->n, sizeof *b->stack))
        return -ENOMEM;
    m->nodes[0].total += w;
    /* outermost frame first: the tree's path */
    for (uint32_t i = s->n; i-- > 0;) {
        const uint64_t *a = bsearch(&b->pool[s->first + i], addrs, naddrs, sizeof *addrs, cmp_u64);
        const struct strobe__code_loc *l = &locs[a - addrs];
        if (i && strobe__is_runtime_module(l->module)) /* the innermost stays: the cost of measuring */
            continue;
        int rc = loc_id(b, (size_t)(a - addrs), l, &b->stack[depth++]);
        if (rc)
            return rc;
        for (size_t k = l->nframes; k-- > 0;) {
            const struct strobe__code_frame *fr = &l->frames[k];
            uint32_t f;
            rc = func_id(b, l->module, fr->name, &f);
            if (rc || (rc = child_of(b, node, f, &node)))
                return rc;
            m->nodes[node].total += w;
            if (b->stamp[f] != serial) { /* once per sample, recursion or not */
                b->stamp[f] = serial;
                m->funcs[f].total += w;
                m->funcs[f].thread_total[s->thread] += w;
                if (i || k) /* not the innermost: a line it called from */
                    if ((rc = count_line(b, f, fr->file, fr->line, false, w)))
                        return rc;
            }
            innermost = f;
            inner_frame = fr;
        }
    }
    m->nodes[node].self += w;
    m->funcs[innermost].self += w;
    m->funcs[innermost].thread_self[s->thread] += w;
    int rc = count_node_thread(b, node, s->thread, w);
    if (rc == 0)
        rc = count_stack(b, s->thread, depth, w);
    if (rc == 0)
        rc = count_line(b, innermost, inner_frame->file, inner_frame->line, true, w);
    return rc ? rc : count_path(b, s->path, innermost, w);
}

/* Symbolizes and counts the samples collected for process p. */
static int count_process(struct builder *b, uint32_t p, const struct strobe__defs *d, uint64_t *serial)
{
    if (b->nraw == 0)
        return 0;
    uint64_t *addrs = malloc(b->npool * sizeof *addrs);
    if (!addrs)
        return -ENOMEM;
    memcpy(addrs, b->pool, b->npool * sizeof *addrs);
    qsort(addrs, b->npool, sizeof *addrs, cmp_u64);
    size_t n = 0;
    for (size_t i = 0; i < b->npool; i++)
        if (n == 0 || addrs[i] != addrs[n - 1])
            addrs[n++] = addrs[i];
    struct strobe__code_loc *locs = calloc(n, sizeof *locs);
    free(b->loc_of);
    b->loc_of = malloc((n ? n : 1) * sizeof *b->loc_of);
    int rc = locs && b->loc_of ? strobe__symbols_code(d, addrs, n, locs) : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++)
        b->loc_of[i] = STROBE_NONE;
    if (locs) {
        b->locs[p] = locs;
        b->nlocs[p] = n;
    }
    for (size_t i = 0; i < b->nraw && rc == 0; i++)
        rc = count_sample(b, &b->raw[i], addrs, n, locs, (*serial)++);
    free(addrs);
    b->nraw = b->npool = 0;
    return rc;
}

struct func_at {
    struct strobe_sample_func f;
    uint32_t old; /* its index before sorting */
};

static int cmp_func(const void *a, const void *b)
{
    const struct strobe_sample_func *x = &((const struct func_at *)a)->f,
                                    *y = &((const struct func_at *)b)->f;
    if (x->self != y->self)
        return x->self > y->self ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->module, y->module);
}

static int cmp_path(const void *a, const void *b)
{
    const struct strobe_sample_path *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Children lists by total (largest first), then by function rank. */
static int sort_children(struct strobe_sample_model *m)
{
    uint32_t *order = malloc(m->nnodes * sizeof *order);
    if (!order)
        return -ENOMEM;
    for (size_t n = 0; n < m->nnodes; n++) {
        size_t k = 0;
        for (uint32_t c = m->nodes[n].first_child; c != STROBE_NONE; c = m->nodes[c].next_sibling)
            order[k++] = c;
        for (size_t i = 1; i < k; i++) /* insertion sort: lists are short */
            for (size_t j = i; j > 0; j--) {
                const struct strobe_sample_node *x = &m->nodes[order[j - 1]], *y = &m->nodes[order[j]];
                if (x->total > y->total || (x->total == y->total && x->func <= y->func))
                    break;
                uint32_t t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        m->nodes[n].first_child = k ? order[0] : STROBE_NONE;
        for (size_t i = 0; i < k; i++)
            m->nodes[order[i]].next_sibling = i + 1 < k ? order[i + 1] : STROBE_NONE;
    }
    free(order);
    return 0;
}

/* Each function's line (most self samples, else most total), the
 * functions sorted (every reference renumbered), the hybrid paths, the
 * children lists sorted. */
static int finish(struct builder *b)
{
    struct strobe_sample_model *m = b->m;
    size_t nf = m->nfuncs;
    uint32_t *best = malloc((nf ? nf : 1) * sizeof *best), *rank = malloc((nf ? nf : 1) * sizeof *rank);
    struct func_at *sorted = malloc((nf ? nf : 1) * sizeof *sorted);
    int rc = best && rank && sorted ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < nf; i++)
        best[i] = STROBE_NONE;
    for (size_t i = 0; rc == 0 && i < b->nlines; i++) {
        const struct line_count *l = &b->lines[i];
        uint32_t *bi = &best[l->func];
        const struct line_count *o = *bi == STROBE_NONE ? NULL : &b->lines[*bi];
        if (!o || l->self > o->self || (l->self == o->self && l->total > o->total))
            *bi = (uint32_t)i;
    }
    for (size_t i = 0; rc == 0 && i < nf; i++) {
        const struct line_count *l = best[i] == STROBE_NONE ? NULL : &b->lines[best[i]];
        m->funcs[i].file = strdup(l ? l->file : "");
        m->funcs[i].line = l ? l->line : 0;
        if (!m->funcs[i].file)
            rc = -ENOMEM;
    }
    if (rc == 0 && nf) {
        for (size_t i = 0; i < nf; i++)
            sorted[i] = (struct func_at){m->funcs[i], (uint32_t)i};
        qsort(sorted, nf, sizeof *sorted, cmp_func);
        for (size_t i = 0; i < nf; i++) {
            m->funcs[i] = sorted[i].f;
            rank[sorted[i].old] = (uint32_t)i;
        }
        for (size_t n = 1; n < m->nnodes; n++)
            m->nodes[n].func = rank[m->nodes[n].func];
        for (size_t i = 0; i < b->npf; i++)
            b->pf[i].func = rank[b->pf[i].func];
        for (size_t i = 0; i < m->nloc_frames; i++)
            m->loc_frames[i].func = rank[m->loc_frames[i].func];
    }
    size_t np = b->prof ? b->prof->nnodes + 1 : 1;
    for (size_t i = 0; rc == 0 && i < np; i++)
        m->npaths += b->path_samples[i] != 0;
    if (rc == 0 && m->npaths && !(m->paths = calloc(m->npaths, sizeof *m->paths)))
        rc = -ENOMEM;
    if (rc == 0) {
        uint32_t *slot = rank; /* path -> its entry; rank is no longer needed */
        if (np > nf && !(slot = realloc(rank, np * sizeof *slot)))
            rc = -ENOMEM;
        else
            rank = slot;
        size_t k = 0;
        for (size_t i = 0; rc == 0 && i < np; i++) {
            if (!b->path_samples[i])
                continue;
            slot[i] = (uint32_t)k;
            m->paths[k++] = (struct strobe_sample_path){i ? (uint32_t)(i - 1) : STROBE_NONE,
                                                        b->path_samples[i], STROBE_NONE, 0};
        }
        for (size_t i = 0; rc == 0 && i < b->npf; i++) {
            struct strobe_sample_path *p = &m->paths[slot[b->pf[i].path]];
            if (b->pf[i].self > p->top_samples ||
                (b->pf[i].self == p->top_samples && b->pf[i].func < p->top_func)) {
                p->top_samples = b->pf[i].self;
                p->top_func = b->pf[i].func;
            }
        }
        if (rc == 0 && m->npaths)
            qsort(m->paths, m->npaths, sizeof *m->paths, cmp_path);
    }
    if (rc == 0 && m->nnode_threads)
        qsort(m->node_threads, m->nnode_threads, sizeof *m->node_threads, cmp_node_thread);
    if (rc == 0)
        rc = sort_children(m);
    free(best);
    free(rank);
    free(sorted);
    return rc;
}

int strobe_sample_model_build(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                              struct strobe_sample_model **out, struct strobe_errbuf *eb)
{
    struct strobe_sample_model *m = calloc(1, sizeof *m);
    struct builder b = {.exp = exp, .prof = prof, .eb = eb, .m = m};
    size_t np = prof ? prof->nnodes + 1 : 1;
    int rc = 0;
    if (!m || !(m->threads = calloc(exp->nthreads ? exp->nthreads : 1, sizeof *m->threads)) ||
        !(b.path_samples = calloc(np, sizeof *b.path_samples)) ||
        !(b.locs = calloc(exp->nprocesses ? exp->nprocesses : 1, sizeof *b.locs)) ||
        !(b.nlocs = calloc(exp->nprocesses ? exp->nprocesses : 1, sizeof *b.nlocs)) ||
        !(m->nodes = calloc(1, sizeof *m->nodes)))
        rc = strobe__error(eb, -ENOMEM, "%s: out of memory", exp->dir);
    if (rc == 0) {
        b.nodes_cap = m->nnodes = 1;
        m->nodes[0] = (struct strobe_sample_node){STROBE_NONE, STROBE_NONE, STROBE_NONE, STROBE_NONE, 0, 0};
    }
    bool any = false;
    uint64_t serial = 0;
    for (uint32_t p = 0; rc == 0 && p < exp->nprocesses; p++) {
        struct strobe__defs d;
        if ((rc = strobe__process_defs(exp, p, &d, eb)))
            break;
        if (d.sample_hz) {
            if (!any) {
                m->hz = d.sample_hz;
                m->source = d.sample_source;
            } else if (m->hz != d.sample_hz) {
                m->mixed_rates = true;
            }
            any = true;
            for (uint32_t t = 0; rc == 0 && t < exp->nthreads; t++) {
                if (exp->threads[t].process != p)
                    continue;
                m->threads[t].sampled = true;
                if (exp->threads[t].stream_path)
                    rc = read_thread(&b, t);
                else
                    from_profile(&b, t);
            }
            if (rc == 0 && (rc = count_process(&b, p, &d, &serial)))
                strobe__error(eb, rc, "%s: out of memory", exp->dir);
        }
        strobe__defs_free(&d);
    }
    if (rc == 0 && !any)
        rc = -ENOENT;
    if (rc == 0 && (rc = finish(&b)))
        strobe__error(eb, rc, "%s: out of memory", exp->dir);
    for (size_t t = 0; rc == 0 && t < exp->nthreads; t++) {
        m->records += m->threads[t].records;
        m->samples += m->threads[t].samples;
        m->missed += m->threads[t].missed;
        m->truncated += m->threads[t].truncated;
        m->unstacked += m->threads[t].unstacked;
    }
    for (size_t p = 0; b.locs && p < exp->nprocesses; p++) {
        for (size_t i = 0; b.locs[p] && i < b.nlocs[p]; i++)
            strobe__code_loc_free(&b.locs[p][i]);
        free(b.locs[p]);
    }
    free(b.locs);
    free(b.nlocs);
    free(b.stamp);
    free(b.lines);
    free(b.pf);
    free(b.path_samples);
    free(b.raw);
    free(b.pool);
    strobe__keymap_free(&b.func_ids);
    strobe__keymap_free(&b.child_ids);
    strobe__keymap_free(&b.line_ids);
    strobe__keymap_free(&b.pathfunc_ids);
    strobe__keymap_free(&b.nodethread_ids);
    strobe__keymap_free(&b.stack_ids);
    free(b.loc_of);
    free(b.stack);
    if (rc) {
        strobe_sample_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

void strobe_sample_model_free(struct strobe_sample_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nfuncs; i++) {
        free(m->funcs[i].name);
        free(m->funcs[i].module);
        free(m->funcs[i].file);
        free(m->funcs[i].thread_self);
        free(m->funcs[i].thread_total);
    }
    free(m->funcs);
    free(m->nodes);
    free(m->node_threads);
    free(m->paths);
    free(m->locs);
    free(m->loc_frames);
    free(m->stacks);
    free(m->stack_locs);
    free(m->threads);
    free(m);
}
