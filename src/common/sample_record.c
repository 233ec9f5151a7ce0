/* SPDX-License-Identifier: MIT */
/* SAMPLE payload encoding (see sample_record.h). */
#include "common/sample_record.h"

#include <string.h>

#include "common/format.h"

size_t strobe__sample_encode(uint8_t *out, uint64_t weight, uint64_t missed, const uint64_t *ips, unsigned n,
                             bool truncated)
{
    uint8_t *q = out, *end = out + STROBE_MAX_EXT_PAYLOAD;
    q = strobe_uleb_put(q, weight);
    q = strobe_uleb_put(q, missed);
    uint8_t *flags_at = q++;
    uint8_t *n_at = q;
    q += 2; /* n <= 128: a two-byte uleb, fixed up below */
    unsigned kept = 0;
    for (; kept < n; kept++) {
        uint8_t tmp[10], *e;
        if (kept == 0)
            e = strobe_uleb_put(tmp, ips[0]);
        else
            e = strobe_uleb_put(tmp, strobe_zigzag((int64_t)(ips[kept] - ips[kept - 1])));
        size_t len = (size_t)(e - tmp);
        if ((size_t)(end - q) < len)
            break;
        memcpy(q, tmp, len);
        q += len;
    }
    *flags_at = (truncated || kept < n) ? STROBE_SAMPLE_TRUNCATED : 0;
    n_at[0] = (uint8_t)(0x80 | (kept & 0x7f));
    n_at[1] = (uint8_t)(kept >> 7);
    return (size_t)(q - out);
}
