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

#include "analysis/select.h"
#include "export/escape.h"
#include "export/export.h"
#include "make_experiment.h"
#include "perfetto_decode.h"
#include "pprof_decode.h"
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

/* The fixture as pprof_decode.c and check_pprof.py (protoc --decode) print
 * it: per call path and thread, visits, inclusive and exclusive ns
 * (make_experiment.h); no samples (no sample types for them). */
#define PPROF_T0 "[thread=thread 0 (tid 4242) process=demo (pid 4242)]"
#define PPROF_T1 "[thread=thread 1 (tid 4243) process=demo (pid 4242)]"
static const char pprof_expected[] =
    "types visits/count incl_time/nanoseconds excl_time/nanoseconds default excl_time period visits/count 1\n"
    "time_nanos>0 True duration 6100\n"
    "comment strobe " STROBE_VERSION_STRING "\n"
    "comment command: ./demo --size 3\n"
    "comment incl_time: inclusive time of each call path; pprof adds it up over nested paths, so read its "
    "flat column (cum of excl_time is the inclusive time)\n"
    "sample main " PPROF_T0 " 1 5900 5400\n"
    "sample main > compute " PPROF_T0 " 2 400 400\n"
    "sample main > say \"hi\" <&> \x01 gr\xc3\xb6\xc3\x9f"
    "e \xef\xbf\xbd! " PPROF_T0 " 1 100 100\n"
    "sample compute " PPROF_T1 " 2 420 420\n";

/* go tool pprof loads the file when go is installed (not a dependency of
 * strobe: one line says so otherwise); flat visits per function. */
static void check_go_pprof(const char *dir, const char *file)
{
    char *out;
    if (strobe_test_sh(&out, "command -v go") != 0) {
        fprintf(stderr, "go is not installed: the go tool pprof check was not run\n");
        free(out);
        return;
    }
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && HOME='%s' GOCACHE='%s/gocache' go tool pprof -sample_index=visits -top "
                                "'%s' 2>&1 | grep -E ' (main|compute)$' | tr -s ' '",
                                dir, dir, dir, file),
                 0);
    CHECK_STR_EQ(out, " 4 66.67% 66.67% 4 66.67% compute\n 1 16.67% 83.33% 4 66.67% main\n");
    free(out);
}

STROBE_TEST(pprof)
{
    struct fixture fx;
    open_fixture(&fx, "pprof");
    char out[4300], err[512], *text;
    snprintf(out, sizeof out, "%s/profile.pb.gz", fx.dir);
    struct strobe_errbuf eb = {""};
    if (strobe_export_pprof(fx.exp, out, NULL, &eb) != 0)
        STROBE_FAIL("export: %s", eb.msg);
    if (pprof_dump(out, &text, err, sizeof err) != 0)
        STROBE_FAIL("%s: %s", out, err);
    CHECK_STR_EQ(text, pprof_expected);
    free(text);
    CHECK_EQ_INT(strobe_test_sh(&text, "python3 %s/check_pprof.py '%s' %s/src/export", CHECKS, out,
                                STROBE_SOURCE_DIR),
                 0);
    CHECK_STR_EQ(text, pprof_expected);
    free(text);
    check_dir_listing(fx.dir, "experiment profile.pb.gz ");
    check_go_pprof(fx.dir, out);
    strobe_experiment_close(fx.exp);
}

/* Through the CLI; an unwritable OUT or a damaged experiment is one line
 * and exit status 1, no file; the selection options are refused. */
STROBE_TEST(pprof_cli)
{
    struct fixture fx;
    open_fixture(&fx, "pprof_cli");
    strobe_experiment_close(fx.exp);
    char *out, path[4300], err[512], want[8800];
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe export '%s' --format pprof -o '%s/p.pb.gz'", STROBE_BIN_DIR,
                                fx.exp_dir, fx.dir),
                 0);
    CHECK_STR_EQ(out, "");
    free(out);
    snprintf(path, sizeof path, "%s/p.pb.gz", fx.dir);
    if (pprof_dump(path, &out, err, sizeof err) != 0)
        STROBE_FAIL("%s: %s", path, err);
    CHECK_STR_EQ(out, pprof_expected);
    free(out);

    run_check("touch '%s/file'", fx.dir);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe export '%s' --format pprof -o '%s/file/p.pb.gz'",
                                STROBE_BIN_DIR, fx.exp_dir, fx.dir),
                 1);
    snprintf(want, sizeof want, "strobe: export: %s/file/p.pb.gz: cannot create: Not a directory\n", fx.dir);
    CHECK_STR_EQ(out, want);
    free(out);

    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe export '%s' --format pprof -o '%s/q.pb.gz' --threads 0",
                                STROBE_BIN_DIR, fx.exp_dir, fx.dir),
                 2);
    CHECK_CONTAINS(out, "trace exports (otf2, chrome, perfetto, paraver), not pprof");
    free(out);

    /* a stream that is not one */
    run_check("printf X | dd of='%s/proc-%u/t1.evt' conv=notrunc status=none", fx.exp_dir, EXPERIMENT_PID);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe export '%s' --format pprof -o '%s/q.pb.gz'", STROBE_BIN_DIR,
                                fx.exp_dir, fx.dir),
                 1);
    CHECK_CONTAINS(out, "t1.evt: offset 0: bad magic (not a strobe event stream file)\n");
    CHECK(strchr(out, '\n') == out + strlen(out) - 1);
    free(out);
    check_dir_listing(fx.dir, "experiment file p.pb.gz ");
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
    struct strobe_export_opts opts = {.progress = record_progress, .progress_arg = &progress_seen};
    struct strobe_errbuf eb = {""};
    char out[4300];
    typedef int (*exporter)(const struct strobe_experiment *, const char *, const struct strobe_export_opts *,
                            struct strobe_errbuf *);
    const exporter exporters[] = {strobe_export_chrome, strobe_export_otf2, strobe_export_cubex,
                                  strobe_export_perfetto, strobe_export_pprof};
    for (int i = 0; i < 5; i++) {
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
    snprintf(out, sizeof out, "%s/file/profile.pb.gz", fx.dir);
    check_failure(strobe_export_pprof(fx.exp, out, NULL, &eb), &eb, out);

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
    rc = strobe_export_pprof(fx.exp, "/dev/full", NULL, &eb);
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

/* ---- selections: strobe export --from/--to/--threads/--processes/--min-duration */

/* The fixture's odd region name as list_events.py shows it. */
#define ODD_SHOWN "say \"hi\" <&> ? gr??e ?!"

/* Runs `strobe export EXP ARGS` (ARGS already quoted); returns its exit
 * status and its stdout+stderr in *msg (malloc'd). */
static int run_export(char **msg, const char *exp_dir, const char *args)
{
    return strobe_test_sh(msg, "%s/strobe export '%s' %s", STROBE_BIN_DIR, exp_dir, args);
}

/* list_events.py's listing of an export, "chrome" or "otf2". */
static char *listing(const char *kind, const char *path, uint64_t base)
{
    char *out;
    int rc = strobe_test_sh(&out, "python3 %s/list_events.py %s '%s' %" PRIu64, CHECKS, kind, path, base);
    if (rc != 0)
        STROBE_FAIL("list_events.py %s %s: exit %d\n%s", kind, path, rc, out);
    return out;
}

/* Exports the fixture with the options ARGS to Chrome and OTF2 through the
 * CLI and compares both listings exactly; MSG is the expected output
 * (stderr) of each run. */
static void check_selected(struct fixture *fx, const char *args, const char *msg, const char *chrome_want,
                           const char *otf2_want)
{
    char cmd[8800], *out;
    snprintf(cmd, sizeof cmd, "--format chrome -o '%s/sel.json' %s", fx->dir, args);
    CHECK_EQ_INT(run_export(&out, fx->exp_dir, cmd), 0);
    CHECK_STR_EQ(out, msg);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/sel.json", fx->dir);
    char *got = listing("chrome", cmd, base_ns(fx));
    CHECK_STR_EQ(got, chrome_want);
    free(got);

    run_check("rm -rf '%s/sel'", fx->dir);
    snprintf(cmd, sizeof cmd, "--format otf2 -o '%s/sel' %s", fx->dir, args);
    CHECK_EQ_INT(run_export(&out, fx->exp_dir, cmd), 0);
    CHECK_STR_EQ(out, msg);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/sel/traces.otf2", fx->dir);
    got = listing("otf2", cmd, (uint64_t)llround(fx->exp->origin_ns) + base_ns(fx));
    CHECK_STR_EQ(got, otf2_want);
    free(got);

    /* Perfetto: the same thread tracks and slices as the Chrome listing
     * ("thread N ..." lanes, "N B name" and "N E name" lines) */
    snprintf(cmd, sizeof cmd, "--format perfetto -o '%s/sel.pftrace' %s", fx->dir, args);
    CHECK_EQ_INT(run_export(&out, fx->exp_dir, cmd), 0);
    CHECK_STR_EQ(out, msg);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/sel.pftrace", fx->dir);
    struct pf_trace t;
    decode_perfetto(cmd, &t);
    size_t lanes = 0, begins = 0, ends = 0, threads = 0, pb = 0, pe = 0;
    for (const char *l = chrome_want; *l; l = strchr(l, '\n') + 1) {
        lanes += strncmp(l, "thread ", 7) == 0;
        begins += strstr(l, " B ") && strstr(l, " B ") < strchr(l, '\n');
        ends += strstr(l, " E ") && strstr(l, " E ") < strchr(l, '\n');
    }
    for (size_t i = 0; i < t.ntracks; i++)
        threads += t.tracks[i].kind == PF_TRACK_THREAD;
    for (size_t i = 0; i < t.nevents; i++) {
        pb += t.events[i].type == PF_BEGIN;
        pe += t.events[i].type == PF_END;
    }
    CHECK_EQ_U64(threads, lanes);
    CHECK_EQ_U64(pb, begins);
    CHECK_EQ_U64(pe, ends);
    pf_free(&t);
}

/* A selection of everything exports the same bytes as no selection. */
static void check_selects_all(struct fixture *fx, const char *args)
{
    char cmd[8800], *out;
    run_check("%s/strobe export '%s' --format chrome -o '%s/all.json'", STROBE_BIN_DIR, fx->exp_dir, fx->dir);
    snprintf(cmd, sizeof cmd, "--format chrome -o '%s/sel.json' %s", fx->dir, args);
    CHECK_EQ_INT(run_export(&out, fx->exp_dir, cmd), 0);
    CHECK_STR_EQ(out, "");
    free(out);
    run_check("cmp '%s/all.json' '%s/sel.json'", fx->dir, fx->dir);
}

/* --from/--to: every event lies in the window; main and compute, open at
 * `from`, are re-entered there; the odd frame and main on t0 and compute on
 * t1, open at `to`, are left there. Events before and after are gone. */
STROBE_TEST(select_window)
{
    struct fixture fx;
    open_fixture(&fx, "select_window");
    char args[8800];
    snprintf(args, sizeof args, "--from %" PRIu64 "ns --to %" PRIu64 "ns", base_ns(&fx) + 300, base_ns(&fx) + 950);
    check_selected(&fx, args, "",
                   "thread 0 thread 0 (tid 4242)\n"
                   "thread 1 thread 1 (tid 4243)\n"
                   "0 B main +300\n"
                   "0 B compute +300\n"
                   "0 E compute +500\n"
                   "0 C bytes +550\n"
                   "0 B compute +600\n"
                   "0 E compute +700\n"
                   "0 i thread create +800\n"
                   "0 s thread create +800\n"
                   "0 B " ODD_SHOWN " +900\n"
                   "0 E " ODD_SHOWN " +950\n"
                   "0 E main +950\n"
                   "1 f thread create +850\n"
                   "1 B compute +900\n"
                   "1 C bytes +910\n"
                   "1 E compute +950\n",
                   "location 0 thread 0 (tid 4242) events 10\n"
                   "location 1 thread 1 (tid 4243) events 4\n"
                   "0 ENTER +300 main\n"
                   "0 ENTER +300 compute\n"
                   "0 LEAVE +500 compute\n"
                   "0 METRIC +550\n"
                   "0 ENTER +600 compute\n"
                   "0 LEAVE +700 compute\n"
                   "0 THREAD_CREATE +800\n"
                   "0 ENTER +900 " ODD_SHOWN "\n"
                   "0 LEAVE +950 " ODD_SHOWN "\n"
                   "0 LEAVE +950 main\n"
                   "1 THREAD_BEGIN +850\n"
                   "1 ENTER +900 compute\n"
                   "1 METRIC +910\n"
                   "1 LEAVE +950 compute\n");
    /* A window holding everything changes nothing, to the byte. */
    check_selects_all(&fx, "--from 0 --to 1h");
    strobe_experiment_close(fx.exp);
}

/* --threads / --processes: only the selected thread's lane or location;
 * the flow from t0's create has no lane to go to, so neither end is drawn. */
STROBE_TEST(select_threads)
{
    struct fixture fx;
    open_fixture(&fx, "select_threads");
    static const char chrome[] = "thread 1 thread 1 (tid 4243)\n"
                                 "1 B compute +900\n"
                                 "1 C bytes +910\n"
                                 "1 E compute +1300\n"
                                 "1 B compute +1350\n"
                                 "1 E compute +1370\n";
    static const char otf2[] = "location 1 thread 1 (tid 4243) events 7\n"
                               "1 THREAD_BEGIN +850\n"
                               "1 ENTER +900 compute\n"
                               "1 METRIC +910\n"
                               "1 LEAVE +1300 compute\n"
                               "1 ENTER +1350 compute\n"
                               "1 LEAVE +1370 compute\n"
                               "1 THREAD_END +1450\n";
    check_selected(&fx, "--threads 1", "", chrome, otf2);
    check_selected(&fx, "--threads 1-1 --processes 4242", "", chrome, otf2);
    /* both threads of the one process: the full trace */
    check_selects_all(&fx, "--processes 4000-5000 --threads 0,1");
    strobe_experiment_close(fx.exp);
}

/* --min-duration 401ns: compute (300 ns), compute (100 ns) and the odd
 * frame (100 ns) on t0, compute (400 ns, with its metric) and compute
 * (20 ns) on t1 go: 5 frames, 2 * 5 + 1 events. main (5900 ns) stays. */
STROBE_TEST(select_min_duration)
{
    struct fixture fx;
    open_fixture(&fx, "select_min_duration");
    check_selected(&fx, "--min-duration 401ns", "strobe: export: 5 frames shorter than 401ns dropped (11 events)\n",
                   "thread 0 thread 0 (tid 4242)\n"
                   "thread 1 thread 1 (tid 4243)\n"
                   "0 B main +100\n"
                   "0 C bytes +550\n"
                   "0 i thread create +800\n"
                   "0 s thread create +800\n"
                   "0 i thread join +5000\n"
                   "0 E main +6000\n"
                   "1 f thread create +850\n",
                   "location 0 thread 0 (tid 4242) events 5\n"
                   "location 1 thread 1 (tid 4243) events 2\n"
                   "0 ENTER +100 main\n"
                   "0 METRIC +550\n"
                   "0 THREAD_CREATE +800\n"
                   "0 THREAD_WAIT +5000\n"
                   "0 LEAVE +6000 main\n"
                   "1 THREAD_BEGIN +850\n"
                   "1 THREAD_END +1450\n");
    /* 400 ns is not shorter than 400 ns: t1's first compute stays. In the
     * window [300, 950] only the frames that reach into it count: t1's
     * second compute (1350-1370) is outside, 3 frames of 2 events. */
    char args[8800];
    snprintf(args, sizeof args, "--min-duration 400ns --from %" PRIu64 "ns --to %" PRIu64 "ns",
             base_ns(&fx) + 300, base_ns(&fx) + 950);
    check_selected(&fx, args, "strobe: export: 3 frames shorter than 400ns dropped (6 events)\n",
                   "thread 0 thread 0 (tid 4242)\n"
                   "thread 1 thread 1 (tid 4243)\n"
                   "0 B main +300\n"
                   "0 C bytes +550\n"
                   "0 i thread create +800\n"
                   "0 s thread create +800\n"
                   "0 E main +950\n"
                   "1 f thread create +850\n"
                   "1 B compute +900\n"
                   "1 C bytes +910\n"
                   "1 E compute +950\n",
                   "location 0 thread 0 (tid 4242) events 4\n"
                   "location 1 thread 1 (tid 4243) events 4\n"
                   "0 ENTER +300 main\n"
                   "0 METRIC +550\n"
                   "0 THREAD_CREATE +800\n"
                   "0 LEAVE +950 main\n"
                   "1 THREAD_BEGIN +850\n"
                   "1 ENTER +900 compute\n"
                   "1 METRIC +910\n"
                   "1 LEAVE +950 compute\n");
    strobe_experiment_close(fx.exp);
}

/* The selection through the API: what it counts before anything is
 * written, and the iterator's view of a thread it does not select. */
STROBE_TEST(select_summary)
{
    struct fixture fx;
    open_fixture(&fx, "select_summary");
    uint64_t b = base_ns(&fx);
    struct strobe_select_summary sum;
    struct strobe_errbuf eb = {""};
    /* window [300, 950]: t0 4 frames (8) + metric + create, t1 begin +
     * 1 frame (2) + metric */
    struct strobe_select_opts o = {.from_ns = b + 300, .to_ns = b + 950};
    CHECK_EQ_INT(strobe_experiment_select(fx.exp, &o, &sum, &eb), 0);
    CHECK_EQ_U64(sum.events, 14);
    CHECK_EQ_U64(sum.short_frames, 0);
    CHECK_EQ_INT(sum.threads, 2);
    o = (struct strobe_select_opts){.to_ns = UINT64_MAX, .min_duration_ns = 401};
    CHECK_EQ_INT(strobe_experiment_select(fx.exp, &o, &sum, &eb), 0);
    CHECK_EQ_U64(sum.events, 20 - 11);
    CHECK_EQ_U64(sum.short_frames, 5);
    CHECK_EQ_U64(sum.short_events, 11);
    /* no window, no minimum duration: no pass, the recorded counts */
    bool only1[2] = {false, true};
    o = (struct strobe_select_opts){.to_ns = UINT64_MAX, .threads = only1};
    CHECK_EQ_INT(strobe_experiment_select(fx.exp, &o, &sum, &eb), 0);
    CHECK_EQ_U64(sum.events, fx.exp->threads[1].events);
    CHECK_EQ_INT(sum.threads, 1);
    CHECK(!strobe_thread_selected(fx.exp, 0) && strobe_thread_selected(fx.exp, 1));
    struct strobe_stream_iter *it;
    struct strobe_event ev;
    CHECK_EQ_INT(strobe_stream_open(fx.exp, 0, &it, &eb), 0);
    CHECK_EQ_INT(strobe_stream_next(it, &ev, &eb), 0);
    strobe_stream_close(it);
    strobe_experiment_close(fx.exp);
}

/* Bad values: one line naming the option and the value, exit 2, nothing
 * written. */
STROBE_TEST(select_bad_values)
{
    struct fixture fx;
    open_fixture(&fx, "select_bad_values");
    static const struct {
        const char *args, *msg;
    } cases[] = {
        {"--from '1 fortnight'", "--from: '1 fortnight' is not a duration (1.5s, 200ms, 10us, 123ns)"},
        {"--to -1s", "--to: '-1s' is not a duration (1.5s, 200ms, 10us, 123ns)"},
        {"--min-duration 10xs", "--min-duration: '10xs' is not a duration (1.5s, 200ms, 10us, 123ns)"},
        {"--from 2ms --to 1ms", "--from 2ms is after --to 1ms"},
        {"--from 1h", "--from 1h is after the end of %s (6.100 µs)"},
        {"--threads 0,", "--threads: '0,' is not a list of numbers and ranges (0,2-3)"},
        {"--threads 1-0", "--threads: '1-0' is not a list of numbers and ranges (0,2-3)"},
        {"--threads x", "--threads: 'x' is not a list of numbers and ranges (0,2-3)"},
        {"--threads 0,2-3", "--threads: %s has no thread 2 (threads 0-1)"},
        {"--processes 99", "--processes: %s has no process with pid 99"},
        {"--processes 1-99", "--processes: %s has no process with a pid in 1-99"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[8800], want[8800], *out;
        snprintf(args, sizeof args, "--format chrome -o '%s/bad.json' %s", fx.dir, cases[i].args);
        CHECK_EQ_INT(run_export(&out, fx.exp_dir, args), 2);
        char what[4400];
        snprintf(what, sizeof what, cases[i].msg, fx.exp_dir);
        snprintf(want, sizeof want, "strobe: export: %s (see 'strobe export --help')\n", what);
        CHECK_STR_EQ(out, want);
        free(out);
    }
    /* cubex is a profile: the selection options are refused */
    char args[8800], *out;
    snprintf(args, sizeof args, "--format cubex -o '%s/p.cubex' --threads 0", fx.dir);
    CHECK_EQ_INT(run_export(&out, fx.exp_dir, args), 2);
    CHECK_STR_EQ(out, "strobe: export: --from, --to, --threads, --processes, --ranks and --min-duration select events of "
                      "trace exports (otf2, chrome, perfetto, paraver), not cubex (see 'strobe export --help')\n");
    free(out);
    check_dir_listing(fx.dir, "experiment ");
    strobe_experiment_close(fx.exp);
}

/* The size warning, with its threshold lowered through the test-only
 * STROBE_EXPORT_WARN_BYTES: 20 events x 130 B = 2600 B warn above 2000 B;
 * the 14 events of a window (1820 B) do not. The export is written anyway. */
STROBE_TEST(select_size_warning)
{
    struct fixture fx;
    open_fixture(&fx, "select_size_warning");
    char args[8800], want[8800], *out;
    snprintf(args, sizeof args, "--format chrome -o '%s/w.json'", fx.dir);
    setenv("STROBE_EXPORT_WARN_BYTES", "2000", 1);
    CHECK_EQ_INT(run_export(&out, fx.exp_dir, args), 0);
    snprintf(want, sizeof want,
             "strobe: export: warning: %s/w.json will be about 2.5 KiB (20 events x 130 B); narrow it with "
             "--from/--to, --threads, --processes, --ranks or --min-duration\n",
             fx.dir);
    CHECK_STR_EQ(out, want);
    free(out);
    run_check("test -s '%s/w.json'", fx.dir);
    snprintf(args, sizeof args, "--format chrome -o '%s/w.json' --from %" PRIu64 "ns --to %" PRIu64 "ns", fx.dir,
             base_ns(&fx) + 300, base_ns(&fx) + 950);
    CHECK_EQ_INT(run_export(&out, fx.exp_dir, args), 0);
    CHECK_STR_EQ(out, "");
    free(out);
    /* OTF2 at 12 B per event stays below */
    snprintf(args, sizeof args, "--format otf2 -o '%s/w'", fx.dir);
    CHECK_EQ_INT(run_export(&out, fx.exp_dir, args), 0);
    CHECK_STR_EQ(out, "");
    free(out);
    strobe_experiment_close(fx.exp);
}

/* A recorded program whose frame durations are set by busy loops: 100
 * calls of brief() of some ns, then 2 calls of busy() of 20 ms each. */
static const char busy_program[] =
    "#include <time.h>\n"
    "__attribute__((no_instrument_function)) static long since(const struct timespec *a) {\n"
    "    struct timespec b; clock_gettime(CLOCK_MONOTONIC, &b);\n"
    "    return (b.tv_sec - a->tv_sec) * 1000000000L + (b.tv_nsec - a->tv_nsec); }\n"
    "__attribute__((noinline)) void brief(volatile int *x) { *x += 1; }\n"
    "__attribute__((noinline)) void busy(void) {\n"
    "    struct timespec a; clock_gettime(CLOCK_MONOTONIC, &a); while (since(&a) < 20000000L) ; }\n"
    "int main(void) { volatile int x = 0; for (int i = 0; i < 100; i++) brief(&x); busy(); busy(); return 0; }\n";

/* The selection on a real recording: --min-duration 5ms drops exactly the
 * 100 brief() frames; the window [m + 10 ms, m + 13 ms], m = the start
 * of main, lies inside the first busy() (it starts after the brief()
 * calls, well within 10 ms, and lasts 20 ms), so exactly main and busy()
 * appear, cut to the window. */
STROBE_TEST(select_recorded)
{
    const char *dir = strobe_test_tmpdir("select_recorded");
    char path[4200];
    snprintf(path, sizeof path, "%s/busy.c", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(busy_program, f);
    fclose(f);
    run_check("cd '%s' && cc -O1 -g -finstrument-functions -o busy busy.c", dir);
    run_check("cd '%s' && %s/strobe run -o exp -- ./busy >/dev/null 2>&1", dir, STROBE_BIN_DIR);
    char *out, exp_dir[4200];
    snprintf(exp_dir, sizeof exp_dir, "%s/exp", dir);
    char args[8800];
    snprintf(args, sizeof args, "--format chrome -o '%s/short.json' --min-duration 5ms", dir);
    CHECK_EQ_INT(run_export(&out, exp_dir, args), 0);
    CHECK_STR_EQ(out, "strobe: export: 100 frames shorter than 5ms dropped (200 events)\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "python3 %s/list_events.py chrome '%s/short.json' 0 | cut -d' ' -f1-3", CHECKS,
                                dir),
                 0);
    CHECK_STR_EQ(out, "thread 0 thread\n0 B main\n0 B busy\n0 E busy\n0 B busy\n0 E busy\n0 E main\n");
    free(out);
    snprintf(args, sizeof args, "--format otf2 -o '%s/short' --min-duration 5ms", dir);
    CHECK_EQ_INT(run_export(&out, exp_dir, args), 0);
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "otf2-print '%s/short/traces.otf2' | grep -c '^ENTER .*Region: \"brief\"'; "
                                      "otf2-print '%s/short/traces.otf2' | grep -c '^ENTER .*Region: \"busy\"'",
                                dir, dir),
                 0);
    CHECK_STR_EQ(out, "0\n2\n");
    free(out);

    /* m: the time of main's B in the unselected export (ns) */
    run_check("%s/strobe export '%s' --format chrome -o '%s/all.json'", STROBE_BIN_DIR, exp_dir, dir);
    CHECK_EQ_INT(strobe_test_sh(&out, "python3 %s/list_events.py chrome '%s/all.json' 0 | "
                                      "awk '$2 == \"B\" && $3 == \"main\" { print substr($4, 2) }'",
                                CHECKS, dir),
                 0);
    uint64_t m = strtoull(out, NULL, 10);
    free(out);
    snprintf(args, sizeof args, "--format chrome -o '%s/window.json' --from %" PRIu64 "ns --to %" PRIu64 "ns", dir,
             m + 10000000, m + 13000000);
    CHECK_EQ_INT(run_export(&out, exp_dir, args), 0);
    CHECK_STR_EQ(out, "");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "python3 %s/list_events.py chrome '%s/window.json' 0 | grep -v ^thread",
                                CHECKS, dir),
                 0);
    char want[256];
    snprintf(want, sizeof want,
             "0 B main +%" PRIu64 "\n0 B busy +%" PRIu64 "\n0 E busy +%" PRIu64 "\n0 E main +%" PRIu64 "\n",
             m + 10000000, m + 10000000, m + 13000000, m + 13000000);
    CHECK_STR_EQ(out, want);
    free(out);
}

/* Writes the TM experiment of make_tm_experiment() at level events into
 * exp_dir and opens it. */
static struct strobe_experiment *open_tm_events(const char *exp_dir)
{
    CHECK_EQ_INT(make_tm_experiment(exp_dir, "tm: 1\ntm_monitor: events\n", 1), 0);
    struct strobe_experiment *exp;
    struct strobe_errbuf eb = {""};
    if (strobe_experiment_open(exp_dir, &exp, NULL, NULL, &eb) != 0)
        STROBE_FAIL("strobe_experiment_open: %s", eb.msg);
    return exp;
}

/* Paraver through the same selection: only t0's row, its Running cut to
 * the window [180, 350] (ns after its start): the retry of the first
 * block, re-entered at 180, commits at 200; the second block, entered at
 * 300, is cut at 350. The abort at 150 is outside. */
STROBE_TEST(select_paraver)
{
    const char *dir = strobe_test_tmpdir("select_paraver");
    char exp_dir[4200], args[8800], *out;
    snprintf(exp_dir, sizeof exp_dir, "%s/exp", dir);
    struct strobe_experiment *exp = open_tm_events(exp_dir);
    uint64_t b = exp->threads[0].begin_ns; /* the times of the .prv are experiment ns */
    strobe_experiment_close(exp);
    CHECK_EQ_U64(b, 0);
    snprintf(args, sizeof args, "--format paraver -o '%s/tm' --threads 0 --from 180ns --to 350ns", dir);
    CHECK_EQ_INT(run_export(&out, exp_dir, args), 0);
    CHECK_STR_EQ(out, "");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "head -1 '%s/tm.prv' | cut -d: -f3-; tail -n +2 '%s/tm.prv'; cat '%s/tm.row'",
                                dir, dir, dir),
                 0);
    CHECK_STR_EQ(out, "1100_ns:1(1):1:1(1:1)\n"
                      "1:1:1:1:1:180:200:2\n"
                      "2:1:1:1:1:180:90000003:1\n"
                      "1:1:1:1:1:200:300:1\n"
                      "2:1:1:1:1:200:90000001:1\n"
                      "2:1:1:1:1:200:90000003:0\n"
                      "1:1:1:1:1:300:350:2\n"
                      "2:1:1:1:1:300:90000003:1\n"
                      "2:1:1:1:1:350:90000001:1\n"
                      "2:1:1:1:1:350:90000003:0\n"
                      "LEVEL CPU SIZE 1\nCPU 1\n\nLEVEL NODE SIZE 1\ntesthost\n\nLEVEL TASK SIZE 1\ntm (pid 4343)\n\n"
                      "LEVEL THREAD SIZE 1\nthread 0 (tid 4343)\n");
    free(out);
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
    if (access(lib, R_OK) != 0) /* test_export depends on it: the build is broken */
        STROBE_FAIL("%s: not built", lib);
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
    struct strobe_experiment *exp = open_tm_events(exp_dir);
    struct strobe_errbuf eb = {""};
    CHECK_EQ_INT(exp->ntm_counts, 2);
    static const struct {
        int (*fn)(const struct strobe_experiment *, const char *, const struct strobe_export_opts *,
                  struct strobe_errbuf *);
        const char *name;
    } exporters[] = {{strobe_export_chrome, "trace.json"},
                     {strobe_export_otf2, "otf2"},
                     {strobe_export_perfetto, "trace.pftrace"},
                     {strobe_export_cubex, "p.cubex"},
                     {strobe_export_pprof, "p.pb.gz"},
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
                 STROBE_CASE(cubex), STROBE_CASE(pprof), STROBE_CASE(pprof_cli), STROBE_CASE(progress),
                 STROBE_CASE(unwritable), STROBE_CASE(special_files), STROBE_CASE(escape),
                 STROBE_CASE(end_to_end), STROBE_CASE(perfetto_end_to_end), STROBE_CASE(paraver_tm),
                 STROBE_CASE(paraver_refuses_without_events), STROBE_CASE(exporters_skip_tm_counts),
                 STROBE_CASE(select_window), STROBE_CASE(select_threads), STROBE_CASE(select_min_duration),
                 STROBE_CASE(select_summary), STROBE_CASE(select_bad_values), STROBE_CASE(select_size_warning),
                 STROBE_CASE(select_recorded), STROBE_CASE(select_paraver))
