/* SPDX-License-Identifier: MIT */
/*
 * Tests of the exporters (src/export) on the experiment written by
 * make_experiment.c and read back through strobe_analysis: every event,
 * name, timestamp and profile value of the output is checked exactly by the
 * check_*.py scripts next to this file (python3 json / xml.etree, otf2-print,
 * tar), or for Perfetto by decoding it with the protobuf-c code generated
 * from the schema (perfetto_decode.c). Also: the escapers byte by byte,
 * failure paths (nothing partial is left behind), and end-to-end runs of
 * real -finstrument-functions programs under LD_PRELOAD=libstrobe.so.
 */
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/escape.h"
#include "export/export.h"
#include "make_experiment.h"
#include "perfetto_decode.h"
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

/* TrackEvent.Type values of Perfetto's schema. */
enum { PF_BEGIN = 1, PF_END = 2, PF_INSTANT = 3, PF_COUNTER = 4 };

static void decode_perfetto(const char *path, struct pf_trace *t)
{
    char err[512];
    if (pf_decode(path, t, err, sizeof err) != 0)
        STROBE_FAIL("%s: %s", path, err);
}

/* The experiment of make_experiment.h, decoded back: descriptors, every
 * event of each thread in order with its exact ns time (the OTF2 export's
 * time: experiment origin on CLOCK_MONOTONIC + experiment ns), interned
 * names, counters, instants and the thread-create flow. */
STROBE_TEST(perfetto)
{
    struct fixture fx;
    open_fixture(&fx, "perfetto");
    char out[4300];
    snprintf(out, sizeof out, "%s/trace.pftrace", fx.dir);
    struct strobe_errbuf eb = {""};
    if (strobe_export_perfetto(fx.exp, out, NULL, &eb) != 0)
        STROBE_FAIL("export: %s", eb.msg);
    struct pf_trace t;
    decode_perfetto(out, &t);

    /* 1 process, 2 threads, 1 counter track per thread */
    CHECK_EQ_INT(t.ntracks, 5);
    const struct pf_track *proc = &t.tracks[0], *thr[2] = {&t.tracks[1], &t.tracks[2]};
    CHECK_EQ_INT(proc->kind, PF_TRACK_PROCESS);
    CHECK_EQ_INT(proc->pid, EXPERIMENT_PID);
    CHECK_STR_EQ(proc->name, "demo");
    CHECK_EQ_U64(proc->parent, 0);
    for (int i = 0; i < 2; i++) {
        char name[64];
        snprintf(name, sizeof name, "thread %d (tid %d)", i, EXPERIMENT_PID + i);
        CHECK_EQ_INT(thr[i]->kind, PF_TRACK_THREAD);
        CHECK_EQ_INT(thr[i]->pid, EXPERIMENT_PID);
        CHECK_EQ_INT(thr[i]->tid, EXPERIMENT_PID + i);
        CHECK_STR_EQ(thr[i]->name, name);
        CHECK_EQ_U64(thr[i]->parent, proc->uuid);
    }

    static const char odd[] = "say \"hi\" <&> \x01 gr\xc3\xb6\xc3\x9f"
                              "e \xef\xbf\xbd!"; /* invalid byte -> U+FFFD */
    static const struct {
        int thread, type;
        const char *name; /* NULL: slice end or counter */
        uint64_t off;     /* ns after S */
        int64_t value;    /* counter value or flow id */
        const char *args;
    } want[] = {
        {0, PF_BEGIN, "main", 100, 0, ""},
        {0, PF_BEGIN, "compute", 200, 0, ""},
        {0, PF_END, NULL, 500, 0, ""},
        {0, PF_COUNTER, NULL, 550, 100, ""},
        {0, PF_BEGIN, "compute", 600, 0, ""},
        {0, PF_END, NULL, 700, 0, ""},
        {0, PF_INSTANT, "thread create", 800, 2, "thread=1;name=thread 1 (tid 4243);"},
        {0, PF_BEGIN, odd, 900, 0, ""},
        {0, PF_END, NULL, 1000, 0, ""},
        {0, PF_INSTANT, "thread join", 5000, 0, "thread=1;name=thread 1 (tid 4243);"},
        {0, PF_END, NULL, 6000, 0, ""},
        {1, PF_BEGIN, "compute", 900, 2, ""},
        {1, PF_COUNTER, NULL, 910, -7, ""},
        {1, PF_END, NULL, 1300, 0, ""},
        {1, PF_BEGIN, "compute", 1350, 0, ""},
        {1, PF_END, NULL, 1370, 0, ""},
    };
    size_t n = sizeof want / sizeof want[0];
    CHECK_EQ_INT(t.nevents, n);
    /* descriptors: 3; per thread a clock snapshot, a counter descriptor */
    CHECK_EQ_INT(t.packets, 3 + 2 * 2 + n);
    /* each name once per sequence: t0 main, compute, thread create, odd,
     * thread join; t1 compute */
    CHECK_EQ_INT(t.interned_names, 6);
    uint64_t base = (uint64_t)llround(fx.exp->origin_ns) + base_ns(&fx);
    int depth[2] = {0, 0}, max_depth[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        const struct pf_event *e = &t.events[i];
        int th = want[i].thread;
        CHECK_EQ_INT(e->seq, 2 + th); /* one sequence per thread, after the descriptors' */
        CHECK_EQ_INT(e->type, want[i].type);
        CHECK_EQ_U64(e->ts, base + want[i].off);
        CHECK_STR_EQ(e->args, want[i].args);
        CHECK(e->category == NULL);
        if (want[i].name)
            CHECK_STR_EQ(e->name, want[i].name);
        else
            CHECK(e->name == NULL);
        if (e->type == PF_COUNTER) {
            const struct pf_track *c = pf_find_track(&t, e->track);
            CHECK(c && c->kind == PF_TRACK_COUNTER);
            CHECK_STR_EQ(c->name, "bytes");
            CHECK_STR_EQ(c->unit, "B");
            CHECK_EQ_U64(c->parent, thr[th]->uuid);
            CHECK_EQ_INT(e->value, want[i].value);
        } else {
            CHECK_EQ_U64(e->track, thr[th]->uuid);
            /* flows: out of "thread create" into t1's first slice */
            CHECK_EQ_U64(e->flow, e->type == PF_INSTANT ? (uint64_t)want[i].value : 0);
            CHECK_EQ_U64(e->terminating_flow, e->type == PF_BEGIN ? (uint64_t)want[i].value : 0);
        }
        depth[th] += e->type == PF_BEGIN ? 1 : e->type == PF_END ? -1 : 0;
        CHECK(depth[th] >= 0);
        if (depth[th] > max_depth[th])
            max_depth[th] = depth[th];
    }
    CHECK(depth[0] == 0 && depth[1] == 0);
    CHECK(max_depth[0] == 2 && max_depth[1] == 1); /* main > compute; compute */
    /* The sizes docs/formats/exports.md gives: a slice end 12 bytes, a
     * begin of an interned name 14, with deltas below 128 ns; one byte more
     * from 128 ns, the name itself the first time. */
    CHECK_EQ_INT(t.events[5].bytes, 12);  /* t0 E at +700, delta 100 */
    CHECK_EQ_INT(t.events[15].bytes, 12); /* t1 E at +1370, delta 20 */
    CHECK_EQ_INT(t.events[4].bytes, 14);  /* t0 B compute at +600, delta 50 */
    CHECK_EQ_INT(t.events[2].bytes, 13);  /* t0 E at +500, delta 300 */
    /* the first compute carries InternedData {EventName {iid, "compute"}}:
     * tag + length of each message and field, 2 + 2 + 2 + 2, + 7 chars */
    CHECK_EQ_INT(t.events[1].bytes, 14 + 8 + 7);
    pf_free(&t);
    /* A second export replaces the file; no temporary file is left. */
    CHECK_EQ_INT(strobe_export_perfetto(fx.exp, out, NULL, &eb), 0);
    check_dir_listing(fx.dir, "experiment trace.pftrace ");
    strobe_experiment_close(fx.exp);
}

/* Through the CLI: `--format perfetto` writes a trace that decodes; an
 * unwritable OUT is one line on stderr and exit status 1, nothing left. */
STROBE_TEST(perfetto_cli)
{
    struct fixture fx;
    open_fixture(&fx, "perfetto_cli");
    strobe_experiment_close(fx.exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe export '%s' --format perfetto -o '%s/t.pftrace'",
                                STROBE_BIN_DIR, fx.exp_dir, fx.dir),
                 0);
    CHECK_STR_EQ(out, "");
    free(out);
    char path[4300];
    snprintf(path, sizeof path, "%s/t.pftrace", fx.dir);
    struct pf_trace t;
    decode_perfetto(path, &t);
    CHECK_EQ_INT(t.nevents, 16);
    pf_free(&t);

    run_check("touch '%s/file'", fx.dir);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe export '%s' --format perfetto -o '%s/file/t.pftrace'",
                                STROBE_BIN_DIR, fx.exp_dir, fx.dir),
                 1);
    char want[8800];
    snprintf(want, sizeof want, "strobe: export: %s/file/t.pftrace: cannot create: Not a directory\n",
             fx.dir);
    CHECK_STR_EQ(out, want);
    free(out);
    check_dir_listing(fx.dir, "experiment file t.pftrace ");
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
    const exporter exporters[] = {strobe_export_chrome, strobe_export_otf2, strobe_export_cubex,
                                  strobe_export_perfetto};
    for (int i = 0; i < 4; i++) {
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
    snprintf(out, sizeof out, "%s/file/trace.pftrace", fx.dir);
    check_failure(strobe_export_perfetto(fx.exp, out, NULL, &eb), &eb, out);

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
    rc = strobe_export_perfetto(fx.exp, "/dev/full", NULL, &eb);
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
        const char *in, *json, *xml, *utf8; /* utf8 NULL: in is valid UTF-8, unchanged */
    } cases[] = {
        {"plain", "\"plain\"", "plain", NULL},
        {"", "\"\"", "", NULL},
        {"q\"b\\s/", "\"q\\\"b\\\\s/\"", "q&quot;b\\s/", NULL},
        {"<a & b>", "\"<a & b>\"", "&lt;a &amp; b&gt;", NULL},
        {"\b\f\n\r\t\x01\x1f\x7f", "\"\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\"",
         "\xef\xbf\xbd\xef\xbf\xbd   \xef\xbf\xbd\xef\xbf\xbd\x7f", NULL},
        /* valid 2-, 3- and 4-byte sequences pass unchanged */
        {"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
         "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", NULL},
        /* U+2028 is escaped for JavaScript; U+FFFE is not an XML character */
        {"\xe2\x80\xa8\xef\xbf\xbe", "\"\\u2028\xef\xbf\xbe\"", "\xe2\x80\xa8\xef\xbf\xbd", NULL},
        /* lone continuation, overlong '/', surrogate, > U+10FFFF, truncated */
        {"\x80|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82",
         "\"\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd|"
         "\\ufffd\\ufffd\"",
         "\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
         "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd",
         /* the same replacements as XML: this line has no XML-only escape */
         "\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
         "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *j = escaped(strobe__json_string, cases[i].in);
        char *x = escaped(strobe__xml_text, cases[i].in);
        CHECK_STR_EQ(j, cases[i].json);
        CHECK_STR_EQ(x, cases[i].xml);
        char *v = strobe__utf8_valid(cases[i].in);
        CHECK_STR_EQ(v, cases[i].utf8 ? cases[i].utf8 : cases[i].in);
        free(j);
        free(x);
        free(v);
    }
    char *j = escaped(strobe__json_string, NULL);
    CHECK_STR_EQ(j, "\"\"");
    free(j);
    char *v = strobe__utf8_valid(NULL);
    CHECK_STR_EQ(v, "");
    free(v);
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

/* Records program (C source) as `strobe run` would: compiled with
 * -finstrument-functions (and cflags) in a fresh scratch directory named
 * name, run under LD_PRELOAD=libstrobe.so; the experiment goes to
 * <dir>/experiment. Returns the scratch directory. */
static const char *record_program(const char *name, const char *program, const char *cflags)
{
    char lib[4096];
    snprintf(lib, sizeof lib, "%s/libstrobe.so", STROBE_LIB_DIR);
    const char *dir = strobe_test_tmpdir(name);
    char src[4200], exe[4200], exp_dir[4200];
    snprintf(src, sizeof src, "%s/demo.c", dir);
    snprintf(exe, sizeof exe, "%s/demo", dir);
    snprintf(exp_dir, sizeof exp_dir, "%s/experiment", dir);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL);
    fputs(program, f);
    fclose(f);
    run_check("cc -O1 -g -finstrument-functions -pthread -o '%s' '%s' %s", exe, src, cflags);
    /* What `strobe run` does before starting the program (docs/cli.md). */
    run_check("mkdir '%s' && printf 'command: %s\\nhost: e2e\\n' > '%s/meta'", exp_dir, exe, exp_dir);
    run_check("STROBE_EXPERIMENT_DIR='%s' STROBE_TRACE=1 STROBE_PROFILE=1 LD_PRELOAD='%s' '%s'", exp_dir, lib,
              exe);
    return dir;
}

STROBE_TEST(end_to_end)
{
    char lib[4096];
    snprintf(lib, sizeof lib, "%s/libstrobe.so", STROBE_LIB_DIR);
    if (access(lib, R_OK) != 0) {
        printf("skipped: %s is not built\n", lib);
        exit(77);
    }
    const char *dir = record_program("end_to_end", e2e_program, "");
    char exp_dir[4200];
    snprintf(exp_dir, sizeof exp_dir, "%s/experiment", dir);
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

/* Two processes (fork), a thread, a user metric: every slice, instant and
 * counter of the Perfetto export equals the Chrome export's, per process
 * and thread, to the ns (check_perfetto.py reads both). */
static const char e2e_fork_program[] =
    "#include <pthread.h>\n"
    "#include <sys/wait.h>\n"
    "#include <unistd.h>\n"
    "#include <strobe/strobe.h>\n"
    "static strobe_metric_t items = STROBE_METRIC_INIT(\"items\", \"count\");\n"
    "__attribute__((noinline)) void leaf(volatile int *x) { *x += 1; }\n"
    "__attribute__((noinline)) void *worker(void *arg) {\n"
    "    volatile int x = 0; for (int i = 0; i < 3; i++) leaf(&x); return arg; }\n"
    "int main(void) {\n"
    "    volatile int x = 0; pthread_t t;\n"
    "    pthread_create(&t, 0, worker, 0);\n"
    "    pthread_join(t, 0);\n"
    "    strobe_metric_add(&items, 7);\n"
    "    if (fork() == 0) { leaf(&x); leaf(&x); return 0; }\n"
    "    wait(0);\n"
    "    leaf(&x);\n"
    "    return 0; }\n";

STROBE_TEST(perfetto_end_to_end)
{
    char lib[4096];
    snprintf(lib, sizeof lib, "%s/libstrobe.so", STROBE_LIB_DIR);
    CHECK(access(lib, R_OK) == 0); /* built before the tests (CMakeLists.txt) */
    const char *dir = record_program("perfetto_end_to_end", e2e_fork_program,
                                     "-I" STROBE_SOURCE_DIR "/include -L" STROBE_LIB_DIR
                                     " -lstrobe -Wl,-rpath," STROBE_LIB_DIR);
    char exp_dir[4200], chrome[4300], pf[4300], dump[4300];
    snprintf(exp_dir, sizeof exp_dir, "%s/experiment", dir);
    snprintf(chrome, sizeof chrome, "%s/trace.json", dir);
    snprintf(pf, sizeof pf, "%s/trace.pftrace", dir);
    snprintf(dump, sizeof dump, "%s/perfetto.tsv", dir);
    struct strobe_experiment *exp;
    struct strobe_errbuf eb = {""};
    if (strobe_experiment_open(exp_dir, &exp, NULL, NULL, &eb) != 0)
        STROBE_FAIL("strobe_experiment_open: %s", eb.msg);
    CHECK_EQ_INT(exp->nprocesses, 2);
    if (strobe_export_chrome(exp, chrome, NULL, &eb) != 0 || strobe_export_perfetto(exp, pf, NULL, &eb) != 0)
        STROBE_FAIL("export: %s", eb.msg);
    uint64_t origin = (uint64_t)llround(exp->origin_ns);
    strobe_experiment_close(exp);

    /* One line per event: pid, thread name, kind, experiment ns, name,
     * value (counter value, flow ids, category), as check_perfetto.py
     * rebuilds them from the Chrome trace. */
    struct pf_trace t;
    decode_perfetto(pf, &t);
    FILE *f = fopen(dump, "w");
    CHECK(f != NULL);
    for (size_t i = 0; i < t.ntracks; i++) {
        const struct pf_track *k = &t.tracks[i];
        if (k->kind == PF_TRACK_PROCESS)
            fprintf(f, "process\t%d\t%s\n", k->pid, k->name);
        else if (k->kind == PF_TRACK_THREAD)
            fprintf(f, "thread\t%d\t%s\t%" PRId64 "\t%s\n", k->pid, k->name, k->tid,
                    pf_find_track(&t, k->parent) ? "parented" : "orphan");
    }
    for (size_t i = 0; i < t.nevents; i++) {
        const struct pf_event *e = &t.events[i];
        const struct pf_track *k = pf_find_track(&t, e->track);
        CHECK(k != NULL);
        const struct pf_track *th = k->kind == PF_TRACK_COUNTER ? pf_find_track(&t, k->parent) : k;
        CHECK(th && th->kind == PF_TRACK_THREAD);
        static const char *const kinds[] = {"?", "B", "E", "i", "C"};
        CHECK(e->ts >= origin && e->type >= 1 && e->type <= 4);
        fprintf(f, "event\t%d\t%s\t%s\t%" PRIu64 "\t%s\t", th->pid, th->name, kinds[e->type], e->ts - origin,
                e->type == 4 ? k->name : e->name ? e->name : "");
        if (e->type == 4)
            fprintf(f, "%" PRId64 "\n", e->value);
        else
            fprintf(f, "flow=%" PRIu64 ",end=%" PRIu64 ",cat=%s\n", e->flow, e->terminating_flow,
                    e->category ? e->category : "");
    }
    fclose(f);
    pf_free(&t);
    run_check("python3 %s/check_perfetto.py '%s' '%s'", CHECKS, chrome, dump);
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
                     {strobe_export_perfetto, "trace.pftrace"},
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

STROBE_TEST_MAIN(STROBE_CASE(chrome), STROBE_CASE(otf2), STROBE_CASE(perfetto), STROBE_CASE(perfetto_cli),
                 STROBE_CASE(cubex), STROBE_CASE(progress),
                 STROBE_CASE(unwritable), STROBE_CASE(special_files), STROBE_CASE(escape),
                 STROBE_CASE(end_to_end), STROBE_CASE(perfetto_end_to_end), STROBE_CASE(paraver_tm),
                 STROBE_CASE(paraver_refuses_without_events), STROBE_CASE(exporters_skip_tm_counts))
