/* SPDX-License-Identifier: MIT */
/*
 * The task graph end to end: taskgraph_prog (its comment documents the
 * exact counts) run by `strobe run --taskgraph` (every synchronization
 * call recorded with a ticket), then strobe_taskgraph_build and `strobe taskgraph`.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/decode.h"
#include "analysis/experiment.h"
#include "analysis/taskgraph.h"
#include "common/format.h"
#include "records.h"
#include "test.h"

static char dir[4200];
static char output[4096];

static struct strobe_experiment *run(const char *name, const char *mode)
{
    return strobe_test_run_fixture(dir, sizeof dir, output, sizeof output, name, "--taskgraph",
                                   "taskgraph_prog", mode);
}

static struct strobe_taskgraph *build(const struct strobe_experiment *exp)
{
    struct strobe_taskgraph *g;
    struct strobe_errbuf eb = {""};
    if (strobe_taskgraph_build(exp, NULL, &g, &eb) != 0)
        STROBE_FAIL("task graph: %s", eb.msg);
    return g;
}

/* Counts what the sink sees, and checks the stream's order: every edge
 * leads into the newest task started or earlier, and from a finished one. */
struct counter {
    uint64_t tasks, edges[STROBE_TG_NKINDS];
    uint64_t max_id;
    bool bad_order;
    uint64_t *ended; /* by id: 1 when handed over */
    size_t cap;
};

static int count_task(void *arg, const struct strobe_tg_task *t)
{
    struct counter *c = arg;
    c->tasks++;
    if (t->id >= c->cap || t->end_ns < t->start_ns)
        c->bad_order = true;
    else
        c->ended[t->id] = 1;
    return 0;
}

static int count_edge(void *arg, const struct strobe_tg_edge *e)
{
    struct counter *c = arg;
    c->edges[e->kind]++;
    if (e->from >= c->cap || !c->ended[e->from] || e->from >= e->to)
        c->bad_order = true;
    return 0;
}

static const char *region_of(const struct strobe_experiment *exp, uint32_t r)
{
    return r == STROBE_NONE ? "-" : exp->regions[r].name;
}

STROBE_TEST(graph_exact)
{
    struct strobe_experiment *exp = run("graph_exact", "graph");
    struct counter c = {.cap = 4096};
    c.ended = calloc(c.cap, sizeof *c.ended);
    struct strobe_tg_sink sink = {&c, count_task, count_edge};
    struct strobe_taskgraph *g;
    struct strobe_errbuf eb = {""};
    if (strobe_taskgraph_build(exp, &sink, &g, &eb) != 0)
        STROBE_FAIL("task graph: %s", eb.msg);
    CHECK_EQ_U64(g->nprocesses, 1);
    CHECK(g->processes[0].ticketed);
    CHECK_EQ_U64(g->tasks, 25);
    CHECK_EQ_U64(g->edges[STROBE_TG_PROGRAM], 21);
    CHECK_EQ_U64(g->edges[STROBE_TG_CREATE], 3);
    CHECK_EQ_U64(g->edges[STROBE_TG_JOIN], 3);
    CHECK_EQ_U64(g->edges[STROBE_TG_LOCK], 5);
    CHECK_EQ_U64(g->edges[STROBE_TG_BARRIER], 6);
    CHECK_EQ_U64(g->edges[STROBE_TG_COND], 0);
    /* the sink saw the same, in an order a streaming consumer can use */
    CHECK_EQ_U64(c.tasks, 25);
    for (int k = 0; k < STROBE_TG_NKINDS; k++)
        CHECK_EQ_U64(c.edges[k], g->edges[k]);
    CHECK(!c.bad_order);
    /* one lock row per acquiring path: the workers' 6 acquisitions */
    CHECK_EQ_U64(g->nlocks, 1);
    CHECK_STR_EQ(g->locks[0].name, "lock");
    CHECK_EQ_U64(g->locks[0].acquisitions, 6);
    CHECK_EQ_INT(g->locks[0].depth, 1);
    CHECK_STR_EQ(region_of(exp, g->locks[0].path[0]), "graph_worker");
    /* one barrier episode of 3 threads, all departed */
    CHECK_EQ_U64(g->nepisodes, 1);
    CHECK_STR_EQ(g->episodes[0].name, "bar");
    CHECK_EQ_U64(g->episodes[0].threads, 3);
    CHECK(g->episodes[0].complete);
    /* the critical path starts in main's first task and ends in its last */
    const struct strobe_tg_process *pr = &g->processes[0];
    CHECK(pr->npath >= 3);
    CHECK_EQ_U64(exp->threads[pr->path[0].thread].index, 0);
    CHECK_EQ_U64(exp->threads[pr->path[pr->npath - 1].thread].index, 0);
    CHECK(pr->span_ns <= pr->work_ns);
    CHECK(pr->span_ns > 0);
    uint64_t sum = 0;
    for (size_t i = 0; i < pr->npath; i++)
        sum += pr->path[i].end_ns - pr->path[i].start_ns;
    CHECK_EQ_U64(sum, pr->span_ns);
    strobe_taskgraph_free(g);
    free(c.ended);
    strobe_experiment_close(exp);
}

STROBE_TEST(lock_bottleneck_first_and_critical)
{
    struct strobe_experiment *exp = run("lock_bottleneck", "bottleneck");
    struct strobe_taskgraph *g = build(exp);
    CHECK(g->nlocks >= 2);
    const struct strobe_tg_lock *l = &g->locks[0];
    CHECK_STR_EQ(l->name, "slow_lock");
    CHECK(l->wait_ns >= 100000000ull);
    /* rows are per acquiring path: the waiters' row comes first, and the
     * holder's row (hold_slow) is on the critical path by its 100 ms hold,
     * whichever waiter's critical section comes last */
    bool holder_on_path = false;
    for (size_t i = 1; i < g->nlocks; i++)
        if (g->locks[i].name && strcmp(g->locks[i].name, "slow_lock") == 0 &&
            strcmp(region_of(exp, g->locks[i].path[g->locks[i].depth - 1]), "hold_slow") == 0)
            holder_on_path = g->locks[i].on_path >= 1;
    CHECK(holder_on_path);
    /* its 100 ms critical section is on the path: the slow hold's region */
    const struct strobe_tg_process *pr = &g->processes[0];
    bool found = false;
    for (size_t i = 0; i < pr->npath; i++)
        if (strcmp(region_of(exp, pr->path[i].region), "hold_slow") == 0 &&
            pr->path[i].end_ns - pr->path[i].start_ns >= 100000000ull)
            found = true;
    CHECK(found);
    CHECK(pr->span_ns >= 100000000ull);
    strobe_taskgraph_free(g);
    strobe_experiment_close(exp);
}

STROBE_TEST(sigkill_still_builds)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("sigkill"));
    char *out;
    int rc = strobe_test_sh(&out, "%s/strobe run --taskgraph -o '%s' -- %s/taskgraph_prog kill",
                            STROBE_BIN_DIR, dir, STROBE_TEST_BIN_DIR);
    CHECK_EQ_INT(rc, 128 + 9);
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    struct strobe_taskgraph *g = build(exp);
    /* the workers' whole graph: 3 x 6 tasks, and main's up to the kill */
    CHECK(g->tasks >= 18 + 4);
    CHECK_EQ_U64(g->edges[STROBE_TG_CREATE], 3);
    CHECK_EQ_U64(g->edges[STROBE_TG_JOIN], 0);
    CHECK_EQ_U64(g->edges[STROBE_TG_LOCK], 5);
    CHECK_EQ_U64(g->edges[STROBE_TG_BARRIER], 6);
    CHECK_EQ_U64(g->nepisodes, 1);
    CHECK(g->episodes[0].complete);
    strobe_taskgraph_free(g);
    strobe_experiment_close(exp);
}

STROBE_TEST(cli_formats)
{
    struct strobe_experiment *exp = run("cli_formats", "graph");
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe taskgraph '%s'", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(out, "25 tasks; edges: program 21 create 3 join 3 lock 5 barrier 6 cond 0");
    CHECK_CONTAINS(out, "Critical path: ");
    CHECK_CONTAINS(out, "graph_worker");
    free(out);
    /* JSON: valid, the tasks and edges of the graph */
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "%s/strobe taskgraph '%s' --format json -o '%s/g.json' && python3 -c \"import "
                       "json; d = json.load(open('%s/g.json')); print(len(d['tasks']), len(d['edges']), "
                       "d['taskgraph']['edges']['barrier'])\"",
                       STROBE_BIN_DIR, dir, dir, dir),
        0);
    CHECK_STR_EQ(out, "25 38 6\n");
    free(out);
    CHECK_EQ_INT(
        strobe_test_sh(&out, "%s/strobe taskgraph '%s' --format dot | grep -c -- '->'", STROBE_BIN_DIR, dir),
        0);
    CHECK_STR_EQ(out, "38\n");
    free(out);
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "%s/strobe report '%s' --taskgraph --format json | python3 -c \"import json, sys; "
                       "print(json.load(sys.stdin)['taskgraph']['tasks'])\"",
                       STROBE_BIN_DIR, dir),
        0);
    CHECK_STR_EQ(out, "25\n");
    free(out);
}

/* The task of thread t<index>: its only one (fails unless exactly one). */
static const struct strobe_tg_task *only_task(const struct strobe_experiment *exp,
                                              const struct strobe_tg_task *tasks, size_t n, uint32_t index)
{
    const struct strobe_tg_task *found = NULL;
    for (size_t i = 0; i < n; i++)
        if (exp->threads[tasks[i].thread].index == index) {
            if (found)
                STROBE_FAIL("t%u has more than one task", index);
            found = &tasks[i];
        }
    if (!found)
        STROBE_FAIL("t%u has no task", index);
    return found;
}

struct task_list {
    struct strobe_tg_task t[64];
    size_t n;
};

static int keep_task(void *arg, const struct strobe_tg_task *t)
{
    struct task_list *l = arg;
    if (l->n < 64)
        l->t[l->n++] = *t;
    return 0;
}

/* tests/analysis/bb_prog.c threads 3 200: thread k runs kernel(200 k)
 * without synchronizing, one task each: 200 k segments of block 1 (3
 * loads, 1 store), ceil(200 k / 16) of block 2 (1 store), one of block 3. */
STROBE_TEST(block_counts_exact)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("block_counts"));
    char *out;
    int rc = strobe_test_sh(&out, "%s/strobe run -o '%s' -- %s threads 3 200", STROBE_BIN_DIR, dir,
                            STROBE_BB_PROG);
    if (rc != 0)
        STROBE_FAIL("bb_prog: exit %d\n%s", rc, out);
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    struct task_list l = {.n = 0};
    struct strobe_tg_sink sink = {.arg = &l, .task = keep_task};
    struct strobe_taskgraph *g;
    struct strobe_errbuf eb = {""};
    if (strobe_taskgraph_build(exp, &sink, &g, &eb) != 0)
        STROBE_FAIL("task graph: %s", eb.msg);
    CHECK(g->processes[0].ticketed); /* the registration turned task-graph recording on */
    CHECK(g->processes[0].blocks);
    static const uint64_t want[4][3] = {{0}, {214, 600, 213}, {426, 1200, 425}, {639, 1800, 638}};
    for (uint32_t k = 1; k <= 3; k++) {
        const struct strobe_tg_task *t = only_task(exp, l.t, l.n, k);
        CHECK_EQ_U64(t->blocks, want[k][0]);
        CHECK_EQ_U64(t->reads, want[k][1]);
        CHECK_EQ_U64(t->writes, want[k][2]);
        CHECK_EQ_U64(t->read_bytes, 20 * 200 * k); /* a[i], a[i + 1]: 8 bytes; g_counter: 4 */
    }
    CHECK_EQ_U64(g->processes[0].block_count, 214 + 426 + 639);
    strobe_taskgraph_free(g);
    strobe_experiment_close(exp);
}

/* share_prog MODE built with strobe cc --trace=bb,mem, run by strobe run. */
static struct strobe_taskgraph *share_run(const char *name, const char *mode, struct strobe_experiment **exp)
{
    const char *tmp = strobe_test_tmpdir(name);
    snprintf(dir, sizeof dir, "%s/exp", tmp);
    char *out;
    int rc = strobe_test_sh(
        &out,
        "cd '%s' && %s/strobe cc --trace=bb,mem -O0 -g %s/tests/taskgraph/share_prog.c -o share "
        "-pthread && %s/strobe run -o exp -- ./share %s",
        tmp, STROBE_BIN_DIR, STROBE_SOURCE_DIR, STROBE_BIN_DIR, mode);
    if (rc != 0)
        STROBE_FAIL("share_prog %s: exit %d\n%s", mode, rc, out);
    free(out);
    *exp = strobe_test_open_experiment(dir);
    return build(*exp);
}

STROBE_TEST(sharing_producer_consumer)
{
    struct strobe_experiment *exp;
    struct strobe_taskgraph *g = share_run("sharing", "produce", &exp);
    CHECK(g->has_blocks);
    CHECK_EQ_U64(g->nshares, 1);
    CHECK_EQ_U64(exp->threads[g->shares[0].writer].index, 1);
    CHECK_EQ_U64(exp->threads[g->shares[0].reader].index, 0);
    CHECK_EQ_U64(g->shares[0].bytes, 8000);
    CHECK_EQ_U64(g->nfalse_shares, 0);
    strobe_taskgraph_free(g);
    strobe_experiment_close(exp);
}

STROBE_TEST(false_sharing_flagged)
{
    struct strobe_experiment *exp;
    struct strobe_taskgraph *g = share_run("false_sharing", "false", &exp);
    CHECK(g->nfalse_shares >= 1);
    const struct strobe_tg_false_share *f = &g->false_shares[0];
    CHECK(f->conflicts >= 1);
    CHECK_EQ_U64(f->address[1] - f->address[0] == 8 || f->address[0] - f->address[1] == 8, 1);
    unsigned a = strobe_test_line_of("tests/taskgraph/share_prog.c", "/* INCREMENT_A */"),
             b = strobe_test_line_of("tests/taskgraph/share_prog.c", "/* INCREMENT_B */");
    /* t1 increments a, t2 b */
    CHECK_EQ_U64(f->source_line[exp->threads[f->thread[0]].index == 1 ? 0 : 1], a);
    CHECK_EQ_U64(f->source_line[exp->threads[f->thread[0]].index == 1 ? 1 : 0], b);
    CHECK(strstr(f->file[0], "share_prog.c") && strstr(f->file[1], "share_prog.c"));
    strobe_taskgraph_free(g);
    strobe_experiment_close(exp);
}

/* SYNC records of op `op` over all threads of EXP. */
struct sync_count {
    uint64_t op, n;
};

static void count_sync(const struct strobe__raw_event *ev, void *arg)
{
    struct sync_count *c = arg;
    c->n += ev->kind == STROBE__RAW_SYNC && ev->id == c->op &&
            (c->op != STROBE_SYNC_COND_WAIT || !ev->sync_args[4]);
}

static uint64_t sync_records(const struct strobe_experiment *exp, uint64_t op)
{
    struct sync_count c = {op, 0};
    for (size_t t = 0; t < exp->nthreads; t++)
        strobe_test_each_record(exp->threads[t].stream_path, count_sync, &c);
    return c.n;
}

/* tests/analysis/locks_prog cond: a producer hands 20000 numbers to a
 * consumer through queue_cond. Every wait that was woken (not timed out)
 * has a cond edge from the last signal before it, and a lock edge from
 * the last release of queue_lock (its reacquisition). */
STROBE_TEST(cond_edges)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("cond_edges"));
    char *out;
    int rc = strobe_test_sh(&out, "%s/strobe run --taskgraph -o '%s' -- %s cond", STROBE_BIN_DIR, dir,
                            STROBE_LOCKS_PROG);
    if (rc != 0)
        STROBE_FAIL("locks_prog cond: exit %d\n%s", rc, out);
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    struct strobe_taskgraph *g = build(exp);
    uint64_t waits = sync_records(exp, STROBE_SYNC_COND_WAIT);
    CHECK(waits > 0);
    CHECK_EQ_U64(g->edges[STROBE_TG_COND], waits);
    /* every acquisition but the first of each lock, and every reacquisition */
    uint64_t acquisitions = sync_records(exp, STROBE_SYNC_ACQUIRE_MUTEX);
    CHECK(g->edges[STROBE_TG_LOCK] >= acquisitions + waits - 2);
    CHECK(g->edges[STROBE_TG_LOCK] <= acquisitions + waits);
    strobe_taskgraph_free(g);
    strobe_experiment_close(exp);
}

/* The edges between threads as Chrome flows: 17 ("s" + "f" each). */
STROBE_TEST(chrome_flows)
{
    struct strobe_experiment *exp = run("chrome_flows", "graph");
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "%s/strobe export '%s' --format chrome -o '%s/t.json' && python3 -c \"import json; "
                       "ev = [e for e in json.load(open('%s/t.json'))['traceEvents'] if e.get('cat') == "
                       "'taskgraph']; print(len(ev), sorted(set(e['name'] for e in ev)))\"",
                       STROBE_BIN_DIR, dir, dir, dir),
        0);
    CHECK_STR_EQ(out, "34 ['barrier', 'create', 'join', 'lock']\n");
    free(out);
}

/* The same 17 edges as Perfetto flows (check_perfetto_flows.py decodes the
 * trace with protoc): each id starts at one instant and ends at one. */
STROBE_TEST(perfetto_flows)
{
    struct strobe_experiment *exp = run("perfetto_flows", "graph");
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "%s/strobe export '%s' --format perfetto -o '%s/t.pftrace' && python3 "
                                "%s/tests/taskgraph/check_perfetto_flows.py %s '%s/t.pftrace'",
                                STROBE_BIN_DIR, dir, dir, STROBE_SOURCE_DIR, STROBE_SOURCE_DIR, dir),
                 0);
    CHECK_STR_EQ(out, "17 flows; paired ['barrier', 'create', 'join', 'lock']\n");
    free(out);
}

/* The HTML report's view (src/report/html/taskgraph.js), seen in headless
 * Chromium by tests/report/check_views.py: the bottleneck lock first. */
STROBE_TEST(html_view)
{
    struct strobe_experiment *exp = run("html_view", "bottleneck");
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "%s/strobe report '%s' --format html -o '%s/page.html' && cd '%s' && python3 "
                                "%s/tests/report/check_views.py page.html",
                                STROBE_BIN_DIR, dir, dir, dir, STROBE_SOURCE_DIR),
                 0);
    CHECK_CONTAINS(out,
                   "view taskgraph\ntable taskgraph-regions-0: region (at the task's start)=hold_slow | ");
    CHECK_CONTAINS(out,
                   "table taskgraph-locks: object=slow_lock | kind=mutex | call path=bottleneck_worker > "
                   "wait_slow | ");
    free(out);
}

STROBE_TEST(cli_errors)
{
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe taskgraph /nonexistent --format svg", STROBE_BIN_DIR), 2);
    CHECK_CONTAINS(out, "strobe: taskgraph: --format: unknown format 'svg' (text, json or dot)");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe taskgraph", STROBE_BIN_DIR), 2);
    CHECK_CONTAINS(out, "missing experiment directory");
    free(out);
    const char *tmp = strobe_test_tmpdir("cli_errors");
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe taskgraph '%s/none'", STROBE_BIN_DIR, tmp), 1);
    CHECK_CONTAINS(out, "strobe: taskgraph: ");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report /nonexistent --taskgraph --score", STROBE_BIN_DIR),
                 2);
    CHECK_CONTAINS(out, "'--score' and '--taskgraph' exclude each other");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(graph_exact), STROBE_CASE(lock_bottleneck_first_and_critical),
                 STROBE_CASE(sigkill_still_builds), STROBE_CASE(cli_formats), STROBE_CASE(chrome_flows),
                 STROBE_CASE(perfetto_flows), STROBE_CASE(html_view), STROBE_CASE(block_counts_exact),
                 STROBE_CASE(sharing_producer_consumer), STROBE_CASE(false_sharing_flagged),
                 STROBE_CASE(cond_edges), STROBE_CASE(cli_errors))
