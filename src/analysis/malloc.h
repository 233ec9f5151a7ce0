/* SPDX-License-Identifier: MIT */
/*
 * The memory view of an experiment recorded with `strobe run --malloc`
 * (core/malloc.h): per call path of the merged profile the allocations
 * and frees made there (the profile metrics strobe.alloc and strobe.free)
 * and the blocks allocated there still live at exit (the MALLOC LIVE
 * records, whose profile slots are mapped onto the merged call tree);
 * the large blocks' ALLOC events from the streams, each with the call path
 * it happened on.
 */
#ifndef STROBE_ANALYSIS_MALLOC_H
#define STROBE_ANALYSIS_MALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/experiment.h"

/* Metric names the runtime gives its allocation metrics (unit "bytes"). */
#define STROBE_MALLOC_METRIC_ALLOC "strobe.alloc"
#define STROBE_MALLOC_METRIC_FREE "strobe.free"

struct strobe_malloc_path {
    uint32_t node; /* merged profile node; STROBE_NONE: a call path the profile does not have */
    uint64_t allocs, alloc_bytes;     /* made on this path */
    uint64_t frees, freed_bytes;      /* made on this path (of blocks allocated anywhere) */
    uint64_t live_blocks, live_bytes; /* allocated on this path, live at exit */
};

/* Blocks live at exit allocated by one thread on one call path. */
struct strobe_malloc_leak {
    uint32_t thread; /* global thread index */
    uint32_t node;   /* as in strobe_malloc_path */
    uint64_t blocks, bytes;
};

/* An ALLOC event: a large block allocated or freed. */
struct strobe_malloc_large {
    uint64_t time_ns;
    uint32_t thread, node; /* node: the call path it happened on */
    uint32_t op, call;     /* enum strobe_alloc_op, strobe_alloc_call */
    uint64_t address, size;
};

struct strobe_malloc_model {
    /* paths with allocations, frees or live blocks, by allocated bytes
     * (largest first), then by node */
    struct strobe_malloc_path *paths;
    size_t npaths;
    struct strobe_malloc_leak *leaks; /* by bytes (largest first), thread, node */
    size_t nleaks;
    struct strobe_malloc_large *large; /* by time */
    size_t nlarge;
    uint64_t allocs, alloc_bytes, frees, freed_bytes, live_blocks, live_bytes; /* over all paths */
};

/* Builds the view. Returns 0, -ENOENT when no process
 * tracked allocations, or an error (message in eb). */
int strobe_malloc_model_build(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                              struct strobe_malloc_model **out, struct strobe_errbuf *eb);
void strobe_malloc_model_free(struct strobe_malloc_model *m);

#endif
