/* SPDX-License-Identifier: MIT */
/*
 * The pass of `strobe cc --trace=bb[,mem]` (src/cc): fixtures built with
 * it at -O0 and -O2 are linked with bbrt.c, a runtime of their own that
 * keeps the block stream in memory and decodes it against the registered
 * tables at exit. Exact block counts of a loop of known trip count, the
 * exact addresses of struct-array accesses (as the program prints them),
 * elided and constant addresses reconstructed, address bytes per event;
 * and an instrumented program run with no runtime at all (and under
 * `strobe run`) behaves as the plain build; through strobe's runtime,
 * `strobe report` counts what bbrt.c decodes, also of a run sampled by
 * `strobe run --sample`.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"
#define SRC STROBE_SOURCE_DIR "/tests/cc"

/* Builds FIXTURE (bb_loop, bb_mem, bb_far) with strobe cc FLAGS and bbrt.c into
 * TMP/prog, runs it with ARG, leaves its stdout in TMP/stdout and the
 * decoded stream in TMP/bb. */
static void build_and_run(const char *tmp, const char *fixture, const char *flags, const char *arg)
{
    char *out;
    int rc = strobe_test_sh(
        &out,
        "cd '%s' && clang -O2 -c -I%s/src %s/bbrt.c -o bbrt.o && %s cc %s %s/%s.c bbrt.o -o prog "
        "&& BBRT_OUT=bb BBRT_MEM=1 ./prog %s > stdout",
        tmp, STROBE_SOURCE_DIR, SRC, STROBE, flags, SRC, fixture, arg);
    if (rc != 0)
        STROBE_FAIL("%s %s: exit %d\n%s", fixture, flags, rc, out);
    free(out);
}

static void check_str(const char *tmp, const char *cmd, const char *want)
{
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, want);
    free(out);
}

/* Only block, mem, bytes and heads lines: the decoder found nothing
 * wrong. */
static void check_clean(const char *tmp)
{
    check_str(tmp, "grep -cv '^block \\|^mem \\|^bytes \\|^heads \\|^repeats ' bb || true", "0\n");
}

/* main calls sink() 1000 times: sink's segments run 1000 times, and so
 * does the segment after the call in the loop (LOOP_CALL's line). The
 * module has fewer than 32 segments: every head is a 1-byte NEAR. */
static void loop_counts(const char *tmp, const char *flags)
{
    build_and_run(tmp, "bb_loop", flags, "1000");
    check_str(tmp, "cat stdout", "total 499500\n");
    check_clean(tmp);
    check_str(tmp, "awk '$1==\"block\" && $2==\"sink\" {print $5}' bb | sort -u", "1000\n");
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "awk '$1==\"block\" && $2==\"main\" && $3==%u && $5==1000 {n++} END {print (n > 0)}' bb",
             strobe_test_line_of("tests/cc/bb_loop.c", "LOOP_CALL"));
    check_str(tmp, cmd, "1\n");
    check_str(tmp, "awk '$1==\"block\" {b+=$5} $1==\"heads\" {print ($2==b), $3}' bb", "1 0\n");
}

STROBE_TEST(loop_o0)
{
    loop_counts(strobe_test_tmpdir("bbpass_loop_o0"), "--trace=bb,mem -O0");
}

STROBE_TEST(loop_o2)
{
    loop_counts(strobe_test_tmpdir("bbpass_loop_o2"), "--trace=bb,mem -O2");
}

/* Level bb: the same counts, no address in the stream. */
STROBE_TEST(loop_bb_only)
{
    const char *tmp = strobe_test_tmpdir("bbpass_loop_bb");
    loop_counts(tmp, "--trace=bb -O2");
    check_str(tmp, "grep -c '^mem ' bb || true", "0\n");
}

/* fill()'s stores of r[i].a (FILL_A) and r[i].d (FILL_D) are at the
 * addresses main printed, in order; counter++ (COUNTER) reads and writes
 * &counter, a constant of the table. */
static void mem_accesses(const char *tmp, const char *flags)
{
    build_and_run(tmp, "bb_mem", flags, "4");
    check_clean(tmp);
    char cmd[256];
    char *want = strobe_test_ok_in(tmp, "awk '$1==\"a\" || $1==\"d\" {print $2}' stdout");
    snprintf(cmd, sizeof cmd,
             "awk '$1==\"mem\" && $2==\"fill\" && $3==\"S\" && ($6==%u || $6==%u) {print $5}' bb",
             strobe_test_line_of("tests/cc/bb_mem.c", "FILL_A"),
             strobe_test_line_of("tests/cc/bb_mem.c", "FILL_D"));
    char *got = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(got, want);
    CHECK(strlen(want) > 0);
    free(want);
    free(got);
    want = strobe_test_ok_in(tmp,
                             "awk '$1==\"counter\" {print \"L\", $2, \"C\"; print \"S\", $2, \"C\"}' stdout");
    snprintf(cmd, sizeof cmd, "awk '$1==\"mem\" && $6==%u {print $3, $5, $7}' bb",
             strobe_test_line_of("tests/cc/bb_mem.c", "COUNTER"));
    got = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(got, want);
    free(want);
    free(got);
}

STROBE_TEST(mem_o0)
{
    mem_accesses(strobe_test_tmpdir("bbpass_mem_o0"), "--trace=bb,mem -O0");
}

/* At -O2 r[i].d is elided (a static offset of r[i].a): 8 events in fill,
 * 4 addresses recorded, in 4 runs of the loop's segment: the first with
 * an escape (8 bytes), the second with a delta of 32 (2 bytes), the third
 * with the stride again (a mask bit), each with one mask byte; the fourth
 * repeats the third, a 2-byte REPEAT record: 3 + 8 + 2 + 2 bytes. */
STROBE_TEST(mem_o2)
{
    const char *tmp = strobe_test_tmpdir("bbpass_mem_o2");
    mem_accesses(tmp, "--trace=bb,mem -O2");
    char want[64];
    snprintf(want, sizeof want, "4 S 4 %u R\n4 S 8 %u E\n",
             strobe_test_line_of("tests/cc/bb_mem.c", "FILL_A"),
             strobe_test_line_of("tests/cc/bb_mem.c", "FILL_D"));
    check_str(tmp,
              "awk '$1==\"mem\" && $2==\"fill\" {print $3, $4, $6, $7}' bb | sort | uniq -c | sed 's/^ *//'",
              want);
    check_str(tmp, "grep '^bytes fill' bb", "bytes fill 8 15\n");
    check_str(tmp, "awk '$1==\"block\" && $2==\"fill\" && $5==4 {n++} END {print n}' bb", "1\n");
}

/* fill()'s loop unrolled 8 times indexes v[i | 1] .. v[i | 7] (i steps by
 * 8 from 0): 7 of every 8 stores are static offsets of the first, elided;
 * of n = 10, the remainder loop's 2 are recorded. Each decoded address is
 * the one main printed, in order. */
STROBE_TEST(unrolled_offsets)
{
    const char *tmp = strobe_test_tmpdir("bbpass_unroll");
    build_and_run(tmp, "bb_unroll", "--trace=bb,mem -O2", "10");
    check_clean(tmp);
    check_str(tmp, "grep sum stdout", "sum 45\n");
    char cmd[160];
    unsigned line = strobe_test_line_of("tests/cc/bb_unroll.c", "UNROLLED");
    char *want = strobe_test_ok_in(tmp, "awk '$1==\"v\" {print $2}' stdout");
    snprintf(cmd, sizeof cmd, "awk '$1==\"mem\" && $2==\"fill\" && $6==%u {print $5}' bb", line);
    char *got = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(got, want);
    free(want);
    free(got);
    check_str(tmp, "awk '$1==\"mem\" && $2==\"fill\" {print $7}' bb | sort | uniq -c | sed 's/^ *//'",
              "7 E\n3 R\n");
    check_str(tmp, "grep repeats bb", "repeats 0\n");

    /* n = 1000: 125 runs of the unrolled body, no remainder; after 2
     * records that set the stride and one all-hit record, one REPEAT
     * record counts the other 122 runs, and so in main's summing loop */
    build_and_run(tmp, "bb_unroll", "--trace=bb,mem -O2", "1000");
    check_clean(tmp);
    check_str(tmp, "grep sum stdout", "sum 499500\n");
    want = strobe_test_ok_in(tmp, "awk '$1==\"v\" {print $2}' stdout");
    got = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(got, want);
    free(want);
    free(got);
    check_str(tmp, "awk '$1==\"block\" && $2==\"fill\" && $5==125 {n++} END {print n}' bb", "1\n");
    check_str(tmp, "grep repeats bb", "repeats 2\n");
    /* fill's bytes: 1 + 8 (the escape), 1 + 2 (the new stride), 1, 2 */
    check_str(tmp, "grep '^bytes fill' bb", "bytes fill 1000 15\n");
}

/* main's segments are more than 31 ids after f0's (the module's first
 * segment) and within 31 of f39's: each iteration switches from main to
 * f0 and back with 3-byte BLOCK heads, and so does the first record
 * (main's first segment, from the chunk's previous id 0); every other
 * head is a 1-byte NEAR. */
STROBE_TEST(far_ids)
{
    const char *tmp = strobe_test_tmpdir("bbpass_far");
    build_and_run(tmp, "bb_far", "--trace=bb -O2", "500");
    check_str(tmp, "cat stdout", "sum 269000 calls 1000\n");
    check_clean(tmp);
    check_str(tmp, "awk '$1==\"block\" && ($2==\"f0\" || $2==\"f39\") {print $2, $4, $5}' bb",
              "f0 1 500\nf39 40 500\n");
    check_str(tmp, "awk '$1==\"block\" {b+=$5} $1==\"heads\" {print $2 + $3 == b, $3}' bb", "1 1001\n");
}

/* Built with --trace=bb,mem, a program needs no runtime: it runs as the
 * plain build does, alone and under `strobe run` (whose runtime may lack
 * the block tracing entry points). */
STROBE_TEST(no_runtime)
{
    const char *tmp = strobe_test_tmpdir("bbpass_no_runtime");
    for (int o = 0; o <= 2; o += 2) {
        char *plain, *traced, *run;
        CHECK_EQ_INT(strobe_test_sh(&plain,
                                    "cd '%s' && clang -O%d %s/bb_loop.c -o plain && ./plain 777 && "
                                    "clang -O%d %s/bb_mem.c -o plain && ./plain 50 | grep sum",
                                    tmp, o, SRC, o, SRC),
                     0);
        CHECK_EQ_INT(
            strobe_test_sh(&traced,
                           "cd '%s' && %s cc --trace=bb,mem -O%d %s/bb_loop.c -o loop && ./loop 777 && "
                           "%s cc -O%d %s/bb_mem.c -o mem && ./mem 50 | grep sum",
                           tmp, STROBE, o, SRC, STROBE, o, SRC),
            0);
        CHECK_EQ_INT(strobe_test_sh(&run,
                                    "cd '%s' && %s run -o loop%d -- ./loop 777 2>/dev/null && "
                                    "%s run -o mem%d -- ./mem 50 2>/dev/null | grep sum",
                                    tmp, STROBE, o, STROBE, o),
                     0);
        CHECK_STR_EQ(traced, plain);
        CHECK_STR_EQ(run, plain);
        CHECK_STR_EQ(plain, "total 301476\nsum 4900\n");
        free(plain);
        free(traced);
        free(run);
        char *syms;
        CHECK_EQ_INT(strobe_test_sh(&syms, "cd '%s' && nm mem | grep -c 'strobe.bb.module'", tmp), 0);
        CHECK_STR_EQ(syms, "1\n");
        free(syms);
    }
}

/* Two modules compiled apart, each registered with ids of its own: the
 * segment of twice() (its only one) runs N times. */
STROBE_TEST(two_modules)
{
    const char *tmp = strobe_test_tmpdir("bbpass_two");
    char *out;
    int rc = strobe_test_sh(
        &out,
        "cd '%s' && clang -O2 -c -I%s/src %s/bbrt.c -o bbrt.o && %s cc -O2 -c %s/bb_two_lib.c && "
        "%s cc -O2 %s/bb_two.c bb_two_lib.o bbrt.o -o prog && BBRT_OUT=bb ./prog 300",
        tmp, STROBE_SOURCE_DIR, SRC, STROBE, SRC, STROBE, SRC);
    CHECK_EQ_INT(rc, 0);
    CHECK_STR_EQ(out, "sum 89700\n");
    free(out);
    check_clean(tmp);
    check_str(tmp, "awk '$1==\"block\" && $2==\"twice\" {print $4, $5}' bb", "1 300\n");
    check_str(tmp, "awk '$1==\"block\" && $2==\"main\" && $5==300 {n++} END {print (n > 0)}' bb", "1\n");
}

/* Whether libstrobe.so has the block tracing runtime (core/bb.c); says
 * the case is skipped when not. */
static bool bb_runtime(void)
{
    char *has;
    strobe_test_sh(&has, "nm -D %s/libstrobe.so | grep -c ' T strobe_bb_refill$'", STROBE_LIB_DIR);
    bool runtime = strcmp(has, "1\n") == 0;
    free(has);
    if (!runtime)
        printf("skipped: this libstrobe.so has no block tracing runtime\n");
    return runtime;
}

/* Through strobe's runtime (core/bb.c) when libstrobe.so has it: `strobe
 * report` counts the blocks, reads and writes bbrt.c decodes from the
 * same program. */
STROBE_TEST(through_strobe_run)
{
    const char *tmp = strobe_test_tmpdir("bbpass_strobe_run");
    if (!bb_runtime())
        return;
    build_and_run(tmp, "bb_mem", "--trace=bb,mem -O2", "4");
    char *want = strobe_test_ok_in(
        tmp, "awk '$1==\"block\" {b+=$5} $1==\"mem\" && $3==\"L\" {r++} $1==\"mem\" && $3==\"S\" {w++} "
             "END {print b, r, w}' bb");
    CHECK_STR_EQ(want, "26 10 9\n");
    free(want);
    check_str(tmp,
              "" STROBE " cc --trace=bb,mem -O2 " SRC "/bb_mem.c -o traced && " STROBE
              " run -o exp -- ./traced 4 "
              ">/dev/null 2>&1 && " STROBE " report exp | awk '$1==\"blocks\" {b=$2} $1==\"memory\" && "
              "$2==\"events\" {r=$3; w=$5} END {print b, r, w}'",
              "26 10 9\n");
}

/* Sampled (--sample) at -O0, where a function's copy of its cursor lives
 * on the stack and runs ahead of the thread's: the SIGPROF handler's
 * stack walk (libunwind locks a mutex) recorded the lock as the
 * program's, and its MARK at the thread's cursor overwrote the loop's
 * last records ("block id ... is not in blocks"). main's loop runs 4
 * segments per call of sin(), 5 loads and 2 stores. */
STROBE_TEST(sampled_o0)
{
    const char *tmp = strobe_test_tmpdir("bbpass_sampled_o0");
    if (!bb_runtime())
        return;
    const char *levels[] = {"bb,mem", "bb"};
    const char *want[] = {"12000007 15000007 6000006\n", "12000007 0 0\n"};
    for (int i = 0; i < 2; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "rm -rf exp && " STROBE " cc --trace=%s -O0 " SRC "/bb_sample.c -o sampled -lm && " STROBE
                 " run --sample=1000 -o exp -- ./sampled 3000000 >/dev/null 2>&1 && " STROBE
                 " report exp | awk '$1==\"blocks\" {b=$2} $1==\"memory\" && $2==\"events\" {r=$3; w=$5} "
                 "END {print b, r, w}'",
                 levels[i]);
        check_str(tmp, cmd, want[i]);
    }
    /* nor is that lock in the report: the program locks nothing */
    check_str(tmp, STROBE " report exp --locks | grep -c '^  none (no lock'", "1\n");
}

STROBE_TEST_MAIN(STROBE_CASE(loop_o0), STROBE_CASE(loop_o2), STROBE_CASE(loop_bb_only), STROBE_CASE(mem_o0),
                 STROBE_CASE(mem_o2), STROBE_CASE(unrolled_offsets), STROBE_CASE(far_ids), STROBE_CASE(no_runtime), STROBE_CASE(two_modules),
                 STROBE_CASE(through_strobe_run), STROBE_CASE(sampled_o0))
