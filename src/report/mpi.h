/* SPDX-License-Identifier: MIT */
/*
 * The MPI section of the text report (shown for experiments with MPI
 * calls, or asked for with `strobe report --mpi`; the JSON object is
 * written by json.c): per rank the time in MPI and the messages, per MPI
 * function its time on each rank, the message size histogram, the rank x
 * rank bytes matrix and the collectives. Formats the model of
 * analysis/mpi.h; byte counts are printed exactly.
 */
#ifndef STROBE_REPORT_MPI_H
#define STROBE_REPORT_MPI_H

#include <stdio.h>

#include "analysis/mpi.h"

/* Writes the section; top (0 = all) limits the rows of the function table. */
void strobe__report_mpi_text(FILE *out, const struct strobe_experiment *exp, const struct strobe_mpi_model *m,
                             size_t top);

#endif
