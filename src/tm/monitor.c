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

#include <pthread.h>
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
#pragma weak strobe_event_record_at
#pragma weak strobe_thread_index
#pragma weak strobe_adapter_ticks
#pragma weak strobe_adapter_path
#pragma weak strobe_adapter_rewind
#pragma weak strobe_code_region_count
#pragma weak strobe_adapter_at_thread_end

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

static const char *const tm_level_names[] = {"off", "counters", "stats", "events"};

static void tm_mon_forget_counts(void);
static void tm_mon_thread_end_hook(int process_exit);

void strobe__tm_mon_init(void)
{
    const char *s = getenv("STROBE_TM_MONITOR");
    bool active = strobe_is_active != NULL && strobe_is_active();
    int level = active ? STROBE_TM_MONITOR_COUNTERS : STROBE_TM_MONITOR_OFF;
    if (s != NULL && *s != '\0') {
        int found = -1;
        for (int i = 0; i < (int)(sizeof tm_level_names / sizeof tm_level_names[0]); i++)
            if (strcmp(s, tm_level_names[i]) == 0)
                found = i;
        if (found < 0)
            fprintf(stderr,
                    "strobe-tm: STROBE_TM_MONITOR=%s: expected off, counters, stats or events; using %s\n", s,
                    tm_level_names[level]);
        else
            level = found;
    }
    if (level != STROBE_TM_MONITOR_OFF && !active) {
        fprintf(stderr,
                "strobe-tm: STROBE_TM_MONITOR=%s needs the program to run under `strobe run`; "
                "monitoring is off\n",
                s);
        level = STROBE_TM_MONITOR_OFF;
    }
    if (level != STROBE_TM_MONITOR_OFF && strobe_adapter_at_thread_end(tm_mon_thread_end_hook) != 0) {
        fprintf(stderr, "strobe-tm: cannot register with libstrobe.so; TM monitoring is off\n");
        level = STROBE_TM_MONITOR_OFF;
    }
    if (level != STROBE_TM_MONITOR_OFF)
        pthread_atfork(NULL, NULL, tm_mon_forget_counts);
    strobe__tm_monitor = level;
}

/* ---- per-block counts (level counters and up) ---------------------------- */

static void tm_block_index_put(struct tm_block_counts **index, unsigned bits, struct tm_block_counts *b)
{
    size_t mask = ((size_t)1 << bits) - 1;
    size_t h = tm_hash(b->site, bits);
    while (index[h] != NULL)
        h = (h + 1) & mask;
    index[h] = b;
}

static __attribute__((noreturn, cold)) void tm_mon_oom(void)
{
    fprintf(stderr, "strobe-tm: out of memory for the atomic block counts\n");
    abort();
}

/* The calling thread's counts of the block at site, created on first use
 * (the inline hook has already missed its one-entry cache). */
struct tm_block_counts *strobe__tm_mon_block(struct tm_tx *tx, uintptr_t site)
{
    if (tx->block_index != NULL) {
        size_t mask = ((size_t)1 << tx->block_index_bits) - 1;
        for (size_t h = tm_hash(site, tx->block_index_bits); tx->block_index[h] != NULL; h = (h + 1) & mask)
            if (tx->block_index[h]->site == site)
                return tx->block_index[h];
    }
    if (2 * (tx->nblocks + 1) > ((size_t)1 << tx->block_index_bits)) {
        unsigned bits = tx->block_index_bits ? tx->block_index_bits + 1 : 4;
        struct tm_block_counts **index = calloc((size_t)1 << bits, sizeof *index);
        if (index == NULL)
            tm_mon_oom();
        for (struct tm_block_counts *b = atomic_load_explicit(&tx->blocks, memory_order_relaxed); b != NULL;
             b = atomic_load_explicit(&b->next, memory_order_relaxed))
            tm_block_index_put(index, bits, b);
        free(tx->block_index);
        tx->block_index = index;
        tx->block_index_bits = bits;
    }
    struct tm_block_counts *b = calloc(1, sizeof *b);
    if (b == NULL)
        tm_mon_oom();
    b->site = site;
    b->thread = atomic_load_explicit(&tx->core_thread, memory_order_relaxed);
    atomic_init(&b->next, atomic_load_explicit(&tx->blocks, memory_order_relaxed));
    /* release: the exit writer that sees b sees it initialised */
    atomic_store_explicit(&tx->blocks, b, memory_order_release);
    tm_block_index_put(tx->block_index, tx->block_index_bits, b);
    tx->nblocks++;
    return b;
}

/* Forgets the thread's table of counts per call path (level stats). */
static void tm_mon_drop_paths(struct tm_tx *tx)
{
    free(tx->paths);
    tx->paths = NULL;
    tx->paths_bits = 0;
    tx->npaths = 0;
    tx->path_counts = NULL;
}

/* Thread end: the thread's counts join those of ended threads (the
 * descriptor will serve another thread). */
static void tm_mon_retire_blocks(struct tm_tx *tx)
{
    struct tm_block_counts *first = atomic_load_explicit(&tx->blocks, memory_order_relaxed);
    if (first != NULL) {
        struct tm_block_counts *last = first;
        while (atomic_load_explicit(&last->next, memory_order_relaxed) != NULL)
            last = atomic_load_explicit(&last->next, memory_order_relaxed);
        pthread_mutex_lock(&strobe__tm_rt.reg_mutex);
        atomic_store_explicit(&last->next, strobe__tm_rt.retired_blocks, memory_order_relaxed);
        strobe__tm_rt.retired_blocks = first;
        atomic_store_explicit(&tx->blocks, NULL, memory_order_relaxed);
        pthread_mutex_unlock(&strobe__tm_rt.reg_mutex);
    }
    tm_mon_drop_paths(tx); /* not flushed: the thread was not measured */
    free(tx->block_index);
    tx->block_index = NULL;
    tx->block_index_bits = 0;
    tx->nblocks = 0;
    tx->block = NULL;
}

static void tm_mon_write_list(struct tm_block_counts *b)
{
    for (; b != NULL; b = atomic_load_explicit(&b->next, memory_order_acquire)) {
        uint64_t c[TM_BC_COUNT];
        for (int i = 0; i < TM_BC_COUNT; i++)
            c[i] = atomic_load_explicit(&b->c[i], memory_order_relaxed);
        if (b->thread < 0 || (c[TM_BC_TRANSACTIONS] == 0 && c[TM_BC_ROLLBACKS] == 0))
            continue;
        uint8_t payload[16 * 10], *q = payload;
        q = strobe_uleb_put(q, STROBE_TM_COUNTS);
        q = strobe_uleb_put(q, (uint64_t)b->thread);
        q = strobe_uleb_put(q, b->site);
        for (int i = 0; i < TM_BC_ABORTS; i++)
            q = strobe_uleb_put(q, c[i]);
        q = strobe_uleb_put(q, TM_BC_COUNT - TM_BC_ABORTS);
        for (int i = TM_BC_ABORTS; i < TM_BC_COUNT; i++)
            q = strobe_uleb_put(q, c[i]);
        strobe_event_record(STROBE_EXT_TM, payload, (size_t)(q - payload));
    }
}

/* Process exit: every thread's counts, ended threads' and those still
 * running (their counts so far), into the exiting thread's stream. */
static void tm_mon_write_counts(void)
{
    pthread_mutex_lock(&strobe__tm_rt.reg_mutex);
    tm_mon_write_list(strobe__tm_rt.retired_blocks);
    uint32_t n = atomic_load_explicit(&strobe__tm_rt.nslots, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct tm_tx *t = atomic_load_explicit(&strobe__tm_rt.slots[i], memory_order_acquire);
        if (t->in_use)
            tm_mon_write_list(atomic_load_explicit(&t->blocks, memory_order_acquire));
    }
    pthread_mutex_unlock(&strobe__tm_rt.reg_mutex);
}

static void tm_mon_zero_list(struct tm_block_counts *b)
{
    for (; b != NULL; b = atomic_load_explicit(&b->next, memory_order_relaxed))
        for (int i = 0; i < TM_BC_COUNT; i++)
            atomic_store_explicit(&b->c[i], 0, memory_order_relaxed);
}

/* A fork child is a process of its own: it reports only what it runs. */
static void tm_mon_forget_counts(void)
{
    tm_mon_zero_list(strobe__tm_rt.retired_blocks);
    uint32_t n = atomic_load_explicit(&strobe__tm_rt.nslots, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++)
        tm_mon_zero_list(
            atomic_load_explicit(&atomic_load_explicit(&strobe__tm_rt.slots[i], memory_order_relaxed)->blocks,
                                 memory_order_relaxed));
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
    if (strobe__tm_monitor)
        tm_mon_retire_blocks(tx);
    atomic_store_explicit(&tx->core_thread, -1, memory_order_relaxed);
}

/* ---- per call path counts (level stats) ----------------------------------
 * A transaction is cheaper than the two region events that would time it,
 * so at this level a block's transactions are counted per call path in the
 * thread's own table and added to its profile, as visits and metrics
 * without time, when its measurement ends (strobe_adapter_at_thread_end). */

static struct tm_path_counts *tm_path_slot(struct tm_path_counts *paths, unsigned bits, uint64_t path,
                                           uintptr_t site)
{
    size_t mask = ((size_t)1 << bits) - 1;
    size_t h = tm_hash(path ^ ((uint64_t)site << 17), bits);
    while (paths[h].path != 0 && (paths[h].path != path || paths[h].site != site))
        h = (h + 1) & mask;
    return &paths[h];
}

static struct tm_path_counts *tm_path_counts_of(struct tm_tx *tx, uint64_t path, uintptr_t site)
{
    if (tx->paths != NULL) {
        struct tm_path_counts *c = tm_path_slot(tx->paths, tx->paths_bits, path, site);
        if (c->path != 0)
            return c;
    }
    if (2 * (tx->npaths + 1) > ((size_t)1 << tx->paths_bits)) {
        unsigned bits = tx->paths_bits ? tx->paths_bits + 1 : 4;
        struct tm_path_counts *paths = calloc((size_t)1 << bits, sizeof *paths);
        if (paths == NULL)
            tm_mon_oom();
        for (size_t i = 0; tx->paths != NULL && i < ((size_t)1 << tx->paths_bits); i++)
            if (tx->paths[i].path != 0)
                *tm_path_slot(paths, bits, tx->paths[i].path, tx->paths[i].site) = tx->paths[i];
        free(tx->paths);
        tx->paths = paths;
        tx->paths_bits = bits;
    }
    struct tm_path_counts *c = tm_path_slot(tx->paths, tx->paths_bits, path, site);
    c->path = path;
    c->site = site;
    c->rollbacks_min = INT64_MAX;
    c->rollbacks_max = INT64_MIN;
    tx->npaths++;
    return c;
}

/* The calling thread's counts per call path into its profile. */
static void tm_mon_flush_paths(void)
{
    struct tm_tx *tx = strobe__tm_self;
    if (tx == NULL || tx->paths == NULL)
        return;
    for (size_t i = 0; i < ((size_t)1 << tx->paths_bits); i++) {
        const struct tm_path_counts *c = &tx->paths[i];
        if (c->path == 0)
            continue;
        struct strobe_metric_samples m[5];
        size_t n = 0;
        if (c->rollbacks_n > 0)
            m[n++] = (struct strobe_metric_samples){&m_rollbacks, c->rollbacks_n, c->rollbacks_sum,
                                                    c->rollbacks_min, c->rollbacks_max};
        strobe_metric_t *ser[3] = {&m_ser_jmv, &m_ser_maxrb, &m_ser_other};
        for (int k = 0; k < 3; k++)
            if (c->serialized[k] > 0)
                m[n++] =
                    (struct strobe_metric_samples){ser[k], c->serialized[k], (int64_t)c->serialized[k], 1, 1};
        if (c->cancels > 0)
            m[n++] = (struct strobe_metric_samples){&m_cancels, c->cancels, (int64_t)c->cancels, 1, 1};
        strobe_code_region_count(c->path, c->site, STROBE_REGION_TM_ATOMIC, c->visits, m, n);
    }
    tm_mon_drop_paths(tx);
}

void strobe__tm_mon_begin_slow(struct tm_tx *tx, uintptr_t site)
{
    tx->site = site;
    if (strobe__tm_monitor == STROBE_TM_MONITOR_EVENTS) {
        strobe_code_region_enter(site, STROBE_REGION_TM_ATOMIC);
        return;
    }
    uint64_t path = strobe_adapter_path();
    tx->path = path;
    if (path == 0)
        tx->path_counts = NULL;
    else if (tx->path_counts == NULL || tx->path_counts->path != path || tx->path_counts->site != site)
        tx->path_counts = tm_path_counts_of(tx, path, site);
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
    tx->locked_ticks = strobe_adapter_ticks();
}

void strobe__tm_mon_published_slow(struct tm_tx *tx)
{
    uint8_t payload[16], *q = payload;
    q = strobe_uleb_put(q, STROBE_TM_LOCKED);
    q = strobe_uleb_put(q, tx->locked_ticks - tx->try_ticks);
    strobe_event_record_at(STROBE_EXT_TM, payload, (size_t)(q - payload), tx->locked_ticks);
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
        /* Functions the aborted attempt had entered end here; the retry
         * enters them again under the same atomic block. */
        strobe_code_region_rewind(tx->site);
    } else if (tx->path != 0) {
        strobe_adapter_rewind(tx->path); /* likewise, under the same call path */
    }
}

void strobe__tm_mon_end_slow(struct tm_tx *tx, bool cancelled)
{
    if (strobe__tm_monitor == STROBE_TM_MONITOR_STATS) {
        struct tm_path_counts *c = tx->path_counts;
        if (c == NULL)
            return;
        c->visits++;
        if (tx->retries > 0) {
            int64_t r = tx->retries;
            c->rollbacks_n++;
            c->rollbacks_sum += r;
            c->rollbacks_min = r < c->rollbacks_min ? r : c->rollbacks_min;
            c->rollbacks_max = r > c->rollbacks_max ? r : c->rollbacks_max;
        }
        if (tx->serial_cause != TM_SERIAL_NONE && tx->serial_cause != TM_SERIAL_ALONE)
            c->serialized[tx->serial_cause - 1]++;
        if (cancelled)
            c->cancels++;
        return;
    }
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

/* libstrobe.so's last call on a measured thread: its per-path counts go
 * to its profile (stats); at process exit, every thread's block counts go
 * to the exiting thread's stream. */
static void tm_mon_thread_end_hook(int process_exit)
{
    if (strobe__tm_monitor == STROBE_TM_MONITOR_STATS)
        tm_mon_flush_paths();
    if (process_exit)
        tm_mon_write_counts();
}
