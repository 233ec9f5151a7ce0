/* SPDX-License-Identifier: MIT */
/* Pausing and resuming recording (see pause.h). */
#define _GNU_SOURCE
#include "core/pause.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/defs.h"
#include "core/dump.h"
#include "core/hotpath.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "core/util.h"
#include "strobe/strobe.h"

/* The strobe_pause() nesting count lives in the gate's bits from
 * STROBE__GATE_API_ONE up. */
#define API_MAX (UINT32_MAX / STROBE__GATE_API_ONE)

enum gate_op { GATE_SET, GATE_CLEAR, GATE_API_PAUSE, GATE_API_RESUME };

/* The control thread's wake-up pipe (the toggle signal writes to it) and
 * the process whose thread reads it: a fork child's handler must not
 * wake its parent. */
static int wake_pipe[2] = {-1, -1};
static pid_t control_pid;

/* Applies op to the gate and writes a RECORDING record when recording
 * stops or resumes. Caller holds the lock (the records' order is the
 * changes' order); the runtime's state may change the OFF bit meanwhile,
 * hence the compare-and-swap. Returns -EINVAL for a resume without a
 * pause, -EOVERFLOW for a pause nested too deep, else 0. */
static int gate_change_locked(enum gate_op op, uint32_t bits, unsigned cause)
{
    _Atomic uint32_t *gate = &strobe__rt.gate;
    uint32_t old = atomic_load_explicit(gate, memory_order_relaxed), next;
    do {
        uint32_t api = old / STROBE__GATE_API_ONE;
        switch (op) {
        case GATE_SET: next = old | bits; break;
        case GATE_CLEAR: next = old & ~bits; break;
        case GATE_API_PAUSE:
            if (api == API_MAX - 1)
                return -EOVERFLOW;
            next = old + STROBE__GATE_API_ONE;
            break;
        default:
            if (api == 0)
                return -EINVAL;
            next = old - STROBE__GATE_API_ONE;
            break;
        }
    } while (!atomic_compare_exchange_weak_explicit(gate, &old, next, memory_order_relaxed,
                                                    memory_order_relaxed));
    bool was = (old & ~STROBE__GATE_OFF) == 0, now = (next & ~STROBE__GATE_OFF) == 0;
    if (was != now && !(next & STROBE__GATE_OFF))
        strobe__defs_recording(strobe__clock_read(strobe__rt.cfg.clock_kind),
                               now ? STROBE_RECORDING_RESUME : STROBE_RECORDING_STOP, cause);
    return 0;
}

static int gate_change(enum gate_op op, uint32_t bits, unsigned cause)
{
    pthread_mutex_lock(&strobe__rt.lock);
    int rc = gate_change_locked(op, bits, cause);
    pthread_mutex_unlock(&strobe__rt.lock);
    return rc;
}

/* ---- the toggle signal and the timer ---- */

/* The toggle signal's and the dump signal's handler: one byte, 't' or
 * 'd', to the control thread. */
static void on_signal(int sig)
{
    int saved = errno;
    if (getpid() == control_pid) {
        /* nonblocking: requests beyond the pipe's room while the thread is
         * busy are lost, not waited for in a signal handler */
        ssize_t w = write(wake_pipe[1], sig == strobe__rt.cfg.toggle_signal ? "t" : "d", 1);
        (void)w;
    }
    errno = saved;
}

static uint64_t ms_until(uint64_t deadline)
{
    uint64_t now = strobe__mono_ns();
    return deadline > now ? (deadline - now + 999999) / 1000000 : 0;
}

/* Resumes at `resume_at` (0: nothing to resume), stops at `stop_at` (0:
 * never), toggles on every byte the signal handler writes. */
static void *control(void *arg)
{
    (void)arg;
    /* this thread is the runtime's own: never measured */
    strobe__tls.state = STROBE__TLS_ENDED;
    const struct strobe__config *cfg = &strobe__rt.cfg;
    uint64_t start = strobe__mono_ns();
    uint64_t resume_at = cfg->delay_ns ? start + cfg->delay_ns : 0;
    uint64_t stop_at = cfg->duration_ns ? start + cfg->delay_ns + cfg->duration_ns : 0;
    for (;;) {
        uint64_t next = resume_at ? resume_at : stop_at;
        int timeout = next ? (int)(ms_until(next) < 3600000 ? ms_until(next) : 3600000) : -1;
        struct pollfd p = {.fd = wake_pipe[0], .events = POLLIN};
        int n = poll(&p, 1, timeout);
        if (n > 0 && (p.revents & POLLIN)) {
            char buf[64];
            ssize_t r = read(wake_pipe[0], buf, sizeof buf);
            for (ssize_t i = 0; i < r; i++) {
                if (buf[i] == 'd') {
                    int rc = strobe__flight_dump();
                    if (rc)
                        strobe__say("dump: ", strerror(-rc), (char *)NULL);
                    continue;
                }
                bool paused = atomic_load_explicit(&strobe__rt.gate, memory_order_relaxed) & STROBE__GATE_SIGNAL;
                gate_change(paused ? GATE_CLEAR : GATE_SET, STROBE__GATE_SIGNAL, STROBE_RECORDING_SIGNAL);
            }
        } else if (n < 0 && errno != EINTR) {
            return NULL;
        }
        uint64_t now = strobe__mono_ns();
        if (resume_at && now >= resume_at) {
            resume_at = 0;
            gate_change(GATE_CLEAR, STROBE__GATE_TIMER, STROBE_RECORDING_TIMER);
        } else if (!resume_at && stop_at && now >= stop_at) {
            stop_at = 0;
            gate_change(GATE_SET, STROBE__GATE_TIMER, STROBE_RECORDING_TIMER);
        }
        if (!resume_at && !stop_at && wake_pipe[0] < 0)
            return NULL;
    }
}

int strobe__pause_start(void)
{
    const struct strobe__config *cfg = &strobe__rt.cfg;
    if (cfg->delay_ns)
        gate_change(GATE_SET, STROBE__GATE_TIMER, STROBE_RECORDING_TIMER);
    if (!cfg->delay_ns && !cfg->duration_ns && !cfg->toggle_signal && !cfg->dump_signal)
        return 0;
    if (cfg->toggle_signal || cfg->dump_signal) {
        if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
            return -errno;
        control_pid = getpid();
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if ((cfg->toggle_signal && sigaction(cfg->toggle_signal, &sa, NULL) != 0) ||
            (cfg->dump_signal && sigaction(cfg->dump_signal, &sa, NULL) != 0))
            return -errno;
    }
    pthread_t th;
#ifdef STROBE_TSAN
    /* TSan must see the thread created (its interceptor, first in the
     * lookup order, sets it up); our wrapper behind it leaves alone a
     * thread created while the runtime works for the caller */
    struct strobe__thread *self = strobe__tls.t;
    if (self)
        strobe__busy_set(self, STROBE__BUSY_IN);
    int rc = pthread_create(&th, NULL, control, NULL);
    if (self)
        strobe__busy_clear(self, STROBE__BUSY_IN);
#else
    /* the real pthread_create: ours would measure the control thread */
    int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
        (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
    int rc = create ? create(&th, NULL, control, NULL) : ENOSYS;
#endif
    if (rc)
        return -rc;
    pthread_detach(th);
    return 0;
}

void strobe__pause_after_fork_child(void)
{
    /* the control thread is the parent's: the child keeps the recording
     * state it inherited, and its toggle signal does nothing */
    if (wake_pipe[0] >= 0) {
        close(wake_pipe[0]);
        close(wake_pipe[1]);
        wake_pipe[0] = wake_pipe[1] = -1;
    }
}

/* ---- the API ---- */

STROBE_API int strobe_pause(void)
{
    if (strobe__runtime_ensure() != STROBE__ACTIVE)
        return STROBE_ERR_DISABLED;
    return gate_change(GATE_API_PAUSE, 0, STROBE_RECORDING_API);
}

STROBE_API int strobe_resume(void)
{
    if (strobe__runtime_ensure() != STROBE__ACTIVE)
        return STROBE_ERR_DISABLED;
    return gate_change(GATE_API_RESUME, 0, STROBE_RECORDING_API);
}

STROBE_API int strobe_is_recording(void)
{
    return strobe__runtime_ensure() == STROBE__ACTIVE && !strobe__paused();
}
