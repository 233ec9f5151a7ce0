/* SPDX-License-Identifier: MIT */
/* Adaptive time and byte units for reports (see units.h). */
#include "report/units.h"

#include <inttypes.h>
#include <stdio.h>

char *strobe__fmt_time(char buf[STROBE_UNITS_LEN], uint64_t ns)
{
    static const char *const units[] = {"µs", "ms", "s"};
    if (ns < 1000) {
        snprintf(buf, STROBE_UNITS_LEN, "%" PRIu64 " ns", ns);
        return buf;
    }
    /* thousandths of unit u = ns / 10^(3u), rounded half up; computed from
     * ns / 10^(3u) * 1000 so nothing overflows for any uint64_t. */
    uint64_t step = 1; /* ns per thousandth of the current unit */
    for (unsigned u = 0;; u++) {
        uint64_t thousandths = ns / step + (step > 1 && ns % step >= step / 2);
        if (thousandths < 1000000 || u == 2) {
            snprintf(buf, STROBE_UNITS_LEN, "%" PRIu64 ".%03u %s", thousandths / 1000,
                     (unsigned)(thousandths % 1000), units[u]);
            return buf;
        }
        step *= 1000;
    }
}

char *strobe__fmt_bytes(char buf[STROBE_UNITS_LEN], uint64_t bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, STROBE_UNITS_LEN, "%" PRIu64 " B", bytes);
        return buf;
    }
    unsigned __int128 div = 1024;
    for (unsigned u = 0;; u++) {
        /* tenths of the unit, rounded half up */
        unsigned __int128 tenths = ((unsigned __int128)bytes * 10 + div / 2) / div;
        if (tenths < 10240 || u == 5) {
            snprintf(buf, STROBE_UNITS_LEN, "%" PRIu64 ".%u %s", (uint64_t)(tenths / 10),
                     (unsigned)(tenths % 10), units[u]);
            return buf;
        }
        div *= 1024;
    }
}

uint64_t strobe__div_round(uint64_t a, uint64_t b)
{
    return b ? (uint64_t)(((unsigned __int128)a + b / 2) / b) : 0;
}

void strobe__cell(FILE *out, const char *s, int width)
{
    size_t w = strobe__display_width(s);
    size_t want = (size_t)(width < 0 ? -width : width);
    if (width <= 0)
        fputs(s, out);
    for (; w < want; w++)
        fputc(' ', out);
    if (width > 0)
        fputs(s, out);
}

size_t strobe__display_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}
