/* SPDX-License-Identifier: MIT */
/*
 * Clock alignment: puts every process of an experiment on one timebase,
 * the clock of one reference process, when they did not share a clock
 * (ranks on several hosts, experiments put together by `strobe merge`).
 *
 *   MPI       the process's rank measured its clock against rank 0's at
 *             MPI_Init and MPI_Finalize (CLOCK_OFFSET records, format.h);
 *             the offset is interpolated linearly between the two (one
 *             measurement: constant). The reference is rank 0's process.
 *             A fork child of a rank uses its rank's measurements.
 *   REALTIME  the process came from another input of `strobe merge` (meta
 *             `merge_process: <dir> <input>`) and has no usable offsets:
 *             its input's CLOCK_REALTIME anchor (the PROCESS record's
 *             realtime ns, read right after the first CLOCK_SYNC point,
 *             of its first process that is not a fork child) against the
 *             reference's input's anchor.
 *   REFERENCE same clock as the reference: nothing to do.
 * Meta `clock_align: off` (`strobe merge --no-align`) leaves every clock
 * as recorded (OFF).
 */
#ifndef STROBE_ANALYSIS_ALIGN_H
#define STROBE_ANALYSIS_ALIGN_H

#include "analysis/decode.h"
#include "analysis/experiment.h"

enum strobe_align_method {
    STROBE_ALIGN_REFERENCE = 0,
    STROBE_ALIGN_MPI = 1,
    STROBE_ALIGN_REALTIME = 2,
    STROBE_ALIGN_NONE = 3, /* another clock, but nothing to align it with */
    STROBE_ALIGN_OFF = 4,
};

/* "reference", "mpi", "realtime", "none", "off". Inline: the report uses
 * it without the analysis library. */
static inline const char *strobe_align_method_name(int method)
{
    switch (method) {
    case STROBE_ALIGN_REFERENCE:
        return "reference";
    case STROBE_ALIGN_MPI:
        return "mpi";
    case STROBE_ALIGN_REALTIME:
        return "realtime";
    case STROBE_ALIGN_OFF:
        return "off";
    default:
        return "none";
    }
}

/* The clock domain of process p: the input of `strobe merge` it came from
 * (meta `merge_process: <dir> <domain> <original dir>`), 0 for an
 * experiment that was not merged. *original (when not NULL) gets the
 * name its directory had in that input (its own when not merged), which
 * the fork children of that input name as their parent's. */
unsigned strobe_align_domain(const struct strobe_experiment *exp, uint32_t p, const char **original);

/* What experiment time ns (a time of process p) would have been without
 * p's alignment; may be negative. */
int64_t strobe_align_unaligned_ns(const struct strobe_experiment *exp, uint32_t p, uint64_t ns);

/* Called by the loader once every process's tick->ns line is fitted and
 * before any time is converted: chooses the reference, sets every
 * process's align fields and moves its line onto the timebase. defs[p]
 * are the decoded definitions of process p. */
void strobe__align_clocks(struct strobe_experiment *exp, const struct strobe__defs *const *defs);

#endif
