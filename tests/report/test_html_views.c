/* SPDX-License-Identifier: MIT */
/*
 * The HTML report's analysis views (src/report/html/{tm,samples,locks,
 * malloc,mpi,blame}.js) end to end: a fixture that records one analysis
 * runs under `strobe run`, `strobe report --format html` writes the page,
 * and check_views.py loads it in headless Chromium and prints what each
 * view shows (exact values of the deterministic fixtures: the same as the
 * text report's tests of those fixtures; the blame view's data is written
 * by hand into a page, blame_page.py). A view is there only with its data;
 * a page that logs an error to the console fails the check.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_page.h"
#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"
#define CHECK_VIEWS "python3 " STROBE_SOURCE_DIR "/tests/report/check_views.py"

/* Open MPI refuses root without both variables and more ranks than cores
 * without oversubscription (as tests/adapters/mpi/launch.h). */
#define MPI_ENV                                                                                              \
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "

/* A sanitizer's allocator comes first (ASan) or the runtime interposes no
 * allocation function (TSan), and a TSan runtime does not sample: those
 * cases only run in the plain build. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static char dir[4200];

/* Runs `ENV strobe run OPTIONS -o <name>/exp -- COMMAND`, writes its HTML
 * report and returns what check_views.py saw on the page (the caller
 * frees it); fails the test when any step fails. */
static char *page_of(const char *name, const char *env, const char *options, const char *command)
{
    snprintf(dir, sizeof dir, "%s", strobe_test_html_page(name, env, options, command));
    char *out;
    int rc = strobe_test_sh(&out, "cd '%s' && " CHECK_VIEWS " page.html", dir);
    if (rc != 0)
        STROBE_FAIL("%s: exit %d\n%s", name, rc, out);
    return out;
}

/* The views other than `keep` are absent (none of them has data). */
static void only_view(const char *page, const char *keep)
{
    static const char *const views[] = {"tm", "samples", "locks", "malloc", "mpi", "blame"};
    char line[64];
    for (size_t i = 0; i < sizeof views / sizeof *views; i++) {
        snprintf(line, sizeof line, "view %s\n", views[i]);
        if (keep && strcmp(views[i], keep) == 0)
            CHECK_CONTAINS(page, line);
        else if (strstr(page, line))
            STROBE_FAIL("view %s shown without its data:\n%s", views[i], page);
    }
}

/* The number of lines of page starting with prefix. */
static int lines_with(const char *page, const char *prefix)
{
    int n = 0;
    for (const char *p = page; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

/* The line of `text` in tests/analysis/tm_prog.c. */
static unsigned tm_prog_line(const char *text)
{
    return strobe_test_line_of("tests/analysis/tm_prog.c", text);
}

/* tm_prog (without the lock interposer: the STM's own mutex would add the
 * locks view): block A 1000 transactions (10 cancelled), block B 1 irrevocable,
 * block D (thread 2) rolled back twice by thread 1's commits of block C. */
STROBE_TEST(tm_view)
{
    char *page = page_of("html_tm", "STROBE_TM_HTM=0", "--tm --tm-monitor events --no-locks", STROBE_TM_PROG);
    only_view(page, "tm");
    /* the first look names the blocks whose verdict is not good */
    CHECK_CONTAINS(
        page, "first-look Transactions: atomic@main: serialization (rollback rate 0.0 %), atomic@victim: "
              "contention (rollback rate 66.7 %) \u2192 transactional memory\n");
    char want[512];
    snprintf(
        want, sizeof want,
        "table tm-blocks: block=atomic@main | file:line=tm_prog.c:%u | transactions=1000 | commits=990 | "
        "rollbacks=0 | cancels=10 | rollback rate=0 | ser. irrevocable=0 | ser. max_rollbacks=0 | "
        "ser. other=0 | abort validation=0 | useful=",
        tm_prog_line("/* block A */"));
    CHECK_CONTAINS(page, want);
    snprintf(want, sizeof want,
             "table tm-blocks: block=atomic@main | file:line=tm_prog.c:%u | transactions=1 | commits=1 | "
             "rollbacks=0 | cancels=0 | rollback rate=0 | ser. irrevocable=1 | ",
             tm_prog_line("/* block B */"));
    CHECK_CONTAINS(page, want);
    CHECK_CONTAINS(strstr(page, want), " | verdict=serialization\n");
    snprintf(want, sizeof want,
             "table tm-blocks: block=atomic@victim | file:line=tm_prog.c:%u | transactions=1 | commits=1 | "
             "rollbacks=2 | cancels=0 | rollback rate=0.6666666666666666 | ser. irrevocable=0 | "
             "ser. max_rollbacks=0 | ser. other=0 | abort validation=2 | ",
             tm_prog_line("/* block D */"));
    CHECK_CONTAINS(page, want);
    CHECK_CONTAINS(strstr(page, want), " | verdict=contention\n");
    CHECK_CONTAINS(page, "table tm-threads: block=atomic@victim | thread=t2 | transactions=1 | commits=1 | "
                         "rollbacks=2 | ");
    CHECK_CONTAINS(page, "table tm-threads: block=atomic@culprit | thread=t1 | transactions=2 | commits=2 | "
                         "rollbacks=0 | ");
    /* the victim's time: useful and wasted, and every TMbox state */
    CHECK_EQ_INT(lines_with(page, "bars tm-useful: "), 3);
    CHECK_CONTAINS(page, "bars tm-useful: t2 | committed (useful)=");
    CHECK_CONTAINS(strstr(page, "bars tm-useful: t2 | "), " | aborted or cancelled (wasted)=");
    CHECK_EQ_INT(lines_with(page, "bars tm-states: "), 3);
    CHECK_CONTAINS(page, "bars tm-states: t2 | Compute=");
    CHECK_CONTAINS(strstr(page, "bars tm-states: t2 | "), " | Abort=");
    /* culprit thread 1, victim thread 2, twice; no unknown culprit */
    CHECK_CONTAINS(page, "heatmap tm-aborted-by: t0 | t0=0 | t1=0 | t2=0\n"
                         "heatmap tm-aborted-by: t1 | t0=0 | t1=0 | t2=2\n"
                         "heatmap tm-aborted-by: t2 | t0=0 | t1=0 | t2=0\n"
                         "heatmap tm-aborted-by: unknown | t0=0 | t1=0 | t2=0\n");
    free(page);
    /* thread 2 chosen in the page's selector: its row only */
    CHECK_EQ_INT(strobe_test_sh(&page, "cd '%s' && " CHECK_VIEWS " page.html --thread 2", dir), 0);
    CHECK_EQ_INT(lines_with(page, "table tm-threads: "), 1);
    CHECK_CONTAINS(page, "table tm-threads: block=atomic@victim | thread=t2 | transactions=1 | ");
    CHECK_EQ_INT(lines_with(page, "table tm-blocks: "), 4);
    free(page);
}

/* Level counters: the counts, no times, states or culprits. */
STROBE_TEST(tm_view_counters)
{
    char *page = page_of("html_tm_counters", "STROBE_TM_HTM=0", "--tm --tm-monitor counters --no-locks",
                         STROBE_TM_PROG);
    only_view(page, "tm");
    CHECK_CONTAINS(page, "| transactions=1000 | commits=990 | rollbacks=0 | cancels=10 | rollback rate=0 | ");
    CHECK_CONTAINS(page, "| verdict=good\n");
    CHECK(!strstr(page, "useful=") && !strstr(page, "bars tm-") && !strstr(page, "heatmap tm-"));
    free(page);
}

/* locks_prog mutex: counted_lock 100/200/300 times by t1..t3 from worker >
 * bump and 5 times by main, hot_lock's one contended acquisition first. */
STROBE_TEST(locks_view)
{
    char *page = page_of("html_locks", "", "", STROBE_LOCKS_PROG " mutex");
    only_view(page, "locks");
    CHECK_CONTAINS(page, "first-look Waiting: ");
    CHECK_CONTAINS(strstr(page, "first-look Waiting: "),
                   " on mutex hot_lock from worker > wait_hot \u2192 locks\n");
    CHECK_CONTAINS(page, "view locks\ntable locks-objects: object=hot_lock | kind=mutex | call path=worker > "
                         "wait_hot | acquired=1 | contended=1 | contended %=1 | wait=");
    CHECK_CONTAINS(page, " | threads (acquisitions)=t2:1\n");
    /* the workers bump at the same time (t1 and t2 once hot_lock is free):
     * whether one of their 600 acquisitions found it taken is timing */
    CHECK_CONTAINS(page, "table locks-objects: object=counted_lock | kind=mutex | call path=worker > bump | "
                         "acquired=600 | contended=");
    CHECK_CONTAINS(page, " | threads (acquisitions)=t1:100 t2:200 t3:300\n");
    CHECK_CONTAINS(page, "table locks-objects: object=counted_lock | kind=mutex | call path=main > bump | "
                         "acquired=5 | contended=0 | contended %=0 | wait=0 | max wait=0 | hold=");
    CHECK_CONTAINS(page, " | threads (acquisitions)=t0:5\n");
    CHECK_CONTAINS(page, "table locks-sites: object=hot_lock | kind=mutex | waiting function=wait_hot | "
                         "file:line=locks_prog.c:");
    CHECK_EQ_INT(lines_with(page, "table locks-objects: "), 4);
    CHECK_EQ_INT(lines_with(page, "table locks-barriers: "), 0);
    free(page);

    /* barrier: 3 threads wait 3 times each */
    page = page_of("html_barrier", "", "", STROBE_LOCKS_PROG " barrier");
    CHECK_CONTAINS(page, "table locks-barriers: barrier=bar | episodes=3 | waits=9 | threads=3 | wait=");
    free(page);

    /* without the interposer: no view */
    page = page_of("html_no_locks", "", "--no-locks", STROBE_LOCKS_PROG " mutex");
    only_view(page, NULL);
    free(page);
}

/* prog_malloc paths: the sizes of test_core's malloc_paths_exact. */
STROBE_TEST(malloc_view)
{
    if (SANITIZED)
        return;
    char *page = page_of("html_malloc", "", "--malloc", STROBE_MALLOC_PROG " paths");
    only_view(page, "malloc");
    CHECK_CONTAINS(page, "first-look Memory: 4 blocks (2.25 KiB) still allocated at exit \u2192 memory\n");
    CHECK_CONTAINS(page, " | peak live bytes=2099452 | at=");
    CHECK_CONTAINS(page, " | live at exit=2300 | live blocks=4 | untracked blocks=0 | =\n");
    CHECK_CONTAINS(page,
                   "table malloc-paths: call path=main > f_large | allocations=1 | bytes=2097152 | frees=1 | "
                   "freed bytes=2097152 | live blocks=0 | live bytes=0\n"
                   "table malloc-paths: call path=main > f_mmap | allocations=1 | bytes=12288 | frees=1 | "
                   "freed bytes=12288 | live blocks=0 | live bytes=0\n"
                   "table malloc-paths: call path=main > f_realloc | allocations=3 | bytes=4176 | frees=3 | "
                   "freed bytes=4176 | live blocks=0 | live bytes=0\n"
                   "table malloc-paths: call path=main > f_leak | allocations=2 | bytes=2000 | frees=0 | "
                   "freed bytes=0 | live blocks=2 | live bytes=2000\n");
    CHECK_CONTAINS(page, "table malloc-paths: call path=main | allocations=0 | bytes=0 | frees=1 | "
                         "freed bytes=16 | live blocks=0 | live bytes=0\n");
    CHECK_CONTAINS(page,
                   "table malloc-leaks: allocated on=main > f_leak | thread=t0 | blocks=2 | bytes=2000\n"
                   "table malloc-leaks: allocated on=main > f_calloc | thread=t0 | blocks=1 | bytes=200\n"
                   "table malloc-leaks: allocated on=main > f_memalign | thread=t0 | blocks=1 | bytes=100\n");
    CHECK_EQ_INT(lines_with(page, "table malloc-large: "), 2);
    const char *a = strstr(page, " | event=alloc | call=malloc | "),
               *f = strstr(page, " | event=free | call=free | ");
    CHECK(a && f && a < f);
    CHECK_CONTAINS(a, " | bytes=2097152 | call path=main > f_large\n");
    CHECK_CONTAINS(f, " | bytes=2097152 | call path=main > f_large\n");
    free(page);
}

/* sample_prog lib: sample_spin in a library takes (nearly) every sample;
 * the page shows the JSON report's numbers, and its call tree as a flame
 * graph of every node. */
STROBE_TEST(samples_view)
{
    if (SANITIZED)
        return;
    char *page = page_of("html_samples", "", "--sample", STROBE_SAMPLE_PROG " lib 100000000");
    CHECK_CONTAINS(page, "view samples\n");
    char *want;
    CHECK_EQ_INT(
        strobe_test_sh(&want,
                       "cd '%s' && " STROBE " report exp --samples --format json | python3 -c '"
                       "import json,sys; s=json.load(sys.stdin)[\"samples\"]; f=s[\"functions\"][0]; "
                       "t=s[\"threads\"][0]\n"
                       "print(\"table samples-functions: function=%%s | self=%%d | \" %% (f[\"name\"], "
                       "f[\"self\"]))\n"
                       "print(\"table samples-threads: thread=t0 | samples=%%d | missed=%%d | CPU "
                       "time=%%d | cover=%%r | \" %% (t[\"samples\"], t[\"missed\"], t[\"cpu_ns\"], "
                       "t[\"cover\"]))\n"
                       "print(\"table samples-paths: call path (regions open when sampled)=main > outer | "
                       "samples=%%d | \" %% s[\"paths\"][0][\"samples\"])\n"
                       "print(\"flame samples-flame: nodes=%%d canvas=1\" %% len(s[\"tree\"]))'",
                       dir),
        0);
    char *line = strtok(want, "\n");
    CHECK(strstr(line, "function=sample_spin | "));
    for (; line; line = strtok(NULL, "\n"))
        CHECK_CONTAINS(page, line);
    free(want);
    free(page);
}

/* The 2-rank ping-pong of test_mpi_trace: its exact messages and bytes. */
STROBE_TEST(mpi_view)
{
    char *page =
        page_of("html_mpi", MPI_ENV, "--mpi", STROBE_MPIEXEC " " STROBE_MPIEXEC_NP " 2 " STROBE_PINGPONG);
    CHECK_CONTAINS(page, "view mpi\n");
    CHECK_CONTAINS(page,
                   " | calls=47 | sent=14 | bytes sent=15424 | received=14 | bytes received=15424 | =\n");
    CHECK_EQ_INT(lines_with(page, "table mpi-ranks: "), 2);
    CHECK_CONTAINS(page, "table mpi-functions: function=MPI_Send | calls=22 | time=");
    CHECK_CONTAINS(page, "table mpi-functions: function=MPI_Start | calls=8 | time=");
    CHECK_CONTAINS(page, "heatmap mpi-function-ranks: MPI_Send | rank 0=");
    CHECK_CONTAINS(page, "bars mpi-sizes: 64-127 B | messages=2 | total=2\n"
                         "bars mpi-sizes: 512-1023 B | messages=4 | total=4\n"
                         "bars mpi-sizes: 1024-2047 B | messages=20 | total=20\n"
                         "bars mpi-sizes: 4096-8191 B | messages=2 | total=2\n");
    CHECK_CONTAINS(page, "heatmap mpi-matrix: rank 0 | rank 0=0 | rank 1=15424\n"
                         "heatmap mpi-matrix: rank 1 | rank 0=15424 | rank 1=0\n");
    CHECK_CONTAINS(page,
                   "table mpi-collectives: collective=MPI_Bcast | calls (all ranks)=2 | bytes sent=400 | "
                   "bytes received=400\n");
    CHECK_CONTAINS(page,
                   "table mpi-collectives: collective=MPI_Allreduce | calls (all ranks)=2 | bytes sent=128 | "
                   "bytes received=128\n");
    CHECK(!strstr(page, "view tm\n") && !strstr(page, "view malloc\n") && !strstr(page, "view samples\n"));
    free(page);

    /* a job of 128 ranks (the same page, its MPI section made up by
     * many_ranks.py): every rank in the table, the bytes matrix drawn on a
     * canvas instead of 16384 table cells */
    CHECK_EQ_INT(strobe_test_sh(&page,
                                "cd '%s' && python3 " STROBE_SOURCE_DIR
                                "/tests/report/many_ranks.py page.html 128 "
                                "big.html && " CHECK_VIEWS " big.html",
                                dir),
                 0);
    CHECK_EQ_INT(lines_with(page, "table mpi-ranks: "), 128);
    CHECK_CONTAINS(page, "table mpi-ranks: rank=127 | time in MPI=128000 | MPI %=0.1 | calls=4 | sent=2 | ");
    CHECK_CONTAINS(page, "heatmap mpi-matrix: canvas 128x128\n");
    free(page);
}

/* What check_views.py sees on the page of `dir` with blame_page.py's
 * blame section NAME, after the JavaScript expressions EVALS (check_views
 * arguments, "" for none). */
static char *blame_page(const char *name, const char *evals)
{
    char *out;
    int rc =
        strobe_test_sh(&out,
                       "cd '%s' && python3 " STROBE_SOURCE_DIR "/tests/report/blame_page.py page.html %s "
                       "%s.html && " CHECK_VIEWS " %s.html %s",
                       dir, name, name, name, evals);
    if (rc != 0)
        STROBE_FAIL("%s: exit %d\n%s", name, rc, out);
    return out;
}

/* The blame view on hand-written data (blame_page.py), any page to put it
 * in (locks_prog without the interposer: no other analysis view). */
STROBE_TEST(blame_view)
{
    char *page = page_of("html_blame", "", "--no-locks", STROBE_LOCKS_PROG " mutex");
    only_view(page, NULL);
    free(page);

    /* the paper's Figure 1: a = 50 %, b = 25 %, c = 100 %, no unknown data */
    page = blame_page("fig1", "");
    only_view(page, "blame");
    CHECK_CONTAINS(page,
                   "view blame\n"
                   "table blame-variables: depth=0 | samples=4 | blame %=100 | = | variable=c | type=int | "
                   "kind=local | defined in=fig1 blame_fig1.c:15\n"
                   "table blame-variables: depth=0 | samples=2 | blame %=50 | = | variable=a | type=int | "
                   "kind=local | defined in=fig1 blame_fig1.c:15\n"
                   "table blame-variables: depth=0 | samples=1 | blame %=25 | = | variable=b | type=int | "
                   "kind=local | defined in=fig1 blame_fig1.c:15\n"
                   "table blame-unknown-reasons: reason=no-table | samples=0 | % of all=0 | ");
    CHECK_EQ_INT(lines_with(page, "table blame-variables: "), 3);
    CHECK_EQ_INT(lines_with(page, "table blame-unknown-reasons: "), 4);
    CHECK_EQ_INT(lines_with(page, "table blame-unknown-reasons: reason=no-"), 3);
    CHECK_CONTAINS(page, "table blame-unknown-reasons: reason=measurement | samples=0 | % of all=0 | ");
    CHECK_CONTAINS(page, "bars blame-unknown: all samples | attributed=4 | total=4\n");
    CHECK_CONTAINS(page,
                   "table blame-functions: function=fig1 | defined at=blame_fig1.c:14 | total=4 | self=4 | "
                   "top variable=c | its samples=4 | unknown data=0\n"
                   "table blame-functions: function=main | defined at=blame_fig1.c:23 | total=4 | self=0 | "
                   "top variable=- | its samples=- | unknown data=0\n");
    /* the first blame point (main): all samples stayed in fig1 */
    CHECK_CONTAINS(page,
                   "table blame-point: blame point=main | call path (most common)=main | samples=4 | "
                   "% of all=1\n"
                   "table blame-point-callees: stayed in callee=fig1 | samples=4 | % of the point’s=1\n");
    CHECK_EQ_INT(lines_with(page, "table blame-point-variables: "), 0);
    free(page);
    /* fig1 chosen in the blame point selector */
    page = blame_page("fig1", "--eval \"(() => { const s = document.getElementById('blame-point-select'); "
                              "s.value = '1'; s.dispatchEvent(new Event('change')); return s.value; })()\"");
    CHECK_CONTAINS(page,
                   "table blame-point: blame point=fig1 | call path (most common)=main > fig1 | samples=4 | "
                   "% of all=1\n"
                   "table blame-point-variables: variable=c | samples=4 | blame %=100 | type=int | "
                   "defined in=fig1 blame_fig1.c:15\n"
                   "table blame-point-variables: variable=a | samples=2 | blame %=50 | type=int | "
                   "defined in=fig1 blame_fig1.c:15\n"
                   "table blame-point-variables: variable=b | samples=1 | blame %=25 | type=int | "
                   "defined in=fig1 blame_fig1.c:15\n");
    CHECK_EQ_INT(lines_with(page, "table blame-point-callees: "), 0);
    free(page);

    /* display children: closed at first, a global, unknown data */
    page = blame_page("parts", "");
    CHECK_CONTAINS(page, "view blame\n"
                         "table blame-variables: depth=0 | samples=6 | blame %=60 | = | variable=p | "
                         "type=struct pt | kind=local | defined in=main fix.c:10\n"
                         "table blame-variables: depth=0 | samples=3 | blame %=30 | = | variable=h | "
                         "type=double * | kind=local | defined in=main fix.c:11\n"
                         "table blame-variables: depth=0 | samples=1 | blame %=10 | = | variable=total | "
                         "type=long | kind=global | defined in=global\n"
                         "table blame-unknown-reasons: reason=no-table | samples=1 | % of all=0.1 | ");
    CHECK_CONTAINS(page, "table blame-unknown-reasons: reason=no-variable | samples=1 | % of all=0.1 | ");
    CHECK_CONTAINS(
        page, "bars blame-unknown: all samples | attributed=8 | no-table=1 | no-variable=1 | total=10\n");
    CHECK_CONTAINS(page, "table blame-functions: function=main | defined at=fix.c:8 | total=10 | self=7 | "
                         "top variable=p | its samples=6 | unknown data=2\n"
                         "table blame-functions: function=fill | defined at=fix.c:3 | total=3 | self=3 | "
                         "top variable=h[] | its samples=3 | unknown data=0\n");
    CHECK_CONTAINS(page, "table blame-point-callees: stayed in callee=fill | samples=3 | "
                         "% of the point’s=0.3\n");
    free(page);
    /* all opened, then sorted by name: each child indented under its parent */
    page = blame_page("parts",
                      "--eval \"document.querySelector('[data-table=blame-variables] .open-all').click()\" "
                      "--eval \"document.querySelectorAll('[data-table=blame-variables] th')[3].click()\"");
    CHECK_CONTAINS(page, "view blame\n"
                         "table blame-variables: depth=0 | samples=3 | blame %=30 | = | variable=h | "
                         "type=double * | kind=local | defined in=main fix.c:11\n"
                         "table blame-variables: depth=1 | samples=3 | blame %=30 | = | variable=h[] | "
                         "type=double | kind=heap | defined in=main fix.c:12\n"
                         "table blame-variables: depth=0 | samples=6 | blame %=60 | = | variable=p | "
                         "type=struct pt | kind=local | defined in=main fix.c:10\n"
                         "table blame-variables: depth=1 | samples=4 | blame %=40 | = | variable=p.x | "
                         "type=double | kind=field | defined in=main fix.c:10\n"
                         "table blame-variables: depth=1 | samples=2 | blame %=20 | = | variable=p.y | "
                         "type=double | kind=field | defined in=main fix.c:10\n"
                         "table blame-variables: depth=0 | samples=1 | blame %=10 | = | variable=total | "
                         "type=long | kind=global | defined in=global\n");
    free(page);

    /* 1000 variables with a field each: the first 200, then all of them
     * after "show all", with their fields after "open all" */
    page = blame_page("many", "");
    CHECK_EQ_INT(lines_with(page, "table blame-variables: "), 200);
    CHECK_CONTAINS(page,
                   "view blame\n"
                   "table blame-variables: depth=0 | samples=1000 | blame %=0.2 | = | variable=v1000 | ");
    CHECK_CONTAINS(page, "| variable=v801 | ");
    CHECK(!strstr(page, "| variable=v800 | "));
    free(page);
    page = blame_page("many", "--eval \"document.querySelector('#view-blame .show-all').click()\" "
                              "--eval \"document.querySelector('#view-blame .open-all').click()\"");
    CHECK_EQ_INT(lines_with(page, "table blame-variables: depth=0 | "), 1000);
    CHECK_EQ_INT(lines_with(page, "table blame-variables: depth=1 | "), 1000);
    CHECK_CONTAINS(page, "table blame-variables: depth=0 | samples=1 | blame %=0 | = | variable=v1 | "
                         "type=struct s | kind=local | defined in=work fix.c:1\n"
                         "table blame-variables: depth=1 | samples=0 | blame %=0 | = | variable=v1.f | "
                         "type=double | kind=field | defined in=work fix.c:1\n");
    free(page);
}

STROBE_TEST_MAIN(STROBE_CASE(tm_view), STROBE_CASE(tm_view_counters), STROBE_CASE(locks_view),
                 STROBE_CASE(malloc_view), STROBE_CASE(samples_view), STROBE_CASE(mpi_view),
                 STROBE_CASE(blame_view))
