/* SPDX-License-Identifier: MIT */
/*
 * Registry of a process's regions, metrics and modules: hands out ids and
 * writes the matching REGION / METRIC / MODULE records to defs.
 *
 * Regions and metrics each have one dense id space per process starting at
 * 1 (0 means "not registered yet" in the public handles). Compiler-
 * instrumented functions and annotated regions share the region id space.
 * A region is registered before its id is first returned, so its REGION
 * record always precedes its first use in any stream.
 *
 * Functions are looked up by address in an open-addressing table (linear
 * probing, load <= 1/2, memory from mmap so the slow path can run inside a
 * signal handler). A function the filter excludes is recorded with id 0
 * and no REGION record.
 *
 * All functions take strobe__rt.lock themselves unless their name ends in
 * _locked.
 */
#ifndef STROBE_CORE_REGISTRY_H
#define STROBE_CORE_REGISTRY_H

#include <stdint.h>

#include "strobe/strobe.h"

/* Handle id of an annotation region the filter excludes. */
#define STROBE__REGION_EXCLUDED UINT32_MAX

/* Code regions of OpenMP constructs carry their kind in the key's bits
 * from here up (user-space addresses stay below 2^47): one call begins a
 * parallel region and its implicit tasks. */
#define STROBE__CODE_KIND_SHIFT 56
#define STROBE__CODE_ADDR_MASK (((uintptr_t)1 << STROBE__CODE_KIND_SHIFT) - 1)

/* Region id of the code at key (an address, with the kind above
 * STROBE__CODE_KIND_SHIFT for OpenMP constructs), registered on first
 * sight: a function (kind STROBE_REGION_FUNCTION, subject to the filter; 0
 * when excluded) or another code-addressed region such as an atomic block.
 * One key has one kind. Returns 0 or -ENOMEM. Async-signal-safe except for the first
 * call into a module loaded after start-up while a filter is set (its
 * symbols are then read with libdw, which allocates). */
int strobe__region_of_code(uintptr_t key, unsigned kind, uint32_t *id);

/* Registers an annotation handle (if its id is still 0) as a region of
 * `kind` (its first registration decides) and returns its id, STROBE__REGION_EXCLUDED when the filter excludes its name. The id is
 * published with a release store; readers pair it with an acquire load.
 * Returns 0 or -ENOMEM. Not async-signal-safe (the filter's fnmatch). */
int strobe__region_of_handle(strobe_region_t *r, unsigned kind, uint32_t *id);

/* Same for a metric handle. */
int strobe__metric_of_handle(strobe_metric_t *m, uint32_t *id);

/* Scans the loaded objects (dl_iterate_phdr) and writes a MODULE record
 * for each one not seen before; loads their symbols when a filter is set. */
void strobe__modules_scan_locked(void);

#endif
