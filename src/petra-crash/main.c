/* SPDX-License-Identifier: MIT */
/*
 * petra-crash: crash verification of PETRA heaps (docs/petra-crash.md).
 *
 * Each round forks a child that opens the heap (recovering it), runs
 * multithreaded transactions and is killed with SIGKILL after a random
 * delay; the parent then opens the heap again (recovery), runs
 * strobe_petra_verify, reads every structure through foreach and get, and
 * checks durable linearizability against an exact model plus the child's
 * acknowledgement log. --mode powerfail does the same with the library's
 * power-failure simulation, where only flushed and fenced cache lines
 * reach the file. Prints `crashes=N violations=V mode=M`; exit status 1
 * if V > 0, 2 for bad options.
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "petra-crash/model.h"

#define HEAP_BYTES (16ull<<20)
#define HEAP_LOG_BYTES (128ull<<10)
#define MAP_BUCKETS 256 /* 16 keys a bucket: chains long enough to conflict */
#define LOG_CAP 65536   /* transactions a worker may log per round */
#define START_TIMEOUT_MS 60000

static const char *const struct_heap_names[PC_NSTRUCT] = { "crash-list", "crash-skiplist", "crash-map" };
static const enum strobe_petra_kind struct_kinds[PC_NSTRUCT] = { STROBE_PETRA_LIST, STROBE_PETRA_SKIPLIST,
                                                                 STROBE_PETRA_MAP };

static void usage(FILE *f)
{
    fputs("usage: petra-crash [--mode kill|powerfail] [--crashes N] [--threads T] [--seed S]\n"
          "                   [--dir D] [--max-delay MS] [--fresh] [--distinct-keys] [--verbose]\n"
          "                   [--inject KIND]\n"
          "see docs/petra-crash.md\n",
          f);
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi)
        return -EINVAL;
    *out = v;
    return 0;
}

static int heap_opts(const struct pc_ctx *c, struct strobe_petra_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = HEAP_BYTES;
    o->log_bytes = HEAP_LOG_BYTES;
    /* exactly what the child attaches (T workers + one reader): a slot a
     * killed thread still holds after recovery makes the next attach fail */
    o->max_threads = c->threads + 1;
    o->powerfail = c->powerfail;
    return 0;
}

static int lookup_structures(struct pc_ctx *c, strobe_petra *h)
{
    for (int s = 0; s < PC_NSTRUCT; s++) {
        int id = strobe_petra_structure_find(h, struct_heap_names[s]);
        if (id < 0)
            return id;
        c->sid[s] = id;
    }
    return 0;
}

/* New heap: the three structures and the initial shared keys (every other
 * shared key present, as strobe__pc_model_init expects). */
static int heap_create(struct pc_ctx *c)
{
    struct strobe_petra_options o;
    strobe_petra *h;
    strobe_petra_thread *th;
    char why[256] = "";
    heap_opts(c, &o);
    if (unlink(c->path) < 0 && errno != ENOENT) {
        fprintf(stderr, "petra-crash: %s: cannot remove: %s\n", c->path, strerror(errno));
        return -errno;
    }
    int rc = strobe_petra_create(c->path, &o, &h, why, sizeof why);
    if (rc < 0) {
        fprintf(stderr, "petra-crash: %s: cannot create heap: %s\n", c->path, why[0] ? why : strobe_strerror(rc));
        return rc;
    }
    for (int s = 0; s < PC_NSTRUCT && rc >= 0; s++) {
        rc = strobe_petra_structure_create(h, struct_heap_names[s], struct_kinds[s], MAP_BUCKETS);
        c->sid[s] = rc;
    }
    if (rc >= 0)
        rc = strobe_petra_thread_attach(h, &th);
    if (rc < 0) {
        fprintf(stderr, "petra-crash: %s: cannot set up heap: %s\n", c->path, strobe_strerror(rc));
        strobe_petra_close(h);
        return rc;
    }
    strobe__pc_model_init(c->model, c->threads);
    struct strobe_petra_op ops[STROBE_PETRA_MAX_OPS];
    unsigned n = 0;
    for (int s = 0; s < PC_NSTRUCT && rc >= 0; s++) {
        for (uint64_t k = 1; k <= c->model->nkeys[s] && rc >= 0; k++) {
            if (!c->model->present[s][k])
                continue;
            ops[n++] = (struct strobe_petra_op){ STROBE_PETRA_INSERT, (uint8_t)c->sid[s], k,
                                                 c->model->value[s][k] };
            if (n == STROBE_PETRA_MAX_OPS) {
                rc = strobe_petra_execute(th, ops, n);
                n = 0;
            }
        }
    }
    if (rc >= 0 && n)
        rc = strobe_petra_execute(th, ops, n);
    strobe_petra_thread_detach(th);
    int rc2 = strobe_petra_close(h);
    if (rc < 0 || rc2 < 0) {
        fprintf(stderr, "petra-crash: %s: cannot fill heap: %s\n", c->path, strobe_strerror(rc < 0 ? rc : rc2));
        return rc < 0 ? rc : rc2;
    }
    return 0;
}

/* ---- child --------------------------------------------------------- */

struct read_state {
    struct pc_ctx *c;
    struct pc_found *f;
    int s;
    uint64_t last;
    int n_bad;
    const char *when;
};

static int collect(void *arg, uint64_t key, uint64_t value)
{
    struct read_state *r = arg;
    struct pc_ctx *c = r->c;
    int s = r->s;
    uint64_t hi = s == PC_MAP ? PC_MAP_KEYS + c->threads : c->model->nkeys[s];
    if (key < 1 || key > hi) {
        strobe__pc_violation(c, "%s: foreach %s: key %" PRIu64 " out of the key range", r->when,
                             strobe__pc_struct_names[s], key);
        return 0;
    }
    if (s != PC_MAP && key <= r->last)
        strobe__pc_violation(c, "%s: foreach %s: key %" PRIu64 " after key %" PRIu64 " (not sorted)",
                             r->when, strobe__pc_struct_names[s], key, r->last);
    if (r->f->present[s][key])
        strobe__pc_violation(c, "%s: foreach %s: key %" PRIu64 " seen twice", r->when,
                             strobe__pc_struct_names[s], key);
    r->last = key;
    r->f->present[s][key] = 1;
    r->f->value[s][key] = value;
    return 0;
}

/* Read every structure through foreach, then every key through get, and
 * report where they disagree. The foreach view is the result. */
static int read_heap(struct pc_ctx *c, strobe_petra_thread *th, struct pc_found *f, const char *when)
{
    memset(f, 0, sizeof *f);
    for (int s = 0; s < PC_NSTRUCT; s++) {
        struct read_state r = { c, f, s, 0, 0, when };
        int rc = strobe_petra_foreach(th, c->sid[s], collect, &r);
        if (rc != 0) {
            strobe__pc_violation(c, "%s: foreach %s: %s", when, strobe__pc_struct_names[s], strobe_strerror(rc));
            return rc;
        }
        uint64_t hi = s == PC_MAP ? PC_MAP_KEYS + c->threads : c->model->nkeys[s];
        for (uint64_t k = 1; k <= hi; k++) {
            uint64_t v = 0;
            int g = strobe_petra_get(th, c->sid[s], k, &v);
            if (g != 0 && g != -ENOENT) {
                strobe__pc_violation(c, "%s: get %s key %" PRIu64 ": %s", when, strobe__pc_struct_names[s], k,
                                     strobe_strerror(g));
            } else if ((g == 0) != f->present[s][k] || (g == 0 && v != f->value[s][k])) {
                strobe__pc_violation(c, "%s: %s key %" PRIu64 ": foreach gives %s 0x%016" PRIx64
                                        ", get gives %s 0x%016" PRIx64,
                                     when, strobe__pc_struct_names[s], k, f->present[s][k] ? "present" : "absent",
                                     f->value[s][k], g == 0 ? "present" : "absent", v);
            }
        }
    }
    return 0;
}

/* The child's view at open, before any transaction: the state the parent
 * checked, closed and the child recovered again must be unchanged. */
static void child_precheck(struct pc_ctx *c, strobe_petra_thread *th)
{
    struct pc_found *f = malloc(sizeof *f);
    if (!f)
        return;
    uint64_t before = c->violations;
    c->verbose = 0;
    read_heap(c, th, f, "child at open");
    for (int s = 0; s < PC_NSTRUCT; s++) {
        uint64_t hi = s == PC_MAP ? PC_MAP_KEYS + c->threads : c->model->nkeys[s];
        for (uint64_t k = 1; k <= hi; k++) {
            if (f->present[s][k] != c->model->present[s][k] ||
                (f->present[s][k] && f->value[s][k] != c->model->value[s][k]))
                strobe__pc_child_problem(c->sh,
                                         "child at open (heap the parent checked and closed, "
                                         "reopened): %s key %" PRIu64 ": expected %s 0x%016" PRIx64
                                         ", found %s 0x%016" PRIx64,
                                         strobe__pc_struct_names[s], k,
                                         c->model->present[s][k] ? "present" : "absent", c->model->value[s][k],
                                         f->present[s][k] ? "present" : "absent", f->value[s][k]);
        }
    }
    if (c->violations != before)
        strobe__pc_child_problem(c->sh, "child at open: %" PRIu64 " foreach/get problems (see above)",
                                 c->violations - before);
    free(f);
}

static void child_main(struct pc_ctx *c, int ready_fd)
{
    struct strobe_petra_options o;
    strobe_petra *h;
    char why[256] = "";
    heap_opts(c, &o);
    int rc = strobe_petra_open(c->path, &o, &h, why, sizeof why);
    if (rc < 0) {
        strobe__pc_child_problem(c->sh, "child: open %s: %s", c->path, why[0] ? why : strobe_strerror(rc));
        _exit(3);
    }
    if ((rc = lookup_structures(c, h)) < 0) {
        strobe__pc_child_problem(c->sh, "child: structure missing after open: %s", strobe_strerror(rc));
        _exit(3);
    }
    strobe_petra_thread *th[PC_MAX_THREADS + 1];
    for (unsigned t = 0; t <= c->threads; t++) {
        if ((rc = strobe_petra_thread_attach(h, &th[t])) < 0) {
            strobe__pc_child_problem(c->sh, "child: thread attach %u: %s", t, strobe_strerror(rc));
            _exit(3);
        }
    }
    child_precheck(c, th[c->threads]);
    _Atomic unsigned running = 0;
    struct pc_worker_arg args[PC_MAX_THREADS];
    pthread_t tid[PC_MAX_THREADS];
    for (unsigned t = 0; t < c->threads; t++) {
        args[t] = (struct pc_worker_arg){ c, th[t], t, &running };
        if (pthread_create(&tid[t], NULL, strobe__pc_worker, &args[t]) != 0) {
            strobe__pc_child_problem(c->sh, "child: pthread_create failed");
            _exit(3);
        }
    }
    while (atomic_load_explicit(&running, memory_order_relaxed) < c->threads)
        sched_yield();
    atomic_store_explicit(&c->sh->ready, 1, memory_order_release);
    char b = 'r';
    if (write(ready_fd, &b, 1) != 1)
        _exit(3);
    for (;;)
        pause();
}

/* ---- parent -------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Self-test faults, applied through the API after recovery, before the
 * check: each stands for a class of bug the check must catch. */
static void inject_fault(struct pc_ctx *c, strobe_petra_thread *th)
{
    struct pc_model *m = c->model;
    struct strobe_petra_op op = { 0 };
    for (uint64_t k = 1; k <= PC_SKIP_KEYS && !op.type; k++) {
        unsigned o = pc_owner(m, PC_SKIP, k);
        uint64_t v;
        int present = strobe_petra_get(th, c->sid[PC_SKIP], k, &v) == 0;
        if (!strcmp(c->inject, "lost") && o == 0 && present) /* acknowledged write lost */
            op = (struct strobe_petra_op){ STROBE_PETRA_DELETE, (uint8_t)c->sid[PC_SKIP], k, 0 };
        else if (!strcmp(c->inject, "phantom") && o == 0 && !present) /* effect of a tx never acked */
            op = (struct strobe_petra_op){ STROBE_PETRA_INSERT, (uint8_t)c->sid[PC_SKIP], k,
                                           strobe__pc_value(0, m->next_seq[0] + LOG_CAP, PC_SKIP, k, 0) };
        else if (!strcmp(c->inject, "torn") && o == PC_SHARED && present) /* torn value */
            op = (struct strobe_petra_op){ STROBE_PETRA_UPDATE, (uint8_t)c->sid[PC_SKIP], k, v ^ 1 };
        else if (!strcmp(c->inject, "count") && o == PC_SHARED && present) /* half a move */
            op = (struct strobe_petra_op){ STROBE_PETRA_DELETE, (uint8_t)c->sid[PC_SKIP], k, 0 };
    }
    if (op.type && strobe_petra_execute(th, &op, 1) != 0)
        fprintf(stderr, "petra-crash: --inject %s: the injecting transaction failed\n", c->inject);
}

/* One crash round. Returns 0, or < 0 when the run cannot continue. */
static int round_run(struct pc_ctx *c)
{
    struct pc_shared *sh = c->sh;
    c->round_violations = 0;
    if (c->fresh || c->round == 0) {
        int rc = heap_create(c);
        if (rc < 0)
            return rc;
    }
    atomic_store(&sh->ready, 0);
    atomic_store(&sh->nmsg, 0);
    for (int i = 0; i < PC_MAX_MSGS; i++)
        atomic_store(&sh->msg_done[i], 0);
    for (unsigned t = 0; t < c->threads; t++) {
        sh->tlog[t].first_seq = c->model->next_seq[t];
        atomic_store(&sh->tlog[t].count, 0);
    }
    int pfd[2];
    if (pipe(pfd) < 0)
        return -errno;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int rc = -errno;
        close(pfd[0]);
        close(pfd[1]);
        return rc;
    }
    if (pid == 0) {
        close(pfd[0]);
        child_main(c, pfd[1]);
        _exit(3);
    }
    close(pfd[1]);
    /* One round in 8 kills the child while it opens (recovers) the heap
     * or checks it, before any transaction: recovery must survive being
     * interrupted and leave the model's state. */
    int early = c->ready_ns && strobe__xorshift64s(&c->rng) % 8 == 0;
    uint64_t t_fork = now_ns();
    struct pollfd p = { pfd[0], POLLIN, 0 };
    char b;
    int started;
    if (early) {
        uint64_t ns = strobe__xorshift64s(&c->rng) % c->ready_ns;
        struct timespec d = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
        if (ppoll(&p, 1, &d, NULL) == 1 && read(pfd[0], &b, 1) != 1)
            b = 0;
        started = 1; /* the child need not have started: no complaint */
    } else {
        started = poll(&p, 1, START_TIMEOUT_MS) == 1 && read(pfd[0], &b, 1) == 1;
        if (started)
            c->ready_ns = now_ns() - t_fork;
    }
    c->early_kills += early;
    if (started && !early) {
        uint64_t us = 1000 + strobe__xorshift64s(&c->rng) % ((uint64_t)c->max_delay_ms * 1000 - 999);
        struct timespec d = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
        while (nanosleep(&d, &d) < 0 && errno == EINTR)
            ;
    }
    kill(pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    /* only now: a child killed early may still be writing "started", and
     * a closed read end would kill it with SIGPIPE before our SIGKILL */
    close(pfd[0]);
    uint32_t nmsg = atomic_load_explicit(&sh->nmsg, memory_order_acquire);
    for (uint32_t i = 0; i < nmsg; i++) {
        if (i < PC_MAX_MSGS && atomic_load_explicit(&sh->msg_done[i], memory_order_acquire))
            strobe__pc_violation(c, "%s", sh->msg[i]);
        else
            strobe__pc_violation(c, "(child problem %u: text not kept)", i);
    }
    if (!started)
        strobe__pc_violation(c, "child did not start its workload within %d ms", START_TIMEOUT_MS);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
        if (WIFSIGNALED(status))
            strobe__pc_violation(c, "child died of signal %d (%s) before the kill", WTERMSIG(status),
                                 strsignal(WTERMSIG(status)));
        else
            strobe__pc_violation(c, "child exited with status %d before the kill", WEXITSTATUS(status));
    }

    /* recovery */
    struct strobe_petra_options o;
    strobe_petra *h;
    strobe_petra_thread *th;
    char why[512] = "";
    heap_opts(c, &o);
    uint64_t t0 = now_ns();
    int rc = strobe_petra_open(c->path, &o, &h, why, sizeof why);
    uint64_t t_open = now_ns() - t0;
    if (rc < 0) {
        strobe__pc_violation(c, "recovery: open %s: %s", c->path, why[0] ? why : strobe_strerror(rc));
        return rc;
    }
    if ((rc = lookup_structures(c, h)) < 0) {
        strobe__pc_violation(c, "recovery: a structure is missing: %s", strobe_strerror(rc));
        strobe_petra_close(h);
        return rc;
    }
    why[0] = 0;
    uint64_t t1 = now_ns();
    if ((rc = strobe_petra_verify(h, why, sizeof why)) != 0)
        strobe__pc_violation(c, "strobe_petra_verify: %s", why[0] ? why : strobe_strerror(rc));
    if ((rc = strobe_petra_thread_attach(h, &th)) < 0) {
        strobe__pc_violation(c, "recovery: thread attach: %s", strobe_strerror(rc));
        strobe_petra_close(h);
        return rc;
    }
    if (c->inject)
        inject_fault(c, th);
    struct pc_found *f = c->found;
    uint64_t t2 = now_ns();
    read_heap(c, th, f, "recovered heap");
    uint64_t t3 = now_ns();
    if (c->verbose) {
        struct strobe_petra_stats st;
        strobe_petra_stats_get(h, &st);
        uint64_t txs = 0, com = 0, ab = 0, infl = 0;
        for (unsigned t = 0; t < c->threads; t++) {
            uint64_t n = atomic_load_explicit(&sh->tlog[t].count, memory_order_acquire);
            txs += n;
            for (uint64_t i = 0; i < n; i++) {
                uint32_t s = atomic_load_explicit(&pc_rec_at(c, t, i)->state, memory_order_acquire);
                com += s == PC_REC_COMMITTED;
                ab += s == PC_REC_ABORTED;
                infl += s == PC_REC_INFLIGHT;
            }
        }
        fprintf(stderr,
                "petra-crash: round %" PRIu64 ": %" PRIu64 " txs (%" PRIu64 " committed, %" PRIu64
                " aborted, %" PRIu64 " in flight)%s; child ready %.1f ms; recovery %.1f ms (%" PRIu64
                " descriptors replayed), verify %.1f ms, read %.1f ms\n",
                c->round, txs, com, ab, infl, early ? ", killed while opening" : "", c->ready_ns / 1e6,
                t_open / 1e6, st.recovered_descriptors, (t2 - t1) / 1e6, (t3 - t2) / 1e6);
    }
    strobe__pc_check_round(c, f);
    strobe_petra_thread_detach(th);
    uint64_t t4 = now_ns();
    if ((rc = strobe_petra_close(h)) < 0)
        strobe__pc_violation(c, "close after recovery: %s", strobe_strerror(rc));
    if (c->verbose)
        fprintf(stderr, "petra-crash: round %" PRIu64 ": check %.1f ms, close %.1f ms\n", c->round,
                (t4 - t3) / 1e6, (now_ns() - t4) / 1e6);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "mode", required_argument, 0, 'm' },   { "crashes", required_argument, 0, 'n' },
        { "threads", required_argument, 0, 't' }, { "seed", required_argument, 0, 's' },
        { "dir", required_argument, 0, 'd' },    { "max-delay", required_argument, 0, 'D' },
        { "fresh", no_argument, 0, 'f' },        { "verbose", no_argument, 0, 'v' },
        { "inject", required_argument, 0, 'i' }, { "help", no_argument, 0, 'h' },
        { "distinct-keys", no_argument, 0, 'k' },
        { 0, 0, 0, 0 },
    };
    struct pc_ctx ctx = { 0 }, *c = &ctx;
    const char *mode = "kill";
    uint64_t v;
    int ch;
    c->crashes = 100;
    c->threads = 4;
    c->max_delay_ms = 50;
    c->seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 20;
    c->dir = ".";
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'm':
            if (strcmp(optarg, "kill") && strcmp(optarg, "powerfail")) {
                fprintf(stderr, "petra-crash: --mode %s: expected kill or powerfail\n", optarg);
                return 2;
            }
            mode = optarg;
            c->powerfail = !strcmp(optarg, "powerfail");
            break;
        case 'n':
            if (parse_u64(optarg, 1, UINT64_MAX / 2, &c->crashes) < 0) {
                fprintf(stderr, "petra-crash: --crashes %s: expected a positive count\n", optarg);
                return 2;
            }
            break;
        case 't':
            if (parse_u64(optarg, 1, PC_MAX_THREADS, &v) < 0) {
                fprintf(stderr, "petra-crash: --threads %s: expected 1..%d\n", optarg, PC_MAX_THREADS);
                return 2;
            }
            c->threads = (unsigned)v;
            break;
        case 's':
            if (parse_u64(optarg, 0, UINT64_MAX, &c->seed) < 0) {
                fprintf(stderr, "petra-crash: --seed %s: expected an unsigned integer\n", optarg);
                return 2;
            }
            break;
        case 'd': c->dir = optarg; break;
        case 'D':
            if (parse_u64(optarg, 1, 60000, &v) < 0) {
                fprintf(stderr, "petra-crash: --max-delay %s: expected 1..60000 (ms)\n", optarg);
                return 2;
            }
            c->max_delay_ms = (unsigned)v;
            break;
        case 'f': c->fresh = 1; break;
        case 'v': c->verbose = 1; break;
        case 'k': c->distinct_keys = 1; break;
        case 'i':
            if (strcmp(optarg, "lost") && strcmp(optarg, "phantom") && strcmp(optarg, "torn") &&
                strcmp(optarg, "count")) {
                fprintf(stderr, "petra-crash: --inject %s: expected lost, phantom, torn or count\n", optarg);
                return 2;
            }
            c->inject = optarg;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    struct stat st;
    if (stat(c->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "petra-crash: --dir %s: not a directory\n", c->dir);
        return 2;
    }
    snprintf(c->path, sizeof c->path, "%s/petra-crash.%d.heap", c->dir, (int)getpid());
    c->rng = c->seed ^ 0x5851F42D4C957F2DULL;
    if (!c->rng)
        c->rng = 1;
    c->log_cap = LOG_CAP;
    size_t shbytes = sizeof(struct pc_shared) + 64 + PC_MAX_THREADS * LOG_CAP * sizeof(struct pc_rec);
    void *shm = mmap(NULL, shbytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    c->model = calloc(1, sizeof *c->model);
    c->found = strobe__pc_alloc_nofork(sizeof *c->found);
    if (shm == MAP_FAILED || !c->model || !c->found) {
        fprintf(stderr, "petra-crash: cannot allocate the acknowledgement log (%zu bytes)\n", shbytes);
        return 1;
    }
    c->sh = shm;
    c->recs = (struct pc_rec *)((char *)shm + ((sizeof(struct pc_shared) + 63) & ~(size_t)63));
    if (c->verbose)
        fprintf(stderr, "petra-crash: mode=%s seed=%" PRIu64 " threads=%u heap=%s flush=%s\n", mode, c->seed,
                c->threads, c->path, strobe_petra_flush_instruction());
    uint64_t t0 = now_ns();
    int rc = 0;
    for (c->round = 0; c->round < c->crashes; c->round++) {
        if ((rc = round_run(c)) < 0)
            break;
    }
    uint64_t done = c->round + (rc < 0 && c->round < c->crashes);
    double secs = (now_ns() - t0) / 1e9;
    if (rc < 0)
        fprintf(stderr, "petra-crash: stopped after round %" PRIu64 ": %s\n", c->round, strobe_strerror(rc));
    if (c->verbose)
        fprintf(stderr,
                "petra-crash: %.1f s, %.1f ms per crash, %" PRIu64 " killed while opening; %" PRIu64
                " txs acknowledged committed, %" PRIu64 " aborted; at the kills %" PRIu64
                " in flight: %" PRIu64 " applied, %" PRIu64 " not\n",
                secs, secs * 1e3 / (double)(done ? done : 1), c->early_kills, c->txs_committed, c->txs_aborted,
                c->inflight_applied + c->inflight_dropped, c->inflight_applied, c->inflight_dropped);
    unlink(c->path);
    free(c->model);
    munmap(c->found, sizeof *c->found);
    if (c->scratch)
        munmap(c->scratch, strobe__pc_scratch_size());
    munmap(shm, shbytes);
    printf("crashes=%" PRIu64 " violations=%" PRIu64 " mode=%s\n", done, c->violations, mode);
    return c->violations || rc < 0 ? 1 : 0;
}
