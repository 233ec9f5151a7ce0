/* SPDX-License-Identifier: MIT */
/*
 * The sampled section of the text report (`strobe report --samples`, from
 * strobe_sample_model_build): sampled flat profile, call tree, threads,
 * and samples per instrumented call path.
 */
#ifndef STROBE_REPORT_SAMPLES_H
#define STROBE_REPORT_SAMPLES_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/experiment.h"
#include "analysis/samples.h"

/* "perf task-clock" or "CPU-time timers" (enum strobe_sample_source). */
const char *strobe__sample_source_name(int source);

void strobe__report_samples_text(FILE *out, const struct strobe_experiment *exp,
                                 const struct strobe_profile *prof, const struct strobe_sample_model *m,
                                 size_t top);

#endif
