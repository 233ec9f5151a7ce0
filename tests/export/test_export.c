/* SPDX-License-Identifier: MIT */
/*
 * Tests of the exporters (src/export) on the experiment written by
 * make_experiment.c and read back through strobe_analysis: every event,
 * name, timestamp and profile value of the output is checked exactly by the
 * check_*.py scripts next to this file (python3 json / xml.etree, otf2-print,
 * tar). Also: the escapers byte by byte, failure paths (nothing partial is
 * left behind), and an end-to-end run of a real -finstrument-functions
 * program under LD_PRELOAD=libstrobe.so.
 */
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/escape.h"
#include "export/export.h"
#include "make_experiment.h"
#include "strobe/strobe.h"
#include "test.h"

#define CHECKS STROBE_SOURCE_DIR "/tests/export"

struct fixture {
    char dir[4096]; /* scratch directory of the case */
    char exp_dir[4200];
    struct strobe_experiment *exp;
};

static void open_fixture(struct fixture *fx, const char *name)
{
    snprintf(fx->dir, sizeof fx->dir, "%s", strobe_test_tmpdir(name));
    snprintf(fx->exp_dir, sizeof fx->exp_dir, "%s/experiment", fx->dir);
    CHECK_EQ_INT(make_experiment(fx->exp_dir), 0);
    struct strobe_errbuf eb = {""};
    int rc = strobe_experiment_open(fx->exp_dir, &fx->exp, NULL, NULL, &eb);
    if (rc != 0)
        STROBE_FAIL("strobe_experiment_open: %s", eb.msg);
    CHECK_EQ_INT(fx->exp->nthreads, 2);
    CHECK_EQ_INT(fx->exp->threads[0].tid, EXPERIMENT_PID);
}

/* Experiment time of the main thread's start S: the reference point of all
 * expected timestamps (make_experiment.h). */
static uint64_t base_ns(const struct fixture *fx)
{
    const struct strobe_thread_info *t0 = &fx->exp->threads[0];
    CHECK_EQ_INT(t0->index, 0);
    return t0->begin_ns;
}

static void run_check(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run_check(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char *out;
    int rc = strobe_test_sh(&out, "%s", cmd);
    if (rc != 0)
        STROBE_FAIL("%s exited with %d:\n%s", cmd, rc, out);
    free(out);
}

/* Only the files named in `expected` (a sorted, space-separated list) are in dir. */
static void check_dir_listing(const char *dir, const char *expected)
{
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "ls -A '%s' | sort | tr '\\n' ' '", dir), 0);
    CHECK_STR_EQ(out, expected);
    free(out);
}

STROBE_TEST(chrome)
{
    struct fixture fx;
    open_fixture(&fx, "chrome");
    char out[4300];
    snprintf(out, sizeof out, "%s/trace.json", fx.dir);
    struct strobe_errbuf eb = {""};
    int rc = strobe_export_chrome(fx.exp, out, NULL, &eb);
    if (rc != 0)
        STROBE_FAIL("export: %s", eb.msg);
    run_check("python3 %s/check_chrome.py '%s' %" PRIu64, CHECKS, out, base_ns(&fx));
    /* A second export replaces the file; no temporary file is left. */
    CHECK_EQ_INT(strobe_export_chrome(fx.exp, out, NULL, &eb), 0);
    check_dir_listing(fx.dir, "experiment trace.json ");
    strobe_experiment_close(fx.exp);
}

STROBE_TEST(otf2)
{
    struct fixture fx;
    open_fixture(&fx, "otf2");
    char out[4300];
    snprintf(out, sizeof out, "%s/trace", fx.dir);
    struct strobe_errbuf eb = {""};
    int rc = strobe_export_otf2(fx.exp, out, NULL, &eb);
    if (rc != 0)
        STROBE_FAIL("export: %s", eb.msg);
    /* OTF2 timestamps are experiment ns + the origin on the monotonic clock. */
    uint64_t base = (uint64_t)llround(fx.exp->origin_ns) + base_ns(&fx);
    run_check("python3 %s/check_otf2.py '%s/traces.otf2' %" PRIu64, CHECKS, out, base);
    check_dir_listing(out, "traces traces.def traces.otf2 ");
    check_dir_listing(fx.dir, "experiment trace ");
    strobe_experiment_close(fx.exp);
}

STROBE_TEST(cubex)
{
    struct fixture fx;
    open_fixture(&fx, "cubex");
    char out[4300];
    snprintf(out, sizeof out, "%s/profile.cubex", fx.dir);
    struct strobe_errbuf eb = {""};
    int rc = strobe_export_cubex(fx.exp, out, NULL, &eb);
    if (rc != 0)
        STROBE_FAIL("export: %s", eb.msg);
    run_check("mkdir '%s/x' && tar -xf '%s' -C '%s/x'", fx.dir, out, fx.dir);
    run_check("python3 %s/check_cubex.py '%s' '%s/x'", CHECKS, out, fx.dir);
    strobe_experiment_close(fx.exp);
}

static struct {
    uint64_t last_done, last_total;
    int calls;
} progress_seen;

static void record_progress(uint64_t done, uint64_t total, void *arg)
{
    CHECK(arg == &progress_seen);
    CHECK(done <= total);
    CHECK(done >= progress_seen.last_done);
    progress_seen.last_done = done;
    progress_seen.last_total = total;
    progress_seen.calls++;
}

STROBE_TEST(progress)
{
    struct fixture fx;
    open_fixture(&fx, "progress");
    struct strobe_export_opts opts = {record_progress, &progress_seen};
    struct strobe_errbuf eb = {""};
    char out[4300];
    typedef int (*exporter)(const struct strobe_experiment *, const char *, const struct strobe_export_opts *,
                            struct strobe_errbuf *);
    const exporter exporters[] = {strobe_export_chrome, strobe_export_otf2, strobe_export_cubex};
    for (int i = 0; i < 3; i++) {
        memset(&progress_seen, 0, sizeof progress_seen);
        snprintf(out, sizeof out, "%s/out%d", fx.dir, i);
        CHECK_EQ_INT(exporters[i](fx.exp, out, &opts, &eb), 0);
        CHECK(progress_seen.calls >= 2);
        CHECK_EQ_U64(progress_seen.last_total, fx.exp->total_bytes);
        CHECK_EQ_U64(progress_seen.last_done, fx.exp->total_bytes);
    }
    strobe_experiment_close(fx.exp);
}

/* Every failure: negative code, one line naming OUT, nothing left behind. */
static void check_failure(int rc, const struct strobe_errbuf *eb, const char *out)
{
    CHECK(rc < 0);
    CHECK_CONTAINS(eb->msg, out);
    CHECK(strchr(eb->msg, '\n') == NULL);
}

STROBE_TEST(unwritable)
{
    struct fixture fx;
    open_fixture(&fx, "unwritable");
    char out[4400];
    struct strobe_errbuf eb;
    /* A regular file as parent directory fails for every user, root included. */
    run_check("touch '%s/file'", fx.dir);

    snprintf(out, sizeof out, "%s/file/trace.json", fx.dir);
    check_failure(strobe_export_chrome(fx.exp, out, NULL, &eb), &eb, out);
    snprintf(out, sizeof out, "%s/file/trace", fx.dir);
    check_failure(strobe_export_otf2(fx.exp, out, NULL, &eb), &eb, out);
    snprintf(out, sizeof out, "%s/file/profile.cubex", fx.dir);
    check_failure(strobe_export_cubex(fx.exp, out, NULL, &eb), &eb, out);
    snprintf(out, sizeof out, "%s/missing/trace.json", fx.dir);
    check_failure(strobe_export_chrome(fx.exp, out, NULL, &eb), &eb, out);

    /* A read-only directory (only meaningful when permissions apply). */
    if (geteuid() != 0) {
        run_check("mkdir '%s/ro' && chmod 0555 '%s/ro'", fx.dir, fx.dir);
        snprintf(out, sizeof out, "%s/ro/trace.json", fx.dir);
        check_failure(strobe_export_chrome(fx.exp, out, NULL, &eb), &eb, out);
        CHECK_CONTAINS(eb.msg, "Permission denied");
        snprintf(out, sizeof out, "%s/ro/trace", fx.dir);
        check_failure(strobe_export_otf2(fx.exp, out, NULL, &eb), &eb, out);
        char ro[4300];
        snprintf(ro, sizeof ro, "%s/ro", fx.dir);
        check_dir_listing(ro, "");
        run_check("chmod 0755 '%s/ro' && rmdir '%s/ro'", fx.dir, fx.dir);
    }

    /* OTF2 refuses to replace a non-empty directory, and leaves it alone. */
    snprintf(out, sizeof out, "%s/busy", fx.dir);
    run_check("mkdir '%s' && echo keep > '%s/precious'", out, out);
    check_failure(strobe_export_otf2(fx.exp, out, NULL, &eb), &eb, out);
    CHECK_CONTAINS(eb.msg, "not an empty directory");
    check_dir_listing(out, "precious ");
    /* ... but fills an empty one. */
    snprintf(out, sizeof out, "%s/empty", fx.dir);
    run_check("mkdir '%s'", out);
    CHECK_EQ_INT(strobe_export_otf2(fx.exp, out, NULL, &eb), 0);
    check_dir_listing(out, "traces traces.def traces.otf2 ");

    check_dir_listing(fx.dir, "busy empty experiment file ");
    strobe_experiment_close(fx.exp);
}

STROBE_TEST(special_files)
{
    struct fixture fx;
    open_fixture(&fx, "special_files");
    char out[4400];
    struct strobe_errbuf eb;

    /* A symbolic link keeps pointing to the replaced file. */
    run_check("cd '%s' && echo old > real.json && ln -s real.json link.json", fx.dir);
    snprintf(out, sizeof out, "%s/link.json", fx.dir);
    CHECK_EQ_INT(strobe_export_chrome(fx.exp, out, NULL, &eb), 0);
    run_check("test -L '%s' && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '%s'", out, out);

    /* Device files are written in place, never replaced. */
    CHECK_EQ_INT(strobe_export_chrome(fx.exp, "/dev/null", NULL, &eb), 0);
    CHECK_EQ_INT(strobe_export_cubex(fx.exp, "/dev/null", NULL, &eb), 0);
    int rc = strobe_export_chrome(fx.exp, "/dev/full", NULL, &eb);
    check_failure(rc, &eb, "/dev/full");
    CHECK_EQ_INT(rc, -ENOSPC);
    run_check("test -c /dev/null && test -c /dev/full");

    /* .cubex is written strictly sequentially: a pipe into tar works. */
    run_check("cd '%s' && mkfifo pipe", fx.dir);
    run_check("cd '%s' && (tar -tf pipe > members 2>&1 < /dev/null &)", fx.dir);
    snprintf(out, sizeof out, "%s/pipe", fx.dir);
    CHECK_EQ_INT(strobe_export_cubex(fx.exp, out, NULL, &eb), 0);
    run_check("cd '%s' && for i in 1 2 3 4 5 6 7 8 9 10; do grep -q anchor.xml members && exit 0; "
              "sleep 0.2; done; exit 1",
              fx.dir);
    check_dir_listing(fx.dir, "experiment link.json members pipe real.json ");
    strobe_experiment_close(fx.exp);
}

static char *escaped(void (*fn)(FILE *, const char *), const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, s);
    fclose(f);
    return buf;
}

STROBE_TEST(escape)
{
    static const struct {
        const char *in, *json, *xml;
    } cases[] = {
        {"plain", "\"plain\"", "plain"},
        {"", "\"\"", ""},
        {"q\"b\\s/", "\"q\\\"b\\\\s/\"", "q&quot;b\\s/"},
        {"<a & b>", "\"<a & b>\"", "&lt;a &amp; b&gt;"},
        {"\b\f\n\r\t\x01\x1f\x7f", "\"\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\"",
         "\xef\xbf\xbd\xef\xbf\xbd   \xef\xbf\xbd\xef\xbf\xbd\x7f"},
        /* valid 2-, 3- and 4-byte sequences pass unchanged */
        {"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
         "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"},
        /* U+2028 is escaped for JavaScript; U+FFFE is not an XML character */
        {"\xe2\x80\xa8\xef\xbf\xbe", "\"\\u2028\xef\xbf\xbe\"", "\xe2\x80\xa8\xef\xbf\xbd"},
        /* lone continuation, overlong '/', surrogate, > U+10FFFF, truncated */
        {"\x80|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82",
         "\"\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd|"
         "\\ufffd\\ufffd\"",
         "\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
         "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *j = escaped(strobe__json_string, cases[i].in);
        char *x = escaped(strobe__xml_text, cases[i].in);
        CHECK_STR_EQ(j, cases[i].json);
        CHECK_STR_EQ(x, cases[i].xml);
        free(j);
        free(x);
    }
    char *j = escaped(strobe__json_string, NULL);
    CHECK_STR_EQ(j, "\"\"");
    free(j);
}

/* ---- end to end: a real program measured by libstrobe.so --------------- */

static const char e2e_program[] =
    "#include <pthread.h>\n"
    "__attribute__((noinline)) void leaf(volatile int *x) { *x += 1; }\n"
    "__attribute__((noinline)) void twice(volatile int *x) { leaf(x); leaf(x); }\n"
    "__attribute__((noinline)) void *worker(void *arg) {\n"
    "    volatile int x = 0; for (int i = 0; i < 3; i++) twice(&x); return arg; }\n"
    "int main(void) {\n"
    "    volatile int x = 0; pthread_t t;\n"
    "    pthread_create(&t, 0, worker, 0);\n"
    "    for (int i = 0; i < 5; i++) leaf(&x);\n"
    "    pthread_join(t, 0);\n"
    "    return 0; }\n";

STROBE_TEST(end_to_end)
{
    char lib[4096];
    snprintf(lib, sizeof lib, "%s/libstrobe.so", STROBE_LIB_DIR);
    if (access(lib, R_OK) != 0) /* test_export depends on it: the build is broken */
        STROBE_FAIL("%s: not built", lib);
    const char *dir = strobe_test_tmpdir("end_to_end");
    char src[4200], exe[4200], exp_dir[4200];
    snprintf(src, sizeof src, "%s/demo.c", dir);
    snprintf(exe, sizeof exe, "%s/demo", dir);
    snprintf(exp_dir, sizeof exp_dir, "%s/experiment", dir);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL);
    fputs(e2e_program, f);
    fclose(f);
    run_check("cc -O1 -g -finstrument-functions -pthread -o '%s' '%s'", exe, src);
    /* What `strobe run` does before starting the program (docs/cli.md). */
    run_check("mkdir '%s' && printf 'command: %s\\nhost: e2e\\n' > '%s/meta'", exp_dir, exe, exp_dir);
    run_check("STROBE_EXPERIMENT_DIR='%s' STROBE_TRACE=1 STROBE_PROFILE=1 LD_PRELOAD='%s' '%s'", exp_dir, lib,
              exe);

    struct strobe_experiment *exp;
    struct strobe_errbuf eb = {""};
    if (strobe_experiment_open(exp_dir, &exp, NULL, NULL, &eb) != 0)
        STROBE_FAIL("strobe_experiment_open: %s", eb.msg);
    char chrome[4300], otf2[4300], cubex[4300];
    snprintf(chrome, sizeof chrome, "%s/trace.json", dir);
    snprintf(otf2, sizeof otf2, "%s/trace", dir);
    snprintf(cubex, sizeof cubex, "%s/profile.cubex", dir);
    if (strobe_export_chrome(exp, chrome, NULL, &eb) != 0 || strobe_export_otf2(exp, otf2, NULL, &eb) != 0 ||
        strobe_export_cubex(exp, cubex, NULL, &eb) != 0)
        STROBE_FAIL("export: %s", eb.msg);
    /* main 1, leaf 5 + 6, twice 3, worker 1: the same in all three formats. */
    run_check("python3 %s/check_counts.py '%s' '%s/traces.otf2' '%s' "
              "main=1 leaf=11 twice=3 worker=1",
              CHECKS, chrome, otf2, cubex);
    strobe_experiment_close(exp);
}

/* A real TM run (tests/analysis/tm_prog.c) exported to Paraver. */
STROBE_TEST(paraver_tm)
{
    const char *dir = strobe_test_tmpdir("paraver");
    run_check("rm -rf '%s/exp' && %s/strobe run --tm-monitor events -o '%s/exp' -- "
              "%s/../tests/analysis/analysis_tm_prog >/dev/null",
              dir, STROBE_BIN_DIR, dir, STROBE_BIN_DIR);
    run_check("%s/strobe export '%s/exp' --format paraver -o '%s/tm'", STROBE_BIN_DIR, dir, dir);
    run_check("python3 %s/check_paraver.py '%s/tm'", CHECKS, dir);
}

/* Paraver needs the per-attempt log: any other experiment is refused with
 * one line naming its level, exit 1, and nothing is written. */
STROBE_TEST(paraver_refuses_without_events)
{
    static const struct {
        const char *meta; /* NULL: the non-TM experiment of make_experiment */
        const char *why;
    } cases[] = {
        {"tm: 1\ntm_monitor: counters\n", "was recorded at TM monitoring level 'counters'"},
        {"tm: 1\ntm_monitor: off\n", "was recorded at TM monitoring level 'off'"},
        {"tm: 1\ntm_monitor: stats\n", "was recorded at TM monitoring level 'stats'"},
        {"", "was recorded at TM monitoring level 'stats'"}, /* an old stats-level experiment */
        {NULL, "was not run on the monitored STM"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32], exp_dir[4200], want[8600];
        snprintf(name, sizeof name, "paraver_refuses%zu", i);
        const char *dir = strobe_test_tmpdir(name);
        snprintf(exp_dir, sizeof exp_dir, "%s/exp", dir);
        CHECK_EQ_INT(cases[i].meta ? make_tm_experiment(exp_dir, cases[i].meta, 0) : make_experiment(exp_dir),
                     0);
        char *out;
        CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe export '%s' --format paraver -o '%s/tm'", STROBE_BIN_DIR,
                                    exp_dir, dir),
                     1);
        snprintf(
            want, sizeof want, "strobe: export: %s %s; the Paraver timeline needs per-attempt events: %s\n",
            exp_dir, cases[i].why,
            cases[i].meta ? "re-run with --tm-monitor events" : "run it with strobe run --tm-monitor events");
        CHECK_STR_EQ(out, want);
        free(out);
        check_dir_listing(dir, "exp ");
    }
}

/* COUNTS records (level counters and up) are read by the loader; every
 * exporter walks the streams past them. */
STROBE_TEST(exporters_skip_tm_counts)
{
    const char *dir = strobe_test_tmpdir("tm_counts");
    char exp_dir[4200], out[4300];
    snprintf(exp_dir, sizeof exp_dir, "%s/exp", dir);
    CHECK_EQ_INT(make_tm_experiment(exp_dir, "tm: 1\ntm_monitor: events\n", 1), 0);
    struct strobe_experiment *exp;
    struct strobe_errbuf eb = {""};
    if (strobe_experiment_open(exp_dir, &exp, NULL, NULL, &eb) != 0)
        STROBE_FAIL("strobe_experiment_open: %s", eb.msg);
    CHECK_EQ_INT(exp->ntm_counts, 2);
    static const struct {
        int (*fn)(const struct strobe_experiment *, const char *, const struct strobe_export_opts *,
                  struct strobe_errbuf *);
        const char *name;
    } exporters[] = {{strobe_export_chrome, "trace.json"},
                     {strobe_export_otf2, "otf2"},
                     {strobe_export_cubex, "p.cubex"},
                     {strobe_export_paraver, "tm"}};
    for (size_t i = 0; i < sizeof exporters / sizeof exporters[0]; i++) {
        snprintf(out, sizeof out, "%s/%s", dir, exporters[i].name);
        if (exporters[i].fn(exp, out, NULL, &eb) != 0)
            STROBE_FAIL("export %s: %s", exporters[i].name, eb.msg);
    }
    strobe_experiment_close(exp);
    /* the Paraver trace has the one abort (cause 1) of t0 and its two blocks */
    char *prv;
    CHECK_EQ_INT(
        strobe_test_sh(&prv, "grep -c ':90000002:1$' '%s/tm.prv'; grep -c 'atomic@0x' '%s/tm.pcf'", dir, dir),
        0);
    CHECK_STR_EQ(prv, "1\n2\n");
    free(prv);
}

STROBE_TEST_MAIN(STROBE_CASE(chrome), STROBE_CASE(otf2), STROBE_CASE(cubex), STROBE_CASE(progress),
                 STROBE_CASE(unwritable), STROBE_CASE(special_files), STROBE_CASE(escape),
                 STROBE_CASE(end_to_end), STROBE_CASE(paraver_tm),
                 STROBE_CASE(paraver_refuses_without_events), STROBE_CASE(exporters_skip_tm_counts))
