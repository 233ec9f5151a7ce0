/* SPDX-License-Identifier: MIT */
/* Fuzz target: the bytes of a .strobe_blame section through the blame
 * table reader (analysis/blame_table.c), then a lookup of every loc and
 * call line it kept. */
#include <stdlib.h>

#include "analysis/blame_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct strobe__blame_table *t;
    struct strobe_errbuf eb;
    strobe__blame_table_parse(data, size, "fuzz", &t, &eb);
    if (!t)
        return 0;
    uint32_t *set = NULL;
    size_t n = 0, cap = 0, first;
    for (size_t i = 0; i < t->nlocs; i++)
        strobe__blame_table_find_loc(t, t->locs[i].path, t->locs[i].line, t->locs[i].col, &set, &n, &cap);
    for (size_t i = 0; i < t->ncalls; i++) {
        strobe__blame_table_line_calls(t, t->calls[i].path, t->calls[i].line, &first);
        if (t->calls[i].callee != STROBE_NONE)
            strobe__blame_table_next_call(t, t->calls[i].path, t->calls[i].line, t->calls[i].col,
                                          strobe__blame_str(t, t->calls[i].callee), SIZE_MAX);
    }
    free(set);
    strobe__blame_table_free(t);
    return 0;
}
