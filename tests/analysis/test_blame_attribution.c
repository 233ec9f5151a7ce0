/* SPDX-License-Identifier: MIT */
/*
 * Data-centric blame end to end (src/analysis/blame.c, src/report/blame.c):
 * programs built with -g get a hand-written blame unit attached with
 * objcopy (what `strobe cc` will emit, docs/formats/blame-table.md), run
 * under `strobe run`, then `strobe report --blame` of a sample list
 * (docs/blame.md, "Replaying a sample list") with exact shares, and of a
 * real sampled run (every sample charged or in a named unknown reason).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* Writes UNIT ('|' for TAB, %s for the path of SRC, relative to the source
 * tree) to DIR/unit.txt
 * and makes DIR/NAME: the test program PROG with the unit attached. */
static void attach(const char *dir, const char *prog, const char *src, const char *name, const char *unit)
{
    char path[4400], source[4400];
    snprintf(path, sizeof path, "%s/unit.txt", dir);
    snprintf(source, sizeof source, "%s/%s", STROBE_SOURCE_DIR, src);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    for (const char *c = unit; *c; c++) {
        if (c[0] == '%' && c[1] == 's')
            fputs(source, f), c++;
        else
            fputc(*c == '|' ? '\t' : *c, f);
    }
    CHECK(fclose(f) == 0);
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "cp '%s/%s' %s && objcopy --add-section .strobe_blame=unit.txt "
             "--set-section-flags .strobe_blame=contents,readonly %s",
             STROBE_TEST_BIN_DIR, prog, name, name);
    free(strobe_test_ok_in(dir, cmd));
}

/* `strobe run -o DIR/e -- DIR/NAME ARGS` */
static void run(const char *dir, const char *options, const char *name, const char *args)
{
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "%s/strobe run %s -o e -- ./%s %s", STROBE_BIN_DIR, options, name, args);
    free(strobe_test_ok_in(dir, cmd));
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* Whether this build has strobe cc's pass plugin, which runs the analysis;
 * the cases that need it are skipped without. */
static bool have_plugin(void)
{
    if (strobe_test_sh(NULL, "test -e %s/strobe/libstrobe-cc.so", STROBE_LIB_DIR) == 0)
        return true;
    printf("skipped: strobe was built without the pass plugin (LLVM 14)\n");
    return false;
}

/* The paper's Table I by line (spec: a {16,18,19}, b {17}, c {16..20},
 * return {16..21}); main's call of fig1 passes fig1's return to main's. */
static const char fig1_unit[] = "strobe-blame|1|0\n"
                                "file|0|%s\n"
                                "func|0|fig1|0|14\n"
                                "func|1|main|0|23\n"
                                "var|0|0|local|-|-|a|int|0|15\n"
                                "var|1|0|local|-|-|b|int|0|15\n"
                                "var|2|0|local|-|-|c|int|0|15\n"
                                "var|3|0|return|ret|-|return|int|0|14\n"
                                "var|4|1|return|ret|-|return|int|0|23\n"
                                "loc|0|16|0|0,2,3\n"
                                "loc|0|17|0|1,2,3\n"
                                "loc|0|18|0|0,2,3\n"
                                "loc|0|19|0|0,2,3\n"
                                "loc|0|20|0|2,3\n"
                                "loc|0|21|0|3\n"
                                "loc|0|23|0|4\n"
                                "call|0|23|0|1|fig1|call\n"
                                "bind|ret|4\n"
                                "end\n";

static const char fig1_list[] = "# the paper's Figure 1: one sample on each of lines 17-20\n"
                                "1 blame_fig1.c:17 < blame_fig1.c:23\n"
                                "1 blame_fig1.c:18 < blame_fig1.c:23\n"
                                "\n"
                                "1 tests/cc/blame_fig1.c:19:5 < blame_fig1.c:23\n"
                                "1 blame_fig1.c:20 < blame_fig1.c:23   # c = a + b\n";

STROBE_TEST(fig1_exact)
{
    const char *dir = strobe_test_tmpdir("blame_fig1_exact");
    attach(dir, "analysis_blame_fig1", "tests/cc/blame_fig1.c", "fig1", fig1_unit);
    run(dir, "", "fig1", "");
    write_file(dir, "list", fig1_list);
    char *out;
    CHECK_EQ_INT(
        strobe_test_sh(&out, "cd '%s' && %s/strobe report e --blame --sample-list list", dir, STROBE_BIN_DIR),
        0);
    char want[2048];
    snprintf(
        want, sizeof want,
        "\nData-centric blame (strobe report --blame; docs/blame.md)\n"
        "  4 samples from the sample list, 4 distinct stacks; blame tables in 1 module\n"
        "\nVariables (blame: the samples whose statements contribute to each one's value; a row includes "
        "the rows under it)\n"
        "   samples  blame%%  variable  type  defined in%*s  kind\n"
        "         4  100.0%%  c         int   fig1 %s/tests/cc/blame_fig1.c:15  local\n",
        (int)(strlen(STROBE_SOURCE_DIR) + strlen("/tests/cc/blame_fig1.c:15") + 5 - 10), "",
        STROBE_SOURCE_DIR);
    CHECK_CONTAINS(out, want);
    snprintf(want, sizeof want,
             "         2   50.0%%  a         int   fig1 %s/tests/cc/blame_fig1.c:15  local\n"
             "         1   25.0%%  b         int   fig1 %s/tests/cc/blame_fig1.c:15  local\n"
             "  unknown data: 0 samples (0.0%%)\n",
             STROBE_SOURCE_DIR, STROBE_SOURCE_DIR);
    CHECK_CONTAINS(out, want);
    CHECK_CONTAINS(
        out, "\nBlame point main (hybrid): 4 samples through it (100.0%), most common call path: "
             "main\n   samples       %  its variable\n         4  100.0%  return\n  in callees: fig1 4\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && %s/strobe report e --blame --sample-list list --format json", dir,
                                STROBE_BIN_DIR),
                 0);
    CHECK_CONTAINS(out,
                   "\"blame\": {\n    \"samples\": 4,\n    \"hz\": 0,\n    \"unknown\": {\"samples\": 0, "
                   "\"percent\": 0.0, \"by_reason\": {\"no-table\": 0, \"no-debug\": 0, \"no-variable\": 0, "
                   "\"measurement\": 0, \"no-stack\": 0}},\n    \"caller_unknown\": 0,\n");
    snprintf(want, sizeof want,
             "{\"id\": 0, \"name\": \"c\", \"type\": \"int\", \"kind\": \"local\", \"function\": \"fig1\", "
             "\"file\": \"%s/tests/cc/blame_fig1.c\", \"line\": 15, \"parent\": null, \"samples\": 4, "
             "\"percent\": 100.0}",
             STROBE_SOURCE_DIR);
    CHECK_CONTAINS(out, want);
    CHECK_CONTAINS(out, "\"name\": \"a\", \"type\": \"int\", \"kind\": \"local\", \"function\": \"fig1\"");
    CHECK_CONTAINS(out, "\"line\": 15, \"parent\": null, \"samples\": 2, \"percent\": 50.0}");
    CHECK_CONTAINS(out, "\"line\": 15, \"parent\": null, \"samples\": 1, \"percent\": 25.0}");
    CHECK_CONTAINS(out, "\"function\": \"main\",\n        \"samples\": 4,\n        \"path\": [\"main\"],");
    free(out);
}

/* The transfer fixture (blame_fix_prog.c). Hand computation, per line of
 * the list below (weights in brackets):
 *   [4] fill:13 {dst[]} -> exit p0 -> main:29's call of fill binds p0 to
 *       {h[], return}: dst[], h[] (and h, its display parent), return
 *   [2] fill:12 {dst[], k} -> the same: dst[], k, h[], h, return
 *   [3] worker:18 alone (its thread has no user frame outward): {arg[]}
 *       -> the spawn record of worker (main:31) binds p0 (arg[] is a p0*
 *       exit, which takes p0's bind when it has none): arg[], h[], h,
 *       return
 *   [1] worker:18 < libc < main:31 (as an OpenMP master thread, runtime
 *       frames between): the spawn record found at main:31, the same
 *   [1] worker:19 {counter}: a global, passed nowhere
 *   [2] tail:24 {return(tail)} -> main:33's call of tail binds ret to {r,
 *       return}; line 33 itself would also charge blk[], a heap block
 *   [1] tail:24 < main:34: no call record of tail at 34 -> caller unknown,
 *       tail's return stays charged
 *   [2] libc < main:29: passed out to the call line: h[], h, return
 *   [3] libc alone: no-table; [1] a module the run does not know:
 *       no-table; [1] main:35 (no entry): no-variable; [2] libstrobe <
 *       main:29: measurement; [1] the executable's _start (no line):
 *       no-debug
 * Of 24: dst[] 6 (25.0 %), k 2 (8.3 %), arg[] 4 (16.7 %), counter 1
 * (4.2 %), tail's return 3 (12.5 %), r 2 (8.3 %), blk[] 0, h = h[] 12 (50.0 %),
 * main's return 14 (58.3 %); unknown 8 (33.3 %): no-table 4, no-debug 1,
 * no-variable 1, measurement 2; caller unknown 1. */
static const char fix_unit[] = "strobe-blame|1|0\n"
                               "file|0|%s\n"
                               "func|0|fill|0|10\n"
                               "func|1|worker|0|15\n"
                               "func|2|tail|0|22\n"
                               "func|3|main|0|26\n"
                               "var|0|0|pointee|p0|-|dst[]|double|0|10\n"
                               "var|1|0|local|-|-|k|int|0|12\n"
                               "var|2|1|pointee|p0*|-|arg[]|double|0|15\n"
                               "var|3|1|local|-|-|v|double *|0|17\n"
                               "var|4|2|param|-|-|x|int|0|22\n"
                               "var|5|2|return|ret|-|return|int|0|22\n"
                               "var|6|3|local|-|-|h|double [4]|0|28\n"
                               "var|7|3|element|-|6|h[]|double|0|28\n"
                               "var|8|3|local|-|-|r|int|0|33\n"
                               "var|9|3|return|ret|-|return|int|0|26\n"
                               "var|10|-|global|global|-|counter|int|0|8\n"
                               "var|11|3|heap|-|-|blk[]|double|0|33\n"
                               "loc|0|12|0|0,1\n"
                               "loc|0|13|0|0\n"
                               "loc|0|17|0|2,3\n"
                               "loc|0|18|0|2\n"
                               "loc|0|19|0|10\n"
                               "loc|0|24|0|5\n"
                               "loc|0|29|0|7,9\n"
                               "loc|0|31|0|7,9\n"
                               "loc|0|33|0|8,9,11\n"
                               "loc|0|34|0|9\n"
                               "call|0|29|0|3|fill|call\n"
                               "bind|p0|7,9\n"
                               "call|0|31|0|3|pthread_create|call\n"
                               "call|0|31|0|3|worker|spawn\n"
                               "bind|p0|7,9\n"
                               "call|0|33|0|3|tail|call\n"
                               "bind|ret|8,9\n"
                               "end\n";

static void fix_experiment(const char *dir)
{
    attach(dir, "analysis_blame_fix", "tests/analysis/blame_fix_prog.c", "fix", fix_unit);
    run(dir, "", "fix", "");
    char *start;
    CHECK_EQ_INT(
        strobe_test_sh(&start, "cd '%s' && nm fix | awk '$3 == \"_start\" {printf \"%%s\", $1}'", dir), 0);
    char list[2048];
    snprintf(list, sizeof list,
             "4 blame_fix_prog.c:13 < blame_fix_prog.c:29\n"
             "2 blame_fix_prog.c:12 < blame_fix_prog.c:29\n"
             "3 blame_fix_prog.c:18\n"
             "1 blame_fix_prog.c:18 < libc.so.6+0x1000 < blame_fix_prog.c:31\n"
             "1 blame_fix_prog.c:19\n"
             "1 blame_fix_prog.c:24 < blame_fix_prog.c:33\n"
             "1 blame_fix_prog.c:24 < blame_fix_prog.c:33\n"
             "1 blame_fix_prog.c:24 < blame_fix_prog.c:34\n"
             "2 libc.so+0x1000 < blame_fix_prog.c:29\n"
             "3 libc.so.6+0x1000\n"
             "1 nosuch.so+0x10\n"
             "1 blame_fix_prog.c:35\n"
             "2 libstrobe.so+0x1000 < blame_fix_prog.c:29\n"
             "1 fix+0x%s\n",
             start);
    free(start);
    write_file(dir, "list", list);
}

STROBE_TEST(transfer_exact)
{
    const char *dir = strobe_test_tmpdir("blame_transfer_exact");
    fix_experiment(dir);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && %s/strobe report e --blame --sample-list list --blame-point=main "
                                "--blame-point fill --blame-point=nosuch",
                                dir, STROBE_BIN_DIR),
                 0);
    const char *v = strstr(out, "\nVariables");
    CHECK(v != NULL);
    /* name, samples, blame % of each row, in order, children under their parent */
    static const char *const rows[][3] = {
        {"return", "14", "58.3%"}, {"h", "12", "50.0%"},    {"  h[]", "12", "50.0%"},
        {"dst[]", "6", "25.0%"},   {"arg[]", "4", "16.7%"}, {"return", "3", "12.5%"},
        {"k", "2", "8.3%"},        {"r", "2", "8.3%"},      {"counter", "1", "4.2%"}};
    const char *p = strstr(v, "kind\n");
    CHECK(p != NULL);
    p += 5;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char n[32], pc[16], name[64] = "";
        CHECK(sscanf(p, "%31s %15s", n, pc) == 2);
        CHECK_STR_EQ(n, rows[i][1]);
        CHECK_STR_EQ(pc, rows[i][2]);
        const char *c = strstr(p, "%  ") + 3;
        size_t k = 0;
        while (c[k] == ' ' && k < 2)
            k++;
        size_t e = k;
        while (c[e] != ' ')
            e++;
        snprintf(name, sizeof name, "%.*s", (int)e, c);
        CHECK_STR_EQ(name, rows[i][0]);
        p = strchr(p, '\n') + 1;
    }
    CHECK_CONTAINS(p,
                   "  unknown data: 8 samples (33.3%): no-table 4, no-debug 1, no-variable 1, measurement 2\n"
                   "  (1 charged samples found no call record for their exit variables: caller unknown)\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && %s/strobe report e --blame --sample-list list --blame-point=main "
                                "--blame-point fill --blame-point=nosuch --format json",
                                dir, STROBE_BIN_DIR),
                 0);
    CHECK_CONTAINS(
        out, "\"samples\": 24,\n    \"hz\": 0,\n    \"unknown\": {\"samples\": 8, \"percent\": 33.3, "
             "\"by_reason\": {\"no-table\": 4, \"no-debug\": 1, \"no-variable\": 1, \"measurement\": 2, "
             "\"no-stack\": 0}},\n    \"caller_unknown\": 1,\n");
    CHECK_CONTAINS(
        out, "{\"id\": 2, \"name\": \"h[]\", \"type\": \"double\", \"kind\": \"element\", \"function\": "
             "\"main\"");
    CHECK_CONTAINS(out, "\"line\": 28, \"parent\": 1, \"samples\": 12, \"percent\": 50.0}");
    CHECK_CONTAINS(out, "\"name\": \"counter\", \"type\": \"int\", \"kind\": \"global\", \"function\": null");
    /* fill: main > fill, 6 samples, dst[] all of them, k a third */
    CHECK_CONTAINS(
        out, "\"function\": \"fill\",\n        \"samples\": 6,\n        \"path\": [\"main\", \"fill\"],\n"
             "        \"variables\": [\n          {\"id\": 3, \"samples\": 6, \"percent\": 100.0},\n"
             "          {\"id\": 6, \"samples\": 2, \"percent\": 33.3}\n        ],\n"
             "        \"callees\": []");
    CHECK_CONTAINS(out,
                   "\"function\": \"main\",\n        \"samples\": 15,\n        \"path\": [\"main\"],\n"
                   "        \"variables\": [\n          {\"id\": 0, \"samples\": 11, \"percent\": 73.3},\n"
                   "          {\"id\": 1, \"samples\": 9, \"percent\": 60.0},\n"
                   "          {\"id\": 2, \"samples\": 9, \"percent\": 60.0},\n"
                   "          {\"id\": 7, \"samples\": 2, \"percent\": 13.3}\n        ],");
    CHECK_CONTAINS(out, "{\"name\": \"fill\", \"samples\": 6}");
    CHECK_CONTAINS(out, "{\"name\": \"tail\", \"samples\": 3}");
    CHECK(strstr(out, "blk[]") == NULL); /* never charged: not listed */
    CHECK_CONTAINS(out, "\"function\": \"nosuch\",\n        \"samples\": 0,\n        \"path\": [],");
    /* code-centric: worker in 5 samples, its top variable arg[] in 4, 1 counter */
    CHECK_CONTAINS(out, "{\"name\": \"worker\", \"file\": \"");
    CHECK_CONTAINS(out, "blame_fix_prog.c\", \"line\": 15, \"self\": 5, \"total\": 5, \"top_variable\": 4, "
                        "\"top_samples\": 4, \"unknown\": 0}");
    free(out);
    /* a heap row says where it was allocated */
    write_file(dir, "list2", "1 blame_fix_prog.c:33\n");
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && %s/strobe report e --blame --sample-list list2", dir,
                                STROBE_BIN_DIR),
                 0);
    char want[1024];
    snprintf(
        want, sizeof want,
        "  100.0%%  blk[]     double  %-*s  heap, allocated at %s/tests/analysis/blame_fix_prog.c:33\n",
        (int)(strlen("main ") + strlen(STROBE_SOURCE_DIR) + strlen("/tests/analysis/blame_fix_prog.c:33")),
        "main", STROBE_SOURCE_DIR);
    CHECK_CONTAINS(out, want);
    free(out);
    /* the HTML page's data holds the same object */
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "cd '%s' && %s/strobe report e --blame --sample-list list --format html -o p.html "
                       "&& grep -c '\"blame\":{\"samples\":24,\"hz\":0,\"unknown\":{\"samples\":8' p.html",
                       dir, STROBE_BIN_DIR),
        0);
    CHECK_STR_EQ(out, "1\n");
    free(out);
}

/* The same end to end with the tables of the real analysis: `strobe cc`
 * on the fixture of docs/blame.md (tests/cc/blame_fix.c), and the sample
 * list of the design (20 samples; blame by hand in tests/cc/test_blame.c's
 * fixture comment): fill's k 2 = 10 %, dst[] 6 = 30 %; main's n 1, q 1,
 * h (with its heap block h[]) 10 = 50 %, p.x 11, arr[] 13, p.y 15, p 15,
 * return 16 = 80 %, scale 1; unknown 3 = 15 % (libc: no-table 2; line 27,
 * no entry up the stack: no-variable 1); then the paper's Figure 1 as in
 * fig1_exact. Skipped without the plugin. */
STROBE_TEST(strobe_cc_fixture_exact)
{
    const char *dir = strobe_test_tmpdir("blame_strobe_cc_fixture");
    char *out;
    if (!have_plugin())
        return;
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "%s/strobe cc -g -O0 %s/tests/cc/blame_fix.c -o fix", STROBE_BIN_DIR,
             STROBE_SOURCE_DIR);
    free(strobe_test_ok_in(dir, cmd));
    /* its exit status is (int)p.y, uninitialized without an argument: 2 with one */
    CHECK_EQ_INT(strobe_test_sh(NULL, "cd '%s' && %s/strobe run -o e -- ./fix x", dir, STROBE_BIN_DIR), 2);
    write_file(dir, "list",
               "4 blame_fix.c:9 < blame_fix.c:20\n2 blame_fix.c:8 < blame_fix.c:20\n"
               "1 blame_fix.c:14\n1 blame_fix.c:17\n1 blame_fix.c:18\n1 blame_fix.c:19\n1 blame_fix.c:20\n"
               "1 blame_fix.c:21\n1 blame_fix.c:22\n1 blame_fix.c:23\n1 blame_fix.c:24\n1 blame_fix.c:25\n"
               "1 blame_fix.c:26\n1 blame_fix.c:27\n2 libc.so.6+0x1000\n");
    CHECK_EQ_INT(
        strobe_test_sh(
            &out,
            "cd '%s' && %s/strobe report e --blame --sample-list list --format json > r.json && "
            "python3 -c 'import json\n"
            "b = json.load(open(\"r.json\"))[\"blame\"]\n"
            "v = {(x[\"function\"], x[\"name\"]): (x[\"samples\"], x[\"percent\"]) "
            "for x in b[\"variables\"]}\n"
            "print(b[\"samples\"], b[\"unknown\"][\"samples\"], b[\"unknown\"][\"percent\"], "
            "sorted((r[\"no-table\"], r[\"no-variable\"]) for r in [b[\"unknown\"][\"by_reason\"]]))\n"
            "for k in [(\"fill\", \"k\"), (\"fill\", \"dst[]\"), (\"main\", \"n\"), (\"main\", \"q\"), "
            "(\"main\", \"h\"), (\"main\", \"h[]\"), (\"main\", \"p.x\"), (\"main\", \"arr[]\"), "
            "(\"main\", \"p.y\"), (\"main\", \"p\"), (\"main\", \"return\"), (None, \"scale\")]:\n"
            "    print(k[1], *v[k])'",
            dir, STROBE_BIN_DIR),
        0);
    CHECK_STR_EQ(out, "20 3 15.0 [(2, 1)]\nk 2 10.0\ndst[] 6 30.0\nn 1 5.0\nq 1 5.0\nh 10 50.0\nh[] 10 50.0\n"
                      "p.x 11 55.0\narr[] 13 65.0\np.y 15 75.0\np 15 75.0\nreturn 16 80.0\nscale 1 5.0\n");
    free(out);
    /* and the paper's Figure 1: a 50.0 %, b 25.0 %, c 100.0 % */
    snprintf(cmd, sizeof cmd, "%s/strobe cc -g -O0 %s/tests/cc/blame_fig1.c -o fig1", STROBE_BIN_DIR,
             STROBE_SOURCE_DIR);
    free(strobe_test_ok_in(dir, cmd));
    free(strobe_test_ok_in(dir, "rm -rf e"));
    run(dir, "", "fig1", "");
    write_file(dir, "list", fig1_list);
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "cd '%s' && %s/strobe report e --blame --sample-list list --format json > r.json && "
                       "python3 -c 'import json\n"
                       "b = json.load(open(\"r.json\"))[\"blame\"]\n"
                       "print(*[(x[\"name\"], x[\"percent\"]) for x in b[\"variables\"] "
                       "if x[\"function\"] == \"fig1\"])'",
                       dir, STROBE_BIN_DIR),
        0);
    CHECK_STR_EQ(out, "('c', 100.0) ('return', 100.0) ('a', 50.0) ('b', 25.0)\n");
    free(out);
}

/* An OpenMP loop built by `strobe cc -fopenmp` and sampled on two threads:
 * the loop body (.omp_outlined._debug__, called by clang's wrapper
 * .omp_outlined. at the construct's line) passes its blame to main's heap
 * block through the spawn record, on the master thread (libomp's frames
 * between) and on the worker (no user frame outward): no caller unknown,
 * and every charged sample is main's a[]'s. */
STROBE_TEST(strobe_cc_openmp_sampled)
{
    const char *dir = strobe_test_tmpdir("blame_strobe_cc_openmp");
    char *out;
    if (!have_plugin())
        return;
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "%s/strobe cc --trace=func -fopenmp -g -O0 %s/tests/analysis/blame_omp_prog.c -o omp -lm",
             STROBE_BIN_DIR, STROBE_SOURCE_DIR);
    free(strobe_test_ok_in(dir, cmd));
    run(dir, "--sample=2000", "omp", "");
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "cd '%s' && %s/strobe report e --blame --format json > r.json && "
                       "python3 -c 'import json\n"
                       "b = json.load(open(\"r.json\"))[\"blame\"]\n"
                       "v = {(x[\"function\"], x[\"name\"]): x[\"samples\"] for x in b[\"variables\"]}\n"
                       "charged = b[\"samples\"] - b[\"unknown\"][\"samples\"]\n"
                       "assert b[\"caller_unknown\"] == 0, b\n"
                       "assert charged > 0 and v[(\"main\", \"a[]\")] == charged, (charged, v)\n"
                       "assert b[\"unknown\"][\"samples\"] * 10 <= b[\"samples\"], b[\"unknown\"]\n"
                       "print(\"ok\")'",
                       dir, STROBE_BIN_DIR),
        0);
    CHECK_STR_EQ(out, "ok\n");
    free(out);
}

/* A bad line of a sample list: one line naming it, exit 2. */
STROBE_TEST(sample_list_errors)
{
    const char *dir = strobe_test_tmpdir("blame_sample_list_errors");
    attach(dir, "analysis_blame_fig1", "tests/cc/blame_fig1.c", "fig1", fig1_unit);
    run(dir, "", "fig1", "");
    static const char *const cases[][2] = {
        {"0 blame_fig1.c:17", "list:2: WEIGHT '0' is not a positive number"},
        {"x blame_fig1.c:17", "list:2: WEIGHT 'x' is not a positive number"},
        {"3", "list:2: no frame after the weight"},
        {"1 blame_fig1.c:17 <", "list:2: an empty frame"},
        {"1 blame_fig1.c", "list:2: 'blame_fig1.c' is neither FILE:LINE[:COL] nor MODULE+0xOFFSET"},
        {"1 fig1_prog.c:17", "list:2: no blame table of the experiment's modules has a file fig1_prog.c"},
        {"1 fig1+0xzz", "list:2: 'fig1+0xzz': the offset is not a hexadecimal number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256], want[512];
        snprintf(text, sizeof text, "1 blame_fig1.c:17\n%s\n", cases[i][0]);
        write_file(dir, "list", text);
        char *out;
        CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && %s/strobe report e --blame --sample-list list", dir,
                                    STROBE_BIN_DIR),
                     2);
        snprintf(want, sizeof want, "strobe: report: %s\n", cases[i][1]);
        CHECK_STR_EQ(out, want);
        free(out);
    }
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && %s/strobe report e --blame --sample-list nothere", dir,
                                STROBE_BIN_DIR),
                 1);
    CHECK_STR_EQ(out, "strobe: report: nothere: No such file or directory\n");
    free(out);
    /* a table with a bad unit after a good one: one warning, the good one used */
    char unit2[sizeof fig1_unit + 64];
    snprintf(unit2, sizeof unit2, "%sstrobe-blame|1|0\nfile|1|/x.c\nend\n", fig1_unit);
    attach(dir, "analysis_blame_fig1", "tests/cc/blame_fig1.c", "fig1b", unit2);
    free(strobe_test_ok_in(dir, "rm -rf e && " STROBE_BIN_DIR "/strobe run -o e -- ./fig1b"));
    write_file(dir, "list", "1 blame_fig1.c:17\n");
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && %s/strobe report e --blame --sample-list list 2>&1 >/dev/null",
                                dir, STROBE_BIN_DIR),
                 0);
    CHECK_CONTAINS(out, "strobe: report: warning: ");
    CHECK_CONTAINS(out, "/fig1b: .strobe_blame offset ");
    CHECK_CONTAINS(out, ": file 1: ID 1 is not the next file ID (0)\n");
    free(out);
    /* a run that did not sample, without a list: --samples' refusal */
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && %s/strobe report e --blame", dir, STROBE_BIN_DIR), 1);
    CHECK_STR_EQ(out,
                 "strobe: report: e: --blame: the run did not sample (record with `strobe run --sample`)\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && %s/strobe report e --sample-list l", dir, STROBE_BIN_DIR),
                 2);
    CHECK_CONTAINS(out, "'--sample-list' needs --blame");
    free(out);
}

/* The hot loop sampled for real: every sample is charged or in a named
 * unknown reason, and the samples in libm and libc (no table) are passed
 * to the calling lines, never lost. */
static const char hot_unit[] = "strobe-blame|1|0\n"
                               "file|0|%s\n"
                               "func|0|main|0|11\n"
                               "var|0|-|global|global|-|acc|double|0|9\n"
                               "var|1|-|global|global|-|buf|char [4096]|0|10\n"
                               "var|2|0|local|-|-|n|long|0|13\n"
                               "var|3|0|local|-|-|i|long|0|14\n"
                               "var|4|0|return|ret|-|return|int|0|11\n"
                               "loc|0|13|0|2\n"
                               "loc|0|14|0|0,1,3\n"
                               "loc|0|15|0|0,4\n"
                               "loc|0|16|0|1\n"
                               "loc|0|18|0|4\n"
                               "end\n";

STROBE_TEST(sampled_run_sums)
{
    const char *dir = strobe_test_tmpdir("blame_sampled_run_sums");
    attach(dir, "analysis_blame_hot", "tests/analysis/blame_hot_prog.c", "hot", hot_unit);
    run(dir, "--sample=2000", "hot", "3000000");
    char *out;
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "cd '%s' && %s/strobe report e --samples --blame --format json > r.json && "
                       "python3 -c 'import json,sys\n"
                       "r = json.load(open(\"r.json\"))\n"
                       "b, s = r[\"blame\"], r[\"samples\"]\n"
                       "u = b[\"unknown\"]\n"
                       "assert b[\"samples\"] == s[\"samples\"] > 0, (b[\"samples\"], s[\"samples\"])\n"
                       "assert u[\"samples\"] == sum(u[\"by_reason\"].values())\n"
                       "v = {x[\"name\"]: x[\"samples\"] for x in b[\"variables\"]}\n"
                       "lib = sum(f[\"self\"] for f in s[\"functions\"] if \"libm\" in f[\"module\"]"
                       " or \"libc\" in f[\"module\"])\n"
                       "assert v.get(\"acc\", 0) + v.get(\"buf\", 0) >= lib > 0, (v, lib)\n"
                       "assert b[\"samples\"] - u[\"samples\"] >= max(v.values())\n"
                       "print(\"ok\", b[\"samples\"], u, v, lib)'",
                       dir, STROBE_BIN_DIR),
        0);
    CHECK_CONTAINS(out, "ok ");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(fig1_exact), STROBE_CASE(transfer_exact), STROBE_CASE(strobe_cc_fixture_exact),
                 STROBE_CASE(strobe_cc_openmp_sampled), STROBE_CASE(sample_list_errors),
                 STROBE_CASE(sampled_run_sums))
