/* SPDX-License-Identifier: MIT */
/*
 * The directive instrumenter behind `strobe instrument` (docs/instrument.md):
 * reads a C file through libclang (the real tokens and statement extents,
 * with the compiler flags the file is built with), and writes it again with
 * strobe's pragmas turned into calls of the runtime's region API:
 *
 *   #pragma strobe region begin(NAME)   enter region NAME here
 *   #pragma strobe region end(NAME)     leave it here
 *   #pragma strobe region(NAME)         NAME around the next statement,
 *                                       left however the statement is left
 *                                       (return, break, goto: a cleanup)
 *   #pragma strobe off / on             the pragmas in between are removed
 *                                       but not instrumented
 *
 * and the same as _Pragma("strobe ..."). Every line keeps its number: the
 * calls replace the pragmas on their own lines, and a prologue (the region
 * descriptors, registered lazily by the runtime on first entry) ends with
 * `#line 1 "FILE"`, so diagnostics, __LINE__, debuggers and strobe's
 * reports name the original file and line. The calls go through weak
 * references: the program runs without strobe's runtime as it did.
 */
#ifndef STROBE_INSTRUMENT_INSTRUMENT_H
#define STROBE_INSTRUMENT_INSTRUMENT_H

#include <stddef.h>

#include "analysis/experiment.h" /* struct strobe_errbuf */

/* Instruments the C file `in` (parsed with the compiler arguments
 * args[0..nargs)) into `out` (written all or nothing). Returns 0, or a
 * negative code with the reason in *eb ("FILE:LINE: ..."). */
int strobe__instrument_file(const char *in, const char *out, const char *const *args, int nargs,
                            struct strobe_errbuf *eb);

#endif
