/* SPDX-License-Identifier: MIT */
/*
 * The report's timelines (src/analysis/timeline.c): exact bars of the
 * byte-level experiment of tests/export/make_experiment.c, its cells under
 * budgets too small for bars, the TMbox states of its TM twin, and on a
 * real run (examples/demo) under a forced budget, that every frame is a
 * bar or counted in exactly one cell and the encoding fits the budget.
 */
#include <errno.h>
#include <string.h>

#include "analysis/experiment.h"
#include "analysis/timeline.h"
#include "analysis/tm.h"
#include "make_experiment.h"

#include "test.h"

static char dir[4200];

static struct strobe_experiment *open_ok(const char *d)
{
    struct strobe_experiment *exp = NULL;
    struct strobe_errbuf eb;
    if (strobe_experiment_open(d, &exp, NULL, NULL, &eb))
        STROBE_FAIL("open %s: %s", d, eb.msg);
    return exp;
}

static struct strobe_experiment *synth(const char *name)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir(name));
    CHECK_EQ_INT(make_experiment(dir), 0);
    return open_ok(dir);
}

static uint32_t region_id(const struct strobe_experiment *exp, const char *name)
{
    for (size_t i = 0; i < exp->nregions; i++)
        if (strcmp(exp->regions[i].name, name) == 0)
            return (uint32_t)i;
    STROBE_FAIL("no region %s", name);
    return STROBE_NONE;
}

static struct strobe_timeline *build(const struct strobe_experiment *exp, size_t budget)
{
    struct strobe_timeline *tl = NULL;
    struct strobe_errbuf eb = {""};
    if (strobe_timeline_build(exp, budget, &tl, &eb))
        STROBE_FAIL("timeline: %s", eb.msg);
    return tl;
}

static void check_bar(const struct strobe_timeline_bar *b, uint64_t begin, uint64_t end, uint32_t row,
                      uint32_t key)
{
    CHECK_EQ_U64(b->begin, begin);
    CHECK_EQ_U64(b->end, end);
    CHECK_EQ_INT(b->row, row);
    CHECK_EQ_INT(b->key, key);
}

/* Every interval is a bar or in the count of one cell; bars are at least
 * cell_ns long, sorted by (begin, row), and in the lane's rows. */
static void check_accounting(const struct strobe_timeline *tl)
{
    uint64_t total = 0, bars = 0;
    for (size_t i = 0; i < tl->nlanes; i++) {
        const struct strobe_timeline_lane *l = &tl->lanes[i];
        uint64_t n = l->nbars;
        for (size_t j = 0; j < l->nbars; j++) {
            CHECK(l->bars[j].end - l->bars[j].begin >= tl->cell_ns);
            CHECK(l->bars[j].row < l->rows);
            if (j)
                CHECK(l->bars[j - 1].begin < l->bars[j].begin ||
                      (l->bars[j - 1].begin == l->bars[j].begin && l->bars[j - 1].row < l->bars[j].row));
        }
        for (size_t j = 0; j < l->ncells; j++) {
            CHECK(l->cells[j].count > 0);
            CHECK(l->cells[j].row < l->rows);
            if (j)
                CHECK(l->cells[j - 1].cell < l->cells[j].cell ||
                      (l->cells[j - 1].cell == l->cells[j].cell && l->cells[j - 1].row < l->cells[j].row));
            n += l->cells[j].count;
        }
        CHECK_EQ_U64(n, l->intervals);
        total += l->intervals;
        bars += l->nbars;
    }
    CHECK_EQ_U64(total, tl->intervals);
    CHECK_EQ_U64(bars, tl->nbars);
}

/* The default budget: every frame a bar, exactly. */
STROBE_TEST(frames_exact)
{
    struct strobe_experiment *exp = synth("tl_exact");
    struct strobe_timeline *tl = build(exp, STROBE_TIMELINE_BUDGET);
    uint32_t main_ = region_id(exp, "main"), compute = region_id(exp, "compute");
    uint32_t odd = region_id(exp, EXPERIMENT_ODD_NAME);
    CHECK_EQ_U64(tl->cell_ns, 0);
    CHECK_EQ_U64(tl->intervals, 6);
    CHECK_EQ_U64(tl->nbars, 6);
    CHECK_EQ_U64(tl->bytes, 264); /* 2 lanes x 96 + 49 + 23 digits and commas */
    CHECK_EQ_INT(tl->nlanes, 2);
    const struct strobe_timeline_lane *l = &tl->lanes[0];
    CHECK(l->traced);
    CHECK_EQ_INT(l->rows, 2);
    CHECK_EQ_INT(l->nbars, 4);
    CHECK_EQ_INT(l->ncells, 0);
    check_bar(&l->bars[0], 100, 6000, 0, main_);
    check_bar(&l->bars[1], 200, 500, 1, compute);
    check_bar(&l->bars[2], 600, 700, 1, compute);
    check_bar(&l->bars[3], 900, 1000, 1, odd);
    l = &tl->lanes[1];
    CHECK_EQ_INT(l->thread, 1);
    CHECK_EQ_INT(l->rows, 1);
    CHECK_EQ_INT(l->nbars, 2);
    check_bar(&l->bars[0], 900, 1300, 0, compute);
    check_bar(&l->bars[1], 1350, 1370, 0, compute);
    check_accounting(tl);
    strobe_timeline_free(tl);
    /* one byte less than the exact encoding: half the frames are shorter
     * than 128 ns, the first width tried; then 256, 512 (measured over
     * 15/16 of the budget when the last frame is read) */
    tl = build(exp, 263);
    CHECK_EQ_U64(tl->cell_ns, 512);
    CHECK(tl->bytes <= 263);
    CHECK_EQ_U64(tl->nbars, 1);
    l = &tl->lanes[0];
    check_bar(&l->bars[0], 100, 6000, 0, main_);
    CHECK_EQ_INT(l->ncells, 2);
    CHECK_EQ_U64(l->cells[0].cell, 0); /* compute 200..500 */
    CHECK_EQ_U64(l->cells[0].count, 1);
    CHECK(!l->cells[0].mixed);
    CHECK_EQ_U64(l->cells[1].cell, 1); /* compute 600..700, odd name 900..1000 */
    CHECK_EQ_U64(l->cells[1].count, 2);
    CHECK_EQ_U64(l->cells[1].busy_ns, 200);
    CHECK_EQ_INT(l->cells[1].key, compute); /* a tie: the first one */
    CHECK_EQ_U64(l->cells[1].key_ns, 100);
    CHECK(l->cells[1].mixed);
    l = &tl->lanes[1]; /* 900..1300 in cell 1, 1350..1370 in cell 2 */
    CHECK_EQ_INT(l->ncells, 2);
    CHECK_EQ_U64(l->cells[0].cell, 1);
    CHECK_EQ_U64(l->cells[0].busy_ns, 400);
    CHECK_EQ_U64(l->cells[1].cell, 2);
    CHECK_EQ_U64(l->cells[1].busy_ns, 20);
    check_accounting(tl);
    strobe_timeline_free(tl);
    strobe_experiment_close(exp);
}

/* A budget nothing fits: the coarsest cells, one per lane and row, with
 * the dominant region, whether there were others, count and busy time. */
STROBE_TEST(frames_tiny_budget)
{
    struct strobe_experiment *exp = synth("tl_tiny");
    struct strobe_timeline *tl = build(exp, 0);
    uint32_t main_ = region_id(exp, "main"), compute = region_id(exp, "compute");
    CHECK_EQ_U64(tl->cell_ns, (uint64_t)1 << 62);
    CHECK_EQ_U64(tl->nbars, 0);
    const struct strobe_timeline_lane *l = &tl->lanes[0];
    CHECK_EQ_INT(l->ncells, 2);
    const struct strobe_timeline_cell *c = &l->cells[0];
    CHECK_EQ_INT(c->row, 0);
    CHECK_EQ_INT(c->key, main_);
    CHECK_EQ_U64(c->count, 1);
    CHECK_EQ_U64(c->busy_ns, 5900);
    CHECK(!c->mixed);
    c = &l->cells[1];
    CHECK_EQ_INT(c->row, 1);
    CHECK_EQ_INT(c->key, compute); /* 400 ns against the odd name's 100 */
    CHECK_EQ_U64(c->count, 3);
    CHECK_EQ_U64(c->busy_ns, 500);
    CHECK_EQ_U64(c->key_ns, 400);
    CHECK(c->mixed);
    l = &tl->lanes[1];
    CHECK_EQ_INT(l->ncells, 1);
    CHECK_EQ_U64(l->cells[0].count, 2);
    CHECK_EQ_U64(l->cells[0].busy_ns, 420);
    CHECK(!l->cells[0].mixed);
    check_accounting(tl);
    strobe_timeline_free(tl);
    strobe_experiment_close(exp);
}

/* TMbox states of the TM fixture: attempt 1 runs 100..150 and aborts
 * (Compute_Wasted), rolls back until the retry at 160 (Abort), commits at
 * 200 (Compute); the second execution commits at once (300..400). */
STROBE_TEST(tm_states_exact)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("tl_tm"));
    CHECK_EQ_INT(make_tm_experiment(dir, "", 1), 0);
    struct strobe_experiment *exp = open_ok(dir);
    struct strobe_timeline *tl = NULL;
    struct strobe_errbuf eb = {""};
    CHECK_EQ_INT(strobe_tm_timeline_build(exp, STROBE_TM_TIMELINE_BUDGET, &tl, &eb), 0);
    CHECK_EQ_U64(tl->cell_ns, 0);
    CHECK_EQ_U64(tl->intervals, 4);
    const struct strobe_timeline_lane *l = &tl->lanes[0];
    CHECK_EQ_INT(l->nbars, 4);
    check_bar(&l->bars[0], 100, 150, 0, STROBE_TM_STATE_WASTED);
    check_bar(&l->bars[1], 150, 160, 0, STROBE_TM_STATE_ABORT);
    check_bar(&l->bars[2], 160, 200, 0, STROBE_TM_STATE_COMPUTE);
    check_bar(&l->bars[3], 300, 400, 0, STROBE_TM_STATE_COMPUTE);
    CHECK_EQ_U64(tl->lanes[1].intervals, 0);
    check_accounting(tl);
    strobe_timeline_free(tl);
    strobe_experiment_close(exp);
    /* without the event log there are no states */
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("tl_tm_counts"));
    CHECK_EQ_INT(make_tm_experiment(dir, "tm: 1\ntm_monitor: counters\n", 0), 0);
    exp = open_ok(dir);
    CHECK_EQ_INT(strobe_tm_timeline_build(exp, STROBE_TM_TIMELINE_BUDGET, &tl, &eb), -ENOENT);
    strobe_experiment_close(exp);
}

/* The demo under `strobe run` (a real run: its threads are summarized,
 * so the reader decodes their streams only when asked). */
static struct strobe_experiment *demo(const char *name)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir(name));
    char *out;
    int rc = strobe_test_sh(&out, "%s/strobe run -o '%s' -- %s/../examples/demo", STROBE_BIN_DIR, dir,
                            STROBE_BIN_DIR);
    if (rc != 0)
        STROBE_FAIL("strobe run demo: exit %d\n%s", rc, out);
    free(out);
    return open_ok(dir);
}

/* A stream cut inside its last record (as a disk full would): the lane
 * keeps the frames that ended before, is marked damaged, and the model
 * names the reader's error; the other lanes are whole. */
STROBE_TEST(damaged_stream_keeps_the_rest)
{
    struct strobe_experiment *exp = demo("tl_damaged");
    struct strobe_timeline *tl = build(exp, STROBE_TIMELINE_BUDGET);
    uint64_t whole[5];
    CHECK_EQ_INT(tl->nlanes, 5);
    for (int t = 0; t < 5; t++)
        whole[t] = tl->lanes[t].intervals;
    strobe_timeline_free(tl);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "truncate -s -3 '%s'/proc-*/t2.evt", dir), 0);
    free(out);
    tl = build(exp, STROBE_TIMELINE_BUDGET);
    CHECK_EQ_INT(tl->ndamaged, 1);
    CHECK(tl->lanes[2].damaged);
    CHECK_CONTAINS(tl->damage.msg, "/t2.evt: offset ");
    /* its frames are all closed before THREAD_END, the record cut */
    for (int t = 0; t < 5; t++) {
        CHECK_EQ_U64(tl->lanes[t].intervals, whole[t]);
        CHECK(tl->lanes[t].damaged == (t == 2));
    }
    check_accounting(tl);
    strobe_timeline_free(tl);
    strobe_experiment_close(exp);
}

/* The demo's 25,189 frames under budgets from exact down to a few KB:
 * never more bytes than the budget, every frame accounted for, and a
 * smaller budget never gives finer cells. */
STROBE_TEST(real_demo_budgets)
{
    struct strobe_experiment *exp = demo("tl_demo");
    uint64_t prev_cell = 0;
    static const size_t budgets[] = {(size_t)1 << 20, 200000, 50000, 20000, 8000, 2000};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        struct strobe_timeline *tl = build(exp, budgets[i]);
        CHECK_EQ_U64(tl->intervals, 25189);
        CHECK(tl->bytes <= budgets[i]);
        CHECK(tl->cell_ns >= prev_cell);
        if (i == 0)
            CHECK_EQ_U64(tl->cell_ns, 0);
        else
            CHECK(tl->cell_ns > 0 && tl->nbars < tl->intervals);
        prev_cell = tl->cell_ns;
        check_accounting(tl);
        strobe_timeline_free(tl);
    }
    strobe_experiment_close(exp);
}

STROBE_TEST_MAIN(STROBE_CASE(frames_exact), STROBE_CASE(frames_tiny_budget),
                 STROBE_CASE(damaged_stream_keeps_the_rest), STROBE_CASE(tm_states_exact),
                 STROBE_CASE(real_demo_budgets))
