/* SPDX-License-Identifier: MIT */
/*
 * The HTML report tests' one way to make a page: run a program under
 * `strobe run` and write its report with `strobe report --format html`.
 * Header-only, like test.h.
 */
#ifndef STROBE_TESTS_REPORT_HTML_PAGE_H
#define STROBE_TESTS_REPORT_HTML_PAGE_H

#include <stdlib.h>

#include "test.h"

/* Runs COMMAND, with the variable assignments ENV ("" for none) before
 * `strobe run OPTIONS -o exp`, in the scratch directory of NAME, and
 * writes its report there as page.html. Fails the test, with strobe run's
 * output, unless both succeed, and unless the report prints nothing (the
 * page is its output: a line would be a problem with the experiment).
 * Returns the directory (strobe_test_tmpdir's buffer, until its next
 * call). */
static inline const char *strobe_test_html_page(const char *name, const char *env, const char *options,
                                                const char *command)
{
    const char *dir = strobe_test_tmpdir(name);
    char *out;
    int rc = strobe_test_sh(&out,
                            "cd '%s' && %s " STROBE_BIN_DIR "/strobe run %s -o exp -- %s >run.out 2>&1 || "
                            "{ cat run.out; exit 1; }; " STROBE_BIN_DIR
                            "/strobe report exp --format html -o page.html",
                            dir, env, options, command);
    if (rc != 0 || *out)
        STROBE_FAIL("%s: exit %d\n%s", name, rc, out);
    free(out);
    return dir;
}

#endif
