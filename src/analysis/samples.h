/* SPDX-License-Identifier: MIT */
/*
 * The sampled view of an experiment recorded with `strobe run --sample`
 * (core/sample.h): the SAMPLE records of every thread's stream, their
 * stacks symbolized offline (function, file:line, inline chains; code no
 * symbol covers as module+0xoffset), as
 *   - a flat profile: per function, the samples it was running in (self)
 *     and the samples it was on the stack of (total), overall and per
 *     thread, with the line most of its self samples fell on;
 *   - a sampled call tree (outermost frame first), merged over threads;
 *   - the hybrid view: per instrumented call path of the merged profile
 *     (the regions open in the stream when the sample was taken), its
 *     samples and the sampled function most of them were in;
 *   - the distinct stacks per thread, as code addresses (each with its
 *     module-relative address, line and inline chain): what a format with
 *     per-address locations needs (pprof).
 * Counts are in sampling periods (1/rate s of a thread's CPU time; user
 * mode only with the perf source): a SAMPLE record counts its weight.
 */
#ifndef STROBE_ANALYSIS_SAMPLES_H
#define STROBE_ANALYSIS_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/experiment.h"

/* Metric name the runtime counts samples under per instrumented call path. */
#define STROBE_SAMPLE_METRIC "strobe.samples"

struct strobe_sample_func {
    char *name;    /* function; "module+0xoffset" without a symbol */
    char *module;  /* its module's path, "" when none */
    char *file;    /* file of `line`, "" when unknown */
    unsigned line; /* the line with most self samples (else most total), 0 = unknown */
    uint64_t self, total;
    uint64_t *thread_self, *thread_total; /* [exp->nthreads] */
};

/* A node of the sampled call tree; node 0 is the root (func STROBE_NONE). */
struct strobe_sample_node {
    uint32_t func, parent, first_child, next_sibling; /* children by total, largest first */
    uint64_t self, total;
};

/* The self samples of one sampled call-tree node taken by one thread. */
struct strobe_sample_node_thread {
    uint32_t node, thread; /* thread: global index */
    uint64_t self;
};

/* Samples taken while an instrumented call path was open. */
struct strobe_sample_path {
    uint32_t node; /* merged profile node (STROBE_NONE: not in the profile) */
    uint64_t samples;
    uint32_t top_func; /* the function most of them were in (self); STROBE_NONE
                          when all came from a profile (no stacks) */
    uint64_t top_samples;
};

/* One function of a sampled code address's inline chain. */
struct strobe_sample_frame {
    uint32_t func; /* into funcs */
    unsigned line; /* the address's line in it (an outer frame of an inline
                      chain: the line of the inlined call); 0 = unknown */
    unsigned col;  /* its column likewise (the inlined call's); 0 = unknown */
};

/* A distinct sampled code address of one process. */
struct strobe_sample_loc {
    uint64_t rel;      /* minus its module's load bias (the module: its frames' funcs') */
    uint32_t first, n; /* its frames in loc_frames, innermost (inlined) first, n >= 1 */
};

/* A distinct call stack one thread was sampled in. */
struct strobe_sample_stack {
    uint32_t thread;   /* global index */
    uint32_t first, n; /* its locations in stack_locs, innermost first */
    uint64_t samples;  /* periods (weights) */
};

struct strobe_sample_thread {
    uint64_t records;   /* its SAMPLE records (signals handled) */
    uint64_t samples;   /* periods they stand for (their weights) */
    uint64_t missed;    /* periods lost (signal blocked, ...) */
    uint64_t truncated; /* records whose outermost frames were cut */
    uint64_t unstacked; /* periods known from its profile only (no trace:
                           `--no-trace`), per call path but without stacks */
    bool sampled;       /* its process sampled (a thread that kept SIGPROF
                           blocked throughout has none the less no record) */
};

struct strobe_sample_model {
    uint32_t hz;      /* rate (the first sampling process's; 0 = unknown) */
    int source;       /* enum strobe_sample_source of that process */
    bool mixed_rates; /* processes sampled at different rates */
    uint64_t records, samples, missed, truncated, unstacked;
    struct strobe_sample_thread *threads; /* [exp->nthreads] */
    struct strobe_sample_func *funcs;     /* by self, then total, then name */
    size_t nfuncs;
    struct strobe_sample_node *nodes;
    size_t nnodes;
    struct strobe_sample_node_thread *node_threads; /* by node, then thread: the
                                                      nonzero self counts */
    size_t nnode_threads;
    struct strobe_sample_path *paths; /* by samples, largest first */
    size_t npaths;
    struct strobe_sample_loc *locs;
    size_t nlocs;
    struct strobe_sample_frame *loc_frames;
    size_t nloc_frames;
    struct strobe_sample_stack *stacks; /* in the order first sampled */
    size_t nstacks;
    uint32_t *stack_locs; /* indices into locs */
    size_t nstack_locs;
};

/* Builds the view from the streams (the profile PROF, built from EXP,
 * names the instrumented paths; may be NULL). Returns 0, -ENOENT when no
 * process sampled, or an error (message in eb: a corrupted SAMPLE record
 * names its file and offset). */
int strobe_sample_model_build(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                              struct strobe_sample_model **out, struct strobe_errbuf *eb);
void strobe_sample_model_free(struct strobe_sample_model *m);

#endif
