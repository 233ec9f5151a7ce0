/* SPDX-License-Identifier: MIT */
/*
 * strobe transactional memory: statistics and speculative execution.
 *
 * libstrobe-tm.so is a software transactional memory that implements the
 * GCC libitm ABI, so programs compiled with `gcc -fgnu-tm` run on it
 * unchanged (`strobe run --tm`, or link with -lstrobe-tm). This header is
 * its own API, in the spirit of IBM's Blue Gene/Q TM/SE monitoring API
 * (tm_get_stats, tm_get_all_stats, se_get_all_stats); <strobe/bgq_tm.h>
 * offers the BG/Q names themselves. docs/tm.md describes the design.
 *
 * Counting rules (the same in every report):
 *  - a *transaction* is one completed execution of an outermost atomic
 *    block (nested blocks are flattened into it), committed or cancelled
 *    by __transaction_cancel;
 *  - a *rollback* is one aborted attempt that was executed again;
 *  - a *serialization* is a transaction that ended up running alone
 *    (serial mode), counted once under its first cause: an irrevocable
 *    action (BG/Q "JMV": I/O, calls without a transactional clone,
 *    __transaction_relaxed), the maximum number of rollbacks
 *    (STROBE_TM_MAX_RETRIES), or another cause.
 * All functions are thread-safe and may be called inside or outside a
 * transaction; they never abort one.
 */
#ifndef STROBE_TM_H
#define STROBE_TM_H

#include <stddef.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Statistics of transactional execution; the first six fields are BG/Q's
 * TmReport_t in the same order. */
typedef struct strobe_tm_report {
    unsigned long hw_thread_id;          /* strobe TM thread number (0, 1, ...) */
    unsigned long total_transactions;    /* completed outermost transactions */
    unsigned long total_rollbacks;       /* aborted and retried attempts */
    unsigned long total_serialized_jmv;  /* serialized by an irrevocable action */
    unsigned long total_serialized_maxrb;/* serialized after max rollbacks */
    unsigned long total_serialized_other;/* serialized for another reason */
    unsigned long total_cancels;         /* ended by __transaction_cancel */
    unsigned long total_hw_commits;      /* of the transactions, committed by the
                                            hardware (Intel RTM), not by the STM */
} strobe_tm_report_t;

/* Statistics of speculative execution; the six fields are BG/Q's
 * SeReport_t in the same order. A chunk is "non-speculative" when its
 * committing attempt started while every earlier chunk had already
 * committed, so it could not be rolled back by ordering. */
typedef struct strobe_se_report {
    unsigned long total_nonspec_committed;
    unsigned long total_spec_committed;
    unsigned long total_rollbacks;
    unsigned long total_serialized_jmv;
    unsigned long total_serialized_maxrb;
    unsigned long total_serialized_other;
} strobe_se_report_t;

/* The calling thread's accumulated TM statistics. Returns 0. */
STROBE_API int strobe_tm_get_stats(strobe_tm_report_t *out);

/* Sum over every thread of the process, including threads that have
 * ended; hw_thread_id is the number of threads counted. Returns 0. */
STROBE_API int strobe_tm_get_all_stats(strobe_tm_report_t *out);

/* 1 when transactions run as hardware transactions first (Intel RTM,
 * STROBE_TM_HTM, docs/tm.md), 0 when all run on the STM. */
STROBE_API int strobe_tm_hardware(void);

/* Sum over every speculative loop and section run so far. Returns 0. */
STROBE_API int strobe_se_get_all_stats(strobe_se_report_t *out);

/* Monitoring level of the TM runtime, chosen by STROBE_TM_MONITOR at
 * start-up: the statistics above are always kept. */
enum strobe_tm_monitor {
    STROBE_TM_MONITOR_OFF = 0,      /* statistics API only */
    STROBE_TM_MONITOR_COUNTERS = 1, /* + per thread and atomic block counts, written at exit */
    STROBE_TM_MONITOR_STATS = 2,    /* + atomic blocks as regions: counts per call path in the profile */
    STROBE_TM_MONITOR_EVENTS = 3,   /* + TMbox-style event log in the trace */
};
STROBE_API enum strobe_tm_monitor strobe_tm_monitor_level(void);

/* ---- Speculative execution (thread-level speculation) ------------------
 * The body must be declared __attribute__((transaction_safe)) in a file
 * compiled with -fgnu-tm, so that GCC generates its transactional clone;
 * the runtime runs the clone. Chunks run in parallel as transactions and
 * commit in sequential order, so the result equals a sequential run. */

/* GCC marks the bodies' pointer types transaction_safe, so that a
 * transaction_safe function converts without a warning. */
#if defined(__GNUC__) && !defined(__clang__)
#define STROBE_TM_SAFE __attribute__((transaction_safe))
#else
#define STROBE_TM_SAFE
#endif

/* Runs body(i, arg) for i = begin, begin+1, ..., end-1, in chunks of
 * `chunk` iterations, on `threads` threads (0: STROBE_TM_SPEC_THREADS, or
 * the number of online CPUs). Returns 0, -EINVAL (chunk == 0, or body has
 * no transactional clone), or -errno when threads cannot be created (the
 * loop then runs sequentially on the caller and still completes). */
typedef void (*strobe_spec_body_fn)(long i, void *arg) STROBE_TM_SAFE;
STROBE_API int strobe_spec_for(long begin, long end, long chunk, strobe_spec_body_fn body, void *arg,
                               unsigned threads);

/* Runs the n sections fns[k](arg) speculatively in parallel, committing
 * in the order k = 0, 1, ..., n-1. Same rules and returns as
 * strobe_spec_for. */
typedef void (*strobe_spec_section_fn)(void *arg) STROBE_TM_SAFE;
STROBE_API int strobe_spec_sections(const strobe_spec_section_fn *fns, size_t n, void *arg, unsigned threads);

#ifdef __cplusplus
}
#endif

#endif /* STROBE_TM_H */
