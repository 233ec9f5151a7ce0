/* SPDX-License-Identifier: MIT */
/* Fuzz target: a definitions file (defs) through the defs decoder. */
#include "analysis/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct strobe__defs d;
    struct strobe_errbuf eb;
    if (strobe__defs_decode(data, size, "defs", &d, &eb) == 0)
        strobe__defs_free(&d);
    return 0;
}
