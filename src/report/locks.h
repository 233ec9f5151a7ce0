/* SPDX-License-Identifier: MIT */
/*
 * The synchronization section of the text report (`strobe report
 * --locks`): the lock table per object and acquiring call path, longest
 * total wait first, and the barrier table with each barrier's longest wait
 * (its imbalance). Formats the model of src/analysis/locks.h only; the
 * JSON form is report/json.c's.
 */
#ifndef STROBE_REPORT_LOCKS_H
#define STROBE_REPORT_LOCKS_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/experiment.h"
#include "analysis/locks.h"

/* "mutex", "rwlock", "spin", "sem", "cond" or "barrier" (enum
 * strobe_sync_kind); "?" otherwise. */
const char *strobe__sync_kind_name(uint32_t kind);

/* The object's symbol, else its address, with the pid when the experiment
 * has several processes (addresses are per process). */
void strobe__object_label(FILE *out, const struct strobe_experiment *exp, uint32_t process, const char *name,
                          uint64_t object);
/* "t<N>" of a global thread index, "<pid>/t<N>" with several processes. */
void strobe__thread_label(FILE *out, const struct strobe_experiment *exp, uint32_t thread);

/* Writes the section to OUT. `top`: lock rows shown, 0 = all. Returns 0
 * or -EIO when writing failed. */
int strobe_report_locks_text(FILE *out, const struct strobe_experiment *exp,
                             const struct strobe_lock_model *m, size_t top);

#endif
