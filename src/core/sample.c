/* SPDX-License-Identifier: MIT */
/*
 * CPU-time sampler: per-thread timers, the SIGPROF handler, the stack walk
 * and the SAMPLE records (see sample.h).
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "core/sample.h"

#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <string.h>
#include <sys/ucontext.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sample_record.h"
#include "core/defs.h"
#include "core/hotpath.h"
#include "core/profile.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "core/util.h"
#include "strobe/strobe.h"

/* Distinguishes our timers' signals from everybody else's SIGPROF. */
static const char sampler_cookie[] = "strobe sampler";

/* The perf event this thread armed, -1 = none (see on_sigprof). */
static __thread int event_fd __attribute__((tls_model("initial-exec"))) = -1;

/* The interrupted stack, innermost first, into ips; returns the number of
 * frames and sets *truncated when there were more. Async-signal-safe
 * with UNW_LOCAL_ONLY and the per-thread cache chosen at start-up.
 *
 * unw_backtrace walks from here, through this handler and the signal
 * frame, with libunwind's cache of frame layouts per return address
 * (about 7 ns a frame once warm; a unw_step loop re-reads DWARF and costs
 * 100 times more, docs/performance.md): the interrupted frame is the
 * entry that equals the interrupted instruction pointer. When the fast
 * walk does not get there, the unw_step loop starts from the signal's
 * context instead. */
static unsigned walk(void *uc, uint64_t *ips, bool *truncated)
{
    enum { OWN = 8 }; /* this handler's frames and the signal frame, at most */
    void *buf[STROBE_SAMPLE_MAX_FRAMES + OWN];
    uint64_t pc = (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    int n = unw_backtrace(buf, (int)(sizeof buf / sizeof buf[0]));
    *truncated = false;
    for (int i = 0; i < n && i < OWN; i++) {
        if ((uint64_t)(uintptr_t)buf[i] != pc)
            continue;
        unsigned k = (unsigned)(n - i);
        if (k > STROBE_SAMPLE_MAX_FRAMES) {
            k = STROBE_SAMPLE_MAX_FRAMES;
            *truncated = true;
        } else {
            *truncated = n == (int)(sizeof buf / sizeof buf[0]);
        }
        for (unsigned j = 0; j < k; j++)
            ips[j] = (uint64_t)(uintptr_t)buf[i + (int)j];
        return k;
    }
    unw_cursor_t cur;
    unsigned k = 0;
    if (unw_init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
        return 0;
    do {
        unw_word_t ip;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        if (k == STROBE_SAMPLE_MAX_FRAMES) {
            *truncated = true;
            break;
        }
        ips[k++] = ip;
    } while (unw_step(&cur) > 0);
    return k;
}

/* Writes one encoded sample and adds its weight to the current call
 * path. Called with STROBE__BUSY_IN set. -EAGAIN: the chunk switch it
 * needs would wait for the lock. */
static int put(struct strobe__thread *t, uint64_t now, const uint8_t *payload, size_t len, uint64_t weight,
               bool in_handler)
{
    if (t->mode & STROBE__MODE_TRACE) {
        int rc = in_handler ? strobe__ext_record_nowait(t, STROBE_EXT_SAMPLE, now, payload, len)
                            : strobe__ext_record(t, STROBE_EXT_SAMPLE, now, payload, len);
        if (rc == -EAGAIN)
            return rc;
    }
    if ((t->mode & STROBE__MODE_PROFILE) && t->slots)
        strobe__prof_metric(t, t->sp[-1].node, strobe__rt.sample_metric, (int64_t)weight);
    return 0;
}

/* Keeps a sample that cannot be written now; a second one is lost (and
 * counted in the next record's `missed`). */
static void defer(struct strobe__sampler *s, const uint8_t *payload, size_t len, uint64_t weight)
{
    if (s->pending_len) {
        s->missed += weight;
        return;
    }
    memcpy(s->pending, payload, len);
    s->pending_weight = weight;
    atomic_signal_fence(memory_order_seq_cst);
    s->pending_len = (uint16_t)len;
}

/* One sample standing for `weight` periods of the thread's CPU time. */
static void take(struct strobe__thread *t, void *uc, uint64_t weight)
{
    struct strobe__sampler *s = &t->sampler;
    uint64_t ips[STROBE_SAMPLE_MAX_FRAMES];
    uint8_t payload[STROBE_MAX_EXT_PAYLOAD];
    bool truncated;
    /* The runtime is mid-record for this thread: the encoding must not
     * take `missed` now, the pending slot keeps the sample for later. */
    bool busy = __atomic_load_n(&t->busy, __ATOMIC_RELAXED) & STROBE__BUSY_IN;
    /* Set before the walk: libunwind locks a mutex of its own, and the
     * wrappers of sync.c must not take the handler's calls for the
     * program's, whose SYNC events they would record and whose block
     * stream they would MARK at the cursor the interrupted function last
     * stored, over the records it wrote since (docs/bbtrace.md). */
    if (!busy)
        strobe__busy_set(t, STROBE__BUSY_IN);
    unsigned n = walk(uc, ips, &truncated);
    uint64_t now = strobe__now(t);
    if (n == 0) { /* no stack at all (unwinding failed at once): counted */
        s->missed += weight;
    } else if (busy) {
        size_t len = strobe__sample_encode(payload, weight, 0, ips, n, truncated);
        defer(s, payload, len, weight);
    } else if (s->pending_len &&
               put(t, now, s->pending, s->pending_len, s->pending_weight, true) == -EAGAIN) {
        s->missed += weight; /* this one: the pending one stays */
    } else {
        s->pending_len = 0;
        size_t len = strobe__sample_encode(payload, weight, s->missed, ips, n, truncated);
        if (put(t, now, payload, len, weight, true) == -EAGAIN) {
            size_t plain = strobe__sample_encode(payload, weight, 0, ips, n, truncated);
            defer(s, payload, plain, weight);
        } else {
            s->missed = 0;
        }
    }
    if (!busy)
        strobe__busy_clear(t, STROBE__BUSY_IN);
}

/* The program's own SIGPROF disposition, which our handler stands in
 * for (see the sigaction wrapper). */
static void forward(int sig, siginfo_t *si, void *uc)
{
    struct sigaction *p = &strobe__rt.prog_sigprof;
    if (p->sa_flags & SA_SIGINFO) {
        if (p->sa_sigaction)
            p->sa_sigaction(sig, si, uc);
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN && p->sa_handler) {
        p->sa_handler(sig);
    }
    /* SIG_DFL would terminate the process: a SIGPROF sent by someone else
     * while the sampler runs is ignored instead (docs/cli.md). */
}

/* A CPU-time timer expires at the kernel's tick only (every 4 ms at
 * CONFIG_HZ=250): at a higher rate one signal comes per tick with the
 * other expirations as its overrun, and that sample stands for all of
 * them (its weight). Overruns beyond what a tick of at least 100 Hz
 * explains are a signal that was blocked or delayed: counted as missed
 * instead, so that the time of a blocked stretch is not charged to the
 * place that unblocked it. */
static uint64_t weight_of(struct strobe__thread *t, int overrun)
{
    uint64_t cap = (strobe__rt.cfg.sample_hz + 99) / 100;
    uint64_t extra = overrun > 0 ? (uint64_t)overrun : 0;
    if (extra + 1 > cap) {
        t->sampler.missed += extra + 1 - cap;
        extra = cap - 1;
    }
    return extra + 1;
}

static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    struct strobe__tls *tl = &strobe__tls;
    struct strobe__thread *t = tl->t;
    bool timer = si->si_code == SI_TIMER && si->si_value.sival_ptr == (void *)sampler_cookie;
    /* A perf event's signal names its descriptor: ours if it is the one
     * this thread armed, whatever tl->t says (the start-up's overhead
     * measurement stands a scratch thread in for a while), so that it is
     * always re-armed. */
    bool event = si->si_code == POLL_HUP && event_fd >= 0 && si->si_fd == event_fd;
    if (!timer && !event) {
        forward(sig, si, uc);
        errno = saved;
        return;
    }
    if (t && t->sampler.armed && tl->state == STROBE__TLS_ACTIVE && strobe__active() && !strobe__paused() &&
        !atomic_load_explicit(&t->closed, memory_order_acquire))
        take(t, uc, weight_of(t, timer ? si->si_overrun : 0));
    if (event) /* the next period; SIGPROF stays blocked until we return */
        ioctl(event_fd, PERF_EVENT_IOC_REFRESH, 1);
    errno = saved;
}

/* A software perf event on thread `tid` (the caller) signalling it every
 * period_ns of its user-mode CPU time, into *out (stored before the event
 * is enabled: its first signal may come as soon as the enabling system
 * call returns, and the handler knows it by that descriptor); with
 * !enable it is only opened. -errno when the kernel refuses. */
static int open_event(uint64_t tid, uint64_t period_ns, bool enable, int *out)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period_ns;
    a.disabled = 1;
    a.exclude_kernel = 1; /* allowed at perf_event_paranoid 2 */
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)tid};
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
        fcntl(fd, F_SETFL, fl | O_ASYNC) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    *out = fd;
    if (enable)
        event_fd = fd;
    atomic_signal_fence(memory_order_seq_cst);
    if (enable && ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) != 0) {
        int e = errno;
        *out = event_fd = -1;
        close(fd);
        return -e;
    }
    return 0;
}

/* The fallback: a POSIX timer on the thread's CPU-time clock. */
static int arm_timer(struct strobe__thread *t, uint64_t period_ns)
{
    struct strobe__sampler *s = &t->sampler;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_value.sival_ptr = (void *)sampler_cookie;
    sev._sigev_un._tid = (pid_t)t->tid;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &s->timer) != 0)
        return -errno;
    time_t sec = (time_t)(period_ns / 1000000000u);
    long ns = (long)(period_ns % 1000000000u);
    struct itimerspec its = {{sec, ns}, {sec, ns}};
    if (timer_settime(s->timer, 0, &its, NULL) != 0) {
        int e = errno;
        timer_delete(s->timer);
        return -e;
    }
    return 0;
}

void strobe__sample_start(void)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (!rt->cfg.sample_hz)
        return;
#ifdef STROBE_TSAN
    /* TSan holds an asynchronous signal back until the thread's next
     * interceptor call and runs the handler there, with the interrupted
     * moment's context long gone: a stack taken then says where the
     * program next called the C library, not where its time went. */
    strobe__say("STROBE_SAMPLE: this libstrobe is built with ThreadSanitizer, which delays signals: sampling is off",
                (char *)NULL);
    return;
#endif
    /* One cache per thread: no lock in the handler, and a signal landing
     * while the same thread fills the global cache cannot deadlock. */
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    rt->sample_metric_handle = (strobe_metric_t)STROBE_METRIC_INIT("strobe.samples", "samples");
    uint32_t id;
    if (strobe__metric_of_handle(&rt->sample_metric_handle, &id) != 0) {
        strobe__say("STROBE_SAMPLE: out of memory; sampling is off", (char *)NULL);
        return;
    }
    rt->sample_metric = id;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, &old) != 0) {
        strobe__say("STROBE_SAMPLE: cannot install the SIGPROF handler: ", strerror(errno),
                    "; sampling is off", (char *)NULL);
        return;
    }
    rt->prog_sigprof = old;
    /* Which source every thread will use: the kernel refuses perf events
     * for all threads or for none (perf_event_paranoid, seccomp). */
    int fd, rc = 0;
    if (rt->cfg.sample_source == STROBE_SAMPLE_TIMER)
        atomic_store_explicit(&rt->sample_use_timer, true, memory_order_relaxed);
    else if ((rc = open_event(strobe__gettid(), 1000000000u / rt->cfg.sample_hz, false, &fd)) == 0)
        close(fd);
    if (rc) {
        atomic_store_explicit(&rt->sample_use_timer, true, memory_order_relaxed);
        strobe__say("STROBE_SAMPLE: perf_event_open: ", strerror(-rc),
                    "; sampling with CPU-time timers, whose rate the kernel's tick limits", (char *)NULL);
    }
    pthread_mutex_lock(&rt->lock);
    strobe__sample_config_locked();
    pthread_mutex_unlock(&rt->lock);
    atomic_store_explicit(&rt->sampling, true, memory_order_release);
}

/* ---- the program's SIGPROF ----
 * While sampling, the SIGPROF handler is ours: the program's sigaction
 * and signal calls for SIGPROF set the disposition `forward` gives the
 * signals that are not our timers' (its own setitimer's). Not in a TSan
 * build: like malloc (malloc.c), these are called before TSan has set
 * itself up, and this file's instrumented code would crash there; a
 * program's own SIGPROF handler then replaces the sampler's. */
#ifndef STROBE_TSAN

STROBE_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (sig != SIGPROF || !atomic_load_explicit(&rt->sampling, memory_order_acquire))
        return ((__typeof__(rt->real_sigaction))strobe__real((void **)&rt->real_sigaction, "sigaction"))(
            sig, act, old);
    struct sigaction prev = rt->prog_sigprof;
    if (act)
        rt->prog_sigprof = *act;
    if (old)
        *old = prev;
    return 0;
}

STROBE_API void (*signal(int sig, void (*handler)(int)))(int)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (sig != SIGPROF || !atomic_load_explicit(&rt->sampling, memory_order_acquire))
        return ((__typeof__(rt->real_signal))strobe__real((void **)&rt->real_signal, "signal"))(sig, handler);
    void (*prev)(int) = rt->prog_sigprof.sa_flags & SA_SIGINFO ? SIG_DFL : rt->prog_sigprof.sa_handler;
    memset(&rt->prog_sigprof, 0, sizeof rt->prog_sigprof);
    rt->prog_sigprof.sa_handler = handler;
    rt->prog_sigprof.sa_flags = SA_RESTART; /* glibc's signal(): BSD semantics */
    return prev;
}
#endif

void strobe__sample_config_locked(void)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (rt->cfg.sample_hz && rt->sample_metric)
        strobe__defs_sample(rt->cfg.sample_hz,
                            atomic_load_explicit(&rt->sample_use_timer, memory_order_relaxed)
                                ? STROBE_SAMPLE_TIMER
                                : STROBE_SAMPLE_PERF);
}

void strobe__sample_arm(struct strobe__thread *t)
{
    struct strobe__runtime *rt = &strobe__rt;
    struct strobe__sampler *s = &t->sampler;
    s->armed = false;
    s->fd = -1;
    s->pending_len = 0;
    s->missed = 0;
    if (!atomic_load_explicit(&rt->sampling, memory_order_acquire))
        return;
    uint64_t period = 1000000000u / rt->cfg.sample_hz;
    int rc = atomic_load_explicit(&rt->sample_use_timer, memory_order_relaxed)
                 ? arm_timer(t, period)
                 : open_event(t->tid, period, true, &s->fd);
    if (rc) {
        char num[24];
        strobe__say("STROBE_SAMPLE: thread t", strobe__fmt_u64(num, t->index), ": ", strerror(-rc),
                    "; this thread is not sampled", (char *)NULL);
        return;
    }
    s->armed = true;
}

void strobe__sample_disarm(struct strobe__thread *t)
{
    struct strobe__sampler *s = &t->sampler;
    if (!s->armed)
        return;
    s->armed = false;
    if (s->fd >= 0) {
        int fd = s->fd;
        s->fd = event_fd = -1; /* first: a signal already on its way is then not ours to re-arm */
        atomic_signal_fence(memory_order_seq_cst);
        close(fd);
    } else {
        timer_delete(s->timer);
    }
}

void strobe__sample_abandon(struct strobe__thread *t)
{
    if (t->sampler.fd >= 0) {
        if (t->sampler.fd == event_fd) /* the forking thread's: the child's only one */
            event_fd = -1;
        close(t->sampler.fd);
    }
    t->sampler.fd = -1;
    t->sampler.armed = false;
}

void strobe__sample_flush(struct strobe__thread *t)
{
    struct strobe__sampler *s = &t->sampler;
    if (!s->pending_len)
        return;
    put(t, strobe__now(t), s->pending, s->pending_len, s->pending_weight, false);
    s->pending_len = 0;
}
