/* SPDX-License-Identifier: MIT */
/*
 * Tests of the comparison model (src/analysis/diff.c) on call trees built
 * in memory, each number worked out by hand: paths matched by function
 * name and file whatever their region ids, siblings of one name folded,
 * paths of one side only, the spread of repeated runs, the gate's
 * threshold, noise floor and spread rule, metrics, TM blocks and MPI
 * functions matched by name, and a damaged tree.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "analysis/diff.h"
#include "strobe/strobe.h"
#include "test.h"

#define MAXN 16

/* One run: regions, a call tree of up to MAXN nodes (node 0 the root). */
struct run {
    struct strobe_experiment exp;
    struct strobe_profile prof;
    struct strobe_region_def regions[MAXN];
    struct strobe_metric_def metric;
    struct strobe_cnode nodes[MAXN];
    struct strobe_metric_stats metrics[MAXN];
};

static void init_run(struct run *r)
{
    memset(r, 0, sizeof *r);
    r->exp.regions = r->regions;
    r->exp.metrics = &r->metric;
    r->metric.name = "bytes";
    r->prof.nodes = r->nodes;
    r->prof.nnodes = 1;
    r->nodes[0] = (struct strobe_cnode){.region = STROBE_NONE, .parent = STROBE_NONE,
                                        .first_child = STROBE_NONE, .next_sibling = STROBE_NONE};
}

/* Adds region NAME in FILE (a new id each time: ids differ between runs). */
static uint32_t region(struct run *r, const char *name, const char *file)
{
    uint32_t id = (uint32_t)r->exp.nregions++;
    r->regions[id] = (struct strobe_region_def){.name = (char *)name, .file = (char *)file, .module = ""};
    return id;
}

/* Adds a node under PARENT, last among its siblings. */
static uint32_t node(struct run *r, uint32_t parent, uint32_t reg, uint64_t visits, uint64_t incl, uint64_t excl)
{
    uint32_t n = (uint32_t)r->prof.nnodes++;
    r->nodes[n] = (struct strobe_cnode){.region = reg, .parent = parent, .first_child = STROBE_NONE,
                                        .next_sibling = STROBE_NONE, .depth = r->nodes[parent].depth + 1};
    r->nodes[n].total = (struct strobe_stats){.visits = visits, .incl_ns = incl, .excl_ns = excl};
    uint32_t *link = &r->nodes[parent].first_child;
    while (*link != STROBE_NONE)
        link = &r->nodes[*link].next_sibling;
    *link = n;
    return n;
}

/* main (visits 1, incl MAIN) > work (WORK visits, 1 ms) [> extra]; the ids
 * are made in an order that depends on `shuffle`. */
static void simple(struct run *r, uint64_t main_ns, uint64_t work_visits, const char *extra, int shuffle)
{
    init_run(r);
    uint32_t w = 0, m = 0;
    if (shuffle) {
        w = region(r, "work", "w.c");
        region(r, "unused", "u.c");
    }
    m = region(r, "main", "m.c");
    if (!shuffle)
        w = region(r, "work", "w.c");
    uint32_t nm = node(r, 0, m, 1, main_ns, main_ns - 1000000);
    node(r, nm, w, work_visits, 1000000, 1000000);
    if (extra)
        node(r, nm, region(r, extra, "x.c"), 1, 500, 500);
}

static struct strobe_diff_run as_run(const struct run *r)
{
    return (struct strobe_diff_run){&r->exp, &r->prof, NULL, NULL, NULL};
}

/* The union node at path "main/work" ("" = root), or STROBE_NONE. */
static uint32_t find(const struct strobe_diff *d, const char *path)
{
    uint32_t at = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save, *part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
        uint32_t next = STROBE_NONE;
        for (uint32_t n = 1; n < d->nnodes; n++)
            if (d->nodes[n].parent == at && strcmp(d->nodes[n].name, part) == 0)
                next = n;
        if (next == STROBE_NONE)
            return STROBE_NONE;
        at = next;
    }
    return at;
}

STROBE_TEST(matched_by_name_and_file)
{
    struct run a, b;
    simple(&a, 3000000, 10, "old", 0);
    simple(&b, 5000000, 15, "new", 1);
    struct strobe_diff_run ra = as_run(&a), rb = as_run(&b);
    struct strobe_diff *d;
    CHECK_EQ_INT(strobe_diff_build(&ra, 1, &rb, 1, &d), 0);
    CHECK_EQ_U64(d->nnodes, 5); /* root, main, work, old, new */
    uint32_t w = find(d, "main/work"), o = find(d, "main/old"), n = find(d, "main/new");
    CHECK(w != STROBE_NONE && o != STROBE_NONE && n != STROBE_NONE);
    CHECK(d->nodes[w].in[0] && d->nodes[w].in[1]);
    CHECK(d->nodes[o].in[0] && !d->nodes[o].in[1]);
    CHECK(!d->nodes[n].in[0] && d->nodes[n].in[1]);
    CHECK(d->nodes[w].v[0][STROBE_DIFF_VISITS].mean == 10 && d->nodes[w].v[1][STROBE_DIFF_VISITS].mean == 15);
    CHECK(d->nodes[o].v[1][STROBE_DIFF_VISITS].mean == 0);
    uint32_t m = find(d, "main");
    CHECK(d->nodes[m].v[0][STROBE_DIFF_INCL].mean == 3000000 && d->nodes[m].v[1][STROBE_DIFF_INCL].mean == 5000000);
    CHECK(d->nodes[m].v[1][STROBE_DIFF_EXCL].mean == 4000000);
    CHECK(d->nodes[w].depth == 2 && d->nodes[w].parent == m);
    CHECK(isnan(strobe_diff_rel(0, 5)));
    CHECK(strobe_diff_rel(4, 5) == 25.0);
    strobe_diff_free(d);
}

/* Same name, other file: another function. Same name and file twice
 * under one parent (two processes' ids): one path, summed. */
STROBE_TEST(files_and_folding)
{
    struct run a, b;
    init_run(&a);
    uint32_t m = node(&a, 0, region(&a, "main", "m.c"), 1, 100, 0);
    node(&a, m, region(&a, "f", "one.c"), 2, 30, 30);
    node(&a, m, region(&a, "f", "two.c"), 3, 70, 70);
    init_run(&b);
    uint32_t mb = node(&b, 0, region(&b, "main", "m.c"), 1, 100, 0);
    node(&b, mb, region(&b, "f", "one.c"), 4, 40, 40);
    node(&b, mb, region(&b, "f", "one.c"), 6, 60, 60);
    struct strobe_diff_run ra = as_run(&a), rb = as_run(&b);
    struct strobe_diff *d;
    CHECK_EQ_INT(strobe_diff_build(&ra, 1, &rb, 1, &d), 0);
    CHECK_EQ_U64(d->nnodes, 4);
    size_t one = 0, two = 0;
    for (uint32_t n = 2; n < d->nnodes; n++) {
        if (strcmp(d->nodes[n].file, "one.c") == 0) {
            one++;
            CHECK(d->nodes[n].v[0][STROBE_DIFF_VISITS].mean == 2 && d->nodes[n].v[1][STROBE_DIFF_VISITS].mean == 10);
            CHECK(d->nodes[n].v[1][STROBE_DIFF_INCL].mean == 100);
        } else {
            two++;
            CHECK(d->nodes[n].in[0] && !d->nodes[n].in[1]);
        }
    }
    CHECK(one == 1 && two == 1);
    strobe_diff_free(d);
}

/* The gate: threshold, noise floor, a new path, and repeated runs. */
STROBE_TEST(gate)
{
    struct run a, b;
    simple(&a, 10000000, 10, NULL, 0);
    simple(&b, 12000000, 10, "new", 0); /* main +20%, work same, new 500 ns */
    struct strobe_diff_run ra = as_run(&a), rb = as_run(&b);
    struct strobe_diff *d;
    CHECK_EQ_INT(strobe_diff_build(&ra, 1, &rb, 1, &d), 0);
    uint32_t m = find(d, "main"), nw = find(d, "main/new");
    CHECK_EQ_U64(strobe_diff_gate(d, 10, 1000000), 1);
    CHECK(d->nodes[m].failed);
    CHECK_EQ_U64(strobe_diff_gate(d, 20, 1000000), 0); /* +20% is not more than 20% */
    CHECK_EQ_U64(strobe_diff_gate(d, 10, 12000001), 0); /* under the floor on both sides */
    CHECK_EQ_U64(strobe_diff_gate(d, 10, 12000000), 1);
    CHECK_EQ_U64(strobe_diff_gate(d, 10, 0), 2); /* the new path grew from nothing */
    CHECK(d->nodes[nw].failed);
    strobe_diff_free(d);

    /* A: main 10, 12, 14 ms; B: 13, 15, 17 ms (mean +25%, ranges overlap);
     * C: 15, 16, 17 ms (beyond A's 14 ms) */
    struct run as[3], bs[3], cs[3];
    struct strobe_diff_run rs[3], rbs[3], rcs[3];
    for (int i = 0; i < 3; i++) {
        simple(&as[i], 10000000 + 2000000 * (uint64_t)i, 10, NULL, i & 1);
        simple(&bs[i], 13000000 + 2000000 * (uint64_t)i, 10, NULL, 0);
        simple(&cs[i], 15000000 + 1000000 * (uint64_t)i, 10, i == 0 ? "once" : NULL, 0);
        rs[i] = as_run(&as[i]);
        rbs[i] = as_run(&bs[i]);
        rcs[i] = as_run(&cs[i]);
    }
    CHECK_EQ_INT(strobe_diff_build(rs, 3, rbs, 3, &d), 0);
    m = find(d, "main");
    CHECK(d->nodes[m].v[0][STROBE_DIFF_INCL].mean == 12000000);
    CHECK(d->nodes[m].v[0][STROBE_DIFF_INCL].min == 10000000 && d->nodes[m].v[0][STROBE_DIFF_INCL].max == 14000000);
    CHECK(!d->nodes[m].beyond_spread);
    CHECK_EQ_U64(strobe_diff_gate(d, 10, 0), 0);
    strobe_diff_free(d);
    CHECK_EQ_INT(strobe_diff_build(rs, 3, rcs, 3, &d), 0);
    m = find(d, "main");
    CHECK(d->nodes[m].beyond_spread);
    uint32_t once = find(d, "main/once");
    /* in one run of three: mean 500 / 3, range 0..500 */
    CHECK(fabs(d->nodes[once].v[1][STROBE_DIFF_INCL].mean - 500.0 / 3) < 1e-9);
    CHECK(d->nodes[once].v[1][STROBE_DIFF_INCL].min == 0 && d->nodes[once].v[1][STROBE_DIFF_INCL].max == 500);
    CHECK_EQ_U64(strobe_diff_gate(d, 10, 1000000), 1);
    CHECK(d->nodes[m].failed);
    strobe_diff_free(d);
}

/* Metrics per path, TM blocks and MPI functions matched by name. */
STROBE_TEST(metrics_tm_mpi)
{
    struct run a, b;
    simple(&a, 3000000, 10, NULL, 0);
    simple(&b, 3000000, 10, NULL, 1);
    a.exp.nmetrics = b.exp.nmetrics = 1;
    a.metrics[0] = (struct strobe_metric_stats){4, 400, 100, 100};
    b.metrics[0] = (struct strobe_metric_stats){5, 1000, 200, 200};
    a.nodes[2].metrics = &a.metrics[0]; /* main > work */
    b.nodes[2].metrics = &b.metrics[0];
    uint32_t blk_a = region(&a, "transfer", "bank.c"), blk_b[2] = {region(&b, "other", "o.c"),
                                                                  region(&b, "transfer", "bank.c")};
    struct strobe_tm_cell cells_a[2] = {{.transactions = 10, .rollbacks = 2, .aborts = {1, 1}},
                                        {.transactions = 5, .cancels = 1}};
    struct strobe_tm_cell cells_b[2] = {{.transactions = 3}, {.transactions = 20, .rollbacks = 8, .aborts = {0, 8}}};
    struct strobe_tm_model tm_a = {.nblocks = 1, .blocks = &blk_a, .nthreads = 2, .cells = cells_a};
    struct strobe_tm_model tm_b = {.nblocks = 2, .blocks = blk_b, .nthreads = 1, .cells = cells_b};
    uint32_t send_a = region(&a, "MPI_Send", ""), send_b = region(&b, "MPI_Send", "");
    uint64_t rank_ns[2] = {0, 0};
    struct strobe_mpi_call call_a = {send_a, 4, 4000, rank_ns}, call_b = {send_b, 6, 9000, rank_ns};
    struct strobe_mpi_rank ranks[2] = {{.present = true, .mpi_ns = 4000, .calls = 4},
                                       {.present = true, .mpi_ns = 5000, .calls = 2}};
    struct strobe_mpi_model mpi_a = {.nranks = 2, .ranks = ranks, .calls = &call_a, .ncalls = 1, .messages = 4,
                                     .bytes = 4096};
    struct strobe_mpi_model mpi_b = {.nranks = 1, .ranks = ranks, .calls = &call_b, .ncalls = 1, .messages = 6,
                                     .bytes = 100};
    struct strobe_diff_run ra = {&a.exp, &a.prof, NULL, &tm_a, &mpi_a}, rb = {&b.exp, &b.prof, NULL, &tm_b, &mpi_b};
    struct strobe_diff *d;
    CHECK_EQ_INT(strobe_diff_build(&ra, 1, &rb, 1, &d), 0);
    CHECK(d->tm[0] && d->tm[1] && d->mpi[0] && d->mpi[1] && !d->samples[0]);
    CHECK_EQ_U64(d->nmetrics, 1);
    CHECK(d->metrics[0].node == find(d, "main/work"));
    CHECK(strobe_diff_item_spread(d, &d->metrics[0], 1, 0).mean == 400);
    CHECK(strobe_diff_item_spread(d, &d->metrics[0], 1, 1).mean == 1000);
    CHECK_EQ_U64(d->ntm_blocks, 2);
    const struct strobe_diff_item *t = strcmp(d->tm_blocks[0].name, "transfer") == 0 ? &d->tm_blocks[0]
                                                                                      : &d->tm_blocks[1];
    CHECK(strobe_diff_item_spread(d, t, 0, 0).mean == 15 && strobe_diff_item_spread(d, t, 0, 1).mean == 20);
    CHECK(strobe_diff_item_spread(d, t, 1, 0).mean == 14); /* commits: 15 - 1 cancel */
    CHECK(strobe_diff_item_spread(d, t, 2, 1).mean == 8);
    CHECK(strobe_diff_item_spread(d, t, 3 + 1, 0).mean == 1 && strobe_diff_item_spread(d, t, 3 + 1, 1).mean == 8);
    CHECK_EQ_U64(d->nmpi_funcs, 1);
    CHECK(strobe_diff_item_spread(d, &d->mpi_funcs[0], 1, 1).mean == 9000);
    CHECK(d->mpi_totals[0 * 2 + 0] == 9000 && d->mpi_totals[0 * 2 + 1] == 4000);
    CHECK(d->mpi_totals[3 * 2 + 0] == 4096 && d->mpi_totals[2 * 2 + 1] == 6);
    strobe_diff_free(d);
}

STROBE_TEST(damaged_tree)
{
    struct run a, b;
    simple(&a, 3000000, 10, NULL, 0);
    simple(&b, 3000000, 10, NULL, 0);
    b.nodes[2].first_child = 1; /* work's child is main: a cycle */
    struct strobe_diff_run ra = as_run(&a), rb = as_run(&b);
    struct strobe_diff *d = (struct strobe_diff *)&d;
    CHECK_EQ_INT(strobe_diff_build(&ra, 1, &rb, 1, &d), STROBE_ERR_FORMAT);
    CHECK(d == NULL);
    b.nodes[2].first_child = STROBE_NONE;
    b.nodes[2].region = 99; /* no such region */
    CHECK_EQ_INT(strobe_diff_build(&ra, 1, &rb, 1, &d), STROBE_ERR_FORMAT);
}

STROBE_TEST_MAIN(STROBE_CASE(matched_by_name_and_file), STROBE_CASE(files_and_folding), STROBE_CASE(gate),
                 STROBE_CASE(metrics_tm_mpi), STROBE_CASE(damaged_tree))
