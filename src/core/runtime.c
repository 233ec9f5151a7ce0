/* SPDX-License-Identifier: MIT */
/*
 * Process life cycle of the runtime: configuration from the environment,
 * the experiment and process directories, start-up (clock calibration,
 * modules, self-measured overhead), fork() and exit.
 *
 * Environment (read once at start-up; a malformed value prints one line
 * "strobe: ..." and turns measurement off for the process):
 *   STROBE_ENABLE=0         no measurement at all (default 1)
 *   STROBE_TRACE=0          no event streams t<N>.evt (default 1)
 *   STROBE_PROFILE=0        no call-path profiles t<N>.prof (default 1)
 *   STROBE_LOCKS=0          no lock/barrier/semaphore records (default 1);
 *                           all: every call recorded, with tickets, for
 *                           the task graph (sync.c)
 *   STROBE_EXPERIMENT_DIR   experiment directory (set by `strobe run`);
 *                           unset: ./strobe-<prog>-<YYYYmmdd-HHMMSS>[-N],
 *                           created here and exported to child processes
 *   STROBE_FILTER=FILE      region filter (common/filter.h)
 *   STROBE_CHUNK_SIZE       chunk of every file, power of two 4K..1G (1M)
 *   STROBE_TRACE_LIMIT      bytes per event stream, 0 = no limit (1G);
 *                           rounded down to 4 KiB; beyond it events are
 *                           dropped and counted in the header
 *   STROBE_PROFILE_LIMIT    bytes per profile file (64M = ~1M slots)
 *   STROBE_MAX_SIZE         flight recorder: the process's event streams
 *                           are rings within this many bytes together
 *                           (thread.c); STROBE_TRACE_LIMIT does not apply
 *   STROBE_DUMP_SIGNAL      with STROBE_MAX_SIZE: this signal copies the
 *                           rings aside (dump.h); USR2 unless none
 *   STROBE_CLOCK            auto (default), tsc or monotonic
 *   STROBE_MALLOC=1         track allocations (malloc.h; default 0)
 *   STROBE_MALLOC_LARGE     blocks from this size on are timeline events
 *                           (ALLOC records; default 1M)
 *   STROBE_SAMPLE=HZ        sample every thread HZ times per second of its
 *                           CPU time, 1..10000 (sample.h; 0 or unset: off)
 *   STROBE_SAMPLE_SOURCE    timer (default) or perf (sample.h)
 *   STROBE_DELAY=T          recording starts T after start-up (pause.h)
 *   STROBE_DURATION=T       recording stops T after it started
 *   STROBE_TOGGLE_SIGNAL    this signal pauses and resumes recording
 *   STROBE_LAUNCHER_PID     the process with this pid stays unmeasured
 *                           (set by `strobe run` for an MPI launcher)
 *   OMPI_COMM_WORLD_RANK, PMI_RANK, ...  the MPI rank (common/mpi_rank.h)
 *   STROBE_TEST_CLOCK_SHIFT_NS, STROBE_TEST_CLOCK_DRIFT_PPM  test hooks:
 *                           the process's clock runs SHIFT ns ahead (signed)
 *                           and gains DRIFT ppm of the time since start-up
 *                           (test_clock), so that tests of `strobe merge`
 *                           make two processes of one machine disagree
 * Sizes take K, M, G suffixes (binary).
 *
 * Process images: every image that loads the runtime gets its own
 * directory proc-<pid> in the experiment. exec() needs no help: all data
 * of the old image is already in its files (they are mapped MAP_SHARED,
 * so the page cache has every byte), and the new image starts the runtime
 * afresh; since its pid is the old one's, it takes proc-<pid>-1 (-2, ...).
 * The old image's streams simply end without THREAD_END, like those of a
 * killed process. fork() is handled explicitly (see atfork_child).
 */
#define _GNU_SOURCE
#include "core/publish.h"
#include "core/runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/filter.h"
#include "common/mpi_rank.h"
#include "core/clock.h"
#include "core/defs.h"
#include "core/hotpath.h"
#include "core/pause.h"
#include "core/profile.h"
#include "core/registry.h"
#include "core/sample.h"
#include "core/symbols.h"
#include "core/thread.h"
#include "common/signame.h"
#include "common/size.h"
#include "core/util.h"
#include "strobe/strobe.h"

struct strobe__runtime strobe__rt = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .proc_fd = -1,
    .defs = {.fd = -1},
    .bb = {.tables = {.fd = -1}},
    .next_index = 1, /* 0 is the main thread's */
    .gate = STROBE__GATE_OFF,
};

/* ---- configuration ---- */

static int bad_env(const char *name, const char *value, const char *why)
{
    strobe__say(name, "=", value, ": ", why, "; measurement disabled", (char *)NULL);
    return STROBE_ERR_SYNTAX;
}

static int env_bool(const char *name, bool *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    if (strobe__parse_bool(v, out) != 0)
        return bad_env(name, v, "expected 0 or 1");
    return 0;
}

static int env_size(const char *name, uint64_t *out, uint64_t min, uint64_t max, bool zero_ok)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    uint64_t x;
    if (strobe__parse_size(v, &x) != 0)
        return bad_env(name, v, "expected a size such as 65536, 64K, 16M or 1G");
    if (!(zero_ok && x == 0) && (x < min || x > max))
        return bad_env(name, v, "out of range");
    *out = x;
    return 0;
}

static int env_duration(const char *name, uint64_t *out)
{
    const char *v = getenv(name);
    unsigned long long ns;
    if (!v || !*v)
        return 0;
    if (strobe__parse_duration(v, &ns) != 0)
        return bad_env(name, v, "expected a duration such as 2.5, 500ms or 1m");
    *out = ns;
    return 0;
}

/* A signed decimal integer within +-limit; unset or empty leaves *out. */
static int env_int(const char *name, int64_t *out, int64_t limit)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end || x < -limit || x > limit)
        return bad_env(name, v, "expected a signed integer in range");
    *out = x;
    return 0;
}

/* STROBE_LOCKS: 0, 1 or all. */
static int env_locks(struct strobe__config *cfg)
{
    const char *v = getenv("STROBE_LOCKS");
    if (v && strcmp(v, "all") == 0) {
        cfg->locks = cfg->locks_all = true;
        return 0;
    }
    if (v && *v && strobe__parse_bool(v, &cfg->locks) != 0)
        return bad_env("STROBE_LOCKS", v, "expected 0, 1 or all");
    return 0;
}

/* Fills cfg from the environment; *enabled = false for STROBE_ENABLE=0. */
static int read_config(struct strobe__config *cfg, bool *enabled)
{
    *enabled = true;
    cfg->trace = true;
    cfg->profile = true;
    cfg->locks = true;
    cfg->chunk_size = STROBE_CHUNK_SIZE_DEFAULT;
    cfg->trace_limit = STROBE__TRACE_LIMIT_DEFAULT;
    cfg->profile_limit = STROBE__PROFILE_LIMIT_DEFAULT;
    cfg->malloc_large = STROBE__MEM_LARGE_DEFAULT;
    int rc = env_bool("STROBE_ENABLE", enabled);
    if (rc || !*enabled)
        return rc;
    if ((rc = env_bool("STROBE_TRACE", &cfg->trace)) || (rc = env_bool("STROBE_PROFILE", &cfg->profile)) ||
        (rc = env_locks(cfg)) || (rc = env_bool("STROBE_MALLOC", &cfg->malloc)) ||
        (rc = env_size("STROBE_MALLOC_LARGE", &cfg->malloc_large, 1, UINT64_MAX, false)))
        return rc;
    const char *hz = getenv("STROBE_SAMPLE");
    if (hz && *hz && strcmp(hz, "0") != 0 && strobe__parse_sample_hz(hz, &cfg->sample_hz) != 0)
        return bad_env("STROBE_SAMPLE", hz, "expected a rate in Hz from 1 to 10000 (0: off)");
    const char *src = getenv("STROBE_SAMPLE_SOURCE");
    cfg->sample_source = STROBE_SAMPLE_TIMER;
    if (src && strcmp(src, "perf") == 0)
        cfg->sample_source = STROBE_SAMPLE_PERF;
    else if (src && *src && strcmp(src, "timer") != 0)
        return bad_env("STROBE_SAMPLE_SOURCE", src, "expected timer or perf");
    if ((rc = env_duration("STROBE_DELAY", &cfg->delay_ns)) || (rc = env_duration("STROBE_DURATION", &cfg->duration_ns)))
        return rc;
    const char *sig = getenv("STROBE_TOGGLE_SIGNAL");
    if (sig && *sig && strobe__parse_signal(sig, &cfg->toggle_signal) != 0)
        return bad_env("STROBE_TOGGLE_SIGNAL", sig, "expected a signal such as USR1 that the program leaves alone");
    uint64_t chunk = cfg->chunk_size;
    if ((rc = env_size("STROBE_CHUNK_SIZE", &chunk, STROBE_CHUNK_SIZE_MIN, STROBE_CHUNK_SIZE_MAX, false)))
        return rc;
    if (chunk & (chunk - 1) || chunk < (uint64_t)sysconf(_SC_PAGESIZE))
        return bad_env("STROBE_CHUNK_SIZE", getenv("STROBE_CHUNK_SIZE"),
                       "must be a power of two, at least the page size");
    cfg->chunk_size = (uint32_t)chunk;
    if ((rc = env_size("STROBE_TRACE_LIMIT", &cfg->trace_limit, 4096, UINT64_MAX, true)))
        return rc;
    /* Whole pages: the last chunk then always has room for THREAD_END. */
    cfg->trace_limit &= ~(uint64_t)4095;
    if ((rc = env_size("STROBE_MAX_SIZE", &cfg->max_size, STROBE__RING_MIN, UINT64_MAX / 2, true)))
        return rc;
    if (cfg->max_size) {
        /* at least 16 chunks, so that a wrap loses at most a 16th of it,
         * unless STROBE_CHUNK_SIZE says otherwise */
        const char *cs = getenv("STROBE_CHUNK_SIZE");
        while (!(cs && *cs) && cfg->chunk_size > STROBE_CHUNK_SIZE_MIN && cfg->chunk_size > cfg->max_size / 16 &&
               cfg->chunk_size / 2 >= (uint64_t)sysconf(_SC_PAGESIZE))
            cfg->chunk_size /= 2;
        if (cfg->max_size < cfg->chunk_size)
            return bad_env("STROBE_MAX_SIZE", getenv("STROBE_MAX_SIZE"), "smaller than one chunk (STROBE_CHUNK_SIZE)");
        const char *ds = getenv("STROBE_DUMP_SIGNAL");
        cfg->dump_signal = SIGUSR2;
        if (ds && (strcmp(ds, "0") == 0 || strcmp(ds, "none") == 0))
            cfg->dump_signal = 0;
        else if (ds && *ds && strobe__parse_signal(ds, &cfg->dump_signal) != 0)
            return bad_env("STROBE_DUMP_SIGNAL", ds, "expected a signal such as USR2 that the program leaves alone, or none");
        if (cfg->dump_signal && cfg->dump_signal == cfg->toggle_signal)
            return bad_env("STROBE_DUMP_SIGNAL", ds ? ds : "USR2", "is the toggle signal too");
    }
    /* a day of shift, a tenth of drift: far beyond any real clock */
    if ((rc = env_int("STROBE_TEST_CLOCK_SHIFT_NS", &cfg->test_clock_shift_ns, 86400000000000ll)) ||
        (rc = env_int("STROBE_TEST_CLOCK_DRIFT_PPM", &cfg->test_clock_drift_ppm, 100000)))
        return rc;
    if ((rc = env_size("STROBE_PROFILE_LIMIT", &cfg->profile_limit, 4096, (uint64_t)UINT32_MAX * 64, false)))
        return rc;
    const char *clk = getenv("STROBE_CLOCK");
    bool tsc_ok = strobe__tsc_invariant();
    if (!clk || !*clk || strcmp(clk, "auto") == 0)
        cfg->clock_kind = tsc_ok ? STROBE_CLOCK_TSC : STROBE_CLOCK_MONOTONIC;
    else if (strcmp(clk, "monotonic") == 0)
        cfg->clock_kind = STROBE_CLOCK_MONOTONIC;
    else if (strcmp(clk, "tsc") == 0 && STROBE_HAVE_TSC)
        cfg->clock_kind = STROBE_CLOCK_TSC; /* forced: the user vouches for the TSC */
    else
        return bad_env("STROBE_CLOCK", clk, "expected auto, tsc or monotonic");
    return 0;
}

/* ---- directories ---- */

static const char *prog_name(void)
{
    const char *slash = strrchr(strobe__rt.exe, '/');
    const char *name = slash ? slash + 1 : strobe__rt.exe;
    return *name ? name : "program";
}

/* "cmd 'arg with space' ..." from /proc/self/cmdline for the meta file. */
static void command_line(char *out, size_t cap)
{
    char raw[4096];
    size_t n = 0, o = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r;
        while (n < sizeof raw && (r = read(fd, raw + n, sizeof raw - n)) > 0)
            n += (size_t)r;
        close(fd);
    }
    for (size_t i = 0; i < n && o + 8 < cap;) {
        const char *arg = raw + i;
        size_t len = strnlen(arg, n - i);
        bool plain = len > 0;
        for (size_t k = 0; k < len; k++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-", arg[k]))
                plain = false;
        if (o)
            out[o++] = ' ';
        if (!plain)
            out[o++] = '\'';
        for (size_t k = 0; k < len && o + 6 < cap; k++) {
            unsigned char c = (unsigned char)arg[k];
            if (c == '\'') {
                memcpy(out + o, "'\\''", 4);
                o += 4;
            } else {
                out[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c; /* one line per key */
            }
        }
        if (!plain)
            out[o++] = '\'';
        i += len + 1;
    }
    out[o] = 0;
}

/* The `meta` file of an experiment this runtime created itself (no
 * `strobe run`): the same keys as the CLI's, those the runtime knows. */
static void write_meta(const char *dir, const struct timespec *start)
{
    char path[PATH_MAX + 8], cmd[4096], cwd[PATH_MAX], when[32], buf[12288];
    struct tm tm;
    strobe__concat(path, sizeof path, dir, "/meta", (char *)NULL);
    command_line(cmd, sizeof cmd);
    if (!getcwd(cwd, sizeof cwd))
        strcpy(cwd, "?");
    if (!gmtime_r(&start->tv_sec, &tm) || !strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
        strcpy(when, "?");
    Dl_info self;
    const char *lib = dladdr((void *)&write_meta, &self) && self.dli_fname ? self.dli_fname : "libstrobe.so";
    int n = snprintf(buf, sizeof buf,
                     "strobe_version: %s\ncommand: %s\ncwd: %s\nstart_time: %s\nstart_realtime_ns: %lld\n"
                     "runtime: %s\n",
                     STROBE_VERSION_STRING, cmd, cwd, when,
                     (long long)start->tv_sec * 1000000000LL + start->tv_nsec, lib);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || n < 0)
        return;
    ssize_t w = write(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    (void)w; /* the experiment is readable without meta */
    close(fd);
}

/* STROBE_EXPERIMENT_DIR, made absolute (a child that chdir()s and exec()s
 * must land in the same place), or a new directory in the working one. */
static int setup_experiment_dir(const struct timespec *start)
{
    struct strobe__runtime *rt = &strobe__rt;
    const char *env = getenv("STROBE_EXPERIMENT_DIR");
    char cwd[PATH_MAX];
    if (env && *env) {
        if (env[0] == '/') {
            if (strobe__concat(rt->exp_dir, sizeof rt->exp_dir, env, (char *)NULL))
                return -ENAMETOOLONG;
        } else {
            if (!getcwd(cwd, sizeof cwd) ||
                strobe__concat(rt->exp_dir, sizeof rt->exp_dir, cwd, "/", env, (char *)NULL))
                return -ENAMETOOLONG;
            setenv("STROBE_EXPERIMENT_DIR", rt->exp_dir, 1);
        }
        if (mkdir(rt->exp_dir, 0777) != 0 && errno != EEXIST)
            return -errno;
        return 0;
    }
    if (!getcwd(cwd, sizeof cwd))
        return -errno;
    struct tm tm;
    char stamp[32];
    if (!localtime_r(&start->tv_sec, &tm) || !strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm))
        strcpy(stamp, "0");
    for (unsigned n = 0;; n++) {
        char num[24] = "";
        if (n)
            strobe__concat(num, sizeof num, "-", strobe__fmt_u64((char[24]){0}, n), (char *)NULL);
        if (strobe__concat(rt->exp_dir, sizeof rt->exp_dir, cwd, "/strobe-", prog_name(), "-", stamp, num,
                           (char *)NULL))
            return -ENAMETOOLONG;
        if (mkdir(rt->exp_dir, 0777) == 0)
            break;
        if (errno != EEXIST || n > 1000)
            return -errno;
    }
    write_meta(rt->exp_dir, start);
    /* Children and exec()ed images join this experiment. */
    setenv("STROBE_EXPERIMENT_DIR", rt->exp_dir, 1);
    return 0;
}

/* proc-<pid>, or proc-<pid>-<n> when an earlier image of this pid (before
 * an exec) has it. Async-signal-safe (used in the fork child). */
static int make_proc_dir(void)
{
    struct strobe__runtime *rt = &strobe__rt;
    char path[PATH_MAX + 64], pid[24], num[24];
    strobe__fmt_u64(pid, (uint64_t)rt->pid);
    for (unsigned n = 0;; n++) {
        strobe__fmt_u64(num, n);
        strobe__concat(rt->proc_name, sizeof rt->proc_name, "proc-", pid, n ? "-" : "", n ? num : "",
                       (char *)NULL);
        if (strobe__concat(path, sizeof path, rt->exp_dir, "/", rt->proc_name, (char *)NULL))
            return -ENAMETOOLONG;
        if (mkdir(path, 0777) == 0)
            break;
        if (errno != EEXIST || n > 100000)
            return -errno;
    }
    rt->proc_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return rt->proc_fd < 0 ? -errno : 0;
}

/* ---- clock ---- */

/* The CLOCK_MONOTONIC ns of a calibration point as the test hooks
 * (STROBE_TEST_CLOCK_*) make the process believe it: every timestamp is
 * converted to ns through these points, so shifting them shifts the whole
 * process at no cost on the hot path. Drift counts from the first point
 * of the process image (a fork child keeps its parent's). */
static uint64_t test_clock(uint64_t ns)
{
    static uint64_t origin;
    const struct strobe__config *cfg = &strobe__rt.cfg;
    if (!cfg->test_clock_shift_ns && !cfg->test_clock_drift_ppm)
        return ns;
    if (!origin)
        origin = ns;
    int64_t drift = (int64_t)((double)(ns - origin) * (double)cfg->test_clock_drift_ppm / 1e6);
    return ns + (uint64_t)(cfg->test_clock_shift_ns + drift);
}

void strobe__clock_sync_locked(uint64_t min_gap_ns)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (min_gap_ns && strobe__mono_ns() - rt->last_sync_ns < min_gap_ns)
        return;
    uint64_t ticks, ns;
    strobe__clock_pair(rt->cfg.clock_kind, &ticks, &ns);
    rt->last_sync_ns = ns;
    strobe__defs_clock_sync(ticks, test_clock(ns));
}

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- overhead ---- */

/* The hooks as an instrumented program calls them: through pointers the
 * compiler cannot see through, so the call, the TLS lookup and the hot
 * path are all timed, as they cost the program. */
static void (*volatile overhead_enter)(void *, void *) = __cyg_profile_func_enter;
static void (*volatile overhead_exit)(void *, void *) = __cyg_profile_func_exit;

/* Ticks one event costs, timed over 2000 enter/exit pairs through the real
 * hooks on a scratch thread writing to anonymous memory (median of 10
 * batches of 200 pairs, so an interrupt in one batch does not count). The
 * calling thread's state is swapped for the scratch one meanwhile, so
 * nothing lands in its stream. Needs state ACTIVE. */
static uint64_t measure_overhead(void)
{
    enum { BATCHES = 10, PAIRS = 200, BUF = 64 * 1024 };
    struct strobe__thread *s = strobe__thread_alloc(0, 0);
    uint8_t *buf = strobe__pages_alloc(BUF);
    struct strobe_prof_node *slots = strobe__pages_alloc(2 * sizeof *slots);
    uint64_t result = 0;
    if (!s || !buf || !slots)
        goto out;
    uintptr_t fn = (uintptr_t)&measure_overhead;
    s->pos = buf;
    s->limit = buf + BUF - STROBE_MAX_EVENT_BYTES; /* 4000 events never reach it */
    s->slots = slots;
    s->cache[strobe__cache_slot(fn)] = (struct strobe__cache_entry){fn, 1, 0};
    slots[0] = (struct strobe_prof_node){.tag = STROBE_SLOT_NODE,
                                         .parent = STROBE_PROF_NONE,
                                         .region = STROBE_PROF_NO_REGION,
                                         .first_child = 1,
                                         .next_sibling = STROBE_PROF_NONE,
                                         .first_metric = STROBE_PROF_NONE,
                                         .min_ticks = UINT64_MAX};
    slots[1] = slots[0];
    slots[1].parent = 0;
    slots[1].region = 1;
    slots[1].first_child = STROBE_PROF_NONE;
    s->stack[0].node = &slots[0];
    s->last_ticks = strobe__now(s);
    struct strobe__tls saved = strobe__tls;
    strobe__tls.t = s;
    strobe__tls.state = STROBE__TLS_ACTIVE;
    uint64_t batch[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        uint64_t t0 = strobe__now(s);
        for (int i = 0; i < PAIRS; i++) {
            overhead_enter((void *)fn, NULL);
            overhead_exit((void *)fn, NULL);
        }
        batch[b] = strobe__now(s) - t0;
    }
    strobe__tls = saved;
    for (int i = 1; i < BATCHES; i++) /* insertion sort, then the median */
        for (int j = i; j > 0 && batch[j - 1] > batch[j]; j--) {
            uint64_t x = batch[j];
            batch[j] = batch[j - 1];
            batch[j - 1] = x;
        }
    result = (batch[BATCHES / 2] + PAIRS) / (2 * PAIRS);
out:
    strobe__pages_free(buf, BUF);
    strobe__pages_free(slots, 2 * sizeof *slots);
    if (s)
        strobe__thread_free(s);
    return result;
}

/* ---- start-up ---- */

static void thread_key_destructor(void *p)
{
    /* A thread leaving without our wrappers seeing it: pthread_exit from
     * a thread created before the runtime, cancellation, C11 threads. */
    if (p && strobe__tls.t == p)
        strobe__thread_end(p);
}

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

/* The work of start-up; returns the state to enter (ACTIVE or OFF) and
 * the CLOCK_MONOTONIC time of the first calibration point. */
static int init_process(uint64_t *first_sync_ns)
{
    struct strobe__runtime *rt = &strobe__rt;
    bool enabled;
    if (read_config(&rt->cfg, &enabled) != 0 || !enabled)
        return STROBE__OFF;
    rt->pid = getpid();
    /* `strobe run` names its MPI launcher by pid, not by name (cmd_run.c):
     * the launcher's exec()ed images (mpirun -> orterun) keep the pid and
     * stay off, its children and their children are measured. */
    const char *launcher = getenv("STROBE_LAUNCHER_PID");
    char pid[24];
    if (launcher && strcmp(launcher, strobe__fmt_u64(pid, (uint64_t)rt->pid)) == 0)
        return STROBE__OFF;
    ssize_t n = readlink("/proc/self/exe", rt->exe, sizeof rt->exe - 1);
    rt->exe[n > 0 ? n : 0] = 0;

    const char *filter = getenv("STROBE_FILTER");
    if (filter && *filter) {
        char err[512];
        if (strobe__filter_load(filter, &rt->filter, err, sizeof err) != 0) {
            strobe__say(err, (char *)NULL);
            return STROBE__OFF;
        }
        strobe__symbols_prepare();
    }
    atomic_store_explicit(&rt->ring_left, (int64_t)rt->cfg.max_size, memory_order_relaxed);
    rt->mode = (rt->cfg.trace ? STROBE__MODE_TRACE : 0) | (rt->cfg.profile ? STROBE__MODE_PROFILE : 0) |
               (rt->cfg.clock_kind == STROBE_CLOCK_MONOTONIC ? STROBE__MODE_MONO : 0) |
               (rt->cfg.locks ? STROBE__MODE_SYNC : 0);
    if (rt->cfg.locks_all)
        atomic_store_explicit(&rt->sync_all, true, memory_order_relaxed);

    /* First calibration point now; the second once at least 1 ms has
     * passed, both written before the program runs, so even a process
     * killed at once has a tick->ns line. */
    uint64_t sync_ticks, sync_ns;
    strobe__clock_pair(rt->cfg.clock_kind, &sync_ticks, &sync_ns);
    *first_sync_ns = sync_ns;
    struct timespec start;
    clock_gettime(CLOCK_REALTIME, &start);

    int rc = setup_experiment_dir(&start);
    if (rc == 0)
        rc = make_proc_dir();
    if (rc) {
        strobe__say("cannot create the experiment directory ", rt->exp_dir[0] ? rt->exp_dir : ".", ": ",
                    strerror(-rc), "; measurement disabled", (char *)NULL);
        return STROBE__OFF;
    }
    if ((rc = pthread_key_create(&rt->thread_key, thread_key_destructor)) != 0) {
        strobe__say("pthread_key_create: ", strerror(rc), "; measurement disabled", (char *)NULL);
        return STROBE__OFF;
    }
    pthread_mutex_lock(&rt->lock);
    rc = strobe__defs_open();
    if (rc == 0) {
        strobe__defs_process((uint64_t)rt->pid, (uint64_t)getppid(), rt->cfg.clock_kind,
                             (uint64_t)start.tv_sec * 1000000000u + (uint64_t)start.tv_nsec, rt->exe, "");
        struct strobe__mpi_rank rank;
        if (strobe__mpi_rank_from_env(environ, &rank))
            strobe__defs_mpi_rank(rank.rank, rank.size, rank.source);
        strobe__defs_clock_sync(sync_ticks, test_clock(sync_ns));
        strobe__modules_scan_locked();
    }
    pthread_mutex_unlock(&rt->lock);
    if (rc) {
        strobe__say(rt->proc_name, "/defs: ", strerror(-rc), "; measurement disabled", (char *)NULL);
        return STROBE__OFF;
    }
    strobe__mem_start();
    strobe__sample_start();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    return STROBE__ACTIVE;
}

static void write_overhead(void)
{
    uint64_t overhead = measure_overhead();
    pthread_mutex_lock(&strobe__rt.lock);
    strobe__rt.overhead_ticks = overhead;
    strobe__defs_overhead(overhead);
    pthread_mutex_unlock(&strobe__rt.lock);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

int strobe__runtime_ensure(void)
{
    struct strobe__runtime *rt = &strobe__rt;
    int s = atomic_load_explicit(&rt->state, memory_order_acquire);
    if (STROBE_LIKELY(s != STROBE__UNINIT))
        return s;
    int expected = STROBE__UNINIT;
    if (!atomic_compare_exchange_strong_explicit(&rt->state, &expected, STROBE__INITIALIZING,
                                                 memory_order_acquire, memory_order_acquire))
        return expected;
    /* Our own events during start-up (the program's instrumented malloc,
     * say) are ignored: this thread is marked as starting. */
    struct strobe__tls *tl = &strobe__tls;
    int tls_state = tl->state;
    tl->state = STROBE__TLS_STARTING;
    uint64_t t0 = 0;
    s = init_process(&t0);
    tl->state = tls_state;
    /* Pairs with the acquire loads above: whoever sees ACTIVE sees a
     * complete context. */
    atomic_store_explicit(&rt->state, s, memory_order_release);
    if (s != STROBE__ACTIVE)
        return s;
    atomic_fetch_and_explicit(&rt->gate, ~STROBE__GATE_OFF, memory_order_relaxed);
    if (strobe__gettid() == (uint64_t)rt->pid && tl->state == STROBE__TLS_NONE) {
        struct strobe__thread *t = strobe__thread_alloc(0, 0);
        if (t)
            strobe__thread_attach(t);
    }
    write_overhead();
    /* after the overhead measurement, which must time recorded events */
    int prc = strobe__pause_start();
    if (prc)
        strobe__say("--delay/--duration/--toggle-signal/--dump-signal: ", strerror(-prc),
                    "; recording is not paused, resumed or dumped", (char *)NULL);
    /* The second calibration point, >= 1 ms after the first. */
    while (strobe__mono_ns() - t0 < 1000000)
        cpu_relax();
    pthread_mutex_lock(&rt->lock);
    strobe__clock_sync_locked(0);
    pthread_mutex_unlock(&rt->lock);
    strobe__publish_start();
    return s;
}

__attribute__((constructor)) static void strobe__constructor(void)
{
    strobe__runtime_ensure();
}

/* ---- exit ---- */

static void runtime_finish(void)
{
    struct strobe__runtime *rt = &strobe__rt;
    /* the adapters' last word for the exiting thread, while it is measured */
    if (strobe__active() && strobe__tls.t != NULL)
        strobe__thread_exit_hooks(strobe__tls.t);
    int expected = STROBE__ACTIVE;
    if (!atomic_compare_exchange_strong_explicit(&rt->state, &expected, STROBE__FINISHED,
                                                 memory_order_acq_rel, memory_order_relaxed))
        return;
    atomic_fetch_or_explicit(&rt->gate, STROBE__GATE_OFF, memory_order_relaxed);
    /* the live set goes first: an application that exits withdraws it */
    strobe__publish_stop();
    /* Every hook returns at once from now on. Only the calling thread is
     * finalized: other threads may still be running (exit() from a
     * thread), their data is in their files already and the process is
     * about to end. */
    struct strobe__thread *t = strobe__tls.t;
    if (t)
        strobe__thread_end(t);
    pthread_mutex_lock(&rt->lock);
    /* objects loaded behind the dlopen wrapper's back (by the C library
     * itself), so that samples in them are symbolized */
    if (rt->cfg.sample_hz)
        strobe__modules_scan_locked();
    strobe__clock_sync_locked(0);
    uint64_t end = strobe__clock_read(rt->cfg.clock_kind);
    /* Threads still running (workers never joined, exit() from another
     * thread) end here, with the frames they have open. */
    strobe__threads_summarize_at_exit(end);
    strobe__mem_finish_locked();
    /* Only an exit whose status we saw (exit() or main's return) is a
     * process end we can vouch for; a destructor run by dlclose() is not. */
    if (atomic_load_explicit(&rt->exit_known, memory_order_acquire))
        strobe__defs_process_end(end, atomic_load_explicit(&rt->exit_status, memory_order_relaxed));
    /* defs is complete: cut its zero tail. A thread still finishing an
     * event it began before FINISHED finds defs_pos NULL and writes no
     * more (storing past the new end of file would raise SIGBUS). */
    strobe__mfile_close(&rt->defs, rt->defs_pos);
    rt->defs_pos = NULL;
    strobe__bb_finish_locked();
    pthread_mutex_unlock(&rt->lock);
}

__attribute__((destructor)) static void strobe__destructor(void)
{
    runtime_finish();
}

/* ---- fork ---- */

/* The lock is held across fork() so the child inherits a consistent
 * registry, defs writer and thread list. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&strobe__rt.lock);
    strobe__mem_atfork_prepare();
}

static void atfork_parent(void)
{
    strobe__mem_atfork_parent();
    pthread_mutex_unlock(&strobe__rt.lock);
}

/* The child of fork(): a new process image in the same experiment.
 *  - The parent's mappings (streams, profiles, defs) are unmapped without
 *    a single store: they are the parent's files.
 *  - A new proc-<pid> with its own defs: PROCESS names the parent's
 *    directory; the parent's CLOCK_SYNC, MODULE, REGION and METRIC records
 *    are copied, so every region and metric id inherited in memory (the
 *    registry, the handles, the open stack) keeps its meaning.
 *  - The forking thread, the child's only one, becomes t0: THREAD_BEGIN
 *    and a fresh profile, with an empty call stack (the frames open at
 *    fork() are the parent's visits; the child's exits of them are
 *    ignored).
 * Runs in a possibly multithreaded parent's child: system calls only. */
static void atfork_child(void)
{
    struct strobe__runtime *rt = &strobe__rt;
    pthread_mutex_init(&rt->lock, NULL); /* locked by the parent's thread */
    strobe__bb_atfork_child_cursor();
    strobe__sync_after_fork_child();
    strobe__mem_atfork_child();
    strobe__publish_after_fork_child();
    strobe__pause_after_fork_child();
    struct strobe__tls *tl = &strobe__tls;
    if (atomic_load_explicit(&rt->state, memory_order_relaxed) != STROBE__ACTIVE)
        return;
    struct strobe__thread *self = tl->t;
    if (self)
        strobe__busy_set(self, STROBE__BUSY_IN);
    else if (tl->state == STROBE__TLS_ENDED)
        tl->state = STROBE__TLS_NONE;

    struct strobe__mfile parent_defs = rt->defs;
    uint64_t parent_used = parent_defs.fd >= 0 ? strobe__mfile_offset(&parent_defs, rt->defs_pos) : 0;
    char parent_dir[sizeof rt->proc_name];
    memcpy(parent_dir, rt->proc_name, sizeof parent_dir);
    uint64_t parent_pid = (uint64_t)rt->pid;

    strobe__threads_abandon_after_fork(self);
    close(rt->proc_fd);
    rt->proc_fd = -1;
    rt->defs.fd = -1;
    rt->defs_pos = NULL;
    rt->last_sync_ns = 0;
    rt->pid = getpid();
    atomic_store_explicit(&rt->next_index, 1, memory_order_relaxed);
    atomic_store_explicit(&rt->ring_left, (int64_t)rt->cfg.max_size, memory_order_relaxed); /* its own budget */

    int rc = make_proc_dir();
    if (rc == 0)
        rc = strobe__defs_open();
    if (rc == 0) {
        strobe__defs_process((uint64_t)rt->pid, parent_pid, rt->cfg.clock_kind, realtime_ns(), rt->exe,
                             parent_dir);
        rc = strobe__defs_copy_parent(&parent_defs, parent_used);
    }
    if (rc == 0)
        rc = strobe__bb_atfork_child_tables();
    strobe__mfile_abandon(&parent_defs);
    if (rc) {
        strobe__say("fork child: cannot create its process directory (", strerror(-rc),
                    "); the child is not measured", (char *)NULL);
        atomic_store_explicit(&rt->state, STROBE__OFF, memory_order_relaxed);
        atomic_fetch_or_explicit(&rt->gate, STROBE__GATE_OFF, memory_order_relaxed);
        if (self) {
            tl->t = NULL;
            tl->state = STROBE__TLS_ENDED;
        }
        return;
    }
    strobe__clock_sync_locked(0);
    strobe__defs_overhead(rt->overhead_ticks);
    strobe__mem_config_locked();
    strobe__sample_config_locked();
    if (self) {
        strobe__thread_rebirth_after_fork(self, strobe__now(self));
        strobe__busy_clear(self, STROBE__BUSY_IN);
    }
}
