/* SPDX-License-Identifier: MIT */
/*
 * The memory section of `strobe report --malloc` (text; the JSON object is
 * written by json.c): per process the peak live bytes and what was live at
 * exit, then the call-path table, the leak table and the large blocks of
 * the model of analysis/malloc.h. Byte counts are printed exactly.
 */
#ifndef STROBE_REPORT_MALLOC_H
#define STROBE_REPORT_MALLOC_H

#include <stdio.h>

#include "analysis/malloc.h"

/* Writes the section; top (0 = all) limits the rows of each table. */
void strobe__report_malloc_text(FILE *out, const struct strobe_experiment *exp,
                                const struct strobe_profile *prof, const struct strobe_malloc_model *m,
                                size_t top);

/* "malloc", "calloc", ... for enum strobe_alloc_call (format.h), "?" otherwise. */
const char *strobe__malloc_call_name(uint32_t call);

/* Writes the call path of merged node `node` as "main > f > g" ("(thread
 * root)" for the root, "(unknown call path)" for STROBE_NONE). */
void strobe__malloc_path(FILE *out, const struct strobe_experiment *exp, const struct strobe_profile *prof,
                         uint32_t node);

#endif
