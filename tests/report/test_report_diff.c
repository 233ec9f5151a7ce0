/* SPDX-License-Identifier: MIT */
/*
 * `strobe report --diff` end to end: diff_prog (fixed call paths, visit
 * counts set by its arguments) run under `strobe run` with different
 * arguments, then compared: the exact visit changes per call path in text
 * and JSON, the paths of one run only, the regression gate's exit code 3
 * and its lines (0 under the threshold or the noise floor), repeated runs
 * flagged only beyond their spread, the errors, and the differential
 * flame graph in headless Chromium.
 */
#include <stdlib.h>
#include <string.h>

#include "report/diff.h"
#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"
#define CHECKER STROBE_SOURCE_DIR "/tests/report/html_check.py"

/* Records `diff_prog ARGS` into TMP/NAME. */
static void record(const char *tmp, const char *name, const char *args)
{
    char *out;
    int rc =
        strobe_test_sh(&out, "cd '%s' && %s run -o %s -- %s %s", tmp, STROBE, name, STROBE_DIFF_PROG, args);
    if (rc != 0)
        STROBE_FAIL("strobe run %s: exit %d\n%s", args, rc, out);
    free(out);
}

/* A: alpha 10, beta 5, only_a; B: alpha 15, beta 5, only_b. */
static const char *two_runs(const char *name, const char *sleep_a, const char *sleep_b)
{
    const char *tmp = strobe_test_tmpdir(name);
    char args[64];
    snprintf(args, sizeof args, "10 5 %s a", sleep_a);
    record(tmp, "A", args);
    snprintf(args, sizeof args, "15 5 %s b", sleep_b);
    record(tmp, "B", args);
    return tmp;
}

STROBE_TEST(exact_visits)
{
    const char *tmp = two_runs("diff_visits", "1", "1");
    char *out = strobe_test_ok_in(tmp, STROBE " report --diff A B --top 0 2>/dev/null");
    CHECK_CONTAINS(out, "A: A\nB: B\n");
    CHECK_CONTAINS(out, "call paths: 8 (6 in both, 1 only in A, 1 only in B), by change of inclusive time\n");
    /* visits A, B and their change (9 columns each), then the path */
    CHECK_CONTAINS(out, "        10        15        +5  main > alpha\n");
    CHECK_CONTAINS(out, "        20        30       +10  main > alpha > leaf\n");
    CHECK_CONTAINS(out, "         5         5         0  main > beta\n");
    CHECK_CONTAINS(out, "         5         5         0  main > beta > leaf\n");
    CHECK_CONTAINS(out, "         1         1         0  main\n");
    CHECK_CONTAINS(out, "         1         0        -1  main > only_a [only in A]\n");
    CHECK_CONTAINS(out, "         0         1        +1  main > only_b [only in B]\n");
    CHECK(strstr(out, "gate") == NULL);
    free(out);
    /* --sort visits: the largest change of visits first */
    out = strobe_test_ok_in(tmp, STROBE " report --diff A B --sort visits --top 2 2>/dev/null");
    CHECK_CONTAINS(out, "by change of visits\n");
    CHECK_CONTAINS(out, "+10  main > alpha > leaf\n");
    CHECK_CONTAINS(out, "+5  main > alpha\n  ... 6 more call paths (--top 0 shows all)\n");
    free(out);
    /* JSON: every path with both sides' visits and the change */
    out = strobe_test_ok_in(
        tmp, STROBE " report --diff A B --format json 2>/dev/null | python3 -c \"import json,sys; "
                    "d=json.load(sys.stdin); "
                    "assert d['schema']=='strobe-diff' and d['version']==1 and d['a']['runs']==['A']; "
                    "n={p['id']: p for p in d['paths']}; "
                    "path=lambda p: (path(n[p['parent']]) + ' > ' if p['parent'] else '') + p['name']; "
                    "[print(path(p), p['in'], p['a']['visits'], p['b']['visits'], p['delta']['visits'], "
                    "p['rel_pct']['visits']) for p in sorted(d['paths'], key=path)]\"");
    CHECK_STR_EQ(out, "main both 1 1 0 0\n"
                      "main > alpha both 10 15 5 50\n"
                      "main > alpha > leaf both 20 30 10 50\n"
                      "main > beta both 5 5 0 0\n"
                      "main > beta > leaf both 5 5 0 0\n"
                      "main > only_a a 1 0 -1 -100\n"
                      "main > only_b b 0 1 1 None\n"
                      "main > slow both 1 1 0 0\n");
    free(out);
}

STROBE_TEST(gate)
{
    /* slow() sleeps 5 ms in A, 60 ms in B: main and main > slow grew */
    const char *tmp = two_runs("diff_gate", "5", "60");
    char *out;
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && %s report --diff A B --fail-above 50 2>&1 >stdout.txt; cat stdout.txt", tmp, STROBE);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s", cmd), 0); /* cat's status */
    CHECK_CONTAINS(
        out, "strobe: report: gate failed: 2 call paths grew more than 50% (inclusive time from 1.000 ms)\n");
    /* main and main > slow, by impact: which comes first depends on main's own time */
    CHECK_CONTAINS(out, "\ngate (--fail-above 50%, --min-time 1.000 ms): 2 call paths failed\n  FAILED main");
    CHECK_CONTAINS(out, "\n  FAILED main: inclusive time ");
    CHECK_CONTAINS(out, "\n  FAILED main > slow: inclusive time ");
    CHECK_CONTAINS(out, "  main > slow [FAILED]\n");
    free(out);
    CHECK_EQ_INT(
        strobe_test_sh(&out, "cd '%s' && %s report --diff A B --fail-above 50%% >/dev/null", tmp, STROBE), 3);
    free(out);
    /* the failed paths in JSON, by id */
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "cd '%s' && %s report --diff A B --fail-above 50 --format json 2>/dev/null | "
                       "python3 -c \"import json,sys; d=json.load(sys.stdin); n={p['id']: p['name'] for p in "
                       "d['paths']}; print(d['gate']['fail_above_pct'], d['gate']['min_time_ns'], "
                       "sorted(n[i] for i in d['gate']['failed']))\"",
                       tmp, STROBE),
        0);
    CHECK_STR_EQ(out, "50 1000000 ['main', 'slow']\n");
    free(out);
    /* under the threshold, or every path under the noise floor: passed */
    out = strobe_test_ok_in(tmp, STROBE " report --diff A B --fail-above 5000 2>&1");
    CHECK_CONTAINS(out, "\ngate (--fail-above 5000%, --min-time 1.000 ms): passed\n");
    free(out);
    out = strobe_test_ok_in(tmp, STROBE " report --diff A B --fail-above 50 --min-time 1s 2>&1");
    CHECK_CONTAINS(out, "\ngate (--fail-above 50%, --min-time 1.000 s): passed\n");
    free(out);
    /* a noise floor of 0: alpha's visits grew too, but its time may not;
     * only_b is new in B, grown from nothing */
    CHECK_EQ_INT(
        strobe_test_sh(&out, "cd '%s' && %s report --diff A B --fail-above 50 --min-time 0", tmp, STROBE), 3);
    CHECK_CONTAINS(out, "\n  FAILED main > only_b: inclusive time 0 ns -> ");
    CHECK_CONTAINS(out, " (new)\n");
    free(out);
}

/* Repeated runs: A sleeps 20, 40, 60 ms; B 30, 50, 70 ms grew on average
 * but within the spread; C 150, 160, 170 ms beyond it. */
STROBE_TEST(repeated_runs)
{
    const char *tmp = strobe_test_tmpdir("diff_repeated");
    static const char *const runs[][2] = {{"A1", "20"},  {"A2", "40"},  {"A3", "60"},
                                          {"B1", "30"},  {"B2", "50"},  {"B3", "70"},
                                          {"C1", "150"}, {"C2", "160"}, {"C3", "170"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char args[64];
        snprintf(args, sizeof args, "10 %c %s", runs[i][0][0] == 'A' ? '5' : '6', runs[i][1]);
        record(tmp, runs[i][0], args);
    }
    char *out =
        strobe_test_ok_in(tmp, STROBE " report --diff A1,A2,A3 B1,B2,B3 --fail-above 10 --top 0 2>&1");
    CHECK_CONTAINS(out, "A: A1, A2, A3 (3 runs: means, with the range of inclusive time)\n");
    CHECK_CONTAINS(out, "B: B1, B2, B3 (3 runs: means, with the range of inclusive time)\n");
    CHECK_CONTAINS(out, "  main > slow [within spread]\n");
    CHECK_CONTAINS(out, "  main [within spread]\n");
    CHECK_CONTAINS(out, "\ngate (--fail-above 10%, --min-time 1.000 ms): passed\n");
    free(out);
    CHECK_EQ_INT(
        strobe_test_sh(&out, "cd '%s' && %s report --diff A1,A2,A3 C1,C2,C3 --fail-above 10", tmp, STROBE),
        3);
    CHECK_CONTAINS(out, "\n  FAILED main > slow: inclusive time ");
    CHECK(strstr(out, "main > slow [within spread]") == NULL);
    free(out);
    /* min and max per side in JSON */
    CHECK_EQ_INT(strobe_test_sh(
                     &out,
                     "cd '%s' && %s report --diff A1,A2,A3 B1,B2,B3 --format json 2>/dev/null | python3 -c "
                     "\"import json,sys; d=json.load(sys.stdin); p=[p for p in d['paths'] if p['name']=="
                     "'slow'][0]; a=p['a']; print(a['min']['incl_ns'] >= 20e6, a['max']['incl_ns'] >= 60e6, "
                     "a['min']['incl_ns'] <= a['incl_ns'] <= a['max']['incl_ns'], p['beyond_spread'], "
                     "[(q['a']['visits'], q['b']['visits']) for q in d['paths'] if q['name']=='beta'])\"",
                     tmp, STROBE),
                 0);
    CHECK_STR_EQ(out, "True True True False [(5, 6)]\n");
    free(out);
}

STROBE_TEST(bad_input)
{
    const char *tmp = two_runs("diff_bad", "1", "1");
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && %s report --diff A missing", tmp, STROBE), 1);
    CHECK_STR_EQ(out, "strobe: report: missing: No such file or directory\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && mkdir empty && %s report --diff empty B", tmp, STROBE), 1);
    CHECK_STR_EQ(
        out, "strobe: report: empty: no proc-* directory: not a strobe experiment or nothing was measured\n");
    free(out);
    /* a damaged profile file (the trace is gone, so it is the only source) */
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "cd '%s' && cp -r B bad && rm bad/proc-*/t0.evt && truncate -s -3 bad/proc-*/t0.prof "
                       "&& %s report --diff A bad 2>&1 | grep -v '^strobe: experiment'",
                       tmp, STROBE),
        0);
    CHECK_CONTAINS(out, "strobe: report: bad: proc-");
    CHECK_CONTAINS(out, "/t0.prof: ");
    CHECK(strchr(out, '\n') == out + strlen(out) - 1);
    free(out);
    /* options: exit 2 (1 for --tm: the data is missing), one line */
    static const struct {
        const char *args;
        int status;
        const char *line;
    } cases[] = {
        {"--diff A", 2, "--diff needs two experiments: A B (or A1,A2,... B1,B2,...)"},
        {"--diff A, B", 2, "--diff: 'A,' has an empty directory name"},
        {"--diff A B --fail-above ten", 2, "--fail-above: 'ten' is not a percentage (10 or 10%)"},
        {"--diff A B --fail-above 5 --min-time soon", 2, "--min-time: 'soon' is not a duration"},
        {"A --fail-above 5", 2, "'--fail-above' and '--min-time' need --diff"},
        {"--diff A B --threads", 2, "'--diff' and '--threads' exclude each other"},
        {"--diff A B --tm", 1, "strobe: report: A: --tm: no transactional-memory statistics"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && %s report %s", tmp, STROBE, cases[i].args),
                     cases[i].status);
        CHECK_CONTAINS(out, cases[i].line);
        CHECK(strchr(out, '\n') == out + strlen(out) - 1);
        free(out);
    }
}

STROBE_TEST(html_flame)
{
    const char *tmp = two_runs("diff_html", "5", "60");
    char *out = strobe_test_ok_in(tmp, STROBE " report --diff A B --format html -o d.html 2>&1");
    free(out);
    char cmd[8192];
    snprintf(
        cmd, sizeof cmd,
        "python3 " CHECKER " d.html --eval \"(() => { const e = document.getElementById('view-diff'); "
        "return [e.dataset.frames, document.querySelectorAll('#diff-legend .diff-swatch').length, "
        "e.querySelector('canvas').dataset.boxes > 2]; })()\" "
        "--expect 'diff-paths:main > alpha:visits A=10' --expect 'diff-paths:main > alpha:visits B=15' "
        "--expect 'diff-paths:main > alpha > leaf:Δ visits=10' "
        "--expect 'diff-paths:main > only_a:change=shrunk' --expect 'diff-paths:main > only_a:Δ %%=only in "
        "A' "
        "--expect 'diff-paths:main > only_b:change=grown' --expect 'diff-paths:main > only_b:Δ %%=only in B' "
        "--expect 'diff-paths:main > slow:change=grown'");
    out = strobe_test_ok_in(tmp, cmd);
    CHECK_CONTAINS(out, "\"errors\": []");
    CHECK_CONTAINS(out, "\"evals\": [\n  [\n   \"8\",\n   7,\n   true\n  ]\n ]");
    free(out);
}

/* Samples: compared when both sides sampled (their counts vary: only
 * the columns and members are checked), not when one did not. */
STROBE_TEST(samples)
{
    const char *tmp = strobe_test_tmpdir("diff_samples");
    char *out = strobe_test_ok_in(tmp, STROBE " run --sample -o A -- " STROBE_DIFF_PROG " 10 5 1 && " STROBE
                                              " run --sample -o B -- " STROBE_DIFF_PROG " 15 5 1 && " STROBE
                                              " run -o C -- " STROBE_DIFF_PROG " 15 5 1 && " STROBE
                                              " report --diff A B 2>/dev/null");
    CHECK_CONTAINS(out, "  visits A  visits B  Δ visits  samples A  samples B  path\n");
    free(out);
    out = strobe_test_ok_in(tmp, STROBE
                            " report --diff A B --format json 2>/dev/null | python3 -c \"import json,sys; "
                            "d=json.load(sys.stdin); p=d['paths'][0]; print(d['a']['samples'], "
                            "d['b']['samples'], 'samples' in p['a'], 'samples' in p['delta'])\"");
    CHECK_STR_EQ(out, "True True True True\n");
    free(out);
    out = strobe_test_ok_in(tmp, STROBE " report --diff A C 2>/dev/null");
    CHECK(strstr(out, "samples A") == NULL);
    CHECK_CONTAINS(out, "\nsamples: only A has them; not compared\n");
    free(out);
    int rc = strobe_test_sh(&out, "cd '%s' && %s report --diff A C --samples", tmp, STROBE);
    CHECK_EQ_INT(rc, 1);
    CHECK_CONTAINS(
        out, "strobe: report: C: --samples: the run did not sample (record with `strobe run --sample`)\n");
    free(out);
}

/* TM statistics end to end: tests/cli's tm_workload commits 100
 * transactions in one atomic block per run. */
STROBE_TEST(tm_blocks)
{
    const char *tmp = strobe_test_tmpdir("diff_tm");
    char *out = strobe_test_ok_in(tmp, STROBE " run --tm -o A -- " STROBE_TM_PROG " && " STROBE
                                              " run --tm -o B -- " STROBE_TM_PROG " && " STROBE
                                              " report --diff A B --tm 2>/dev/null");
    CHECK_CONTAINS(out, "\ntransactional memory per atomic block\n");
    CHECK_CONTAINS(out, "         100         100           0     0.0%  atomic@main transactions\n");
    CHECK_CONTAINS(out, "         100         100           0     0.0%  atomic@main commits\n");
    free(out);
}

/* The sections of named items on a model built in memory: a metric of a
 * path, a TM block and an MPI function, one run per side. */
STROBE_TEST(render_items)
{
    struct strobe_diff_node nodes[2] = {
        {.parent = STROBE_NONE, .name = "", .file = "", .in = {true, true}},
        {.parent = 0, .depth = 1, .name = "main", .file = "m.c", .in = {true, true}}};
    nodes[1].v[0][STROBE_DIFF_INCL] = (struct strobe_diff_spread){2000, 2000, 2000};
    nodes[1].v[1][STROBE_DIFF_INCL] = (struct strobe_diff_spread){3000, 3000, 3000};
    double metric[4] = {2, 2, 10, 15}, tm[2 * STROBE_DIFF_TM_FIELDS] = {0}, mpi[4] = {4, 5, 1000, 1500};
    double totals[2 * STROBE_DIFF_MPI_NTOTALS] = {1000, 1500, 4, 5, 4, 5, 64, 80};
    tm[0] = 10, tm[1] = 12;           /* transactions */
    tm[2] = 9, tm[3] = 12;            /* commits */
    tm[2 * 4] = 3, tm[2 * 4 + 1] = 0; /* aborts write_conflict */
    struct strobe_diff_item m = {"bytes", 1, metric}, t = {"transfer", STROBE_NONE, tm},
                            p = {"MPI_Send", STROBE_NONE, mpi};
    struct strobe_diff d = {.nruns = {1, 1},
                            .nruns_all = 2,
                            .nodes = nodes,
                            .nnodes = 2,
                            .tm = {true, true},
                            .mpi = {true, true},
                            .samples = {true, false},
                            .metrics = &m,
                            .nmetrics = 1,
                            .tm_blocks = &t,
                            .ntm_blocks = 1,
                            .mpi_funcs = &p,
                            .nmpi_funcs = 1,
                            .mpi_totals = totals};
    const char *a[] = {"A"}, *b[] = {"B"};
    struct strobe_diff_report_opts o = {.dirs = {a, b}, .sort = 1, .top = 20};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK_EQ_INT(strobe_report_diff_text(f, &d, &o), 0);
    fclose(f);
    CHECK_CONTAINS(text, "\nsamples: only A has them; not compared\n");
    CHECK_CONTAINS(text, "\nuser metrics per call path\n");
    CHECK_CONTAINS(text, "           2           2           0     0.0%  main: bytes count\n");
    CHECK_CONTAINS(text, "          10          15          +5   +50.0%  main: bytes sum\n");
    CHECK_CONTAINS(text, "\ntransactional memory per atomic block\n");
    CHECK_CONTAINS(text, "          10          12          +2   +20.0%  transfer transactions\n");
    CHECK_CONTAINS(text, "           9          12          +3   +33.3%  transfer commits\n");
    CHECK_CONTAINS(text, "           3           0          -3  -100.0%  transfer aborts write_conflict\n");
    CHECK(strstr(text, "rollbacks") == NULL); /* 0 on both sides */
    CHECK_CONTAINS(text, "    1.000 µs    1.500 µs     +500 ns   +50.0%  all ranks: time in MPI\n");
    CHECK_CONTAINS(text, "          64          80         +16   +25.0%  all ranks: message bytes\n");
    CHECK_CONTAINS(text, "           4           5          +1   +25.0%  MPI_Send calls\n");
    free(text);
    f = open_memstream(&text, &len);
    CHECK_EQ_INT(strobe_report_diff_json(f, &d, &o), 0);
    fclose(f);
    CHECK_CONTAINS(
        text,
        "{\"name\": \"bytes\", \"path\": 1, \"a\": {\"count\": 2, \"sum\": 10}, \"b\": {\"count\": 2, "
        "\"sum\": 15}, \"delta\": {\"count\": 0, \"sum\": 5}, \"rel_pct\": {\"count\": 0, \"sum\": 50}}");
    CHECK_CONTAINS(
        text, "\"a\": {\"transactions\": 10, \"commits\": 9, \"rollbacks\": 0, \"aborts_read_conflict\": 0, "
              "\"aborts_write_conflict\": 3,");
    CHECK_CONTAINS(text,
                   "\"functions\": [\n      {\"name\": \"MPI_Send\", \"a\": {\"calls\": 4, \"ns\": 1000}");
    CHECK_CONTAINS(
        text,
        "\"totals\": [\n      {\"name\": \"all\", \"a\": {\"mpi_ns\": 1000, \"calls\": 4, \"messages\": 4, "
        "\"bytes\": 64}");
    free(text);
}

STROBE_TEST_MAIN(STROBE_CASE(render_items), STROBE_CASE(tm_blocks), STROBE_CASE(samples),
                 STROBE_CASE(exact_visits), STROBE_CASE(gate), STROBE_CASE(repeated_runs),
                 STROBE_CASE(bad_input), STROBE_CASE(html_flame))
