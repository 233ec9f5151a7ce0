/* SPDX-License-Identifier: MIT */
/*
 * The blame section of the report (`strobe report --blame`, from
 * strobe_blame_model_build or strobe_blame_model_from_list): the
 * data-centric table of variables, the unknown data, the code-centric
 * functions and the hybrid blame points, as text and as the "blame"
 * object of the JSON report (docs/formats/report-json.md).
 */
#ifndef STROBE_REPORT_BLAME_H
#define STROBE_REPORT_BLAME_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/blame.h"
#include "report/jsonw.h"

/* The text section; top: root rows of the variables table and functions
 * shown (0 = all). */
void strobe__report_blame_text(FILE *out, const struct strobe_blame_model *m, size_t top);

/* The "blame" member of the report object. */
void strobe__report_blame_json(struct strobe__jw *w, const struct strobe_blame_model *m);

#endif
