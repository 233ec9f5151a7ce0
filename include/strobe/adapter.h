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

/* Appends a typed event (an EXT record of docs/formats/trace.md, type
 * STROBE_EXT_TM and up, payload at most 256 bytes) to the calling thread's
 * stream with the current time. Nothing is recorded when tracing is off. */
STROBE_API int strobe_event_record(unsigned type, const uint8_t *payload, size_t len);

/* The current time in the clock of the calling thread's stream (the
 * ticks of docs/formats/trace.md; 0 when the thread is not measured). For
 * durations carried in event payloads. */
STROBE_API uint64_t strobe_adapter_ticks(void);

/* The calling thread's number in the experiment (N of t<N>). */
STROBE_API int strobe_thread_index(uint32_t *index);

#ifdef __cplusplus
}
#endif

#endif /* STROBE_ADAPTER_H */
