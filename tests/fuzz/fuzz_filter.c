/* SPDX-License-Identifier: MIT */
/* Fuzz target: a region filter file through the filter parser and matcher. */
#include <stdint.h>

#include "common/filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct strobe_filter *f;
    char err[256];
    if (strobe__filter_parse((const char *)data, size, "filter", &f, err, sizeof err) == 0) {
        strobe__filter_match(f, "main");
        strobe__filter_match(f, "solve_step");
        strobe__filter_free(f);
    }
    return 0;
}
