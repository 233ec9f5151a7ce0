/* SPDX-License-Identifier: MIT */
/*
 * Per-thread call-path profile, kept directly in its file t<N>.prof
 * (format.h, "Profile"): a calling-context tree of 64-byte slots that the
 * hot path updates in place through a MAP_SHARED mapping, so the profile
 * of a killed process is as complete as its last event.
 *
 * The mapping reserves address space for the whole STROBE_PROFILE_LIMIT
 * up front while the file grows underneath it (blocks allocated in
 * doubling steps), so slot pointers never move and the hot path can hold
 * plain pointers to nodes. Slots are never freed.
 *
 * Crash consistency: a slot is filled before slot_count is raised past it
 * (release store), and the reader relies on `parent` links only, so a
 * sibling list caught mid-update by SIGKILL does no harm.
 *
 * All functions run on the owning thread with STROBE__BUSY_IN set.
 */
#ifndef STROBE_CORE_PROFILE_H
#define STROBE_CORE_PROFILE_H

#include <stdint.h>

#include "common/format.h"

struct strobe__thread;

/* Creates t<N>.prof with its root slot and points the stack sentinel at
 * it. Returns 0 or a negative errno. */
int strobe__profile_open(struct strobe__thread *t);

/* The child of `parent` for region `id`, created when missing and moved
 * to the front of the sibling list. When the slot limit is reached the
 * profile is flagged STROBE_PROF_OVERFLOW and the thread's overflow node
 * is returned: nothing is recorded below it, existing nodes keep counting. */
struct strobe_prof_node *strobe__prof_child(struct strobe__thread *t, struct strobe_prof_node *parent,
                                            uint32_t id);

/* Adds one sample of metric `metric` to `node` (count, sum, min, max). */
void strobe__prof_metric(struct strobe__thread *t, struct strobe_prof_node *node, uint32_t metric,
                         int64_t value);

/* Adds `count` samples of metric `metric` to `node` at once: their sum,
 * smallest and largest value. */
void strobe__prof_metric_samples(struct strobe__thread *t, struct strobe_prof_node *node, uint32_t metric,
                                 uint64_t count, int64_t sum, int64_t min, int64_t max);

/* A new SYNC slot (format.h) for `object` of `kind` used from call path
 * `node` (the overflow node counts as the root). NULL when the profile is
 * full. The caller keeps the pointer: slots never move. */
struct strobe_prof_sync *strobe__prof_sync_slot(struct strobe__thread *t, struct strobe_prof_node *node,
                                                uint64_t object, uint32_t kind);

/* Flags the profile STROBE_PROF_OVERFLOW (depth limit reached). */
void strobe__prof_overflow(struct strobe__thread *t);

/* Normal end: STROBE_PROF_ENDED, file truncated to the slots used, closed. */
void strobe__profile_close(struct strobe__thread *t);

/* Fork child: unmaps and closes the parent's file without touching it. */
void strobe__profile_abandon(struct strobe__thread *t);

#endif
