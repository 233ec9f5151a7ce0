/* SPDX-License-Identifier: MIT */
/*
 * Hardware transactions (Intel RTM) in front of the STM: where the
 * processor has them, an outermost transaction first runs as a hardware
 * transaction on GCC's uninstrumented code, with no barrier at all; the
 * processor detects conflicts and undoes an aborted attempt. After a few
 * conflicts, or at once when the hardware cannot succeed (capacity, page
 * faults, system calls: aborts the processor says not to retry), when STM
 * transactions keep running (it waits a little for them first), or when
 * the block needs what only the STM has (a nested __transaction_cancel),
 * the transaction runs on the STM.
 *
 * The two kinds never run at the same time, because a hardware transaction
 * does not see the STM's locks, nor the STM the hardware's writes: a
 * hardware transaction reads rt.serial and rt.stm_running when it starts
 * and aborts if either is set; a serial or STM transaction writes one of
 * them when it starts, which aborts every hardware transaction that has
 * read it (the processor tracks the read). So STM transactions only ever
 * see hardware commits that happened before they began, and memory freed
 * by a hardware transaction can go back at once: any other hardware
 * transaction that read the block conflicts with the commit and aborts.
 *
 * Used at the monitoring levels off, counters and stats, which count
 * outside the hardware transaction (hardware attempts and their aborts by
 * cause; the call path is taken before it starts); the TMbox log of level
 * events describes STM attempts, so that level runs every one on the STM.
 * STROBE_TM_HTM=0 turns it off, and so does a ThreadSanitizer build: TSan
 * cannot see that the hardware makes a transaction's accesses atomic, and
 * reports them as races.
 */
#include <cpuid.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tm/monitor.h"
#include "tm/tx.h"

#define rt strobe__tm_rt

/* Hardware attempts that abort by conflict before the STM takes over. */
#define TM_HTM_TRIES 4
/* How long to wait for running STM transactions (a few of theirs) before
 * joining them: joining at once would keep two busy threads on the STM for
 * good, as their STM transactions would always overlap. */
#define TM_HTM_STM_SPINS 64

static bool tm_cpu_has_rtm(void)
{
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 11));
}

/* Microcode can disable TSX while CPUID still reports it: then every
 * transaction aborts at once. A few empty ones tell. */
__attribute__((target("rtm"))) static bool tm_rtm_works(void)
{
    for (int i = 0; i < 64; i++) {
        if (_xbegin() == _XBEGIN_STARTED) {
            _xend();
            return true;
        }
    }
    return false;
}

#if defined(__SANITIZE_THREAD__)
#define TM_HTM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TM_HTM_TSAN 1
#endif
#endif
#ifndef TM_HTM_TSAN
#define TM_HTM_TSAN 0
#endif

void strobe__tm_htm_init(void)
{
    if (TM_HTM_TSAN)
        return;
    const char *s = getenv("STROBE_TM_HTM");
    if (s != NULL && *s != '\0' && strcmp(s, "0") != 0 && strcmp(s, "1") != 0)
        fprintf(stderr, "strobe-tm: STROBE_TM_HTM=%s: expected 0 or 1; using 1\n", s);
    if (s != NULL && strcmp(s, "0") == 0)
        return;
    if (strobe__tm_monitor == STROBE_TM_MONITOR_EVENTS)
        return;
    rt.htm = tm_cpu_has_rtm() && tm_rtm_works();
}

__attribute__((target("rtm"))) void strobe__tm_htm_abort(enum tm_htm_abort why)
{
    /* _xabort takes a constant */
    switch (why) {
    case TM_HTM_BUSY:
        _xabort(TM_HTM_BUSY);
        break;
    case TM_HTM_CANCEL:
        _xabort(TM_HTM_CANCEL);
        break;
    case TM_HTM_IRREVOCABLE:
        _xabort(TM_HTM_IRREVOCABLE);
        break;
    case TM_HTM_RETRY:
        _xabort(TM_HTM_RETRY);
        break;
    }
    __builtin_unreachable();
}

__attribute__((target("rtm"))) void strobe__tm_htm_commit(void)
{
    _xend();
}

/* An aborted hardware attempt is a rollback like any other. */
static void tm_htm_rolled_back(struct tm_tx *tx, enum tm_abort_cause cause)
{
    tx->retries++;
    tm_stat_inc(tx, TM_STAT_ROLLBACKS);
    strobe__tm_mon_abort(tx, cause, -1);
}

/* Waits for a serial transaction to end, as an STM transaction would at
 * its start (tm_publish), and a little for the STM transactions; false if
 * those go on. */
static bool tm_htm_wait(void)
{
    tm_wait_serial();
    for (unsigned spins = 0; atomic_load_explicit(&rt.stm_running, memory_order_acquire) != 0; spins++) {
        if (spins == TM_HTM_STM_SPINS)
            return false;
        __builtin_ia32_pause();
    }
    return true;
}

__attribute__((target("rtm"))) uint32_t strobe__tm_htm_attempt(struct tm_tx *tx, uint32_t props)
{
    for (unsigned tries = 0; tries < TM_HTM_TRIES; tries++) {
        if (!tm_htm_wait())
            return 0;
        unsigned st = _xbegin();
        if (st == _XBEGIN_STARTED) {
            /* subscribe to both: see the top of this file */
            if (atomic_load_explicit(&rt.serial, memory_order_relaxed) != 0 ||
                atomic_load_explicit(&rt.stm_running, memory_order_relaxed) != 0)
                _xabort(TM_HTM_BUSY);
            tx->mode = TM_MODE_HTM;
            return (props & ITM_PR_UNINSTRUMENTED_CODE) ? ITM_A_RUN_UNINSTRUMENTED_CODE
                                                        : ITM_A_RUN_INSTRUMENTED_CODE;
        }
        /* Aborted: back here with registers and memory as at _xbegin. */
        if (st & _XABORT_EXPLICIT) {
            switch (_XABORT_CODE(st)) {
            case TM_HTM_BUSY: /* another kind started in between: check again */
                tm_htm_rolled_back(tx, TM_ABORT_OTHER);
                break;
            case TM_HTM_CANCEL: /* a nested block that may cancel: the STM can */
                tm_htm_rolled_back(tx, TM_ABORT_OTHER);
                return 0;
            case TM_HTM_IRREVOCABLE:
                tm_htm_rolled_back(tx, TM_ABORT_IRREVOCABLE);
                tx->next_serial = TM_SERIAL_JMV;
                return 0;
            default: /* TM_HTM_RETRY: a user retry */
                tm_htm_rolled_back(tx, TM_ABORT_EXPLICIT);
                break;
            }
        } else if (st & _XABORT_CAPACITY) {
            tm_htm_rolled_back(tx, TM_ABORT_HW_CAPACITY);
            return 0;
        } else if (st & _XABORT_CONFLICT) {
            tm_htm_rolled_back(tx, TM_ABORT_HW_CONFLICT);
        } else {
            /* an interrupt, a system call, a page fault (which the
             * processor does not serve inside a transaction, so that every
             * retry meets it again)...: retry only if the processor says
             * it may succeed */
            tm_htm_rolled_back(tx, TM_ABORT_OTHER);
            if (!(st & _XABORT_RETRY))
                return 0;
        }
    }
    return 0;
}
