/* SPDX-License-Identifier: MIT */
/*
 * Entry points into the runtime: the -finstrument-functions hooks
 * (__cyg_profile_func_enter/exit), the public annotation and metric API
 * (include/strobe/strobe.h), and their out-of-line slow paths.
 *
 * Fast path of every entry point: TLS pointer, one or two loads to check
 * for anything unusual, then the inline recorder of hotpath.h. Slow paths
 * sort out the unusual case (thread not registered, function or handle not
 * registered, re-entrancy, full stack, mismatched exit) and then use the
 * same recorder.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "core/defs.h"
#include "core/hotpath.h"
#include "core/profile.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "core/util.h"
#include "strobe/adapter.h"
#include "strobe/strobe.h"

/* An event arriving while the runtime works for this thread (a signal
 * handler interrupted it): skipped and counted, see thread.h. Returns true
 * when the caller must stop. */
static bool reentered(struct strobe__thread *t)
{
    if (!(__atomic_load_n(&t->busy, __ATOMIC_RELAXED) & STROBE__BUSY_IN))
        return false;
    if (strobe__active())
        strobe__count_dropped(t, 1);
    return true;
}

/* The calling thread, with *rc = 0, if an event of it can be recorded
 * now; otherwise NULL and *rc = 0 (a re-entrant event, skipped and
 * counted) or STROBE_ERR_DISABLED. For the slow paths of the API. */
static struct strobe__thread *recording_thread(int *rc)
{
    struct strobe__thread *t = strobe__thread_current();
    *rc = STROBE_ERR_DISABLED;
    if (!t)
        return NULL;
    if (reentered(t)) {
        *rc = 0;
        return NULL;
    }
    if (!strobe__active())
        return NULL;
    *rc = 0;
    return t;
}

/* The innermost frame of key, or t->stack (the root) when none is open. */
static struct strobe__frame *find_frame(struct strobe__thread *t, uintptr_t key)
{
    struct strobe__frame *f = t->sp - 1;
    while (f > t->stack && f->key != key)
        f--;
    return f;
}

/* The general recorder behind the fast paths of hotpath.h: any clock,
 * chunk switches and drops, new profile children. Frame f == t->sp has
 * room. Called with STROBE__BUSY_IN set. */
static void enter_general(struct strobe__thread *t, struct strobe__frame *f, uintptr_t key, uint32_t id)
{
    uint64_t now = strobe__clock_read(strobe__rt.cfg.clock_kind);
    f->key = key;
    f->start = now;
    f->region = id;
    if (t->mode & STROBE__MODE_TRACE) {
        uint8_t *p = strobe__trace_room(t);
        if (p) {
            uint64_t d = strobe__take_delta(t, now);
            bool same = id == t->last_region;
            t->pos = strobe__put_event(p, (same ? STROBE_EV_ENTER_SAME : STROBE_EV_ENTER) << 6, d, !same, id);
            t->last_region = id;
        }
        strobe__count_enter_exit(t, p != NULL);
    }
    if (t->mode & STROBE__MODE_PROFILE) {
        struct strobe_prof_node *c = strobe__prof_child(t, f[-1].node, id);
        c->visits++;
        f->node = c;
    }
    t->sp = f + 1;
}

/* Leaves the innermost frame f == t->sp - 1 (see enter_general). */
static void exit_general(struct strobe__thread *t, struct strobe__frame *f, uint64_t now)
{
    if (t->mode & STROBE__MODE_TRACE) {
        uint8_t *p = strobe__trace_room(t);
        if (p)
            t->pos = strobe__put_event(p, STROBE_EV_EXIT << 6, strobe__take_delta(t, now), false, 0);
        strobe__count_enter_exit(t, p != NULL);
    }
    if (t->mode & STROBE__MODE_PROFILE)
        strobe__prof_leave(f->node, f->start, now);
    t->sp = f;
}

/* Leaves, at the current time, every frame above f, which stays open.
 * Called with STROBE__BUSY_IN set. */
static void leave_above(struct strobe__thread *t, struct strobe__frame *f)
{
    /* frames lost beyond the depth limit all lie above f */
    if (t->busy & STROBE__BUSY_DEEP) {
        t->lost_depth = 0;
        strobe__busy_clear(t, STROBE__BUSY_DEEP);
    }
    uint64_t now = strobe__clock_read(strobe__rt.cfg.clock_kind);
    while (t->sp > f + 1)
        exit_general(t, t->sp - 1, now);
}

/* Enters with every check: frames beyond the depth limit are not pushed
 * but counted (lost_depth); their exits then pair with them. Called with
 * STROBE__BUSY_IN set. */
static void enter_checked(struct strobe__thread *t, uintptr_t key, uint32_t id)
{
    if (STROBE_UNLIKELY(t->busy & STROBE__BUSY_DEEP)) {
        t->lost_depth++;
        strobe__count_dropped(t, 1);
        return;
    }
    if (t->sp == t->stack_end && !strobe__stack_grow(t)) {
        t->lost_depth = 1;
        strobe__busy_set(t, STROBE__BUSY_DEEP);
        strobe__count_dropped(t, 1);
        strobe__prof_overflow(t);
        return;
    }
    enter_general(t, t->sp, key, id);
}

/* Leaves the frame of `key`. When it is not the innermost one (longjmp,
 * an exception unwinding through uninstrumented code), the frames above it
 * are left first, at the same time; when it is not on the stack at all
 * the exit is ignored and counted in strobe__rt.unmatched_exits. Called
 * with STROBE__BUSY_IN set. */
static void exit_checked(struct strobe__thread *t, uintptr_t key)
{
    if (STROBE_UNLIKELY(t->busy & STROBE__BUSY_DEEP)) {
        if (--t->lost_depth == 0)
            strobe__busy_clear(t, STROBE__BUSY_DEEP);
        strobe__count_dropped(t, 1);
        return;
    }
    struct strobe__frame *f = find_frame(t, key);
    if (f == t->stack) {
        atomic_fetch_add_explicit(&strobe__rt.unmatched_exits, 1, memory_order_relaxed);
        return;
    }
    uint64_t now = strobe__clock_read(strobe__rt.cfg.clock_kind);
    while (t->sp > f)
        exit_general(t, t->sp - 1, now);
}

/* Region id of the code at fn for this thread, through the cache. false
 * on failure. */
static bool code_id(struct strobe__thread *t, uintptr_t fn, unsigned kind, uint32_t *id)
{
    struct strobe__cache_entry *e = &t->cache[strobe__cache_slot(fn)];
    if (e->addr == fn) {
        *id = e->id;
        return true;
    }
    if (strobe__region_of_code(fn, kind, id) != 0)
        return false;
    e->id = *id;
    e->addr = fn;
    return true;
}

/* ---- -finstrument-functions ---- */

void strobe__code_enter_slow(struct strobe__thread *t, uintptr_t fn, unsigned kind)
{
    if (reentered(t) || !strobe__active())
        return;
    strobe__busy_set(t, STROBE__BUSY_IN);
    uint32_t id;
    if (code_id(t, fn, kind, &id) && id != 0)
        enter_checked(t, fn, id);
    strobe__busy_clear(t, STROBE__BUSY_IN);
}

void strobe__code_exit_slow(struct strobe__thread *t, uintptr_t fn, unsigned kind)
{
    if (reentered(t) || !strobe__active())
        return;
    strobe__busy_set(t, STROBE__BUSY_IN);
    uint32_t id;
    if (code_id(t, fn, kind, &id) && id != 0)
        exit_checked(t, fn);
    strobe__busy_clear(t, STROBE__BUSY_IN);
}

static STROBE_COLD void code_enter_unregistered(uintptr_t fn, unsigned kind)
{
    struct strobe__thread *t = strobe__thread_current();
    if (t)
        strobe__code_enter_slow(t, fn, kind);
}

STROBE_API void __cyg_profile_func_enter(void *fn, void *call_site)
{
    (void)call_site;
    struct strobe__thread *t = strobe__tls.t;
    if (STROBE_UNLIKELY(t == NULL)) {
        code_enter_unregistered((uintptr_t)fn, STROBE_REGION_FUNCTION);
        return;
    }
    strobe__code_enter(t, (uintptr_t)fn, STROBE_REGION_FUNCTION);
}

STROBE_API void __cyg_profile_func_exit(void *fn, void *call_site)
{
    (void)call_site;
    struct strobe__thread *t = strobe__tls.t;
    /* A thread that has not entered anything has nothing to leave. */
    if (STROBE_UNLIKELY(t == NULL))
        return;
    strobe__code_exit(t, (uintptr_t)fn, STROBE_REGION_FUNCTION);
}

/* ---- annotations ---- */

/* true for ids that need the slow path: 0 (unregistered) and excluded. */
static inline bool handle_unusual(uint32_t id)
{
    return id - 1 >= STROBE__REGION_EXCLUDED - 1;
}

static STROBE_COLD int region_enter_slow(strobe_region_t *r)
{
    if (!r)
        return -EINVAL;
    int rc;
    struct strobe__thread *t = recording_thread(&rc);
    if (!t)
        return rc;
    strobe__busy_set(t, STROBE__BUSY_IN);
    uint32_t id = __atomic_load_n(&r->id, __ATOMIC_ACQUIRE);
    if (id == 0)
        rc = strobe__region_of_handle(r, STROBE_REGION_USER, &id);
    if (rc == 0 && id != STROBE__REGION_EXCLUDED)
        enter_checked(t, (uintptr_t)r, id);
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return rc;
}

STROBE_API int strobe_region_enter(strobe_region_t *region)
{
    struct strobe__thread *t = strobe__tls.t;
    if (STROBE_UNLIKELY(t == NULL) || STROBE_UNLIKELY(region == NULL) || !strobe__event_ok(t))
        return region_enter_slow(region);
    /* Acquire pairs with the release store that published the id
     * (registry.c). */
    uint32_t id = __atomic_load_n(&region->id, __ATOMIC_ACQUIRE);
    if (STROBE_UNLIKELY(handle_unusual(id)))
        return region_enter_slow(region);
    strobe__busy_enter(t);
    bool done = strobe__enter_fast(t, (uintptr_t)region, id);
    strobe__busy_leave(t);
    return STROBE_LIKELY(done) ? 0 : region_enter_slow(region);
}

static STROBE_COLD int region_exit_slow(strobe_region_t *r)
{
    if (!r)
        return -EINVAL;
    int rc;
    struct strobe__thread *t = recording_thread(&rc);
    if (!t)
        return rc;
    uint32_t id = __atomic_load_n(&r->id, __ATOMIC_ACQUIRE);
    if (id == 0) { /* never entered in this process */
        atomic_fetch_add_explicit(&strobe__rt.unmatched_exits, 1, memory_order_relaxed);
        return 0;
    }
    if (id == STROBE__REGION_EXCLUDED)
        return 0;
    strobe__busy_set(t, STROBE__BUSY_IN);
    exit_checked(t, (uintptr_t)r);
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return 0;
}

STROBE_API int strobe_region_exit(strobe_region_t *region)
{
    struct strobe__thread *t = strobe__tls.t;
    if (STROBE_UNLIKELY(t == NULL) || STROBE_UNLIKELY(region == NULL) || !strobe__event_ok(t))
        return region_exit_slow(region);
    strobe__busy_enter(t);
    bool done = strobe__exit_fast(t, (uintptr_t)region);
    strobe__busy_leave(t);
    return STROBE_LIKELY(done) ? 0 : region_exit_slow(region);
}

/* ---- metrics ---- */

/* Records one sample: a METRIC record in the trace, count/sum/min/max on
 * the innermost open call path in the profile. Called with
 * STROBE__BUSY_IN set. */
static STROBE_NOINLINE void record_metric(struct strobe__thread *t, uint32_t id, int64_t value)
{
    uint64_t now = strobe__now(t);
    if (t->mode & STROBE__MODE_TRACE) {
        uint8_t payload[20], *q = payload;
        q = strobe_uleb_put(q, id);
        q = strobe_uleb_put(q, strobe_zigzag(value));
        strobe__ext_record(t, STROBE_EXT_METRIC, now, payload, (size_t)(q - payload));
    }
    if (t->mode & STROBE__MODE_PROFILE)
        strobe__prof_metric(t, t->sp[-1].node, id, value);
}

/* The id of a metric handle, registered on first use. Called with
 * STROBE__BUSY_IN set. */
static int metric_id(strobe_metric_t *m, uint32_t *id)
{
    *id = __atomic_load_n(&m->id, __ATOMIC_ACQUIRE); /* pairs as for regions */
    return *id != 0 ? 0 : strobe__metric_of_handle(m, id);
}

static STROBE_COLD int metric_add_slow(strobe_metric_t *m, int64_t value)
{
    if (!m)
        return -EINVAL;
    int rc;
    struct strobe__thread *t = recording_thread(&rc);
    if (!t)
        return rc;
    strobe__busy_set(t, STROBE__BUSY_IN);
    uint32_t id;
    rc = metric_id(m, &id);
    if (rc == 0)
        record_metric(t, id, value);
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return rc;
}

STROBE_API int strobe_metric_add(strobe_metric_t *metric, int64_t value)
{
    struct strobe__thread *t = strobe__tls.t;
    if (STROBE_UNLIKELY(t == NULL) || STROBE_UNLIKELY(metric == NULL))
        return metric_add_slow(metric, value);
    uint32_t id = __atomic_load_n(&metric->id, __ATOMIC_ACQUIRE); /* pairs as for regions */
    if (STROBE_UNLIKELY(id == 0) || !strobe__event_ok(t))
        return metric_add_slow(metric, value);
    strobe__busy_enter(t);
    record_metric(t, id, value);
    strobe__busy_leave(t);
    return 0;
}

/* ---- adapters (include/strobe/adapter.h) ---- */

STROBE_API int strobe_region_define(strobe_region_t *region, unsigned kind)
{
    /* a kind of its own name: not one resolved from a code address only */
    if (!region || kind > STROBE_REGION_KIND_MAX || kind == STROBE_REGION_FUNCTION || kind == STROBE_REGION_MPI)
        return -EINVAL;
    if (__atomic_load_n(&region->id, __ATOMIC_ACQUIRE) != 0)
        return 0;
    int rc;
    struct strobe__thread *t = recording_thread(&rc);
    if (!t)
        return rc;
    uint32_t id;
    strobe__busy_set(t, STROBE__BUSY_IN);
    rc = strobe__region_of_handle(region, kind, &id);
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return rc;
}

static bool adapter_kind_ok(unsigned kind)
{
    return strobe_region_kind_is_code(kind);
}

/* The key of a code region in the runtime's tables and frames: its
 * address, which an OpenMP construct shares with others (a parallel
 * region and its implicit tasks begin at one call), so their kind goes
 * into the bits above any user-space address (registry.h). */
static uintptr_t code_key(uintptr_t addr, unsigned kind)
{
    return kind >= STROBE_REGION_OMP_PARALLEL ? addr | (uintptr_t)kind << STROBE__CODE_KIND_SHIFT : addr;
}

STROBE_API int strobe_code_region_enter(uintptr_t addr, unsigned kind)
{
    if (!adapter_kind_ok(kind))
        return -EINVAL;
    addr = code_key(addr, kind);
    struct strobe__thread *t = strobe__tls.t;
    if (STROBE_UNLIKELY(t == NULL)) {
        code_enter_unregistered(addr, kind);
        return 0;
    }
    strobe__code_enter(t, addr, kind);
    return 0;
}

STROBE_API int strobe_code_region_exit(uintptr_t addr, unsigned kind)
{
    if (!adapter_kind_ok(kind))
        return -EINVAL;
    addr = code_key(addr, kind);
    struct strobe__thread *t = strobe__tls.t;
    if (STROBE_LIKELY(t != NULL))
        strobe__code_exit(t, addr, kind);
    return 0;
}

STROBE_API int strobe_code_region_rewind(uintptr_t addr)
{
    int rc;
    struct strobe__thread *t = recording_thread(&rc);
    if (!t)
        return rc;
    strobe__busy_set(t, STROBE__BUSY_IN);
    rc = -ENOENT;
    struct strobe__frame *f = find_frame(t, addr);
    if (f > t->stack) {
        leave_above(t, f);
        rc = 0;
    }
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return rc;
}

/* ---- adapters: counts per call path ---- */

STROBE_API uint64_t strobe_adapter_path(void)
{
    struct strobe__thread *t = strobe__tls.t;
    if (STROBE_UNLIKELY(t == NULL) && (t = strobe__thread_current()) == NULL)
        return 0;
    if (!(t->mode & STROBE__MODE_PROFILE) || t->sp[-1].node == &t->overflow_node)
        return 0;
    /* depth >= 1 (the root sentinel), so the handle is never 0 */
    return (uint64_t)(t->sp - t->stack) << 32 | (uint64_t)(t->sp[-1].node - t->slots);
}

STROBE_API int strobe_adapter_rewind(uint64_t path)
{
    size_t depth = (size_t)(path >> 32);
    if (depth == 0)
        return -EINVAL;
    int rc;
    struct strobe__thread *t = recording_thread(&rc);
    if (!t)
        return rc;
    strobe__busy_set(t, STROBE__BUSY_IN);
    if ((size_t)(t->sp - t->stack) > depth)
        leave_above(t, t->stack + depth - 1);
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return 0;
}

STROBE_API int strobe_code_region_count(uint64_t path, uintptr_t addr, unsigned kind, uint64_t visits,
                                        const struct strobe_metric_samples *metrics, size_t n)
{
    if (!adapter_kind_ok(kind) || path == 0 || (n > 0 && metrics == NULL))
        return -EINVAL;
    addr = code_key(addr, kind);
    int rc;
    struct strobe__thread *t = recording_thread(&rc);
    if (!t)
        return rc;
    if (!(t->mode & STROBE__MODE_PROFILE))
        return 0;
    uint32_t at = (uint32_t)path;
    if (at >= __atomic_load_n(&t->prof.hdr->slot_count, __ATOMIC_RELAXED) ||
        t->slots[at].tag != STROBE_SLOT_NODE)
        return -EINVAL;
    strobe__busy_set(t, STROBE__BUSY_IN);
    uint32_t id;
    if (code_id(t, addr, kind, &id) && id != 0) {
        struct strobe_prof_node *c = strobe__prof_child(t, &t->slots[at], id);
        c->visits += visits;
        for (size_t i = 0; i < n && rc == 0; i++) {
            uint32_t mid;
            rc = metrics[i].metric == NULL ? -EINVAL : metric_id(metrics[i].metric, &mid);
            if (rc == 0 && metrics[i].count > 0)
                strobe__prof_metric_samples(t, c, mid, metrics[i].count, metrics[i].sum, metrics[i].min,
                                            metrics[i].max);
        }
    }
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return rc;
}

STROBE_API int strobe_adapter_at_thread_end(void (*fn)(int process_exit))
{
    if (fn == NULL)
        return -EINVAL;
    struct strobe__runtime *rt = &strobe__rt;
    pthread_mutex_lock(&rt->lock);
    uint32_t n = atomic_load_explicit(&rt->nthread_end_hooks, memory_order_relaxed);
    bool room = n < STROBE__MAX_THREAD_END_HOOKS;
    if (room) {
        rt->thread_end_hooks[n] = fn;
        /* release: a thread that sees the count sees the function */
        atomic_store_explicit(&rt->nthread_end_hooks, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&rt->lock);
    return room ? 0 : -ENOSPC;
}

void strobe__run_thread_end_hooks(int process_exit)
{
    uint32_t n = atomic_load_explicit(&strobe__rt.nthread_end_hooks, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        strobe__rt.thread_end_hooks[i](process_exit);
}

/* ticks 0: now */
static STROBE_COLD int event_record_slow(unsigned type, const uint8_t *payload, size_t len, uint64_t ticks)
{
    int rc;
    struct strobe__thread *t = recording_thread(&rc);
    if (!t)
        return rc;
    if (t->mode & STROBE__MODE_TRACE) {
        strobe__busy_set(t, STROBE__BUSY_IN);
        rc = strobe__ext_record(t, type, ticks ? ticks : strobe__now(t), payload, len);
        strobe__busy_clear(t, STROBE__BUSY_IN);
    }
    return rc;
}

static inline int event_record(unsigned type, const uint8_t *payload, size_t len, uint64_t ticks)
{
    if (type < STROBE_EXT_TM || type > 63 || len > STROBE_MAX_EXT_PAYLOAD || (len > 0 && payload == NULL))
        return -EINVAL;
    struct strobe__thread *t = strobe__tls.t;
    if (STROBE_UNLIKELY(t == NULL) || !strobe__event_ok(t))
        return event_record_slow(type, payload, len, ticks);
    if (!(t->mode & STROBE__MODE_TRACE))
        return 0;
    strobe__busy_enter(t);
    int rc = strobe__ext_record(t, type, ticks ? ticks : strobe__now(t), payload, len);
    strobe__busy_leave(t);
    return rc;
}

STROBE_API int strobe_event_record(unsigned type, const uint8_t *payload, size_t len)
{
    return event_record(type, payload, len, 0);
}

STROBE_API int strobe_event_record_at(unsigned type, const uint8_t *payload, size_t len, uint64_t ticks)
{
    return ticks == 0 ? -EINVAL : event_record(type, payload, len, ticks);
}

STROBE_API int strobe_adapter_define(unsigned type, const uint8_t *payload, size_t len)
{
    if ((type != STROBE_DEF_MPI_COMM && type != STROBE_DEF_CLOCK_OFFSET) || len > STROBE__DEF_ADAPTER_MAX || (len > 0 && payload == NULL))
        return -EINVAL;
    if (!strobe__active())
        return STROBE_ERR_DISABLED;
    /* the lock orders it with the other defs writers; a thread's own
     * runtime work is never interrupted by it (not a signal handler) */
    pthread_mutex_lock(&strobe__rt.lock);
    strobe__defs_adapter(type, payload, len);
    pthread_mutex_unlock(&strobe__rt.lock);
    return 0;
}

STROBE_API uint64_t strobe_adapter_ticks(void)
{
    struct strobe__thread *t = strobe__tls.t;
    return t ? strobe__now(t) : 0;
}

STROBE_API int strobe_thread_index(uint32_t *index)
{
    struct strobe__thread *t = strobe__thread_current();
    if (!t)
        return STROBE_ERR_DISABLED;
    *index = t->index;
    return 0;
}

/* ---- control ---- */

STROBE_API int strobe_is_active(void)
{
    return strobe__runtime_ensure() == STROBE__ACTIVE;
}

STROBE_API const char *strobe_experiment_dir(void)
{
    int s = strobe__runtime_ensure();
    return s == STROBE__ACTIVE || s == STROBE__FINISHED ? strobe__rt.exp_dir : NULL;
}
