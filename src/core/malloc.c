/* SPDX-License-Identifier: MIT */
/*
 * The allocation interposer and tracker (see malloc.h): the C library's
 * allocation functions wrapped, the live-block table, the per-path
 * metrics, the peak and the exit summary.
 */
#define _GNU_SOURCE
#include "core/malloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/defs.h"
#include "core/hotpath.h"
#include "core/profile.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "core/util.h"
#include "strobe/adapter.h"

__thread unsigned strobe__mem_quiet __attribute__((tls_model("initial-exec")));

/* In a ThreadSanitizer build the program's first malloc, which comes before
 * TSan has initialized itself, would run this file's instrumented code and
 * crash (libtsan is loaded after libstrobe): such a runtime interposes no
 * allocation function and says so when asked to track. (Under ASan the
 * sanitizer's malloc comes first and ours is never called: start-up sees
 * that like any other malloc loaded first.) */

#ifndef STROBE_TSAN

/* This thread is looking up the C library's functions: dlsym's own
 * allocations come from the arena. */
static __thread bool resolving __attribute__((tls_model("initial-exec")));

#define MEM (&strobe__rt.mem)

/* ---- bootstrap arena ---- */

/* A block of the arena: its size in the 8 bytes before it (for realloc).
 * NULL (errno ENOMEM) when the arena is used up. */
static void *arena_alloc(size_t size, size_t align)
{
    struct strobe__mem *m = MEM;
    if (align < 16)
        align = 16;
    if (size > STROBE__MEM_ARENA || align > STROBE__MEM_ARENA) {
        errno = ENOMEM;
        return NULL;
    }
    size_t need = (size + align + 16 + 15) & ~(size_t)15;
    size_t off = atomic_fetch_add_explicit(&m->arena_used, need, memory_order_relaxed);
    if (off > STROBE__MEM_ARENA || need > STROBE__MEM_ARENA - off) {
        errno = ENOMEM;
        return NULL;
    }
    uintptr_t p = ((uintptr_t)m->arena + off + 16 + align - 1) & ~(uintptr_t)(align - 1);
    memcpy((void *)(p - 8), &(uint64_t){size}, 8);
    return (void *)p; /* the arena is zero (static) and never reused: calloc needs no memset */
}

static bool in_arena(const void *p)
{
    const unsigned char *a = MEM->arena;
    return (const unsigned char *)p >= a && (const unsigned char *)p < a + STROBE__MEM_ARENA;
}

static size_t arena_size(const void *p)
{
    uint64_t n;
    memcpy(&n, (const unsigned char *)p - 8, 8);
    return (size_t)n;
}

/* ---- the C library's functions ---- */

/* Finds them all with dlsym (which may allocate: from the arena then).
 * Threads racing here compute the same values; the first stores them.
 * Returns whether malloc/free/calloc/realloc are known. */
static STROBE_COLD bool resolve(void)
{
    struct strobe__mem *m = MEM;
    if (resolving)
        return false;
    resolving = true;
#define LOOK(f) __typeof__(m->f) f##_ = (__typeof__(m->f))dlsym(RTLD_NEXT, #f)
    LOOK(malloc);
    LOOK(free);
    LOOK(calloc);
    LOOK(realloc);
    LOOK(posix_memalign);
    LOOK(aligned_alloc);
    LOOK(memalign);
    LOOK(valloc);
    LOOK(pvalloc);
    LOOK(mmap);
    LOOK(munmap);
#undef LOOK
    resolving = false;
    if (!malloc_ || !free_ || !calloc_ || !realloc_)
        return false;
    int expected = 0;
    if (atomic_compare_exchange_strong_explicit(&m->ready, &expected, 1, memory_order_acquire,
                                                memory_order_acquire)) {
        m->malloc = malloc_;
        m->free = free_;
        m->calloc = calloc_;
        m->realloc = realloc_;
        m->posix_memalign = posix_memalign_;
        m->aligned_alloc = aligned_alloc_;
        m->memalign = memalign_;
        m->valloc = valloc_;
        m->pvalloc = pvalloc_;
        m->mmap = mmap_;
        m->munmap = munmap_;
        /* Pairs with the acquire load in READY: the pointers are visible. */
        atomic_store_explicit(&m->ready, 2, memory_order_release);
        return true;
    }
    while (atomic_load_explicit(&m->ready, memory_order_acquire) != 2)
        sched_yield();
    return true;
}

#define READY(m) (STROBE_LIKELY(atomic_load_explicit(&(m)->ready, memory_order_acquire) == 2) || resolve())

/* ---- the live-block table ---- */

static uint64_t mix(uintptr_t addr)
{
    return (uint64_t)(addr >> 4) * 0x9E3779B97F4A7C15ull;
}

_Static_assert(STROBE__MEM_STRIPES == 64, "stripe = top 6 bits of the hash");

static struct strobe__mem_stripe *stripe_of(uint64_t h)
{
    return &MEM->stripes[h >> 58];
}

static size_t home(uint64_t h, size_t cap)
{
    return (size_t)(h >> 16) & (cap - 1);
}

/* True while the process has only ever had one thread (glibc clears it
 * before a second thread starts, however it is created): the table and
 * the counters then need no lock and no atomic read-modify-write, which
 * are most of the tracker's cost (docs/performance.md). */
static bool solo(void)
{
    return __libc_single_threaded;
}

static void stripe_lock(struct strobe__mem_stripe *s)
{
    if (solo())
        return;
    unsigned spins = 0;
    while (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire)) {
        while (atomic_load_explicit(&s->lock, memory_order_relaxed)) {
            if (++spins < 100) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else {
                sched_yield();
            }
        }
    }
}

/* A lock taken while the process was single-threaded is not held: the
 * one thread cannot have created another in between. */
static void stripe_unlock(struct strobe__mem_stripe *s)
{
    if (atomic_load_explicit(&s->lock, memory_order_relaxed))
        atomic_store_explicit(&s->lock, 0, memory_order_release);
}

/* Doubles the stripe's table (lock held). False when out of memory. */
static bool stripe_grow(struct strobe__mem_stripe *s)
{
    size_t cap = s->cap ? 2 * s->cap : 256;
    struct strobe__mem_entry *tab = strobe__pages_alloc(cap * sizeof *tab);
    if (!tab)
        return false;
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->tab[i].addr)
            continue;
        size_t j = home(mix(s->tab[i].addr), cap);
        while (tab[j].addr)
            j = (j + 1) & (cap - 1);
        tab[j] = s->tab[i];
    }
    strobe__pages_free(s->tab, s->cap * sizeof *tab);
    s->tab = tab;
    s->cap = cap;
    return true;
}

/* Adds e. An entry already there for the address (a block freed where
 * the tracker did not see it, e.g. by a fork handler) is replaced, its
 * size in *stale. False when the table could not grow. */
static bool table_put(const struct strobe__mem_entry *e, uint64_t *stale)
{
    uint64_t h = mix(e->addr);
    struct strobe__mem_stripe *s = stripe_of(h);
    stripe_lock(s);
    if (2 * (s->used + 1) > s->cap && !stripe_grow(s)) {
        stripe_unlock(s);
        return false;
    }
    size_t mask = s->cap - 1, i = home(h, s->cap);
    while (s->tab[i].addr && s->tab[i].addr != e->addr)
        i = (i + 1) & mask;
    *stale = s->tab[i].addr ? s->tab[i].size : 0;
    s->used += !s->tab[i].addr;
    s->tab[i] = *e;
    stripe_unlock(s);
    return true;
}

/* Removes the entry of addr into *out; false when there is none. */
static bool table_take(uintptr_t addr, struct strobe__mem_entry *out)
{
    uint64_t h = mix(addr);
    struct strobe__mem_stripe *s = stripe_of(h);
    stripe_lock(s);
    if (!s->cap) {
        stripe_unlock(s);
        return false;
    }
    size_t mask = s->cap - 1, i = home(h, s->cap);
    while (s->tab[i].addr && s->tab[i].addr != addr)
        i = (i + 1) & mask;
    if (!s->tab[i].addr) {
        stripe_unlock(s);
        return false;
    }
    *out = s->tab[i];
    /* Backward-shift deletion keeps every probe chain unbroken. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; s->tab[j].addr; j = (j + 1) & mask) {
        size_t hj = home(mix(s->tab[j].addr), s->cap);
        if (((j - hj) & mask) >= ((j - hole) & mask)) {
            s->tab[hole] = s->tab[j];
            hole = j;
        }
    }
    s->tab[hole].addr = 0;
    s->used--;
    stripe_unlock(s);
    return true;
}

/* ---- accounting ---- */

/* The thread to charge, with STROBE__BUSY_IN set; NULL when the call is
 * not the program's (the runtime's own, a thread not measured) or the
 * runtime is not recording. */
static struct strobe__thread *charge_begin(void)
{
    if (strobe__mem_quiet || resolving || !strobe__active())
        return NULL;
    struct strobe__tls *tl = &strobe__tls;
    struct strobe__thread *t = tl->t;
    if (STROBE_UNLIKELY(!t)) {
        /* a thread the runtime has not seen yet (C11 threads, threads
         * started before it): measured from here on */
        if (tl->state != STROBE__TLS_NONE || !(t = strobe__thread_current()))
            return NULL;
    }
    /* not strobe__event_ok: allocations are tracked while recording is
     * paused (a block allocated before a pause may be freed during it) and
     * beyond the depth limit; only the runtime's own work is not */
    if (__atomic_load_n(&t->busy, __ATOMIC_RELAXED) & STROBE__BUSY_IN)
        return NULL;
    strobe__busy_set(t, STROBE__BUSY_IN);
    return t;
}

/* The innermost open region's profile node, NULL without a profile. */
static struct strobe_prof_node *path_node(struct strobe__thread *t)
{
    return (t->mode & STROBE__MODE_PROFILE) ? t->sp[-1].node : NULL;
}

static void alloc_record(struct strobe__thread *t, unsigned op, unsigned call, uintptr_t addr, uint64_t size)
{
    uint8_t payload[32], *q = payload;
    q = strobe_uleb_put(q, op);
    q = strobe_uleb_put(q, call);
    q = strobe_uleb_put(q, addr);
    q = strobe_uleb_put(q, size);
    strobe__ext_record(t, STROBE_EXT_ALLOC, strobe__now(t), payload, (size_t)(q - payload));
}

/* Threads publish their change of the live bytes in steps of this much:
 * one shared counter updated by every call of every thread costs far more
 * than the rest of the tracking (docs/performance.md). */
#define LIVE_BATCH (64 * 1024)

/* This thread's change of the live bytes not yet in MEM->live. */
static __thread int64_t pending_live __attribute__((tls_model("initial-exec")));

/* live += add - sub: at once while single-threaded, else through this
 * thread's pending change. Returns the live bytes after a change of the
 * shared counter, 0 when it did not change. */
static uint64_t live_change(uint64_t add, uint64_t sub)
{
    _Atomic uint64_t *live = &MEM->live;
    if (solo()) {
        uint64_t v = atomic_load_explicit(live, memory_order_relaxed) + add - sub;
        atomic_store_explicit(live, v, memory_order_relaxed);
        return v;
    }
    int64_t p = pending_live + (int64_t)(add - sub);
    if (p < LIVE_BATCH && p > -LIVE_BATCH) {
        pending_live = p;
        return 0;
    }
    pending_live = 0;
    return atomic_fetch_add_explicit(live, (uint64_t)p, memory_order_relaxed) + (uint64_t)p;
}

static STROBE_NOINLINE void raise_peak(struct strobe__thread *t, uint64_t live)
{
    struct strobe__mem *m = MEM;
    uint64_t now = strobe__now(t);
    uint64_t peak = atomic_load_explicit(&m->peak, memory_order_relaxed);
    if (solo()) {
        atomic_store_explicit(&m->peak, live, memory_order_relaxed);
        atomic_store_explicit(&m->peak_ticks, now, memory_order_relaxed);
        return;
    }
    while (live > peak)
        if (atomic_compare_exchange_weak_explicit(&m->peak, &peak, live, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            /* Two threads raising the peak at once may store their times
             * in either order: the time is that of a peak within the race. */
            atomic_store_explicit(&m->peak_ticks, now, memory_order_relaxed);
            return;
        }
}

/* A block of the program's: into the table, its path's metric, the live
 * bytes and their peak, and a timeline record when large. */
static STROBE_NOINLINE void track(void *p, size_t size, unsigned call)
{
    struct strobe__mem *m = MEM;
    struct strobe__thread *t = charge_begin();
    if (!t)
        return;
    struct strobe_prof_node *node = path_node(t);
    struct strobe__mem_entry e = {.addr = (uintptr_t)p, .size = size, .thread = t->index};
    if (node && node != &t->overflow_node)
        e.slot_plus1 = (uint32_t)(node - t->slots) + 1;
    uint64_t stale;
    if (!table_put(&e, &stale)) {
        atomic_fetch_add_explicit(&m->untracked, 1, memory_order_relaxed);
        strobe__busy_clear(t, STROBE__BUSY_IN);
        return;
    }
    uint64_t live = live_change(size, stale);
    if (STROBE_UNLIKELY(live > atomic_load_explicit(&m->peak, memory_order_relaxed)))
        raise_peak(t, live);
    if (node)
        strobe__prof_metric(t, node, m->alloc_metric.id, (int64_t)size);
    if (STROBE_UNLIKELY(size >= m->large))
        alloc_record(t, STROBE_ALLOC_ALLOC, call, e.addr, size);
    strobe__busy_clear(t, STROBE__BUSY_IN);
}

/* A tracked block e is gone: live bytes, the freeing path's metric, a
 * timeline record when large. */
static void account_free(const struct strobe__mem_entry *e, unsigned call)
{
    struct strobe__mem *m = MEM;
    live_change(0, e->size);
    struct strobe__thread *t = charge_begin();
    if (!t)
        return;
    struct strobe_prof_node *node = path_node(t);
    if (node)
        strobe__prof_metric(t, node, m->free_metric.id, (int64_t)e->size);
    if (STROBE_UNLIKELY(e->size >= m->large))
        alloc_record(t, STROBE_ALLOC_FREE, call, e->addr, e->size);
    strobe__busy_clear(t, STROBE__BUSY_IN);
}

static STROBE_NOINLINE void untrack(void *p, unsigned call)
{
    struct strobe__mem_entry e;
    if (!strobe__mem_quiet && table_take((uintptr_t)p, &e))
        account_free(&e, call);
}

static bool tracking(void)
{
    return STROBE_UNLIKELY(atomic_load_explicit(&MEM->on, memory_order_relaxed));
}

/* ---- the interposed functions ---- */

STROBE_API void *malloc(size_t size)
{
    struct strobe__mem *m = MEM;
    if (!READY(m))
        return arena_alloc(size, 16);
    void *p = m->malloc(size);
    if (tracking() && p)
        track(p, size, STROBE_ALLOC_MALLOC);
    return p;
}

/* Our own malloc, whatever the lookup order makes of the name (start-up
 * checks the program uses it). */
extern void *strobe__own_malloc(size_t) __attribute__((alias("malloc"), visibility("hidden"), copy(malloc)));

STROBE_API void free(void *p)
{
    struct strobe__mem *m = MEM;
    if (!p || in_arena(p))
        return;
    if (!READY(m))
        return; /* cannot happen: p came from the C library, so it was found */
    /* Out of the table before the C library may hand the address out again. */
    if (tracking())
        untrack(p, STROBE_ALLOC_FREE_CALL);
    m->free(p);
}

STROBE_API void *calloc(size_t n, size_t size)
{
    struct strobe__mem *m = MEM;
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    if (!READY(m))
        return arena_alloc(bytes, 16);
    void *p = m->calloc(n, size);
    if (tracking() && p)
        track(p, bytes, STROBE_ALLOC_CALLOC);
    return p;
}

/* realloc counts as the free of the old block and the allocation of the
 * new one, both at the calling path. */
static STROBE_NOINLINE void *realloc_tracked(struct strobe__mem *m, void *p, size_t size)
{
    struct strobe__mem_entry e;
    bool had = p && !strobe__mem_quiet && table_take((uintptr_t)p, &e);
    void *q = m->realloc(p, size);
    if (!q && (size != 0 || !p)) { /* failed: p is still the program's */
        uint64_t stale;
        if (had && !table_put(&e, &stale))
            atomic_fetch_add_explicit(&m->untracked, 1, memory_order_relaxed);
        return NULL;
    }
    if (had)
        account_free(&e, STROBE_ALLOC_REALLOC);
    if (q)
        track(q, size, STROBE_ALLOC_REALLOC);
    return q;
}

STROBE_API void *realloc(void *p, size_t size)
{
    struct strobe__mem *m = MEM;
    if (in_arena(p)) { /* an arena block moves to the C library's heap (or the arena) */
        void *q = READY(m) ? malloc(size) : arena_alloc(size, 16);
        if (q) {
            size_t old = arena_size(p);
            memcpy(q, p, old < size ? old : size);
        }
        return q;
    }
    if (!READY(m)) {
        if (!p)
            return arena_alloc(size, 16);
        errno = ENOMEM; /* a C library block while its realloc is unknown: cannot happen */
        return NULL;
    }
    if (tracking())
        return realloc_tracked(m, p, size);
    return m->realloc(p, size);
}

STROBE_API void *reallocarray(void *p, size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, bytes);
}

STROBE_API int posix_memalign(void **out, size_t align, size_t size)
{
    struct strobe__mem *m = MEM;
    if (!READY(m)) {
        void *p = arena_alloc(size, align);
        if (!p)
            return ENOMEM;
        *out = p;
        return 0;
    }
    if (!m->posix_memalign)
        return ENOMEM; /* a C library without it */
    int rc = m->posix_memalign(out, align, size);
    if (tracking() && rc == 0)
        track(*out, size, STROBE_ALLOC_MEMALIGN);
    return rc;
}

/* aligned_alloc, memalign, valloc, pvalloc: the C library's, counted;
 * ENOMEM from a C library that lacks the function. */
static void *aligned_common(void *(*f)(size_t, size_t), void *(*g)(size_t), size_t align, size_t size)
{
    struct strobe__mem *m = MEM;
    if (!READY(m))
        return arena_alloc(size, align);
    if (!(f || g)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = f ? f(align, size) : g(size);
    if (tracking() && p)
        track(p, size, STROBE_ALLOC_MEMALIGN);
    return p;
}

STROBE_API void *aligned_alloc(size_t align, size_t size)
{
    return aligned_common(READY(MEM) ? MEM->aligned_alloc : NULL, NULL, align, size);
}

STROBE_API void *memalign(size_t align, size_t size)
{
    return aligned_common(READY(MEM) ? MEM->memalign : NULL, NULL, align, size);
}

STROBE_API void *valloc(size_t size)
{
    return aligned_common(NULL, READY(MEM) ? MEM->valloc : NULL, 4096, size);
}

STROBE_API void *pvalloc(size_t size)
{
    return aligned_common(NULL, READY(MEM) ? MEM->pvalloc : NULL, 4096, size);
}

/* Anonymous mappings are allocations of their length. Before the C
 * library's mmap is known (inside dlsym) the system call serves. */
STROBE_API void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    struct strobe__mem *m = MEM;
    if (STROBE_UNLIKELY(resolving) || !READY(m) || !m->mmap)
        return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    void *p = m->mmap(addr, len, prot, flags, fd, off);
    if (tracking() && p != MAP_FAILED && (flags & MAP_ANONYMOUS))
        track(p, len, STROBE_ALLOC_MMAP);
    return p;
}

/* Large-file programs call mmap64: the same function on 64-bit Linux. */
STROBE_API void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));

/* Unmapping the start of a tracked mapping frees it, or the unmapped
 * pages of it (its start moves up); other partial unmaps are not seen. */
STROBE_API int munmap(void *addr, size_t len)
{
    struct strobe__mem *m = MEM;
    if (STROBE_UNLIKELY(resolving) || !READY(m) || !m->munmap)
        return (int)syscall(SYS_munmap, addr, len);
    struct strobe__mem_entry e;
    if (tracking() && !strobe__mem_quiet && table_take((uintptr_t)addr, &e)) {
        size_t page = 4096, cut = (len + page - 1) & ~(page - 1);
        if (cut >= e.size) {
            account_free(&e, STROBE_ALLOC_MUNMAP);
        } else {
            uint64_t stale;
            live_change(0, cut);
            e.addr += cut;
            e.size -= cut;
            if (!table_put(&e, &stale))
                atomic_fetch_add_explicit(&m->untracked, 1, memory_order_relaxed);
        }
    }
    return m->munmap(addr, len);
}

/* ---- life cycle ---- */

void strobe__mem_config_locked(void)
{
    struct strobe__mem *m = MEM;
    if (atomic_load_explicit(&m->on, memory_order_relaxed))
        strobe__defs_malloc(STROBE_MALLOC_CONFIG, &m->large, 1);
}

/* A thread's pending change goes into the shared counter before it ends
 * (strobe_adapter_at_thread_end: on the thread, while it is measured). */
static void flush_pending(int process_exit)
{
    (void)process_exit;
    int64_t p = pending_live;
    if (!p)
        return;
    pending_live = 0;
    uint64_t live = atomic_fetch_add_explicit(&MEM->live, (uint64_t)p, memory_order_relaxed) + (uint64_t)p;
    struct strobe__thread *t = strobe__tls.t;
    if (t && live > atomic_load_explicit(&MEM->peak, memory_order_relaxed))
        raise_peak(t, live);
}

void strobe__mem_start(void)
{
    struct strobe__runtime *rt = &strobe__rt;
    struct strobe__mem *m = &rt->mem;
    if (!rt->cfg.malloc || !READY(m))
        return;
    void *first = dlsym(RTLD_DEFAULT, "malloc");
    if (first != (void *)&strobe__own_malloc) {
        Dl_info who;
        const char *lib = first && dladdr(first, &who) && who.dli_fname ? who.dli_fname : "another library";
        strobe__say("STROBE_MALLOC: the program's malloc is the one of ", lib,
                    ", loaded before libstrobe (a sanitizer runtime?): allocations are not measured",
                    (char *)NULL);
        return;
    }
    m->large = rt->cfg.malloc_large;
    m->alloc_metric = (strobe_metric_t)STROBE_METRIC_INIT("strobe.alloc", "bytes");
    m->free_metric = (strobe_metric_t)STROBE_METRIC_INIT("strobe.free", "bytes");
    uint32_t id;
    if (strobe__metric_of_handle(&m->alloc_metric, &id) || strobe__metric_of_handle(&m->free_metric, &id) ||
        strobe_adapter_at_thread_end(flush_pending) != 0)
        return;
    atomic_store_explicit(&m->on, true, memory_order_relaxed);
    pthread_mutex_lock(&rt->lock);
    strobe__mem_config_locked();
    pthread_mutex_unlock(&rt->lock);
}

/* blocks and bytes live at exit per allocating path */
struct live_site {
    uint32_t thread, slot_plus1;
    uint64_t blocks, bytes;
    bool used;
};

void strobe__mem_finish_locked(void)
{
    struct strobe__mem *m = MEM;
    if (!atomic_exchange_explicit(&m->on, false, memory_order_relaxed))
        return;
    size_t n = 0;
    for (unsigned i = 0; i < STROBE__MEM_STRIPES; i++) {
        stripe_lock(&m->stripes[i]);
        n += m->stripes[i].used;
    }
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    strobe__mem_quiet++;
    struct live_site *sites = strobe__pages_alloc(cap * sizeof *sites);
    uint64_t blocks = 0, bytes = 0, lost = 0;
    for (unsigned i = 0; i < STROBE__MEM_STRIPES; i++) {
        const struct strobe__mem_stripe *s = &m->stripes[i];
        for (size_t k = 0; k < s->cap; k++) {
            const struct strobe__mem_entry *e = &s->tab[k];
            if (!e->addr)
                continue;
            blocks++;
            bytes += e->size;
            if (!sites) {
                lost++;
                continue;
            }
            uint64_t key = (uint64_t)e->thread << 32 | e->slot_plus1;
            size_t j = (size_t)(mix((uintptr_t)key << 4) >> 16) & (cap - 1);
            while (sites[j].used && (sites[j].thread != e->thread || sites[j].slot_plus1 != e->slot_plus1))
                j = (j + 1) & (cap - 1);
            sites[j].used = true;
            sites[j].thread = e->thread;
            sites[j].slot_plus1 = e->slot_plus1;
            sites[j].blocks++;
            sites[j].bytes += e->size;
        }
    }
    for (unsigned i = 0; i < STROBE__MEM_STRIPES; i++)
        stripe_unlock(&m->stripes[i]);
    uint64_t summary[5] = {atomic_load_explicit(&m->peak, memory_order_relaxed),
                           atomic_load_explicit(&m->peak_ticks, memory_order_relaxed), bytes, blocks,
                           atomic_load_explicit(&m->untracked, memory_order_relaxed) + lost};
    strobe__defs_malloc(STROBE_MALLOC_SUMMARY, summary, 5);
    for (size_t j = 0; sites && j < cap; j++)
        if (sites[j].used) {
            uint64_t v[4] = {sites[j].thread, sites[j].slot_plus1, sites[j].blocks, sites[j].bytes};
            strobe__defs_malloc(STROBE_MALLOC_LIVE, v, 4);
        }
    strobe__pages_free(sites, cap * sizeof *sites);
    strobe__mem_quiet--;
}

void strobe__mem_atfork_prepare(void)
{
    strobe__mem_quiet++;
    for (unsigned i = 0; i < STROBE__MEM_STRIPES; i++)
        stripe_lock(&MEM->stripes[i]);
}

void strobe__mem_atfork_parent(void)
{
    for (unsigned i = 0; i < STROBE__MEM_STRIPES; i++)
        stripe_unlock(&MEM->stripes[i]);
    strobe__mem_quiet--;
}

void strobe__mem_atfork_child(void)
{
    struct strobe__mem *m = MEM;
    for (unsigned i = 0; i < STROBE__MEM_STRIPES; i++) {
        struct strobe__mem_stripe *s = &m->stripes[i];
        strobe__pages_free(s->tab, s->cap * sizeof *s->tab);
        s->tab = NULL;
        s->cap = s->used = 0;
        stripe_unlock(s);
    }
    atomic_store_explicit(&m->live, 0, memory_order_relaxed);
    atomic_store_explicit(&m->peak, 0, memory_order_relaxed);
    atomic_store_explicit(&m->peak_ticks, 0, memory_order_relaxed);
    atomic_store_explicit(&m->untracked, 0, memory_order_relaxed);
    strobe__mem_quiet--;
}

#else /* STROBE_TSAN */

void strobe__mem_start(void)
{
    if (strobe__rt.cfg.malloc)
        strobe__say("STROBE_MALLOC: this libstrobe is built with ThreadSanitizer, whose malloc cannot be "
                    "interposed: allocations are not measured",
                    (char *)NULL);
}

void strobe__mem_config_locked(void)
{
}

void strobe__mem_finish_locked(void)
{
}

void strobe__mem_atfork_prepare(void)
{
}

void strobe__mem_atfork_parent(void)
{
}

void strobe__mem_atfork_child(void)
{
}

#endif
