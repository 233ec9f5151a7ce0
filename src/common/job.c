/* SPDX-License-Identifier: MIT */
/* The batch job of this process (job.h). */
#include "common/job.h"

#include <stdlib.h>
#include <string.h>

/* Appends src to buf (of cap bytes, NUL-terminated), cutting it. */
static void append(char *buf, size_t cap, const char *src)
{
    size_t n = strlen(buf);
    while (*src && n + 1 < cap && n < STROBE__JOB_MAX)
        buf[n++] = *src++;
    buf[n] = 0;
}

int strobe__job_id(char *buf, size_t cap)
{
    buf[0] = 0;
    const char *job = getenv("STROBE_JOB"), *slurm = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    if (job && *job) {
        append(buf, cap, job);
    } else if (slurm && *slurm) {
        append(buf, cap, slurm);
        if (step && *step) {
            append(buf, cap, ".");
            append(buf, cap, step);
        }
    }
    return buf[0] != 0;
}
