/* SPDX-License-Identifier: MIT */
/*
 * Live publishing of the call-path profile (`strobe run --publish`,
 * STROBE_PUBLISH=1): a runtime thread that, every STROBE_PUBLISH_INTERVAL,
 * sums visits and inclusive time per region over all threads and writes
 * them into a metric set in the shared-memory index (include/strobe/shm.h),
 * where strobed's `shm` sampler picks them up. Nothing on the event hot
 * path changes: the publisher reads the profile slots the threads already
 * keep.
 *
 * The state lives in struct strobe__rt_publish inside strobe__rt (runtime
 * context rule); its tables are protected by strobe__rt.lock.
 */
#ifndef STROBE_CORE_PUBLISH_H
#define STROBE_CORE_PUBLISH_H

#include <stdint.h>

struct strobe__thread;

/* Starts the publisher thread when STROBE_PUBLISH=1 (after start-up). */
void strobe__publish_start(void);
/* Region `id` was registered (lock held): remember what to call it.
 * name is static or lives as long as the runtime; "" = resolve addr. */
void strobe__publish_region_locked(uint32_t id, uintptr_t addr, const char *name);
/* Thread t ends (lock held): keep its totals, which its profile takes away. */
void strobe__publish_retire_locked(struct strobe__thread *t);
/* In a fork child: forget the parent's thread and publication. */
void strobe__publish_after_fork_child(void);
/* Stops the thread and withdraws the set (process exit). */
void strobe__publish_stop(void);

#endif
