/* SPDX-License-Identifier: MIT */
/*
 * Monitoring of the TM runtime through strobe's measurement core
 * (libstrobe.so): the hooks the engine calls at each step of a
 * transaction. What they record depends on the level (STROBE_TM_MONITOR):
 *   off      nothing (the statistics API of tm.h works at every level);
 *   counters per thread and atomic block: transactions, rollbacks,
 *            serializations and cancels by cause, aborts by cause, counted
 *            in the STM's own per-thread state (no clock read, no event)
 *            and written at process exit as COUNTS records;
 *   stats    also each outermost transaction is a visit of a region
 *            "atomic block" named by its call site, with its rollbacks,
 *            serializations and cancels as metrics on that call path;
 *   events   also the TMbox-style log of every attempt in the thread's
 *            stream: retry start, commit phases, abort with cause and
 *            culprit thread, serialization, cancel (docs/formats/trace.md).
 *            The first attempt starts at the block's region ENTER and the
 *            last one ends at its EXIT, so a transaction that commits at
 *            its first attempt costs one record besides its region.
 * Each hook costs one predictable branch when monitoring is off.
 */
#ifndef STROBE_TM_MONITOR_H
#define STROBE_TM_MONITOR_H

#include "tm/tx.h"

TM_HIDDEN extern int strobe__tm_monitor; /* enum strobe_tm_monitor, set once at start-up */

TM_HIDDEN void strobe__tm_mon_init(void);
TM_HIDDEN void strobe__tm_mon_thread_begin(struct tm_tx *tx);
TM_HIDDEN void strobe__tm_mon_thread_end(struct tm_tx *tx);

TM_HIDDEN void strobe__tm_mon_begin_slow(struct tm_tx *tx, uintptr_t site);
TM_HIDDEN void strobe__tm_mon_event_slow(struct tm_tx *tx, unsigned kind, uint64_t a, uint64_t b);
TM_HIDDEN void strobe__tm_mon_abort_slow(struct tm_tx *tx, enum tm_abort_cause cause, int culprit);
TM_HIDDEN void strobe__tm_mon_end_slow(struct tm_tx *tx, bool cancelled);

TM_HIDDEN struct tm_block_counts *strobe__tm_mon_block(struct tm_tx *tx, uintptr_t site);

static inline void tm_mon_count(struct tm_tx *tx, enum tm_block_count which)
{
    /* single writer: a plain increment made visible to the exit writer */
    _Atomic uint64_t *c = &tx->block->c[which];
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

static inline void strobe__tm_mon_begin(struct tm_tx *tx, uintptr_t site)
{
    if (TM_LIKELY(!strobe__tm_monitor))
        return;
    if (tx->block == NULL || tx->block->site != site)
        tx->block = strobe__tm_mon_block(tx, site);
    if (strobe__tm_monitor >= STROBE_TM_MONITOR_STATS)
        strobe__tm_mon_begin_slow(tx, site);
}
static inline void strobe__tm_mon_attempt(struct tm_tx *tx)
{
    if (TM_UNLIKELY(strobe__tm_monitor == STROBE_TM_MONITOR_EVENTS) && tx->retries > 0)
        strobe__tm_mon_event_slow(tx, STROBE_TM_START, tx->retries, 0);
}
TM_HIDDEN void strobe__tm_mon_try_lock_slow(struct tm_tx *tx);
TM_HIDDEN void strobe__tm_mon_locked_slow(struct tm_tx *tx);
TM_HIDDEN void strobe__tm_mon_published_slow(struct tm_tx *tx);
static inline void strobe__tm_mon_try_lock(struct tm_tx *tx)
{
    if (TM_UNLIKELY(strobe__tm_monitor == STROBE_TM_MONITOR_EVENTS))
        strobe__tm_mon_try_lock_slow(tx);
}
/* locked: the commit time is taken and the reads are valid (the time is
 * noted); published: the locks are released, so the LOCKED record can be
 * written without keeping other transactions waiting for them. */
static inline void strobe__tm_mon_locked(struct tm_tx *tx)
{
    if (TM_UNLIKELY(strobe__tm_monitor == STROBE_TM_MONITOR_EVENTS))
        strobe__tm_mon_locked_slow(tx);
}
static inline void strobe__tm_mon_published(struct tm_tx *tx)
{
    if (TM_UNLIKELY(strobe__tm_monitor == STROBE_TM_MONITOR_EVENTS))
        strobe__tm_mon_published_slow(tx);
}
static inline void strobe__tm_mon_serialize(struct tm_tx *tx, enum tm_serial_cause cause)
{
    if (TM_LIKELY(!strobe__tm_monitor))
        return;
    tm_mon_count(tx, cause == TM_SERIAL_JMV     ? TM_BC_SER_JMV
                     : cause == TM_SERIAL_MAXRB ? TM_BC_SER_MAXRB
                                                : TM_BC_SER_OTHER);
    if (strobe__tm_monitor == STROBE_TM_MONITOR_EVENTS)
        strobe__tm_mon_event_slow(tx, STROBE_TM_SERIAL, cause, 0);
}
static inline void strobe__tm_mon_cancel(struct tm_tx *tx, bool outermost)
{
    if (TM_UNLIKELY(strobe__tm_monitor == STROBE_TM_MONITOR_EVENTS))
        strobe__tm_mon_event_slow(tx, STROBE_TM_CANCEL, outermost, 0);
}
static inline void strobe__tm_mon_abort(struct tm_tx *tx, enum tm_abort_cause cause, int culprit)
{
    if (TM_LIKELY(!strobe__tm_monitor))
        return;
    tm_mon_count(tx, TM_BC_ROLLBACKS);
    tm_mon_count(tx, (enum tm_block_count)(TM_BC_ABORTS + cause - 1));
    if (strobe__tm_monitor >= STROBE_TM_MONITOR_STATS)
        strobe__tm_mon_abort_slow(tx, cause, culprit);
}
static inline void strobe__tm_mon_end(struct tm_tx *tx, bool cancelled)
{
    if (TM_LIKELY(!strobe__tm_monitor))
        return;
    tm_mon_count(tx, TM_BC_TRANSACTIONS);
    if (cancelled)
        tm_mon_count(tx, TM_BC_CANCELS);
    if (strobe__tm_monitor >= STROBE_TM_MONITOR_STATS)
        strobe__tm_mon_end_slow(tx, cancelled);
}

#endif /* STROBE_TM_MONITOR_H */
