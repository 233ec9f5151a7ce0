/* SPDX-License-Identifier: MIT */
/* LINE_PROBE: nothing in a normal build; with -DTRICKY_ERROR an error at the
 * line where it stands, so opari2_compare.sh can check that a diagnostic in
 * the instrumented file names the original file and line. */
#ifdef TRICKY_ERROR
#define LINE_PROBE (void)tricky_probe_undeclared
#else
#define LINE_PROBE (void)0
#endif
