/* SPDX-License-Identifier: MIT */
/* Fuzz target: a profile file (t<N>.prof) through the profile checker. */
#include "analysis/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct strobe__prof_view v;
    struct strobe_errbuf eb;
    strobe__prof_check(data, size, "t0.prof", &v, &eb);
    return 0;
}
