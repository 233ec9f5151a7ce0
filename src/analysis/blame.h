/* SPDX-License-Identifier: MIT */
/*
 * Data-centric blame (docs/blame.md, "Attribution"): every sample is
 * charged to the variables whose blame set holds the sampled statement,
 * from the blame tables of the modules (.strobe_blame, blame_table.h),
 * then passed to the callers through the call records' binds; samples
 * nothing can be charged for are "unknown data" with a reason. Never is a
 * sample dropped: the variables' shares and the unknown share are both of
 * all samples.
 *
 * The samples come from the sample model (samples.h: distinct stacks with
 * their inline chains) or from a sample list (docs/blame.md, "Replaying a
 * sample list"). The work is per distinct stack; a sample only adds its
 * weight to its stack.
 */
#ifndef STROBE_ANALYSIS_BLAME_H
#define STROBE_ANALYSIS_BLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/experiment.h"
#include "analysis/samples.h"

/* Why a sample was charged to no variable: its innermost frame. */
enum strobe_blame_reason {
    STROBE_BLAME_NO_TABLE,    /* its module has no .strobe_blame (or no module) */
    STROBE_BLAME_NO_DEBUG,    /* no source line */
    STROBE_BLAME_NO_VARIABLE, /* a line, but no entry anywhere up the stack */
    STROBE_BLAME_MEASUREMENT, /* in the runtime (libstrobe) */
    STROBE_BLAME_NO_STACK,    /* a thread without a trace: its samples have no stack */
    STROBE_BLAME_NREASONS
};

/* "no-table", "no-debug", ... (inline: the report has no code of the
 * analysis) */
static inline const char *strobe_blame_reason_name(int reason)
{
    static const char *const names[STROBE_BLAME_NREASONS] = {"no-table", "no-debug", "no-variable",
                                                             "measurement", "no-stack"};
    return reason >= 0 && reason < STROBE_BLAME_NREASONS ? names[reason] : "?";
}

/* A variable as displayed: one row per (function, name, declaration,
 * kind) over all modules and units. */
struct strobe_blame_var {
    char *name, *type;
    char *function; /* NULL: a global */
    char *file;     /* declaration (a heap block: the allocation); "" when unknown */
    unsigned line;
    int kind;         /* enum strobe__blame_kind (blame_table.h) */
    uint32_t parent;  /* display parent (into vars), STROBE_NONE */
    uint64_t samples; /* the samples charged to it or to a display child, each once */
};

/* A sampled function (code-centric view). */
struct strobe_blame_func {
    char *name, *file; /* file "" when unknown */
    unsigned line;
    uint64_t self, total; /* samples it was the innermost frame of / on the stack of */
    uint64_t unknown;     /* of total, the unknown ones */
    uint32_t top_var;     /* its own variable (or a global) most of total charged; STROBE_NONE */
    uint64_t top_samples;
};

struct strobe_blame_share {
    uint32_t var;
    uint64_t samples;
};

struct strobe_blame_callee {
    char *name;
    uint64_t samples;
};

/* A blame point (hybrid view): a function and what went through it. */
struct strobe_blame_point {
    char *function;
    uint64_t samples; /* samples with it on the stack */
    char **path;      /* its most common call path, outermost first, ending with it */
    size_t npath;
    struct strobe_blame_share *vars; /* its own variables, by samples */
    size_t nvars;
    struct strobe_blame_callee *callees; /* samples whose innermost frame is below it, by the
                                            callee it called; by samples */
    size_t ncallees;
};

struct strobe_blame_model {
    uint64_t samples; /* all samples (periods) */
    uint32_t hz;      /* sampling rate, 0 = a sample list */
    uint64_t unknown, by_reason[STROBE_BLAME_NREASONS];
    uint64_t caller_unknown;       /* charged samples whose exit variables found no call record */
    struct strobe_blame_var *vars; /* by samples, largest first; only charged ones */
    size_t nvars;
    struct strobe_blame_func *funcs; /* by total, then self */
    size_t nfuncs;
    struct strobe_blame_point *points;
    size_t npoints;
    size_t ntables;  /* modules with a table among those sampled */
    size_t nstacks;  /* distinct stacks attributed */
    char **warnings; /* tables partly or not read, one line each */
    size_t nwarnings;
};

/* The blame of the sampled stacks of M (built from EXP). points[0..np):
 * the blame points (np 0: "main"). Returns 0 or -ENOMEM (eb). */
int strobe_blame_model_build(const struct strobe_experiment *exp, const struct strobe_sample_model *m,
                             const char *const *points, size_t np, struct strobe_blame_model **out,
                             struct strobe_errbuf *eb);

/* The same from the sample list file LIST instead of EXP's samples (EXP
 * provides the modules). Returns 0, -ENOMEM, -errno when LIST cannot be
 * read, or STROBE_ERR_SYNTAX for a bad line (eb: "LIST:LINE: why"). */
int strobe_blame_model_from_list(const struct strobe_experiment *exp, const char *list,
                                 const char *const *points, size_t np, struct strobe_blame_model **out,
                                 struct strobe_errbuf *eb);

void strobe_blame_model_free(struct strobe_blame_model *m);

#endif
