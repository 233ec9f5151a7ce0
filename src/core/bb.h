/* SPDX-License-Identifier: MIT */
/*
 * The runtime side of basic-block and memory tracing (`strobe cc
 * --trace=bb[,mem]`, common/bbtrace.h): the thread's cursor, the block
 * streams t<N>.bb it points into, module registration and the process's
 * `blocks` file (format.h, "Block streams" and "Block tables").
 *
 * The instrumented code writes its records inline at cursor.pos and calls
 * strobe_bb_refill only when a segment might not fit before cursor.limit.
 * A thread's stream is an mfile (same chunk size and size limit as its
 * t<N>.evt), created at the thread's first refill; each new chunk resets
 * the delta state of every registered module and the cursor's last_id
 * (format.h: every chunk decodes alone). A thread without a stream (not measured, over its size
 * limit, runtime off or finished) gets the cursor's scratch area, which
 * is never read; its limit is the scratch's end, so the scratch is reused.
 *
 * The cursor is also the only way into the stream: the runtime writes
 * its MARK records at cursor.pos, on the thread itself.
 */
#ifndef STROBE_CORE_BB_H
#define STROBE_CORE_BB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/bbtrace.h"
#include "core/mfile.h"

/* Modules a process can register (a program with more instrumented
 * objects than this has the rest's blocks unrecorded, said once). */
#define STROBE__BB_MAX_MODULES 4096u

struct strobe__thread;

/* A thread's block stream (in struct strobe__thread). */
struct strobe__bb_stream {
    struct strobe__mfile file;       /* t<N>.bb; fd -1 when there is none */
    struct strobe_bb_cursor *cursor; /* the thread's (TLS), known from its first refill */
    uint8_t *pos;                    /* stream position while the cursor is on scratch */
    bool stopped;                    /* no stream any more (limit, error): scratch only */
};

/* Process-wide state (in strobe__rt). `modules` and `nmodules` are read
 * without the lock by every chunk switch (the resets); registration
 * appends under strobe__rt.lock and publishes with a release store. */
struct strobe__bb {
    const struct strobe_bb_module *modules[STROBE__BB_MAX_MODULES];
    uint32_t first_id[STROBE__BB_MAX_MODULES];
    _Atomic uint32_t nmodules;
    /* ---- under strobe__rt.lock ---- */
    uint32_t next_id; /* the next module's first id - 1 */
    /* Recording of blocks ended for the process (a module could not be
     * registered; said once). Also read, relaxed, by refill. */
    bool off;
    struct strobe__mfile tables; /* proc-<pid>/blocks, fd -1 until the first registration */
    uint8_t *tables_pos;
};

/* Writes a MARK with `ticket` into the calling thread's block stream (t
 * must be the calling thread's state), creating the stream when the
 * process has modules traced by blocks and the thread none yet; nothing
 * when the thread's blocks are not recorded. Called by the synchronization
 * recorder (sync.c) with the ticket of the SYNC or THREAD_CREATE/JOIN
 * record it writes. Not with strobe__rt.lock held, and not
 * async-signal-safe: it may switch chunks under that lock. */
void strobe__bb_mark(struct strobe__thread *t, uint64_t ticket);

/* Thread end (caller holds strobe__rt.lock): truncates and closes t's
 * stream; when t is the calling thread, its cursor goes back to NULL so
 * that later segments land in the scratch area. */
void strobe__bb_close(struct strobe__thread *t);

/* Process exit (caller holds the lock; the state is FINISHED, so no
 * module registers any more): cuts the `blocks` file to its data. */
void strobe__bb_finish_locked(void);

/* fork child: forgets t's stream without touching it (the parent's file). */
void strobe__bb_abandon(struct strobe__thread *t);

/* fork child, on its only thread, before anything else: the cursor leaves
 * the parent's mapping (its next segment opens a stream of the child). */
void strobe__bb_atfork_child_cursor(void);

/* fork child, once its process directory exists (caller holds the lock):
 * writes the child's `blocks` with every module the parent registered. */
int strobe__bb_atfork_child_tables(void);

#endif
