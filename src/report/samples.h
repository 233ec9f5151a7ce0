/* SPDX-License-Identifier: MIT */
/*
 * The sampled section of the text report (`strobe report --samples`, from
 * strobe_sample_model_build): sampled flat profile, call tree, threads,
 * and samples per instrumented call path.
 */
#ifndef STROBE_REPORT_SAMPLES_H
#define STROBE_REPORT_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/experiment.h"
#include "analysis/samples.h"

/* "perf task-clock" or "CPU-time timers" (enum strobe_sample_source). */
const char *strobe__sample_source_name(int source);

/* How much of thread th's CPU time (user mode only for the perf source,
 * whose samples are user mode only) its samples stand for: samples x
 * period / CPU time, -1 when unknown (no rusage, or under 100 ms of CPU
 * time, which the scheduler's ticks measure too coarsely). *cpu_ns: that
 * CPU time, 0 without rusage. *listed: the report lists the thread (it
 * has samples or missed ones, or was sampled for at least 100 ms of CPU
 * time without a single sample: it kept SIGPROF blocked). */
double strobe__sample_cover(const struct strobe_experiment *exp, const struct strobe_sample_model *m,
                            size_t th, uint64_t *cpu_ns, bool *listed);

void strobe__report_samples_text(FILE *out, const struct strobe_experiment *exp,
                                 const struct strobe_profile *prof, const struct strobe_sample_model *m,
                                 size_t top);

#endif
