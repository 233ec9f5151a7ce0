/* SPDX-License-Identifier: MIT */
/*
 * Tests of libstrobe-tm's start-up check (src/tm/imports.c): a program
 * whose TM ABI imports would bind to another runtime, or to nothing, stops
 * before main with one line naming the symbol; a program on libstrobe-tm
 * alone runs. The programs are tm_imports_helper.c, linked four ways.
 */
#include "test.h"

/* Runs a helper; it must exit 127 having printed exactly `line`. */
static void expect_refused(const char *helper, const char *line)
{
    char *out = NULL;
    int st = strobe_test_sh(&out, "%s/%s", STROBE_TEST_BIN_DIR, helper);
    CHECK_STR_EQ(out, line);
    CHECK_EQ_INT(st, 127);
    free(out);
}

STROBE_TEST(symbol_of_another_runtime_refused)
{
    expect_refused("tm_imports_fake",
                   "strobe-tm: _ITM_strobeTestOnly is not provided by strobe's TM runtime; "
                   "the program would mix it with libtm_fake_itm.so\n");
}

STROBE_TEST(missing_symbol_refused)
{
    expect_refused(
        "tm_imports_missing",
        "strobe-tm: _ITM_strobeTestMissing is not provided by strobe's TM runtime, nor by anything "
        "loaded\n");
}

/* libitm linked before libstrobe-tm: every _ITM_ import binds to libitm;
 * the first one met is named. */
STROBE_TEST(libitm_first_refused)
{
    char *out = NULL;
    int st = strobe_test_sh(&out, "%s/tm_imports_libitm_first", STROBE_TEST_BIN_DIR);
    CHECK_EQ_INT(st, 127);
    CHECK(strncmp(out, "strobe-tm: _ITM_", 16) == 0);
    CHECK_CONTAINS(out, " binds to libitm.so.1, which is loaded before strobe's TM runtime; preload "
                        "libstrobe-tm.so or link it before libitm\n");
    CHECK(strchr(out, '\n')[1] == '\0'); /* one line */
    free(out);
}

/* A weak import that nothing defines is the importer's business, and the
 * weak _ITM_ imports of every program (crtbegin's clone table calls) bind
 * to libstrobe-tm. */
STROBE_TEST(program_on_strobe_alone_runs)
{
    char *out = NULL;
    int st = strobe_test_sh(&out, "%s/tm_imports_weak", STROBE_TEST_BIN_DIR);
    CHECK_STR_EQ(out, "ran\n");
    CHECK_EQ_INT(st, 0);
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(symbol_of_another_runtime_refused), STROBE_CASE(missing_symbol_refused),
                 STROBE_CASE(libitm_first_refused), STROBE_CASE(program_on_strobe_alone_runs))
