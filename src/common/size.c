/* SPDX-License-Identifier: MIT */
/* Byte-size parser shared by the runtime, strobed's plugins and the tools
 * (size.h). */
#include "common/size.h"

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
