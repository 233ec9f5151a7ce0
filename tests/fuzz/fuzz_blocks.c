/* SPDX-License-Identifier: MIT */
/* Fuzz target: a `blocks` file and a block stream (t<N>.bb) through the
 * block reader (analysis/blocks.c). Input: a 4-byte little-endian length
 * n, n bytes of the tables, then the stream. */
#include <string.h>

#include "analysis/blocks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t n;
    if (size < 4)
        return 0;
    memcpy(&n, data, 4);
    if (n > size - 4)
        return 0;
    struct strobe__blocks *b;
    struct strobe__bbstream *s;
    struct strobe__bb_event ev;
    struct strobe_errbuf eb;
    if (strobe__blocks_decode(data + 4, n, "blocks", &b, &eb) != 0)
        return 0;
    if (strobe__bbstream_begin(data + 4 + n, size - 4 - n, "t0.bb", b, &s, &eb) == 0) {
        /* a 5-byte REPEAT record may stand for 2^32 - 1 runs: enough of
         * them to reach every state */
        for (int i = 0; i < (1 << 20) && strobe__bbstream_next(s, &ev, &eb) == 1; i++)
            ;
        strobe__bbstream_close(s);
    }
    strobe__blocks_free(b);
    return 0;
}
