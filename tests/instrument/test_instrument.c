/* SPDX-License-Identifier: MIT */
/*
 * `strobe instrument` (src/instrument): regions.c rewritten, built with gcc
 * and clang at -Wall -Wextra -Werror, behaves as the original (same output,
 * same __LINE__) with and without strobe's runtime, and under `strobe run`
 * each directive is a region with its exact visits, named at the original
 * file and line. Malformed directives are refused with FILE:LINE and exit
 * status 2, and no output is left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"
#define SRC STROBE_SOURCE_DIR "/tests/instrument"

static void check_str(const char *tmp, const char *cmd, const char *want)
{
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, want);
    free(out);
}

/* Instruments regions.c into TMP/r.c and builds it with CC. */
static void build(const char *tmp, const char *cc)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s instrument %s/regions.c -o r.c && %s -O2 -Wall -Wextra -Werror -I%s/include r.c -o r && "
             "%s -O2 %s/regions.c -o plain",
             STROBE, SRC, cc, STROBE_SOURCE_DIR, cc, SRC);
    free(strobe_test_ok_in(tmp, cmd));
}

static void same_and_measured(const char *tmp, const char *cc)
{
    build(tmp, cc);
    char want[64];
    snprintf(want, sizeof want, "total 191 line %u\n",
             strobe_test_line_of("tests/instrument/regions.c", "LINE_MARK"));
    check_str(tmp, "./plain 10", want);
    check_str(tmp, "./r 10", want); /* no runtime: the weak references are null */
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "%s run -o exp -- ./r 10 >/dev/null 2>&1 && %s report exp --format json | python3 -c '"
             "import json, sys\n"
             "r = json.load(sys.stdin)\n"
             "names = {x[\"id\"]: x for x in r[\"regions\"]}\n"
             "rows = sorted((names[f[\"region\"]][\"name\"], f[\"visits\"], names[f[\"region\"]][\"line\"]) "
             "for f in r[\"flat\"])\n"
             "print(\" \".join(\"%%s=%%d@%%d\" %% x for x in rows))'",
             STROBE, STROBE);
    char expect[256];
    snprintf(expect, sizeof expect, "braced=10@%u early=10@%u loop=10@%u single=10@%u\n",
             strobe_test_line_of("tests/instrument/regions.c", "_Pragma(\"strobe region(braced)\")"),
             strobe_test_line_of("tests/instrument/regions.c", "#pragma strobe region(early)"),
             strobe_test_line_of("tests/instrument/regions.c", "#pragma strobe region begin(loop)"),
             strobe_test_line_of("tests/instrument/regions.c", "#pragma strobe region(single)"));
    check_str(tmp, cmd, expect);
}

STROBE_TEST(gcc_regions)
{
    same_and_measured(strobe_test_tmpdir("instrument_gcc"), "gcc");
}

STROBE_TEST(clang_regions)
{
    same_and_measured(strobe_test_tmpdir("instrument_clang"), "clang");
}

/* Each malformed input: exit 2, FILE:LINE: why, no output file. */
STROBE_TEST(bad_directives)
{
    const char *tmp = strobe_test_tmpdir("instrument_bad");
    static const struct {
        const char *src, *why;
    } cases[] = {
        {"void f(void)\n{\n#pragma strobe region end(a)\n}\n",
         "bad.c:3: region end without its begin (regions nest): a"},
        {"void f(void)\n{\n#pragma strobe region begin(a)\n}\n", "bad.c:3: region begin without its end: a"},
        {"void f(void)\n{\n#pragma strobe regoin(a)\n}\n",
         "bad.c:3: unknown strobe pragma (region begin(NAME), region end(NAME), region(NAME), off, on): "
         "regoin ( a )"},
        {"void f(void)\n{\n  int x = 0;\n  (void)x;\n#pragma strobe region(a)\n}\n",
         "bad.c:5: region is not followed by a statement in its block: a"},
        {"#pragma strobe on\n", "bad.c:1: strobe on without off"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/bad.c", tmp);
        FILE *f = fopen(path, "w");
        CHECK(f && fputs(cases[i].src, f) >= 0 && fclose(f) == 0);
        char *out;
        CHECK_EQ_INT(
            strobe_test_sh(&out, "cd '%s' && rm -f out.c && %s instrument bad.c -o out.c", tmp, STROBE), 2);
        char want[512];
        snprintf(want, sizeof want, "strobe: instrument: %s\n", cases[i].why);
        CHECK_STR_EQ(out, want);
        free(out);
        check_str(tmp, "test -e out.c && echo left || echo none", "none\n");
    }
    /* a file that does not compile: libclang's first error, exit 1 */
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && printf 'int f(void) { return x; }\\n' > bad.c && "
                                "%s instrument bad.c -o out.c",
                                tmp, STROBE),
                 1);
    CHECK_CONTAINS(out, "bad.c:1:22: error: use of undeclared identifier 'x'");
    free(out);
}

/* COMPILER-ARGS, everything after `--`, reach libclang's parse whichever
 * order strobe's own arguments are in: a file that needs -DVALUE=...
 * parses only with it. */
STROBE_TEST(compiler_args)
{
    const char *tmp = strobe_test_tmpdir("instrument_args");
    free(strobe_test_ok_in(
        tmp, "printf 'int f(void)\n{\n#pragma strobe region(v)\n    return VALUE;\n}\n' > v.c"));
    static const char *const forms[] = {
        "v.c -o out.c -- -DVALUE=3",
        "-o out.c v.c -- -DVALUE=3",
    };
    char cmd[512];
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        snprintf(cmd, sizeof cmd, "rm -f out.c && %s instrument %s && grep -c 'return VALUE; }' out.c",
                 STROBE, forms[i]);
        check_str(tmp, cmd, "1\n");
    }
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && %s instrument v.c -o out.c", tmp, STROBE), 1);
    CHECK_CONTAINS(out, "v.c:4:12: error: use of undeclared identifier 'VALUE'");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && %s instrument v.c w.c -o out.c -- -DVALUE=3", tmp, STROBE),
                 2);
    CHECK_CONTAINS(out, "unexpected argument 'w.c' (compiler arguments go after --)");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(gcc_regions), STROBE_CASE(clang_regions), STROBE_CASE(bad_directives),
                 STROBE_CASE(compiler_args))
