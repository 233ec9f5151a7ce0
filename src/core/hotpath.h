/* SPDX-License-Identifier: MIT */
/*
 * The per-event hot path: one timestamp, then the trace record and/or the
 * profile update, on the calling thread's own state only. No locks, no
 * atomic read-modify-write, no calls (a leaf function: no register
 * spills): one bounds check on the stream, one on the frame stack. Every
 * unusual case (full chunk, unknown function, new call-tree child,
 * monotonic clock, re-entrancy) is detected before anything is written and
 * handed whole to an out-of-line slow path (api.c).
 *
 * Encoding (format.h): b0 = kk c ddddd. In a tight loop the delta since the
 * previous record is tens of ticks, so ENTER_SAME/EXIT take 2 bytes and an
 * ENTER of a region id < 128 takes 3.
 */
#ifndef STROBE_CORE_HOTPATH_H
#define STROBE_CORE_HOTPATH_H

#include <stdatomic.h>

#include "common/format.h"
#include "core/clock.h"
#include "core/profile.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "core/util.h"

STROBE_HOT_INLINE uint64_t strobe__now(const struct strobe__thread *t)
{
#if STROBE_HAVE_TSC
    if (STROBE_LIKELY(!(t->mode & STROBE__MODE_MONO)))
        return __rdtsc();
#endif
    return strobe__mono_ns();
}

/* true when an event may take the fast path: runtime active and
 * recording, thread not inside the runtime. One relaxed load of the global
 * gate: it pairs with nothing, a thread seeing FINISHED or a pause one
 * event late is harmless. */
STROBE_HOT_INLINE bool strobe__event_ok(const struct strobe__thread *t)
{
    return STROBE_LIKELY(__atomic_load_n(&t->busy, __ATOMIC_RELAXED) == 0) &&
           STROBE_LIKELY(atomic_load_explicit(&strobe__rt.gate, memory_order_relaxed) == 0);
}

/* The busy flag is read by this thread (and by signal handlers running on
 * it), and once by the thread that ends the process (exit summary): the
 * stores that clear it are releases, so that reader, acquiring it clear,
 * sees the event's stores (a plain move on x86); the signal fences keep
 * the compiler from moving the event's stores outside. */
STROBE_HOT_INLINE void strobe__busy_set(struct strobe__thread *t, uint32_t bits)
{
    __atomic_store_n(&t->busy, __atomic_load_n(&t->busy, __ATOMIC_RELAXED) | bits, __ATOMIC_RELAXED);
    atomic_signal_fence(memory_order_seq_cst);
}

STROBE_HOT_INLINE void strobe__busy_clear(struct strobe__thread *t, uint32_t bits)
{
    atomic_signal_fence(memory_order_seq_cst);
    __atomic_store_n(&t->busy, __atomic_load_n(&t->busy, __ATOMIC_RELAXED) & ~bits, __ATOMIC_RELEASE);
}

/* Hot-path variants for when busy is known to be 0. */
STROBE_HOT_INLINE void strobe__busy_enter(struct strobe__thread *t)
{
    __atomic_store_n(&t->busy, STROBE__BUSY_IN, __ATOMIC_RELAXED);
    atomic_signal_fence(memory_order_seq_cst);
}

STROBE_HOT_INLINE void strobe__busy_leave(struct strobe__thread *t)
{
    atomic_signal_fence(memory_order_seq_cst);
    __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}

/* ---- paused recording (pause.h): a region hook's whole work is one
 * counter of the measured frames entered since the pause (a function the
 * filter excludes is not one), so that their exits are told from those of
 * frames entered before it, which are recorded. ---- */

/* Whether an event of t may take the paused path: recording paused, t not
 * inside the runtime (BUSY_HIDDEN only says frames are hidden). */
STROBE_HOT_INLINE bool strobe__paused_ok(const struct strobe__thread *t)
{
    return (__atomic_load_n(&t->busy, __ATOMIC_RELAXED) & ~STROBE__BUSY_HIDDEN) == 0 && strobe__paused();
}

/* fn's function-cache entry when t may take the paused path and the
 * cache knows fn; NULL when the slow path must see the event. */
STROBE_HOT_INLINE const struct strobe__cache_entry *strobe__paused_entry(const struct strobe__thread *t, uintptr_t fn)
{
    if (STROBE_UNLIKELY(!strobe__paused_ok(t)))
        return NULL;
    const struct strobe__cache_entry *e = &t->cache[strobe__cache_slot(fn)];
    return STROBE_LIKELY(e->addr == fn) ? e : NULL;
}

/* An enter of the code at fn while paused: counted, nothing recorded.
 * BUSY_HIDDEN sends the thread's events to the slow paths once recording
 * resumes, until the hidden frames are left (api.c). false (nothing
 * changed) when the slow path must see it. */
STROBE_HOT_INLINE bool strobe__paused_enter(struct strobe__thread *t, uintptr_t fn)
{
    const struct strobe__cache_entry *e = strobe__paused_entry(t, fn);
    if (!e)
        return false;
    if (e->id != 0) {
        t->hidden++;
        __atomic_store_n(&t->busy, STROBE__BUSY_HIDDEN, __ATOMIC_RELAXED);
    }
    return true;
}

/* An exit while paused of a frame entered while paused (or of a function
 * the filter excludes); false (nothing changed) for any other exit, which
 * the slow path records: a frame entered before the pause is left as
 * recorded. */
STROBE_HOT_INLINE bool strobe__paused_exit(struct strobe__thread *t, uintptr_t fn)
{
    const struct strobe__cache_entry *e = strobe__paused_entry(t, fn);
    if (!e || (e->id != 0 && STROBE_UNLIKELY(t->hidden == 0)))
        return false;
    if (e->id != 0)
        t->hidden--;
    return true;
}

/* Encodes a record whose first byte is kind_bits | c | ddddd at p: the
 * delta's continuation (if d >= 32) and, for ENTER, the region id follow.
 * b0 is stored last, after a compiler barrier: a process killed in the
 * middle leaves a zero byte (end of data for a reader), never a record
 * with a torn tail. Returns the end of the record. */
STROBE_HOT_INLINE uint8_t *strobe__put_event(uint8_t *p, unsigned kind_bits, uint64_t d, bool with_id,
                                             uint32_t id)
{
    uint8_t *q = p + 1;
    unsigned b0 = kind_bits | (unsigned)(d & 31);
    if (d >= 32) { /* the usual case with the TSC: events are tens of ticks apart */
        b0 |= 0x20;
        q = strobe_uleb_put(q, d >> 5);
    }
    if (with_id)
        q = strobe_uleb_put(q, id);
    atomic_signal_fence(memory_order_seq_cst);
    *p = (uint8_t)b0;
    return q;
}

/* Delta to the previous record; never negative (a TSC read on another core
 * a few ticks behind must not make the stream run backwards). */
STROBE_HOT_INLINE uint64_t strobe__take_delta(struct strobe__thread *t, uint64_t now)
{
    uint64_t d = now - t->last_ticks;
    if (STROBE_UNLIKELY((int64_t)d < 0))
        d = 0;
    t->last_ticks += d;
    return d;
}

/* Timestamp for the fast path; false when the clock needs a call (the
 * monotonic fallback), which the fast path leaves to the slow one so that
 * it stays a leaf function with no register spills. */
STROBE_HOT_INLINE bool strobe__fast_now(uint32_t mode, uint64_t *now)
{
#if STROBE_HAVE_TSC
    if (STROBE_UNLIKELY(mode & STROBE__MODE_MONO))
        return false;
    *now = __rdtsc();
#else
    (void)mode;
    *now = strobe__mono_ns();
#endif
    return true;
}

/* Enters region `id` (`key` identifies it for the matching exit) when
 * nothing unusual is in the way: room on the stack and in the chunk, the
 * profile child is the first in its list (move-to-front keeps the child
 * entered last there, so a loop calling one function always hits). Returns
 * false, having changed nothing, otherwise. Called with STROBE__BUSY_IN. */
STROBE_HOT_INLINE bool strobe__enter_fast(struct strobe__thread *t, uintptr_t key, uint32_t id)
{
    struct strobe__frame *f = t->sp;
    uint32_t mode = t->mode;
    uint8_t *p = t->pos;
    if (STROBE_UNLIKELY(f == t->stack_end) || STROBE_UNLIKELY((mode & STROBE__MODE_TRACE) && p > t->limit))
        return false;
    struct strobe_prof_node *c = NULL;
    if (mode & STROBE__MODE_PROFILE) {
        uint32_t ci = f[-1].node->first_child;
        if (STROBE_UNLIKELY(ci == STROBE_PROF_NONE))
            return false;
        c = &t->slots[ci];
        if (STROBE_UNLIKELY(c->region != id))
            return false;
    }
    uint64_t now;
    if (!strobe__fast_now(mode, &now))
        return false;
    f->key = key;
    f->start = now;
    f->region = id;
    if (mode & STROBE__MODE_TRACE) {
        uint64_t d = strobe__take_delta(t, now);
        bool same = id == t->last_region;
        t->pos = strobe__put_event(p, (same ? STROBE_EV_ENTER_SAME : STROBE_EV_ENTER) << 6, d, !same, id);
        t->last_region = id;
    }
    /* The stream's records are counted from the visits when there is a
     * profile (thread.c, summarize_locked): a counter costs ~1 ns an event. */
    if (mode & STROBE__MODE_PROFILE) {
        c->visits++;
        f->node = c;
    } else {
        t->chunk_events++;
    }
    t->sp = f + 1;
    return true;
}

/* Inclusive-time statistics of a completed visit. */
STROBE_HOT_INLINE void strobe__prof_leave(struct strobe_prof_node *n, uint64_t start, uint64_t now)
{
    uint64_t d = now - start;
    if (STROBE_UNLIKELY((int64_t)d < 0))
        d = 0;
    n->incl_ticks += d;
    if (d < n->min_ticks)
        n->min_ticks = d;
    if (d > n->max_ticks)
        n->max_ticks = d;
    double dd = (double)(int64_t)d;
    n->sumsq_ticks += dd * dd;
}

/* Leaves the innermost frame when its key is `key` and the chunk has room;
 * false (nothing changed) otherwise. Called with STROBE__BUSY_IN. */
STROBE_HOT_INLINE bool strobe__exit_fast(struct strobe__thread *t, uintptr_t key)
{
    struct strobe__frame *f = t->sp - 1;
    uint32_t mode = t->mode;
    uint8_t *p = t->pos;
    if (STROBE_UNLIKELY(f->key != key) || STROBE_UNLIKELY((mode & STROBE__MODE_TRACE) && p > t->limit))
        return false;
    uint64_t now;
    if (!strobe__fast_now(mode, &now))
        return false;
    if (mode & STROBE__MODE_TRACE)
        t->pos = strobe__put_event(p, STROBE_EV_EXIT << 6, strobe__take_delta(t, now), false, 0);
    if (mode & STROBE__MODE_PROFILE)
        strobe__prof_leave(f->node, f->start, now);
    else
        t->chunk_events++;
    t->sp = f;
    return true;
}

/* ---- regions named by a code address: the -finstrument-functions
 * hooks' bodies (kind STROBE_REGION_FUNCTION) and the adapters' code
 * regions such as atomic blocks ---- */

/* The general paths: thread not usable yet, re-entrancy, cache miss,
 * excluded function, full stack or chunk, new profile child, monotonic
 * clock, mismatched exit. They check everything again themselves. */
void strobe__code_enter_slow(struct strobe__thread *t, uintptr_t fn, unsigned kind);
void strobe__code_exit_slow(struct strobe__thread *t, uintptr_t fn, unsigned kind);

STROBE_HOT_INLINE void strobe__code_enter(struct strobe__thread *t, uintptr_t fn, unsigned kind)
{
    if (STROBE_UNLIKELY(!strobe__event_ok(t))) {
        if (strobe__paused_enter(t, fn))
            return;
        goto slow;
    }
    strobe__busy_enter(t);
    const struct strobe__cache_entry *e = &t->cache[strobe__cache_slot(fn)];
    if (STROBE_UNLIKELY(e->addr != fn))
        goto slow_busy;
    uint32_t id = e->id;
    if (STROBE_UNLIKELY(id == 0)) { /* excluded by the filter: that lookup is all it costs */
        strobe__busy_leave(t);
        return;
    }
    if (STROBE_UNLIKELY(!strobe__enter_fast(t, fn, id)))
        goto slow_busy;
    strobe__busy_leave(t);
    return;
slow_busy:
    strobe__busy_leave(t);
slow:
    strobe__code_enter_slow(t, fn, kind);
}

STROBE_HOT_INLINE void strobe__code_exit(struct strobe__thread *t, uintptr_t fn, unsigned kind)
{
    if (STROBE_UNLIKELY(!strobe__event_ok(t))) {
        if (strobe__paused_exit(t, fn))
            return;
        goto slow;
    }
    strobe__busy_enter(t);
    if (STROBE_UNLIKELY(!strobe__exit_fast(t, fn))) {
        /* An excluded function never has a frame: its exit ends here after
         * the same cache lookup its enter cost. */
        const struct strobe__cache_entry *e = &t->cache[strobe__cache_slot(fn)];
        bool excluded = e->addr == fn && e->id == 0;
        strobe__busy_leave(t);
        if (excluded)
            return;
        goto slow;
    }
    strobe__busy_leave(t);
    return;
slow:
    strobe__code_exit_slow(t, fn, kind);
}

#endif
