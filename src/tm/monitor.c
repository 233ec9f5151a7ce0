/* SPDX-License-Identifier: MIT */
/*
 * The TM runtime's monitoring hooks (monitor.h), recorded through the
 * adapter interface of libstrobe.so (include/strobe/adapter.h).
 *
 * libstrobe-tm does not depend on libstrobe.so: a program linked with
 * -lstrobe-tm just runs on the STM. The measurement functions are weak
 * references, bound only when libstrobe.so is in the process (`strobe run`
 * preloads it, or the program links it); otherwise monitoring stays off.
 */
#include "tm/monitor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/format.h"
#include "strobe/adapter.h"
#include "strobe/strobe.h"

#pragma weak strobe_is_active
#pragma weak strobe_metric_add
#pragma weak strobe_code_region_enter
#pragma weak strobe_code_region_exit
#pragma weak strobe_code_region_rewind
#pragma weak strobe_event_record
#pragma weak strobe_thread_index
#pragma weak strobe_adapter_ticks

int strobe__tm_monitor;

static strobe_metric_t m_rollbacks = STROBE_METRIC_INIT("tm.rollbacks", "");
static strobe_metric_t m_ser_jmv = STROBE_METRIC_INIT("tm.serialized.irrevocable", "");
static strobe_metric_t m_ser_maxrb = STROBE_METRIC_INIT("tm.serialized.max_rollbacks", "");
static strobe_metric_t m_ser_other = STROBE_METRIC_INIT("tm.serialized.other", "");
static strobe_metric_t m_cancels = STROBE_METRIC_INIT("tm.cancels", "");

enum strobe_tm_monitor strobe_tm_monitor_level(void)
{
    return (enum strobe_tm_monitor)strobe__tm_monitor;
}

void strobe__tm_mon_init(void)
{
    const char *s = getenv("STROBE_TM_MONITOR");
    bool active = strobe_is_active != NULL && strobe_is_active();
    int level = active ? STROBE_TM_MONITOR_EVENTS : STROBE_TM_MONITOR_OFF;
    if (s != NULL && *s != '\0') {
        if (strcmp(s, "off") == 0)
            level = STROBE_TM_MONITOR_OFF;
        else if (strcmp(s, "stats") == 0)
            level = STROBE_TM_MONITOR_STATS;
        else if (strcmp(s, "events") == 0)
            level = STROBE_TM_MONITOR_EVENTS;
        else
            fprintf(stderr, "strobe-tm: STROBE_TM_MONITOR=%s: expected off, stats or events; using %s\n", s,
                    level ? "events" : "off");
    }
    if (level != STROBE_TM_MONITOR_OFF && !active) {
        fprintf(stderr, "strobe-tm: STROBE_TM_MONITOR=%s needs the program to run under `strobe run`; "
                        "monitoring is off\n",
                s);
        level = STROBE_TM_MONITOR_OFF;
    }
    strobe__tm_monitor = level;
}

void strobe__tm_mon_thread_begin(struct tm_tx *tx)
{
    uint32_t index;
    int32_t v = strobe__tm_monitor && strobe_thread_index(&index) == 0 ? (int32_t)index : -1;
    atomic_store_explicit(&tx->core_thread, v, memory_order_relaxed);
    /* tells the analysis that this thread's TM events are complete */
    if (strobe__tm_monitor == STROBE_TM_MONITOR_EVENTS)
        strobe__tm_mon_event_slow(tx, STROBE_TM_LOGGING, STROBE_TM_MONITOR_EVENTS, 0);
}

void strobe__tm_mon_thread_end(struct tm_tx *tx)
{
    atomic_store_explicit(&tx->core_thread, -1, memory_order_relaxed);
}

void strobe__tm_mon_begin_slow(struct tm_tx *tx, uintptr_t site)
{
    tx->site = site;
    strobe_code_region_enter(site, STROBE_REGION_TM_ATOMIC);
}

void strobe__tm_mon_event_slow(struct tm_tx *tx, unsigned kind, uint64_t a, uint64_t b)
{
    (void)tx;
    uint8_t payload[32], *q = payload;
    q = strobe_uleb_put(q, kind);
    q = strobe_uleb_put(q, a);
    if (kind == STROBE_TM_ABORT)
        q = strobe_uleb_put(q, b);
    strobe_event_record(STROBE_EXT_TM, payload, (size_t)(q - payload));
}

void strobe__tm_mon_try_lock_slow(struct tm_tx *tx)
{
    tx->try_ticks = strobe_adapter_ticks();
}

void strobe__tm_mon_locked_slow(struct tm_tx *tx)
{
    strobe__tm_mon_event_slow(tx, STROBE_TM_LOCKED, strobe_adapter_ticks() - tx->try_ticks, 0);
}

void strobe__tm_mon_abort_slow(struct tm_tx *tx, enum tm_abort_cause cause, int culprit)
{
    if (strobe__tm_monitor == STROBE_TM_MONITOR_EVENTS) {
        int32_t c = -1;
        if (culprit >= 0 && culprit < TM_MAX_THREADS) {
            struct tm_tx *o = atomic_load_explicit(&strobe__tm_rt.slots[culprit], memory_order_acquire);
            if (o != NULL)
                c = atomic_load_explicit(&o->core_thread, memory_order_relaxed);
        }
        strobe__tm_mon_event_slow(tx, STROBE_TM_ABORT, cause, (uint64_t)(c + 1));
    }
    /* Functions the aborted attempt had entered end here; the retry
     * enters them again under the same atomic block. */
    strobe_code_region_rewind(tx->site);
}

void strobe__tm_mon_end_slow(struct tm_tx *tx, bool cancelled)
{
    if (tx->retries > 0)
        strobe_metric_add(&m_rollbacks, tx->retries);
    if (tx->serial_cause != TM_SERIAL_NONE && tx->serial_cause != TM_SERIAL_ALONE)
        strobe_metric_add(tx->serial_cause == TM_SERIAL_JMV     ? &m_ser_jmv
                          : tx->serial_cause == TM_SERIAL_MAXRB ? &m_ser_maxrb
                                                                : &m_ser_other,
                          1);
    if (cancelled)
        strobe_metric_add(&m_cancels, 1);
    strobe_code_region_exit(tx->site, STROBE_REGION_TM_ATOMIC);
}
