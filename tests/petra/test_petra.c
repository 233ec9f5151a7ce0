/* SPDX-License-Identifier: MIT */
/* Unit tests of libstrobe-petra: each structure single- and multithreaded
 * against an exact model, transactions, checkpoints, reopen, the flush and
 * fence counts of Algorithm 5.4, and corrupt or truncated files. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strobe/petra.h"
#include "test.h"

#define WHY 256

static char path_buf[512];

static const char *fresh_path(const char *name)
{
    snprintf(path_buf, sizeof path_buf, "%s/%s.%d.heap", STROBE_TEST_WORK_DIR, name, (int)getpid());
    unlink(path_buf);
    return path_buf;
}

static strobe_petra *create(const char *path, uint64_t log_bytes)
{
    struct strobe_petra_options o = { .size = 64ull << 20, .max_threads = 8, .log_bytes = log_bytes };
    strobe_petra *h = NULL;
    char why[WHY] = "";
    int rc = strobe_petra_create(path, &o, &h, why, sizeof why);
    if (rc)
        fprintf(stderr, "create: %s (%s)\n", strobe_strerror(rc), why);
    CHECK_EQ_INT(rc, 0);
    return h;
}

static strobe_petra *reopen(const char *path)
{
    strobe_petra *h = NULL;
    char why[WHY] = "";
    int rc = strobe_petra_open(path, NULL, &h, why, sizeof why);
    if (rc)
        fprintf(stderr, "open: %s (%s)\n", strobe_strerror(rc), why);
    CHECK_EQ_INT(rc, 0);
    return h;
}

static void verify(strobe_petra *h)
{
    char why[WHY] = "";
    int rc = strobe_petra_verify(h, why, sizeof why);
    if (rc)
        fprintf(stderr, "verify: %s\n", why);
    CHECK_EQ_INT(rc, 0);
}

static int op1(strobe_petra_thread *t, int s, uint8_t type, uint64_t key, uint64_t value)
{
    struct strobe_petra_op op = { type, (uint8_t)s, key, value };
    return strobe_petra_execute(t, &op, 1);
}

static int count_cb(void *arg, uint64_t key, uint64_t value)
{
    (void)key;
    (void)value;
    ++*(int *)arg;
    return 0;
}

static int count(strobe_petra_thread *t, int s)
{
    int n = 0;
    CHECK_EQ_INT(strobe_petra_foreach(t, s, count_cb, &n), 0);
    return n;
}

STROBE_TEST(set_semantics)
{
    const char *path = fresh_path("set");
    strobe_petra *h = create(path, 0);
    int s = strobe_petra_structure_create(h, "set", STROBE_PETRA_LIST, 0);
    CHECK_EQ_INT(s, 0);
    CHECK_EQ_INT(strobe_petra_structure_create(h, "set", STROBE_PETRA_LIST, 0), -EEXIST);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    for (uint64_t k = 10; k >= 1; k--)
        CHECK_EQ_INT(op1(t, s, STROBE_PETRA_INSERT, k, k * 100), 0);
    uint64_t v = 0;
    CHECK_EQ_INT(op1(t, s, STROBE_PETRA_INSERT, 5, 1), STROBE_ERR_ABORTED);
    CHECK_EQ_INT(op1(t, s, STROBE_PETRA_DELETE, 11, 0), STROBE_ERR_ABORTED);
    CHECK_EQ_INT(op1(t, s, STROBE_PETRA_FIND, 11, 0), STROBE_ERR_ABORTED);
    struct strobe_petra_op f = { STROBE_PETRA_FIND, (uint8_t)s, 7, 0 };
    CHECK_EQ_INT(strobe_petra_execute(t, &f, 1), 0);
    CHECK_EQ_U64(f.value, 700);
    /* all or nothing: the third operation fails, the first two vanish */
    struct strobe_petra_op tx[3] = { { STROBE_PETRA_INSERT, (uint8_t)s, 20, 1 },
                                     { STROBE_PETRA_DELETE, (uint8_t)s, 3, 0 },
                                     { STROBE_PETRA_INSERT, (uint8_t)s, 4, 0 } };
    CHECK_EQ_INT(strobe_petra_execute(t, tx, 3), STROBE_ERR_ABORTED);
    CHECK_EQ_INT(strobe_petra_get(t, s, 20, NULL), -ENOENT);
    CHECK_EQ_INT(strobe_petra_get(t, s, 3, NULL), 0);
    /* an operation sees the earlier ones of its own transaction */
    struct strobe_petra_op tx2[3] = { { STROBE_PETRA_DELETE, (uint8_t)s, 3, 0 },
                                      { STROBE_PETRA_INSERT, (uint8_t)s, 3, 33 },
                                      { STROBE_PETRA_FIND, (uint8_t)s, 3, 0 } };
    CHECK_EQ_INT(strobe_petra_execute(t, tx2, 3), 0);
    CHECK_EQ_U64(tx2[2].value, 33);
    CHECK_EQ_INT(op1(t, s, STROBE_PETRA_DELETE, 10, 0), 0);
    CHECK_EQ_INT(count(t, s), 9);
    /* an aborted transaction that touched a key twice leaves the state from
     * before its first touch */
    struct strobe_petra_op tx3[3] = { { STROBE_PETRA_INSERT, (uint8_t)s, 50, 1 },
                                      { STROBE_PETRA_DELETE, (uint8_t)s, 50, 0 },
                                      { STROBE_PETRA_FIND, (uint8_t)s, 51, 0 } };
    CHECK_EQ_INT(strobe_petra_execute(t, tx3, 3), STROBE_ERR_ABORTED);
    CHECK_EQ_INT(strobe_petra_get(t, s, 50, NULL), -ENOENT);
    struct strobe_petra_op tx4[3] = { { STROBE_PETRA_DELETE, (uint8_t)s, 5, 0 },
                                      { STROBE_PETRA_INSERT, (uint8_t)s, 5, 1 },
                                      { STROBE_PETRA_FIND, (uint8_t)s, 51, 0 } };
    CHECK_EQ_INT(strobe_petra_execute(t, tx4, 3), STROBE_ERR_ABORTED);
    CHECK_EQ_INT(strobe_petra_get(t, s, 5, &v), 0);
    CHECK_EQ_U64(v, 500);
    CHECK_EQ_INT(count(t, s), 9);
    CHECK_EQ_INT(op1(t, s, 0, 1, 0), -EINVAL);
    CHECK_EQ_INT(op1(t, s, STROBE_PETRA_FIND, 0, 0), -EINVAL);
    CHECK_EQ_INT(op1(t, 9, STROBE_PETRA_FIND, 1, 0), -EINVAL);
    strobe_petra_thread_detach(t);
    verify(h);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    h = reopen(path);
    CHECK_EQ_INT(strobe_petra_structure_find(h, "set"), s);
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    CHECK_EQ_INT(count(t, s), 9);
    CHECK_EQ_INT(strobe_petra_get(t, s, 3, &v), 0);
    CHECK_EQ_U64(v, 33);
    CHECK_EQ_INT(strobe_petra_get(t, s, 10, &v), -ENOENT);
    strobe_petra_thread_detach(t);
    verify(h);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(path);
}

STROBE_TEST(map_values)
{
    const char *path = fresh_path("map");
    strobe_petra *h = create(path, 0);
    int m = strobe_petra_structure_create(h, "m", STROBE_PETRA_MAP, 16);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    CHECK_EQ_INT(op1(t, m, STROBE_PETRA_UPDATE, 5, 1), STROBE_ERR_ABORTED);
    CHECK_EQ_INT(op1(t, m, STROBE_PETRA_PUT, 5, 1), 0);
    CHECK_EQ_INT(op1(t, m, STROBE_PETRA_UPDATE, 5, 2), 0);
    CHECK_EQ_INT(op1(t, m, STROBE_PETRA_PUT, 5, 3), 0);
    uint64_t v = 0;
    CHECK_EQ_INT(strobe_petra_get(t, m, 5, &v), 0);
    CHECK_EQ_U64(v, 3);
    for (uint64_t k = 1; k <= 1000; k++)
        CHECK_EQ_INT(op1(t, m, STROBE_PETRA_PUT, k, k ^ 0xabcdef), 0);
    CHECK_EQ_INT(count(t, m), 1000);
    for (uint64_t k = 2; k <= 1000; k += 2)
        CHECK_EQ_INT(op1(t, m, STROBE_PETRA_DELETE, k, 0), 0);
    CHECK_EQ_INT(count(t, m), 500);
    strobe_petra_thread_detach(t);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    h = reopen(path);
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    CHECK_EQ_INT(count(t, m), 500);
    for (uint64_t k = 1; k <= 1000; k++) {
        int rc = strobe_petra_get(t, m, k, &v);
        CHECK_EQ_INT(rc, k % 2 ? 0 : -ENOENT);
        if (!rc)
            CHECK_EQ_U64(v, k ^ 0xabcdef);
    }
    strobe_petra_thread_detach(t);
    verify(h);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(path);
}


/* Random transactions over six keys, so that transactions touch a key
 * several times and abort often, against an exact model of presence and
 * values (FIND values included), on every structure kind. */
STROBE_TEST(random_model_few_keys)
{
    const char *path = fresh_path("few");
    strobe_petra *h = create(path, 64 << 10);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int kind = STROBE_PETRA_LIST; kind <= STROBE_PETRA_MAP; kind++) {
        char name[8];
        snprintf(name, sizeof name, "k%d", kind);
        int s = strobe_petra_structure_create(h, name, (enum strobe_petra_kind)kind, 4);
        int present[7] = { 0 };
        uint64_t value[7] = { 0 };
        for (int r = 0; r < 20000; r++) {
            unsigned n = 1u << (r % 4); /* 1, 2, 4, 8 operations */
            struct strobe_petra_op ops[8];
            int p[7], ok = 1;
            uint64_t v[7], want[8] = { 0 };
            memcpy(p, present, sizeof p);
            memcpy(v, value, sizeof v);
            for (unsigned i = 0; i < n; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ops[i] = (struct strobe_petra_op){ (uint8_t)(1 + x % 5), (uint8_t)s, 1 + (x >> 8) % 6,
                                                   x >> 20 };
                unsigned k = (unsigned)ops[i].key;
                if (!ok)
                    continue;
                switch (ops[i].type) {
                case STROBE_PETRA_FIND: ok = p[k]; want[i] = v[k]; break;
                case STROBE_PETRA_INSERT: ok = !p[k]; p[k] = 1; v[k] = ops[i].value; break;
                case STROBE_PETRA_DELETE: ok = p[k]; p[k] = 0; break;
                case STROBE_PETRA_UPDATE: ok = p[k]; v[k] = ops[i].value; break;
                default: p[k] = 1; v[k] = ops[i].value; break;
                }
            }
            CHECK_EQ_INT(strobe_petra_execute(t, ops, n), ok ? 0 : STROBE_ERR_ABORTED);
            if (ok) {
                memcpy(present, p, sizeof p);
                memcpy(value, v, sizeof v);
                for (unsigned i = 0; i < n; i++)
                    if (ops[i].type == STROBE_PETRA_FIND)
                        CHECK_EQ_U64(ops[i].value, want[i]);
            }
            for (uint64_t k = 1; k <= 6; k++) {
                uint64_t got = 0;
                int rc = strobe_petra_get(t, s, k, &got);
                CHECK_EQ_INT(rc, present[k] ? 0 : -ENOENT);
                if (!rc)
                    CHECK_EQ_U64(got, value[k]);
            }
        }
    }
    strobe_petra_thread_detach(t);
    verify(h);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(path);
}

/* ---- Heavy contention: eight threads on eight keys, transactions of two
 * to four operations, so that threads help each other, help cycles abort
 * transactions and helpers arrive late. Afterwards every node must be
 * settled (verify: none names a descriptor) and reads must agree. */
struct hot {
    strobe_petra *h;
    int ids[2];
    uint64_t seed;
    int bad;
};

static void *hot_main(void *arg)
{
    struct hot *w = arg;
    strobe_petra_thread *t;
    if (strobe_petra_thread_attach(w->h, &t)) {
        w->bad++;
        return NULL;
    }
    uint64_t x = w->seed;
    for (int r = 0; r < 20000; r++) {
        struct strobe_petra_op ops[4];
        unsigned n = 2 + (unsigned)(r % 3);
        for (unsigned i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ops[i] = (struct strobe_petra_op){ (uint8_t)(1 + x % 5), (uint8_t)w->ids[(x >> 9) & 1],
                                               1 + (x >> 12) % 8, x >> 20 };
        }
        int rc = strobe_petra_execute(t, ops, n);
        if (rc && rc != STROBE_ERR_ABORTED)
            w->bad++;
    }
    strobe_petra_thread_detach(t);
    return NULL;
}

STROBE_TEST(contention_settles)
{
    const char *path = fresh_path("hot");
    strobe_petra *h = create(path, 64 << 10);
    int ids[2] = { strobe_petra_structure_create(h, "l", STROBE_PETRA_LIST, 0),
                   strobe_petra_structure_create(h, "m", STROBE_PETRA_MAP, 4) };
    struct hot w[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        w[i] = (struct hot){ h, { ids[0], ids[1] }, 0x5555 + 77 * (uint64_t)i, 0 };
        CHECK_EQ_INT(pthread_create(&th[i], NULL, hot_main, &w[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(w[i].bad, 0);
    }
    verify(h);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    for (int s = 0; s < 2; s++) {
        int present = 0;
        for (uint64_t k = 1; k <= 8; k++)
            present += strobe_petra_get(t, ids[s], k, NULL) == 0;
        CHECK_EQ_INT(count(t, ids[s]), present);
    }
    strobe_petra_thread_detach(t);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    h = reopen(path);
    verify(h);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(path);
}

/* ---- Multithreaded: private partitions checked exactly, plus a shared
 * partition where every transaction moves a key (DELETE a, INSERT b) so the
 * number of shared keys is conserved while threads conflict and help. */
#define THREADS 4
#define PART 512
#define SHARED_BASE 1000000
#define SHARED_RANGE 64
#define SHARED_KEYS 32
#define ROUNDS 3000

struct worker {
    strobe_petra *h;
    int ids[3];
    unsigned idx;
    uint64_t rng;
    uint8_t present[3][PART + 1];
    uint64_t value[3][PART + 1];
    int failures;
    uint64_t moves;
};

static uint64_t rnd(struct worker *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    strobe_petra_thread *t;
    if (strobe_petra_thread_attach(w->h, &t)) {
        w->failures++;
        return NULL;
    }
    for (int r = 0; r < ROUNDS; r++) {
        if (r % 4 == 3) {
            uint64_t a = SHARED_BASE + rnd(w) % SHARED_RANGE, b = SHARED_BASE + rnd(w) % SHARED_RANGE;
            int s = w->ids[rnd(w) % 3];
            struct strobe_petra_op mv[2] = { { STROBE_PETRA_DELETE, (uint8_t)s, a, 0 },
                                             { STROBE_PETRA_INSERT, (uint8_t)s, b, b * 3 } };
            int rc = strobe_petra_execute(t, mv, 2);
            if (rc && rc != STROBE_ERR_ABORTED)
                w->failures++;
            w->moves += rc == 0;
            continue;
        }
        unsigned n = 1 + (unsigned)(rnd(w) % 8);
        struct strobe_petra_op ops[8];
        uint8_t pres[3][8];
        int expect_ok = 1;
        /* model the transaction on a scratch copy of the touched keys */
        uint8_t scratch_p[8];
        uint64_t keys[8];
        int sidx[8];
        for (unsigned i = 0; i < n; i++) {
            sidx[i] = (int)(rnd(w) % 3);
            keys[i] = 1 + rnd(w) % PART;
            uint8_t type = (uint8_t)(1 + rnd(w) % 5);
            ops[i] = (struct strobe_petra_op){ type, (uint8_t)w->ids[sidx[i]],
                                               w->idx * 100000ull + keys[i], rnd(w) >> 1 };
        }
        (void)pres;
        uint8_t tp[3][PART + 1];
        uint64_t tv[3][PART + 1];
        memcpy(tp, w->present, sizeof tp);
        memcpy(tv, w->value, sizeof tv);
        uint64_t find_expect[8] = { 0 };
        for (unsigned i = 0; i < n && expect_ok; i++) {
            uint8_t *p = &tp[sidx[i]][keys[i]];
            uint64_t *v = &tv[sidx[i]][keys[i]];
            switch (ops[i].type) {
            case STROBE_PETRA_FIND: expect_ok = *p; find_expect[i] = *v; break;
            case STROBE_PETRA_INSERT: expect_ok = !*p; *p = 1; *v = ops[i].value; break;
            case STROBE_PETRA_DELETE: expect_ok = *p; *p = 0; break;
            case STROBE_PETRA_UPDATE: expect_ok = *p; *v = ops[i].value; break;
            default: *p = 1; *v = ops[i].value; break;
            }
        }
        (void)scratch_p;
        int rc = strobe_petra_execute(t, ops, n);
        if (rc != (expect_ok ? 0 : STROBE_ERR_ABORTED)) {
            fprintf(stderr, "thread %u round %d: rc %d, expected %d\n", w->idx, r, rc, expect_ok);
            w->failures++;
            continue;
        }
        if (rc == 0) {
            for (unsigned i = 0; i < n; i++)
                if (ops[i].type == STROBE_PETRA_FIND && ops[i].value != find_expect[i])
                    w->failures++;
            memcpy(w->present, tp, sizeof tp);
            memcpy(w->value, tv, sizeof tv);
        }
    }
    strobe_petra_thread_detach(t);
    return NULL;
}

static struct {
    strobe_petra_thread *t;
    struct worker *w;
    int sidx, bad, seen;
} chk;

static int check_cb(void *arg, uint64_t key, uint64_t value)
{
    (void)arg;
    if (key >= SHARED_BASE) {
        chk.seen++;
        if (value != key * 3 && value != 7)
            chk.bad++;
        return 0;
    }
    unsigned idx = (unsigned)(key / 100000);
    uint64_t k = key % 100000;
    if (idx >= THREADS || k < 1 || k > PART || !chk.w[idx].present[chk.sidx][k] ||
        chk.w[idx].value[chk.sidx][k] != value)
        chk.bad++;
    else
        chk.seen++;
    return 0;
}

static void check_model(strobe_petra *h, struct worker *w, int *ids)
{
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    int shared_total = 0;
    for (int s = 0; s < 3; s++) {
        int expected = 0;
        for (int i = 0; i < THREADS; i++)
            for (int k = 1; k <= PART; k++)
                expected += w[i].present[s][k];
        chk.t = t;
        chk.w = w;
        chk.sidx = s;
        chk.bad = chk.seen = 0;
        CHECK_EQ_INT(strobe_petra_foreach(t, ids[s], check_cb, NULL), 0);
        CHECK_EQ_INT(chk.bad, 0);
        int shared = 0;
        for (uint64_t k = SHARED_BASE; k < SHARED_BASE + SHARED_RANGE; k++)
            shared += strobe_petra_get(t, ids[s], k, NULL) == 0;
        CHECK_EQ_INT(chk.seen, expected + shared);
        shared_total += shared;
    }
    CHECK_EQ_INT(shared_total, 3 * SHARED_KEYS);
    strobe_petra_thread_detach(t);
}

static void run_threads(uint64_t log_bytes, int kind_all)
{
    const char *path = fresh_path("mt");
    char saved[512];
    strcpy(saved, path);
    strobe_petra *h = create(saved, log_bytes);
    int ids[3];
    ids[0] = strobe_petra_structure_create(h, "list", kind_all ? kind_all : STROBE_PETRA_LIST, 0);
    ids[1] = strobe_petra_structure_create(h, "skip", kind_all ? kind_all : STROBE_PETRA_SKIPLIST, 0);
    ids[2] = strobe_petra_structure_create(h, "map", kind_all ? kind_all : STROBE_PETRA_MAP, 256);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    for (int s = 0; s < 3; s++)
        for (uint64_t k = 0; k < SHARED_KEYS; k++)
            CHECK_EQ_INT(op1(t, ids[s], STROBE_PETRA_INSERT, SHARED_BASE + 2 * k, 7), 0);
    strobe_petra_thread_detach(t);
    static struct worker w[THREADS];
    memset(w, 0, sizeof w);
    pthread_t th[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        w[i].h = h;
        memcpy(w[i].ids, ids, sizeof ids);
        w[i].idx = i;
        w[i].rng = 0x1234567 + i * 7919;
        CHECK_EQ_INT(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    uint64_t moves = 0;
    for (unsigned i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(w[i].failures, 0);
        moves += w[i].moves;
    }
    CHECK(moves > 0);
    verify(h);
    check_model(h, w, ids);
    struct strobe_petra_stats st;
    strobe_petra_stats_get(h, &st);
    if (log_bytes)
        CHECK(st.checkpoints > 3);
    CHECK(st.live_descriptor_bytes <= (uint64_t)8 * (log_bytes ? log_bytes : 4u << 20));
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    h = reopen(saved);
    verify(h);
    check_model(h, w, ids);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(saved);
}

STROBE_TEST(threads_exact) { run_threads(0, 0); }
/* 64 KiB logs: a checkpoint every few hundred transactions, concurrently */
STROBE_TEST(threads_with_checkpoints) { run_threads(64 << 10, 0); }
STROBE_TEST(threads_skiplists) { run_threads(64 << 10, STROBE_PETRA_SKIPLIST); }

/* Algorithm 5.4's cost: one flush per operation, one for the descriptor,
 * one fence per committed transaction; an aborted one costs none. */
STROBE_TEST(flushes_and_fences)
{
    const char *path = fresh_path("flush");
    strobe_petra *h = create(path, 0);
    int m = strobe_petra_structure_create(h, "m", STROBE_PETRA_MAP, 0);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    uint64_t expect_flushes = 0, txs = 0;
    for (unsigned n = 1; n <= STROBE_PETRA_MAX_OPS; n++) {
        struct strobe_petra_op ops[STROBE_PETRA_MAX_OPS];
        for (unsigned i = 0; i < n; i++)
            ops[i] = (struct strobe_petra_op){ STROBE_PETRA_INSERT, (uint8_t)m, n * 100 + i, i };
        CHECK_EQ_INT(strobe_petra_execute(t, ops, n), 0);
        CHECK_EQ_INT(strobe_petra_execute(t, ops, n), STROBE_ERR_ABORTED);
        expect_flushes += n + 1;
        txs += 1;
    }
    struct strobe_petra_stats st;
    strobe_petra_stats_get(h, &st);
    CHECK_EQ_U64(st.committed, 16);
    CHECK_EQ_U64(st.aborted, 16);
    CHECK_EQ_U64(st.ops_committed, 136);
    CHECK_EQ_U64(st.tx_flushes, expect_flushes);
    CHECK_EQ_U64(st.tx_fences, txs);
    strobe_petra_thread_detach(t);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(path);
}

/* The simulated power failure writes the file only at fences: a clean run
 * through it must leave exactly the same durable state. */
STROBE_TEST(powerfail_round_trip)
{
    const char *path = fresh_path("pf");
    struct strobe_petra_options o = { .size = 64ull << 20, .max_threads = 4, .log_bytes = 64 << 10,
                                      .powerfail = 1 };
    strobe_petra *h;
    char why[WHY];
    CHECK_EQ_INT(strobe_petra_create(path, &o, &h, why, sizeof why), 0);
    int s = strobe_petra_structure_create(h, "s", STROBE_PETRA_SKIPLIST, 0);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    for (uint64_t k = 1; k <= 3000; k++)
        CHECK_EQ_INT(op1(t, s, STROBE_PETRA_PUT, k, k + 1), 0);
    for (uint64_t k = 1; k <= 3000; k += 3)
        CHECK_EQ_INT(op1(t, s, STROBE_PETRA_DELETE, k, 0), 0);
    strobe_petra_thread_detach(t);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    h = reopen(path);
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    CHECK_EQ_INT(count(t, s), 2000);
    uint64_t v;
    CHECK_EQ_INT(strobe_petra_get(t, s, 2, &v), 0);
    CHECK_EQ_U64(v, 3);
    CHECK_EQ_INT(strobe_petra_get(t, s, 4, &v), -ENOENT);
    strobe_petra_thread_detach(t);
    verify(h);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(path);
}

static void expect_open_error(const char *path, int code, const char *needle)
{
    strobe_petra *h = NULL;
    char why[WHY] = "";
    CHECK_EQ_INT(strobe_petra_open(path, NULL, &h, why, sizeof why), code);
    CHECK(h == NULL);
    CHECK_CONTAINS(why, needle);
}

static void poke(const char *path, off_t off, uint8_t xor_byte)
{
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    uint8_t b;
    CHECK_EQ_INT((int)pread(fd, &b, 1, off), 1);
    b ^= xor_byte;
    CHECK_EQ_INT((int)pwrite(fd, &b, 1, off), 1);
    close(fd);
}

STROBE_TEST(corrupt_files)
{
    const char *path = fresh_path("bad");
    char saved[512];
    strcpy(saved, path);
    expect_open_error(saved, -ENOENT, "No such file");
    FILE *f = fopen(saved, "w");
    fputs("hello", f);
    fclose(f);
    expect_open_error(saved, STROBE_ERR_TRUNCATED, "too short");
    f = fopen(saved, "w");
    for (int i = 0; i < 8192; i++)
        fputc('x', f);
    fclose(f);
    expect_open_error(saved, STROBE_ERR_FORMAT, "not a petra heap");
    unlink(saved);

    strobe_petra *h = create(saved, 64 << 10);
    int s = strobe_petra_structure_create(h, "s", STROBE_PETRA_LIST, 0);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    for (uint64_t k = 1; k <= 100; k++)
        CHECK_EQ_INT(op1(t, s, STROBE_PETRA_INSERT, k, k), 0);
    strobe_petra_thread_detach(t);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    /* garbage in a descriptor log is not a descriptor: still opens */
    int fd = open(saved, O_RDWR);
    char junk[4096];
    memset(junk, 0x5a, sizeof junk);
    CHECK_EQ_INT((int)pwrite(fd, junk, sizeof junk, 65536 + 8192), (int)sizeof junk);
    struct stat stt;
    fstat(fd, &stt);
    close(fd);
    h = reopen(saved);
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    CHECK_EQ_INT(count(t, s), 100);
    strobe_petra_thread_detach(t);
    CHECK_EQ_INT(strobe_petra_close(h), 0);

    poke(saved, 20, 0x01); /* superblock field */
    expect_open_error(saved, STROBE_ERR_FORMAT, "superblock checksum");
    poke(saved, 20, 0x01);
    poke(saved, 8, 0x7f); /* version */
    expect_open_error(saved, STROBE_ERR_VERSION, "format version");
    poke(saved, 8, 0x7f);
    poke(saved, 8192, 0xff); /* both checkpoint records */
    poke(saved, 8192 + 64, 0xff);
    expect_open_error(saved, STROBE_ERR_FORMAT, "no valid checkpoint");
    poke(saved, 8192, 0xff);
    poke(saved, 8192 + 64, 0xff);
    CHECK_EQ_INT(truncate(saved, stt.st_size - 4096), 0);
    expect_open_error(saved, STROBE_ERR_TRUNCATED, "truncated");
    CHECK_EQ_INT(truncate(saved, stt.st_size), 0);
    h = reopen(saved);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(saved);
}

/* One owner per heap: a second open, from another process or from this
 * one, fails with -EBUSY naming the holder's pid while the first holds it;
 * after the holder closes, or is SIGKILLed, the heap opens again. */
static pid_t hold_heap(const char *path, int *release_fd)
{
    int ready[2], release[2];
    CHECK(pipe(ready) == 0 && pipe(release) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        strobe_petra *h;
        char why[WHY];
        close(ready[0]);
        close(release[1]);
        if (strobe_petra_open(path, NULL, &h, why, sizeof why))
            _exit(2);
        char c = 1;
        if (write(ready[1], &c, 1) != 1)
            _exit(3);
        (void)!read(release[0], &c, 1); /* until the parent says so */
        _exit(strobe_petra_close(h) ? 4 : 0);
    }
    close(ready[1]);
    close(release[0]);
    char c;
    CHECK_EQ_INT((int)read(ready[0], &c, 1), 1);
    close(ready[0]);
    *release_fd = release[1];
    return pid;
}

STROBE_TEST(one_owner)
{
    const char *path = fresh_path("owner");
    char saved[512], want[WHY + 600], why[WHY];
    strcpy(saved, path);
    strobe_petra *h = create(saved, 64 << 10);
    /* a second handle of the same process is refused too */
    strobe_petra *h2 = NULL;
    snprintf(want, sizeof want, "%s: in use by process %d (it holds the heap's lock)", saved, (int)getpid());
    CHECK_EQ_INT(strobe_petra_open(saved, NULL, &h2, why, sizeof why), -EBUSY);
    CHECK(h2 == NULL);
    CHECK_STR_EQ(why, want);
    CHECK_EQ_INT(strobe_petra_close(h), 0);

    for (int kill_it = 0; kill_it < 2; kill_it++) {
        int release;
        pid_t pid = hold_heap(saved, &release);
        snprintf(want, sizeof want, "%s: in use by process %d (it holds the heap's lock)", saved, (int)pid);
        why[0] = 0;
        CHECK_EQ_INT(strobe_petra_open(saved, NULL, &h2, why, sizeof why), -EBUSY);
        CHECK(h2 == NULL);
        CHECK_STR_EQ(why, want);
        if (kill_it)
            kill(pid, SIGKILL);
        close(release);
        int status;
        CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
        if (kill_it)
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        else
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        h = reopen(saved);
        verify(h);
        CHECK_EQ_INT(strobe_petra_close(h), 0);
    }
    unlink(saved);
}

/* ---- A deterministic single-thread history in a child that kills itself
 * without closing: recovery must rebuild exactly the model (every
 * transaction returned before the kill), through a snapshot chain of bases
 * and deltas plus the descriptors after it. */
#define HKEYS 2000
#define HTX 20000

struct model {
    uint8_t present[HKEYS + 1];
    uint64_t value[HKEYS + 1];
};

/* Returns how many transactions committed after the last checkpoint. */
static int history(strobe_petra_thread *t, int m, struct model *md)
{
    uint64_t x = 88172645463325252ull;
    int tail = 0;
    for (int i = 0; i < HTX; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t k = 1 + x % HKEYS;
        int del = (x >> 32) % 3 == 0;
        if (t) {
            int rc = op1(t, m, del ? STROBE_PETRA_DELETE : STROBE_PETRA_PUT, k, x >> 1);
            if (rc != (del && !md->present[k] ? STROBE_ERR_ABORTED : 0))
                _exit(3);
            if (i % 1000 == 499 && strobe_petra_checkpoint(t))
                _exit(4);
        }
        if (i % 1000 == 499)
            tail = 0;
        else if (!del || md->present[k])
            tail++;
        if (del) {
            md->present[k] = 0;
        } else {
            md->present[k] = 1;
            md->value[k] = x >> 1;
        }
    }
    return tail;
}

static void crash_and_recover(int powerfail)
{
    const char *path = fresh_path(powerfail ? "crashpf" : "crash");
    char saved[512];
    strcpy(saved, path);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        /* 1 MiB logs: no automatic checkpoint, only the explicit ones */
        struct strobe_petra_options o = { .size = 64ull << 20, .max_threads = 2, .log_bytes = 1 << 20,
                                          .powerfail = powerfail };
        strobe_petra *h;
        char why[WHY];
        if (strobe_petra_create(saved, &o, &h, why, sizeof why))
            _exit(2);
        int m = strobe_petra_structure_create(h, "m", STROBE_PETRA_MAP, 128);
        strobe_petra_thread *t;
        strobe_petra_thread_attach(h, &t);
        static struct model md;
        history(t, m, &md);
        struct strobe_petra_stats st;
        strobe_petra_stats_get(h, &st);
        if (st.checkpoints != 21) /* the initial one and one per 1000 */
            _exit(5);
        kill(getpid(), SIGKILL);
    }
    int status;
    CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    static struct model md;
    memset(&md, 0, sizeof md);
    int tail = history(NULL, 0, &md);
    strobe_petra *h = reopen(saved);
    struct strobe_petra_stats st;
    strobe_petra_stats_get(h, &st);
    CHECK_EQ_U64(st.recovered_descriptors, (uint64_t)tail); /* after the last checkpoint */
    verify(h);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    int m = strobe_petra_structure_find(h, "m");
    int present = 0;
    for (uint64_t k = 1; k <= HKEYS; k++) {
        uint64_t v = 0;
        int rc = strobe_petra_get(t, m, k, &v);
        CHECK_EQ_INT(rc, md.present[k] ? 0 : -ENOENT);
        if (!rc)
            CHECK_EQ_U64(v, md.value[k]);
        present += md.present[k];
    }
    CHECK_EQ_INT(count(t, m), present);
    strobe_petra_thread_detach(t);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    /* and once more: a recovered heap recovers */
    h = reopen(saved);
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    CHECK_EQ_INT(count(t, m), present);
    strobe_petra_thread_detach(t);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(saved);
}

STROBE_TEST(kill_recovers_history) { crash_and_recover(0); }
STROBE_TEST(powerfail_recovers_history) { crash_and_recover(1); }

/* Open/close cycles of a small heap must not use up space: every cycle
 * checkpoints, and empty checkpoints reuse the snapshot chain. */
STROBE_TEST(reopen_cycles_small_heap)
{
    const char *path = fresh_path("cycles");
    char saved[512];
    strcpy(saved, path);
    struct strobe_petra_options o = { .size = 32ull << 20, .max_threads = 2 };
    strobe_petra *h;
    char why[WHY];
    CHECK_EQ_INT(strobe_petra_create(saved, &o, &h, why, sizeof why), 0);
    for (int i = 0; i < 6; i++) {
        char name[8];
        snprintf(name, sizeof name, "m%d", i);
        CHECK_EQ_INT(strobe_petra_structure_create(h, name, STROBE_PETRA_MAP, 16), i);
    }
    for (int cycle = 0; cycle < 60; cycle++) {
        strobe_petra_thread *t;
        CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
        for (int i = 0; i < 30; i++)
            CHECK_EQ_INT(op1(t, i % 6, STROBE_PETRA_PUT, 1 + (uint64_t)(i / 6), (uint64_t)cycle), 0);
        strobe_petra_thread_detach(t);
        CHECK_EQ_INT(strobe_petra_close(h), 0);
        h = reopen(saved);
    }
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    uint64_t v;
    CHECK_EQ_INT(strobe_petra_get(t, 5, 5, &v), 0);
    CHECK_EQ_U64(v, 59);
    strobe_petra_thread_detach(t);
    verify(h);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(saved);
}

/* ---- Bit flips in every region of a small heap: each one gives either a
 * one-line refusal or an open whose state, verified, is exactly a committed
 * prefix of the history. The history: FLIP_TX one-thread transactions of
 * two PUTs (TXIDs 1..FLIP_TX, none aborts), a checkpoint after FLIP_CKPT of
 * them, then SIGKILL: the log holds the last FLIP_TX - FLIP_CKPT
 * descriptors from offset 0 (live), then retired ones (stale). */
#define FLIP_TX 50
#define FLIP_CKPT 40
#define FLIP_KEYS 16
#define FLIP_LOG 65536u /* file offset of log 0 */
#define FLIP_DESC 128u  /* a two-operation descriptor */

static void flip_tx_ops(int i, struct strobe_petra_op *ops)
{
    ops[0] = (struct strobe_petra_op){ STROBE_PETRA_PUT, 0, 1 + (uint64_t)(i % FLIP_KEYS), (uint64_t)i * 1000 + 1 };
    ops[1] = (struct strobe_petra_op){ STROBE_PETRA_PUT, 0, 1 + (uint64_t)((i * 7 + 3) % FLIP_KEYS),
                                       (uint64_t)i * 1000 + 2 };
}

/* Expected outcomes. */
enum { FULL = -1, REFUSE = -2 };

struct flip_ctx {
    const char *path;
    char *pristine;
    size_t size;
    int fd;
    unsigned trials;
};

static void check_prefix(strobe_petra *h, int k)
{
    uint64_t want[FLIP_KEYS + 1] = { 0 };
    for (int i = 0; i < k; i++) {
        struct strobe_petra_op ops[2];
        flip_tx_ops(i, ops);
        want[ops[0].key] = ops[0].value;
        want[ops[1].key] = ops[1].value;
    }
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    int present = 0;
    for (uint64_t key = 1; key <= FLIP_KEYS; key++) {
        uint64_t v = 0;
        int rc = strobe_petra_get(t, 0, key, &v);
        CHECK_EQ_INT(rc, want[key] ? 0 : -ENOENT);
        CHECK_EQ_U64(v, want[key]);
        present += want[key] != 0;
    }
    CHECK_EQ_INT(count(t, 0), present);
    strobe_petra_thread_detach(t);
}

/* Flip bit (off % 8) of byte off, open (with salvage or not), compare with
 * the expectation (a prefix length, FULL or REFUSE; want_why: the exact
 * reason of a refusal, or NULL for any one line naming the file), then
 * restore the file. */
static void flip_one(struct flip_ctx *c, uint64_t off, int salvage, int expect, const char *want_why)
{
    uint8_t b = (uint8_t)(c->pristine[off] ^ (1u << (off % 8)));
    CHECK_EQ_INT((int)pwrite(c->fd, &b, 1, (off_t)off), 1);
    struct strobe_petra_options o = { .salvage = salvage };
    strobe_petra *h = NULL;
    char why[WHY] = "";
    int rc = strobe_petra_open(c->path, &o, &h, why, sizeof why);
    if (expect == REFUSE) {
        if (rc >= 0)
            STROBE_FAIL("flip at %llu: opened, expected a refusal", (unsigned long long)off);
        CHECK(h == NULL);
        CHECK(strncmp(why, c->path, strlen(c->path)) == 0 && !strchr(why, '\n'));
        if (want_why)
            CHECK_STR_EQ(why, want_why);
    } else {
        if (rc)
            STROBE_FAIL("flip at %llu (salvage %d): %s", (unsigned long long)off, salvage, why);
        verify(h);
        check_prefix(h, expect == FULL ? FLIP_TX : expect);
        CHECK_EQ_INT(strobe_petra_close(h), 0);
    }
    CHECK_EQ_INT((int)pwrite(c->fd, c->pristine, c->size, 0), (int)c->size);
    c->trials++;
}

static void flip_range(struct flip_ctx *c, uint64_t from, uint64_t to, int expect)
{
    for (uint64_t off = from; off < to; off++)
        flip_one(c, off, 0, expect, NULL);
}

/* Does byte b of a two-operation descriptor count in its checksum? */
static int desc_byte_checked(unsigned b)
{
    if (b < 64) /* magic nops status | pstatus | slot txid check prev | pad */
        return b != 6 && b < 32;
    b = (b - 64) % 32; /* an operation: type structure | pad | key value | result */
    return b < 2 || (b >= 8 && b < 24);
}

STROBE_TEST(bit_flips)
{
    const char *path = fresh_path("flips");
    char saved[512];
    strcpy(saved, path);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct strobe_petra_options o = { .size = 8ull << 20, .max_threads = 1, .log_bytes = 64 << 10 };
        strobe_petra *h;
        char why[WHY];
        strobe_petra_thread *t;
        if (strobe_petra_create(saved, &o, &h, why, sizeof why) ||
            strobe_petra_structure_create(h, "m", STROBE_PETRA_MAP, 4) != 0 ||
            strobe_petra_thread_attach(h, &t))
            _exit(2);
        for (int i = 0; i < FLIP_TX; i++) {
            struct strobe_petra_op ops[2];
            flip_tx_ops(i, ops);
            if (strobe_petra_execute(t, ops, 2) || (i == FLIP_CKPT - 1 && strobe_petra_checkpoint(t)))
                _exit(3);
        }
        kill(getpid(), SIGKILL);
    }
    int status;
    CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    struct flip_ctx c = { saved, NULL, 0, open(saved, O_RDWR), 0 };
    CHECK(c.fd >= 0);
    struct stat st;
    CHECK(fstat(c.fd, &st) == 0);
    c.size = (size_t)st.st_size;
    c.pristine = malloc(c.size);
    CHECK(c.pristine && pread(c.fd, c.pristine, c.size, 0) == (ssize_t)c.size);
    /* the layout this test relies on (docs/formats/petra-heap.md) */
    uint64_t rec[2][8];
    memcpy(rec, c.pristine + 8192, sizeof rec);
    CHECK_EQ_U64(rec[0][0], 2); /* current: the explicit checkpoint, slot 0 */
    CHECK_EQ_U64(rec[0][1], FLIP_CKPT + 1);
    CHECK_EQ_U64(rec[1][0], 1); /* the one of create, slot 1 */
    uint64_t snap_off = rec[0][2], snap_bytes = rec[0][3];
    for (unsigned j = 0; j < FLIP_CKPT; j++) {
        uint64_t txid;
        memcpy(&txid, c.pristine + FLIP_LOG + j * FLIP_DESC + 8, 8);
        CHECK_EQ_U64(txid, (uint64_t)(j < FLIP_TX - FLIP_CKPT ? FLIP_CKPT + 1 + j : j + 1));
    }
    {
        /* unflipped: the whole history */
        strobe_petra *h = reopen(saved);
        verify(h);
        check_prefix(h, FLIP_TX);
        CHECK_EQ_INT(strobe_petra_close(h), 0);
        CHECK_EQ_INT((int)pwrite(c.fd, c.pristine, c.size, 0), (int)c.size);
    }

    flip_range(&c, 0, 64, REFUSE);         /* superblock */
    flip_range(&c, 64, 80, FULL);          /* unused */
    flip_range(&c, 2048, 2064, FULL);      /* owner record */
    flip_range(&c, 4096, 4160, REFUSE);    /* the map's table entry */
    flip_range(&c, 4160, 4176, FULL);      /* an unused entry */
    /* the current record: the previous one (S = 1) is intact, but the log
     * lost TXIDs 1..10 to later descriptors: refused, not replayed */
    flip_range(&c, 8192, 8256, REFUSE);
    flip_range(&c, 8256, 8320, FULL);      /* the previous record */

    /* live descriptors in the middle of the log (TXIDs 41 and 45): damage,
     * refused with its offset, or with salvage the prefix before it */
    unsigned mids[2] = { 0, 4 };
    for (unsigned m = 0; m < 2; m++) {
        unsigned j = mids[m];
        uint64_t at = FLIP_LOG + j * FLIP_DESC, txid = FLIP_CKPT + 1 + j;
        for (unsigned b = 0; b < FLIP_DESC; b++) {
            if (!desc_byte_checked(b)) {
                flip_one(&c, at + b, 0, FULL, NULL);
                continue;
            }
            char want[WHY + 600];
            if (b < 4 || (b >= 8 && b < 16)) /* magic, txid: no header carries the TXID */
                snprintf(want, sizeof want,
                         "%s: log 0: descriptor TXID %llu is damaged or missing (TXID %llu at offset %llu "
                         "follows it)",
                         saved, (unsigned long long)txid, (unsigned long long)txid + 1,
                         (unsigned long long)(j + 1) * FLIP_DESC);
            else
                snprintf(want, sizeof want,
                         "%s: log 0 offset %llu: descriptor TXID %llu is damaged (checksum mismatch; "
                         "TXID %llu at offset %llu follows it)",
                         saved, (unsigned long long)j * FLIP_DESC, (unsigned long long)txid,
                         (unsigned long long)txid + 1, (unsigned long long)(j + 1) * FLIP_DESC);
            flip_one(&c, at + b, 0, REFUSE, want);
            flip_one(&c, at + b, 1, (int)txid - 1, NULL);
        }
    }
    /* the log's last descriptor (TXID 50): a torn write, the prefix before it */
    uint64_t tail = FLIP_LOG + (FLIP_TX - FLIP_CKPT - 1) * FLIP_DESC;
    for (unsigned b = 0; b < FLIP_DESC; b++)
        flip_one(&c, tail + b, 0, desc_byte_checked(b) ? FLIP_TX - 1 : FULL, NULL);
    /* a retired descriptor (TXID 21), and log space never written */
    flip_range(&c, FLIP_LOG + 20 * FLIP_DESC, FLIP_LOG + 21 * FLIP_DESC, FULL);
    flip_range(&c, FLIP_LOG + FLIP_CKPT * FLIP_DESC, FLIP_LOG + FLIP_CKPT * FLIP_DESC + 64, FULL);
    flip_range(&c, 2 * FLIP_LOG - 64, 2 * FLIP_LOG, FULL);

    /* the current snapshot block: its header, entries, last byte; then
     * what follows it in its chunk */
    CHECK(snap_bytes > 128 && snap_off + snap_bytes < c.size);
    flip_range(&c, snap_off, snap_off + 128, REFUSE);
    flip_range(&c, snap_off + snap_bytes - 8, snap_off + snap_bytes, REFUSE);
    flip_range(&c, snap_off + snap_bytes, snap_off + snap_bytes + 64, FULL);
    /* the rest of the data region (heads, arena, free chunks): never read */
    for (uint64_t off = 1u << 20; off < c.size; off += 65536 + 8)
        if (off < snap_off || off >= snap_off + snap_bytes)
            flip_one(&c, off, 0, FULL, NULL);
    CHECK(c.trials > 1000);
    free(c.pristine);
    close(c.fd);
    unlink(saved);
}

/* verify reads the logs too: a descriptor damaged while the heap is open
 * (no write of an open heap is torn) is reported with its offset. */
STROBE_TEST(verify_sees_damaged_log)
{
    const char *path = fresh_path("vlog");
    char saved[512], why[WHY] = "", want[WHY + 600];
    strcpy(saved, path);
    struct strobe_petra_options o = { .size = 8ull << 20, .max_threads = 1, .log_bytes = 64 << 10 };
    strobe_petra *h;
    CHECK_EQ_INT(strobe_petra_create(saved, &o, &h, why, sizeof why), 0);
    CHECK_EQ_INT(strobe_petra_structure_create(h, "m", STROBE_PETRA_MAP, 4), 0);
    strobe_petra_thread *t;
    CHECK_EQ_INT(strobe_petra_thread_attach(h, &t), 0);
    for (int i = 0; i < 3; i++) {
        struct strobe_petra_op ops[2];
        flip_tx_ops(i, ops);
        CHECK_EQ_INT(strobe_petra_execute(t, ops, 2), 0);
    }
    strobe_petra_thread_detach(t);
    verify(h);
    /* the shared mapping sees the write: the key of TXID 2's first op */
    poke(saved, FLIP_LOG + FLIP_DESC + 72, 0x10);
    snprintf(want, sizeof want, "%s: log 0 offset %u: descriptor TXID 2 is damaged (checksum mismatch)", saved,
             FLIP_DESC);
    CHECK_EQ_INT(strobe_petra_verify(h, why, sizeof why), STROBE_ERR_FORMAT);
    CHECK_STR_EQ(why, want);
    poke(saved, FLIP_LOG + FLIP_DESC + 72, 0x10);
    verify(h);
    CHECK_EQ_INT(strobe_petra_close(h), 0);
    unlink(saved);
}

STROBE_TEST_MAIN(STROBE_CASE(random_model_few_keys), STROBE_CASE(contention_settles), STROBE_CASE(reopen_cycles_small_heap), STROBE_CASE(kill_recovers_history), STROBE_CASE(powerfail_recovers_history),
                 STROBE_CASE(set_semantics), STROBE_CASE(map_values), STROBE_CASE(threads_exact),
                 STROBE_CASE(threads_with_checkpoints), STROBE_CASE(threads_skiplists),
                 STROBE_CASE(flushes_and_fences), STROBE_CASE(powerfail_round_trip),
                 STROBE_CASE(corrupt_files), STROBE_CASE(one_owner), STROBE_CASE(bit_flips),
                 STROBE_CASE(verify_sees_damaged_log))
