/* SPDX-License-Identifier: MIT */
/*
 * Synchronization interposer: the pthread mutex, rwlock, spin lock,
 * condition variable and barrier calls and the POSIX semaphore calls of the
 * program, measured without recompiling it (on unless STROBE_LOCKS=0).
 *
 * What is recorded (docs/formats/trace.md, "Synchronization"):
 *  - per thread, object and acquiring call path (the innermost measured
 *    region), a SYNC slot in the thread's profile: acquisitions, contended
 *    ones, total and longest wait, sampled hold time. An uncontended
 *    lock+unlock pair touches only that slot: no timestamp, no trace
 *    record, so it costs a few nanoseconds (bench/locks);
 *  - every call that waited (a contended acquire, a condition wait, a
 *    barrier) also writes a SYNC trace record with its wait and what the
 *    task graph needs to order it after another thread's action: the
 *    releasing thread and its release number, the barrier episode;
 *  - with task-graph recording (STROBE_LOCKS=all, or switched on when a
 *    module traced by `strobe cc --trace=bb` registers: strobe__sync_all)
 *    every call writes its record, waited or not, with a ticket from one
 *    process-wide counter (strobe__sync_ticket: why a relaxed increment
 *    orders them as happens-before does), taken after an acquire returns
 *    and before a release is passed on; a barrier or condition wait also
 *    writes an ARRIVE before it waits. Each ticket also goes into the
 *    thread's block stream as a MARK (strobe__bb_mark). An uncontended
 *    pair then costs two timestamps, two increments and two records.
 *
 * Contention is detected before the call, and only then the wait is
 * timed: rwlocks, spin locks and semaphores are tried first (the try call
 * fails only when the object is taken); a mutex is looked at instead,
 * through the lock word and owner of glibc's public pthread_mutex_t
 * layout, because pthread_mutex_trylock costs 6 ns more than
 * pthread_mutex_lock on glibc 2.36, as much as all the rest of the
 * interposer. A mutex taken by another thread in the few nanoseconds
 * between the look and the lock makes a wait that is counted as
 * uncontended.
 *
 * Release words: a process-wide table (4096 stripes, by object address)
 * where a blocked acquirer registers as a waiter, and where a release that
 * sees a waiter stores who released and a release number, and writes a
 * RELEASE record with that number. The acquirer's record copies the word
 * it finds once it holds the object, so it names exactly the release it
 * waited for. Both sides use relaxed atomics: the lock itself orders the
 * releaser's store before the acquirer's load. A waiter that registers
 * just after the releaser looked is not seen; the word is then the one
 * the acquirer saw before waiting, and it names no releaser. Objects
 * sharing a stripe are told apart by an 8-bit tag; on a collision the
 * releaser is reported unknown.
 *
 * Hold time needs a timestamp at acquire and at release (~11 ns each with
 * rdtsc on the machine of docs/performance.md, more than the whole budget
 * of an uncontended pair), so it is timed for about one acquisition in 16,
 * chosen by a per-thread pseudo-random draw; reports scale it up.
 *
 * Recursion: the runtime's own calls (its process lock, the publisher's
 * condition variable) come from libstrobe.so's text (it is built without
 * tail calls, so their return address is there) and are passed on
 * untouched, as are calls while the thread is inside the runtime (busy)
 * and calls from threads the runtime does not measure, or before it has
 * started (the real functions are resolved on first use).
 *
 * Versions: pthread_cond_* exist twice in glibc (GLIBC_2.3.2, the current
 * ones, and GLIBC_2.2.5, for binaries from before 2003, with another
 * pthread_cond_t layout); dlsym could hand out either, so the current one
 * is asked for by version. Programs bound to the old version (none built
 * since glibc 2.3.2) would reach the current one through this wrapper.
 */
#define _GNU_SOURCE
#include "core/sync.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "core/bb.h"
#include "core/hotpath.h"
#include "core/profile.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "core/util.h"
#include "strobe/strobe.h"

/* ---- process-wide release words ---- */

#define STRIPE_BITS 12
#define STRIPES (1u << STRIPE_BITS)

struct strobe__sync_stripe {
    /* bits 0-7 object tag, 8-31 releasing thread index + 1 (0: unknown,
     * or an index above 2^24 - 2), 32-63 release number (wraps) */
    _Atomic uint64_t word;
    _Atomic uint32_t waiters;
    uint32_t unused;
};

static uint64_t obj_hash(uintptr_t obj)
{
    return (uint64_t)(obj >> 3) * 0x9E3779B97F4A7C15ull;
}

static uint32_t obj_tag(uintptr_t obj)
{
    return (uint32_t)(obj_hash(obj) >> 40) & 0xff;
}

STROBE_COLD static struct strobe__sync_stripe *stripes_alloc(void)
{
    struct strobe__sync_stripe *s = strobe__pages_alloc(STRIPES * sizeof *s), *expected = NULL;
    if (!s)
        return NULL;
    if (!__atomic_compare_exchange_n(&strobe__rt.sync.stripes, &expected, s, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        strobe__pages_free(s, STRIPES * sizeof *s);
        return expected;
    }
    return s;
}

/* NULL only when out of memory. */
STROBE_HOT_INLINE struct strobe__sync_stripe *stripe_of(uintptr_t obj)
{
    struct strobe__sync_stripe *s = __atomic_load_n(&strobe__rt.sync.stripes, __ATOMIC_ACQUIRE);
    if (STROBE_UNLIKELY(!s) && !(s = stripes_alloc()))
        return NULL;
    return s + (obj_hash(obj) >> (64 - STRIPE_BITS));
}

/* ---- per-thread state ---- */

#define HELD_MAX 32 /* locks held at once whose hold is tracked */

struct held {
    uintptr_t obj;
    struct strobe_prof_sync *slot; /* NULL: not counted */
    uint64_t start;                /* ticks at acquire, 0 = hold not timed */
};

/* (object, call path) -> slot; node NULL keys the thread's per-object
 * barrier episode count instead. */
struct entry {
    uintptr_t obj;
    const struct strobe_prof_node *node;
    struct strobe_prof_sync *slot;
    uint64_t count;
};

struct strobe__sync_state {
    uint32_t rng; /* xorshift32, never 0 */
    uint32_t nheld;
    uint32_t cap, used; /* entries (a power of two), in use */
    struct entry *tab;
    struct held held[HELD_MAX];
};

#define TAB_INITIAL 256u

static uint32_t entry_slot(uintptr_t obj, const struct strobe_prof_node *node, uint32_t cap)
{
    return (uint32_t)(obj_hash(obj ^ ((uintptr_t)node << 7)) >> 32) & (cap - 1);
}

void strobe__sync_free(struct strobe__thread *t)
{
    struct strobe__sync_state *s = t->sync;
    if (!s)
        return;
    strobe__pages_free(s->tab, s->cap * sizeof *s->tab);
    strobe__pages_free(s, sizeof *s);
    t->sync = NULL;
}

void strobe__sync_after_fork_child(void)
{
    struct strobe__sync_stripe *s = __atomic_load_n(&strobe__rt.sync.stripes, __ATOMIC_ACQUIRE);
    if (s)
        memset(s, 0, STRIPES * sizeof *s);
}

STROBE_COLD static struct strobe__sync_state *state_alloc(struct strobe__thread *t)
{
    struct strobe__sync_state *s = strobe__pages_alloc(sizeof *s);
    if (!s)
        return NULL;
    s->tab = strobe__pages_alloc(TAB_INITIAL * sizeof *s->tab);
    if (!s->tab) {
        strobe__pages_free(s, sizeof *s);
        return NULL;
    }
    s->cap = TAB_INITIAL;
    s->rng = (uint32_t)(t->tid * 2654435761u) | 1u;
    t->sync = s;
    return s;
}

/* Doubles the table; false when out of memory (the table stays as it is). */
STROBE_COLD static bool tab_grow(struct strobe__sync_state *s)
{
    uint32_t cap = 2 * s->cap;
    struct entry *tab = strobe__pages_alloc(cap * sizeof *tab);
    if (!tab)
        return false;
    for (uint32_t i = 0; i < s->cap; i++) {
        if (!s->tab[i].obj)
            continue;
        uint32_t j = entry_slot(s->tab[i].obj, s->tab[i].node, cap);
        while (tab[j].obj)
            j = (j + 1) & (cap - 1);
        tab[j] = s->tab[i];
    }
    strobe__pages_free(s->tab, s->cap * sizeof *s->tab);
    s->tab = tab;
    s->cap = cap;
    return true;
}

/* The entry of (obj, node), created when missing; NULL when out of memory. */
STROBE_COLD static struct entry *entry_add(struct strobe__sync_state *s, uintptr_t obj,
                                           const struct strobe_prof_node *node)
{
    if (2 * (s->used + 1) > s->cap && !tab_grow(s))
        return NULL;
    uint32_t i = entry_slot(obj, node, s->cap);
    while (s->tab[i].obj)
        i = (i + 1) & (s->cap - 1);
    s->tab[i] = (struct entry){.obj = obj, .node = node};
    s->used++;
    return &s->tab[i];
}

STROBE_HOT_INLINE struct entry *entry_find(struct strobe__sync_state *s, uintptr_t obj,
                                           const struct strobe_prof_node *node)
{
    uint32_t i = entry_slot(obj, node, s->cap);
    for (;;) {
        struct entry *e = &s->tab[i];
        if (STROBE_LIKELY(e->obj == obj && e->node == node))
            return e;
        if (!e->obj)
            return entry_add(s, obj, node);
        i = (i + 1) & (s->cap - 1);
    }
}

/* The thread's SYNC slot for obj at its current call path, created when
 * missing; NULL without a profile or when it is full. BUSY_IN is set. */
STROBE_HOT_INLINE struct strobe_prof_sync *slot_of(struct strobe__thread *t, struct strobe__sync_state *s,
                                                   uintptr_t obj, uint32_t kind)
{
    if (!(t->mode & STROBE__MODE_PROFILE))
        return NULL;
    struct strobe_prof_node *node = t->sp[-1].node;
    struct entry *e = entry_find(s, obj, node);
    if (STROBE_UNLIKELY(!e))
        return NULL;
    if (STROBE_UNLIKELY(!e->slot))
        e->slot = strobe__prof_sync_slot(t, node, obj, kind);
    return e->slot;
}

/* Whether this acquisition's hold is timed: the first 16 of a slot (so a
 * rarely taken lock has its real hold time), then one in 16 by a
 * pseudo-random draw. */
STROBE_HOT_INLINE bool sample_hold(struct strobe__sync_state *s, const struct strobe_prof_sync *slot)
{
    if (slot && slot->acquisitions <= 16)
        return true;
    uint32_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s->rng = x;
    return (x & 15) == 0;
}

/* ---- which calls are measured ---- */

/* The executable segment of libstrobe.so, found by the address of this
 * function. */
static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t self = (uintptr_t)&find_text, *range = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && self >= lo && self < hi) {
            range[0] = lo;
            range[1] = hi;
            return 1;
        }
    }
    return 0;
}

STROBE_COLD static void text_init(void)
{
    uintptr_t range[2] = {0, 0};
    dl_iterate_phdr(find_text, range);
    if (!range[1]) /* not found: a range that holds nothing, but is set */
        range[0] = range[1] = 1;
    __atomic_store_n(&strobe__rt.sync.text_lo, range[0], __ATOMIC_RELAXED);
    __atomic_store_n(&strobe__rt.sync.text_hi, range[1], __ATOMIC_RELAXED);
}

/* The calling thread when this call (made from return address ra) is to
 * be measured, else NULL. */
STROBE_HOT_INLINE struct strobe__thread *sync_thread(void *ra)
{
    struct strobe__thread *t = strobe__tls.t;
    if (!t || STROBE_UNLIKELY(!(t->mode & STROBE__MODE_SYNC)) ||
        STROBE_UNLIKELY(__atomic_load_n(&t->busy, __ATOMIC_RELAXED) & STROBE__BUSY_IN) ||
        STROBE_UNLIKELY(!strobe__active()))
        return NULL;
    uintptr_t hi = __atomic_load_n(&strobe__rt.sync.text_hi, __ATOMIC_RELAXED);
    if (STROBE_UNLIKELY(!hi)) {
        text_init();
        hi = __atomic_load_n(&strobe__rt.sync.text_hi, __ATOMIC_RELAXED);
    }
    uintptr_t lo = __atomic_load_n(&strobe__rt.sync.text_lo, __ATOMIC_RELAXED);
    if (STROBE_UNLIKELY((uintptr_t)ra - lo < hi - lo))
        return NULL;
    return t;
}

/* The next definition of a function (the one libc exports by default, or
 * `version` when given), resolved on first use: a wrapper can run before
 * the runtime's constructor. Racing threads store the same value. */
static void *real(void **slot, const char *name, const char *version)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (STROBE_UNLIKELY(!p)) {
        if (version)
            p = dlvsym(RTLD_NEXT, name, version);
        if (!p) /* another architecture's base version */
            p = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    return p;
}

#define REAL(field, name)                                                                                    \
    ((__typeof__(strobe__rt.sync.field))real((void **)&strobe__rt.sync.field, name, NULL))
#define REALV(field, name, version)                                                                          \
    ((__typeof__(strobe__rt.sync.field))real((void **)&strobe__rt.sync.field, name, version))

#if defined(__x86_64__)
#define COND_VERSION "GLIBC_2.3.2"
#else
#define COND_VERSION NULL
#endif

/* ---- recording ---- */

/* Appends a SYNC record of up to 6 values after the op and the object, at
 * `now`, with its ticket last (0: none; a ticketed record that was
 * written is also marked in the thread's block stream); a wait (every op but RELEASE,
 * SIGNAL and BROADCAST) also gets its call site `site`, the return address
 * of the interposed call (0: unknown), so that a program without
 * instrumentation still says where it waited. Only recorded calls pass it
 * on: the calls that did not wait pay nothing in the default mode.
 * BUSY_IN is set. */
static void record(struct strobe__thread *t, unsigned op, uintptr_t obj, uint64_t now, const uint64_t *v,
                   int n, uintptr_t site, uint64_t ticket)
{
    uint8_t payload[10 * (2 + 6 + 2 + 1)], *q = payload; /* 10 bytes per uleb at most */
    q = strobe_uleb_put(q, op);
    q = strobe_uleb_put(q, obj);
    for (int i = 0; i < n; i++)
        q = strobe_uleb_put(q, v[i]);
    if (op != STROBE_SYNC_RELEASE && op != STROBE_SYNC_SIGNAL && op != STROBE_SYNC_BROADCAST) {
        q = strobe_uleb_put(q, site != 0);
        if (site)
            q = strobe_uleb_put(q, site);
    }
    q = strobe_uleb_put(q, ticket);
    if (strobe__ext_record(t, STROBE_EXT_SYNC, now, payload, (size_t)(q - payload)) == 0 && ticket)
        strobe__bb_mark(t, ticket);
}

/* The ticket of a call about to be recorded: a new one in task-graph
 * recording, else none. */
static uint64_t ticket_if_all(void)
{
    return strobe__sync_all() ? strobe__sync_ticket() : 0;
}

STROBE_HOT_INLINE struct strobe__sync_state *state_of(struct strobe__thread *t)
{
    return STROBE_LIKELY(t->sync != NULL) ? t->sync : state_alloc(t);
}

/* An acquisition that did not wait, in task-graph recording: its ticket
 * (after the acquire returned), counted as in acquired_fast but with its
 * hold always timed (the record's timestamp is taken anyway), and recorded
 * as op with wait 0 at call site `site`. BUSY_IN is set. */
STROBE_NOINLINE static void acquired_all(struct strobe__thread *t, uintptr_t obj, uint32_t kind, unsigned op,
                                         bool held, uintptr_t site)
{
    uint64_t ticket = strobe__sync_ticket();
    uint64_t now = strobe__now(t);
    struct strobe__sync_state *s = state_of(t);
    if (STROBE_LIKELY(s != NULL)) {
        struct strobe_prof_sync *slot = slot_of(t, s, obj, kind);
        if (STROBE_LIKELY(slot != NULL))
            slot->acquisitions++;
        if (held && STROBE_LIKELY(s->nheld < HELD_MAX))
            s->held[s->nheld++] = (struct held){obj, slot, now};
    }
    static const uint64_t no_wait[3] = {0, 0, 0};
    record(t, op, obj, now, no_wait, 3, site, ticket);
}

/* An acquisition (op) that did not wait: count it and, for a lock (held),
 * track its hold. */
STROBE_HOT_INLINE void acquired_fast(struct strobe__thread *t, uintptr_t obj, uint32_t kind, unsigned op,
                                     bool held, uintptr_t site)
{
    strobe__busy_set(t, STROBE__BUSY_IN);
    if (STROBE_UNLIKELY(strobe__sync_all())) {
        acquired_all(t, obj, kind, op, held, site);
        strobe__busy_clear(t, STROBE__BUSY_IN);
        return;
    }
    struct strobe__sync_state *s = state_of(t);
    if (STROBE_LIKELY(s != NULL)) {
        struct strobe_prof_sync *slot = slot_of(t, s, obj, kind);
        if (STROBE_LIKELY(slot != NULL))
            slot->acquisitions++;
        if (held && STROBE_LIKELY(s->nheld < HELD_MAX))
            s->held[s->nheld++] = (struct held){obj, slot, sample_hold(s, slot) ? strobe__now(t) : 0};
    }
    strobe__busy_clear(t, STROBE__BUSY_IN);
}

/* Counts an acquisition (a wait, an episode) that waited `wait` ticks. */
static void count_wait(struct strobe_prof_sync *slot, uint64_t wait)
{
    if (!slot)
        return;
    slot->acquisitions++;
    slot->contended++;
    slot->wait_ticks += wait;
    if (wait > slot->max_wait_ticks)
        slot->max_wait_ticks = wait;
}

/* The releaser's word for obj as the acquirer finds it after its wait
 * (`before`: the word before it): thread index + 1 and release number,
 * 0/0 when unknown. */
static void releaser_of(struct strobe__sync_stripe *st, uintptr_t obj, uint64_t before, uint64_t out[2])
{
    uint64_t w = st ? atomic_load_explicit(&st->word, memory_order_relaxed) : 0;
    bool mine = w != before && (w & 0xff) == obj_tag(obj);
    out[0] = mine ? (w >> 8) & 0xffffff : 0;
    out[1] = mine ? w >> 32 : 0;
}

/* After a wait of `wait` ticks ending at `now` that acquired obj: counts
 * it as contended, records op with the releaser. held: whether the object
 * is now held by this thread (a lock, not a semaphore). */
static void acquired_slow(struct strobe__thread *t, uintptr_t obj, uint32_t kind, unsigned op, uint64_t wait,
                          uint64_t now, struct strobe__sync_stripe *st, uint64_t before, bool held,
                          uintptr_t site)
{
    uint64_t ticket = ticket_if_all();
    strobe__busy_set(t, STROBE__BUSY_IN);
    struct strobe__sync_state *s = state_of(t);
    if (s) {
        struct strobe_prof_sync *slot = slot_of(t, s, obj, kind);
        count_wait(slot, wait);
        if (held && s->nheld < HELD_MAX)
            /* every hold timed in task-graph recording (ticket), as in acquired_all */
            s->held[s->nheld++] = (struct held){obj, slot, ticket || sample_hold(s, slot) ? now : 0};
    }
    uint64_t v[3] = {wait, 0, 0};
    releaser_of(st, obj, before, v + 1);
    record(t, op, obj, now, v, 3, site, ticket);
    strobe__busy_clear(t, STROBE__BUSY_IN);
}

/* Stores thread t's release of obj in the stripe's word for a waiter to
 * find; returns its release number. */
static uint64_t publish_word(struct strobe__thread *t, struct strobe__sync_stripe *st, uintptr_t obj)
{
    uint64_t w = atomic_load_explicit(&st->word, memory_order_relaxed);
    uint32_t tag = obj_tag(obj);
    uint64_t seq = ((w & 0xff) == tag ? (w >> 32) + 1 : 1) & 0xffffffff;
    uint64_t who = t->index + 1 < 0xffffff ? t->index + 1 : 0;
    atomic_store_explicit(&st->word, (seq << 32) | (who << 8) | tag, memory_order_relaxed);
    return seq;
}

/* A release of obj by thread t that a waiter may wait for: the stripe's
 * word and a RELEASE-kind record. BUSY_IN is set. */
STROBE_COLD static void publish_release_slow(struct strobe__thread *t, struct strobe__sync_stripe *st,
                                             uintptr_t obj, unsigned op)
{
    uint64_t seq = publish_word(t, st, obj);
    record(t, op, obj, strobe__now(t), &seq, 1, 0, 0);
}

/* Task-graph recording: thread t's release of obj published when a waiter
 * is registered, as in publish_release. Returns its release number, 0
 * when no waiter was. */
static uint64_t publish_if_waited(struct strobe__thread *t, uintptr_t obj)
{
    struct strobe__sync_stripe *st = stripe_of(obj);
    if (st && atomic_load_explicit(&st->waiters, memory_order_relaxed) != 0)
        return publish_word(t, st, obj);
    return 0;
}

/* A release in task-graph recording: published (publish_if_waited) and
 * recorded whether a waiter was registered or not, with a ticket taken
 * before the release is passed on. `now`: the time if known, else 0.
 * BUSY_IN is set. */
STROBE_NOINLINE static void release_all(struct strobe__thread *t, uintptr_t obj, unsigned op, uint64_t now)
{
    uint64_t seq = publish_if_waited(t, obj);
    if (!now)
        now = strobe__now(t);
    record(t, op, obj, now, &seq, 1, 0, strobe__sync_ticket());
}

/* A release of obj by thread t: published when a waiter is registered;
 * every one recorded in task-graph recording (`now`: its time if known,
 * else 0). BUSY_IN is set. */
STROBE_HOT_INLINE void publish_release(struct strobe__thread *t, uintptr_t obj, unsigned op, uint64_t now)
{
    if (STROBE_UNLIKELY(strobe__sync_all())) {
        release_all(t, obj, op, now);
        return;
    }
    struct strobe__sync_stripe *st = stripe_of(obj);
    if (STROBE_UNLIKELY(st && atomic_load_explicit(&st->waiters, memory_order_relaxed) != 0))
        publish_release_slow(t, st, obj, op);
}

/* Thread t's hold of obj ends: timed when sampled. Returns the time it
 * took then, else 0. BUSY_IN is set. */
STROBE_HOT_INLINE uint64_t hold_end(struct strobe__thread *t, uintptr_t obj)
{
    uint64_t now = 0;
    struct strobe__sync_state *s = t->sync;
    if (STROBE_LIKELY(s != NULL)) {
        /* the innermost held lock first: locks are usually released in
         * the reverse order */
        for (uint32_t i = s->nheld; i-- > 0;) {
            struct held *h = &s->held[i];
            if (h->obj != obj)
                continue;
            if (STROBE_UNLIKELY(h->start) && h->slot) {
                now = strobe__now(t);
                uint64_t d = now - h->start;
                h->slot->hold_ticks += (int64_t)d > 0 ? d : 0;
                if (h->slot->hold_samples < UINT32_MAX)
                    h->slot->hold_samples++;
            }
            s->held[i] = s->held[--s->nheld];
            break;
        }
    }
    return now;
}

/* Before the real unlock of obj: the hold ends and the release is
 * published. */
STROBE_HOT_INLINE void releasing(struct strobe__thread *t, uintptr_t obj)
{
    strobe__busy_set(t, STROBE__BUSY_IN);
    publish_release(t, obj, STROBE_SYNC_RELEASE, hold_end(t, obj));
    strobe__busy_clear(t, STROBE__BUSY_IN);
}

/* The blocking calls behind the wrappers, by number, so that one function
 * times them all. */
enum blocking {
    B_MUTEX,
    B_MUTEX_TIMED,
    B_RDLOCK,
    B_RDLOCK_TIMED,
    B_WRLOCK,
    B_WRLOCK_TIMED,
    B_SPIN,
    B_SEM,
    B_SEM_TIMED,
};

/* Calls the real blocking function; returns 0 or an errno value (the
 * semaphore calls' -1/errno is converted, errno is kept). */
static int call_blocking(enum blocking b, void *obj, const struct timespec *ts)
{
    switch (b) {
    case B_MUTEX:
        return REAL(mutex_lock, "pthread_mutex_lock")(obj);
    case B_MUTEX_TIMED:
        return REAL(mutex_timedlock, "pthread_mutex_timedlock")(obj, ts);
    case B_RDLOCK:
        return REAL(rwlock_rdlock, "pthread_rwlock_rdlock")(obj);
    case B_RDLOCK_TIMED:
        return REAL(rwlock_timedrdlock, "pthread_rwlock_timedrdlock")(obj, ts);
    case B_WRLOCK:
        return REAL(rwlock_wrlock, "pthread_rwlock_wrlock")(obj);
    case B_WRLOCK_TIMED:
        return REAL(rwlock_timedwrlock, "pthread_rwlock_timedwrlock")(obj, ts);
    case B_SPIN:
        return REAL(spin_lock, "pthread_spin_lock")(obj);
    case B_SEM:
        return REAL(sem_wait, "sem_wait")(obj) == 0 ? 0 : errno;
    case B_SEM_TIMED:
        return REAL(sem_timedwait, "sem_timedwait")(obj, ts) == 0 ? 0 : errno;
    }
    return EINVAL;
}

/* The contended path: the try call failed, so wait in the real blocking
 * call, timed, registered as a waiter for the releaser to see. Returns
 * what the real call returned (0 or an errno value). */
STROBE_COLD static int wait_acquire(struct strobe__thread *t, enum blocking b, void *obj,
                                    const struct timespec *ts, uint32_t kind, unsigned op, bool held,
                                    uintptr_t site)
{
    uintptr_t o = (uintptr_t)obj;
    struct strobe__sync_stripe *st = stripe_of(o);
    uint64_t before = 0;
    if (st) {
        atomic_fetch_add_explicit(&st->waiters, 1, memory_order_relaxed);
        before = atomic_load_explicit(&st->word, memory_order_relaxed);
    }
    uint64_t t0 = strobe__now(t);
    int rc = call_blocking(b, obj, ts);
    uint64_t t1 = strobe__now(t);
    if (st)
        atomic_fetch_sub_explicit(&st->waiters, 1, memory_order_relaxed);
    /* at least 1: a wait of 0 ticks is a call that did not wait */
    uint64_t wait = (int64_t)(t1 - t0) > 0 ? t1 - t0 : 1;
    /* the measurement may have ended meanwhile (process exit) */
    if (strobe__tls.t != t || !strobe__active())
        return rc;
    if (rc == 0 || (rc == EOWNERDEAD && kind == STROBE_SYNC_MUTEX)) {
        acquired_slow(t, o, kind, op, wait, t1, st, before, held, site);
    } else if (rc == ETIMEDOUT) {
        strobe__busy_set(t, STROBE__BUSY_IN);
        record(t, STROBE_SYNC_TIMEOUT, o, t1, &wait, 1, site, 0); /* orders nothing */
        strobe__busy_clear(t, STROBE__BUSY_IN);
    }
    return rc;
}

/* ---- mutexes ---- */

/* Where the wrapper was called from (sync_thread). */
#define RA __builtin_return_address(0)

/* The runtime's process lock, also recognized by its address: in a TSan
 * build the runtime's calls reach us through TSan's interceptor, so their
 * return address is TSan's. */
#define RUNTIME_LOCK(m) ((m) == &strobe__rt.lock)

/* Whether m is held by another thread (so that locking it will wait). */
STROBE_HOT_INLINE bool mutex_taken(pthread_mutex_t *m, const struct strobe__thread *t)
{
#ifdef __GLIBC__
    /* __lock: 0 free, else held (1, 2 with waiters, the owner's tid for
     * robust and priority-inheritance mutexes); __owner: the holder's tid,
     * which makes a recursive relock by its owner uncontended. */
    return __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) != 0 &&
           (uint64_t)(unsigned)__atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED) != t->tid;
#else
    (void)m;
    (void)t;
    return true; /* no known layout: every acquisition takes the timed path */
#endif
}

/* A lock or timedlock called from `site` that did not wait (rc from the
 * real call). */
STROBE_HOT_INLINE int mutex_locked(struct strobe__thread *t, pthread_mutex_t *m, int rc, void *site)
{
    /* EOWNERDEAD: acquired, a robust mutex whose owner died */
    if (STROBE_LIKELY(rc == 0) || rc == EOWNERDEAD)
        acquired_fast(t, (uintptr_t)m, STROBE_SYNC_MUTEX, STROBE_SYNC_ACQUIRE_MUTEX, true, (uintptr_t)site);
    return rc;
}

STROBE_API int pthread_mutex_lock(pthread_mutex_t *m)
{
    struct strobe__thread *t = sync_thread(RA);
    if (!t || RUNTIME_LOCK(m))
        return REAL(mutex_lock, "pthread_mutex_lock")(m);
    if (STROBE_UNLIKELY(mutex_taken(m, t)))
        return wait_acquire(t, B_MUTEX, m, NULL, STROBE_SYNC_MUTEX, STROBE_SYNC_ACQUIRE_MUTEX, true,
                            (uintptr_t)RA);
    return mutex_locked(t, m, REAL(mutex_lock, "pthread_mutex_lock")(m), RA);
}

STROBE_API int pthread_mutex_trylock(pthread_mutex_t *m)
{
    int rc = REAL(mutex_trylock, "pthread_mutex_trylock")(m);
    struct strobe__thread *t;
    if ((rc == 0 || rc == EOWNERDEAD) && !RUNTIME_LOCK(m) && (t = sync_thread(RA)))
        acquired_fast(t, (uintptr_t)m, STROBE_SYNC_MUTEX, STROBE_SYNC_ACQUIRE_MUTEX, true, (uintptr_t)RA);
    return rc;
}

STROBE_API int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
    struct strobe__thread *t = sync_thread(RA);
    if (!t)
        return REAL(mutex_timedlock, "pthread_mutex_timedlock")(m, ts);
    if (mutex_taken(m, t))
        return wait_acquire(t, B_MUTEX_TIMED, m, ts, STROBE_SYNC_MUTEX, STROBE_SYNC_ACQUIRE_MUTEX, true,
                            (uintptr_t)RA);
    return mutex_locked(t, m, REAL(mutex_timedlock, "pthread_mutex_timedlock")(m, ts), RA);
}

STROBE_API int pthread_mutex_unlock(pthread_mutex_t *m)
{
    struct strobe__thread *t = sync_thread(RA);
    if (t && !RUNTIME_LOCK(m))
        releasing(t, (uintptr_t)m);
    return REAL(mutex_unlock, "pthread_mutex_unlock")(m);
}

/* ---- rwlocks, spin locks, semaphores: tried first ---- */

/* A blocking acquire whose try call returned rc (0, EBUSY, an error). */
static int tried_then_wait(struct strobe__thread *t, int rc, enum blocking b, void *obj,
                           const struct timespec *ts, uint32_t kind, unsigned op, void *ra)
{
    if (STROBE_LIKELY(rc == 0)) {
        acquired_fast(t, (uintptr_t)obj, kind, op, kind != STROBE_SYNC_SEM, (uintptr_t)ra);
        return 0;
    }
    if (rc != EBUSY)
        return rc;
    return wait_acquire(t, b, obj, ts, kind, op, kind != STROBE_SYNC_SEM, (uintptr_t)ra);
}

/* The program's own try call (an acquire op) returned rc (0: acquired). */
static int tried(int rc, void *ra, void *obj, uint32_t kind, unsigned op)
{
    struct strobe__thread *t;
    if (rc == 0 && (t = sync_thread(ra)))
        acquired_fast(t, (uintptr_t)obj, kind, op, kind != STROBE_SYNC_SEM, (uintptr_t)ra);
    return rc;
}

#define RD_TRY(l) REAL(rwlock_tryrdlock, "pthread_rwlock_tryrdlock")(l)
#define WR_TRY(l) REAL(rwlock_trywrlock, "pthread_rwlock_trywrlock")(l)

STROBE_API int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    struct strobe__thread *t = sync_thread(RA);
    if (!t)
        return REAL(rwlock_rdlock, "pthread_rwlock_rdlock")(l);
    return tried_then_wait(t, RD_TRY(l), B_RDLOCK, l, NULL, STROBE_SYNC_RWLOCK, STROBE_SYNC_ACQUIRE_READ, RA);
}

STROBE_API int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    struct strobe__thread *t = sync_thread(RA);
    if (!t)
        return REAL(rwlock_wrlock, "pthread_rwlock_wrlock")(l);
    return tried_then_wait(t, WR_TRY(l), B_WRLOCK, l, NULL, STROBE_SYNC_RWLOCK, STROBE_SYNC_ACQUIRE_WRITE,
                           RA);
}

STROBE_API int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *ts)
{
    struct strobe__thread *t = sync_thread(RA);
    if (!t)
        return REAL(rwlock_timedrdlock, "pthread_rwlock_timedrdlock")(l, ts);
    return tried_then_wait(t, RD_TRY(l), B_RDLOCK_TIMED, l, ts, STROBE_SYNC_RWLOCK, STROBE_SYNC_ACQUIRE_READ,
                           RA);
}

STROBE_API int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *ts)
{
    struct strobe__thread *t = sync_thread(RA);
    if (!t)
        return REAL(rwlock_timedwrlock, "pthread_rwlock_timedwrlock")(l, ts);
    return tried_then_wait(t, WR_TRY(l), B_WRLOCK_TIMED, l, ts, STROBE_SYNC_RWLOCK, STROBE_SYNC_ACQUIRE_WRITE,
                           RA);
}

STROBE_API int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
    return tried(RD_TRY(l), RA, l, STROBE_SYNC_RWLOCK, STROBE_SYNC_ACQUIRE_READ);
}

STROBE_API int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
    return tried(WR_TRY(l), RA, l, STROBE_SYNC_RWLOCK, STROBE_SYNC_ACQUIRE_WRITE);
}

STROBE_API int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    struct strobe__thread *t = sync_thread(RA);
    if (t)
        releasing(t, (uintptr_t)l);
    return REAL(rwlock_unlock, "pthread_rwlock_unlock")(l);
}

STROBE_API int pthread_spin_lock(pthread_spinlock_t *l)
{
    struct strobe__thread *t = sync_thread(RA);
    if (!t)
        return REAL(spin_lock, "pthread_spin_lock")(l);
    return tried_then_wait(t, REAL(spin_trylock, "pthread_spin_trylock")(l), B_SPIN, (void *)l, NULL,
                           STROBE_SYNC_SPIN, STROBE_SYNC_ACQUIRE_SPIN, RA);
}

STROBE_API int pthread_spin_trylock(pthread_spinlock_t *l)
{
    return tried(REAL(spin_trylock, "pthread_spin_trylock")(l), RA, (void *)l, STROBE_SYNC_SPIN,
                 STROBE_SYNC_ACQUIRE_SPIN);
}

STROBE_API int pthread_spin_unlock(pthread_spinlock_t *l)
{
    struct strobe__thread *t = sync_thread(RA);
    if (t)
        releasing(t, (uintptr_t)l);
    return REAL(spin_unlock, "pthread_spin_unlock")(l);
}

/* Semaphores: a wait acquires, a post releases; nothing is held. The
 * calls return -1 with errno, which the trial must not change. */
static int sem_acquire(struct strobe__thread *t, sem_t *s, enum blocking b, const struct timespec *ts,
                       void *ra)
{
    int saved = errno;
    int rc = REAL(sem_trywait, "sem_trywait")(s) == 0 ? 0 : errno == EAGAIN ? EBUSY : errno;
    errno = saved;
    rc = tried_then_wait(t, rc, b, s, ts, STROBE_SYNC_SEM, STROBE_SYNC_ACQUIRE_SEM, ra);
    if (rc == 0)
        return 0;
    errno = rc;
    return -1;
}

STROBE_API int sem_wait(sem_t *s)
{
    struct strobe__thread *t = sync_thread(RA);
    return t ? sem_acquire(t, s, B_SEM, NULL, RA) : REAL(sem_wait, "sem_wait")(s);
}

STROBE_API int sem_timedwait(sem_t *s, const struct timespec *ts)
{
    struct strobe__thread *t = sync_thread(RA);
    return t ? sem_acquire(t, s, B_SEM_TIMED, ts, RA) : REAL(sem_timedwait, "sem_timedwait")(s, ts);
}

STROBE_API int sem_trywait(sem_t *s)
{
    return tried(REAL(sem_trywait, "sem_trywait")(s), RA, s, STROBE_SYNC_SEM, STROBE_SYNC_ACQUIRE_SEM);
}

/* A release that holds nothing: a semaphore post, a condition signal. */
static void released(void *ra, uintptr_t obj, unsigned op)
{
    struct strobe__thread *t = sync_thread(ra);
    if (t) {
        strobe__busy_set(t, STROBE__BUSY_IN);
        publish_release(t, obj, op, 0);
        strobe__busy_clear(t, STROBE__BUSY_IN);
    }
}

STROBE_API int sem_post(sem_t *s)
{
    released(RA, (uintptr_t)s, STROBE_SYNC_RELEASE);
    return REAL(sem_post, "sem_post")(s);
}

/* ---- condition variables ---- */

/* Task-graph recording: thread t arrives at obj, a barrier (mutex 0) or
 * a condition variable it waits on with `mutex`. The mutex's hold ends
 * and its release is published to its waiters as in releasing, with no
 * RELEASE record: the ARRIVE record, naming the mutex, stands for it. Its
 * ticket is taken before the wait begins (and the mutex is released).
 * Returns the ARRIVE's time. */
STROBE_NOINLINE static uint64_t arrive(struct strobe__thread *t, uintptr_t obj, uintptr_t mutex,
                                       uintptr_t site)
{
    strobe__busy_set(t, STROBE__BUSY_IN);
    uint64_t now = 0;
    if (mutex) {
        now = hold_end(t, mutex);
        publish_if_waited(t, mutex);
    }
    if (!now)
        now = strobe__now(t);
    uint64_t v[2] = {0, mutex};
    record(t, STROBE_SYNC_ARRIVE, obj, now, v, 2, site, strobe__sync_ticket());
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return now;
}

/* A wait on c with m: m's hold ends and its release is published (the
 * real call unlocks it), the wait is timed, then m is held again (not a
 * new acquisition) and the wait recorded with the signaller. In
 * task-graph recording the ARRIVE at c (which also releases m) precedes
 * the wait. */
static int cond_wait(struct strobe__thread *t, pthread_cond_t *c, pthread_mutex_t *m,
                     const struct timespec *ts, uintptr_t site)
{
    uintptr_t co = (uintptr_t)c, mo = (uintptr_t)m;
    bool all = strobe__sync_all();
    uint64_t t0 = 0;
    if (STROBE_UNLIKELY(all))
        t0 = arrive(t, co, mo, site);
    else
        releasing(t, mo);
    struct strobe__sync_stripe *st = stripe_of(co);
    uint64_t before = 0;
    if (st) {
        atomic_fetch_add_explicit(&st->waiters, 1, memory_order_relaxed);
        before = atomic_load_explicit(&st->word, memory_order_relaxed);
    }
    if (STROBE_LIKELY(!all))
        t0 = strobe__now(t);
    int rc = ts ? REALV(cond_timedwait, "pthread_cond_timedwait", COND_VERSION)(c, m, ts)
                : REALV(cond_wait, "pthread_cond_wait", COND_VERSION)(c, m);
    uint64_t t1 = strobe__now(t);
    if (st)
        atomic_fetch_sub_explicit(&st->waiters, 1, memory_order_relaxed);
    if (strobe__tls.t != t || !strobe__active())
        return rc;
    uint64_t wait = (int64_t)(t1 - t0) > 0 ? t1 - t0 : 1;
    uint64_t ticket = ticket_if_all();
    strobe__busy_set(t, STROBE__BUSY_IN);
    struct strobe__sync_state *s = state_of(t);
    if (s) {
        count_wait(slot_of(t, s, co, STROBE_SYNC_COND), wait);
        if (s->nheld < HELD_MAX) /* m is held again, whatever rc says */
            s->held[s->nheld++] = (struct held){mo, NULL, 0};
    }
    uint64_t v[5] = {wait, mo, 0, 0, rc == ETIMEDOUT};
    releaser_of(st, co, before, v + 2);
    record(t, STROBE_SYNC_COND_WAIT, co, t1, v, 5, site, ticket);
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return rc;
}

STROBE_API int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    struct strobe__thread *t = sync_thread(RA);
    if (!t)
        return REALV(cond_wait, "pthread_cond_wait", COND_VERSION)(c, m);
    return cond_wait(t, c, m, NULL, (uintptr_t)RA);
}

STROBE_API int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
    struct strobe__thread *t = sync_thread(RA);
    if (!t)
        return REALV(cond_timedwait, "pthread_cond_timedwait", COND_VERSION)(c, m, ts);
    return cond_wait(t, c, m, ts, (uintptr_t)RA);
}

STROBE_API int pthread_cond_signal(pthread_cond_t *c)
{
    released(RA, (uintptr_t)c, STROBE_SYNC_SIGNAL);
    return REALV(cond_signal, "pthread_cond_signal", COND_VERSION)(c);
}

STROBE_API int pthread_cond_broadcast(pthread_cond_t *c)
{
    released(RA, (uintptr_t)c, STROBE_SYNC_BROADCAST);
    return REALV(cond_broadcast, "pthread_cond_broadcast", COND_VERSION)(c);
}

/* ---- barriers ---- */

STROBE_API int pthread_barrier_wait(pthread_barrier_t *b)
{
    struct strobe__thread *t = sync_thread(RA);
    int (*real_wait)(pthread_barrier_t *) = REAL(barrier_wait, "pthread_barrier_wait");
    if (!t)
        return real_wait(b);
    uintptr_t o = (uintptr_t)b;
    uint64_t t0 = STROBE_UNLIKELY(strobe__sync_all()) ? arrive(t, o, 0, (uintptr_t)RA) : strobe__now(t);
    int rc = real_wait(b);
    uint64_t t1 = strobe__now(t);
    if (strobe__tls.t != t || !strobe__active() || (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD))
        return rc;
    uint64_t wait = (int64_t)(t1 - t0) > 0 ? t1 - t0 : 1;
    uint64_t ticket = ticket_if_all();
    strobe__busy_set(t, STROBE__BUSY_IN);
    struct strobe__sync_state *s = state_of(t);
    uint64_t episode = 0;
    if (s) {
        count_wait(slot_of(t, s, o, STROBE_SYNC_BARRIER_OBJ), wait);
        struct entry *e = entry_find(s, o, NULL); /* the thread's episodes of b */
        if (e)
            episode = ++e->count;
    }
    uint64_t v[3] = {wait, episode, rc == PTHREAD_BARRIER_SERIAL_THREAD};
    record(t, STROBE_SYNC_BARRIER, o, t1, v, 3, (uintptr_t)RA, ticket);
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return rc;
}

/* ---- adapters' constructs (strobe/adapter.h) ----
 * Other runtimes' synchronization (OpenMP teams, barriers, critical
 * sections), reported by their adapter: the same records, tickets and
 * marks as the interposed calls, in task-graph recording only. */

/* The calling thread when an adapter's construct is to be recorded. */
static struct strobe__thread *adapter_thread(void)
{
    struct strobe__thread *t = strobe__tls.t;
    if (STROBE_LIKELY(!strobe__sync_all()) || !t || !(t->mode & STROBE__MODE_SYNC) ||
        (__atomic_load_n(&t->busy, __ATOMIC_RELAXED) & STROBE__BUSY_IN) || !strobe__active())
        return NULL;
    return t;
}

/* Records op on obj at the current time with a new ticket (as the
 * object when obj is 0: a team's id). Returns the ticket. */
static uint64_t adapter_record(struct strobe__thread *t, unsigned op, uint64_t obj, const uint64_t *v, int n,
                               uintptr_t site)
{
    strobe__busy_set(t, STROBE__BUSY_IN);
    uint64_t ticket = strobe__sync_ticket();
    record(t, op, obj ? obj : ticket, strobe__now(t), v, n, site, ticket);
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return ticket;
}

STROBE_API int strobe_sync_recording(void)
{
    return adapter_thread() != NULL;
}

STROBE_API int strobe_sync_fork(uintptr_t site, unsigned team_size, uint64_t *team)
{
    if (!team)
        return -EINVAL;
    struct strobe__thread *t = adapter_thread();
    uint64_t v = team_size;
    *team = t ? adapter_record(t, STROBE_SYNC_FORK, 0, &v, 1, site) : 0;
    return t ? 0 : STROBE_ERR_DISABLED;
}

STROBE_API int strobe_sync_team_begin(uint64_t team, unsigned index, unsigned team_size)
{
    struct strobe__thread *t = adapter_thread();
    if (!team || index == 0)
        return -EINVAL;
    if (!t)
        return STROBE_ERR_DISABLED;
    uint64_t v[2] = {index, team_size};
    adapter_record(t, STROBE_SYNC_TEAM_BEGIN, team, v, 2, 0);
    return 0;
}

STROBE_API int strobe_sync_team_arrive(uint64_t team, uintptr_t site, uint64_t *ticks)
{
    struct strobe__thread *t = adapter_thread();
    if (!team || !ticks)
        return -EINVAL;
    *ticks = t ? arrive(t, team, 0, site) : 0;
    return t ? 0 : STROBE_ERR_DISABLED;
}

STROBE_API int strobe_sync_team_barrier(uint64_t team, uint64_t episode, uint64_t since, uintptr_t site)
{
    struct strobe__thread *t = adapter_thread();
    if (!team || episode == 0)
        return -EINVAL;
    if (!t)
        return STROBE_ERR_DISABLED;
    uint64_t now = strobe__now(t);
    uint64_t v[3] = {(int64_t)(now - since) > 0 ? now - since : 1, episode, 0};
    strobe__busy_set(t, STROBE__BUSY_IN);
    record(t, STROBE_SYNC_BARRIER, team, now, v, 3, site, strobe__sync_ticket());
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return 0;
}

STROBE_API int strobe_sync_acquired(uintptr_t object, uint64_t since, uintptr_t site)
{
    struct strobe__thread *t = adapter_thread();
    if (!object)
        return -EINVAL;
    if (!t)
        return STROBE_ERR_DISABLED;
    uint64_t now = since ? strobe__now(t) : 0;
    if (since && (int64_t)(now - since) > 0) {
        acquired_slow(t, object, STROBE_SYNC_MUTEX, STROBE_SYNC_ACQUIRE_MUTEX, now - since, now, NULL, 0,
                      true, site);
    } else {
        strobe__busy_set(t, STROBE__BUSY_IN);
        acquired_all(t, object, STROBE_SYNC_MUTEX, STROBE_SYNC_ACQUIRE_MUTEX, true, site);
        strobe__busy_clear(t, STROBE__BUSY_IN);
    }
    return 0;
}

STROBE_API int strobe_sync_released(uintptr_t object)
{
    struct strobe__thread *t = adapter_thread();
    if (!object)
        return -EINVAL;
    if (!t)
        return STROBE_ERR_DISABLED;
    releasing(t, object);
    return 0;
}
