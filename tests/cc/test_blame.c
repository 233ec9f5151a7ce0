/* SPDX-License-Identifier: MIT */
/*
 * The blame analysis of `strobe cc` (src/cc/blame.cpp), through
 * `strobe blame-prep`: the exact blame of every variable of small
 * fixtures, each computed by hand below, at -O0 and -O2 (the analysis
 * sees clang's IR before optimization, so both give the same table); the
 * raw unit of the paper's Figure 1; the spawn record of an OpenMP loop;
 * the section in objects and executables built by `strobe cc`; errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"
#define SRC STROBE_SOURCE_DIR "/tests/cc"

/* blame-prep's output for FILE with ARGS, the fixtures' folder cut from
 * the paths. */
static char *prep(const char *file, const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s blame-prep %s %s | sed 's|%s/||g'", STROBE, file, args, SRC);
    return strobe_test_ok_in(SRC, cmd);
}

static void check_prep(const char *file, const char *args, const char *want)
{
    char *out = prep(file, args);
    CHECK_STR_EQ(out, want);
    free(out);
}

/* The paper's Table I (blame_fig1.c says why): a = {16, 18, 19}, b = {17},
 * c = {16..20}; fig1's return value holds c and line 21; main's return
 * value is line 23's call. */
static const char want_fig1[] = "var\tfig1:a\tint\tlocal\tblame_fig1.c:16,18,19\n"
                                "var\tfig1:b\tint\tlocal\tblame_fig1.c:17\n"
                                "var\tfig1:c\tint\tlocal\tblame_fig1.c:16,17,18,19,20\n"
                                "var\tfig1:return\tint\treturn\tblame_fig1.c:16,17,18,19,20,21\n"
                                "var\tmain:return\tint\treturn\tblame_fig1.c:23\n"
                                "line\tblame_fig1.c:16\tfig1:a fig1:c fig1:return\n"
                                "line\tblame_fig1.c:17\tfig1:b fig1:c fig1:return\n"
                                "line\tblame_fig1.c:18\tfig1:a fig1:c fig1:return\n"
                                "line\tblame_fig1.c:19\tfig1:a fig1:c fig1:return\n"
                                "line\tblame_fig1.c:20\tfig1:c fig1:return\n"
                                "line\tblame_fig1.c:21\tfig1:return\n"
                                "line\tblame_fig1.c:23\tmain:return\n";

/* blame_fix.c, by hand:
 * fill: line 8's test controls 8 (k++) and 9. own(k) = {8}; own(dst[]) =
 * {9} + {8} (control). dst[]'s write reads scale, k, dst and n; k's last
 * consumer is dst[] (an exit, a root), so k = {8}, dst[] = {8, 9}. scale
 * is a global: an exit, never a child.
 * main: q points to arr[], h to the heap block of line 18 (named h[]).
 *   own(n) = {14}; own(q) = {17}; own(h) = {18}, reading n;
 *   own(h[]) = {18 (malloc), 20 (fill writes param 0's pointee), 25
 *   (free)}, reading n, h and (through fill's summary) scale;
 *   own(scale) = {19}; own(p.x) = {21}, reading h, h[];
 *   own(arr[]) = {22} (written through the alias q), reading p.x, q;
 *   own(p.y) = {23, 24} (24 is controlled by 23), reading arr[], argc;
 *   own(return) = {26}, reading p.y.
 * Last consumers: n -> h[] (20 > 18), h -> h[] (25 > 21), h[] -> p.x,
 * p.x -> arr[], q -> arr[], arr[] -> p.y, p.y -> return. Blame is own
 * plus the descendants': n {14}, q {17}, h {18}, h[] {14, 18, 20, 25},
 * p.x {14, 18, 20, 21, 25}, arr[] {14, 17, 18, 20, 21, 22, 25}, p.y
 * {14, 17, 18, 20..25}, return {14, 17, 18, 20..26}, scale {19}; argc
 * and argv are written by no statement. */
static const char want_fix[] =
    "var\tscale\tdouble\tglobal\tblame_fix.c:19\n"
    "var\tmain:n\tint\tlocal\tblame_fix.c:14\n"
    "var\tmain:q\tdouble *\tlocal\tblame_fix.c:17\n"
    "var\tmain:h\tdouble *\tlocal\tblame_fix.c:18\n"
    "var\tmain:return\tint\treturn\tblame_fix.c:14,17,18,20,21,22,23,24,25,26\n"
    "var\tmain:arr[]\tdouble\telement\tblame_fix.c:14,17,18,20,21,22,25\n"
    "var\tmain:h[]\tdouble\theap\tblame_fix.c:14,18,20,25\n"
    "var\tmain:p.x\tdouble\tfield\tblame_fix.c:14,18,20,21,25\n"
    "var\tmain:p.y\tdouble\tfield\tblame_fix.c:14,17,18,20,21,22,23,24,25\n"
    "var\tfill:k\tint\tlocal\tblame_fix.c:8\n"
    "var\tfill:dst[]\tdouble\tpointee\tblame_fix.c:8,9\n"
    "line\tblame_fix.c:8\tfill:k fill:dst[]\n"
    "line\tblame_fix.c:9\tfill:dst[]\n"
    "line\tblame_fix.c:14\tmain:n main:return main:arr[] main:h[] main:p.x main:p.y\n"
    "line\tblame_fix.c:17\tmain:q main:return main:arr[] main:p.y\n"
    "line\tblame_fix.c:18\tmain:h main:return main:arr[] main:h[] main:p.x main:p.y\n"
    "line\tblame_fix.c:19\tscale\n"
    "line\tblame_fix.c:20\tmain:return main:arr[] main:h[] main:p.x main:p.y\n"
    "line\tblame_fix.c:21\tmain:return main:arr[] main:p.x main:p.y\n"
    "line\tblame_fix.c:22\tmain:return main:arr[] main:p.y\n"
    "line\tblame_fix.c:23\tmain:return main:p.y\n"
    "line\tblame_fix.c:24\tmain:return main:p.y\n"
    "line\tblame_fix.c:25\tmain:return main:arr[] main:h[] main:p.x main:p.y\n"
    "line\tblame_fix.c:26\tmain:return\n";

/* blame_rec.c: even and odd write *acc (own: the test of n that controls
 * it, the update, and the call whose callee writes its param 0's pointee:
 * {6, 8, 9} and {14, 16, 17}); the mutual recursion converges. fact's
 * return value: the test, both returns and the shared return block. main:
 * total is written at 29 and by even() at 30; f at 31; the return value
 * reads both. */
static const char want_rec[] = "var\tmain:total\tlong\tlocal\tblame_rec.c:29,30\n"
                               "var\tmain:f\tlong\tlocal\tblame_rec.c:31\n"
                               "var\tmain:return\tint\treturn\tblame_rec.c:29,30,31,32\n"
                               "var\teven:acc[]\tlong\tpointee\tblame_rec.c:6,8,9\n"
                               "var\tfact:return\tlong\treturn\tblame_rec.c:22,23,24,25\n"
                               "var\todd:acc[]\tlong\tpointee\tblame_rec.c:14,16,17\n"
                               "line\tblame_rec.c:6\teven:acc[]\n"
                               "line\tblame_rec.c:8\teven:acc[]\n"
                               "line\tblame_rec.c:9\teven:acc[]\n"
                               "line\tblame_rec.c:14\todd:acc[]\n"
                               "line\tblame_rec.c:16\todd:acc[]\n"
                               "line\tblame_rec.c:17\todd:acc[]\n"
                               "line\tblame_rec.c:22\tfact:return\n"
                               "line\tblame_rec.c:23\tfact:return\n"
                               "line\tblame_rec.c:24\tfact:return\n"
                               "line\tblame_rec.c:25\tfact:return\n"
                               "line\tblame_rec.c:29\tmain:total main:return\n"
                               "line\tblame_rec.c:30\tmain:total main:return\n"
                               "line\tblame_rec.c:31\tmain:f main:return\n"
                               "line\tblame_rec.c:32\tmain:return\n";

/* blame_cd.c: control dependence.
 * sw: the switch (8) controls 10 and 13: r = {7, 8, 10, 13}.
 * both: `a > 0 && b > 0` (21, two branches) controls 22: r = {20, 21, 22}.
 * early: 29 controls both the early return (30) and 31: r = {28, 29, 31};
 *   the return value = {28..33} (30 and 32 store it, 33 returns it).
 * loop: the goto's test (41) controls 40 and itself: i = {37, 41},
 *   s = {37, 38, 40, 41} (i is read by s).
 * checked: `if (p == NULL) exit(1)` controls nothing: the exit path cannot
 *   return and is left out of the post-dominators, so t = {51} only.
 * forever: no exit at all; LLVM's post-dominator tree places one in the
 *   loop, which makes 61 control 60 and 62: c = {58, 60, 61}, out[] =
 *   {58, 60, 61, 62}. */
static const char want_cd[] = "var\tsw:r\tint\tlocal\tblame_cd.c:7,8,10,13\n"
                              "var\tsw:return\tint\treturn\tblame_cd.c:7,8,10,13,15\n"
                              "var\tboth:r\tint\tlocal\tblame_cd.c:20,21,22\n"
                              "var\tboth:return\tint\treturn\tblame_cd.c:20,21,22,23\n"
                              "var\tearly:r\tint\tlocal\tblame_cd.c:28,29,31\n"
                              "var\tearly:return\tint\treturn\tblame_cd.c:28,29,30,31,32,33\n"
                              "var\tloop:i\tint\tlocal\tblame_cd.c:37,41\n"
                              "var\tloop:s\tint\tlocal\tblame_cd.c:37,38,40,41\n"
                              "var\tloop:return\tint\treturn\tblame_cd.c:37,38,40,41,43\n"
                              "var\tchecked:p\tint *\tlocal\tblame_cd.c:48\n"
                              "var\tchecked:t\tint\tlocal\tblame_cd.c:51\n"
                              "var\tchecked:return\tint\treturn\tblame_cd.c:51,53\n"
                              "var\tchecked:p[]\tint\theap\tblame_cd.c:48,52\n"
                              "var\tforever:c\tint\tlocal\tblame_cd.c:58,60,61\n"
                              "var\tforever:out[]\tint\tpointee\tblame_cd.c:58,60,61,62\n"
                              "line\tblame_cd.c:7\tsw:r sw:return\n"
                              "line\tblame_cd.c:8\tsw:r sw:return\n"
                              "line\tblame_cd.c:10\tsw:r sw:return\n"
                              "line\tblame_cd.c:13\tsw:r sw:return\n"
                              "line\tblame_cd.c:15\tsw:return\n"
                              "line\tblame_cd.c:20\tboth:r both:return\n"
                              "line\tblame_cd.c:21\tboth:r both:return\n"
                              "line\tblame_cd.c:22\tboth:r both:return\n"
                              "line\tblame_cd.c:23\tboth:return\n"
                              "line\tblame_cd.c:28\tearly:r early:return\n"
                              "line\tblame_cd.c:29\tearly:r early:return\n"
                              "line\tblame_cd.c:30\tearly:return\n"
                              "line\tblame_cd.c:31\tearly:r early:return\n"
                              "line\tblame_cd.c:32\tearly:return\n"
                              "line\tblame_cd.c:33\tearly:return\n"
                              "line\tblame_cd.c:37\tloop:i loop:s loop:return\n"
                              "line\tblame_cd.c:38\tloop:s loop:return\n"
                              "line\tblame_cd.c:40\tloop:s loop:return\n"
                              "line\tblame_cd.c:41\tloop:i loop:s loop:return\n"
                              "line\tblame_cd.c:43\tloop:return\n"
                              "line\tblame_cd.c:48\tchecked:p checked:p[]\n"
                              "line\tblame_cd.c:51\tchecked:t checked:return\n"
                              "line\tblame_cd.c:52\tchecked:p[]\n"
                              "line\tblame_cd.c:53\tchecked:return\n"
                              "line\tblame_cd.c:58\tforever:c forever:out[]\n"
                              "line\tblame_cd.c:60\tforever:c forever:out[]\n"
                              "line\tblame_cd.c:61\tforever:c forever:out[]\n"
                              "line\tblame_cd.c:62\tforever:out[]\n";

STROBE_TEST(fig1)
{
    check_prep("blame_fig1.c", "", want_fig1);
}

STROBE_TEST(fig1_o2)
{
    check_prep("blame_fig1.c", "-O2", want_fig1);
}

STROBE_TEST(fixture)
{
    check_prep("blame_fix.c", "", want_fix);
}

STROBE_TEST(fixture_o2)
{
    check_prep("blame_fix.c", "-O2", want_fix);
}

STROBE_TEST(recursion)
{
    check_prep("blame_rec.c", "", want_rec);
}

STROBE_TEST(control)
{
    check_prep("blame_cd.c", "", want_cd);
}

/* The unit as stored (docs/formats/blame-table.md): one loc per column,
 * sets closed, main's call of fig1 with its return bound to main's return
 * value. */
static const char want_fig1_raw[] = "strobe-blame\t1\t0\n"
                                    "file\t0\tblame_fig1.c\n"
                                    "func\t0\tfig1\t0\t14\n"
                                    "func\t1\tmain\t0\t23\n"
                                    "var\t0\t0\tlocal\t-\t-\ta\tint\t0\t15\n"
                                    "var\t1\t0\tlocal\t-\t-\tb\tint\t0\t15\n"
                                    "var\t2\t0\tlocal\t-\t-\tc\tint\t0\t15\n"
                                    "var\t3\t0\treturn\tret\t-\treturn\tint\t0\t14\n"
                                    "var\t4\t1\treturn\tret\t-\treturn\tint\t0\t23\n"
                                    "loc\t0\t16\t7\t0,2,3\n"
                                    "loc\t0\t17\t7\t1,2,3\n"
                                    "loc\t0\t18\t9\t0,2,3\n"
                                    "loc\t0\t18\t11\t0,2,3\n"
                                    "loc\t0\t18\t13\t0,2,3\n"
                                    "loc\t0\t19\t11\t0,2,3\n"
                                    "loc\t0\t19\t13\t0,2,3\n"
                                    "loc\t0\t19\t15\t0,2,3\n"
                                    "loc\t0\t20\t7\t2,3\n"
                                    "loc\t0\t20\t9\t2,3\n"
                                    "loc\t0\t20\t11\t2,3\n"
                                    "loc\t0\t20\t13\t2,3\n"
                                    "loc\t0\t21\t5\t3\n"
                                    "loc\t0\t21\t12\t3\n"
                                    "loc\t0\t23\t18\t4\n"
                                    "loc\t0\t23\t25\t4\n"
                                    "loc\t0\t23\t32\t4\n"
                                    "call\t0\t23\t25\t1\tfig1\tcall\n"
                                    "bind\tret\t4\n"
                                    "end\n";

STROBE_TEST(fig1_raw)
{
    check_prep("--raw blame_fig1.c", "", want_fig1_raw);
}

/* The OpenMP loop: clang outlines its body into .omp_outlined._debug__
 * (behind a wrapper that only passes its arguments on, which the record
 * skips). The spawn binds the outlined function's parameters 2-4 (n, a,
 * scale, by reference) to main's variables; "p3*", what a's reference
 * leads to, is main's heap block a[] (var 5) and its forest ancestors s
 * and return; scale is read by the loop that writes a[], so it is a[]'s
 * child. */
static const char want_omp[] = "var\t0\t0\tlocal\t-\t-\tn\tint\t0\t6\n"
                               "var\t1\t0\tlocal\t-\t-\ta\tdouble *\t0\t7\n"
                               "var\t2\t0\tlocal\t-\t-\tscale\tdouble\t0\t8\n"
                               "var\t3\t0\tlocal\t-\t-\ts\tdouble\t0\t12\n"
                               "var\t4\t0\treturn\tret\t-\treturn\tint\t0\t4\n"
                               "var\t5\t0\theap\t-\t1\ta[]\tdouble\t0\t7\n"
                               "var\t6\t1\tparam\t-\t-\ta\tdouble * &\t0\t7\n"
                               "var\t7\t1\tpointee\tp3\t6\ta\tdouble *\t0\t7\n"
                               "var\t8\t1\tpointee\tp3*\t7\ta[]\tdouble\t0\t7\n"
                               "call\t0\t9\t1\t0\t.omp_outlined._debug__\tspawn\n"
                               "bind\tp2\t0,3,4\n"
                               "bind\tp2*\t0,3,4\n"
                               "bind\tp3\t1,3,4,5\n"
                               "bind\tp3*\t3,4,5\n"
                               "bind\tp4\t2,3,4,5\n"
                               "bind\tp4*\t2,3,4,5\n";

STROBE_TEST(openmp_spawn)
{
    char *out = prep("blame_omp.c", "-fopenmp --raw | grep '^var' && "
                                    "cd " SRC " && " STROBE " blame-prep blame_omp.c -fopenmp --raw | "
                                    "sed -n '/spawn/,/^call/p' | grep -v '__kmpc'");
    CHECK_STR_EQ(out, want_omp);
    free(out);
}

/* strobe cc stores one unit per object; the linker concatenates them in
 * the executable, which still runs; --no-blame and other compilers store
 * none. */
STROBE_TEST(cc_section)
{
    const char *tmp = strobe_test_tmpdir("blame_cc_section");
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s cc -O2 -c %s/blame_fix.c -o a.o -Dmain=main_fix && objcopy --dump-section .strobe_blame=sec "
             "a.o && "
             "head -1 sec && tail -1 sec && "
             "%s cc -c %s/blame_rec.c -o b.o && %s cc a.o b.o -o both && ./both && "
             "objcopy --dump-section .strobe_blame=sec2 both && grep -c '^strobe-blame' sec2 && "
             "grep -c '^end$' sec2 && readelf -S both | grep -c 'strobe_blame.*PROGBITS' && "
             "%s cc --no-blame %s/blame_fix.c -o nob && (readelf -S nob | grep -c strobe_blame || true) && "
             "STROBE_CC=gcc %s cc %s/blame_fix.c -o gccb && (readelf -S gccb | grep -c strobe_blame || true)",
             STROBE, SRC, STROBE, SRC, STROBE, STROBE, SRC, STROBE, SRC);
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, "strobe-blame\t1\t0\nend\n2\n2\n1\n0\n0\n");
    free(out);
}

/* The section is not allocated: it costs the program no memory. */
STROBE_TEST(cc_not_loaded)
{
    const char *tmp = strobe_test_tmpdir("blame_cc_not_loaded");
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s cc %s/blame_fix.c -o fix && readelf -SW fix | awk '/strobe_blame/ {print $8}'", STROBE, SRC);
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, "0\n"); /* flags column: no A */
    free(out);
}

/* C++ through a sampled run: relax() is inlined into main at -O2, its
 * frame comes from DWARF ("relax", the table says "geo::Grid::relax(double)")
 * and is found by its file and line; its exit (*this) passes to main's g.
 * Sampling is not deterministic: nearly every sample is in the loop, and
 * under 5 % miss their caller (the vector's constructor, inlined). */
STROBE_TEST(cxx_sampled)
{
    const char *tmp = strobe_test_tmpdir("blame_cxx_sampled");
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s c++ --trace=func -O2 %s/blame_cxx.cpp -o cxx && %s run --sample -o exp -- ./cxx >/dev/null "
             "2>&1 && "
             "%s report exp --blame --format json | python3 -c \"import json, sys\n"
             "b = json.load(sys.stdin)['blame']\n"
             "v = {(x['function'], x['name']): x['percent'] for x in b['variables']}\n"
             "print(v.get(('geo::Grid::relax(double)', '*this.cells'), 0) > 80, v.get(('main', 'g'), 0) > 80,"
             " b['unknown']['percent'] < 10, b['caller_unknown'] * 20 < b['samples'])\"",
             STROBE, SRC, STROBE, STROBE);
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, "True True True True\n");
    free(out);
}

STROBE_TEST(errors)
{
    char *out;
    int rc = strobe_test_sh(&out, "%s blame-prep /nonexistent.c 2>&1", STROBE);
    CHECK(rc == 1);
    CHECK_STR_EQ(out, "strobe: blame-prep: /nonexistent.c: No such file or directory\n");
    free(out);
    rc = strobe_test_sh(&out, "%s blame-prep %s/blame_fig1.c -g0 2>&1", STROBE, SRC);
    CHECK(rc == 2);
    CHECK_STR_EQ(out, "strobe: blame-prep: -g0: the analysis needs debug information (see 'strobe blame-prep "
                      "--help')\n");
    free(out);
    rc = strobe_test_sh(&out, "%s blame-prep 2>&1", STROBE);
    CHECK(rc == 2);
    free(out);
    /* a file clang refuses: its diagnostics, then one line */
    const char *tmp = strobe_test_tmpdir("blame_errors");
    rc = strobe_test_sh(&out, "cd %s && echo 'int f( {' > bad.c && %s blame-prep bad.c 2>&1 | tail -1", tmp,
                        STROBE);
    CHECK_STR_EQ(out, "strobe: blame-prep: bad.c: clang-14 exited with status 1\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(fig1), STROBE_CASE(fig1_o2), STROBE_CASE(fixture), STROBE_CASE(fixture_o2),
                 STROBE_CASE(recursion), STROBE_CASE(control), STROBE_CASE(fig1_raw),
                 STROBE_CASE(openmp_spawn), STROBE_CASE(cc_section), STROBE_CASE(cc_not_loaded),
                 STROBE_CASE(cxx_sampled), STROBE_CASE(errors))
