/* SPDX-License-Identifier: MIT */
/*
 * petra-bench: throughput of transactional persistent structures, PETRA
 * (libstrobe-petra) against PMDK libpmemobj transactions under a
 * reader-writer lock (the seed's baseline) or under a lock per map bucket
 * or per list/skiplist node (the strong baselines), with the workloads of
 * seed 002, section 5.3 (docs/petra-bench.md):
 *
 *   petra-bench --structure list|skiplist|map --mix write|read --txsize K
 *               --threads N --seconds S --engine petra|pmemobj|... [...]
 *
 * The program creates a fresh heap file under --dir, prefills the
 * structure with half of the key range (the same keys in the same
 * transactions for both engines), then runs N threads for S seconds, each
 * executing transactions of K operations drawn from the mix with keys
 * uniform in [1, range], and prints one line of key=value fields:
 * operations of committed transactions per second, transactions per
 * second, the commit ratio, and flushes and fences per transaction.
 * Exit status: 0, 1 on a runtime error, 2 on a bad option.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/rng.h"
#include "common/size.h"
#include "engine.h"

#define MAX_THREADS 256
#define PREFILL_BATCH 16 /* INSERTs per prefill transaction (both engines) */

enum mix { MIX_WRITE, MIX_READ };

/* Operation mix in percent: insert, delete, update, find (seed 002,
 * Figure 5.5). Sets have no UPDATE. */
struct mix_pct {
    unsigned insert, delete_, update, find;
};

static const struct mix_pct mix_table[2][2] = {
    /* sets (list, skiplist) */ {{40, 40, 0, 20}, {10, 10, 0, 80}},
    /* map */ {{40, 30, 10, 20}, {10, 10, 5, 75}},
};

struct options {
    const struct strobe__bench_engine *engine;
    enum strobe_petra_kind kind;
    enum mix mix;
    unsigned txsize, threads;
    double seconds;
    uint64_t range, seed, heap_bytes;
    uint32_t buckets;
    const char *dir;
    int verbose;
};

struct worker {
    struct bench *b;
    pthread_t tid;
    unsigned index;
    void *thread; /* engine thread state */
    int rc;       /* first error (not aborts) */
    uint64_t committed, aborted, ops_committed;
    int64_t net_inserts; /* INSERTs - DELETEs of committed transactions */
};

/* Everything one run shares: options, engine, the start/stop protocol. */
struct bench {
    struct options opt;
    void *eng;
    pthread_barrier_t ready, start;
    atomic_int stop; /* set by main when time is up or on error; relaxed:
                        the counters are read after pthread_join */
    struct worker *workers;
};

/* ---- PRNG: xorshift64*, seeded through splitmix64 ------------------------- */

static uint64_t rng_seed(uint64_t seed, uint64_t stream)
{
    uint64_t s = strobe__splitmix64(seed ^ strobe__splitmix64(stream));
    return s ? s : 1;
}

/* uniform in [0, n) (Lemire's multiply-shift; bias < n / 2^64) */
static inline uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)strobe__xorshift64s(s) * n) >> 64);
}

/* ---- workload ---------------------------------------------------------------- */

static void make_tx(const struct options *o, uint64_t *rng, strobe__bench_op *ops)
{
    const struct mix_pct *m = &mix_table[o->kind == STROBE_PETRA_MAP][o->mix];
    for (unsigned i = 0; i < o->txsize; i++) {
        unsigned r = (unsigned)rng_below(rng, 100);
        uint8_t type = r < m->insert                          ? STROBE_PETRA_INSERT
                       : r < m->insert + m->delete_            ? STROBE_PETRA_DELETE
                       : r < m->insert + m->delete_ + m->update ? STROBE_PETRA_UPDATE
                                                                : STROBE_PETRA_FIND;
        ops[i] = (strobe__bench_op){.type = type,
                                    .key = 1 + rng_below(rng, o->range),
                                    .value = strobe__xorshift64s(rng)};
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct bench *b = w->b;
    const struct options *o = &b->opt;
    strobe__bench_op ops[STROBE_PETRA_MAX_OPS];
    uint64_t rng = rng_seed(o->seed, w->index + 1);

    w->rc = o->engine->thread_start(b->eng, w->index, &w->thread);
    pthread_barrier_wait(&b->ready);
    pthread_barrier_wait(&b->start);
    if (w->rc < 0)
        return NULL;
    while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
        make_tx(o, &rng, ops);
        int rc = o->engine->execute(w->thread, ops, o->txsize);
        if (rc == 0) {
            w->committed++;
            w->ops_committed += o->txsize;
            for (unsigned i = 0; i < o->txsize; i++)
                w->net_inserts += ops[i].type == STROBE_PETRA_INSERT   ? 1
                                  : ops[i].type == STROBE_PETRA_DELETE ? -1
                                                                       : 0;
        } else if (rc == STROBE_ERR_ABORTED) {
            w->aborted++;
        } else {
            w->rc = rc;
            atomic_store_explicit(&b->stop, 1, memory_order_relaxed);
            break;
        }
    }
    o->engine->thread_stop(w->thread);
    return NULL;
}

/* 1 if one of `sigs` (blocked) is pending: the run was interrupted */
static int signal_pending(const sigset_t *sigs)
{
    sigset_t pending;
    if (sigpending(&pending) < 0)
        return 0;
    for (int s = 1; s < NSIG; s++)
        if (sigismember(sigs, s) == 1 && sigismember(&pending, s) == 1)
            return 1;
    return 0;
}

/* Insert half of [1, range], in an order and grouping that depend only on
 * --seed and --range: the same for both engines. 0, -EINTR when one of
 * `sigs` arrived meanwhile, or another negative code with `why` set. */
static int prefill(struct bench *b, const sigset_t *sigs, char *why, size_t why_len)
{
    const struct options *o = &b->opt;
    uint64_t n = o->range, half = o->range / 2;
    uint64_t *keys = malloc(n * sizeof(*keys));
    if (!keys) {
        snprintf(why, why_len, "prefill: out of memory for %" PRIu64 " keys", n);
        return -ENOMEM;
    }
    uint64_t rng = rng_seed(o->seed, 0);
    for (uint64_t i = 0; i < n; i++)
        keys[i] = i + 1;
    for (uint64_t i = 0; i < half; i++) { /* partial Fisher-Yates */
        uint64_t j = i + rng_below(&rng, n - i), k = keys[i];
        keys[i] = keys[j];
        keys[j] = k;
    }
    void *t;
    int rc = o->engine->thread_start(b->eng, o->threads, &t);
    if (rc < 0) {
        snprintf(why, why_len, "prefill: cannot attach a thread: %s", strobe_strerror(rc));
        free(keys);
        return rc;
    }
    strobe__bench_op ops[PREFILL_BATCH];
    for (uint64_t i = 0; i < half && rc == 0; i += PREFILL_BATCH) {
        if ((i / PREFILL_BATCH) % 1024 == 1023 && signal_pending(sigs)) {
            snprintf(why, why_len, "interrupted during the prefill");
            rc = -EINTR;
            break;
        }
        unsigned m = half - i < PREFILL_BATCH ? (unsigned)(half - i) : PREFILL_BATCH;
        for (unsigned j = 0; j < m; j++)
            ops[j] = (strobe__bench_op){.type = STROBE_PETRA_INSERT, .key = keys[i + j],
                                        .value = keys[i + j]};
        rc = o->engine->execute(t, ops, m);
        if (rc < 0)
            snprintf(why, why_len, "prefill: inserting key %" PRIu64 " (%" PRIu64 " of %" PRIu64
                     "): %s", keys[i], i, half, rc == -ENOSPC ? "the heap is full (raise --heap-size)"
                                                             : strobe_strerror(rc));
    }
    o->engine->thread_stop(t);
    free(keys);
    return rc;
}

/* ---- options ----------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: petra-bench --engine petra|pmemobj|pmemobj-bucket|pmemobj-node\n"
            "                   --structure list|skiplist|map\n"
            "                   --mix write|read --txsize K --threads N --seconds S\n"
            "                   [--range R] [--seed N] [--dir DIR] [--heap-size BYTES]\n"
            "                   [--buckets N] [--verbose]\n"
            "engines built:%s%s\n",
#ifdef STROBE_BENCH_HAVE_PETRA
            " petra",
#else
            "",
#endif
#ifdef STROBE_BENCH_HAVE_PMEMOBJ
            " pmemobj pmemobj-bucket pmemobj-node"
#else
            ""
#endif
    );
}

/* val: the value given, NULL if it is missing, "" for no value at all */
static int bad_option(const char *opt, const char *val, const char *want)
{
    if (val && !*val)
        fprintf(stderr, "petra-bench: %s: %s\n", opt, want);
    else
        fprintf(stderr, "petra-bench: %s %s: %s\n", opt, val ? val : "(missing)", want);
    return -EINVAL;
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-')
        return -EINVAL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -EINVAL;
    *out = v;
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    int have_range = 0, have_engine = 0;
    *o = (struct options){.kind = STROBE_PETRA_LIST, .mix = MIX_WRITE, .txsize = 1, .threads = 1,
                          .seconds = 1.0, .seed = 1, .heap_bytes = 1ull << 30,
                          .buckets = 65536, .dir = "/tmp"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            o->verbose = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0)
            return bad_option(a, "", "unexpected argument (options start with --)");
        /* --opt value or --opt=value */
        char name[32];
        const char *v, *eq = strchr(a, '=');
        if (eq) {
            snprintf(name, sizeof(name), "%.*s", (int)(eq - a), a);
            v = eq + 1;
        } else {
            snprintf(name, sizeof(name), "%s", a);
            v = i + 1 < argc ? argv[++i] : NULL;
        }
        uint64_t n;
        if (!strcmp(name, "--engine")) {
            have_engine = 1;
            if (v && !strcmp(v, "petra")) {
#ifdef STROBE_BENCH_HAVE_PETRA
                o->engine = &strobe__bench_engine_petra;
#else
                return bad_option(name, v, "this build has no petra engine (libstrobe-petra was not built)");
#endif
            } else if (v && (!strcmp(v, "pmemobj") || !strcmp(v, "pmemobj-bucket") ||
                             !strcmp(v, "pmemobj-node"))) {
#ifdef STROBE_BENCH_HAVE_PMEMOBJ
                o->engine = !strcmp(v, "pmemobj")          ? &strobe__bench_engine_pmemobj
                            : !strcmp(v, "pmemobj-bucket") ? &strobe__bench_engine_pmemobj_bucket
                                                           : &strobe__bench_engine_pmemobj_node;
#else
                return bad_option(name, v, "this build has no pmemobj engine (libpmemobj was not found)");
#endif
            } else {
                return bad_option(name, v, "expected petra, pmemobj, pmemobj-bucket or pmemobj-node");
            }
        } else if (!strcmp(name, "--structure")) {
            if (v && !strcmp(v, "list"))
                o->kind = STROBE_PETRA_LIST;
            else if (v && !strcmp(v, "skiplist"))
                o->kind = STROBE_PETRA_SKIPLIST;
            else if (v && !strcmp(v, "map"))
                o->kind = STROBE_PETRA_MAP;
            else
                return bad_option(name, v, "expected list, skiplist or map");
        } else if (!strcmp(name, "--mix")) {
            if (v && !strcmp(v, "write"))
                o->mix = MIX_WRITE;
            else if (v && !strcmp(v, "read"))
                o->mix = MIX_READ;
            else
                return bad_option(name, v, "expected write or read");
        } else if (!strcmp(name, "--txsize")) {
            if (parse_u64(v, 1, STROBE_PETRA_MAX_OPS, &n) < 0)
                return bad_option(name, v, "expected an integer from 1 to 16");
            o->txsize = (unsigned)n;
        } else if (!strcmp(name, "--threads")) {
            if (parse_u64(v, 1, MAX_THREADS, &n) < 0)
                return bad_option(name, v, "expected an integer from 1 to 256");
            o->threads = (unsigned)n;
        } else if (!strcmp(name, "--seconds")) {
            char *end;
            errno = 0;
            o->seconds = v ? strtod(v, &end) : 0;
            if (!v || errno || *end || end == v || !(o->seconds > 0 && o->seconds <= 86400))
                return bad_option(name, v, "expected a number of seconds, > 0 and <= 86400");
        } else if (!strcmp(name, "--range")) {
            if (parse_u64(v, 2, 1ull << 32, &n) < 0)
                return bad_option(name, v, "expected an integer from 2 to 2^32");
            o->range = n;
            have_range = 1;
        } else if (!strcmp(name, "--seed")) {
            if (parse_u64(v, 0, UINT64_MAX, &n) < 0)
                return bad_option(name, v, "expected a non-negative integer");
            o->seed = n;
        } else if (!strcmp(name, "--dir")) {
            struct stat st;
            if (!v || !*v || stat(v, &st) < 0 || !S_ISDIR(st.st_mode))
                return bad_option(name, v, "not a directory");
            o->dir = v;
        } else if (!strcmp(name, "--heap-size")) {
            if (strobe__parse_size(v, &n) < 0 || n < (8u << 20))
                return bad_option(name, v, "expected a size of at least 8M (suffix K, M, G)");
            o->heap_bytes = n;
        } else if (!strcmp(name, "--buckets")) {
            if (parse_u64(v, 1, 1u << 24, &n) < 0 || (n & (n - 1)))
                return bad_option(name, v, "expected a power of two up to 2^24 (the limit of PETRA maps)");
            o->buckets = (uint32_t)n;
        } else {
            return bad_option(name, "", "unknown option (see --help)");
        }
    }
    if (!have_engine)
        return bad_option("--engine", NULL, "required: petra, pmemobj, pmemobj-bucket or pmemobj-node");
    if (!have_range)
        o->range = o->kind == STROBE_PETRA_LIST ? 10000 : 1000000;
    return 0;
}

/* ---- run ----------------------------------------------------------------------- */

static const char *structure_name(enum strobe_petra_kind k)
{
    return k == STROBE_PETRA_LIST ? "list" : k == STROBE_PETRA_SKIPLIST ? "skiplist" : "map";
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Sleep for `seconds` unless one of `sigs` arrives first. 1 if it did. */
static int wait_or_signal(const sigset_t *sigs, double seconds)
{
    double end = now_s() + seconds;
    for (;;) {
        double left = end - now_s();
        if (left <= 0)
            return 0;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        int s = sigtimedwait(sigs, NULL, &ts);
        if (s > 0)
            return 1;
        /* EAGAIN: time is up (checked at the loop top); EINTR: again */
    }
}

static void print_ratio(const char *key, uint64_t num, uint64_t den, int known)
{
    if (!known || den == 0)
        printf(" %s=n/a", key);
    else
        printf(" %s=%.2f", key, (double)num / (double)den);
}

static int run(struct bench *b, const char *path, const sigset_t *sigs)
{
    const struct options *o = &b->opt;
    char why[512] = "";
    struct strobe__bench_config cfg = {.kind = o->kind, .threads = o->threads,
                                       .heap_bytes = o->heap_bytes, .buckets = o->buckets};
    int rc = o->engine->open(&cfg, path, &b->eng, why, sizeof(why));
    if (rc < 0) {
        fprintf(stderr, "petra-bench: %s\n", why[0] ? why : strobe_strerror(rc));
        return 1;
    }
    int status = 1;
    double tp0 = now_s();
    rc = prefill(b, sigs, why, sizeof(why));
    double tp1 = now_s();
    if (rc == -EINTR) {
        fprintf(stderr, "petra-bench: interrupted\n");
        status = 130;
        goto out_close;
    }
    if (rc < 0) {
        fprintf(stderr, "petra-bench: %s engine, %s: %s\n", o->engine->name, path, why);
        goto out_close;
    }

    b->workers = calloc(o->threads, sizeof(*b->workers));
    if (!b->workers) {
        fprintf(stderr, "petra-bench: out of memory for %u threads\n", o->threads);
        goto out_close;
    }
    pthread_barrier_init(&b->ready, NULL, o->threads + 1);
    pthread_barrier_init(&b->start, NULL, o->threads + 1);
    unsigned started = 0;
    for (; started < o->threads; started++) {
        struct worker *w = &b->workers[started];
        w->b = b;
        w->index = started;
        if ((rc = pthread_create(&w->tid, NULL, worker_main, w)) != 0) {
            fprintf(stderr, "petra-bench: cannot start thread %u: %s\n", started, strerror(rc));
            /* the barriers expect every thread: give up without running */
            _exit(1);
        }
    }
    pthread_barrier_wait(&b->ready); /* every worker attached */
    struct strobe__bench_stats s0, s1;
    o->engine->stats(b->eng, &s0);
    double t0 = now_s();
    pthread_barrier_wait(&b->start);
    int interrupted = wait_or_signal(sigs, o->seconds);
    atomic_store_explicit(&b->stop, 1, memory_order_relaxed);
    for (unsigned i = 0; i < started; i++)
        pthread_join(b->workers[i].tid, NULL);
    double elapsed = now_s() - t0;
    o->engine->stats(b->eng, &s1);
    pthread_barrier_destroy(&b->ready);
    pthread_barrier_destroy(&b->start);

    uint64_t committed = 0, aborted = 0, ops = 0;
    int64_t net = 0;
    int err = 0;
    for (unsigned i = 0; i < started; i++) {
        net += b->workers[i].net_inserts;
        committed += b->workers[i].committed;
        aborted += b->workers[i].aborted;
        ops += b->workers[i].ops_committed;
        if (b->workers[i].rc < 0 && !err)
            err = b->workers[i].rc;
    }
    if (interrupted) {
        fprintf(stderr, "petra-bench: interrupted\n");
        status = 130;
        goto out_free;
    }
    if (err == -ENOSPC) {
        fprintf(stderr, "petra-bench: %s engine, %s: the heap is full (--heap-size %" PRIu64
                " bytes)\n", o->engine->name, path, o->heap_bytes);
        goto out_free;
    }
    if (err < 0) {
        fprintf(stderr, "petra-bench: %s engine, %s: a transaction failed: %s\n", o->engine->name,
                path, strobe_strerror(err));
        goto out_free;
    }

    /* The structure must be intact and hold exactly the prefill plus the
     * committed INSERTs minus the committed DELETEs: catches an engine
     * that commits what it should have aborted, or loses updates. */
    uint64_t keys = 0, want = o->range / 2 + (uint64_t)net;
    int check_ok = 1;
    rc = o->engine->check(b->eng, &keys, why, sizeof(why));
    if (rc < 0) {
        fprintf(stderr, "petra-bench: %s engine, %s: structure check failed after the run: %s\n",
                o->engine->name, path, why);
        check_ok = 0;
    } else if (keys != want) {
        fprintf(stderr, "petra-bench: %s engine, %s: the %s holds %" PRIu64 " keys after the run, "
                "expected %" PRIu64 " (prefill %" PRIu64 " + committed inserts - deletes %" PRId64 ")\n",
                o->engine->name, path, structure_name(o->kind), keys, want, o->range / 2, net);
        check_ok = 0;
    }

    uint64_t txs = committed + aborted;
    int known = s0.counted && s1.counted;
    if (o->verbose) {
        const struct mix_pct *m = &mix_table[o->kind == STROBE_PETRA_MAP][o->mix];
        printf("# petra-bench: engine %s, %s of keys 1..%" PRIu64 " (prefilled with %" PRIu64
               " keys in %.2f s), file %s\n",
               o->engine->name, structure_name(o->kind), o->range, o->range / 2, tp1 - tp0, path);
        printf("# mix %s: insert %u%%, delete %u%%, update %u%%, find %u%%; %u ops per transaction, "
               "%u threads, %.2f s, seed %" PRIu64 "%s\n",
               o->mix == MIX_WRITE ? "write" : "read", m->insert, m->delete_, m->update, m->find,
               o->txsize, o->threads, elapsed, o->seed,
               getenv("PMEM_IS_PMEM_FORCE") ? ", PMEM_IS_PMEM_FORCE set" : "");
        printf("# ops_per_s counts operations of committed transactions; flushes and fences are "
               "per executed transaction (committed or aborted) and per committed one\n");
    }
    printf("engine=%s structure=%s mix=%s txsize=%u threads=%u seconds=%.2f ops_per_s=%.0f "
           "tx_per_s=%.0f commit_ratio=%.3f",
           o->engine->name, structure_name(o->kind), o->mix == MIX_WRITE ? "write" : "read",
           o->txsize, o->threads, elapsed, (double)ops / elapsed, (double)committed / elapsed,
           txs ? (double)committed / (double)txs : 0.0);
    print_ratio("flushes_per_tx", s1.flushes - s0.flushes, txs, known);
    print_ratio("fences_per_tx", s1.fences - s0.fences, txs, known);
    print_ratio("flushes_per_commit", s1.flushes - s0.flushes, committed, known);
    print_ratio("fences_per_commit", s1.fences - s0.fences, committed, known);
    printf(" range=%" PRIu64 " committed=%" PRIu64 " aborted=%" PRIu64 " keys=%" PRIu64
           " check=%s", o->range, committed, aborted, keys, check_ok ? "ok" : "FAIL");
    print_ratio("other_flushes_per_tx", s1.other_flushes - s0.other_flushes, txs, known);
    print_ratio("other_fences_per_tx", s1.other_fences - s0.other_fences, txs, known);
    printf("\n");
    fflush(stdout);
    /* no commit at all is a result (at K = 16 about 2^-16 of the
     * transactions commit), not an error; a failed check is, but the
     * numbers are still printed (marked check=FAIL) */
    status = check_ok ? 0 : 1;

out_free:
    free(b->workers);
out_close:
    o->engine->close(b->eng);
    return status;
}

int main(int argc, char **argv)
{
    struct bench b = {0};
    if (parse_options(argc, argv, &b.opt) < 0)
        return 2;

    /* Signals that end a run are blocked in every thread (the workers
     * inherit the mask) and taken synchronously by main, so an interrupted
     * run still closes and removes its file. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    char path[PATH_MAX];
    int n = snprintf(path, sizeof(path), "%s/petra-bench.%ld.%s", b.opt.dir, (long)getpid(),
                     b.opt.engine->name);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        fprintf(stderr, "petra-bench: --dir %s: path too long\n", b.opt.dir);
        return 2;
    }
    if (!strncmp(b.opt.engine->name, "pmemobj", 7) && !getenv("PMEM_IS_PMEM_FORCE"))
        fprintf(stderr, "petra-bench: note: PMEM_IS_PMEM_FORCE is not set: on a file that is not "
                        "persistent memory libpmemobj persists with msync (slow)\n");
    int status = run(&b, path, &sigs);
    if (unlink(path) < 0 && errno != ENOENT)
        fprintf(stderr, "petra-bench: cannot remove %s: %s\n", path, strerror(errno));
    return status;
}
