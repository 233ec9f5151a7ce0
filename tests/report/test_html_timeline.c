/* SPDX-License-Identifier: MIT */
/*
 * The timelines of the HTML report, end to end: `strobe report --format
 * html` of real runs of tests/cli's fixtures, the data decoded by
 * check_timeline_data.py (exactly as the page's timeline.js decodes it):
 * every frame of the deterministic workload as a bar on its row, and the
 * TMbox states of a --tm-monitor events run; and both views drawn by
 * headless Chromium without an error, one lane per thread.
 */
#include <stdlib.h>
#include <string.h>

#include "report/html_page.h"
#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"
#define CHECK_DATA "python3 " STROBE_SOURCE_DIR "/tests/report/check_timeline_data.py"
/* page.html of the current directory in headless Chromium: exit 0 when it
 * is drawn without a console error or a network request */
#define HTML_CHECK "python3 " STROBE_SOURCE_DIR "/tests/report/html_check.py page.html"
/* the lanes of view ID (its hidden list): intervals per thread, "-" for a
 * thread without a trace */
#define LANES(id)                                                                                            \
    " --eval 'Array.from(document.querySelectorAll(\"#view-" id " li[data-thread]\"), l => "                 \
    "l.dataset.traced === \"1\" ? l.dataset.intervals : \"-\").join(\" \")'"

/* PROG's page (html_page.h) in the scratch directory NAME, recorded with
 * OPTIONS on the STM's software path; returns the directory. */
static const char *page_of(const char *name, const char *options, const char *prog)
{
    return strobe_test_html_page(name, "STROBE_TM_HTM=0", options, prog);
}

/* cli_workload's 204 frames (tests/cli/workload.c), all exact: main's
 * thread nests setup > rec x4 six deep; each worker runs 10 k computes of
 * 2 leaves (k = 1, 2, 3, in the order the threads were created). */
STROBE_TEST(workload_frames)
{
    const char *dir = page_of("html_tl_workload", "", CLI_BIN_DIR "/cli_workload");
    char *out = strobe_test_ok_in(dir, CHECK_DATA " page.html timeline");
    CHECK(strncmp(out, "0 6 21 21 0: main | compute,setup | leaf,rec | rec | rec | rec\n", 63) == 0);
    CHECK_CONTAINS(out, " 3 31 31 0: worker | compute | leaf\n");
    CHECK_CONTAINS(out, " 3 61 61 0: worker | compute | leaf\n");
    CHECK_CONTAINS(out, " 3 91 91 0: worker | compute | leaf\n");
    free(out);
    /* not a TM run: no state timeline */
    CHECK_EQ_INT(strobe_test_sh(NULL, "cd '%s' && " CHECK_DATA " page.html tm_timeline", dir), 1);
}

/* In the page: whether the time range starts at 0; a wheel turn (zoom in)
 * over the middle of the chart; thread 2 selected, the canvases left. */
#define FROM_ZERO "document.querySelector(\"#view-timeline .range\").textContent.startsWith(\"0 ns\")"
#define WHEEL                                                                                                \
    "document.querySelector(\"#view-timeline canvas\").dispatchEvent(new WheelEvent(\"wheel\", "             \
    "{deltaY: -100, clientX: 600, clientY: 60, cancelable: true}))"
#define SELECT_T2 "strobe.state.thread = 2, strobe.emit(\"thread\"), "
#define CANVASES "document.querySelectorAll(\"#view-timeline canvas\").length"
/* all threads again, the whole run, the pointer near the end of t0's
 * first row (main's bar: main ends the run, but it may begin late in it,
 * after a slow start-up such as ASan's): the tooltip's text */
#define HOVER_MAIN                                                                                           \
    "strobe.state.thread = -1, strobe.emit(\"thread\"), "                                                    \
    "Array.from(document.querySelectorAll(\"#view-timeline button\")).pop().click(), "                       \
    "(c => { const r = c.getBoundingClientRect(); c.dispatchEvent(new MouseEvent(\"mousemove\", "            \
    "{clientX: r.left + 190 + (r.width - 190) * 0.97, clientY: r.top + 29})); })"                            \
    "(document.querySelector(\"#view-timeline canvas\")), document.getElementById(\"tooltip\").textContent"

/* The page in headless Chromium (tests/report/html_check.py): the
 * Timeline is drawn with no console error, one lane per thread; the
 * mouse wheel zooms in around the pointer; selecting a thread redraws
 * one lane; a bar's tooltip names its region, thread and source. */
STROBE_TEST(workload_page_drawn)
{
    const char *dir = page_of("html_tl_dom", "", CLI_BIN_DIR "/cli_workload");
    char *out = strobe_test_ok_in(
        dir, HTML_CHECK LANES("timeline") " --eval '" FROM_ZERO "' --eval '(" WHEEL ", " FROM_ZERO
                                          ")' --eval '(" SELECT_T2 CANVASES ")' --eval '(" HOVER_MAIN ")'");
    /* main's thread first, then the workers in creation order; the whole
     * run shown, then zoomed in (no longer from 0); still one canvas */
    CHECK_CONTAINS(out, "\"evals\": [\n  \"21 ");
    CHECK_CONTAINS(out, "\n  true,\n  false,\n  1,\n  \"mainthread");
    CHECK_CONTAINS(out, "workload.c:");
    free(out);
}

/* 100 committed transactions of one thread: 100 Compute intervals, and
 * the view drawn with its one lane. */
STROBE_TEST(tm_states)
{
    const char *dir = page_of("html_tl_tm", "--tm-monitor events", CLI_BIN_DIR "/cli_tm_workload");
    char *out = strobe_test_ok_in(dir, CHECK_DATA " page.html tm_timeline");
    CHECK_CONTAINS(out, "0 1 100 100 0: Compute\n");
    free(out);
    out = strobe_test_ok_in(dir, HTML_CHECK LANES("tm-timeline"));
    CHECK_CONTAINS(out, "\"evals\": [\n  \"100\"\n ]");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(workload_frames), STROBE_CASE(workload_page_drawn), STROBE_CASE(tm_states))
