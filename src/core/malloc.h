/* SPDX-License-Identifier: MIT */
/*
 * Allocation tracking (`strobe run --malloc`, STROBE_MALLOC=1): the
 * runtime's malloc, calloc, realloc, reallocarray, free, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc, mmap and munmap (anonymous
 * mappings are allocations) call the C library's and, when tracking is on,
 * account each block:
 *   - per allocating call path (the innermost open region's profile node):
 *     the profile metrics "strobe.alloc" (count = blocks, sum = bytes) and,
 *     at the freeing call path, "strobe.free";
 *   - process-wide: the live bytes, their peak and when it was reached;
 *   - at exit, the blocks still live per allocating path (defs MALLOC
 *     records), found in a table of every live block keyed by address;
 *   - blocks >= STROBE_MALLOC_LARGE as ALLOC records in the thread's stream.
 *
 * The live-block table is shared by all threads (a block may be freed by
 * any thread): STRIPES independent open-addressing tables, each behind a
 * spinlock held for a few instructions. A header in front of each block
 * would avoid the lookup, but breaks the alignment memalign promises and
 * malloc_usable_size, and a block allocated before tracking began would
 * be freed with a garbage header; docs/performance.md has the table's cost.
 *
 * Recursion: dlsym, which finds the C library's functions, itself calls
 * calloc; until they are found, blocks come from a small bootstrap arena
 * whose free is a no-op. The runtime's own allocations are not counted:
 * they happen with the thread's busy flag set, in a thread that is not
 * measured (yet or any more), or, for the runtime's pages (util.c), with
 * strobe__mem_quiet raised.
 */
#ifndef STROBE_CORE_MALLOC_H
#define STROBE_CORE_MALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "strobe/strobe.h"

#define STROBE__MEM_STRIPES 64u
#define STROBE__MEM_ARENA (64u * 1024)
#define STROBE__MEM_LARGE_DEFAULT (1ull << 20)

struct strobe__mem_entry {
    uintptr_t addr; /* 0 = empty */
    uint64_t size;
    uint32_t thread;     /* t<N> of the allocating thread */
    uint32_t slot_plus1; /* its profile slot of the allocating path + 1, 0 = unknown */
};

struct strobe__mem_stripe {
    _Alignas(64) _Atomic int lock;
    struct strobe__mem_entry *tab; /* strobe__pages_alloc'ed, cap entries */
    size_t cap, used;
};

struct strobe__mem {
    /* the C library's functions; `ready` is set once the first four are found */
    _Atomic int ready;
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    int (*munmap)(void *, size_t);

    /* tracking is on (STROBE_MALLOC, runtime active): read on every call */
    _Atomic bool on;
    uint64_t large; /* STROBE_MALLOC_LARGE */
    strobe_metric_t alloc_metric, free_metric;

    _Alignas(64) _Atomic uint64_t live; /* bytes in tracked blocks */
    _Atomic uint64_t peak;              /* largest value of live */
    _Atomic uint64_t peak_ticks;        /* when it was reached */
    _Atomic uint64_t untracked;         /* blocks the table had no room for */

    struct strobe__mem_stripe stripes[STROBE__MEM_STRIPES];

    _Alignas(16) unsigned char arena[STROBE__MEM_ARENA];
    _Atomic size_t arena_used;
};

/* > 0 while the runtime allocates its own pages: not counted. */
extern __thread unsigned strobe__mem_quiet __attribute__((tls_model("initial-exec")));

/* Start-up, after defs exist and the lock is released: with cfg.malloc,
 * registers the metrics, writes the CONFIG record and turns tracking on
 * (the caller then sets the runtime ACTIVE, which recording also needs).
 * Says so in one line when another library's malloc precedes ours (a
 * sanitizer runtime): nothing can be tracked then. */
void strobe__mem_start(void);

/* The CONFIG record when tracking is on (caller holds the lock). */
void strobe__mem_config_locked(void);

/* Process exit (caller holds the lock, runtime FINISHED): turns tracking
 * off and writes the SUMMARY and LIVE records. */
void strobe__mem_finish_locked(void);

/* fork(): prepare takes every stripe lock (so the child inherits
 * consistent tables; the forking thread's own allocations meanwhile, from
 * other fork handlers, are not counted), parent releases them; the child
 * releases them and forgets the parent's blocks (their frees pass through
 * untracked) and its counters: the child's accounting starts afresh. */
void strobe__mem_atfork_prepare(void);
void strobe__mem_atfork_parent(void);
void strobe__mem_atfork_child(void);

#endif
