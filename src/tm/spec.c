/* SPDX-License-Identifier: MIT */
/*
 * Speculative execution (thread-level speculation), after Blue Gene/Q's
 * `speculative for` and `speculative sections`: the iterations are cut
 * into chunks that run in parallel, each as a transaction, and commit in
 * sequential order. A chunk that read something an earlier chunk then
 * wrote fails validation at its turn and runs again, so the result is the
 * one of a sequential run. Chunks are handed out in order, so the oldest
 * chunk not yet committed is always running and the loop always advances.
 *
 * Contention between chunks is settled by age: an older chunk that needs a
 * location a younger one holds asks it to abort (tx->kill) and waits; a
 * younger one gives way (tx.c, tm_wait_unlock).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "tm/abi.h"
#include "tm/tx.h"

/* The ABI entry points, called here like the compiler would. */
uint32_t _ITM_beginTransaction(uint32_t props, ...) __attribute__((returns_twice));
void _ITM_commitTransaction(void);

struct spec_run {
    uint64_t nchunks;
    /* runs chunk k, through the transactional clones when instrumented */
    void (*run)(struct spec_run *r, uint64_t k, bool instrumented);
    long begin, end, chunk;
    strobe_spec_body_fn body, body_clone;
    const strobe_spec_section_fn *fns;
    strobe_spec_section_fn *fn_clones;
    void *arg;
    uintptr_t site; /* the caller: names the chunks' region in the profile */
    _Atomic uint64_t next; /* next chunk to hand out */
    _Alignas(64) _Atomic uint64_t turn; /* the chunk allowed to commit */
};

#define rt strobe__tm_rt
enum { SE_NONSPEC, SE_SPEC, SE_ROLLBACKS, SE_JMV, SE_MAXRB, SE_OTHER };

uintptr_t strobe__tm_spec_site(const struct tm_tx *tx)
{
    return ((const struct spec_run *)tx->spec_ctx)->site;
}

bool strobe__tm_spec_is_older(const struct tm_tx *a, const struct tm_tx *b)
{
    return __atomic_load_n(&b->spec_ctx, __ATOMIC_RELAXED) == a->spec_ctx &&
           a->spec_seq < __atomic_load_n(&b->spec_seq, __ATOMIC_RELAXED);
}

void strobe__tm_spec_wait_turn(struct tm_tx *tx)
{
    struct spec_run *r = tx->spec_ctx;
    unsigned spins = 0;
    while (atomic_load_explicit(&r->turn, memory_order_acquire) != tx->spec_seq) {
        /* A serial transaction waits for this one to finish, and an older
         * chunk may wait for its locks: get out of their way. */
        if (atomic_load_explicit(&rt.serial, memory_order_relaxed) ||
            atomic_load_explicit(&tx->kill, memory_order_relaxed))
            strobe__tm_abort(tx, TM_ABORT_OTHER, -1);
        tm_wait_step(&spins);
    }
}

void strobe__tm_spec_wait_turn_idle(struct tm_tx *tx)
{
    struct spec_run *r = tx->spec_ctx;
    unsigned spins = 0;
    while (atomic_load_explicit(&r->turn, memory_order_acquire) != tx->spec_seq)
        tm_wait_step(&spins);
}

void strobe__tm_spec_committed(struct tm_tx *tx)
{
    struct spec_run *r = tx->spec_ctx;
    /* release: the next chunk's validation sees this chunk's versions */
    atomic_store_explicit(&r->turn, tx->spec_seq + 1, memory_order_release);
}

static void se_inc(int which, unsigned long n)
{
    atomic_fetch_add_explicit(&rt.se[which], n, memory_order_relaxed);
}

static void spec_chunk(struct spec_run *r, struct tm_tx *tx, uint64_t k)
{
    tx->spec = true;
    __atomic_store_n(&tx->spec_ctx, r, __ATOMIC_RELAXED);
    __atomic_store_n(&tx->spec_seq, k, __ATOMIC_RELAXED);
    uint32_t a = _ITM_beginTransaction(ITM_PR_INSTRUMENTED_CODE | ITM_PR_UNINSTRUMENTED_CODE | ITM_PR_HAS_NO_ABORT);
    /* Every attempt resumes here. It is non-speculative when all earlier
     * chunks have committed already: nothing can roll it back any more. */
    volatile bool nonspec = atomic_load_explicit(&r->turn, memory_order_acquire) == k;
    r->run(r, k, !(a & ITM_A_RUN_UNINSTRUMENTED_CODE));
    _ITM_commitTransaction();
    se_inc(nonspec ? SE_NONSPEC : SE_SPEC, 1);
    se_inc(SE_ROLLBACKS, tx->retries);
    if (tx->serial_cause != TM_SERIAL_NONE)
        se_inc(tx->serial_cause == TM_SERIAL_JMV ? SE_JMV : tx->serial_cause == TM_SERIAL_MAXRB ? SE_MAXRB : SE_OTHER,
               1);
    tx->spec = false;
    __atomic_store_n(&tx->spec_ctx, NULL, __ATOMIC_RELAXED);
}

static void *spec_worker(void *p)
{
    struct spec_run *r = p;
    struct tm_tx *tx = tm_tx();
    for (;;) {
        uint64_t k = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed);
        if (k >= r->nchunks)
            return NULL;
        spec_chunk(r, tx, k);
    }
}

static unsigned spec_threads(unsigned threads)
{
    if (threads > 0)
        return threads;
    const char *s = getenv("STROBE_TM_SPEC_THREADS");
    if (s != NULL) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (*end == '\0' && v > 0 && v <= 1024)
            return (unsigned)v;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* Runs r on `threads` threads, the caller being one of them. */
static int spec_execute(struct spec_run *r, unsigned threads)
{
    struct tm_tx *tx = tm_tx();
    if (tx->nesting > 0)
        return -EBUSY;
    threads = spec_threads(threads);
    if (threads > r->nchunks)
        threads = r->nchunks > 0 ? (unsigned)r->nchunks : 1;
    pthread_t *ids = calloc(threads, sizeof *ids);
    if (ids == NULL)
        return -ENOMEM;
    unsigned started = 0;
    int rc = 0;
    for (; started + 1 < threads; started++) {
        int e = pthread_create(&ids[started], NULL, spec_worker, r);
        if (e != 0) {
            rc = -e; /* the loop still completes on the threads we have */
            break;
        }
    }
    spec_worker(r);
    for (unsigned i = 0; i < started; i++)
        pthread_join(ids[i], NULL);
    free(ids);
    return rc;
}

static void run_loop_chunk(struct spec_run *r, uint64_t k, bool instrumented)
{
    long lo = r->begin + (long)k * r->chunk;
    long hi = r->end - lo > r->chunk ? lo + r->chunk : r->end;
    strobe_spec_body_fn fn = instrumented ? r->body_clone : r->body;
    for (long i = lo; i < hi; i++)
        fn(i, r->arg);
}

int strobe_spec_for(long begin, long end, long chunk, strobe_spec_body_fn body, void *arg, unsigned threads)
{
    if (chunk <= 0 || body == NULL)
        return -EINVAL;
    struct spec_run r = {
        .run = run_loop_chunk,
        .begin = begin,
        .end = end,
        .chunk = chunk,
        .body = body,
        .body_clone = (strobe_spec_body_fn)strobe__tm_clone_of((const void *)body),
        .arg = arg,
        .site = (uintptr_t)__builtin_return_address(0),
    };
    if (r.body_clone == NULL)
        return -EINVAL;
    if (end <= begin)
        return 0;
    r.nchunks = (uint64_t)((end - begin - 1) / chunk + 1);
    return spec_execute(&r, threads);
}

static void run_section(struct spec_run *r, uint64_t k, bool instrumented)
{
    (instrumented ? r->fn_clones[k] : r->fns[k])(r->arg);
}

int strobe_spec_sections(const strobe_spec_section_fn *fns, size_t n, void *arg, unsigned threads)
{
    if (fns == NULL && n > 0)
        return -EINVAL;
    strobe_spec_section_fn *clones = calloc(n ? n : 1, sizeof *clones);
    if (clones == NULL)
        return -ENOMEM;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        clones[k] = (strobe_spec_section_fn)strobe__tm_clone_of((const void *)fns[k]);
        if (clones[k] == NULL)
            rc = -EINVAL;
    }
    if (rc == 0 && n > 0) {
        struct spec_run r = {.nchunks = n,
                             .run = run_section,
                             .fns = fns,
                             .fn_clones = clones,
                             .arg = arg,
                             .site = (uintptr_t)__builtin_return_address(0)};
        rc = spec_execute(&r, threads);
    }
    free(clones);
    return rc;
}

int strobe_se_get_all_stats(strobe_se_report_t *out)
{
    out->total_nonspec_committed = atomic_load_explicit(&rt.se[SE_NONSPEC], memory_order_relaxed);
    out->total_spec_committed = atomic_load_explicit(&rt.se[SE_SPEC], memory_order_relaxed);
    out->total_rollbacks = atomic_load_explicit(&rt.se[SE_ROLLBACKS], memory_order_relaxed);
    out->total_serialized_jmv = atomic_load_explicit(&rt.se[SE_JMV], memory_order_relaxed);
    out->total_serialized_maxrb = atomic_load_explicit(&rt.se[SE_MAXRB], memory_order_relaxed);
    out->total_serialized_other = atomic_load_explicit(&rt.se[SE_OTHER], memory_order_relaxed);
    return 0;
}
