/* SPDX-License-Identifier: MIT */
/* Clock detection and tick/ns calibration points (see clock.h). */
#include "core/util.h"
#include "core/clock.h"

#if STROBE_HAVE_TSC
#include <cpuid.h>
#endif

bool strobe__tsc_invariant(void)
{
#if STROBE_HAVE_TSC
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return false;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
        return false;
    return (d >> 8) & 1;
#else
    return false;
#endif
}

void strobe__clock_pair(int kind, uint64_t *ticks, uint64_t *ns)
{
    if (kind != STROBE_CLOCK_TSC) {
        *ns = strobe__mono_ns();
        *ticks = *ns;
        return;
    }
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = strobe__clock_read(kind);
        uint64_t n = strobe__mono_ns();
        uint64_t t1 = strobe__clock_read(kind);
        if (t1 >= t0 && t1 - t0 < best_width) {
            best_width = t1 - t0;
            *ticks = t0 + (t1 - t0) / 2;
            *ns = n;
        }
    }
    if (best_width == UINT64_MAX) { /* the TSC went backwards five times: keep the last read */
        *ns = strobe__mono_ns();
        *ticks = strobe__clock_read(kind);
    }
}
