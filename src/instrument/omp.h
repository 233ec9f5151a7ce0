/* SPDX-License-Identifier: MIT */
/*
 * OpenMP constructs for `strobe instrument` with -fopenmp (docs/instrument.md):
 * each construct becomes regions of the kinds the OMPT adapter records
 * (common/format.h), with POMP2's semantics: the parallel region on the
 * forking thread from fork to join, an implicit task per thread, the
 * implicit barriers made explicit (`nowait` plus a measured barrier) so
 * that their waits are measured, critical sections and ordered blocks with
 * their waits, and OpenMP lock calls.
 */
#ifndef STROBE_INSTRUMENT_OMP_H
#define STROBE_INSTRUMENT_OMP_H

#include <stdbool.h>

#include "instrument/source.h"

/* Plans the edits of the file's `#pragma omp` directives and OpenMP lock
 * calls (none when the file is not parsed for -fopenmp: they are inert
 * then), except those `#pragma strobe off` excludes. Returns 0 or s->rc. */
int strobe__inst_plan_omp(struct strobe__inst_src *s);

/* The OpenMP lock routines whose calls are measured (s->watch). */
extern const char *const strobe__inst_omp_locks[];

#endif
