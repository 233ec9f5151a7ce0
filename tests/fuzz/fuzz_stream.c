/* SPDX-License-Identifier: MIT */
/* Fuzz target: one event stream (t<N>.evt) through the stream decoder,
 * whole and, when it is chunked, each of its first chunks alone (as
 * `strobe report --chunk` reads them). */
#include "analysis/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct strobe__stream_decoder d;
    struct strobe_errbuf eb;
    struct strobe__raw_event ev;
    if (strobe__stream_begin(&d, data, size, "t0.evt", &eb) != 0)
        return 0;
    while (strobe__stream_decode(&d, &ev, &eb) == 1)
        ;
    uint64_t nchunks = strobe__stream_nchunks(&d);
    strobe__stream_end(&d);
    for (uint64_t c = 0; c < nchunks && c < 4; c++) {
        if (strobe__stream_begin(&d, data, size, "t0.evt", &eb) != 0)
            return 0;
        if (strobe__stream_chunks(&d, c, 1, &eb) == 0)
            while (strobe__stream_decode(&d, &ev, &eb) == 1)
                ;
        strobe__stream_end(&d);
    }
    return 0;
}
