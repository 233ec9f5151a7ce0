/* SPDX-License-Identifier: MIT */
/*
 * The synchronization interposer (src/core/sync.c) end to end: `strobe
 * run` of analysis_locks_prog (locks_prog.c documents the exact counts),
 * then the lock model (src/analysis/locks.c) and `strobe report --locks`.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocks.h"
#include "analysis/decode.h"
#include "analysis/experiment.h"
#include "analysis/locks.h"
#include "common/build_config.h"
#include "common/format.h"
#include "records.h"
#include "test.h"

static char dir[4200];

/* Runs the fixture in MODE under `strobe run OPTIONS`; exits the test on
 * failure. Its output is kept in `output`. */
static char output[4096];

/* Whether `ns`, a wait strobe recorded, is the one the fixture timed
 * around the call and printed after `key`: a preemption stretches both, so
 * a fixed window around the fixture's sleep would fail on a loaded machine;
 * the recorded wait is inside the call, so it is at most the fixture's
 * (give or take the tick conversion) and short of it by what preemptions
 * between the fixture's clock and the runtime's cost: up to two time
 * slices of a few ms each on a loaded machine, hence 10 ms. */
static bool is_timed_wait(double ns, const char *key)
{
    const char *s = strstr(output, key);
    double timed = s ? strtod(s + strlen(key), NULL) : -1;
    if (timed >= 10e6 && ns <= timed * 1.001 && ns >= timed - (timed * 0.1 > 10e6 ? timed * 0.1 : 10e6))
        return true;
    fprintf(stderr, "recorded wait %.0f ns, the fixture timed %.0f ns (%s)\n", ns, timed, key);
    return false;
}

static struct strobe_experiment *run_prog(const char *name, const char *options, const char *prog,
                                          const char *mode)
{
    return strobe_test_run_fixture(dir, sizeof dir, output, sizeof output, name, options, prog, mode);
}

static struct strobe_experiment *run(const char *name, const char *options, const char *mode)
{
    return run_prog(name, options, "analysis_locks_prog", mode);
}

static struct strobe_lock_model *model(const struct strobe_experiment *exp)
{
    struct strobe_lock_model *m;
    struct strobe_errbuf eb = {""};
    if (strobe_lock_model_build(exp, &m, &eb) != 0)
        STROBE_FAIL("lock model: %s", eb.msg);
    return m;
}

/* "a > b" of a row's call path. */
static const char *path(const struct strobe_experiment *exp, const struct strobe_lock_row *r)
{
    static char buf[512];
    buf[0] = 0;
    for (uint32_t k = 0; k < r->depth; k++) {
        strcat(buf, k ? " > " : "");
        strcat(buf, exp->regions[r->path[k]].name);
    }
    return buf;
}

/* The row of object `name` at call path `p`; fails the test when absent. */
static const struct strobe_lock_row *row(const struct strobe_experiment *exp,
                                         const struct strobe_lock_model *m, const char *name, const char *p)
{
    for (size_t i = 0; i < m->nrows; i++)
        if (m->rows[i].name && strcmp(m->rows[i].name, name) == 0 && strcmp(path(exp, &m->rows[i]), p) == 0)
            return &m->rows[i];
    STROBE_FAIL("no lock row %s at %s", name, p);
}

/* The index (t<N>) of the k-th thread the fixture created (k from 1): the
 * threads other than main in index order (TSan builds skip index 1, which
 * TSan's own thread takes). */
static uint32_t worker(const struct strobe_experiment *exp, uint32_t k)
{
    uint32_t found = 0;
    for (uint32_t index = 1; index < 1000; index++)
        for (size_t t = 0; t < exp->nthreads; t++)
            if (exp->threads[t].index == index && ++found == k)
                return index;
    STROBE_FAIL("no worker thread %u", k);
}

/* Acquisitions of the row by the thread with index `index` (t<index>). */
static uint64_t by_thread(const struct strobe_experiment *exp, const struct strobe_lock_row *r,
                          uint32_t index)
{
    for (size_t k = 0; k < r->nthreads; k++)
        if (exp->threads[r->threads[k].thread].index == index)
            return r->threads[k].acquisitions;
    return 0;
}

struct sync_match {
    uint64_t op, obj;
    size_t n;
    struct strobe__raw_event *last;
};

static void match_sync(const struct strobe__raw_event *ev, void *arg)
{
    struct sync_match *m = arg;
    if (ev->kind == STROBE__RAW_SYNC && (m->op == 0 || ev->id == m->op) &&
        (m->obj == 0 || (uint64_t)ev->value == m->obj)) {
        m->n++;
        if (m->last)
            *m->last = *ev;
    }
}

/* The SYNC records of global thread `thread` with op `op` on object `obj`
 * (0: any): their number; the last one in *last. */
static size_t thread_sync_records(const struct strobe_experiment *exp, size_t thread, uint64_t op,
                                  uint64_t obj, struct strobe__raw_event *last)
{
    struct sync_match m = {op, obj, 0, last};
    strobe_test_each_record(exp->threads[thread].stream_path, match_sync, &m);
    return m.n;
}

/* The same over the threads t<index> (all: UINT32_MAX). */
static size_t sync_records(const struct strobe_experiment *exp, uint32_t index, uint64_t op, uint64_t obj,
                           struct strobe__raw_event *last)
{
    size_t n = 0;
    for (size_t t = 0; t < exp->nthreads; t++)
        if (index == UINT32_MAX || exp->threads[t].index == index)
            n += thread_sync_records(exp, t, op, obj, last);
    return n;
}

STROBE_TEST(mutex_counts_exact)
{
    struct strobe_experiment *exp = run("mutex_counts", "", "mutex");
    struct strobe_lock_model *m = model(exp);
    const struct strobe_lock_row *w = row(exp, m, "counted_lock", "worker > bump");
    CHECK_EQ_INT(w->kind, STROBE_SYNC_MUTEX);
    CHECK_EQ_U64(w->acquisitions, 600);
    CHECK_EQ_INT(w->nthreads, 3);
    CHECK_EQ_U64(by_thread(exp, w, worker(exp, 1)), 100);
    CHECK_EQ_U64(by_thread(exp, w, worker(exp, 2)), 200);
    CHECK_EQ_U64(by_thread(exp, w, worker(exp, 3)), 300);
    CHECK(w->hold_samples >= 16 && w->hold_samples <= w->acquisitions);
    const struct strobe_lock_row *mn = row(exp, m, "counted_lock", "main > bump");
    CHECK_EQ_U64(mn->acquisitions, 5);
    CHECK_EQ_U64(mn->contended, 0);
    CHECK_EQ_U64(mn->hold_samples, 5); /* the first 16 are all timed */
    CHECK_EQ_U64(by_thread(exp, mn, 0), 5);
    /* the deliberately contended lock: first by wait, the second worker's
     * one contended acquisition that waited about the first's 30 ms hold */
    const struct strobe_lock_row *hot = &m->rows[0];
    CHECK_STR_EQ(hot->name, "hot_lock");
    CHECK_STR_EQ(path(exp, hot), "worker > wait_hot");
    CHECK_EQ_U64(hot->acquisitions, 1);
    CHECK_EQ_U64(hot->contended, 1);
    CHECK(is_timed_wait((double)hot->wait_ns, "hot_wait_ns "));
    CHECK_EQ_U64(hot->wait_ns, hot->max_wait_ns);
    CHECK_EQ_U64(by_thread(exp, hot, worker(exp, 2)), 1);
    const struct strobe_lock_row *held = row(exp, m, "hot_lock", "worker > hold_hot");
    CHECK_EQ_U64(held->contended, 0);
    CHECK_EQ_U64(held->hold_samples, 1);
    CHECK(held->hold_ns >= 30000000);
    CHECK_EQ_U64(by_thread(exp, held, worker(exp, 1)), 1);
    CHECK_EQ_INT(m->nrows, 4); /* hot_lock at hold_hot and wait_hot, counted_lock twice */
    /* the trace: the second worker's blocked acquire names the first's
     * release, which the first recorded (the second was registered as a
     * waiter long before) */
    struct strobe__raw_event acq, rel;
    CHECK_EQ_INT(sync_records(exp, worker(exp, 2), STROBE_SYNC_ACQUIRE_MUTEX, hot->object, &acq), 1);
    CHECK_EQ_U64((uint64_t)acq.value, hot->object);
    double wait_ns = (double)acq.sync_args[0] * exp->processes[0].ns_per_tick;
    CHECK(is_timed_wait(wait_ns, "hot_wait_ns "));
    CHECK_EQ_U64(acq.sync_args[1], worker(exp, 1) + 1); /* releaser: the first worker */
    CHECK_EQ_INT(sync_records(exp, worker(exp, 1), STROBE_SYNC_RELEASE, hot->object, &rel), 1);
    CHECK_EQ_U64((uint64_t)rel.value, hot->object);
    CHECK_EQ_U64(rel.sync_args[0], acq.sync_args[2]); /* the same release number */
    CHECK(rel.ticks <= acq.ticks);
    strobe_lock_model_free(m);

    /* the report: the same numbers, hot_lock first */
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --locks", STROBE_BIN_DIR, dir), 0);
    const char *locks = strstr(out, "\nLocks (");
    CHECK(locks != NULL);
    const char *first = strstr(locks, "mutex   ");
    CHECK(first != NULL && strncmp(first + 8, "hot_lock\n", 9) == 0);
    char want[128];
    snprintf(want, sizeof want, "threads: t%u 100 t%u 200 t%u 300\n", worker(exp, 1), worker(exp, 2),
             worker(exp, 3));
    CHECK_CONTAINS(locks, want);
    CHECK_CONTAINS(locks, "path: worker > bump\n");
    CHECK_CONTAINS(locks, "threads: t0 5\n");
    free(out);

    /* the JSON: the same rows in the same order, paths as region indices,
     * threads as global indices (t<N> from the threads array: under TSan
     * they differ) */
    CHECK_EQ_INT(
        strobe_test_sh(
            &out,
            "%s/strobe report '%s' --locks --format json | python3 -c '"
            "import json,sys; d=json.load(sys.stdin); L=d[\"locks\"]; R=d[\"regions\"]; T=d[\"threads\"]\n"
            "for o in L[\"objects\"]: print(o[\"name\"], o[\"kind\"], "
            "\">\".join(R[i][\"name\"] for i in o[\"path\"]), o[\"acquisitions\"], "
            "o[\"contended\"], o[\"wait_ns\"] == o[\"max_wait_ns\"], "
            "\" \".join(\"t%%d:%%d\" %% (T[t[\"thread\"]][\"thread\"], t[\"acquisitions\"]) for t in "
            "o[\"threads\"]))\n"
            "print(len(L[\"barriers\"]), L[\"profiled_threads\"])'",
            STROBE_BIN_DIR, dir),
        0);
    snprintf(want, sizeof want, "hot_lock mutex worker>wait_hot 1 1 True t%u:1\n", worker(exp, 2));
    CHECK(strncmp(out, want, strlen(want)) == 0);
    CHECK_CONTAINS(out, "counted_lock mutex worker>bump 600 ");
    snprintf(want, sizeof want, " t%u:100 t%u:200 t%u:300\n", worker(exp, 1), worker(exp, 2), worker(exp, 3));
    CHECK_CONTAINS(out, want);
    CHECK_CONTAINS(out, "counted_lock mutex main>bump 5 0 True t0:5\n");
    CHECK_CONTAINS(out, "\n0 4\n");
    free(out);
    strobe_experiment_close(exp);
}

/* The line of the first `text` after the line holding `after` in
 * locks_prog.c. */
static unsigned fixture_line(const char *after, const char *text)
{
    FILE *f = fopen(STROBE_SOURCE_DIR "/tests/analysis/locks_prog.c", "r");
    char line[512];
    unsigned n = 0;
    bool seen = false;
    while (f && fgets(line, sizeof line, f)) {
        n++;
        seen = seen || strstr(line, after);
        if (seen && strstr(line, text)) {
            fclose(f);
            return n;
        }
    }
    STROBE_FAIL("locks_prog.c: no %s after %s", text, after);
}

STROBE_TEST(waits_by_call_site)
{
    /* no instrumentation: every acquisition is outside measured regions,
     * but the one wait is placed at its call in wait_hot, and the
     * runtime's own frames are skipped */
    struct strobe_experiment *exp = run_prog("sites", "", "analysis_locks_prog_plain", "mutex");
    CHECK_EQ_INT(exp->nregions, 0);
    struct strobe_lock_model *m = model(exp);
    CHECK(m->nrows >= 2);
    CHECK_STR_EQ(m->rows[0].name, "hot_lock");
    CHECK_EQ_INT(m->rows[0].depth, 0);
    /* the hot lock's one wait (under load the workers may also wait on
     * counted_lock, at bump) */
    const struct strobe_lock_site *s = NULL;
    for (size_t i = 0; i < m->nsites; i++) {
        CHECK(m->sites[i].name != NULL);
        if (m->sites[i].name && strcmp(m->sites[i].name, "hot_lock") == 0) {
            CHECK(s == NULL);
            s = &m->sites[i];
        } else {
            CHECK_STR_EQ(m->sites[i].function, "bump");
        }
    }
    if (!s)
        STROBE_FAIL("no site for hot_lock");
    CHECK_STR_EQ(s->name, "hot_lock");
    CHECK_EQ_INT(s->kind, STROBE_SYNC_MUTEX);
    CHECK_STR_EQ(s->function, "wait_hot");
    CHECK(strstr(s->file, "tests/analysis/locks_prog.c") != NULL);
    CHECK_EQ_INT(s->line, fixture_line("void wait_hot(void)", "pthread_mutex_lock(&hot_lock);"));
    CHECK_EQ_U64(s->waits, 1);
    CHECK_EQ_U64(s->wait_ns, m->rows[0].wait_ns);
    CHECK(is_timed_wait((double)s->wait_ns, "hot_wait_ns "));
    strobe_lock_model_free(m);
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --locks", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(
        out, "\nWaits by call site (from the trace: each wait at its first frame outside the runtime)\n");
    CHECK_CONTAINS(out, "  at wait_hot (");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "%s/strobe report '%s' --locks --format json | python3 -c '"
                                "import json,sys; s=json.load(sys.stdin)[\"locks\"][\"sites\"]\n"
                                "h=[x for x in s if x[\"name\"] == \"hot_lock\"]\n"
                                "print(h[0][\"name\"], h[0][\"kind\"], h[0][\"function\"], h[0][\"waits\"])'",
                                STROBE_BIN_DIR, dir),
                 0);
    CHECK_STR_EQ(out, "hot_lock mutex wait_hot 1\n");
    free(out);
}

STROBE_TEST(barrier_imbalance)
{
    struct strobe_experiment *exp = run("barrier", "", "barrier");
    struct strobe_lock_model *m = model(exp);
    CHECK_EQ_INT(m->nrows, 0);
    CHECK_EQ_INT(m->nbarriers, 1);
    const struct strobe_barrier_row *b = &m->barriers[0];
    CHECK_STR_EQ(b->name, "bar");
    CHECK_EQ_U64(b->episodes, 3);
    CHECK_EQ_U64(b->waits, 9);
    CHECK_EQ_INT(b->nthreads, 3);
    /* t1 slept ~50 ms before the second episode, t2 and t3 waited for
     * it: the longest wait is at least how long before t1 the first of
     * them arrived (not the sleep: on a loaded machine t2 and t3 can reach
     * the barrier late themselves), and it is the longest call the
     * threads timed */
    const char *s = strstr(output, "slept_ns ");
    CHECK(s != NULL);
    CHECK(strtod(s + 9, NULL) >= 50e6);
    s = strstr(output, "imbalance_ns ");
    CHECK(s != NULL);
    double imbalance = strtod(s + 13, NULL);
    if (!((double)b->max_wait_ns >= 0.9 * imbalance))
        STROBE_FAIL("longest barrier wait %" PRIu64 " ns, t1 arrived %.0f ns late", b->max_wait_ns, imbalance);
    CHECK(is_timed_wait((double)b->max_wait_ns, "longest_wait_ns "));
    /* every wait is in the trace: episodes 1..3 per thread, one serial
     * thread per episode */
    CHECK_EQ_INT(sync_records(exp, UINT32_MAX, STROBE_SYNC_BARRIER, 0, NULL), 9);
    struct strobe__raw_event last;
    for (uint32_t k = 1; k <= 3; k++) {
        CHECK_EQ_INT(sync_records(exp, worker(exp, k), STROBE_SYNC_BARRIER, 0, &last), 3);
        CHECK_EQ_U64(last.sync_args[1], 3);
    }
    strobe_lock_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST(condvar_producer_consumer)
{
    /* run() fails unless the consumer's sum is right */
    struct strobe_experiment *exp = run("cond", "", "cond");
    struct strobe_lock_model *m = model(exp);
    const struct strobe_lock_row *q = row(exp, m, "queue_lock", "producer");
    CHECK_EQ_U64(q->acquisitions, 20000);
    q = row(exp, m, "queue_lock", "consumer");
    CHECK_EQ_U64(q->acquisitions, 20000);
    for (size_t i = 0; i < m->nrows; i++)
        if (m->rows[i].kind == STROBE_SYNC_COND) {
            CHECK_STR_EQ(m->rows[i].name, "queue_cond");
            CHECK_EQ_U64(m->rows[i].contended, m->rows[i].acquisitions);
        }
    strobe_lock_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST(rwlock_spin_sem_exact)
{
    struct strobe_experiment *exp = run("misc", "--locks", "misc");
    struct strobe_lock_model *m = model(exp);
    const struct strobe_lock_row *r = row(exp, m, "rw", "main > misc");
    CHECK_EQ_INT(r->kind, STROBE_SYNC_RWLOCK);
    CHECK_EQ_U64(r->acquisitions, 17);
    r = row(exp, m, "spin", "main > misc");
    CHECK_EQ_INT(r->kind, STROBE_SYNC_SPIN);
    CHECK_EQ_U64(r->acquisitions, 7);
    r = row(exp, m, "sem", "main > misc");
    CHECK_EQ_INT(r->kind, STROBE_SYNC_SEM);
    CHECK_EQ_U64(r->acquisitions, 3);
    CHECK_EQ_U64(r->hold_samples, 0); /* a semaphore is not held */
    r = row(exp, m, "misc_lock", "main > misc");
    CHECK_EQ_U64(r->acquisitions, 2);
    CHECK_EQ_INT(m->nrows, 4);
    for (size_t i = 0; i < m->nrows; i++)
        CHECK_EQ_U64(m->rows[i].contended, 0);
    CHECK_EQ_INT(sync_records(exp, UINT32_MAX, 0, 0, NULL), 0); /* nothing waited */
    strobe_lock_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST(fork_child_forgets_parent_waiters)
{
    /* the child's signal has no waiter of its own: no SIGNAL record there,
     * while the parent's final signal (t1 waiting) is recorded */
    struct strobe_experiment *exp = run("fork", "", "fork");
    CHECK_EQ_INT(exp->nprocesses, 2);
    uint32_t child = exp->processes[0].parent == STROBE_NONE ? 1 : 0;
    size_t in_child = 0, in_parent = 0;
    for (size_t t = 0; t < exp->nthreads; t++)
        *(exp->threads[t].process == child ? &in_child : &in_parent) +=
            thread_sync_records(exp, t, STROBE_SYNC_SIGNAL, 0, NULL);
    CHECK_EQ_INT(in_child, 0);
    CHECK_EQ_INT(in_parent, 1);
    strobe_experiment_close(exp);
}

STROBE_TEST(no_profile_keeps_the_waits)
{
    /* the counts live in the profiles: without them only the waits are
     * recorded, and the report says why its table is empty */
    struct strobe_experiment *exp = run("no_profile", "--no-profile", "mutex");
    struct strobe_lock_model *m = model(exp);
    CHECK_EQ_INT(m->profiled_threads, 0);
    CHECK_EQ_INT(m->nrows, 0);
    CHECK(sync_records(exp, worker(exp, 2), STROBE_SYNC_ACQUIRE_MUTEX, 0, NULL) >= 1);
    strobe_lock_model_free(m);
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --locks", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(out, "  no profiles in this experiment (STROBE_PROFILE=0): lock counts live there\n");
    free(out);
}

STROBE_TEST(no_locks_records_nothing)
{
    struct strobe_experiment *exp = run("no_locks", "--no-locks", "mutex");
    struct strobe_lock_model *m = model(exp);
    CHECK_EQ_INT(m->nrows, 0);
    CHECK_EQ_INT(m->nbarriers, 0);
    CHECK_EQ_INT(m->profiled_threads, 4);
    CHECK_EQ_INT(sync_records(exp, UINT32_MAX, 0, 0, NULL), 0);
    strobe_lock_model_free(m);
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --locks", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(out, "  none (no lock");
    free(out);
}

/* Byte offset in `path` of the first SYNC slot; fails the test when there
 * is none. */
static long first_sync_slot(const char *path)
{
    const uint8_t *buf;
    size_t len;
    strobe_test_map(path, &buf, &len);
    long off = -1;
    for (size_t o = 64; off < 0 && o + 64 <= len; o += 64)
        if (buf[o] == STROBE_SLOT_SYNC)
            off = (long)o;
    strobe__file_unmap(buf, len);
    if (off < 0)
        STROBE_FAIL("%s: no SYNC slot", path);
    return off;
}

STROBE_TEST(corrupt_sync_data_is_one_line_error)
{
    struct strobe_experiment *exp = run("corrupt", "", "mutex");
    char prof[4400], evt[4400], *out;
    snprintf(prof, sizeof prof, "%s/%s/t2.prof", dir, exp->processes[0].dir);
    snprintf(evt, sizeof evt, "%s/%s/t2.evt", dir, exp->processes[0].dir);
    strobe_experiment_close(exp);
    /* a SYNC slot of an unknown kind (9) */
    long slot = first_sync_slot(prof);
    CHECK_EQ_INT(strobe_test_sh(NULL, "printf '\\011' | dd of='%s' bs=1 seek=%ld conv=notrunc 2>/dev/null",
                                prof, slot + 8),
                 0);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --locks", STROBE_BIN_DIR, dir), 1);
    char want[256];
    snprintf(want, sizeof want,
             "t2.prof: offset %ld: sync slot %ld has an unknown kind or inconsistent counts\n", slot,
             slot / 64 - 1);
    CHECK_CONTAINS(out, want);
    CHECK(strchr(out, '\n') == out + strlen(out) - 1); /* one line */
    free(out);
    /* a SYNC record of an unknown op (15): its op is the first payload
     * byte, after b0, a 1..10-byte delta and the 1-byte length */
    CHECK_EQ_INT(strobe_test_sh(NULL, "printf '\\002' | dd of='%s' bs=1 seek=%ld conv=notrunc 2>/dev/null",
                                prof, slot + 8),
                 0);
    long rec = strobe_test_first_record(evt, STROBE__RAW_SYNC, NULL);
    strobe_test_patch_ext_op(evt, rec, 15);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --locks --source trace", STROBE_BIN_DIR, dir),
                 1);
    snprintf(want, sizeof want, "t2.evt: offset %ld: unknown SYNC op 15\n", rec);
    CHECK_CONTAINS(out, want);
    free(out);
}

/* ---- task-graph recording (`strobe run --taskgraph`) ---- */

/* A SYNC, THREAD_CREATE or THREAD_JOIN record: thread t<index>, raw kind,
 * SYNC op (0 for the others), object (the other thread's index for the
 * others), ticket, arguments. */
struct ordered {
    uint32_t index;
    int kind;
    uint64_t op, obj, ticket, args[5];
};

#define MAX_ORDERED 400000
static struct ordered recs[MAX_ORDERED];
static size_t nrecs;

struct ordered_reader {
    const char *path;
    uint32_t index;
    uint64_t last; /* the thread's previous ticket */
};

static void read_one(const struct strobe__raw_event *ev, void *arg)
{
    struct ordered_reader *r = arg;
    if (ev->kind != STROBE__RAW_SYNC && ev->kind != STROBE__RAW_THREAD_CREATE &&
        ev->kind != STROBE__RAW_THREAD_JOIN)
        return;
    CHECK(nrecs < MAX_ORDERED);
    struct ordered *o = &recs[nrecs++];
    *o = (struct ordered){.index = r->index,
                          .kind = ev->kind,
                          .op = ev->kind == STROBE__RAW_SYNC ? ev->id : 0,
                          .obj = ev->kind == STROBE__RAW_SYNC ? (uint64_t)ev->value : ev->id,
                          .ticket = ev->ticket};
    memcpy(o->args, ev->sync_args, sizeof o->args);
    if (o->op == STROBE_SYNC_TIMEOUT) {
        CHECK_EQ_U64(o->ticket, 0);
        return;
    }
    if (!(o->ticket > r->last))
        STROBE_FAIL("%s: offset %llu: ticket %llu after %llu", r->path, (unsigned long long)ev->offset,
                    (unsigned long long)o->ticket, (unsigned long long)r->last);
    r->last = o->ticket;
}

/* Reads every such record of the experiment (process 0), each thread's in
 * stream order; checks that each has a ticket (but TIMEOUT) and that a
 * thread's tickets strictly increase. */
static void read_ordered(const struct strobe_experiment *exp)
{
    nrecs = 0;
    for (size_t t = 0; t < exp->nthreads; t++) {
        struct ordered_reader r = {exp->threads[t].stream_path, exp->threads[t].index, 0};
        strobe_test_each_record(r.path, read_one, &r);
    }
}

/* Records of thread t<index> (UINT32_MAX: any) of raw kind `kind`, SYNC op
 * `op` (0: any) on object `obj` (0: any). */
static size_t count_ordered(uint32_t index, int kind, uint64_t op, uint64_t obj)
{
    size_t n = 0;
    for (size_t i = 0; i < nrecs; i++)
        n += (index == UINT32_MAX || recs[i].index == index) && recs[i].kind == kind &&
             (op == 0 || recs[i].op == op) && (obj == 0 || recs[i].obj == obj);
    return n;
}

static int cmp_ticket(const void *a, const void *b)
{
    const struct ordered *x = a, *y = b;
    return (x->ticket > y->ticket) - (x->ticket < y->ticket);
}

/* The records on mutex `obj` in ticket order alternate: an acquire
 * (ACQUIRE_MUTEX, or COND_WAIT with obj as its mutex) by some thread,
 * then a release (RELEASE, or ARRIVE with obj as its mutex) by the same
 * thread; so every acquire's ticket is greater than the previous
 * release's. Returns the acquisitions. */
static size_t check_mutex_order(uint64_t obj)
{
    static struct ordered on[MAX_ORDERED];
    size_t n = 0;
    for (size_t i = 0; i < nrecs; i++) {
        const struct ordered *r = &recs[i];
        bool acquire = (r->op == STROBE_SYNC_ACQUIRE_MUTEX && r->obj == obj) ||
                       (r->op == STROBE_SYNC_COND_WAIT && r->args[1] == obj);
        bool release = (r->op == STROBE_SYNC_RELEASE && r->obj == obj) ||
                       (r->op == STROBE_SYNC_ARRIVE && r->args[1] == obj);
        if (acquire || release) {
            on[n] = *r;
            on[n++].op = acquire ? STROBE_SYNC_ACQUIRE_MUTEX : STROBE_SYNC_RELEASE;
        }
    }
    qsort(on, n, sizeof *on, cmp_ticket);
    CHECK(n % 2 == 0);
    for (size_t i = 0; i < n; i += 2) {
        CHECK_EQ_U64(on[i].op, STROBE_SYNC_ACQUIRE_MUTEX);
        CHECK_EQ_U64(on[i + 1].op, STROBE_SYNC_RELEASE);
        CHECK_EQ_INT(on[i + 1].index, on[i].index);
        CHECK(on[i + 1].ticket > on[i].ticket && (i == 0 || on[i].ticket > on[i - 1].ticket));
    }
    return n / 2;
}

/* The smallest and largest ticket of thread t<index>'s records. */
static void ticket_range(uint32_t index, uint64_t *lo, uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (size_t i = 0; i < nrecs; i++)
        if (recs[i].index == index && recs[i].ticket) {
            *lo = recs[i].ticket < *lo ? recs[i].ticket : *lo;
            *hi = recs[i].ticket > *hi ? recs[i].ticket : *hi;
        }
}

STROBE_TEST(taskgraph_records_exact)
{
    struct strobe_experiment *exp = run("taskgraph", "--taskgraph", "graph");
    struct strobe_lock_model *m = model(exp);
    const struct strobe_lock_row *r = row(exp, m, "graph_lock", "graph_worker");
    CHECK_EQ_U64(r->acquisitions, 6);
    CHECK_EQ_U64(r->hold_samples, 6); /* every hold timed */
    uint64_t lock = r->object;
    CHECK_EQ_INT(m->nbarriers, 1);
    CHECK_STR_EQ(m->barriers[0].name, "graph_bar");
    CHECK_EQ_U64(m->barriers[0].waits, 3);
    uint64_t bar = m->barriers[0].object;
    /* the sites list the waits only: no uncontended acquisition */
    uint64_t site_waits = 0;
    for (size_t i = 0; i < m->nsites; i++)
        if (m->sites[i].object == lock)
            site_waits += m->sites[i].waits;
    CHECK_EQ_U64(site_waits, r->contended);

    read_ordered(exp);
    /* main: 3 creates, 3 joins, nothing else */
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_THREAD_CREATE, 0, 0), 3);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_THREAD_JOIN, 0, 0), 3);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_SYNC, 0, 0), 0);
    uint64_t arrive_max = 0, depart_min = UINT64_MAX;
    for (uint32_t k = 1; k <= 3; k++) {
        uint32_t w = worker(exp, k);
        CHECK_EQ_INT(count_ordered(w, STROBE__RAW_SYNC, STROBE_SYNC_ACQUIRE_MUTEX, lock), 2);
        CHECK_EQ_INT(count_ordered(w, STROBE__RAW_SYNC, STROBE_SYNC_RELEASE, lock), 2);
        CHECK_EQ_INT(count_ordered(w, STROBE__RAW_SYNC, STROBE_SYNC_ARRIVE, bar), 1);
        CHECK_EQ_INT(count_ordered(w, STROBE__RAW_SYNC, STROBE_SYNC_BARRIER, bar), 1);
        CHECK_EQ_INT(count_ordered(w, STROBE__RAW_SYNC, 0, 0), 6);
        CHECK_EQ_INT(count_ordered(w, STROBE__RAW_THREAD_CREATE, 0, 0) +
                         count_ordered(w, STROBE__RAW_THREAD_JOIN, 0, 0),
                     0);
        /* its create before all its records, its join after */
        uint64_t lo, hi, create = 0, join = 0;
        ticket_range(w, &lo, &hi);
        for (size_t i = 0; i < nrecs; i++) {
            if (recs[i].index == 0 && recs[i].obj == w)
                *(recs[i].kind == STROBE__RAW_THREAD_CREATE ? &create : &join) = recs[i].ticket;
            if (recs[i].index == w && recs[i].op == STROBE_SYNC_ARRIVE) {
                CHECK_EQ_U64(recs[i].args[1], 0); /* a barrier: no mutex */
                arrive_max = recs[i].ticket > arrive_max ? recs[i].ticket : arrive_max;
            }
            if (recs[i].index == w && recs[i].op == STROBE_SYNC_BARRIER)
                depart_min = recs[i].ticket < depart_min ? recs[i].ticket : depart_min;
        }
        CHECK(create > 0 && create < lo && join > hi);
    }
    /* one episode: every departure after every arrival */
    CHECK(arrive_max < depart_min);
    CHECK_EQ_INT(check_mutex_order(lock), 6);
    strobe_lock_model_free(m);
    strobe_experiment_close(exp);

    /* the report and the exports take the new records (Paraver's is of
     * TM runs only) */
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --locks", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(out, "threads: t");
    free(out);
    const char *formats[] = {"chrome", "perfetto", "otf2"}; /* otf2 last: left out without OTF2 */
    for (size_t i = 0; i < sizeof formats / sizeof formats[0] - !STROBE_WITH_OTF2; i++) {
        CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe export '%s' --format %s -o '%s.%s'", STROBE_BIN_DIR, dir,
                                    formats[i], dir, formats[i]),
                     0);
        free(out);
    }
}

STROBE_TEST(taskgraph_cond_signal)
{
    struct strobe_experiment *exp = run("taskgraph_cond", "--taskgraph", "signal");
    struct strobe_lock_model *m = model(exp);
    uint64_t lock = row(exp, m, "sig_lock", "sig_waiter")->object, cond = 0;
    for (size_t i = 0; i < m->nrows; i++)
        if (m->rows[i].kind == STROBE_SYNC_COND)
            cond = m->rows[i].object;
    CHECK(cond != 0);
    read_ordered(exp);
    uint32_t w = worker(exp, 1);
    /* the waiter: lock, ARRIVE at the wait (which releases the mutex),
     * COND_WAIT when woken (which re-acquires it), unlock */
    CHECK_EQ_INT(count_ordered(w, STROBE__RAW_SYNC, 0, 0), 4);
    CHECK_EQ_INT(count_ordered(w, STROBE__RAW_SYNC, STROBE_SYNC_ACQUIRE_MUTEX, lock), 1);
    CHECK_EQ_INT(count_ordered(w, STROBE__RAW_SYNC, STROBE_SYNC_RELEASE, lock), 1);
    CHECK_EQ_INT(count_ordered(w, STROBE__RAW_SYNC, STROBE_SYNC_ARRIVE, cond), 1);
    CHECK_EQ_INT(count_ordered(w, STROBE__RAW_SYNC, STROBE_SYNC_COND_WAIT, cond), 1);
    /* main: lock, signal, unlock (and the create and join) */
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_SYNC, 0, 0), 3);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_SYNC, STROBE_SYNC_SIGNAL, cond), 1);
    uint64_t arrive = 0, signal = 0, woken = 0;
    for (size_t i = 0; i < nrecs; i++) {
        const struct ordered *r = &recs[i];
        if (r->op == STROBE_SYNC_ARRIVE) {
            CHECK_EQ_U64(r->args[0], 0);
            CHECK_EQ_U64(r->args[1], lock);
            arrive = r->ticket;
        }
        if (r->op == STROBE_SYNC_SIGNAL)
            signal = r->ticket;
        if (r->op == STROBE_SYNC_COND_WAIT) {
            CHECK_EQ_U64(r->args[1], lock);
            CHECK_EQ_U64(r->args[2], 1); /* the signaller: main (index 0) + 1 */
            woken = r->ticket;
        }
    }
    CHECK(arrive < signal && signal < woken);
    CHECK_EQ_INT(check_mutex_order(lock), 3); /* the waiter's lock, main's, the wait's re-acquisition */
    strobe_lock_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST(taskgraph_producer_consumer_order)
{
    /* 20000 items through queue_lock and queue_cond, contended: in ticket
     * order the mutex still alternates acquire and release by one thread
     * (waits, condition waits and their re-acquisitions included), and
     * the counts are the default mode's */
    struct strobe_experiment *exp = run("taskgraph_pc", "--taskgraph", "cond");
    struct strobe_lock_model *m = model(exp);
    const struct strobe_lock_row *q = row(exp, m, "queue_lock", "producer");
    uint64_t lock = q->object, cond_waits = 0;
    CHECK_EQ_U64(q->acquisitions, 20000);
    CHECK_EQ_U64(q->hold_samples, 20000); /* every hold timed, waited or not */
    CHECK_EQ_U64(row(exp, m, "queue_lock", "consumer")->acquisitions, 20000);
    CHECK_EQ_U64(row(exp, m, "queue_lock", "consumer")->hold_samples, 20000);
    for (size_t i = 0; i < m->nrows; i++)
        if (m->rows[i].kind == STROBE_SYNC_COND)
            cond_waits += m->rows[i].acquisitions;
    read_ordered(exp);
    CHECK_EQ_INT(count_ordered(UINT32_MAX, STROBE__RAW_SYNC, STROBE_SYNC_COND_WAIT, 0), cond_waits);
    CHECK_EQ_INT(count_ordered(UINT32_MAX, STROBE__RAW_SYNC, STROBE_SYNC_ARRIVE, 0), cond_waits);
    CHECK_EQ_INT(check_mutex_order(lock), 40000 + cond_waits);
    strobe_lock_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST(taskgraph_same_lock_model)
{
    /* the misc fixture again, every call recorded: the same profile
     * counts as rwlock_spin_sem_exact, and one record per call that
     * acquired or released */
    struct strobe_experiment *exp = run("taskgraph_misc", "--taskgraph", "misc");
    struct strobe_lock_model *m = model(exp);
    CHECK_EQ_U64(row(exp, m, "rw", "main > misc")->acquisitions, 17);
    CHECK_EQ_U64(row(exp, m, "spin", "main > misc")->acquisitions, 7);
    CHECK_EQ_U64(row(exp, m, "sem", "main > misc")->acquisitions, 3);
    CHECK_EQ_U64(row(exp, m, "misc_lock", "main > misc")->acquisitions, 2);
    CHECK_EQ_INT(m->nrows, 4);
    CHECK_EQ_INT(m->nsites, 0); /* nothing waited */
    for (size_t i = 0; i < m->nrows; i++)
        CHECK_EQ_U64(m->rows[i].contended, 0);
    read_ordered(exp);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_SYNC, STROBE_SYNC_ACQUIRE_READ, 0), 11);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_SYNC, STROBE_SYNC_ACQUIRE_WRITE, 0), 6);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_SYNC, STROBE_SYNC_ACQUIRE_SPIN, 0), 7);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_SYNC, STROBE_SYNC_ACQUIRE_SEM, 0), 3);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_SYNC, STROBE_SYNC_ACQUIRE_MUTEX, 0), 2);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_SYNC, STROBE_SYNC_RELEASE, 0), 17 + 7 + 3 + 2);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_SYNC, 0, 0), 2 * (17 + 7 + 3 + 2));
    for (size_t i = 0; i < nrecs; i++)
        if (recs[i].op != STROBE_SYNC_RELEASE)
            CHECK_EQ_U64(recs[i].args[0], 0); /* no wait */
    strobe_lock_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST(taskgraph_marks_in_block_streams)
{
    /* a program with modules traced by blocks (bb_prog.c, as `strobe cc
     * --trace=bb` builds them) under plain `strobe run`: their
     * registration turns task-graph recording on, and each thread's block
     * stream has a MARK per ticketed record of its event stream, in the
     * same order */
    struct strobe_experiment *exp = run_prog("taskgraph_marks", "", "analysis_bb_prog", "threads 3 100");
    read_ordered(exp);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_THREAD_CREATE, 0, 0), 3);
    CHECK_EQ_INT(count_ordered(0, STROBE__RAW_THREAD_JOIN, 0, 0), 3);
    struct strobe__blocks *b;
    struct strobe_errbuf eb = {""};
    if (strobe__blocks_open(exp, 0, &b, &eb) != 0 || !b)
        STROBE_FAIL("no blocks: %s", eb.msg);
    size_t marks = 0;
    for (uint32_t t = 0; t < exp->nthreads; t++) {
        struct strobe__bbstream *s;
        if (strobe__bbstream_open(exp, t, b, &s, &eb) != 0)
            STROBE_FAIL("%s", eb.msg);
        size_t k = 0; /* the thread's next record in recs */
        struct strobe__bb_event ev;
        int rc = 0;
        while (s && (rc = strobe__bbstream_next(s, &ev, &eb)) == 1) {
            if (ev.type != STROBE__BB_MARK)
                continue;
            while (k < nrecs && (recs[k].index != exp->threads[t].index || recs[k].ticket == 0))
                k++;
            if (k == nrecs)
                STROBE_FAIL("t%u.bb: MARK %llu without its record", exp->threads[t].index,
                            (unsigned long long)ev.ticket);
            CHECK_EQ_U64(ev.ticket, recs[k++].ticket);
            marks++;
        }
        if (rc < 0)
            STROBE_FAIL("%s", eb.msg);
        strobe__bbstream_close(s);
    }
    size_t ticketed = 0;
    for (size_t i = 0; i < nrecs; i++)
        ticketed += recs[i].ticket != 0;
    CHECK_EQ_INT(marks, ticketed);
    CHECK(marks >= 6);
    strobe__blocks_free(b);
    strobe_experiment_close(exp);
}

STROBE_TEST(report_locks_usage)
{
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report /nonexistent --locks --score", STROBE_BIN_DIR), 2);
    CHECK_CONTAINS(out, "strobe: report: '--score' and '--locks' exclude each other");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(mutex_counts_exact), STROBE_CASE(waits_by_call_site),
                 STROBE_CASE(barrier_imbalance), STROBE_CASE(condvar_producer_consumer),
                 STROBE_CASE(rwlock_spin_sem_exact), STROBE_CASE(fork_child_forgets_parent_waiters),
                 STROBE_CASE(no_profile_keeps_the_waits), STROBE_CASE(no_locks_records_nothing),
                 STROBE_CASE(corrupt_sync_data_is_one_line_error), STROBE_CASE(taskgraph_records_exact),
                 STROBE_CASE(taskgraph_cond_signal), STROBE_CASE(taskgraph_producer_consumer_order),
                 STROBE_CASE(taskgraph_same_lock_model), STROBE_CASE(taskgraph_marks_in_block_streams),
                 STROBE_CASE(report_locks_usage))
