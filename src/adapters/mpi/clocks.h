/* SPDX-License-Identifier: MIT */
/*
 * Clock offsets of libstrobe-mpi.so (clocks.c): at MPI_Init and at
 * MPI_Finalize every rank measures its clock against rank 0's and writes
 * a STROBE_DEF_CLOCK_OFFSET definition (src/common/format.h), from which
 * readers put all ranks on rank 0's timebase (`strobe merge`,
 * docs/formats/trace.md).
 */
#ifndef STROBE_ADAPTERS_MPI_CLOCKS_H
#define STROBE_ADAPTERS_MPI_CLOCKS_H

/* Collective over MPI_COMM_WORLD: every rank must call it, measured or
 * not (it takes part in one reduction to learn whether all ranks are).
 * when is enum strobe_clock_offset_when; the FINALIZE call also frees
 * what the INIT call made. Nothing is measured unless every rank is. */
void strobe__mpi_clock_offsets(unsigned when);

#endif
