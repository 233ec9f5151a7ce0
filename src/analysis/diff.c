/* SPDX-License-Identifier: MIT */
/*
 * Comparing experiments: the union of the runs' call trees, matched by
 * function name and source file, with each run's values per path and each
 * side's spread over its runs (diff.h). Matching goes through one keymap
 * of (union parent, name, file), so paths that appear several times under
 * one parent in a run (the same function in two processes) fold into one,
 * as the profile folds threads.
 */
#include "analysis/diff.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/keymap.h"
#include "strobe/strobe.h"

/* What the build keeps while it merges the runs. */
struct builder {
    struct strobe_diff *d;
    size_t cap_nodes;
    uint64_t *raw; /* [node * nruns_all * NVALUES + run * NVALUES + value] */
    struct strobe__keymap paths, items;
    size_t cap_metrics, cap_tm, cap_mpi;
};

static uint64_t *raw_of(struct builder *b, uint32_t node, size_t run)
{
    return &b->raw[(node * b->d->nruns_all + run) * STROBE_DIFF_NVALUES];
}

/* The union node for (parent, name, file), added when new. Returns its
 * index or -ENOMEM. */
static int64_t union_node(struct builder *b, uint32_t parent, const char *name, const char *file)
{
    size_t ln = strlen(name), lf = strlen(file), len = sizeof parent + ln + 1 + lf;
    char stack_key[512], *key = len <= sizeof stack_key ? stack_key : malloc(len);
    if (!key)
        return -ENOMEM;
    memcpy(key, &parent, sizeof parent);
    memcpy(key + sizeof parent, name, ln + 1);
    memcpy(key + sizeof parent + ln + 1, file, lf);
    struct strobe_diff *d = b->d;
    uint32_t idx = (uint32_t)d->nnodes;
    int found = strobe__keymap_get_or_put(&b->paths, key, len, &idx);
    if (key != stack_key)
        free(key);
    if (found < 0)
        return found;
    if (found)
        return idx;
    size_t old = b->cap_nodes;
    if (strobe__grow((void **)&d->nodes, &b->cap_nodes, d->nnodes + 1, sizeof *d->nodes))
        return -ENOMEM;
    if (b->cap_nodes != old) {
        size_t stride = d->nruns_all * STROBE_DIFF_NVALUES;
        uint64_t *raw = realloc(b->raw, b->cap_nodes * stride * sizeof *raw);
        if (!raw)
            return -ENOMEM;
        b->raw = raw;
    }
    memset(raw_of(b, idx, 0), 0, d->nruns_all * STROBE_DIFF_NVALUES * sizeof *b->raw);
    struct strobe_diff_node *n = &d->nodes[d->nnodes++];
    *n = (struct strobe_diff_node){.parent = parent,
                                   .depth = parent == STROBE_NONE ? 0 : d->nodes[parent].depth + 1,
                                   .name = name,
                                   .file = file};
    return idx;
}

/* The item of kind K (a byte), node and name, added when new, with
 * nfields fields per run. Returns it or NULL (-ENOMEM). */
static struct strobe_diff_item *item(struct builder *b, char k, uint32_t node, const char *name,
                                     size_t nfields, struct strobe_diff_item **arr, size_t *n, size_t *cap)
{
    size_t ln = strlen(name), len = 1 + sizeof node + ln;
    char *key = malloc(len);
    if (!key)
        return NULL;
    key[0] = k;
    memcpy(key + 1, &node, sizeof node);
    memcpy(key + 1 + sizeof node, name, ln);
    uint32_t idx = (uint32_t)*n;
    int found = strobe__keymap_get_or_put(&b->items, key, len, &idx);
    free(key);
    if (found < 0)
        return NULL;
    if (found)
        return &(*arr)[idx];
    if (strobe__grow((void **)arr, cap, *n + 1, sizeof **arr))
        return NULL;
    double *runs = calloc(nfields * b->d->nruns_all, sizeof *runs);
    if (!runs)
        return NULL;
    (*arr)[*n] = (struct strobe_diff_item){.name = name, .node = node, .runs = runs};
    return &(*arr)[(*n)++];
}

/* Adds run r's call tree; map[profile node] = union node. */
static int add_tree(struct builder *b, const struct strobe_diff_run *run, size_t r, uint32_t *map)
{
    const struct strobe_profile *p = run->prof;
    const struct strobe_experiment *exp = run->exp;
    if (p->nnodes == 0)
        return 0;
    uint32_t *stack = malloc(p->nnodes * sizeof *stack);
    if (!stack)
        return -ENOMEM;
    size_t top = 0, seen = 0;
    int rc = 0;
    map[0] = 0;
    stack[top++] = 0;
    while (top && rc == 0) {
        uint32_t n = stack[--top];
        if (++seen > p->nnodes) { /* a cycle */
            rc = STROBE_ERR_FORMAT;
            break;
        }
        for (uint32_t c = p->nodes[n].first_child; c != STROBE_NONE; c = p->nodes[c].next_sibling) {
            if (c >= p->nnodes || p->nodes[c].region >= exp->nregions || top == p->nnodes) {
                rc = STROBE_ERR_FORMAT;
                break;
            }
            const struct strobe_region_def *rd = &exp->regions[p->nodes[c].region];
            int64_t u = union_node(b, map[n], rd->name, rd->file);
            if (u < 0) {
                rc = (int)u;
                break;
            }
            map[c] = (uint32_t)u;
            b->d->nodes[u].in[r >= b->d->nruns[0]] = true;
            uint64_t *raw = raw_of(b, (uint32_t)u, r);
            const struct strobe_stats *st = &p->nodes[c].total;
            raw[STROBE_DIFF_VISITS] += st->visits;
            raw[STROBE_DIFF_INCL] += st->incl_ns;
            raw[STROBE_DIFF_EXCL] += st->excl_ns;
            stack[top++] = c;
        }
    }
    free(stack);
    return rc;
}

/* Adds run r's samples, metrics, TM blocks and MPI functions. */
static int add_models(struct builder *b, const struct strobe_diff_run *run, size_t r, const uint32_t *map)
{
    struct strobe_diff *d = b->d;
    const struct strobe_experiment *exp = run->exp;
    const struct strobe_profile *p = run->prof;
    size_t nr = d->nruns_all;
    for (size_t i = 0; run->samples && i < run->samples->npaths; i++) {
        uint32_t n = run->samples->paths[i].node;
        if (n != STROBE_NONE && n < p->nnodes && map[n] != 0)
            raw_of(b, map[n], r)[STROBE_DIFF_SAMPLES] += run->samples->paths[i].samples;
    }
    for (size_t n = 1; n < p->nnodes && exp->nmetrics; n++) {
        for (size_t m = 0; p->nodes[n].metrics && map[n] != 0 && m < exp->nmetrics; m++) {
            const struct strobe_metric_stats *ms = &p->nodes[n].metrics[m];
            if (ms->count == 0)
                continue;
            struct strobe_diff_item *it =
                item(b, 'm', map[n], exp->metrics[m].name, STROBE_DIFF_METRIC_FIELDS, &d->metrics,
                     &d->nmetrics, &b->cap_metrics);
            if (!it)
                return -ENOMEM;
            it->runs[0 * nr + r] += (double)ms->count;
            it->runs[1 * nr + r] += (double)ms->sum;
        }
    }
    for (size_t k = 0; run->tm && k < run->tm->nblocks; k++) {
        struct strobe_tm_cell c;
        strobe_tm_block_total(run->tm, k, &c);
        struct strobe_diff_item *it = item(b, 't', STROBE_NONE, exp->regions[run->tm->blocks[k]].name,
                                           STROBE_DIFF_TM_FIELDS, &d->tm_blocks, &d->ntm_blocks, &b->cap_tm);
        if (!it)
            return -ENOMEM;
        it->runs[0 * nr + r] += (double)c.transactions;
        it->runs[1 * nr + r] += (double)(c.transactions - c.cancels);
        it->runs[2 * nr + r] += (double)c.rollbacks;
        for (int k2 = 0; k2 < STROBE_TM_NCAUSES; k2++)
            it->runs[(size_t)(3 + k2) * nr + r] += (double)c.aborts[k2];
    }
    if (run->mpi) {
        double *tot = d->mpi_totals;
        for (uint32_t k = 0; k < run->mpi->nranks; k++) {
            tot[0 * nr + r] += (double)run->mpi->ranks[k].mpi_ns;
            tot[1 * nr + r] += (double)run->mpi->ranks[k].calls;
        }
        tot[2 * nr + r] = (double)run->mpi->messages;
        tot[3 * nr + r] = (double)run->mpi->bytes;
    }
    for (size_t k = 0; run->mpi && k < run->mpi->ncalls; k++) {
        const struct strobe_mpi_call *c = &run->mpi->calls[k];
        struct strobe_diff_item *it =
            item(b, 'p', STROBE_NONE, exp->regions[c->region].name, STROBE_DIFF_MPI_FIELDS, &d->mpi_funcs,
                 &d->nmpi_funcs, &b->cap_mpi);
        if (!it)
            return -ENOMEM;
        it->runs[0 * nr + r] += (double)c->calls;
        it->runs[1 * nr + r] += (double)c->ns;
    }
    return 0;
}

/* Every node's spreads from the raw per-run values. */
static void spreads(struct builder *b)
{
    struct strobe_diff *d = b->d;
    double v[d->nruns_all];
    for (uint32_t n = 0; n < d->nnodes; n++) {
        struct strobe_diff_node *node = &d->nodes[n];
        for (int k = 0; k < STROBE_DIFF_NVALUES; k++) {
            for (size_t r = 0; r < d->nruns_all; r++)
                v[r] = (double)raw_of(b, n, r)[k];
            node->v[0][k] = strobe_diff_spread_of(v, d->nruns[0]);
            node->v[1][k] = strobe_diff_spread_of(v + d->nruns[0], d->nruns[1]);
        }
        const struct strobe_diff_spread *a = &node->v[0][STROBE_DIFF_INCL],
                                        *bs = &node->v[1][STROBE_DIFF_INCL];
        node->beyond_spread = bs->min > a->max || a->min > bs->max;
    }
}

static void free_items(struct strobe_diff_item *it, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(it[i].runs);
    free(it);
}

void strobe_diff_free(struct strobe_diff *d)
{
    if (!d)
        return;
    free(d->nodes);
    free_items(d->metrics, d->nmetrics);
    free_items(d->tm_blocks, d->ntm_blocks);
    free_items(d->mpi_funcs, d->nmpi_funcs);
    free(d->mpi_totals);
    free(d);
}

int strobe_diff_build(const struct strobe_diff_run *a, size_t na, const struct strobe_diff_run *b, size_t nb,
                      struct strobe_diff **out)
{
    *out = NULL;
    struct strobe_diff *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    d->nruns[0] = na;
    d->nruns[1] = nb;
    d->nruns_all = na + nb;
    struct builder bl = {.d = d};
    int rc = 0;
    d->mpi_totals = calloc(STROBE_DIFF_MPI_NTOTALS * d->nruns_all, sizeof *d->mpi_totals);
    if (!d->mpi_totals || union_node(&bl, STROBE_NONE, "", "") < 0)
        rc = -ENOMEM;
    for (int s = 0; s < 2; s++)
        d->samples[s] = d->tm[s] = d->mpi[s] = true;
    for (size_t r = 0; r < d->nruns_all && rc == 0; r++) {
        const struct strobe_diff_run *run = r < na ? &a[r] : &b[r - na];
        int s = r >= na;
        d->samples[s] &= run->samples != NULL;
        d->tm[s] &= run->tm != NULL && run->tm->nblocks > 0;
        d->mpi[s] &= run->mpi != NULL;
        /* 0 (the root) for nodes the walk does not reach: ignored below */
        uint32_t *map = calloc(run->prof->nnodes ? run->prof->nnodes : 1, sizeof *map);
        if (!map) {
            rc = -ENOMEM;
            break;
        }
        rc = add_tree(&bl, run, r, map);
        if (rc == 0)
            rc = add_models(&bl, run, r, map);
        free(map);
    }
    if (rc == 0) {
        d->nodes[0].in[0] = d->nodes[0].in[1] = true;
        spreads(&bl);
    }
    free(bl.raw);
    strobe__keymap_free(&bl.paths);
    strobe__keymap_free(&bl.items);
    if (rc) {
        strobe_diff_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

size_t strobe_diff_gate(struct strobe_diff *d, double pct, uint64_t min_ns)
{
    size_t failed = 0;
    for (size_t n = 1; n < d->nnodes; n++) {
        struct strobe_diff_node *node = &d->nodes[n];
        double a = node->v[0][STROBE_DIFF_INCL].mean, b = node->v[1][STROBE_DIFF_INCL].mean;
        /* a path new in B grew from nothing: beyond any threshold */
        bool grew = a == 0 ? b > 0 : strobe_diff_rel(a, b) > pct;
        node->failed = (a > b ? a : b) >= (double)min_ns && grew && node->beyond_spread;
        failed += node->failed;
    }
    return failed;
}
