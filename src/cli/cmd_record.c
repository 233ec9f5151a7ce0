/* SPDX-License-Identifier: MIT */
/*
 * `strobe record --pid PID`: samples an already running, unmodified
 * process. Every thread gets a perf software event on its CPU time
 * (task-clock, user mode) whose samples carry the user registers and a
 * copy of the top of the stack; strobe unwinds the copies itself with the
 * process's DWARF CFI (unwind.c) as they arrive, so code built without
 * frame pointers gives whole stacks, and writes them as SAMPLE records
 * into an ordinary experiment directory (one t<N>.evt per thread, defs with
 * the modules of /proc/PID/maps), which report, export and the HTML
 * report read like one of `strobe run --sample`. Threads that appear later
 * are found by rescanning /proc/PID/task; the recording ends after
 * --duration, when the process exits, or on SIGINT/SIGTERM, and always
 * writes what it has.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/unwind.h"
#include "common/format.h"
#include "common/sample_record.h"
#include "report/units.h"
#include "strobed/config.h"

const char strobe__record_help[] =
    "usage: strobe record --pid PID [--duration T] [--frequency HZ] [-o DIR]\n"
    "\n"
    "Samples every thread of the running process PID (threads it starts later\n"
    "too) without stopping or changing it, and writes an experiment directory\n"
    "that strobe report (--samples), export and the HTML report read like one of\n"
    "strobe run --sample. Stacks are unwound from copies of the threads' stacks\n"
    "with the DWARF CFI of the process's files: programs built without frame\n"
    "pointers give whole stacks. Needs perf events (kernel.perf_event_paranoid\n"
    "2 or below) and the right to trace the process (its user, or root).\n"
    "\n"
    "options:\n"
    "  -p, --pid PID        the process to sample (required)\n"
    "  -d, --duration T     stop after T (\"2s\", \"500ms\", \"1m\"; a bare number is\n"
    "                       seconds). Default: until the process exits, or\n"
    "                       SIGINT (Ctrl-C) or SIGTERM\n"
    "  -F, --frequency HZ   samples per second of each thread's CPU time,\n"
    "                       1..10000 (default 1000)\n"
    "  -o, --output DIR     experiment directory (created; an existing one must be\n"
    "                       empty). Default: strobe-<prog>-<YYYYmmdd-HHMMSS>\n"
    "  -h, --help           this help\n"
    "\n"
    "exit status: 0 recorded (also when the process exited during the recording),\n"
    "1 no such process, not allowed to sample it, or a write error, 2 usage error.\n";

/* Bytes of each sampled stack copied (perf record --call-graph dwarf's
 * default): deeper frames are cut and the sample is flagged truncated. */
#define STACK_COPY 8192u
/* Data pages of each thread's ring buffer (a power of two), halved down to
 * MIN_PAGES when the locked-memory limit refuses more. */
#define RING_PAGES 128u
#define MIN_PAGES 8u
/* How often /proc/PID/task and /proc/PID/maps are read again. */
#define RESCAN_NS 100000000ull

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

static uint64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- Files of the experiment: records in chunks (docs/formats/trace.md) */

struct stream {
    FILE *f;
    uint64_t pos;        /* bytes written */
    uint64_t last_ticks; /* event streams: time of the previous record */
};

static const uint8_t zeros[4096];

/* Appends one record, first padding to the next chunk when it would
 * straddle a boundary. */
static void stream_put(struct stream *s, const uint8_t *rec, size_t len)
{
    uint64_t room = STROBE_CHUNK_SIZE_DEFAULT - s->pos % STROBE_CHUNK_SIZE_DEFAULT;
    if (len > room) {
        for (uint64_t left = room; left;) {
            size_t k = left < sizeof zeros ? (size_t)left : sizeof zeros;
            fwrite(zeros, 1, k, s->f);
            left -= k;
        }
        s->pos += room;
    }
    fwrite(rec, 1, len, s->f);
    s->pos += len;
}

static int stream_open(struct stream *s, const char *path, const char *magic, uint32_t thread, uint64_t start)
{
    s->f = fopen(path, "wxe");
    if (!s->f)
        return -errno;
    struct strobe_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, magic, sizeof h.magic);
    h.version = STROBE_FORMAT_VERSION;
    h.header_size = sizeof h;
    h.chunk_size = STROBE_CHUNK_SIZE_DEFAULT;
    h.thread_index = thread;
    h.start_ticks = start;
    s->pos = 0;
    s->last_ticks = start;
    stream_put(s, (const uint8_t *)&h, sizeof h);
    return 0;
}

static int stream_close(struct stream *s)
{
    if (!s->f)
        return 0;
    int rc = ferror(s->f) ? -EIO : 0;
    if (fclose(s->f) != 0 && rc == 0)
        rc = -errno;
    s->f = NULL;
    return rc;
}

/* An EXT event record at time `ticks` (never before the previous one). */
static void stream_ext(struct stream *s, unsigned type, uint64_t ticks, const uint8_t *payload, size_t len)
{
    uint8_t rec[STROBE_MAX_EXT_PAYLOAD + 32], *q = rec;
    uint64_t delta = ticks > s->last_ticks ? ticks - s->last_ticks : 0;
    s->last_ticks += delta;
    *q++ = (uint8_t)type;
    q = strobe_uleb_put(q, delta);
    q = strobe_uleb_put(q, len);
    memcpy(q, payload, len);
    stream_put(s, rec, (size_t)(q - rec) + len);
}

/* A definition record of `type` with payload p[0..len), len <= DEF_MAX. */
#define DEF_MAX 4400u
static void def_put(struct stream *s, unsigned type, const uint8_t *p, size_t len)
{
    uint8_t rec[DEF_MAX + 12], *q = rec;
    *q++ = (uint8_t)type;
    q = strobe_uleb_put(q, len);
    memcpy(q, p, len);
    stream_put(s, rec, (size_t)(q - rec) + len);
}

/* ---- Sampled threads ---------------------------------------------------- */

/* What a thread used so far, from /proc (the THREAD_END fields). */
struct usage {
    uint64_t utime_us, stime_us, minflt, majflt, nvcsw, nivcsw;
};

/* Thread tid's usage now; -1 when it is gone (or unreadable). */
static int task_usage(pid_t pid, pid_t tid, struct usage *u)
{
    char path[96], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold anything */
    unsigned long long minflt, majflt, ut, st;
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %*u %llu %*u %llu %llu", &minflt, &majflt, &ut,
                     &st) != 4)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    *u = (struct usage){ut * 1000000u / (uint64_t)hz, st * 1000000u / (uint64_t)hz, minflt, majflt, 0, 0};
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
    if (!(f = fopen(path, "re")))
        return -1;
    while (fgets(buf, sizeof buf, f)) {
        unsigned long long v;
        if (sscanf(buf, "voluntary_ctxt_switches: %llu", &v) == 1)
            u->nvcsw = v;
        else if (sscanf(buf, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
            u->nivcsw = v;
    }
    fclose(f);
    return 0;
}

/* The process's peak resident set in KiB (VmHWM; getrusage's maxrss is
 * the process's too), 0 when unknown. */
static uint64_t peak_rss_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

struct thread {
    pid_t tid;
    uint32_t index; /* N of t<N>.evt */
    int fd;         /* the perf event; -1 once closed */
    uint8_t *ring;
    size_t ring_len; /* the mapping: one control page + data pages */
    struct stream out;
    uint64_t missed; /* periods lost since the last SAMPLE written */
    uint64_t samples;
    struct usage start; /* when sampling began */
    bool usage_known;
    bool seen; /* in the last scan of /proc/PID/task */
};

struct recorder {
    pid_t pid;
    unsigned hz;
    const char *dir;
    struct strobe__unwinder *unw;
    struct thread *threads;
    size_t nthreads, cap;
    size_t page;
    uint8_t *scratch; /* one record, when it wraps around a ring's end */
    uint64_t samples, lost;
    int error; /* the first -errno of writing */
};

/* The perf event of thread tid: task-clock in user mode every 1/hz s of
 * its CPU time, each sample with the user registers and stack copy. */
static int open_event(pid_t tid, unsigned hz)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 1000000000u / hz;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    a.sample_regs_user = STROBE__UNWIND_REGS_MASK;
    a.sample_stack_user = STACK_COPY;
    a.exclude_kernel = 1; /* allowed at perf_event_paranoid 2 */
    a.exclude_hv = 1;
    a.use_clockid = 1; /* sample times on the clock the experiment uses */
    a.clockid = CLOCK_MONOTONIC;
    a.watermark = 1; /* wake the poll when half the ring is full */
    int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* Maps fd's ring buffer: RING_PAGES data pages, fewer when the
 * locked-memory limit (kernel.perf_event_mlock_kb) refuses them. */
static int map_ring(struct recorder *r, struct thread *t)
{
    for (size_t pages = RING_PAGES; pages >= MIN_PAGES; pages /= 2) {
        size_t len = (pages + 1) * r->page;
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
        if (p != MAP_FAILED) {
            t->ring = p;
            t->ring_len = len;
            return 0;
        }
        if (errno != EPERM && errno != ENOMEM)
            return -errno;
    }
    return -EPERM;
}

static void put_sample(struct recorder *r, struct thread *t, uint64_t time, const uint64_t *regs,
                       const uint8_t *stack, size_t len)
{
    uint64_t ips[STROBE_SAMPLE_MAX_FRAMES];
    bool truncated = false;
    unsigned n =
        regs ? strobe__unwind(r->unw, t->tid, regs, stack, len, ips, STROBE_SAMPLE_MAX_FRAMES, &truncated)
             : 0;
    if (n == 0 && regs) { /* not even the interrupted instruction: keep it */
        ips[0] = regs[STROBE__UNWIND_IP];
        n = ips[0] && ips[0] < (1ull << 57) ? 1 : 0;
        truncated = true;
    }
    if (n == 0) { /* no user state at all: counted with the next sample */
        t->missed++;
        return;
    }
    uint8_t payload[STROBE_MAX_EXT_PAYLOAD];
    size_t plen = strobe__sample_encode(payload, 1, t->missed, ips, n, truncated);
    stream_ext(&t->out, STROBE_EXT_SAMPLE, time, payload, plen);
    t->missed = 0;
    t->samples++;
    r->samples++;
}

/* One record of the ring (PERF_RECORD_SAMPLE with the fields open_event
 * asks for, in the kernel's order: tid, time, user regs, user stack). */
static void handle(struct recorder *r, struct thread *t, const uint8_t *rec, size_t size)
{
    const struct perf_event_header *h = (const void *)rec;
    const uint8_t *p = rec + sizeof *h, *end = rec + size;
    if (h->type == PERF_RECORD_LOST && size >= sizeof *h + 16) {
        uint64_t lost;
        memcpy(&lost, p + 8, 8);
        t->missed += lost;
        r->lost += lost;
        return;
    }
    if (h->type != PERF_RECORD_SAMPLE || end - p < 24)
        return;
    uint64_t time, abi, size_copy = 0, dyn = 0;
    memcpy(&time, p + 8, 8);
    memcpy(&abi, p + 16, 8);
    p += 24;
    const uint64_t *regs = NULL;
    uint64_t regbuf[STROBE__UNWIND_NREGS];
    if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
        if ((size_t)(end - p) < sizeof regbuf)
            return;
        memcpy(regbuf, p, sizeof regbuf);
        regs = regbuf;
        p += sizeof regbuf;
    }
    if (end - p >= 8) {
        memcpy(&size_copy, p, 8);
        p += 8;
    }
    const uint8_t *stack = p;
    if (size_copy && (uint64_t)(end - p) >= size_copy + 8)
        memcpy(&dyn, p + size_copy, 8);
    put_sample(r, t, time, regs, stack, dyn < size_copy ? (size_t)dyn : (size_t)size_copy);
}

/* Everything in t's ring so far. */
static void drain(struct recorder *r, struct thread *t)
{
    if (!t->ring)
        return;
    struct perf_event_mmap_page *mp = (void *)t->ring;
    const uint8_t *data = t->ring + r->page;
    uint64_t size = t->ring_len - r->page;
    /* acquire: pairs with the kernel's barrier before it publishes head,
     * so the records below it are complete */
    uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = mp->data_tail;
    while (tail < head) {
        struct perf_event_header h;
        uint64_t off = tail % size;
        for (size_t i = 0; i < sizeof h; i++)
            ((uint8_t *)&h)[i] = data[(off + i) % size];
        if (h.size < sizeof h || h.size > head - tail)
            break;
        const uint8_t *rec = data + off;
        if (off + h.size > size) { /* wraps: copied together first */
            size_t first = (size_t)(size - off);
            memcpy(r->scratch, data + off, first);
            memcpy(r->scratch + first, data, h.size - first);
            rec = r->scratch;
        }
        handle(r, t, rec, h.size);
        tail += h.size;
    }
    /* release: the kernel may overwrite what we read only after this */
    __atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

/* Closes t's event and stream; a thread still there ends with what it
 * used while it was sampled (THREAD_END), one that is gone without. */
static void close_thread(struct recorder *r, struct thread *t)
{
    if (t->fd < 0)
        return;
    drain(r, t);
    struct usage u;
    if (t->usage_known && task_usage(r->pid, t->tid, &u) == 0) {
        uint64_t v[7] = {
            u.utime_us - t->start.utime_us, u.stime_us - t->start.stime_us, peak_rss_kb(r->pid),
            u.minflt - t->start.minflt,     u.majflt - t->start.majflt,     u.nvcsw - t->start.nvcsw,
            u.nivcsw - t->start.nivcsw};
        uint8_t payload[80], *q = payload;
        for (int i = 0; i < 7; i++)
            q = strobe_uleb_put(q, v[i]);
        stream_ext(&t->out, STROBE_EXT_THREAD_END, now_ns(CLOCK_MONOTONIC), payload, (size_t)(q - payload));
    }
    if (t->ring)
        munmap(t->ring, t->ring_len);
    t->ring = NULL;
    close(t->fd);
    t->fd = -1;
    int rc = stream_close(&t->out);
    if (rc && !r->error)
        r->error = rc;
}

/* Starts sampling thread tid as t<N>. -ESRCH: it ended meanwhile. */
static int add_thread(struct recorder *r, pid_t tid)
{
    if (r->nthreads == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        struct thread *p = realloc(r->threads, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        r->threads = p;
        r->cap = cap;
    }
    struct thread *t = &r->threads[r->nthreads];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->index = (uint32_t)r->nthreads;
    t->seen = true;
    t->usage_known = task_usage(r->pid, tid, &t->start) == 0;
    uint64_t start = now_ns(CLOCK_MONOTONIC); /* before the event: no sample precedes it */
    if ((t->fd = open_event(tid, r->hz)) < 0)
        return t->fd;
    int rc = map_ring(r, t);
    char path[4200];
    snprintf(path, sizeof path, "%s/proc-%d/t%" PRIu32 ".evt", r->dir, (int)r->pid, t->index);
    if (rc == 0 && (rc = stream_open(&t->out, path, STROBE_MAGIC_EVENTS, t->index, start)) == 0) {
        uint8_t payload[24], *q = strobe_uleb_put(payload, (uint64_t)tid);
        q = strobe_uleb_put(q, 0); /* no parent known: threads are found, not created */
        stream_ext(&t->out, STROBE_EXT_THREAD_BEGIN, start, payload, (size_t)(q - payload));
    }
    if (rc) {
        if (t->ring)
            munmap(t->ring, t->ring_len);
        close(t->fd);
        return rc;
    }
    r->nthreads++;
    return 0;
}

static int tid_cmp(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

/* The process's threads now, sorted, the main thread first (it is t0). */
static int list_tasks(pid_t pid, pid_t **out, size_t *n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return errno == ENOENT ? -ESRCH : -errno;
    pid_t *v = NULL;
    size_t k = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (k == cap) {
            pid_t *p = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *p);
            if (!p) {
                rc = -ENOMEM;
                break;
            }
            v = p;
        }
        v[k++] = (pid_t)atol(e->d_name);
    }
    closedir(d);
    if (rc) {
        free(v);
        return rc;
    }
    qsort(v, k, sizeof *v, tid_cmp);
    for (size_t i = 0; i < k; i++)
        if (v[i] == pid) {
            memmove(v + 1, v, i * sizeof *v);
            v[0] = pid;
        }
    *out = v;
    *n = k;
    return 0;
}

/* Opens events for new threads and closes those that ended. Returns 0, or
 * -errno of the first thread that could not be sampled (for the first
 * scan: why the kernel refuses). */
static int rescan(struct recorder *r)
{
    pid_t *tids = NULL;
    size_t n = 0;
    int rc = list_tasks(r->pid, &tids, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < r->nthreads; i++)
        r->threads[i].seen = false;
    for (size_t i = 0; i < n && rc == 0; i++) {
        bool known = false;
        for (size_t j = 0; j < r->nthreads && !known; j++)
            if (r->threads[j].tid == tids[i] && r->threads[j].fd >= 0)
                known = r->threads[j].seen = true;
        if (!known) {
            int k = add_thread(r, tids[i]);
            if (k != -ESRCH)
                rc = k;
        }
    }
    free(tids);
    for (size_t i = 0; i < r->nthreads; i++)
        if (!r->threads[i].seen)
            close_thread(r, &r->threads[i]);
    return rc;
}

/* The state letter of thread tid of process pid ('Z' a zombie), and the
 * process's parent into *ppid when not NULL; 0 when it is gone. */
static char task_state(pid_t pid, pid_t tid, pid_t *ppid)
{
    char path[96], buf[512];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold anything */
    char state = 0;
    int pp = 0;
    if (p && sscanf(p + 1, " %c %d", &state, &pp) == 2 && ppid)
        *ppid = pp;
    return state;
}

static bool running(char state)
{
    return state != 0 && state != 'Z' && state != 'X';
}

/* Whether a thread of the process still runs: its main thread may have
 * ended (pthread_exit, a zombie until the last one ends) while others go
 * on. */
static bool process_alive(pid_t pid)
{
    char s = task_state(pid, pid, NULL);
    if (s != 'Z')
        return running(s);
    pid_t *tids;
    size_t n;
    bool alive = false;
    if (list_tasks(pid, &tids, &n) != 0)
        return false;
    for (size_t i = 0; i < n && !alive; i++)
        alive = running(task_state(pid, tids[i], NULL));
    free(tids);
    return alive;
}

/* A running thread of the process, whose /proc files (maps, exe, cwd,
 * cmdline) are the process's: the main thread's are empty once it ended.
 * The main thread when it runs; pid itself when none does. */
static pid_t live_task(pid_t pid)
{
    if (running(task_state(pid, pid, NULL)))
        return pid;
    pid_t *tids, live = pid;
    size_t n;
    if (list_tasks(pid, &tids, &n) != 0)
        return pid;
    for (size_t i = 0; i < n && live == pid; i++)
        if (running(task_state(pid, tids[i], NULL)))
            live = tids[i];
    free(tids);
    return live;
}

/* An event on a running thread of the process (the main thread may be a
 * zombie), closed again: 0, or -errno of the kernel's refusal. */
static int probe_event(pid_t pid, unsigned hz)
{
    pid_t *tids;
    size_t n;
    int rc = list_tasks(pid, &tids, &n);
    if (rc)
        return rc;
    rc = -ESRCH;
    for (size_t i = 0; i < n && rc == -ESRCH; i++) {
        if (!running(task_state(pid, tids[i], NULL)))
            continue;
        int fd = open_event(tids[i], hz);
        rc = fd < 0 ? fd : 0;
        if (fd >= 0)
            close(fd);
    }
    free(tids);
    return rc;
}

/* ---- Messages ------------------------------------------------------------ */

static int read_int_file(const char *path, int fallback)
{
    FILE *f = fopen(path, "re");
    int v = fallback;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = fallback;
        fclose(f);
    }
    return v;
}

/* The owner of process pid (its real uid), -1 when unknown. */
static long process_uid(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_uid : -1;
}

/* The one line saying why the kernel refused (err) and what to change. */
static void say_refused(pid_t pid, int err)
{
    int paranoid = read_int_file("/proc/sys/kernel/perf_event_paranoid", 2);
    long owner = process_uid(pid);
    if (err == -ENOENT || err == -ENOSYS || err == -EOPNOTSUPP)
        strobe__cli_say("record: this kernel has no perf events (perf_event_open: %s)", strerror(-err));
    else if (geteuid() != 0 && paranoid > 2)
        strobe__cli_say(
            "record: perf events are off for users other than root (kernel.perf_event_paranoid = %d): "
            "run as root, or allow them with 'sysctl kernel.perf_event_paranoid=2'",
            paranoid);
    else if (geteuid() != 0 && owner >= 0 && (uid_t)owner != geteuid())
        strobe__cli_say(
            "record: process %d belongs to uid %ld, not to you (uid %u): run strobe record as that "
            "user or as root (or with CAP_PERFMON and CAP_SYS_PTRACE)",
            (int)pid, owner, (unsigned)geteuid());
    else
        strobe__cli_say("record: process %d: %s: run as root, or check kernel.perf_event_paranoid (%d; 2 or "
                        "below allows sampling your own processes) and the process's dumpable flag",
                        (int)pid, strerror(-err), paranoid);
}

/* ---- The experiment's defs ----------------------------------------------- */

static size_t put_str(uint8_t *q, const char *s, size_t len)
{
    uint8_t *b = strobe_uleb_put(q, len);
    memcpy(b, s, len);
    return (size_t)(b - q) + len;
}

static int write_defs(struct recorder *r, const char *exe, pid_t ppid, uint64_t start_mono,
                      uint64_t start_real, uint64_t end_mono)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/proc-%d/defs", r->dir, (int)r->pid);
    struct stream s;
    int rc = stream_open(&s, path, STROBE_MAGIC_DEFS, 0, 0);
    if (rc)
        return rc;
    size_t exe_len = strnlen(exe, 4096);
    uint8_t buf[DEF_MAX], *q = buf;
    q = strobe_uleb_put(q, (uint64_t)r->pid);
    q = strobe_uleb_put(q, (uint64_t)ppid);
    q = strobe_uleb_put(q, 1); /* CLOCK_MONOTONIC: a tick is a nanosecond */
    q = strobe_uleb_put(q, start_real);
    q += put_str(q, exe, exe_len);
    q += put_str(q, "", 0);
    def_put(&s, STROBE_DEF_PROCESS, buf, (size_t)(q - buf));
    uint64_t sync[2] = {start_mono, end_mono};
    for (int i = 0; i < 2; i++) {
        q = strobe_uleb_put(buf, sync[i]);
        q = strobe_uleb_put(q, sync[i]);
        def_put(&s, STROBE_DEF_CLOCK_SYNC, buf, (size_t)(q - buf));
    }
    size_t nmods;
    const struct strobe__attach_module *mods = strobe__unwinder_modules(r->unw, &nmods);
    for (size_t i = 0; i < nmods; i++) {
        size_t len = strlen(mods[i].path);
        if (len > 4096)
            continue; /* no longer than PATH_MAX */
        q = buf + put_str(buf, mods[i].path, len);
        q = strobe_uleb_put(q, mods[i].bias);
        q = strobe_uleb_put(q, mods[i].lo);
        q = strobe_uleb_put(q, mods[i].hi);
        def_put(&s, STROBE_DEF_MODULE, buf, (size_t)(q - buf));
    }
    q = strobe_uleb_put(buf, r->hz);
    q = strobe_uleb_put(q, STROBE_SAMPLE_PERF);
    def_put(&s, STROBE_DEF_SAMPLE, buf, (size_t)(q - buf));
    return stream_close(&s);
}

/* ---- The command ---------------------------------------------------------- */

/* The process's command line as words (malloc'd vector and strings, one
 * block), read through its running thread tid. */
static char **process_argv(pid_t pid, pid_t tid)
{
    char path[64], buf[8192];
    snprintf(path, sizeof path, "/proc/%d/task/%d/cmdline", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    if (n == 0) /* a kernel thread, or a zombie */
        n = (size_t)snprintf(buf, sizeof buf, "[%d]", (int)pid) + 1;
    buf[n] = 0;
    size_t words = 0;
    for (size_t i = 0; i < n; i++)
        words += buf[i] == 0;
    if (buf[n - 1] != 0)
        words++;
    char **v = malloc((words + 1) * sizeof *v + n + 1);
    if (!v)
        return NULL;
    char *s = (char *)(v + words + 1);
    memcpy(s, buf, n + 1);
    size_t k = 0;
    for (char *p = s; k < words; p += strlen(p) + 1)
        v[k++] = p;
    v[k] = NULL;
    return v;
}

static char *readlink_alloc(const char *path)
{
    char buf[4096];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n < 0)
        return NULL;
    buf[n] = 0;
    return strdup(buf);
}

struct options {
    pid_t pid;
    unsigned long long duration_ns; /* 0: until the process exits */
    unsigned hz;
    const char *output;
};

static int parse(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"duration", required_argument, NULL, 'd'},
        {"frequency", required_argument, NULL, 'F'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct options){.hz = STROBE_SAMPLE_HZ_DEFAULT};
    int c;
    size_t v;
    while ((c = strobe__cli_getopt("record", argc, argv, ":p:d:F:o:h", longopts)) != -1) {
        switch (c) {
        case 'p':
            if (strobe__cli_parse_size(optarg, &v) != 0 || v == 0 || v > INT32_MAX)
                return strobe__cli_usage_error("record", "--pid: '%s' is not a process id", optarg);
            o->pid = (pid_t)v;
            break;
        case 'd':
            if (strobe__parse_duration(optarg, &o->duration_ns) != 0 || o->duration_ns == 0)
                return strobe__cli_usage_error("record",
                                               "--duration: '%s' is not a duration above 0 (\"2s\", "
                                               "\"500ms\")",
                                               optarg);
            break;
        case 'F':
            if (strobe__cli_parse_size(optarg, &v) != 0 || v < STROBE_SAMPLE_HZ_MIN ||
                v > STROBE_SAMPLE_HZ_MAX)
                return strobe__cli_usage_error("record", "--frequency: '%s' is not a rate of %u to %u Hz",
                                               optarg, STROBE_SAMPLE_HZ_MIN, STROBE_SAMPLE_HZ_MAX);
            o->hz = (unsigned)v;
            break;
        case 'o':
            o->output = optarg;
            break;
        case 'h':
            fputs(strobe__record_help, stdout);
            return -1;
        default:
            return STROBE_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return strobe__cli_usage_error("record", "unexpected argument '%s'", argv[optind]);
    if (!o->pid)
        return strobe__cli_usage_error("record", "--pid PID is required");
    return 0;
}

/* Records until the end (duration, exit, signal); returns whether the
 * process exited. */
static bool record_loop(struct recorder *r, uint64_t deadline)
{
    uint64_t next_scan = now_ns(CLOCK_MONOTONIC) + RESCAN_NS;
    struct pollfd *pfd = NULL;
    size_t *owner = NULL; /* pfd[k] is threads[owner[k]]'s */
    size_t pcap = 0;
    bool exited = false;
    while (!stop_signal) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        if (deadline && now >= deadline)
            break;
        if (now >= next_scan) {
            next_scan = now + RESCAN_NS;
            if (!process_alive(r->pid)) {
                exited = true;
                break;
            }
            rescan(r); /* a thread that cannot be sampled is skipped */
            strobe__unwinder_refresh(r->unw, live_task(r->pid));
        }
        if (pcap < r->nthreads) {
            struct pollfd *p = realloc(pfd, r->nthreads * sizeof *p);
            size_t *q = realloc(owner, r->nthreads * sizeof *q);
            pfd = p ? p : pfd;
            owner = q ? q : owner;
            if (!p || !q)
                break; /* out of memory: end with what was recorded */
            pcap = r->nthreads;
        }
        size_t n = 0;
        for (size_t i = 0; i < r->nthreads; i++)
            if (r->threads[i].fd >= 0) {
                owner[n] = i;
                pfd[n++] = (struct pollfd){r->threads[i].fd, POLLIN, 0};
            }
        uint64_t wake = next_scan;
        if (deadline && deadline < wake)
            wake = deadline;
        int ms = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;
        poll(pfd, n, ms); /* EINTR: a stop signal, seen above */
        for (size_t k = 0; k < n; k++) {
            /* POLLHUP: the thread ended; its event would wake every poll */
            if (pfd[k].revents & POLLHUP)
                close_thread(r, &r->threads[owner[k]]);
            else
                drain(r, &r->threads[owner[k]]);
        }
    }
    free(owner);
    free(pfd);
    return exited || !process_alive(r->pid);
}

int strobe__cmd_record(int argc, char **argv)
{
    struct options o;
    int code = parse(argc, argv, &o);
    if (code)
        return code < 0 ? 0 : code;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    /* from the start: a stop asked for during the set-up ends the
     * recording as soon as it begins (no SA_RESTART: poll returns at once) */
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    pid_t ppid = 0;
    if (!process_alive(o.pid) || !task_state(o.pid, o.pid, &ppid)) {
        strobe__cli_say("record: no such process: %d", (int)o.pid);
        return STROBE_EXIT_FAILURE;
    }
    char proc[96];
    pid_t live = live_task(o.pid);
    snprintf(proc, sizeof proc, "/proc/%d/task/%d/exe", (int)o.pid, (int)live);
    char *exe = readlink_alloc(proc);
    if (!exe) {
        if (errno == ENOENT)
            strobe__cli_say("record: no such process: %d", (int)o.pid);
        else
            say_refused(o.pid, -errno);
        return STROBE_EXIT_FAILURE;
    }
    /* one descriptor per thread: as many as allowed */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    struct recorder r = {.pid = o.pid, .hz = o.hz, .page = (size_t)sysconf(_SC_PAGESIZE)};
    int rc = strobe__unwinder_open(o.pid, live, &r.unw);
    if (rc) {
        if (rc == -ESRCH)
            strobe__cli_say("record: no such process: %d", (int)o.pid);
        else if (rc == -EACCES || rc == -EPERM)
            say_refused(o.pid, rc);
        else
            strobe__cli_say("record: process %d: its modules: %s", (int)o.pid, strerror(-rc));
        free(exe);
        return STROBE_EXIT_FAILURE;
    }
    /* the kernel's verdict before anything is created: one event */
    int probe = probe_event(o.pid, o.hz);
    if (probe < 0) {
        if (probe == -ESRCH)
            strobe__cli_say("record: no such process: %d", (int)o.pid);
        else
            say_refused(o.pid, probe);
        strobe__unwinder_close(r.unw);
        free(exe);
        return STROBE_EXIT_FAILURE;
    }

    char **pargv = process_argv(o.pid, live);
    snprintf(proc, sizeof proc, "/proc/%d/task/%d/cwd", (int)o.pid, (int)live);
    char *cwd = readlink_alloc(proc);
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    char *dir = NULL;
    bool created; /* the directory stays on a later failure, with what it has */
    code = pargv ? strobe__cli_experiment_dir("record", o.output, exe, real.tv_sec, &dir, &created)
                 : STROBE_EXIT_FAILURE;
    char sub[4200], meta[4200];
    if (code == 0) {
        r.dir = dir;
        snprintf(sub, sizeof sub, "%s/proc-%d", dir, (int)o.pid);
        snprintf(meta, sizeof meta, "%s/meta", dir);
        struct strobe__attach_info info = {pargv, cwd, o.pid, o.hz, real.tv_sec, real.tv_nsec};
        if (mkdir(sub, 0777) != 0 || (rc = strobe__meta_write_attach(meta, &info)) != 0) {
            strobe__cli_say("record: %s: %s", dir, strerror(rc ? -rc : errno));
            code = STROBE_EXIT_FAILURE;
        }
    }
    r.scratch = malloc(65536);
    if (code == 0 && !r.scratch)
        code = STROBE_EXIT_FAILURE;
    if (code) {
        strobe__unwinder_close(r.unw);
        free(exe);
        free(cwd);
        free(pargv);
        free(dir);
        free(r.scratch);
        return code;
    }

    uint64_t start_mono = now_ns(CLOCK_MONOTONIC);
    uint64_t start_real = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec;
    /* a thread that cannot be sampled is skipped, as in later scans; none
     * at all fails (the probe above makes that rare) */
    rc = rescan(&r);
    bool exited = false;
    if (rc == -ESRCH || (r.nthreads == 0 && !process_alive(o.pid))) {
        exited = true;
    } else if (r.nthreads == 0) {
        if (rc == -EACCES || rc == -EPERM)
            say_refused(o.pid, rc);
        else
            strobe__cli_say("record: process %d: %s", (int)o.pid, strerror(rc ? -rc : ESRCH));
        code = STROBE_EXIT_FAILURE;
    } else {
        exited = record_loop(&r, o.duration_ns ? start_mono + o.duration_ns : 0);
    }
    uint64_t end_mono = now_ns(CLOCK_MONOTONIC);
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    for (size_t i = 0; i < r.nthreads; i++)
        close_thread(&r, &r.threads[i]);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);

    if ((rc = write_defs(&r, exe, ppid, start_mono, start_real, end_mono)) != 0 && !r.error)
        r.error = rc;
    if ((rc = strobe__meta_write_detach(meta, exited, end.tv_sec, end.tv_nsec)) != 0 && !r.error)
        r.error = rc;
    if (r.error) {
        strobe__cli_say("record: %s: %s", dir, strerror(-r.error));
        code = STROBE_EXIT_FAILURE;
    } else if (code == 0) {
        char t[STROBE_UNITS_LEN];
        fprintf(stderr,
                "strobe: record: %" PRIu64 " samples of %zu thread%s of process %d (%s) in %s%s%s -> %s/\n",
                r.samples, r.nthreads, r.nthreads == 1 ? "" : "s", (int)o.pid, pargv[0],
                strobe__fmt_time(t, end_mono - start_mono),
                exited        ? "; the process exited"
                : stop_signal ? "; stopped by a signal"
                              : "",
                r.lost ? "; some samples lost (ring buffers full)" : "", dir);
    }
    strobe__unwinder_close(r.unw);
    free(r.threads);
    free(r.scratch);
    free(exe);
    free(cwd);
    free(pargv);
    free(dir);
    return code;
}
