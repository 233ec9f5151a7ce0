/* SPDX-License-Identifier: MIT */
/*
 * The HTML report end to end: cli_workload (tests/cli/workload.c, fixed
 * call paths and visit counts) run under `strobe run`, its page written by
 * `strobe report --format html` and loaded in headless Chromium by
 * html_check.py: no console error, no network request, the flat profile's
 * exact visit counts in the DOM (all threads and one thread), a screenshot.
 * Also what bad input and bad options give.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/html_page.h"
#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"
#define CHECKER STROBE_SOURCE_DIR "/tests/report/html_check.py"

/* Records cli_workload into <tmpdir of name>/exp; returns the tmpdir. */
static const char *record(const char *name, char *dir, size_t cap)
{
    const char *tmp = strobe_test_tmpdir(name);
    snprintf(dir, cap, "%s/exp", tmp);
    char *out;
    int rc = strobe_test_sh(&out, "%s run -o '%s' -- %s", STROBE, dir, STROBE_WORKLOAD);
    if (rc != 0)
        STROBE_FAIL("strobe run: exit %d\n%s", rc, out);
    free(out);
    return tmp;
}

/* Runs html_check.py on PAGE with ARGS; fails the test unless it passes.
 * Returns its JSON output (free it). */
static char *check_page(const char *page, const char *args)
{
    char *out;
    int rc = strobe_test_sh(&out, "python3 %s '%s' %s", CHECKER, page, args);
    if (rc != 0)
        STROBE_FAIL("html_check.py %s %s: exit %d\n%s", page, args, rc, out);
    return out;
}

STROBE_TEST(page_of_workload)
{
    /* nothing on the terminal: the page is the output (html_page.h) */
    const char *tmp = strobe_test_html_page("html_page", "", "", STROBE_WORKLOAD);
    char page[8192], args[16384];
    snprintf(page, sizeof page, "%s/page.html", tmp);
    snprintf(args, sizeof args,
             "--screenshot '%s/r.png' --dom '%s/dom.html' "
             "--expect flat-profile:main:visits=1 --expect flat-profile:setup:visits=1 "
             "--expect flat-profile:rec:visits=4 --expect flat-profile:compute:visits=65 "
             "--expect flat-profile:leaf:visits=130 --expect flat-profile:worker:visits=3 "
             "--expect view-threads:3:visits=91 --expect call-paths:main:visits=1 --expect "
             "call-paths:setup:visits=1 "
             "--expect call-paths:compute:visits=5 --expect call-paths:worker:visits=3",
             tmp, tmp);
    free(check_page(page, args));
    /* a real picture, not an empty page: the flame graph and tables are
     * drawn (an empty 1400x1000 PNG is about 5 KB) */
    char png[8192];
    snprintf(png, sizeof png, "%s/r.png", tmp);
    struct stat st;
    CHECK(stat(png, &st) == 0);
    CHECK(st.st_size > 40000);
    /* no temporary file left next to the page (export/output.h names
     * them page.html.tmp-PID-N) */
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && ls -d page.html*", tmp), 0);
    CHECK_STR_EQ(out, "page.html\n");
    free(out);
}

/* The thread selector: thread 2 (the second worker) did compute 20 times
 * and leaf 40 times; its flat profile is summed in the page from the call
 * tree's per-thread statistics. */
STROBE_TEST(thread_selection)
{
    char page[8192];
    snprintf(page, sizeof page, "%s/page.html",
             strobe_test_html_page("html_thread", "", "", STROBE_WORKLOAD));
    free(check_page(page,
                    "--eval \"(() => { const s = document.getElementById('thread-select'); s.value = '2'; "
                    "s.dispatchEvent(new Event('change')); return 1; })()\" "
                    "--expect flat-profile:compute:visits=20 --expect flat-profile:leaf:visits=40 "
                    "--expect flat-profile:worker:visits=1 --expect call-paths:worker:visits=1 "
                    "--expect call-paths:compute:visits=20 --expect call-paths:leaf:visits=40"));
}

/* Several processes: the page compares them without being asked (the
 * view that `--by process` gives). `sh -c 'w; w'` makes five process
 * images: the shell, two forked shells and the two cli_workload images
 * they exec; only the latter have regions. */
STROBE_TEST(processes)
{
    char page[8192], command[8192];
    snprintf(command, sizeof command, "sh -c '%s; %s'", STROBE_WORKLOAD, STROBE_WORKLOAD);
    snprintf(page, sizeof page, "%s/page.html", strobe_test_html_page("html_processes", "", "", command));
    char *out =
        check_page(page, "--eval \"document.querySelector('#view-groups h2').textContent\" "
                         "--eval \"document.getElementById('first-look').textContent\" "
                         "--eval \"document.querySelector('#view-groups table').tBodies[0].rows.length\" "
                         "--expect 'group-paths:main:visits min=0' --expect 'group-paths:main:visits max=1' "
                         "--expect 'group-paths:main > compute > leaf:visits max=10' "
                         "--expect 'group-paths:worker > compute > leaf:visits max=120'");
    CHECK_CONTAINS(out, "\"evals\": [\n  \"Processes\",\n  \"Exclusive timemain ");
    CHECK_CONTAINS(out, "Imbalancemain: the slowest process took ");
    CHECK_CONTAINS(out, "\\u2192 processes\",\n  5\n ]");
    free(out);
}

/* User metrics: examples/annotate records bytes_sent (20 values, sum
 * 4380) and items (1..20) on serve > handle. */
STROBE_TEST(metrics)
{
    const char *tmp = strobe_test_tmpdir("html_metrics");
    char *out;
    int rc = strobe_test_sh(
        &out, "cd '%s' && STROBE_EXPERIMENT_DIR=exp %s >/dev/null && %s report exp --format html -o r.html",
        tmp, STROBE_ANNOTATE, STROBE);
    if (rc != 0)
        STROBE_FAIL("exit %d\n%s", rc, out);
    free(out);
    char page[8192];
    snprintf(page, sizeof page, "%s/r.html", tmp);
    free(check_page(
        page, "--expect 'metric-0:serve > handle:count=20' --expect 'metric-0:serve > handle:sum=210' "
              "--expect 'metric-0:serve > handle:min=1' --expect 'metric-0:serve > handle:max=20' "
              "--expect 'metric-1:serve > handle:count=20' --expect 'metric-1:serve > handle:sum=4380'"));
}

STROBE_TEST(options)
{
    char dir[8192];
    const char *tmp = record("html_options", dir, sizeof dir);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s report '%s' --format html", STROBE, dir), 2);
    CHECK_CONTAINS(out, "--format html needs -o FILE");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s report '%s' -o x.html", STROBE, dir), 2);
    CHECK_CONTAINS(out, "'-o' needs --score or --format html");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s report '%s' --format html --score -o x", STROBE, dir), 2);
    CHECK_CONTAINS(out, "exclude each other");
    free(out);
    /* an unwritable page: one line naming it, exit 1, nothing left */
    CHECK_EQ_INT(
        strobe_test_sh(&out, "%s report '%s' --format html -o '%s/no/such/dir/r.html'", STROBE, dir, tmp), 1);
    CHECK_CONTAINS(out, "/no/such/dir/r.html: cannot create: No such file or directory\n");
    CHECK(strchr(out, '\n') == out + strlen(out) - 1);
    free(out);
    /* a page to a device is written to it, not renamed over it */
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "%s report '%s' --format html -o /dev/stdout | grep -c 'id=\"strobe-data\"'",
                                STROBE, dir),
                 0);
    CHECK_STR_EQ(out, "1\n");
    free(out);
}

/* A damaged experiment never gives a broken page. A cut profile file (the
 * call-path profile every view needs) fails with one line naming it and
 * writes no page; a cut event stream gives the page with that thread's
 * timeline lane ending at the damage, the problem named at its top and in
 * one warning line. */
STROBE_TEST(damaged_experiment)
{
    char dir[8192], page[8192];
    const char *tmp = record("html_damaged", dir, sizeof dir);
    snprintf(page, sizeof page, "%s/r.html", tmp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cp -r '%s' '%s/prof' && truncate -s -3 '%s'/prof/proc-*/t3.prof && "
                                "%s report '%s/prof' --format html -o '%s'",
                                dir, tmp, tmp, STROBE, tmp, page),
                 1);
    CHECK_CONTAINS(out, "t3.prof: offset 24: slot count");
    CHECK(strchr(out, '\n') == out + strlen(out) - 1);
    free(out);
    struct stat st;
    CHECK(stat(page, &st) != 0);

    CHECK_EQ_INT(strobe_test_sh(&out,
                                "truncate -s -3 '%s'/proc-*/t3.evt && %s report '%s' --format html -o '%s'",
                                dir, STROBE, dir, page),
                 0);
    CHECK_CONTAINS(out, "warning: timeline: proc-");
    CHECK_CONTAINS(out, "/t3.evt: offset ");
    CHECK_CONTAINS(out, ": THREAD_END record of "); /* 8 or 9 bytes: varints */
    CHECK_CONTAINS(out, " bytes runs past the end of the file (its lane ends there)\n");
    CHECK(strchr(out, '\n') == out + strlen(out) - 1);
    free(out);
    out = check_page(page, "--eval \"document.querySelector('#view-summary .problem').textContent\" "
                           "--expect flat-profile:leaf:visits=130");
    CHECK_CONTAINS(out, "\"Could not be read: timeline: proc-");
    CHECK_CONTAINS(out, "/t3.evt: offset ");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(page_of_workload), STROBE_CASE(thread_selection), STROBE_CASE(processes),
                 STROBE_CASE(metrics), STROBE_CASE(options), STROBE_CASE(damaged_experiment))
