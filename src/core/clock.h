/* SPDX-License-Identifier: MIT */
/*
 * Time source of the runtime. Events are stamped with raw clock ticks, the
 * cheapest monotonic counter the machine has:
 *   STROBE_CLOCK_TSC        rdtsc, when the CPU has an invariant TSC
 *                           (CPUID 0x80000007 EDX bit 8: constant rate,
 *                           ticking in every C/P-state, so one tick->ns
 *                           line fits the whole run)
 *   STROBE_CLOCK_MONOTONIC  clock_gettime(CLOCK_MONOTONIC), ticks = ns
 * The conversion is left to the reader: the runtime writes CLOCK_SYNC
 * points (ticks, CLOCK_MONOTONIC ns) into `defs` and the reader fits a line
 * through them (format.h).
 */
#ifndef STROBE_CORE_CLOCK_H
#define STROBE_CORE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "common/format.h"
#include "core/util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define STROBE_HAVE_TSC 1
#else
#define STROBE_HAVE_TSC 0
#endif

/* true when rdtsc exists and is invariant (see above). */
bool strobe__tsc_invariant(void);

static inline uint64_t strobe__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Ticks of clock KIND (enum strobe_clock_kind). Async-signal-safe. */
static inline uint64_t strobe__clock_read(int kind)
{
#if STROBE_HAVE_TSC
    if (STROBE_LIKELY(kind == STROBE_CLOCK_TSC))
        return __rdtsc();
#endif
    (void)kind;
    return strobe__mono_ns();
}

/* One calibration point: ticks of clock KIND and CLOCK_MONOTONIC ns taken
 * at (nearly) the same instant. rdtsc is read on both sides of the
 * clock_gettime call and the tightest of a few tries is kept, its midpoint
 * being the tick value; this bounds the pairing error by half the window
 * (typically < 30 ns). Async-signal-safe. */
void strobe__clock_pair(int kind, uint64_t *ticks, uint64_t *ns);

#endif
