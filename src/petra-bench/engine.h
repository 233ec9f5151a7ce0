/* SPDX-License-Identifier: MIT */
/*
 * petra-bench engines: the small vtable main.c drives. An engine opens a
 * fresh heap file holding one structure (list set, skiplist set or hash
 * map), runs transactions of up to STROBE_PETRA_MAX_OPS operations with
 * PETRA's all-or-nothing semantics (INSERT needs the key absent; DELETE,
 * UPDATE and FIND need it present; one failed precondition aborts the
 * whole transaction and nothing of it stays), and reports how many cache
 * lines it flushed and how many fences it issued.
 *
 * Four engines: "petra" (libstrobe-petra, engine_petra.c), "pmemobj"
 * (PMDK libpmemobj transactions under a reader-writer lock,
 * engine_pmemobj.c), the baseline of seed 002, section 5.3, and the
 * strong baselines: "pmemobj-bucket" (the same with a PMEMrwlock per map
 * bucket, maps only) and "pmemobj-node" (a PMEMrwlock per node, list and
 * skiplist only).
 */
#ifndef STROBE_PETRA_BENCH_ENGINE_H
#define STROBE_PETRA_BENCH_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/petra.h"

/* Operations reuse the public PETRA operation record so that both engines
 * see byte-identical transactions. */
typedef struct strobe_petra_op strobe__bench_op;

struct strobe__bench_config {
    enum strobe_petra_kind kind; /* which structure */
    unsigned threads;            /* worker threads that will attach */
    uint64_t heap_bytes;         /* file size */
    uint32_t buckets;            /* hash map buckets (both engines) */
};

/* Flushes and fences since open; `counted` is 0 when the engine cannot
 * count them honestly (then main.c prints n/a). */
struct strobe__bench_stats {
    int counted;
    uint64_t flushes, fences;           /* issued by transactions */
    uint64_t other_flushes, other_fences; /* checkpoints etc., if known */
};

struct strobe__bench_engine {
    const char *name;
    /* Create a new heap file at path (must not exist) with one structure
     * of cfg->kind. 0 or a negative errno/strobe code, with a one-line
     * reason in why. *out is the engine's context. */
    int (*open)(const struct strobe__bench_config *cfg, const char *path, void **out, char *why,
                size_t why_len);
    /* Per-thread state for the calling thread (index < cfg->threads, or
     * cfg->threads for the thread that prefills). 0 or negative. */
    int (*thread_start)(void *eng, unsigned index, void **out);
    void (*thread_stop)(void *thread);
    /* Run one transaction of n operations on the structure (the ops'
     * `structure` field is ignored). 0 committed, STROBE_ERR_ABORTED
     * when a precondition failed, another negative code on error (e.g.
     * -ENOSPC: the heap is full). */
    int (*execute)(void *thread, strobe__bench_op *ops, unsigned n);
    /* Check the structure (sorted, unique keys, every node where it
     * belongs) and count its keys. No thread may run transactions. 0, or
     * a negative code with the first violation in why. */
    int (*check)(void *eng, uint64_t *keys, char *why, size_t why_len);
    /* Counters since open; call with no transaction running. */
    void (*stats)(void *eng, struct strobe__bench_stats *out);
    /* Close and unmap (the file is removed by the caller). */
    void (*close)(void *eng);
};

/* Each exists only when its library was found at build time
 * (STROBE_BENCH_HAVE_PETRA, STROBE_BENCH_HAVE_PMEMOBJ; see CMakeLists.txt). */
extern const struct strobe__bench_engine strobe__bench_engine_petra;
extern const struct strobe__bench_engine strobe__bench_engine_pmemobj;
extern const struct strobe__bench_engine strobe__bench_engine_pmemobj_bucket; /* maps only */
extern const struct strobe__bench_engine strobe__bench_engine_pmemobj_node; /* lists and skiplists */

#endif
