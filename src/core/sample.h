/* SPDX-License-Identifier: MIT */
/*
 * CPU-time sampling (`strobe run --sample[=HZ]`, STROBE_SAMPLE=HZ): every
 * measured thread gets a POSIX timer on its own CPU-time clock
 * (timer_create(CLOCK_THREAD_CPUTIME_ID), SIGEV_THREAD_ID) that sends it
 * SIGPROF every 1/HZ s of CPU time it uses. Such timers expire at the
 * kernel's tick only, so above the tick rate a sample carries the
 * expirations it stands for as its weight. With STROBE_SAMPLE_SOURCE=perf
 * a software perf event on the thread's user-mode CPU clock
 * (PERF_COUNT_SW_TASK_CLOCK, F_SETOWN_EX F_OWNER_TID) does it at the exact
 * rate, stopping until the handler re-arms it (PERF_EVENT_IOC_REFRESH);
 * its signal costs far more in a virtual machine (docs/performance.md has
 * the measurements behind the default), and where perf_event_open is
 * refused the timers take over. The handler walks the interrupted stack
 * with libunwind (unw_backtrace, per-thread cache) and appends a SAMPLE
 * record (format.h, STROBE_EXT_SAMPLE) to the thread's own stream, between
 * the ENTER/EXIT records of the instrumented regions open at the time,
 * and adds its weight to the innermost open region's profile node (metric
 * "strobe.samples": count = records, sum = weight), so profile-only runs
 * have the hybrid counts too.
 *
 * Re-entrancy: a signal landing while the runtime works for the thread
 * (busy flag set) or while its stream needs a chunk switch whose lock is
 * held cannot write: the sample is kept in a one-slot pending buffer and
 * written before the next one (or at thread end). A second such sample
 * while the slot is full is counted as missed, and every SAMPLE record
 * carries the misses before it (with the timer's overruns: signals the
 * thread had blocked), so a reader knows how many were lost; none is
 * dropped silently.
 *
 * Signals not sent by these timers (the program's own setitimer, kill)
 * go to the program's SIGPROF handler: the runtime interposes sigaction
 * and signal for SIGPROF and keeps the program's choice to itself.
 */
#ifndef STROBE_CORE_SAMPLE_H
#define STROBE_CORE_SAMPLE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "common/format.h"

/* Per-thread sampler state (in struct strobe__thread). */
struct strobe__sampler {
    int fd; /* the perf event, -1 = none (timer, or not armed) */
    timer_t timer;
    bool armed;              /* fd or timer is live */
    uint16_t pending_len;    /* 0 = no pending sample; written with the time of its writing */
    uint64_t missed;         /* periods lost since the last SAMPLE record */
    uint64_t pending_weight; /* the pending sample's weight */
    uint8_t pending[STROBE_MAX_EXT_PAYLOAD];
};

struct strobe__thread;

/* Start-up (lock not held, defs open): with cfg.sample_hz, registers the
 * metric, prepares libunwind and installs the SIGPROF handler. Says so in
 * one line and leaves sampling off when it cannot. */
void strobe__sample_start(void);

/* The SAMPLE defs record when sampling is on (caller holds the lock;
 * start-up and fork child). */
void strobe__sample_config_locked(void);

/* Arms the calling thread's sampler (thread attach, fork child). */
void strobe__sample_arm(struct strobe__thread *t);

/* Thread end: deletes the timer, so no more samples come. Then, with
 * STROBE__BUSY_IN set and the thread no longer current, writes the
 * pending sample if any. */
void strobe__sample_disarm(struct strobe__thread *t);
void strobe__sample_flush(struct strobe__thread *t);

/* Fork child: forgets the parent's sampler of t (its perf event counts a
 * thread of the parent; POSIX timers are not inherited) without a store
 * to anything shared. */
void strobe__sample_abandon(struct strobe__thread *t);

#endif
