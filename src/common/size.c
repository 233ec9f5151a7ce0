/* SPDX-License-Identifier: MIT */
/* Byte-size and duration parsers shared by the runtime, strobed and the
 * tools (size.h). */
#include "common/size.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/format.h"
#include "strobe/strobe.h"

int strobe__parse_size(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return STROBE_ERR_SYNTAX;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - 9) / 10)
            return STROBE_ERR_SYNTAX;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    unsigned shift = 0;
    switch (*s) {
    case 'k':
    case 'K':
        shift = 10;
        s++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        s++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        s++;
        break;
    case 't':
    case 'T':
        shift = 40;
        s++;
        break;
    default:
        break;
    }
    if (shift && s[0] == 'i' && s[1] == 'B')
        s += 2;
    else if (s[0] == 'B')
        s++;
    if (*s)
        return STROBE_ERR_SYNTAX;
    if (shift && v > (UINT64_MAX >> shift))
        return STROBE_ERR_SYNTAX;
    *out = v << shift;
    return 0;
}

int strobe__parse_sample_hz(const char *s, uint32_t *out)
{
    uint64_t v = 0;
    if (!s || !*s)
        return STROBE_ERR_SYNTAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > STROBE_SAMPLE_HZ_MAX)
            return STROBE_ERR_SYNTAX;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (v < STROBE_SAMPLE_HZ_MIN || v > STROBE_SAMPLE_HZ_MAX)
        return STROBE_ERR_SYNTAX;
    *out = (uint32_t)v;
    return 0;
}

int strobe__parse_duration(const char *s, unsigned long long *ns)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v < 0)
        return STROBE_ERR_SYNTAX;
    static const struct {
        const char *unit;
        double scale;
    } units[] = {
        {"", 1e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}, {"m", 60e9}, {"h", 3600e9},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].unit) == 0) {
            double r = v * units[i].scale;
            if (r > 1e18)
                return STROBE_ERR_SYNTAX;
            *ns = (unsigned long long)(r + 0.5); /* r >= 0: rounds to nearest, without libm */
            return 0;
        }
    return STROBE_ERR_SYNTAX;
}
