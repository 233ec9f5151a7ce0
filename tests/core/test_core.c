/* SPDX-License-Identifier: MIT */
/*
 * End-to-end tests of the runtime libstrobe.so: each case runs a small
 * deterministic program (prog_*.c) under the runtime, preloaded with
 * STROBE_EXPERIMENT_DIR pointing at a scratch directory (or linked, for
 * the annotation API), and checks the files it left with the strict
 * decoder of decode.h: exact record counts, visits per call path, metric
 * sums, thread and process links, limits, filters, crash durability.
 *
 * Sanitizer builds: the programs are built with the same sanitizer as
 * this test and libstrobe.so; see preload() for the library order each
 * sanitizer needs.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"
#include "test.h"

#define LIBSTROBE STROBE_LIB_DIR "/libstrobe.so"
#define PBUF (2 * PATH_MAX)
#define PROG(name) STROBE_TEST_BIN_DIR "/core_prog_" name

/* ---- running programs ---- */

/* snprintf that fails the test instead of truncating. */
static void fmt(char *buf, size_t cap, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t cap, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(buf, cap, f, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap)
        STROBE_FAIL("string too long for its buffer: %s", buf);
}

static int find_asan(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *name = info->dlpi_name, *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (strncmp(base, "libasan.so", 10) == 0 || strncmp(base, "libclang_rt.asan", 16) == 0) {
        fmt(arg, PATH_MAX, "%s:", name);
        return 1;
    }
    return 0;
}

/* LD_PRELOAD for the programs. ASan builds: libasan.so:libstrobe.so, since
 * ASan insists on coming first in the library list. TSan builds:
 * libstrobe.so alone (libtsan is loaded as its dependency, right after
 * it): with libtsan in front, TSan's pthread_create interceptor would call
 * the runtime's, whose start-routine wrapper, itself TSan-instrumented,
 * would run on the new thread before TSan's own start routine has set the
 * thread up, and crash. */
static const char *preload(void)
{
    static char value[2 * PATH_MAX + 2];
    if (!value[0]) {
        char san[PATH_MAX] = "";
        dl_iterate_phdr(find_asan, san);
        fmt(value, sizeof value, "%s%s", san, LIBSTROBE);
    }
    return value;
}

/* Runs CMD (printf-style) in a shell with the runtime preloaded and
 * STROBE_EXPERIMENT_DIR=exp; ENV holds extra assignments ("A=1 B=2" or "").
 * Returns the exit status (128+signal when killed); *out gets stdout and
 * stderr unless out is NULL. (In ASan builds LeakSanitizer stays on: the
 * runtime must not leak either.) */
static int run(char **out, const char *exp, const char *env, const char *cmd_fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int run(char **out, const char *exp, const char *env, const char *cmd_fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, cmd_fmt);
    vsnprintf(cmd, sizeof cmd, cmd_fmt, ap);
    va_end(ap);
    return strobe_test_sh(out,
                          "env -u STROBE_FILTER -u STROBE_TRACE -u STROBE_PROFILE -u STROBE_ENABLE "
                          "LD_PRELOAD='%s' STROBE_EXPERIMENT_DIR='%s' %s %s",
                          preload(), exp, env, cmd);
}

/* The scratch experiment directory of a case: <work>/<name>.tmp/exp */
static const char *exp_dir(const char *name)
{
    static char path[PBUF];
    fmt(path, sizeof path, "%s/exp", strobe_test_tmpdir(name));
    return path;
}

/* Names of the proc-* directories of exp, sorted; returns how many. */
static int proc_dirs(const char *exp, char names[][256], int max)
{
    DIR *d = opendir(exp);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max)
        if (strncmp(e->d_name, "proc-", 5) == 0)
            fmt(names[n++], 256, "%s", e->d_name);
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char tmp[256];
            memcpy(tmp, names[j], 256);
            memcpy(names[j], names[j - 1], 256);
            memcpy(names[j - 1], tmp, 256);
        }
    return n;
}

/* The single proc-* directory of exp as a path. */
static const char *only_proc(const char *exp)
{
    static char path[PBUF];
    char names[8][256];
    int n = proc_dirs(exp, names, 8);
    if (n != 1)
        STROBE_FAIL("%s: %d process directories, expected 1", exp, n);
    fmt(path, sizeof path, "%s/%s", exp, names[0]);
    return path;
}

static char *file_in(char *buf, const char *dir, const char *name)
{
    fmt(buf, PBUF, "%s/%s", dir, name);
    return buf;
}

/* Address printed by a program as "fn <name> <address>". */
static uint64_t fn_addr(const char *out, const char *name)
{
    char key[128];
    fmt(key, sizeof key, "fn %s 0x", name);
    const char *p = strstr(out, key);
    if (!p)
        STROBE_FAIL("no address of %s in:\n%s", name, out);
    return strtoull(p + strlen(key), NULL, 16);
}

/* Region id of the function `name` in defs (via its printed address). */
static uint32_t fn_id(const struct dec_defs *d, const char *out, const char *name)
{
    const struct dec_region *r = dec_region_by_addr(d, fn_addr(out, name));
    if (!r)
        STROBE_FAIL("no REGION record for function %s", name);
    return r->id;
}

/* Number of entries in a directory (without . and ..). */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* Checks the parts of a stream every thread has: THREAD_BEGIN first with
 * the given tid and parent, time never going backwards. */
static void check_stream_basics(const struct dec_stream *s, uint64_t tid, uint64_t parent_plus1)
{
    CHECK(s->n > 0);
    CHECK_EQ_INT(s->ev[0].kind, STROBE_EV_EXT);
    CHECK_EQ_INT(s->ev[0].ext, STROBE_EXT_THREAD_BEGIN);
    CHECK_EQ_INT(s->ev[0].npayload, 2);
    if (tid)
        CHECK_EQ_U64(s->ev[0].payload[0], tid);
    CHECK_EQ_U64(s->ev[0].payload[1], parent_plus1);
    CHECK_EQ_INT(dec_count_ext(s, STROBE_EXT_THREAD_BEGIN), 1);
    CHECK(s->ev[0].time >= s->hdr.start_ticks);
    for (size_t i = 1; i < s->n; i++)
        if (s->ev[i].time < s->ev[i - 1].time)
            STROBE_FAIL("record %zu goes back in time", i);
}

/* A THREAD_END as the last record, with the 7 rusage values. */
static void check_thread_end(const struct dec_stream *s)
{
    CHECK_EQ_INT(dec_count_ext(s, STROBE_EXT_THREAD_END), 1);
    const struct dec_event *e = &s->ev[s->n - 1];
    CHECK_EQ_INT(e->kind, STROBE_EV_EXT);
    CHECK_EQ_INT(e->ext, STROBE_EXT_THREAD_END);
    CHECK_EQ_INT(e->npayload, 7);
}

/* The THREAD_SUMMARY of thread `index` (format.h) agrees with its decoded
 * stream: records, their bytes, drops, the end time, the open depth (which
 * a stream that dropped events cannot tell). */
static void check_summary(const struct dec_defs *d, unsigned index, const struct dec_stream *s, uint64_t how)
{
    const struct dec_summary *m = &d->summary[index];
    CHECK_EQ_U64(m->how, how);
    CHECK_EQ_U64(m->events, s->n);
    CHECK_EQ_U64(m->bytes, s->data_bytes);
    CHECK_EQ_U64(m->dropped, s->hdr.dropped);
    CHECK_EQ_U64(m->limit, s->hdr.limit_bytes);
    CHECK_EQ_U64(m->begin_ticks, s->hdr.start_ticks);
    CHECK_EQ_INT(s->ev[0].ext, STROBE_EXT_THREAD_BEGIN); /* tid and creator as THREAD_BEGIN says */
    CHECK_EQ_U64(m->tid, s->ev[0].payload[0]);
    CHECK_EQ_U64(m->parent, s->ev[0].payload[1]);
    if (!s->hdr.dropped) /* else the stream lacks exits the runtime saw */
        CHECK_EQ_U64(m->depth, s->final_depth);
    CHECK_EQ_U64(m->nopen, m->depth);
    CHECK_EQ_U64(m->nrusage, 7);
    if (how == STROBE_THREAD_ENDED)
        CHECK_EQ_U64(m->end_ticks, s->ev[s->n - 1].time); /* the THREAD_END record's */
    else
        CHECK(m->end_ticks >= s->ev[s->n - 1].time);
}

/* Process-level facts of a normally exiting single process. */
static void check_defs_basics(const struct dec_defs *d, uint64_t pid)
{
    CHECK_EQ_INT(d->nprocess, 1);
    if (pid)
        CHECK_EQ_U64(d->pid, pid);
    CHECK(d->clock_kind == STROBE_CLOCK_TSC || d->clock_kind == STROBE_CLOCK_MONOTONIC);
    CHECK(d->nsync >= 2);
    CHECK(d->sync_ns[1] - d->sync_ns[0] >= 1000000); /* the ~1 ms calibration spin */
    double rate = (double)(d->sync_ticks[d->nsync - 1] - d->sync_ticks[0]) /
                  (double)(d->sync_ns[d->nsync - 1] - d->sync_ns[0]);
    CHECK(rate > 0.05 && rate < 20); /* ticks per ns */
    CHECK_EQ_INT(d->noverhead, 1);
    CHECK(d->overhead > 0);
    CHECK(d->nmodules >= 2); /* the program, libc, ... */
}

/* ---- single thread, compiler instrumentation ---- */

#define N_CALLS 1000

STROBE_TEST(calls_exact)
{
    const char *exp = exp_dir("calls_exact");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "", PROG("calls") " %d", N_CALLS), 0);
    const char *proc = only_proc(exp);
    CHECK_EQ_INT(dir_entries(proc), 3); /* defs t0.evt t0.prof */

    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    check_defs_basics(&d, 0);
    CHECK_EQ_INT(d.nend, 1);
    CHECK_EQ_INT(d.end_status, 0);
    CHECK(d.exe[0] == '/' && strstr(d.exe, "core_prog_calls"));
    CHECK_STR_EQ(d.parent_dir, "");
    /* the program is a module, and its code is inside it */
    bool found = false;
    for (int i = 0; i < d.nmodules; i++)
        if (strcmp(d.modules[i].path, d.exe) == 0) {
            uint64_t a = fn_addr(out, "leaf");
            CHECK(a >= d.modules[i].lo && a < d.modules[i].hi);
            found = true;
        }
    CHECK(found);

    uint32_t main_id = fn_id(&d, out, "main"), work = fn_id(&d, out, "work"), leaf = fn_id(&d, out, "leaf"),
             rec = fn_id(&d, out, "rec"), twice = fn_id(&d, out, "twice");
    CHECK_EQ_INT(d.nregions, 5); /* jumper, deep, deeper never ran */
    for (int i = 0; i < d.nregions; i++) {
        CHECK(d.regions[i].id >= 1 && d.regions[i].id <= 5); /* ids start at 1, dense */
        CHECK_EQ_INT(d.regions[i].kind, STROBE_REGION_FUNCTION);
        CHECK_STR_EQ(d.regions[i].name, ""); /* no filter: resolved offline */
    }

    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_INT(s.hdr.thread_index, 0);
    CHECK_EQ_U64(s.hdr.dropped, 0);
    CHECK_EQ_U64(s.hdr.limit_bytes, 1u << 30);
    check_stream_basics(&s, d.pid, 0);
    check_thread_end(&s);
    CHECK_EQ_INT(s.final_depth, 0);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, main_id), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, work), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, leaf), N_CALLS + 2);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, rec), 4);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, twice), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), N_CALLS + 9);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_EXIT, UINT32_MAX), N_CALLS + 9);
    CHECK_EQ_INT(s.n, 2 * (N_CALLS + 9) + 2);
    /* the loop's enters after the first are ENTER_SAME; rec(2..0) too */
    size_t same = 0;
    for (size_t i = 0; i < s.n; i++)
        same += s.ev[i].same;
    CHECK_EQ_INT(same, N_CALLS - 1 + 3 + 1);
    /* compact: enter/exit records of the loop take 2 bytes each here */
    double per_event = (double)s.data_bytes / (double)(2 * (N_CALLS + 9));
    if (per_event > 3.0)
        STROBE_FAIL("%.2f bytes per event", per_event);
    dec_stream_free(&s);

    struct dec_prof pr;
    dec_prof_load(file_in(path, proc, "t0.prof"), &pr);
    CHECK_EQ_INT(pr.hdr.thread_index, 0);
    CHECK_EQ_INT(pr.hdr.flags, STROBE_PROF_ENDED);
    uint32_t p_main[] = {main_id, 0}, p_work[] = {main_id, work, 0}, p_leaf[] = {main_id, work, leaf, 0},
             p_rec4[] = {main_id, work, rec, rec, rec, rec, 0},
             p_rec5[] = {main_id, work, rec, rec, rec, rec, rec, 0}, p_tl[] = {main_id, work, twice, leaf, 0};
    struct strobe_prof_node *n;
    n = &pr.slot[dec_prof_path(&pr, p_main)].node;
    CHECK_EQ_U64(n->visits, 1);
    uint64_t main_incl = n->incl_ticks;
    n = &pr.slot[dec_prof_path(&pr, p_work)].node;
    CHECK_EQ_U64(n->visits, 1);
    CHECK(n->incl_ticks <= main_incl);
    n = &pr.slot[dec_prof_path(&pr, p_leaf)].node;
    CHECK_EQ_U64(n->visits, N_CALLS);
    CHECK(n->min_ticks <= n->max_ticks && n->max_ticks <= n->incl_ticks);
    CHECK(n->sumsq_ticks >= (double)n->incl_ticks * (double)n->incl_ticks / N_CALLS * 0.999);
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, p_rec4)].node.visits, 1);
    CHECK_EQ_INT(dec_prof_path(&pr, p_rec5), UINT32_MAX);
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, p_tl)].node.visits, 2);
    CHECK_EQ_U64(dec_prof_visits(&pr, leaf), N_CALLS + 2);
    CHECK_EQ_U64(dec_prof_visits(&pr, rec), 4);
    CHECK_EQ_INT(pr.n, 1 + 1 + 1 + 1 + 4 + 1 + 1); /* root main work leaf rec*4 twice leaf */
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(killed_keeps_events)
{
    /* SIGKILL right after 5000 leaf calls: nothing after the kill, but
     * every event before it, in trace and profile. */
    const char *exp = exp_dir("killed_keeps_events");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "", PROG("calls") " 5000 kill"), 128 + 9);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    CHECK(d.nsync >= 2); /* a tick->ns line despite the kill */
    CHECK_EQ_INT(d.nend, 0);
    uint32_t leaf = fn_id(&d, out, "leaf");

    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    check_stream_basics(&s, d.pid, 0);
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_THREAD_END), 0);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, leaf), 5000);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_EXIT, leaf), 5000);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 5002); /* + main, work */
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_EXIT, UINT32_MAX), 5000);
    CHECK_EQ_INT(s.final_depth, 2);
    CHECK(s.file_bytes > s.data_bytes); /* the zero tail a killed writer leaves */
    dec_stream_free(&s);

    struct dec_prof pr;
    dec_prof_load(file_in(path, proc, "t0.prof"), &pr);
    CHECK_EQ_INT(pr.hdr.flags, 0); /* not ENDED */
    CHECK_EQ_U64(dec_prof_visits(&pr, leaf), 5000);
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(killed_externally)
{
    /* SIGKILL from outside at an arbitrary point of a long run, 5 times
     * (after 10 to 90 ms, a few million events):
     * whatever the last event was doing, the files decode (records are
     * committed by storing their first byte last), and trace and profile
     * agree to within the one event in flight. */
    for (int round = 0; round < 5; round++) {
        const char *exp = exp_dir("killed_externally");
        char *out, path[PBUF];
        char *dir = strdup(exp);
        *strrchr(dir, '/') = 0;
        /* kill it 10 to 90 ms into main() (its first line says it got
         * there); a program that dies or stalls before that line fails the
         * test at once or after 30 s, not at the ctest timeout */
        int rc = run(
            &out, exp, "STROBE_CHUNK_SIZE=64K",
            PROG(
                "calls") " 1000000000 >'%s/out' & pid=$!; end=$(($(date +%%s) + 30)); "
                         "until grep -q deeper '%s/out'; do "
                         "kill -0 $pid 2>/dev/null || { echo 'calls ended before its first line'; exit 3; }; "
                         "[ $(date +%%s) -lt $end ] || "
                         "{ kill -9 $pid; echo 'no first line from calls within 30 s'; exit 3; }; "
                         "sleep 0.001; done; "
                         "sleep 0.0%d; kill -9 $pid; wait $pid; cat '%s/out'",
            dir, dir, 1 + 2 * round, dir);
        free(dir);
        if (rc != 0)
            STROBE_FAIL("round %d: %s", round, out);
        const char *proc = only_proc(exp);
        static struct dec_defs d;
        dec_defs_load(file_in(path, proc, "defs"), &d);
        CHECK(d.nsync >= 2);
        uint32_t leaf = fn_id(&d, out, "leaf");
        static struct dec_stream s;
        dec_stream_load(file_in(path, proc, "t0.evt"), &s);
        size_t enters = dec_count(&s, STROBE_EV_ENTER, leaf), exits = dec_count(&s, STROBE_EV_EXIT, leaf);
        CHECK(enters > 1000);
        CHECK(enters == exits || enters == exits + 1);
        CHECK(s.final_depth == 2 || s.final_depth == 3);
        dec_stream_free(&s);
        struct dec_prof pr;
        dec_prof_load(file_in(path, proc, "t0.prof"), &pr);
        uint64_t visits = dec_prof_visits(&pr, leaf);
        CHECK(visits + 1 >= enters && visits <= enters + 1);
        dec_prof_free(&pr);
        free(out);
    }
}

STROBE_TEST(small_chunks)
{
    /* 4 KiB chunks: records never straddle one, padding is skipped. At
     * least a byte per event: more than 10 chunks however fast the clock. */
    const char *exp = exp_dir("small_chunks");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "STROBE_CHUNK_SIZE=4K", PROG("calls") " 30000"), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_INT(s.hdr.chunk_size, 4096);
    CHECK(s.file_bytes > 10 * 4096);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "leaf")), 30002);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_EXIT, UINT32_MAX), 30009);
    check_thread_end(&s);
    dec_stream_free(&s);
    free(out);
}

STROBE_TEST(trace_limit)
{
    /* An 8 KiB stream limit: the file stops there, every event beyond is
     * counted in `dropped`, and the thread's end still fits. */
    const char *exp = exp_dir("trace_limit");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "STROBE_CHUNK_SIZE=4K STROBE_TRACE_LIMIT=8K", PROG("calls") " 20000"), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_U64(s.hdr.limit_bytes, 8192);
    CHECK(s.file_bytes <= 8192);
    CHECK(s.hdr.dropped > 0);
    size_t recorded = dec_count(&s, STROBE_EV_ENTER, UINT32_MAX) + dec_count(&s, STROBE_EV_EXIT, UINT32_MAX);
    CHECK_EQ_U64(recorded + s.hdr.dropped, 2 * (20000 + 9));
    check_thread_end(&s);
    check_summary(&d, 0, &s, STROBE_THREAD_ENDED);
    dec_stream_free(&s);
    /* the profile is not limited by the trace */
    struct dec_prof pr;
    dec_prof_load(file_in(path, proc, "t0.prof"), &pr);
    CHECK_EQ_U64(dec_prof_visits(&pr, fn_id(&d, out, "leaf")), 20002);
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(profile_limit)
{
    /* 4 KiB = 63 slots: root, main, work, leaf, then rec nodes until the
     * limit; the tree is cut there and flagged, twice never gets a node,
     * and the nodes that exist keep counting. The trace is complete. */
    const char *exp = exp_dir("profile_limit");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "STROBE_PROFILE_LIMIT=4K", PROG("calls") " 100 rec 100"), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    uint32_t leaf = fn_id(&d, out, "leaf"), rec = fn_id(&d, out, "rec");
    struct dec_prof pr;
    dec_prof_load(file_in(path, proc, "t0.prof"), &pr);
    CHECK_EQ_INT(pr.hdr.flags, STROBE_PROF_ENDED | STROBE_PROF_OVERFLOW);
    CHECK_EQ_INT(pr.n, 63);
    CHECK_EQ_U64(dec_prof_visits(&pr, leaf), 100); /* the two leaf calls in twice are lost */
    CHECK_EQ_U64(dec_prof_visits(&pr, rec), 63 - 4);
    CHECK_EQ_U64(dec_prof_visits(&pr, fn_id(&d, out, "twice")), 0);
    dec_prof_free(&pr);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, rec), 101);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, leaf), 102);
    dec_stream_free(&s);
    free(out);
}

STROBE_TEST(trace_off)
{
    const char *exp = exp_dir("trace_off");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "STROBE_TRACE=0", PROG("calls") " 300"), 0);
    const char *proc = only_proc(exp);
    CHECK(!dec_exists(file_in(path, proc, "t0.evt")));
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    struct dec_prof pr;
    dec_prof_load(file_in(path, proc, "t0.prof"), &pr);
    CHECK_EQ_U64(dec_prof_visits(&pr, fn_id(&d, out, "leaf")), 302);
    CHECK_EQ_U64(dec_prof_visits(&pr, fn_id(&d, out, "rec")), 4);
    CHECK_EQ_INT(pr.hdr.flags, STROBE_PROF_ENDED);
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(profile_off)
{
    const char *exp = exp_dir("profile_off");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "STROBE_PROFILE=0", PROG("calls") " 300"), 0);
    const char *proc = only_proc(exp);
    CHECK(!dec_exists(file_in(path, proc, "t0.prof")));
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "leaf")), 302);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_EXIT, UINT32_MAX), 309);
    check_thread_end(&s);
    check_summary(&d, 0, &s, STROBE_THREAD_ENDED); /* records counted, not taken from visits */
    dec_stream_free(&s);
    free(out);
}

STROBE_TEST(profile_off_trace_limit)
{
    /* trace only, with drops: the counted records still match the stream */
    const char *exp = exp_dir("profile_off_trace_limit");
    char *out, path[PBUF];
    CHECK_EQ_INT(
        run(&out, exp, "STROBE_PROFILE=0 STROBE_CHUNK_SIZE=4K STROBE_TRACE_LIMIT=8K", PROG("calls") " 20000"),
        0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK(s.hdr.dropped > 0);
    check_summary(&d, 0, &s, STROBE_THREAD_ENDED);
    CHECK_EQ_U64(d.summary[0].events + d.summary[0].dropped, 2 * (20000 + 9) + 2);
    dec_stream_free(&s);
    free(out);
}

STROBE_TEST(enable_off)
{
    const char *exp = exp_dir("enable_off");
    char *out;
    CHECK_EQ_INT(run(&out, exp, "STROBE_ENABLE=0", PROG("calls") " 10"), 0);
    CHECK(!dec_exists(exp)); /* not even the experiment directory */
    CHECK(!strstr(out, "strobe:"));
    free(out);
}

/* A bad variable: one line naming it, no measurement at all, the program
 * still runs. */
static void check_refused(const char *exp, const char *env, const char *cmd, const char *msg)
{
    char *out;
    CHECK_EQ_INT(run(&out, exp, env, cmd), 0);
    CHECK_CONTAINS(out, msg);
    CHECK(!dec_exists(exp));
    free(out);
}

STROBE_TEST(bad_environment)
{
    const char *exp = exp_dir("bad_environment");
    char *out;
    check_refused(exp, "STROBE_CHUNK_SIZE=12K", PROG("calls") " 10",
                  "strobe: STROBE_CHUNK_SIZE=12K: must be a power of two");
    check_refused(exp, "STROBE_CHUNK_SIZE=2K", PROG("calls") " 10",
                  "strobe: STROBE_CHUNK_SIZE=2K: out of range; measurement disabled\n");
    CHECK_EQ_INT(run(&out, exp, "STROBE_TRACE=maybe", PROG("calls") " 10"), 0);
    CHECK_CONTAINS(out, "strobe: STROBE_TRACE=maybe: expected 0 or 1; measurement disabled\n");
    free(out);
    check_refused(exp, "STROBE_CLOCK=sundial", PROG("calls") " 10", "strobe: STROBE_CLOCK=sundial: ");
    check_refused(exp, "STROBE_PROFILE_LIMIT=448", PROG("calls") " 10",
                  "strobe: STROBE_PROFILE_LIMIT=448: out of range; measurement disabled\n");
    check_refused(exp, "STROBE_LOCKS=most", PROG("calls") " 10",
                  "strobe: STROBE_LOCKS=most: expected 0, 1 or all; measurement disabled\n");
}

STROBE_TEST(threads_taskgraph_tickets)
{
    /* STROBE_LOCKS=all: every create and join has a ticket, in the order
     * of the calls (one thread makes them all: strictly increasing) */
    const char *exp = exp_dir("threads_taskgraph");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "STROBE_LOCKS=all", PROG("threads")), 0);
    free(out);
    static struct dec_stream s;
    dec_stream_load(file_in(path, only_proc(exp), "t0.evt"), &s);
    uint64_t last = 0;
    size_t n = 0;
    for (size_t i = 0; i < s.n; i++) {
        const struct dec_event *e = &s.ev[i];
        if (e->kind != STROBE_EV_EXT ||
            (e->ext != STROBE_EXT_THREAD_CREATE && e->ext != STROBE_EXT_THREAD_JOIN))
            continue;
        CHECK_EQ_INT(e->npayload, 2);
        CHECK(e->payload[1] > last);
        last = e->payload[1];
        n++;
    }
    CHECK_EQ_INT(n, 8);
    dec_stream_free(&s);
}

STROBE_TEST(monotonic_clock)
{
    const char *exp = exp_dir("monotonic_clock");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "STROBE_CLOCK=monotonic", PROG("calls") " 200"), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    check_defs_basics(&d, 0);
    CHECK_EQ_U64(d.clock_kind, STROBE_CLOCK_MONOTONIC);
    for (int i = 0; i < d.nsync; i++)
        CHECK_EQ_U64(d.sync_ticks[i], d.sync_ns[i]);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "leaf")), 202);
    CHECK(s.ev[0].time >= d.sync_ns[0]); /* ticks are CLOCK_MONOTONIC ns */
    dec_stream_free(&s);
    struct dec_prof pr;
    dec_prof_load(file_in(path, proc, "t0.prof"), &pr);
    CHECK_EQ_U64(dec_prof_visits(&pr, fn_id(&d, out, "leaf")), 202);
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(longjmp_exits)
{
    /* jumper > deep > deeper longjmp()s back to jumper: the exits of deep
     * and deeper never come. leaf(7) then runs (recorded inside deeper,
     * the innermost open frame), and jumper's exit closes deeper, deep and
     * jumper, so the stream stays balanced. */
    const char *exp = exp_dir("longjmp_exits");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "", PROG("calls") " 10 longjmp"), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    uint32_t jumper = fn_id(&d, out, "jumper"), deep = fn_id(&d, out, "deep"),
             deeper = fn_id(&d, out, "deeper");
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_INT(s.final_depth, 0);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 10 + 9 + 4);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_EXIT, UINT32_MAX), 10 + 9 + 4);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_EXIT, deeper), 1);
    /* the three closing exits are consecutive and simultaneous */
    size_t i = 0;
    while (!(s.ev[i].kind == STROBE_EV_EXIT && s.ev[i].region == jumper))
        i++;
    CHECK(s.ev[i - 1].kind == STROBE_EV_EXIT && s.ev[i - 1].region == deep);
    CHECK(s.ev[i - 2].kind == STROBE_EV_EXIT && s.ev[i - 2].region == deeper);
    CHECK_EQ_U64(s.ev[i].time, s.ev[i - 2].time);
    dec_stream_free(&s);
    struct dec_prof pr;
    dec_prof_load(file_in(path, proc, "t0.prof"), &pr);
    uint32_t p[] = {
        fn_id(&d, out, "main"), fn_id(&d, out, "work"), jumper, deep, deeper, fn_id(&d, out, "leaf"), 0};
    uint32_t node = dec_prof_path(&pr, p);
    CHECK(node != UINT32_MAX);
    CHECK_EQ_U64(pr.slot[node].node.visits, 1);
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(exit_status)
{
    const char *exp = exp_dir("exit_status");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "", PROG("calls") " 10 exit 3"), 3);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    CHECK_EQ_INT(d.nend, 1);
    CHECK_EQ_INT(d.end_status, 3);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    check_thread_end(&s);
    CHECK(d.end_ticks >= s.ev[s.n - 1].time);
    /* exit() inside work: main and work stay open */
    CHECK_EQ_INT(s.final_depth, 2);
    dec_stream_free(&s);
    free(out);
}

/* ---- filter ---- */

static const char *write_filter(const char *name, const char *text)
{
    static char path[PBUF];
    fmt(path, sizeof path, "%s/%s.tmp/filter.txt", STROBE_TEST_WORK_DIR, name);
    FILE *f = fopen(path, "w");
    if (!f)
        STROBE_FAIL("cannot write %s", path);
    fputs(text, f);
    fclose(f);
    return path;
}

STROBE_TEST(filter_excludes)
{
    const char *exp = exp_dir("filter_excludes");
    const char *filter = write_filter("filter_excludes", "# no leaves\nexclude leaf\n");
    char *out, path[PBUF], env[PBUF];
    fmt(env, sizeof env, "STROBE_FILTER='%s'", filter);
    CHECK_EQ_INT(run(&out, exp, env, PROG("calls") " 500"), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    CHECK(dec_region_by_addr(&d, fn_addr(out, "leaf")) == NULL);
    CHECK_EQ_INT(d.nregions, 4);
    /* with a filter the runtime knows the names and records them */
    CHECK_EQ_INT(dec_region_by_name(&d, "work")->id, fn_id(&d, out, "work"));
    CHECK_EQ_INT(dec_region_by_name(&d, "rec")->id, fn_id(&d, out, "rec"));
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 7);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_EXIT, UINT32_MAX), 7);
    CHECK_EQ_INT(s.final_depth, 0);
    dec_stream_free(&s);
    struct dec_prof pr;
    dec_prof_load(file_in(path, proc, "t0.prof"), &pr);
    uint32_t p[] = {fn_id(&d, out, "main"), fn_id(&d, out, "work"), fn_id(&d, out, "twice"), 0};
    uint32_t node = dec_prof_path(&pr, p);
    CHECK_EQ_U64(pr.slot[node].node.visits, 1);
    CHECK_EQ_INT(pr.slot[node].node.first_child, STROBE_PROF_NONE);
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(filter_includes)
{
    const char *exp = exp_dir("filter_includes");
    const char *filter = write_filter("filter_includes", "exclude *\ninclude wor? rec\n");
    char *out, path[PBUF], env[PBUF];
    fmt(env, sizeof env, "STROBE_FILTER='%s'", filter);
    CHECK_EQ_INT(run(&out, exp, env, PROG("calls") " 50"), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    CHECK_EQ_INT(d.nregions, 2);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "work")), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "rec")), 4);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 5);
    dec_stream_free(&s);
    free(out);
}

STROBE_TEST(filter_error)
{
    const char *exp = exp_dir("filter_error");
    const char *filter = write_filter("filter_error", "exclude leaf\nfrobnicate rec\n");
    char *out, env[PBUF], want[PBUF];
    fmt(env, sizeof env, "STROBE_FILTER='%s'", filter);
    CHECK_EQ_INT(run(&out, exp, env, PROG("calls") " 5 >/dev/null"), 0);
    fmt(want, sizeof want, "strobe: %s:2: unknown keyword 'frobnicate' (expected include or exclude)\n",
        filter);
    CHECK_STR_EQ(out, want);
    CHECK(!dec_exists(exp));
    free(out);
}

/* ---- modules loaded later ---- */

STROBE_TEST(dlopen_module)
{
    /* The plugin's functions are outside every module known at start-up:
     * their first event rescans and describes the plugin. With a filter,
     * its symbols are read then too. */
    const char *exp = exp_dir("dlopen_module");
    const char *filter = write_filter("dlopen_module", "exclude plugin_leaf\n");
    char *out, path[PBUF], env[PBUF];
    fmt(env, sizeof env, "STROBE_FILTER='%s'", filter);
    for (int filtered = 0; filtered < 2; filtered++) {
        if (filtered)
            exp = exp_dir("dlopen_module2");
        CHECK_EQ_INT(
            run(&out, exp, filtered ? env : "", PROG("dlopen") " " STROBE_TEST_BIN_DIR "/core_plugin.so"), 0);
        const char *proc = only_proc(exp);
        static struct dec_defs d;
        dec_defs_load(file_in(path, proc, "defs"), &d);
        uint64_t work = fn_addr(out, "plugin_work");
        const struct dec_module *m = NULL;
        for (int i = 0; i < d.nmodules; i++)
            if (strstr(d.modules[i].path, "/core_plugin.so") && work >= d.modules[i].lo &&
                work < d.modules[i].hi)
                m = &d.modules[i];
        CHECK(m != NULL);
        uint32_t work_id = fn_id(&d, out, "plugin_work");
        static struct dec_stream s;
        dec_stream_load(file_in(path, proc, "t0.evt"), &s);
        CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, work_id), 1);
        if (!filtered) {
            CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "plugin_leaf")), 5);
            CHECK_STR_EQ(dec_region_by_id(&d, work_id)->name, "");
        } else {
            CHECK(dec_region_by_addr(&d, fn_addr(out, "plugin_leaf")) == NULL);
            CHECK_STR_EQ(dec_region_by_id(&d, work_id)->name, "plugin_work");
            CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 2);
        }
        dec_stream_free(&s);
        free(out);
    }
}

/* ---- threads ---- */

STROBE_TEST(threads)
{
    const char *exp = exp_dir("threads");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "", PROG("threads")), 0);
    const char *proc = only_proc(exp);
    CHECK_EQ_INT(dir_entries(proc), 1 + 2 * 5);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    uint32_t spawn = fn_id(&d, out, "spawn"), worker = fn_id(&d, out, "worker"),
             compute = fn_id(&d, out, "compute"), leaf = fn_id(&d, out, "leaf");

    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    check_stream_basics(&s, d.pid, 0);
    check_thread_end(&s);
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_THREAD_CREATE), 4);
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_THREAD_JOIN), 4);
    for (size_t k = 0; k < 4; k++) {
        const struct dec_event *c = dec_find_ext(&s, STROBE_EXT_THREAD_CREATE, k);
        const struct dec_event *j = dec_find_ext(&s, STROBE_EXT_THREAD_JOIN, k);
        CHECK_EQ_U64(c->payload[0], k + 1);
        CHECK_EQ_U64(j->payload[0], k + 1);
        CHECK_EQ_INT(c->npayload, 2);
        CHECK_EQ_U64(c->payload[1], 0); /* no ticket without task-graph recording */
        CHECK_EQ_INT(j->npayload, 2);
        CHECK_EQ_U64(j->payload[1], 0);
        CHECK_EQ_INT(c->depth, 2); /* inside main > spawn */
    }
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, spawn), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 2);
    check_summary(&d, 0, &s, STROBE_THREAD_ENDED);
    uint64_t created[5];
    for (size_t k = 0; k < 4; k++)
        created[k + 1] = dec_find_ext(&s, STROBE_EXT_THREAD_CREATE, k)->time;
    dec_stream_free(&s);

    uint64_t tids[5] = {d.pid};
    for (unsigned k = 1; k <= 4; k++) {
        char name[32];
        fmt(name, sizeof name, "t%u.evt", k);
        dec_stream_load(file_in(path, proc, name), &s);
        CHECK_EQ_INT(s.hdr.thread_index, k);
        check_stream_basics(&s, 0, 1); /* created by thread 0 */
        check_thread_end(&s);
        check_summary(&d, k, &s, STROBE_THREAD_ENDED);
        CHECK(s.ev[0].time >= created[k]); /* one clock for all threads */
        tids[k] = s.ev[0].payload[0];
        for (unsigned j = 0; j < k; j++)
            CHECK(tids[j] != tids[k]);
        CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, worker), 1);
        CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, compute), 10 * k);
        CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, leaf), 20 * k);
        CHECK_EQ_INT(dec_count(&s, STROBE_EV_EXIT, UINT32_MAX), 1 + 30 * k);
        CHECK_EQ_INT(s.final_depth, 0);
        dec_stream_free(&s);

        fmt(name, sizeof name, "t%u.prof", k);
        struct dec_prof pr;
        dec_prof_load(file_in(path, proc, name), &pr);
        CHECK_EQ_INT(pr.hdr.thread_index, k);
        CHECK_EQ_INT(pr.hdr.flags, STROBE_PROF_ENDED);
        uint32_t p[] = {worker, compute, leaf, 0};
        CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, p)].node.visits, 20 * k);
        dec_prof_free(&pr);
    }
    free(out);
}

STROBE_TEST(thread_calls_exit)
{
    /* exit(5) from thread 2 while main waits: no crash, the status and
     * the calling thread's end are recorded. */
    const char *exp = exp_dir("thread_calls_exit");
    char *out, path[PBUF];
    /* (the threads exit() ends are never joined: no TSan leak report) */
    CHECK_EQ_INT(run(&out, exp, "TSAN_OPTIONS=report_thread_leaks=0", PROG("threads") " exit 5"), 5);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    CHECK_EQ_INT(d.nend, 1);
    CHECK_EQ_INT(d.end_status, 5);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t2.evt"), &s);
    check_thread_end(&s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "compute")), 20);
    check_summary(&d, 2, &s, STROBE_THREAD_ENDED);
    dec_stream_free(&s);
    /* main waits inside main > spawn: still running when thread 2 ended
     * the process, with those two frames open */
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    check_summary(&d, 0, &s, STROBE_THREAD_AT_EXIT);
    CHECK_EQ_U64(d.summary[0].depth, 2);
    CHECK_EQ_U64(d.summary[0].open_region[0], fn_id(&d, out, "main"));
    CHECK_EQ_U64(d.summary[0].open_region[1], fn_id(&d, out, "spawn"));
    dec_stream_free(&s);
    free(out);
}

STROBE_TEST(threads_pthread_exit)
{
    /* pthread_exit() from inside nested frames ends the thread's
     * measurement there (its open frames stay open); main() leaving by
     * pthread_exit() still gets a PROCESS_END with status 0. */
    const char *exp = exp_dir("threads_pthread_exit");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "", PROG("threads") " pexit"), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    CHECK_EQ_INT(d.nend, 1);
    CHECK_EQ_INT(d.end_status, 0);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t3.evt"), &s);
    check_thread_end(&s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "compute")), 5);
    CHECK_EQ_INT(s.final_depth, 2); /* worker > compute */
    dec_stream_free(&s);
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    check_thread_end(&s);
    CHECK_EQ_INT(s.final_depth, 1); /* main */
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_THREAD_JOIN), 4);
    dec_stream_free(&s);
    struct dec_prof pr;
    dec_prof_load(file_in(path, proc, "t3.prof"), &pr);
    CHECK_EQ_INT(pr.hdr.flags, STROBE_PROF_ENDED);
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(threads_c11)
{
    /* A thread the runtime did not see created (thrd_create calls libc's
     * pthread_create internally): registered on its first event, no
     * parent, ended by the TLS key destructor. */
    const char *exp = exp_dir("threads_c11");
    char *out, path[PBUF];
    CHECK_EQ_INT(run(&out, exp, "", PROG("threads") " c11"), 0);
    const char *proc = only_proc(exp);
    CHECK_EQ_INT(dir_entries(proc), 1 + 2 * 6);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t5.evt"), &s);
    check_stream_basics(&s, 0, 0);
    check_thread_end(&s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "compute")), 10);
    dec_stream_free(&s);
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_THREAD_CREATE), 4);
    dec_stream_free(&s);
    free(out);
}

STROBE_TEST(many_threads)
{
    /* 300 short threads, 4 at a time: every one gets its stream and its
     * profile, with a unique index, and t0 records each create and join. */
    const char *exp = exp_dir("many_threads");
    char *out, path[PBUF], name[32];
    CHECK_EQ_INT(run(&out, exp, "", PROG("stress") " many"), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    uint32_t leaf = fn_id(&d, out, "leaf");
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    size_t creates = dec_count_ext(&s, STROBE_EXT_THREAD_CREATE);
    CHECK(creates >= 300); /* (+1 for TSan's background thread in TSan builds) */
    static bool joined[400];
    for (size_t i = 0; i < 300; i++) {
        uint64_t k = dec_find_ext(&s, STROBE_EXT_THREAD_JOIN, i)->payload[0];
        CHECK(k >= 1 && k < 400 && !joined[k]);
        joined[k] = true;
    }
    dec_stream_free(&s);
    int streams = 0;
    for (unsigned k = 1; k < 400; k++) {
        fmt(name, sizeof name, "t%u.evt", k);
        if (!dec_exists(file_in(path, proc, name)))
            continue;
        streams++;
        CHECK(joined[k]);
        dec_stream_load(path, &s);
        CHECK_EQ_INT(s.hdr.thread_index, k);
        check_stream_basics(&s, 0, 1);
        check_thread_end(&s);
        CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, leaf), 10);
        dec_stream_free(&s);
    }
    CHECK_EQ_INT(streams, 300);
    free(out);
}

STROBE_TEST(fork_while_threads_run)
{
    /* fork() from the main thread while four threads record events into
     * 4 KiB chunks (switching chunks, under the runtime's lock, all the
     * time): every process's files decode and hold exact counts. */
    const char *exp = exp_dir("fork_while_threads_run");
    char *out, path[PBUF], dir[PBUF], name[32];
    /* (TSan remembers the parent's threads in each child and calls them
     * leaked when the child exits) */
    CHECK_EQ_INT(
        /* detect_leaks=0: a child forked while another thread holds
         * GCC 12 libasan's allocator lock deadlocks in LeakSanitizer's exit
         * check (the sanitizer does not guard that lock across fork) */
        run(&out, exp, "STROBE_CHUNK_SIZE=4K TSAN_OPTIONS=report_thread_leaks=0 ASAN_OPTIONS=detect_leaks=0",
            PROG("stress") " fork"),
        0);
    char names[8][256];
    CHECK_EQ_INT(proc_dirs(exp, names, 8), 5);
    int parents = 0;
    for (int i = 0; i < 5; i++) {
        static struct dec_defs d;
        static struct dec_stream s;
        fmt(dir, sizeof dir, "%s/%s", exp, names[i]);
        dec_defs_load(file_in(path, dir, "defs"), &d);
        CHECK_EQ_INT(d.nend, 1);
        CHECK_EQ_INT(d.end_status, 0);
        uint32_t leaf = fn_id(&d, out, "leaf");
        if (d.parent_dir[0] == 0) { /* the parent */
            parents++;
            CHECK_EQ_INT(dir_entries(dir), 1 + 2 * 5);
            for (unsigned k = 1; k <= 4; k++) {
                fmt(name, sizeof name, "t%u.evt", k);
                dec_stream_load(file_in(path, dir, name), &s);
                CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, leaf), 100000);
                CHECK_EQ_INT(s.final_depth, 0);
                check_thread_end(&s);
                dec_stream_free(&s);
            }
            dec_stream_load(file_in(path, dir, "t0.evt"), &s);
            CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_FORK), 4);
            dec_stream_free(&s);
        } else {
            CHECK_EQ_INT(dir_entries(dir), 3); /* only the forking thread lives on */
            dec_stream_load(file_in(path, dir, "t0.evt"), &s);
            check_stream_basics(&s, d.pid, 0);
            check_thread_end(&s);
            /* its own process: nothing of main > forker is inherited */
            CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_INHERIT), 0);
            CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "child_work")), 1);
            CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, leaf), 100);
            CHECK_EQ_INT(s.final_depth, 0);
            CHECK_EQ_U64(d.summary[0].how, STROBE_THREAD_ENDED);
            CHECK_EQ_U64(d.summary[0].depth, 0);
            dec_stream_free(&s);
        }
    }
    CHECK_EQ_INT(parents, 1);
    free(out);
}

/* ---- processes ---- */

/* The rank from the launcher's environment is in defs, once, also in a
 * fork child's; no rank variable, no record. */
STROBE_TEST(mpi_rank)
{
    const char *exp = exp_dir("mpi_rank");
    char *out, path[PBUF], names[4][256];
    CHECK_EQ_INT(run(&out, exp, "PMI_RANK=2 PMI_SIZE=4", PROG("fork")), 0);
    free(out);
    CHECK_EQ_INT(proc_dirs(exp, names, 4), 2);
    for (int i = 0; i < 2; i++) {
        static struct dec_defs d;
        char dir[PBUF];
        fmt(dir, sizeof dir, "%s/%s", exp, names[i]);
        dec_defs_load(file_in(path, dir, "defs"), &d);
        CHECK_EQ_INT(d.nrank, 1);
        CHECK_EQ_U64(d.rank, 2);
        CHECK_EQ_U64(d.world_size, 4);
        CHECK_STR_EQ(d.rank_source, "PMI_RANK");
    }
    exp = exp_dir("mpi_rank_none");
    CHECK_EQ_INT(run(&out, exp, "", PROG("calls")), 0);
    free(out);
    static struct dec_defs d;
    dec_defs_load(file_in(path, only_proc(exp), "defs"), &d);
    CHECK_EQ_INT(d.nrank, 0);
}

/* STROBE_LAUNCHER_PID: the process of that pid stays unmeasured, also
 * after exec; a process it starts is measured. Here the launcher is a
 * shell that exports its own pid, then execs a shell that runs the
 * program as a child. */
STROBE_TEST(launcher_pid)
{
    const char *exp = exp_dir("launcher_pid");
    char *out, path[PBUF], names[4][256];
    CHECK_EQ_INT(
        run(&out, exp, "", "sh -c 'export STROBE_LAUNCHER_PID=$$; exec sh -c \"%s; true\"'", PROG("calls")),
        0);
    free(out);
    /* the first shell image (started before it named itself) and the
     * program; not the exec()ed shell, which would be proc-<pid>-1 */
    CHECK_EQ_INT(proc_dirs(exp, names, 4), 2);
    int progs = 0;
    for (int i = 0; i < 2; i++) {
        static struct dec_defs d;
        char dir[PBUF];
        CHECK(strchr(names[i] + 5, '-') == NULL);
        fmt(dir, sizeof dir, "%s/%s", exp, names[i]);
        dec_defs_load(file_in(path, dir, "defs"), &d);
        progs += strcmp(strrchr(d.exe, '/'), "/core_prog_calls") == 0;
    }
    CHECK_EQ_INT(progs, 1);
}

STROBE_TEST(fork_child)
{
    const char *exp = exp_dir("fork_child");
    char *out, path[PBUF], parent[PBUF], child[PBUF];
    CHECK_EQ_INT(run(&out, exp, "", PROG("fork")), 0);
    char names[4][256];
    CHECK_EQ_INT(proc_dirs(exp, names, 4), 2);
    static struct dec_defs d0, d1;
    fmt(parent, sizeof parent, "%s/%s", exp, names[0]);
    fmt(child, sizeof child, "%s/%s", exp, names[1]);
    dec_defs_load(file_in(path, parent, "defs"), &d0);
    if (strcmp(d0.parent_dir, "") != 0) { /* sorted by name; the child's pid may sort first */
        fmt(parent, sizeof parent, "%s/%s", exp, names[1]);
        fmt(child, sizeof child, "%s/%s", exp, names[0]);
        dec_defs_load(file_in(path, parent, "defs"), &d0);
    }
    dec_defs_load(file_in(path, child, "defs"), &d1);
    check_defs_basics(&d0, 0);
    check_defs_basics(&d1, 0);
    CHECK_STR_EQ(d1.parent_dir, strrchr(parent, '/') + 1);
    CHECK_EQ_U64(d1.ppid, d0.pid);
    CHECK_EQ_INT(d0.nend, 1);
    CHECK_EQ_INT(d1.nend, 1);
    CHECK_EQ_INT(d1.end_status, 0);
    /* ids inherited in memory mean the same in the child's defs */
    uint32_t main_id = fn_id(&d0, out, "main"), forker = fn_id(&d0, out, "forker"),
             leaf = fn_id(&d0, out, "leaf");
    CHECK_EQ_INT(fn_id(&d1, out, "main"), main_id);
    CHECK_EQ_INT(fn_id(&d1, out, "forker"), forker);
    CHECK(d1.nsync >= 3); /* the parent's points, copied, and the child's own */

    static struct dec_stream s;
    dec_stream_load(file_in(path, parent, "t0.evt"), &s);
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_FORK), 1);
    const struct dec_event *f = dec_find_ext(&s, STROBE_EXT_FORK, 0);
    CHECK_EQ_U64(f->payload[0], d1.pid);
    CHECK_EQ_INT(f->depth, 2);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, leaf), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 3);
    CHECK_EQ_INT(s.final_depth, 0);
    dec_stream_free(&s);

    dec_stream_load(file_in(path, child, "t0.evt"), &s);
    check_stream_basics(&s, d1.pid, 0);
    check_thread_end(&s);
    /* The child starts with an empty stack: main > forker are the
     * parent's visits; its returns from them are ignored. */
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_INHERIT), 0);
    /* ids registered after the fork are each process's own */
    uint32_t child_work = fn_id(&d1, out, "child_work"), child_leaf = fn_id(&d1, out, "leaf");
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, child_work), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, child_leaf), 3);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 4);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_EXIT, UINT32_MAX), 4); /* leaf*3 child_work */
    CHECK_EQ_INT(s.final_depth, 0);
    dec_stream_free(&s);
    CHECK_EQ_U64(d1.summary[0].how, STROBE_THREAD_ENDED);
    CHECK_EQ_U64(d1.summary[0].events, 4 + 4 + 2); /* + THREAD_BEGIN, THREAD_END */
    CHECK_EQ_U64(d1.summary[0].depth, 0);

    struct dec_prof pr;
    dec_prof_load(file_in(path, child, "t0.prof"), &pr);
    uint32_t pw[] = {child_work, 0}, pl[] = {child_work, child_leaf, 0};
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, pw)].node.visits, 1);
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, pl)].node.visits, 3);
    CHECK_EQ_INT(pr.n, 3); /* root child_work leaf */
    dec_prof_free(&pr);
    dec_prof_load(file_in(path, parent, "t0.prof"), &pr);
    CHECK_EQ_U64(dec_prof_visits(&pr, leaf), 1);
    CHECK_EQ_INT(pr.n, 4); /* root main forker leaf */
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(exec_new_image)
{
    /* The parent exec()s itself after the child: proc-P (before the exec,
     * ended without PROCESS_END), proc-C (the child), proc-P-1 (after). */
    const char *exp = exp_dir("exec_new_image");
    char *out, path[PBUF], dir[PBUF];
    CHECK_EQ_INT(run(&out, exp, "", PROG("fork") " exec"), 0);
    char names[4][256];
    CHECK_EQ_INT(proc_dirs(exp, names, 4), 3);
    int after = -1;
    for (int i = 0; i < 3; i++)
        if (strchr(names[i] + 5, '-'))
            after = i;
    CHECK(after >= 0);
    char before[256];
    fmt(before, sizeof before, "%.*s", (int)(strrchr(names[after], '-') - names[after]), names[after]);
    static struct dec_defs d0, d2;
    fmt(dir, sizeof dir, "%s/%s", exp, before);
    dec_defs_load(file_in(path, dir, "defs"), &d0);
    CHECK_EQ_INT(d0.nend, 0); /* exec() replaced it */
    static struct dec_stream s;
    dec_stream_load(file_in(path, dir, "t0.evt"), &s);
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_THREAD_END), 0);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 3);
    dec_stream_free(&s);

    fmt(dir, sizeof dir, "%s/%s", exp, names[after]);
    dec_defs_load(file_in(path, dir, "defs"), &d2);
    check_defs_basics(&d2, d0.pid);
    CHECK_STR_EQ(d2.parent_dir, "");
    CHECK_EQ_INT(d2.nend, 1);
    CHECK_EQ_INT(d2.nregions, 2); /* main, leaf */
    dec_stream_load(file_in(path, dir, "t0.evt"), &s);
    check_stream_basics(&s, d0.pid, 0);
    check_thread_end(&s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d2, out, "exec_leaf")), 2);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d2, out, "exec_main")), 1);
    dec_stream_free(&s);
    free(out);
}

/* ---- signals ---- */

STROBE_TEST(signal_reentry)
{
    const char *exp = exp_dir("signal_reentry");
    char *out, path[PBUF];
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    const long calls = 200000; /* sanitizers make each event ~10x slower */
#else
    const long calls = 1000000;
#endif
    CHECK_EQ_INT(run(&out, exp, "", PROG("signal") " %ld 20", calls), 0);
    const char *p = strstr(out, "ticks ");
    CHECK(p);
    long ticks = atol(p + 6);
    CHECK(ticks > 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "leaf")), calls);
    /* a handler that never ran unskipped has no REGION */
    const struct dec_region *on_tick = dec_region_by_addr(&d, fn_addr(out, "on_tick"));
    const struct dec_region *tick_leaf = dec_region_by_addr(&d, fn_addr(out, "tick_leaf"));
    size_t handled = on_tick ? dec_count(&s, STROBE_EV_ENTER, on_tick->id) : 0;
    CHECK_EQ_U64(s.hdr.dropped % 4, 0);
    CHECK_EQ_U64(handled + s.hdr.dropped / 4, (uint64_t)ticks);
    if (on_tick)
        CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, tick_leaf->id), handled);
    CHECK_EQ_INT(s.final_depth, 0);
    printf("%ld ticks, %zu recorded, %llu events dropped\n", ticks, handled,
           (unsigned long long)s.hdr.dropped);
    dec_stream_free(&s);
    free(out);
}

/* ---- annotation API (linked, not preloaded) ---- */

static const char *annotate_cmd(char *buf, size_t cap, const char *exp, const char *env)
{
    fmt(buf, cap,
        "env -u STROBE_FILTER -u STROBE_TRACE -u STROBE_PROFILE -u STROBE_ENABLE -u LD_PRELOAD "
        "STROBE_EXPERIMENT_DIR='%s' %s " PROG("annotate"),
        exp, env);
    return buf;
}

STROBE_TEST(annotate)
{
    const char *exp = exp_dir("annotate");
    char *out, path[PBUF], cmd[4 * PBUF];
    CHECK_EQ_INT(strobe_test_sh(&out, "%s", annotate_cmd(cmd, sizeof cmd, exp, "")), 0);
    CHECK_CONTAINS(out, "active 1\n");
    char want[PBUF];
    fmt(want, sizeof want, "dir %s\n", exp);
    CHECK_CONTAINS(out, want);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    check_defs_basics(&d, 0);
    CHECK_EQ_INT(d.nend, 1);
    CHECK_EQ_INT(d.nregions, 4);
    const struct dec_region *outer = dec_region_by_name(&d, "outer"),
                            *inner = dec_region_by_name(&d, "inner"),
                            *block = dec_region_by_name(&d, "block"), *rec = dec_region_by_name(&d, "rec");
    CHECK(outer && inner && block && rec);
    CHECK_EQ_INT(outer->kind, STROBE_REGION_USER);
    CHECK_EQ_U64(outer->addr, 0);
    CHECK(strstr(outer->file, "prog_annotate.c") != NULL);
    CHECK(outer->line > 0 && block->line > 0);
    CHECK_EQ_INT(d.nmetrics, 2);
    const struct dec_metric *bytes = dec_metric_by_name(&d, "bytes"),
                            *items = dec_metric_by_name(&d, "items");
    CHECK(bytes && items);
    CHECK_STR_EQ(bytes->unit, "B");
    CHECK_STR_EQ(items->unit, "");
    CHECK(bytes->id >= 1 && items->id >= 1 && bytes->id != items->id);

    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    check_thread_end(&s);
    CHECK_EQ_INT(s.final_depth, 0);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, outer->id), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, block->id), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, inner->id), 10);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, rec->id), 5);
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_METRIC), 11);
    int64_t sum = 0;
    for (size_t i = 0, k = 0; i < s.n; i++) {
        const struct dec_event *e = &s.ev[i];
        if (e->kind != STROBE_EV_EXT || e->ext != STROBE_EXT_METRIC)
            continue;
        CHECK_EQ_INT(e->npayload, 2);
        if (e->payload[0] == bytes->id) {
            CHECK_EQ_INT(strobe_unzigzag(e->payload[1]), (int64_t)k++);
            CHECK_EQ_INT(e->depth, 2); /* outer > inner */
            sum += strobe_unzigzag(e->payload[1]);
        } else {
            CHECK_EQ_U64(e->payload[0], items->id);
            CHECK_EQ_INT(strobe_unzigzag(e->payload[1]), -3);
        }
    }
    CHECK_EQ_INT(sum, 45);
    dec_stream_free(&s);

    struct dec_prof pr;
    dec_prof_load(file_in(path, proc, "t0.prof"), &pr);
    uint32_t po[] = {outer->id, 0}, pi[] = {outer->id, inner->id, 0},
             pr5[] = {outer->id, rec->id, rec->id, rec->id, rec->id, rec->id, 0};
    uint32_t no = dec_prof_path(&pr, po), ni = dec_prof_path(&pr, pi);
    CHECK_EQ_U64(pr.slot[ni].node.visits, 10);
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, pr5)].node.visits, 1);
    const struct strobe_prof_metric *m = dec_prof_metric(&pr, ni, bytes->id);
    CHECK(m);
    CHECK_EQ_U64(m->count, 10);
    CHECK_EQ_INT(m->sum, 45);
    CHECK_EQ_INT(m->min, 0);
    CHECK_EQ_INT(m->max, 9);
    m = dec_prof_metric(&pr, no, items->id);
    CHECK(m);
    CHECK_EQ_U64(m->count, 1);
    CHECK_EQ_INT(m->sum, -3);
    CHECK(dec_prof_metric(&pr, no, bytes->id) == NULL);
    dec_prof_free(&pr);
    free(out);
}

/* The index of the last thread t0 created (its THREAD_CREATE records). */
static uint64_t last_created_thread(const char *proc, char *path)
{
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    size_t creates = dec_count_ext(&s, STROBE_EXT_THREAD_CREATE);
    CHECK(creates >= 1);
    uint64_t index = dec_find_ext(&s, STROBE_EXT_THREAD_CREATE, creates - 1)->payload[0];
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_THREAD_JOIN), 1);
    CHECK_EQ_U64(dec_find_ext(&s, STROBE_EXT_THREAD_JOIN, 0)->payload[0], index);
    dec_stream_free(&s);
    return index;
}

STROBE_TEST(annotate_thread)
{
    /* pthread_create/join are interposed when linked, too. (In a TSan
     * build libtsan precedes libstrobe and starts its own background
     * thread through our pthread_create on first use: that one is created
     * first, never ends and makes no events, so our thread is the last
     * one created.) */
    const char *exp = exp_dir("annotate_thread");
    char *out, path[PBUF], cmd[4 * PBUF], name[32];
    CHECK_EQ_INT(strobe_test_sh(&out, "%s thread", annotate_cmd(cmd, sizeof cmd, exp, "")), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    uint64_t index = last_created_thread(proc, path);
    static struct dec_stream s;
    fmt(name, sizeof name, "t%u.evt", (unsigned)index);
    dec_stream_load(file_in(path, proc, name), &s);
    check_stream_basics(&s, 0, 1);
    check_thread_end(&s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, dec_region_by_name(&d, "inner")->id), 3);
    dec_stream_free(&s);
    free(out);
}

/* Counts per call path without an event each (adapter.h): visits and
 * metric totals under the path taken, nothing in the trace, and a rewind
 * that closes the frames entered since. */
STROBE_TEST(adapter_counts_per_path)
{
    const char *exp = exp_dir("adapter_counts");
    char *out, path[PBUF], cmd[4 * PBUF], name[32];
    CHECK_EQ_INT(strobe_test_sh(&out, "%s adapter", annotate_cmd(cmd, sizeof cmd, exp, "")), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    const struct dec_region *outer = dec_region_by_name(&d, "outer"),
                            *inner = dec_region_by_name(&d, "inner");
    const struct dec_metric *items = dec_metric_by_name(&d, "items");
    CHECK(outer && inner && items);
    const struct dec_region *counted = NULL;
    for (int i = 0; i < d.nregions; i++)
        if (d.regions[i].kind == STROBE_REGION_TM_ATOMIC)
            counted = &d.regions[i];
    CHECK(counted != NULL && counted->addr != 0);
    uint64_t index = last_created_thread(proc, path);
    static struct dec_stream s;
    fmt(name, sizeof name, "t%u.evt", (unsigned)index);
    dec_stream_load(file_in(path, proc, name), &s);
    check_thread_end(&s);
    CHECK_EQ_INT(s.final_depth, 0);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, inner->id), 2);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, counted->id), 0);
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_METRIC), 0);
    dec_stream_free(&s);
    struct dec_prof pr;
    fmt(name, sizeof name, "t%u.prof", (unsigned)index);
    dec_prof_load(file_in(path, proc, name), &pr);
    uint32_t pc[] = {outer->id, counted->id, 0}, pi[] = {outer->id, inner->id, inner->id, 0};
    uint32_t nc = dec_prof_path(&pr, pc);
    CHECK_EQ_U64(pr.slot[nc].node.visits, 7);
    CHECK_EQ_U64(pr.slot[nc].node.incl_ticks, 0);
    CHECK_EQ_U64(pr.slot[nc].node.min_ticks, UINT64_MAX); /* untimed */
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, pi)].node.visits, 1);
    const struct strobe_prof_metric *m = dec_prof_metric(&pr, nc, items->id);
    CHECK(m);
    CHECK_EQ_U64(m->count, 3);
    CHECK_EQ_INT(m->sum, 12);
    CHECK_EQ_INT(m->min, 1);
    CHECK_EQ_INT(m->max, 8);
    dec_prof_free(&pr);
    free(out);
}

/* ---- pausing and resuming recording (prog_pause.c) ---- */

static const char *pause_cmd(char *buf, size_t cap, const char *exp, const char *env, const char *mode)
{
    fmt(buf, cap,
        "rm -rf '%s' && env -u STROBE_FILTER -u STROBE_TRACE -u STROBE_PROFILE -u STROBE_ENABLE -u LD_PRELOAD "
        "-u STROBE_DELAY -u STROBE_DURATION -u STROBE_TOGGLE_SIGNAL STROBE_EXPERIMENT_DIR='%s' %s " PROG("pause")
        " %s",
        exp, exp, env, mode);
    return buf;
}

/* t0's stream, summary and profile of a prog_pause run, checked for
 * consistency: every thread's summary matches its stream, whose nesting
 * the decoder checks. */
static void pause_load(const char *proc, struct dec_defs *d, struct dec_stream *s, struct dec_prof *pr)
{
    char path[PBUF];
    dec_defs_load(file_in(path, proc, "defs"), d);
    check_defs_basics(d, 0);
    dec_stream_load(file_in(path, proc, "t0.evt"), s);
    check_stream_basics(s, d->pid, 0);
    check_thread_end(s);
    check_summary(d, 0, s, STROBE_THREAD_ENDED);
    CHECK_EQ_INT(s->final_depth, 0);
    dec_prof_load(file_in(path, proc, "t0.prof"), pr);
}

STROBE_TEST(pause_api)
{
    const char *exp = exp_dir("pause_api");
    char *out, path[PBUF], cmd[4 * PBUF];
    CHECK_EQ_INT(strobe_test_sh(&out, "%s", pause_cmd(cmd, sizeof cmd, exp, "", "api")), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    static struct dec_stream s;
    struct dec_prof pr;
    pause_load(proc, &d, &s, &pr);
    uint32_t m = fn_id(&d, out, "main"), leaf = fn_id(&d, out, "leaf"), outer = fn_id(&d, out, "outer");
    /* run_api is static: found as main's only child */
    uint32_t run = 0;
    for (uint32_t i = 1; i < pr.n; i++)
        if (pr.slot[i].node.tag == STROBE_SLOT_NODE && pr.slot[i].node.parent != 0 &&
            pr.slot[pr.slot[i].node.parent].node.region == m && pr.slot[pr.slot[i].node.parent].node.parent == 0)
            run = pr.slot[i].node.region;
    CHECK(run != 0);
    uint32_t p_leaf[] = {m, run, leaf, 0}, p_outer[] = {m, run, outer, 0}, p_outer_leaf[] = {m, run, outer, leaf, 0};
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, p_leaf)].node.visits, 17);
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, p_outer)].node.visits, 1);
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, p_outer_leaf)].node.visits, 2);
    CHECK_EQ_U64(dec_prof_visits(&pr, leaf), 19);
    /* resumer was entered while paused: neither region nor visit */
    const struct dec_region *r = dec_region_by_addr(&d, fn_addr(out, "resumer"));
    CHECK(!r || dec_prof_visits(&pr, r->id) == 0);
    /* the trace agrees: 19 leaf and one outer visit, entered and left */
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, leaf), 19);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, outer), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), dec_count(&s, STROBE_EV_EXIT, UINT32_MAX));
    /* the metric: the recorded sample only */
    const struct dec_metric *mm = dec_metric_by_name(&d, "m");
    CHECK(mm != NULL);
    CHECK_EQ_INT(dec_count_ext(&s, STROBE_EXT_METRIC), 1);
    /* one pause: outer's strobe_pause to resumer's strobe_resume */
    CHECK_EQ_INT(d.nrecording, 2);
    CHECK_EQ_U64(d.recording_what[0], STROBE_RECORDING_STOP);
    CHECK_EQ_U64(d.recording_what[1], STROBE_RECORDING_RESUME);
    CHECK_EQ_U64(d.recording_cause[0], STROBE_RECORDING_API);
    CHECK_EQ_U64(d.recording_cause[1], STROBE_RECORDING_API);
    CHECK(d.recording_ticks[0] < d.recording_ticks[1]);
    dec_stream_free(&s);
    dec_prof_free(&pr);
    /* the thread run while paused: begun and ended, no visit (t1, or t2
     * in a TSan build, whose background thread took index 1) */
    uint64_t w = last_created_thread(proc, path);
    char name[32];
    fmt(name, sizeof name, "t%llu.prof", (unsigned long long)w);
    dec_prof_load(file_in(path, proc, name), &pr);
    CHECK_EQ_U64(dec_prof_visits(&pr, leaf), 0);
    dec_prof_free(&pr);
    fmt(name, sizeof name, "t%llu.evt", (unsigned long long)w);
    dec_stream_load(file_in(path, proc, name), &s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 0);
    check_summary(&d, (unsigned)w, &s, STROBE_THREAD_ENDED);
    dec_stream_free(&s);
    free(out);
    /* the report lists the pause */
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s'", exp), 0);
    CHECK(strstr(out, "\n  paused           ") && strstr(out, " (strobe_pause)\n"));
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s' --format json", exp), 0);
    CHECK_CONTAINS(out, "\"cause\": \"api\"");
    free(out);
}

/* The same run trace only, profile only, and with a filter excluding a
 * function called on both sides of the pause: the same visits. */
STROBE_TEST(pause_api_variants)
{
    const char *exp = exp_dir("pause_api_variants");
    char *out, path[PBUF], cmd[4 * PBUF];
    static struct dec_defs d;
    static struct dec_stream s;
    struct dec_prof pr;
    /* trace only: the stream has every recorded visit, nested */
    CHECK_EQ_INT(strobe_test_sh(&out, "%s", pause_cmd(cmd, sizeof cmd, exp, "STROBE_PROFILE=0", "api")), 0);
    const char *proc = only_proc(exp);
    dec_defs_load(file_in(path, proc, "defs"), &d);
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    check_summary(&d, 0, &s, STROBE_THREAD_ENDED);
    CHECK_EQ_INT(s.final_depth, 0);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "leaf")), 19);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "outer")), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "expect")), 4);
    dec_stream_free(&s);
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s'", exp), 0);
    CHECK(strstr(out, "          19 ") != NULL); /* the profile rebuilt from the trace */
    free(out);
    /* profile only */
    CHECK_EQ_INT(strobe_test_sh(&out, "%s", pause_cmd(cmd, sizeof cmd, exp, "STROBE_TRACE=0", "api")), 0);
    proc = only_proc(exp);
    dec_defs_load(file_in(path, proc, "defs"), &d);
    CHECK_EQ_U64(d.summary[0].depth, 0);
    CHECK_EQ_U64(d.summary[0].events, 2 * (1 + 1 + 19 + 1 + 4));
    dec_prof_load(file_in(path, proc, "t0.prof"), &pr);
    CHECK_EQ_U64(dec_prof_visits(&pr, fn_id(&d, out, "leaf")), 19);
    CHECK_EQ_U64(dec_prof_visits(&pr, fn_id(&d, out, "expect")), 4);
    dec_prof_free(&pr);
    free(out);
    /* expect excluded: paused or not, it counts nowhere */
    const char *filter = write_filter("pause_api_variants", "exclude expect\n");
    char env[PBUF];
    fmt(env, sizeof env, "STROBE_FILTER='%s'", filter);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s", pause_cmd(cmd, sizeof cmd, exp, env, "api")), 0);
    proc = only_proc(exp);
    pause_load(proc, &d, &s, &pr);
    CHECK_EQ_U64(dec_prof_visits(&pr, fn_id(&d, out, "leaf")), 19);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "leaf")), 19);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, fn_id(&d, out, "outer")), 1);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 1 + 1 + 19 + 1);
    dec_stream_free(&s);
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(pause_recursion)
{
    const char *exp = exp_dir("pause_recursion");
    char *out, cmd[4 * PBUF];
    CHECK_EQ_INT(strobe_test_sh(&out, "%s", pause_cmd(cmd, sizeof cmd, exp, "", "rec")), 0);
    static struct dec_defs d;
    static struct dec_stream s;
    struct dec_prof pr;
    pause_load(only_proc(exp), &d, &s, &pr);
    uint32_t m = fn_id(&d, out, "main"), rec = fn_id(&d, out, "rec"), leaf = fn_id(&d, out, "leaf");
    uint32_t p_rec[] = {m, rec, 0}, p_rec2[] = {m, rec, rec, 0}, p_leaf[] = {m, rec, rec, leaf, 0},
             p_rec3[] = {m, rec, rec, rec, 0};
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, p_rec)].node.visits, 1);
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, p_rec2)].node.visits, 1);
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, p_leaf)].node.visits, 1);
    CHECK_EQ_INT(dec_prof_path(&pr, p_rec3), UINT32_MAX);
    CHECK_EQ_U64(dec_prof_visits(&pr, rec), 2);
    /* rec(3)'s visit lasts until its own exit: it encloses rec(2)'s */
    const struct strobe_prof_node *r3 = &pr.slot[dec_prof_path(&pr, p_rec)].node,
                                  *r2 = &pr.slot[dec_prof_path(&pr, p_rec2)].node;
    CHECK(r3->incl_ticks >= r2->incl_ticks);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, rec), 2);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, leaf), 1);
    dec_stream_free(&s);
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(pause_signal)
{
    const char *exp = exp_dir("pause_signal");
    char *out, cmd[4 * PBUF];
    CHECK_EQ_INT(strobe_test_sh(&out, "%s", pause_cmd(cmd, sizeof cmd, exp, "STROBE_TOGGLE_SIGNAL=12", "signal")), 0);
    static struct dec_defs d;
    static struct dec_stream s;
    struct dec_prof pr;
    pause_load(only_proc(exp), &d, &s, &pr);
    uint32_t leaf = fn_id(&d, out, "leaf");
    CHECK_EQ_U64(dec_prof_visits(&pr, leaf), 12);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, leaf), 12);
    CHECK_EQ_INT(d.nrecording, 2);
    CHECK_EQ_U64(d.recording_cause[0], STROBE_RECORDING_SIGNAL);
    CHECK_EQ_U64(d.recording_cause[1], STROBE_RECORDING_SIGNAL);
    dec_stream_free(&s);
    dec_prof_free(&pr);
    free(out);
}

STROBE_TEST(pause_delay_duration)
{
    /* phases at 0, 1.5 and 3 s; recording from 0.75 to 2.25 s: the second
     * only, with 0.75 s to spare on either side */
    const char *exp = exp_dir("pause_delay_duration");
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "rm -rf '%s' && " STROBE_BIN_DIR "/strobe run -o '%s' --delay 750ms --duration 1.5 -- "
                                PROG("pause") " phases",
                                exp, exp),
                 0);
    static struct dec_defs d;
    static struct dec_stream s;
    struct dec_prof pr;
    pause_load(only_proc(exp), &d, &s, &pr);
    uint32_t f2 = fn_id(&d, out, "f2"), phase2 = fn_id(&d, out, "phase2");
    const struct dec_region *f1 = dec_region_by_addr(&d, fn_addr(out, "f1")),
                            *f3 = dec_region_by_addr(&d, fn_addr(out, "f3"));
    CHECK(!f1 || dec_prof_visits(&pr, f1->id) == 0);
    CHECK(!f3 || dec_prof_visits(&pr, f3->id) == 0);
    /* main was entered before recording began: phase2 hangs off the root */
    uint32_t p_f2[] = {phase2, f2, 0};
    CHECK_EQ_U64(pr.slot[dec_prof_path(&pr, p_f2)].node.visits, 1000);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, f2), 1000);
    CHECK_EQ_INT(d.nrecording, 3); /* stopped at start, resumed, stopped */
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_U64(d.recording_what[i], i == 1 ? STROBE_RECORDING_RESUME : STROBE_RECORDING_STOP);
        CHECK_EQ_U64(d.recording_cause[i], STROBE_RECORDING_TIMER);
    }
    dec_stream_free(&s);
    dec_prof_free(&pr);
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s'", exp), 0);
    CHECK(strstr(out, " (--delay/--duration), ") && strstr(out, " to the end (--delay/--duration)\n"));
    free(out);
}

STROBE_TEST(pause_bad_options)
{
    const char *exp = exp_dir("pause_bad_options");
    char *out;
    static const char *const bad[][2] = {
        {"--delay soon", "strobe: run: --delay: 'soon' is not a duration (2.5, 500ms, 1m, ...) (see 'strobe run --help')\n"},
        {"--duration 0", "strobe: run: --duration: '0' is not a positive duration (2.5, 500ms, 1m, ...) (see 'strobe run --help')\n"},
        {"--toggle-signal KILL", "strobe: run: --toggle-signal: 'KILL' is not a signal strobe can take"},
        {"--toggle-signal 65", "strobe: run: --toggle-signal: '65' is not a signal strobe can take"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(strobe_test_sh(&out, "rm -rf '%s'; " STROBE_BIN_DIR "/strobe run -o '%s' %s -- true 2>&1", exp,
                                    exp, bad[i][0]),
                     2);
        CHECK_CONTAINS(out, bad[i][1]);
        free(out);
    }
    check_refused(exp, "STROBE_DELAY=-1", PROG("calls") " 1",
                  "strobe: STROBE_DELAY=-1: expected a duration such as 2.5, 500ms or 1m; measurement disabled\n");
    check_refused(exp, "STROBE_TOGGLE_SIGNAL=SEGV", PROG("calls") " 1",
                  "strobe: STROBE_TOGGLE_SIGNAL=SEGV: expected a signal such as USR1 that the program leaves alone; "
                  "measurement disabled\n");
}

/* ---- flight recorder (strobe run --max-size, prog_flight.c) ---- */

/* Lines of `text` that contain `what`. */
static size_t count_lines(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* The visits column of region `name`'s row in a text report's flat profile. */
static unsigned long long report_visits(const char *rep, const char *name)
{
    const char *flat = strstr(rep, "\nFlat profile");
    CHECK(flat != NULL);
    char key[64];
    fmt(key, sizeof key, "  %s (", name);
    const char *row = flat ? strstr(flat, key) : NULL;
    CHECK(row != NULL);
    while (row > flat && row[-1] != '\n')
        row--;
    unsigned long long v = 0;
    CHECK_EQ_INT(sscanf(row, "%*s %*s %*s %*s %*s %llu", &v), 1);
    return v;
}

/* Bytes of every t<N>.evt of the experiment's only process. */
static uint64_t stream_bytes(const char *proc)
{
    uint64_t total = 0;
    DIR *d = opendir(proc);
    CHECK(d != NULL);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        char path[PBUF];
        struct stat st;
        if (n > 4 && strcmp(e->d_name + n - 4, ".evt") == 0 && stat(file_in(path, proc, e->d_name), &st) == 0)
            total += (uint64_t)st.st_size;
    }
    if (d)
        closedir(d);
    return total;
}

/* Runs prog_flight N M [kill] under `strobe run --max-size SIZE`; checks
 * the streams stay within SIZE, the profile counts all N ticks, and the
 * kept trace ends with exactly the M marker calls, after the frames open
 * at its start. Returns the text report. */
static char *flight_run(const char *exp, unsigned long long n, unsigned m, const char *size, uint64_t size_bytes,
                        const char *kill)
{
    char *out;
    int rc = strobe_test_sh(&out, "rm -rf '%s' && " STROBE_BIN_DIR "/strobe run -o '%s' --max-size %s -- " PROG("flight")
                            " %llu %u %s", exp, exp, size, n, m, kill);
    CHECK_EQ_INT(rc, *kill ? 128 + SIGKILL : 0);
    free(out);
    const char *proc = only_proc(exp);
    uint64_t bytes = stream_bytes(proc);
    if (bytes > size_bytes)
        STROBE_FAIL("streams of %llu bytes, more than --max-size %s", (unsigned long long)bytes, size);
    char json[PBUF];
    fmt(json, sizeof json, "%s/trace.json", exp);
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe export '%s' --format chrome -o '%s'", exp, json), 0);
    free(out);
    size_t len;
    char *trace = (char *)dec_read_file(json, &len);
    /* every marker call, the last events of the run */
    CHECK_EQ_INT(count_lines(trace, "{\"ph\":\"B\",\"name\":\"marker\""), m);
    CHECK_EQ_INT(count_lines(trace, "{\"ph\":\"E\",\"name\":\"marker\""), m);
    /* main and loop opened before the window: their ENTERs come first */
    const char *b_main = strstr(trace, "{\"ph\":\"B\",\"name\":\"main\""),
               *b_tick = strstr(trace, "{\"ph\":\"B\",\"name\":\"tick\""),
               *e_loop = strstr(trace, "{\"ph\":\"E\",\"name\":\"loop\""),
               *b_marker = strstr(trace, "{\"ph\":\"B\",\"name\":\"marker\"");
    CHECK(b_main && b_tick && e_loop && b_marker && b_main < b_tick && b_tick < e_loop && e_loop < b_marker);
    CHECK_EQ_INT(count_lines(trace, "{\"ph\":\"B\",\"name\":\"main\""), 1);
    free(trace);
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s'", exp), 0);
    CHECK_EQ_U64(report_visits(out, "tick"), n);
    CHECK_EQ_U64(report_visits(out, "marker"), m);
    CHECK_CONTAINS(out, "  trace window     the newest events of each thread (strobe run --max-size):\n");
    CHECK_CONTAINS(out, *kill ? " older chunks overwritten (events not counted: the process did not exit)\n"
                              : " older events overwritten\n");
    return out;
}

STROBE_TEST(flight_ring_exact)
{
    const char *exp = exp_dir("flight_ring_exact");
    char *rep = flight_run(exp, 10000000, 1000, "256K", 256 << 10, "");
    free(rep);
    /* JSON: the thread's window and what it lost */
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s' --format json", exp), 0);
    const char *ring = strstr(out, "\"ring\": {\"from_ns\": ");
    CHECK(ring != NULL);
    unsigned long long from, to, lost;
    CHECK_EQ_INT(sscanf(ring, "\"ring\": {\"from_ns\": %llu, \"to_ns\": %llu, \"overwritten\": %llu", &from, &to, &lost),
                 3);
    CHECK(from < to && lost > 0);
    free(out);
}

STROBE_TEST(flight_killed)
{
    /* SIGKILL: no summary; the ring is decoded as the crash left it */
    char *rep = flight_run(exp_dir("flight_killed"), 1000000, 100, "64K", 64 << 10, "kill");
    free(rep);
}

/* The dump signal while the program runs (main open, the rings full):
 * DIR/dump-1 is an experiment of its own with every marker call, and the
 * run goes on to its normal end. */
STROBE_TEST(flight_dump_signal)
{
    const char *exp = exp_dir("flight_dump_signal");
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "rm -rf '%s' && cd '%s/..' && rm -f go ready && "
                                "(" STROBE_BIN_DIR "/strobe run -o '%s' --max-size 256K -- " PROG("flight")
                                " 3000000 700 wait go > ready 2>&1 &) && "
                                "for i in $(seq 600); do grep -q ready ready 2>/dev/null && break; sleep 0.1; done && "
                                "pid=$(cd '%s' && ls -d proc-* | sed 's/proc-//') && kill -USR2 $pid && "
                                "for i in $(seq 600); do [ -e '%s/dump-1/proc-'$pid/t0.prof ] && break; sleep 0.1; done && "
                                "sleep 1 && touch go && "
                                "for i in $(seq 600); do grep -q 'experiment' ready 2>/dev/null && break; sleep 0.1; done; "
                                "ls '%s/dump-1'",
                                exp, exp, exp, exp, exp, exp),
                 0);
    free(out);
    char dump[PBUF];
    fmt(dump, sizeof dump, "%s/dump-1", exp);
    char json[PBUF];
    fmt(json, sizeof json, "%s/dump.json", exp);
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe export '%s' --format chrome -o '%s'", dump, json), 0);
    free(out);
    size_t len;
    char *trace = (char *)dec_read_file(json, &len);
    CHECK_EQ_INT(count_lines(trace, "{\"ph\":\"B\",\"name\":\"marker\""), 700);
    free(trace);
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s'", dump), 0);
    CHECK_EQ_U64(report_visits(out, "tick"), 3000000);
    CHECK_EQ_U64(report_visits(out, "marker"), 700);
    CHECK_CONTAINS(out, " older chunks overwritten (events not counted: the process did not exit)\n");
    free(out);
    /* the run itself ended normally */
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s'", exp), 0);
    CHECK_EQ_U64(report_visits(out, "marker"), 700);
    CHECK_CONTAINS(out, " older events overwritten\n");
    free(out);
}

/* A ring as a SIGKILL left it, corrupted three ways: each is one line
 * naming the file, the offset and the problem. */
STROBE_TEST(flight_corrupt)
{
    const char *exp = exp_dir("flight_corrupt");
    char *out, path[PBUF];
    static const struct {
        long off;
        uint8_t byte;
        const char *msg;
    } bad[] = {
        {48, 7, "/t0.evt: offset 48: unknown stream flags 0x7\n"},
        {48, 0, "/t0.evt: offset 64: CHUNK record in a stream that is not chunked (header flags 0x0)\n"},
        {4096 + 3, 127, NULL}, /* a gap: the message depends on where the ring stood */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strobe_test_sh(&out, "rm -rf '%s' && STROBE_EXPERIMENT_DIR='%s' STROBE_MAX_SIZE=64K STROBE_CHUNK_SIZE=4K "
                             "LD_PRELOAD='%s' " PROG("flight") " 100000 5 kill",
                       exp, exp, preload());
        free(out);
        const char *proc = only_proc(exp);
        FILE *f = fopen(file_in(path, proc, "t0.evt"), "r+b");
        CHECK(f != NULL);
        /* the 16 chunks' sequence numbers (one byte each: the ring went
         * round a few times), with chunk 1's corrupted */
        uint8_t seq[16];
        for (int c = 0; c < 16; c++)
            CHECK(fseek(f, (c ? c * 4096 : 64) + 3, SEEK_SET) == 0 && fread(&seq[c], 1, 1, f) == 1 && seq[c] > 0 &&
                  seq[c] < 126);
        CHECK(fseek(f, bad[i].off, SEEK_SET) == 0 && fwrite(&bad[i].byte, 1, 1, f) == 1);
        fclose(f);
        char msg[PBUF];
        if (bad[i].msg) {
            fmt(msg, sizeof msg, "%s", bad[i].msg);
        } else { /* the first number missing in sorted order is chunk 1's old one */
            seq[1] = 127;
            unsigned lo = 255, prev = 0;
            for (int c = 0; c < 16; c++)
                lo = seq[c] < lo ? seq[c] : lo;
            for (unsigned want = lo;; want++) {
                int at = -1;
                for (int c = 0; c < 16; c++)
                    if (seq[c] == want)
                        at = c;
                if (at < 0)
                    continue;
                if (prev && want != prev + 1) {
                    fmt(msg, sizeof msg, "/t0.evt: offset %d: CHUNK record: sequence %u follows %u\n",
                        at ? at * 4096 : 64, want, prev);
                    break;
                }
                prev = want;
            }
        }
        CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s' 2>&1", exp), 1);
        CHECK_CONTAINS(out, msg);
        free(out);
    }
}

/* 5 * 10^7 events (10^7 under sanitizers) through a 16 MiB ring: 5 s of
 * CPU, up to 30 s on a shared, loaded 2-core machine. The 10^9 events
 * take 20 s to 4 minutes there, depending on the load, too long for a
 * unit test: STROBE_TEST_FLIGHT_CALLS=500000000 runs them (see
 * docs/performance.md for such a run). */
STROBE_TEST(flight_many_events)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    unsigned long long calls = 5000000;
#else
    unsigned long long calls = 25000000;
#endif
    const char *env = getenv("STROBE_TEST_FLIGHT_CALLS");
    if (env && *env)
        calls = strtoull(env, NULL, 10);
    char *rep = flight_run(exp_dir("flight_many_events"), calls, 1000, "16M", 16 << 20, "");
    free(rep);
}

STROBE_TEST(annotate_disabled)
{
    const char *exp = exp_dir("annotate_disabled");
    char *out, cmd[4 * PBUF];
    CHECK_EQ_INT(strobe_test_sh(&out, "%s", annotate_cmd(cmd, sizeof cmd, exp, "STROBE_ENABLE=0")), 0);
    CHECK_STR_EQ(out, "active 0\ndir (none)\n");
    CHECK(!dec_exists(exp));
    free(out);
}

STROBE_TEST(annotate_filtered)
{
    const char *exp = exp_dir("annotate_filtered");
    const char *filter = write_filter("annotate_filtered", "exclude in*\n");
    char *out, path[PBUF], cmd[4 * PBUF], env[PBUF];
    fmt(env, sizeof env, "STROBE_FILTER='%s'", filter);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s", annotate_cmd(cmd, sizeof cmd, exp, env)), 0);
    const char *proc = only_proc(exp);
    static struct dec_defs d;
    dec_defs_load(file_in(path, proc, "defs"), &d);
    CHECK(dec_region_by_name(&d, "inner") == NULL);
    CHECK_EQ_INT(d.nregions, 3);
    static struct dec_stream s;
    dec_stream_load(file_in(path, proc, "t0.evt"), &s);
    CHECK_EQ_INT(dec_count(&s, STROBE_EV_ENTER, UINT32_MAX), 7);
    /* the samples of the excluded region go to the enclosing one */
    const struct dec_event *m = dec_find_ext(&s, STROBE_EXT_METRIC, 0);
    CHECK_EQ_INT(m->depth, 1);
    dec_stream_free(&s);
    free(out);
}

STROBE_TEST(default_experiment_dir)
{
    /* No STROBE_EXPERIMENT_DIR: ./strobe-<prog>-<YYYYmmdd-HHMMSS>/ with a
     * meta file, and the variable exported for children. */
    const char *cwd = strobe_test_tmpdir("default_experiment_dir");
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && env -u STROBE_EXPERIMENT_DIR -u LD_PRELOAD "
                                "%s && ls",
                                cwd, PROG("annotate")),
                 0);
    const char *line = strstr(out, "\nstrobe-core_prog_annotate-");
    CHECK(line);
    char name[128];
    sscanf(line + 1, "%127s", name);
    CHECK_EQ_INT(strlen(name), strlen("strobe-core_prog_annotate-") + 15);
    CHECK(name[strlen(name) - 7] == '-');
    char want[PBUF], path[PBUF];
    fmt(want, sizeof want, "dir %s/%s\n", cwd, name);
    CHECK_CONTAINS(out, want);
    fmt(path, sizeof path, "%s/%s/meta", cwd, name);
    size_t len;
    char *meta = (char *)dec_read_file(path, &len);
    meta[len] = 0;
    CHECK_CONTAINS(meta, "strobe_version: ");
    CHECK_CONTAINS(meta, "command: " PROG("annotate") "\n");
    CHECK_CONTAINS(meta, "start_realtime_ns: ");
    free(meta);
    fmt(path, sizeof path, "%s/%s", cwd, name);
    only_proc(path);
    free(out);
}

/* ---- allocations (--malloc, core/malloc.c) ---- */

/* Under ASan the sanitizer's malloc comes first in the lookup order (it
 * must be first in LD_PRELOAD) and the runtime's is never called; a TSan
 * build of the runtime interposes no allocation function (core/malloc.c):
 * nothing can be tracked, which start-up says in one line. The cases that
 * count allocations check that line there instead. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MALLOC_UNTRACKABLE 1
#else
#define MALLOC_UNTRACKABLE 0
#endif

/* Runs prog_malloc MODE with tracking on (ENV added) and returns the memory
 * section of `strobe report --malloc --top 0`; NULL (after checking the
 * notice) when allocations cannot be tracked in this build. */
static char *malloc_report(const char *name, const char *env, const char *mode)
{
    const char *exp = exp_dir(name);
    char *out, envs[512];
    fmt(envs, sizeof envs, "STROBE_MALLOC=1 %s", env);
    CHECK_EQ_INT(run(&out, exp, envs, PROG("malloc") " %s", mode), 0);
    CHECK(!strstr(out, "not zero") && !strstr(out, "misaligned") && !strstr(out, "bad block") &&
          !strstr(out, "lost data"));
    if (MALLOC_UNTRACKABLE) {
        CHECK_CONTAINS(out, "strobe: STROBE_MALLOC: ");
        CHECK_CONTAINS(out, "allocations are not measured\n");
        free(out);
        return NULL;
    }
    CHECK_STR_EQ(out, "done\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s' --malloc --top 0", exp), 0);
    char *mem = strstr(out, "\nMemory (");
    CHECK(mem);
    memmove(out, mem + 1, strlen(mem));
    return out;
}

/* The row of a call path in the per-path table. */
static void check_path_row(const char *rep, uint64_t allocs, uint64_t bytes, uint64_t frees, uint64_t freed,
                           uint64_t live_blocks, uint64_t live_bytes, const char *path)
{
    char row[512];
    fmt(row, sizeof row,
        "  %10" PRIu64 " %14" PRIu64 " %10" PRIu64 " %14" PRIu64 " %11" PRIu64 " %14" PRIu64 "  %s\n", allocs,
        bytes, frees, freed, live_blocks, live_bytes, path);
    CHECK_CONTAINS(rep, row);
}

STROBE_TEST(malloc_paths_exact)
{
    char *rep = malloc_report("malloc_paths_exact", "", "paths");
    if (!rep)
        return;
    /* sizes as the fixture asks for them, each on its own path */
    check_path_row(rep, 1, 2097152, 1, 2097152, 0, 0, "main > f_large");
    check_path_row(rep, 1, 12288, 1, 12288, 0, 0, "main > f_mmap");
    /* realloc: NULL -> 64 -> 4096 -> 16 -> 0, each a free and an allocation */
    check_path_row(rep, 3, 64 + 4096 + 16, 3, 64 + 4096 + 16, 0, 0, "main > f_realloc");
    check_path_row(rep, 2, 2000, 0, 0, 2, 2000, "main > f_leak");
    check_path_row(rep, 4, 128 + 256 + 96 + 100, 3, 128 + 256 + 96, 1, 100, "main > f_memalign");
    check_path_row(rep, 3, 300, 3, 300, 0, 0, "main > f_malloc");
    check_path_row(rep, 1, 200, 0, 0, 1, 200, "main > f_calloc");
    /* the constructor's calloc runs before main; main frees it */
    check_path_row(rep, 1, 16, 0, 0, 0, 0, "early_ctor");
    check_path_row(rep, 0, 0, 1, 16, 0, 0, "main");
    CHECK_CONTAINS(rep, "  total: 16 allocations of 2116712 bytes, 12 frees of 2114412 bytes\n");
    /* the peak is the 2 MiB block on top of the 2300 bytes leaked by then */
    CHECK_CONTAINS(rep, ": peak 2099452 bytes live at ");
    CHECK_CONTAINS(rep, "; at exit 2300 bytes in 4 blocks live\n");
    /* the leak report, exactly */
    CHECK_CONTAINS(rep, "\nLive at exit (leaks): 2300 bytes in 4 blocks\n"
                        "      blocks          bytes   thread  allocated on\n"
                        "           2           2000        0  main > f_leak\n"
                        "           1            200        0  main > f_calloc\n"
                        "           1            100        0  main > f_memalign\n\n");
    /* the 2 MiB block is the only one >= 1 MiB: its allocation and free */
    CHECK_CONTAINS(rep, "\nLarge blocks (1048576 bytes and more): 2 events\n");
    const char *a = strstr(rep, " alloc  malloc "), *f = strstr(rep, " free   free ");
    CHECK(a && f && a < f);
    CHECK_CONTAINS(a, "        2097152  main > f_large\n");
    CHECK_CONTAINS(f, "        2097152  main > f_large\n");
    free(rep);
    /* the same in JSON, paths as region indices (regions in order of
     * first entry: early_ctor 0, main 1, f_leak 2, f_calloc 3, f_memalign 4) */
    char exp[PBUF];
    fmt(exp, sizeof exp, "%s/malloc_paths_exact.tmp/exp", STROBE_TEST_WORK_DIR); /* exp_dir() empties it */
    CHECK_EQ_INT(strobe_test_sh(&rep, STROBE_BIN_DIR "/strobe report '%s' --malloc --format json", exp), 0);
    CHECK_CONTAINS(rep, "\"leaks\": [\n"
                        "      {\"thread\": 0, \"path\": [1, 2], \"blocks\": 2, \"bytes\": 2000},\n"
                        "      {\"thread\": 0, \"path\": [1, 3], \"blocks\": 1, \"bytes\": 200},\n"
                        "      {\"thread\": 0, \"path\": [1, 4], \"blocks\": 1, \"bytes\": 100}\n"
                        "    ]");
    CHECK_CONTAINS(rep, "\"allocs\": 16,\n    \"alloc_bytes\": 2116712,");
    free(rep);
}

STROBE_TEST(malloc_large_threshold)
{
    /* from 4096 bytes on: the mmap, the 4096-byte realloc (its block and
     * its free by the next realloc) and the 2 MiB block */
    char *rep = malloc_report("malloc_large_threshold", "STROBE_MALLOC_LARGE=4K", "paths");
    if (!rep)
        return;
    CHECK_CONTAINS(rep, "\nLarge blocks (4096 bytes and more): 6 events\n");
    CHECK_CONTAINS(rep, " alloc  mmap ");
    CHECK_CONTAINS(rep, " free   munmap ");
    CHECK_CONTAINS(rep, " alloc  realloc ");
    CHECK_CONTAINS(rep, " free   realloc ");
    free(rep);
}

STROBE_TEST(malloc_free_in_other_thread)
{
    char *rep = malloc_report("malloc_free_in_other_thread", "", "threads");
    if (!rep)
        return;
    /* allocated by give() on the main thread, freed by worker() on t1:
     * found in the shared table, charged to the freeing path */
    check_path_row(rep, 5, 2500, 0, 0, 0, 0, "main > give");
    check_path_row(rep, 0, 0, 5, 2500, 0, 0, "worker");
    const char *leaks = strstr(rep, "\nLive at exit (leaks): ");
    CHECK(leaks && !strstr(leaks, "main > give")); /* all 5 were freed */
    free(rep);
}

STROBE_TEST(malloc_threads_stress)
{
    /* 4 threads allocate, free each other's blocks and churn at once: the
     * shared table loses nothing and counts every call exactly */
    char *rep = malloc_report("malloc_threads_stress", "", "stress");
    if (!rep)
        return;
    check_path_row(rep, 4 * 2000, 4 * 20 * 5050, 0, 0, 0, 0, "stress > produce");
    check_path_row(rep, 0, 0, 4 * 2000, 4 * 20 * 5050, 0, 0, "stress > consume");
    check_path_row(rep, 4 * 10000, 4 * 10000 * 32, 4 * 10000, 4 * 10000 * 32, 0, 0, "stress > churn");
    const char *leaks = strstr(rep, "\nLive at exit (leaks): ");
    CHECK(leaks && !strstr(leaks, "stress"));
    free(rep);
}

STROBE_TEST(malloc_fork_child)
{
    /* the child counts afresh: the parent's blocks are not its leaks */
    char *rep = malloc_report("malloc_fork_child", "", "fork");
    if (!rep)
        return;
    CHECK_CONTAINS(rep, "\nLive at exit (leaks): 2300 bytes in 3 blocks\n"
                        "      blocks          bytes   thread  allocated on\n"
                        "           2           2000        0  main > f_leak\n"
                        "           1            300        1  child_leak\n\n");
    CHECK_CONTAINS(rep, "; at exit 2000 bytes in 2 blocks live\n");
    CHECK_CONTAINS(rep, "; at exit 300 bytes in 1 blocks live\n");
    free(rep);
}

STROBE_TEST(malloc_killed_keeps_paths)
{
    /* SIGKILL: the per-path counts are in the profile; peak and leaks,
     * written at exit, are not known */
    const char *exp = exp_dir("malloc_killed_keeps_paths");
    char *out;
    CHECK_EQ_INT(run(&out, exp, "STROBE_MALLOC=1", PROG("malloc") " kill"), 128 + SIGKILL);
    free(out);
    if (MALLOC_UNTRACKABLE)
        return; /* the notice is checked by the other cases */
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s' --malloc", exp), 0);
    CHECK_CONTAINS(
        out, ": no summary (the process did not exit normally): peak and blocks live at exit unknown\n");
    /* by default a killed thread's profile is its trace, which has no counts */
    CHECK_CONTAINS(out,
                   "  (the counts per call path are in the profile files: the 1 thread(s) rebuilt from their "
                   "trace have none; --source profile reads them)\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s' --malloc --source profile", exp),
                 0);
    check_path_row(out, 2, 2000, 0, 0, 0, 0, "main > f_leak");
    free(out);
}

STROBE_TEST(malloc_strobe_run)
{
    /* `strobe run --malloc` sets STROBE_MALLOC=1; without it a value in
     * the environment is removed */
    const char *exp = exp_dir("malloc_strobe_run");
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "rm -rf '%s' && STROBE_MALLOC=1 " STROBE_BIN_DIR
                                "/strobe run -o '%s' -- " PROG("malloc") " none && " STROBE_BIN_DIR
                                                                         "/strobe report '%s' --malloc",
                                exp, exp, exp),
                 1);
    CHECK_CONTAINS(out, "--malloc: no allocations were tracked");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "rm -rf '%s' && " STROBE_BIN_DIR "/strobe run --malloc -o '%s' -- " PROG(
                                    "malloc") " none && " STROBE_BIN_DIR "/strobe report '%s' --malloc",
                                exp, exp, exp),
                 MALLOC_UNTRACKABLE ? 1 : 0);
    if (!MALLOC_UNTRACKABLE)
        check_path_row(out, 1, 16, 0, 0, 0, 0, "early_ctor");
    free(out);
}

STROBE_TEST(malloc_off_costs_nothing)
{
    /* Without STROBE_MALLOC nothing is tracked or written ... */
    const char *exp = exp_dir("malloc_off_costs_nothing");
    char *out;
    CHECK_EQ_INT(run(&out, exp, "", PROG("malloc") " paths"), 0);
    CHECK_STR_EQ(out, "done\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s' --malloc", exp), 1);
    CHECK_CONTAINS(out, "--malloc: no allocations were tracked (record them with `strobe run --malloc`)\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE_BIN_DIR "/strobe report '%s'", exp), 0);
    CHECK(!strstr(out, "strobe.alloc"));
    free(out);
    /* ... and a program that never allocates has nothing but the
     * constructor's block when it is on */
    char *rep = malloc_report("malloc_off_costs_nothing", "", "none");
    if (!rep)
        return;
    CHECK_CONTAINS(rep, "  total: 1 allocations of 16 bytes, 1 frees of 16 bytes\n");
    CHECK_CONTAINS(rep, "\nLive at exit (leaks): 0 bytes in 0 blocks\n");
    free(rep);
}

STROBE_TEST(malloc_bad_environment)
{
    const char *exp = exp_dir("malloc_bad_environment");
    check_refused(exp, "STROBE_MALLOC=sometimes", PROG("malloc") " none",
                  "strobe: STROBE_MALLOC=sometimes: expected 0 or 1; measurement disabled\n");
    check_refused(exp, "STROBE_MALLOC=1 STROBE_MALLOC_LARGE=0", PROG("malloc") " none",
                  "strobe: STROBE_MALLOC_LARGE=0: out of range; measurement disabled\n");
}

STROBE_TEST_MAIN(STROBE_CASE(calls_exact), STROBE_CASE(killed_keeps_events), STROBE_CASE(killed_externally),
                 STROBE_CASE(small_chunks), STROBE_CASE(trace_limit), STROBE_CASE(profile_limit),
                 STROBE_CASE(trace_off), STROBE_CASE(profile_off), STROBE_CASE(profile_off_trace_limit),
                 STROBE_CASE(enable_off), STROBE_CASE(bad_environment), STROBE_CASE(monotonic_clock),
                 STROBE_CASE(longjmp_exits), STROBE_CASE(exit_status), STROBE_CASE(filter_excludes),
                 STROBE_CASE(filter_includes), STROBE_CASE(filter_error), STROBE_CASE(dlopen_module),
                 STROBE_CASE(threads), STROBE_CASE(thread_calls_exit), STROBE_CASE(threads_pthread_exit),
                 STROBE_CASE(threads_c11), STROBE_CASE(many_threads), STROBE_CASE(fork_while_threads_run),
                 STROBE_CASE(mpi_rank), STROBE_CASE(launcher_pid), STROBE_CASE(fork_child),
                 STROBE_CASE(exec_new_image), STROBE_CASE(signal_reentry), STROBE_CASE(annotate),
                 STROBE_CASE(annotate_thread), STROBE_CASE(adapter_counts_per_path),
                 STROBE_CASE(annotate_disabled), STROBE_CASE(annotate_filtered),
                 STROBE_CASE(default_experiment_dir), STROBE_CASE(malloc_paths_exact),
                 STROBE_CASE(malloc_large_threshold), STROBE_CASE(malloc_free_in_other_thread),
                 STROBE_CASE(malloc_threads_stress), STROBE_CASE(malloc_fork_child),
                 STROBE_CASE(malloc_killed_keeps_paths), STROBE_CASE(malloc_strobe_run),
                 STROBE_CASE(malloc_off_costs_nothing), STROBE_CASE(malloc_bad_environment),
                 STROBE_CASE(threads_taskgraph_tickets), STROBE_CASE(pause_api), STROBE_CASE(pause_api_variants),
                 STROBE_CASE(pause_recursion), STROBE_CASE(pause_signal),
                 STROBE_CASE(pause_delay_duration), STROBE_CASE(pause_bad_options),
                 STROBE_CASE(flight_ring_exact), STROBE_CASE(flight_killed), STROBE_CASE(flight_dump_signal), STROBE_CASE(flight_corrupt),
                 STROBE_CASE(flight_many_events))
