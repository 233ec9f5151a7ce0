/* SPDX-License-Identifier: MIT */
/*
 * petra-bench engine "petra": the structures of libstrobe-petra
 * (include/strobe/petra.h) in a fresh heap file. Each transaction is one
 * strobe_petra_execute call; flushes and fences are PETRA's own counters
 * (tx_* for PersistTransaction, ckpt_* for checkpoints), so they count
 * cache-line flush and fence instructions actually issued.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"

struct petra_engine {
    strobe_petra *heap;
    int structure; /* id from strobe_petra_structure_create */
};

struct petra_thread {
    struct petra_engine *eng;
    strobe_petra_thread *t;
};

static const char *kind_name(enum strobe_petra_kind kind)
{
    switch (kind) {
    case STROBE_PETRA_LIST: return "list";
    case STROBE_PETRA_SKIPLIST: return "skiplist";
    default: return "map";
    }
}

static int petra_open(const struct strobe__bench_config *cfg, const char *path, void **out,
                      char *why, size_t why_len)
{
    struct petra_engine *e = calloc(1, sizeof(*e));
    if (!e) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    /* +1: the thread that prefills attaches while no worker runs, but it
     * keeps its own slot so the workers' slots start clean */
    struct strobe_petra_options opt = {
        .size = cfg->heap_bytes,
        .max_threads = cfg->threads + 1,
    };
    int rc = strobe_petra_create(path, &opt, &e->heap, why, why_len);
    if (rc < 0) {
        free(e);
        return rc;
    }
    rc = strobe_petra_structure_create(e->heap, kind_name(cfg->kind), cfg->kind, cfg->buckets);
    if (rc < 0) {
        snprintf(why, why_len, "%s: cannot create the %s structure: %s", path,
                 kind_name(cfg->kind), strobe_strerror(rc));
        strobe_petra_close(e->heap);
        free(e);
        return rc;
    }
    e->structure = rc;
    *out = e;
    return 0;
}

static int petra_thread_start(void *engine, unsigned index, void **out)
{
    struct petra_engine *e = engine;
    struct petra_thread *pt = calloc(1, sizeof(*pt));
    if (!pt)
        return -ENOMEM;
    pt->eng = e;
    int rc = strobe_petra_thread_attach(e->heap, &pt->t);
    if (rc < 0) {
        free(pt);
        return rc;
    }
    *out = pt;
    return 0;
}

static void petra_thread_stop(void *thread)
{
    struct petra_thread *pt = thread;
    strobe_petra_thread_detach(pt->t);
    free(pt);
}

static int petra_execute(void *thread, strobe__bench_op *ops, unsigned n)
{
    struct petra_thread *pt = thread;
    for (unsigned i = 0; i < n; i++)
        ops[i].structure = (uint8_t)pt->eng->structure;
    return strobe_petra_execute(pt->t, ops, n);
}

static int count_key(void *arg, uint64_t key, uint64_t value)
{
    (void)key;
    (void)value;
    ++*(uint64_t *)arg;
    return 0;
}

static int petra_check(void *engine, uint64_t *keys, char *why, size_t why_len)
{
    struct petra_engine *e = engine;
    int rc = strobe_petra_verify(e->heap, why, why_len);
    if (rc < 0)
        return rc;
    strobe_petra_thread *t;
    if ((rc = strobe_petra_thread_attach(e->heap, &t)) < 0) {
        snprintf(why, why_len, "cannot attach a thread to count keys: %s", strobe_strerror(rc));
        return rc;
    }
    *keys = 0;
    rc = strobe_petra_foreach(t, e->structure, count_key, keys);
    strobe_petra_thread_detach(t);
    if (rc < 0)
        snprintf(why, why_len, "strobe_petra_foreach: %s", strobe_strerror(rc));
    return rc;
}

static void petra_stats(void *engine, struct strobe__bench_stats *out)
{
    struct petra_engine *e = engine;
    struct strobe_petra_stats s;
    strobe_petra_stats_get(e->heap, &s);
    out->counted = 1;
    out->flushes = s.tx_flushes;
    out->fences = s.tx_fences;
    out->other_flushes = s.ckpt_flushes;
    out->other_fences = s.ckpt_fences;
}

static void petra_close(void *engine)
{
    struct petra_engine *e = engine;
    int rc = strobe_petra_close(e->heap);
    if (rc < 0)
        fprintf(stderr, "petra-bench: closing the petra heap: %s\n", strobe_strerror(rc));
    free(e);
}

const struct strobe__bench_engine strobe__bench_engine_petra = {
    .name = "petra",
    .open = petra_open,
    .thread_start = petra_thread_start,
    .thread_stop = petra_thread_stop,
    .execute = petra_execute,
    .check = petra_check,
    .stats = petra_stats,
    .close = petra_close,
};
