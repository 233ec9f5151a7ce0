/* SPDX-License-Identifier: MIT */
/* Fuzz target: the experiment's meta file through the meta parser. */
#include <stdlib.h>

#include "analysis/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char **keys = NULL, **values = NULL;
    size_t n = 0;
    struct strobe_errbuf eb;
    strobe__meta_parse((const char *)data, size, "meta", &keys, &values, &n, &eb);
    for (size_t i = 0; i < n; i++) {
        free(keys[i]);
        free(values[i]);
    }
    free(keys);
    free(values);
    return 0;
}
