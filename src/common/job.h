/* SPDX-License-Identifier: MIT */
/*
 * The batch job an application runs in, for the sets it publishes (the
 * runtime's `regions`, the MPI profiler's): $STROBE_JOB (`strobe run
 * --job NAME`), else Slurm's SLURM_JOB_ID with ".SLURM_STEP_ID" when set.
 * Shared by the runtime and the MPI adapter; async-signal-safe (getenv and
 * string copies only).
 */
#ifndef STROBE_COMMON_JOB_H
#define STROBE_COMMON_JOB_H

#include <stddef.h>

/* Longest job id kept (longer ones are cut): the char metric's size. */
#define STROBE__JOB_MAX 63

/* Writes the job id into buf (cap > STROBE__JOB_MAX) and returns 1, or
 * returns 0 with buf empty when the process runs in no known job. */
int strobe__job_id(char *buf, size_t cap);

#endif
