/* SPDX-License-Identifier: MIT */
/*
 * Per-thread measurement state and its life cycle.
 *
 * Each measured thread owns one struct strobe__thread, allocated with mmap
 * (never malloc: it may be created inside a signal handler or inside the
 * program's own allocator) and reached through one initial-exec TLS
 * pointer. Only the first cache line is touched by every event; the
 * direct-mapped function cache follows it. Everything in it is accessed by
 * its own thread only, except at fork() (the child, single-threaded, walks
 * the list) and through the process lock where noted.
 *
 * Call stack: frames[0] is a sentinel standing for the profile root (key
 * 0, which no function or region handle has), so the innermost open
 * region is always sp[-1] and the hot path never tests for an empty
 * stack. The stack grows with mremap, under the process lock so that a
 * fork child sees consistent pointers.
 *
 * Re-entrancy: `busy` is set while the runtime works for this thread. An
 * event arriving while it is set comes from a signal handler that
 * interrupted the runtime (or from code the runtime itself called): it is
 * skipped and counted in the stream header's `dropped`, so the half-written
 * event is never corrupted. Both the enter and the exit of such a handler's
 * functions fall inside the interrupted window, so skipping keeps the
 * nesting balanced.
 */
#ifndef STROBE_CORE_THREAD_H
#define STROBE_CORE_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/format.h"
#include "core/bb.h"
#include "core/mfile.h"
#include "core/sample.h"

/* Direct-mapped cache of function address -> region id: 1024 entries of
 * 16 bytes (16 KiB, a third of L1D). Slot = (addr >> 4): functions are at
 * least 16 bytes apart, so 16 KiB of contiguous code never collides. */
#define STROBE__CACHE_BITS 10
#define STROBE__CACHE_SIZE (1u << STROBE__CACHE_BITS)

static inline uint32_t strobe__cache_slot(uintptr_t addr)
{
    return (uint32_t)(addr >> 4) & (STROBE__CACHE_SIZE - 1);
}

struct strobe__cache_entry {
    uintptr_t addr; /* 0 = empty (no function lives at address 0) */
    uint32_t id;    /* region id, 0 = excluded by the filter */
    uint32_t unused;
};

struct strobe__frame {
    uintptr_t key;                 /* function address or region handle address */
    uint64_t start;                /* ticks at entry */
    struct strobe_prof_node *node; /* profile node (valid when profiling) */
    uint32_t region;
    uint32_t unused; /* STROBE__HIDDEN_KEY frames: how many they stand for */
};

/* mode bits */
#define STROBE__MODE_TRACE 1u
#define STROBE__MODE_PROFILE 2u
#define STROBE__MODE_MONO 4u /* ticks from CLOCK_MONOTONIC instead of rdtsc */
#define STROBE__MODE_SYNC 8u /* record lock and barrier calls (sync.c, STROBE_LOCKS) */

/* busy bits: any bit sends the event to the slow path */
#define STROBE__BUSY_IN 1u   /* the runtime is working for this thread */
#define STROBE__BUSY_DEEP 2u /* frames beyond the stack limit are open */
#define STROBE__BUSY_HIDDEN 4u /* frames entered while paused may be open (pause.h) */

/* Key of a frame that stands for `count` (its `unused` field) frames
 * entered while recording was paused, pushed when a recorded frame is
 * entered above them (pause.h). No function or handle has address 1. */
#define STROBE__HIDDEN_KEY ((uintptr_t)1)

/* Call depth limit: 2^20 frames (32 MiB of stack). A program nesting
 * deeper loses the events beyond (counted) rather than the runtime failing. */
#define STROBE__MAX_FRAMES (1u << 20)
#define STROBE__INITIAL_FRAMES 512u

/* Bytes the last chunk of a size-limited stream keeps free for the
 * THREAD_END record (1 + 10 + 1 + 7 * 10 = 82 bytes at most) after the last
 * ordinary event (STROBE_MAX_EVENT_BYTES). */
#define STROBE__TAIL_RESERVE 128u

/* A CHUNK record lists the open frames in at most this part of a chunk
 * (16 bytes a frame at most). Nested deeper at a chunk switch, a ring's
 * thread stops tracing there (its later events counted as dropped); any
 * other stream's CHUNK record gives only the depth (chunk_record). */
#define STROBE__CHUNK_STACK_SHARE 4u

struct strobe__profile {
    int fd;                         /* -1 when not open */
    struct strobe_prof_header *hdr; /* the whole reservation: hdr then slots */
    size_t map_len;
    uint32_t max_slots;  /* STROBE_PROFILE_LIMIT / 64 - 1 */
    uint32_t file_slots; /* slots the file has room for now */
};

struct strobe__thread {
    /* ---- hot: every event (one cache line) ---- */
    uint32_t busy;            /* STROBE__BUSY_*; relaxed atomic + signal fences */
    uint32_t mode;            /* STROBE__MODE_* */
    uint8_t *pos;             /* next byte of the event stream */
    uint8_t *limit;           /* pos > limit: slow path (chunk switch / drop) */
    uint64_t last_ticks;      /* time of the previous record */
    struct strobe__frame *sp; /* next free frame; sp[-1] is the innermost */
    struct strobe__frame *stack_end;
    struct strobe_prof_node *slots; /* profile slot 0 (the root) */
    uint32_t last_region;           /* region of the last ENTER (for ENTER_SAME) */
    uint32_t chunk_events;          /* without a profile: ENTER/EXIT records in the current chunk */

    struct strobe__cache_entry cache[STROBE__CACHE_SIZE] __attribute__((aligned(64)));

    /* ---- cold ---- */
    /* Frames entered while paused, open above the innermost frame on the
     * stack (pause.h); their exits are ignored. */
    uint32_t hidden;
    uint32_t index;              /* N of t<N> */
    uint64_t done_events;        /* chunk_events of the stream's earlier chunks */
    uint64_t done_bytes;         /* bytes of records in those chunks, padding excluded */
    uint64_t ext_records;        /* EXT records written */
    uint64_t lost_enter_exit;    /* with a profile: enters and exits visited but
                                    dropped from the stream (size limit) */
    uint64_t tail_offset;        /* stream offset of the process-exit records, 0 = none */
    uint64_t chunk_seq;          /* CHUNK records written */
    /* flight recorder (STROBE_MAX_SIZE): the stream is a ring of chunks */
    uint64_t ring_overwritten;   /* records of chunks written again: lost */
    uint64_t begin_ticks;        /* when its measurement began (THREAD_BEGIN) */
    _Atomic bool closed;         /* summarized at process exit: record no more */
    struct strobe__frame *stack; /* frames[0] = root sentinel */
    uint32_t stack_cap;          /* frames allocated */
    uint32_t lost_depth;         /* open frames beyond STROBE__MAX_FRAMES */
    uint32_t parent_plus1;       /* creator's index + 1, 0 = none */
    uint64_t tid;
    struct strobe__mfile evt;
    struct strobe__bb_stream bb; /* t<N>.bb (bb.c) */
    struct strobe__profile prof;
    /* Stands in for nodes the profile had no room for: its first_child is
     * always NONE, so children of it are looked up on the slow path, which
     * returns it again; exits update it harmlessly. */
    struct strobe_prof_node overflow_node;
    struct strobe__thread *next; /* strobe__rt.threads, under the lock */
    struct strobe__thread **prev_next;
    struct strobe__sync_state *sync; /* sync.c, allocated on the first lock call */
    struct strobe__sampler sampler;  /* sample.c */
    void *(*start)(void *); /* pthread_create trampoline */
    void *arg;
};

/* Thread-local handle. `state` tells an unregistered thread (NONE) from
 * one whose measurement ended (ENDED: after pthread_exit, in TLS
 * destructors, after exit()) so the latter is not registered again. */
enum {
    STROBE__TLS_NONE = 0,     /* not registered (yet) */
    STROBE__TLS_ACTIVE = 1,   /* t is valid */
    STROBE__TLS_ENDED = 2,    /* measurement of this thread is over */
    STROBE__TLS_STARTING = 3, /* being registered: events are ignored */
};
struct strobe__tls {
    struct strobe__thread *t;
    int state;
    /* TSan builds: prepared by pthread_create, attached on the first
     * event (interpose.c explains why). */
    struct strobe__thread *pending;
};
extern __thread struct strobe__tls strobe__tls __attribute__((tls_model("initial-exec")));

/* Allocates a thread (no files yet) with the given index and parent.
 * Returns NULL when out of memory. */
struct strobe__thread *strobe__thread_alloc(uint32_t index, uint32_t parent_plus1);

/* Frees a thread that was never attached (pthread_create failed). */
void strobe__thread_free(struct strobe__thread *t);

/* Runs on the thread itself: creates its files, writes THREAD_BEGIN and
 * makes it current. Returns 0 or a negative code (t is then freed and the
 * thread stays unmeasured). */
int strobe__thread_attach(struct strobe__thread *t);

/* The calling thread's state, registering it on first use (parent none;
 * thread index 0 for the process's main thread). NULL when the thread is
 * not measured (runtime off or finished, thread ended, out of resources).
 * Async-signal-safe in practice (system calls, the process lock). */
struct strobe__thread *strobe__thread_current(void);

/* Ends the calling thread's measurement: THREAD_END with its resource
 * usage, its summary and open frames in defs (format.h,
 * STROBE_DEF_THREAD_SUMMARY), files truncated and closed, state freed.
 * Later events of the thread are ignored. */
void strobe__thread_end(struct strobe__thread *t);

/* Process exit (state FINISHED, caller holds the lock): writes the summary
 * and open frames of every thread still in the list, which no longer
 * records anything, as ended at `end_ticks`. Their files stay as they are:
 * the process is about to end. */
void strobe__threads_summarize_at_exit(uint64_t end_ticks);

/* Runs the adapters' process-exit hooks on the exiting thread t, noting
 * where in its stream the records they write begin (tail_offset), so that
 * readers find them without decoding the stream. */
void strobe__thread_exit_hooks(struct strobe__thread *t);

/* ---- slow paths of the event recorder (thread.c) ---- */

/* Room for one more event (STROBE_MAX_EVENT_BYTES) in the stream: t->pos,
 * after switching chunk when the current one is full. NULL when the event
 * must be dropped (size limit, disk full); the drop is counted. Called
 * with STROBE__BUSY_IN set. */
uint8_t *strobe__trace_room(struct strobe__thread *t);

/* Counts an event that was not recorded, in the stream header. Safe
 * against a signal handler doing the same (atomic add). */
void strobe__count_dropped(struct strobe__thread *t, uint64_t n);

/* Makes room for one more frame. Returns false at the depth limit. */
bool strobe__stack_grow(struct strobe__thread *t);

/* Counts an ENTER or EXIT of the general path: written to the stream
 * (no profile: chunk_events) or dropped by it (profile: lost_enter_exit);
 * see summarize_locked in thread.c. */
static inline void strobe__count_enter_exit(struct strobe__thread *t, bool written)
{
    if (!(t->mode & STROBE__MODE_PROFILE))
        t->chunk_events += written;
    else
        t->lost_enter_exit += !written;
}

/* Appends an EXT record (format.h) with the given payload at time now.
 * Returns 0, or STROBE_ERR_LIMIT when it was dropped (counted). Called with
 * STROBE__BUSY_IN set. */
int strobe__ext_record(struct strobe__thread *t, unsigned type, uint64_t now, const uint8_t *payload,
                       size_t len);

/* The same for a signal handler (the sampler): -EAGAIN, nothing written,
 * when the record needs a chunk switch and another holder (perhaps the
 * interrupted code of this very thread) has the process lock. */
int strobe__ext_record_nowait(struct strobe__thread *t, unsigned type, uint64_t now, const uint8_t *payload,
                              size_t len);

/* Unmaps and closes every thread's files without touching them and forgets
 * all threads but `keep` (fork child; caller holds the lock inherited from
 * the parent's fork). */
void strobe__threads_abandon_after_fork(struct strobe__thread *keep);

/* Re-creates `t`'s files in the child's process directory as thread 0,
 * with an empty call stack: THREAD_BEGIN and a fresh profile. */
int strobe__thread_rebirth_after_fork(struct strobe__thread *t, uint64_t now);

/* pthread_t -> index map for THREAD_JOIN (caller holds lock). */
void strobe__join_map_put(pthread_t thread, uint32_t index);
bool strobe__join_map_take(pthread_t thread, uint32_t *index);

#endif
