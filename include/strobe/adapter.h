/* SPDX-License-Identifier: MIT */
/*
 * The adapter interface of libstrobe.so: how strobe's own event sources
 * (the TM runtime libstrobe-tm, later the MPI and OpenMP adapters) record
 * into the running experiment. Applications use <strobe/strobe.h>.
 *
 * Regions here are named by a code address, like the functions of
 * -finstrument-functions, and resolved to names and file:line offline.
 * Every function returns 0, -EINVAL for bad arguments, or
 * STROBE_ERR_DISABLED when the process is not measured; all are
 * thread-safe and cheap enough for per-event use.
 */
#ifndef STROBE_ADAPTER_H
#define STROBE_ADAPTER_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enters / leaves the region of the code at addr, of the given kind (enum
 * strobe_region_kind of the trace format: STROBE_REGION_FUNCTION or
 * STROBE_REGION_TM_ATOMIC). Leaving a region that is not the innermost
 * one leaves the regions above it first. */
STROBE_API int strobe_code_region_enter(uintptr_t addr, unsigned kind);
STROBE_API int strobe_code_region_exit(uintptr_t addr, unsigned kind);

/* Leaves, at the current time, every region entered after the innermost
 * open region of addr, which stays open (an aborted transaction's
 * functions end when it rolls back). -ENOENT when addr's region is not
 * open. */
STROBE_API int strobe_code_region_rewind(uintptr_t addr);

/* Registers the annotation handle `region` (strobe.h) as a region of
 * `kind`, named by its descriptor (name, file, line) like an annotation:
 * the directive instrumenter's OpenMP constructs ("omp parallel@main"),
 * whose kind reports and exports show. Call it before the handle's first
 * strobe_region_enter; a handle already registered keeps its kind.
 * -EINVAL for a kind named by code addresses only (function, MPI). */
STROBE_API int strobe_region_define(strobe_region_t *region, unsigned kind);

/* Appends a typed event (an EXT record of docs/formats/trace.md, type
 * STROBE_EXT_TM and up, payload at most 256 bytes) to the calling thread's
 * stream with the current time. Nothing is recorded when tracing is off. */
STROBE_API int strobe_event_record(unsigned type, const uint8_t *payload, size_t len);

/* The same with the time `ticks` (from strobe_adapter_ticks, taken on
 * this thread after its previous record): for an event whose time is
 * known before it can be recorded (the TM runtime records a commit's
 * LOCKED only once it has released its locks). A time before the
 * previous record's is recorded as that record's. */
STROBE_API int strobe_event_record_at(unsigned type, const uint8_t *payload, size_t len, uint64_t ticks);

/* Appends a definition record of an adapter's type (a defs record of
 * docs/formats/trace.md; today STROBE_DEF_MPI_COMM and STROBE_DEF_CLOCK_OFFSET, payload at most
 * 2048 bytes) to the process's defs, so that readers know the definition
 * before any event uses it. -EINVAL for another type or size. */
STROBE_API int strobe_adapter_define(unsigned type, const uint8_t *payload, size_t len);

/* The current time in the clock of the calling thread's stream (the
 * ticks of docs/formats/trace.md; 0 when the thread is not measured). For
 * durations carried in event payloads. */
STROBE_API uint64_t strobe_adapter_ticks(void);

/* The calling thread's number in the experiment (N of t<N>). */
STROBE_API int strobe_thread_index(uint32_t *index);

/* ---- Counting per call path without an event each --------------------
 * An adapter that wants counts per call path but cannot afford two events
 * per occurrence (the TM runtime's "stats" level: a transaction costs
 * less than two events) takes the current call path when the occurrence
 * starts, counts in its own state, and adds the totals to the profile
 * later, on the same thread, before its measurement ends. Such regions
 * have visits and metrics but no time, and appear in the profile only
 * (not in the trace). */

/* The calling thread's current call path, as an opaque handle: non-zero,
 * valid on this thread until its measurement ends. 0 when the thread is
 * not measured or keeps no profile. No clock read, no record. */
STROBE_API uint64_t strobe_adapter_path(void);

/* Leaves, at the current time, every region entered after `path` was the
 * current call path (the frames of an aborted transaction, which never
 * returned from them). */
STROBE_API int strobe_adapter_rewind(uint64_t path);

/* Totals of a metric over several occurrences: as many samples as
 * `count`, whose sum, smallest and largest value are given. */
struct strobe_metric_samples {
    strobe_metric_t *metric;
    uint64_t count;
    int64_t sum, min, max;
};

/* Adds `visits` visits of the region of the code at addr (of kind `kind`)
 * below the call path `path` of the calling thread's profile, and the n
 * metric totals to that region's call path. The thread must be the one
 * that took `path`. */
STROBE_API int strobe_code_region_count(uint64_t path, uintptr_t addr, unsigned kind, uint64_t visits,
                                        const struct strobe_metric_samples *metrics, size_t n);

/* Registers fn to be called on every measured thread just before its
 * measurement ends: at its exit with process_exit 0, and on the thread
 * that ends the process (exit() or main's return: from libstrobe.so's
 * destructor, before the experiment is closed) with process_exit 1. The
 * last moment to add counts to the thread's profile or records to its
 * stream. At most 8 functions per process; -ENOSPC beyond. */
STROBE_API int strobe_adapter_at_thread_end(void (*fn)(int process_exit));

/* ---- Synchronization for the task graph ------------------------------
 * An adapter whose runtime synchronizes threads without the pthread calls
 * libstrobe interposes (OpenMP's libomp spins and uses futexes) reports
 * its constructs here, so that `strobe taskgraph` orders them like the
 * interposed calls. Each call writes a SYNC record (docs/formats/trace.md)
 * with a ticket and marks it in the thread's block stream, when task-graph
 * recording is on (STROBE_LOCKS=all, `strobe run --taskgraph`, or code of
 * `strobe cc --trace=bb`) and the calling thread is measured; otherwise it
 * records nothing and returns STROBE_ERR_DISABLED. `site` is the code
 * address of the construct (0: unknown), resolved to its source line.
 * Times are ticks of strobe_adapter_ticks. Thread-safe; not
 * async-signal-safe. */

/* Whether the calls below record on this thread: 1 yes, 0 no. One relaxed
 * load when off. */
STROBE_API int strobe_sync_recording(void);

/* The calling thread forks a team of `team_size` threads (asked for): call
 * it before any of them starts. *team receives the team's id (non-zero,
 * unique in the process) for the calls below. */
STROBE_API int strobe_sync_fork(uintptr_t site, unsigned team_size, uint64_t *team);

/* Thread `index` (>= 1; the forking thread is 0 and calls nothing) begins
 * its part of `team`: the task graph links it to the fork. */
STROBE_API int strobe_sync_team_begin(uint64_t team, unsigned index, unsigned team_size);

/* The calling thread arrives at a barrier of `team` and will wait;
 * *ticks receives the arrival's time. */
STROBE_API int strobe_sync_team_arrive(uint64_t team, uintptr_t site, uint64_t *ticks);

/* ... and leaves it, the team's `episode`-th barrier (from 1: every
 * thread of the team counts the same barriers), where it arrived at
 * `since` ticks. The forking thread leaving the team's last barrier is
 * the join. */
STROBE_API int strobe_sync_team_barrier(uint64_t team, uint64_t episode, uint64_t since, uintptr_t site);

/* The calling thread has acquired the mutual-exclusion object `object`
 * (an address: a critical section's lock, an OpenMP lock), having asked
 * for it at `since` ticks (0: it did not wait). Counted like a mutex. */
STROBE_API int strobe_sync_acquired(uintptr_t object, uint64_t since, uintptr_t site);

/* ... and releases it (call it before another thread can acquire it, or
 * as soon after as the adapter learns of it). */
STROBE_API int strobe_sync_released(uintptr_t object);

#ifdef __cplusplus
}
#endif

#endif /* STROBE_ADAPTER_H */
