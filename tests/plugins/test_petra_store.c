/* SPDX-License-Identifier: MIT */
/*
 * The petra store (src/plugins/petra_store.c) and `strobe petra`.
 *
 * Unit cases run the store in an in-process daemon, feed it sets with
 * exact timestamps, then read the heap back two ways: with the public
 * petra API and the key layout of docs/petra-store.md (keys computed
 * here, not by the store's code; only the name lookup comes from
 * petra_layout.c), and through the `strobe petra` command, whose output
 * is compared byte for byte.
 *
 * The crash case starts a real strobed with the synthetic sampler
 * (deterministic values) five times on one heap and SIGKILLs it at a
 * random moment after it acknowledged enough samples; after each kill the
 * heap must hold every acknowledged sample within the history bound and
 * nothing half-written (docs/petra-store.md, "Guarantees").
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugins/petra_layout.h"
#include "plugins/store_sets.h"
#include "strobe/petra.h"
#include "strobed/config.h"
#include "strobed/daemon.h"
#include "strobed/daemons.h"
#include "test.h"

#define SEC 1000000000ull

/* ---- reading the heap with the public API ------------------------------------- */

struct heap {
    struct strobe__pst s;
};

static void heap_open(struct heap *h, const char *path)
{
    char why[320];
    int rc = strobe__pst_open(path, 0, 0, 0, &h->s, why, sizeof why);
    if (rc < 0)
        STROBE_FAIL("%s: %s", path, why);
    /* the structures are found by their documented names */
    static const char *const names[] = {"store.info",   "store.names",   "store.strings",
                                        "store.latest", "store.ring.ts", "store.ring.value"};
    for (int i = 0; i < STROBE__PST_NSTRUCTURES; i++)
        CHECK_EQ_INT(strobe_petra_structure_find(h->s.heap, names[i]), h->s.sid[i]);
}

static uint64_t get(struct heap *h, int structure, uint64_t key)
{
    uint64_t v;
    int rc = strobe_petra_get(h->s.t, h->s.sid[structure], key, &v);
    if (rc < 0)
        STROBE_FAIL("structure %d key %" PRIx64 ": %s", structure, key, strobe_strerror(rc));
    return v;
}

/* What the heap holds for one metric. */
struct stored {
    uint64_t id, seq, value, ts;
    struct strobe__pst_desc d;
    uint64_t n, hts[256], hv[256]; /* history, oldest first */
};

static int stored_read(struct heap *h, const char *name, struct stored *m)
{
    memset(m, 0, sizeof *m);
    int rc = strobe__pst_lookup(&h->s, name, strlen(name), &m->id, &m->d);
    if (rc == -ENOENT)
        return rc;
    CHECK_EQ_INT(rc, 0);
    /* the descriptor word as documented: type | (len-1) << 8 | (history-1) << 24 | 1 << 40 */
    uint64_t desc = get(h, STROBE__PST_NAMES, m->id);
    CHECK_EQ_U64(desc & 0xff, m->d.type);
    CHECK_EQ_U64((desc >> 8 & 0xffff) + 1, strlen(name));
    CHECK_EQ_U64((desc >> 24 & 0xffff) + 1, m->d.history);
    CHECK_EQ_U64(desc >> 40, 1);
    /* the name, 8 bytes per key, little-endian */
    for (size_t c = 0; c * 8 < strlen(name); c++) {
        uint64_t w = get(h, STROBE__PST_STRINGS, m->id << 16 | c);
        for (size_t b = 0; b < 8 && c * 8 + b < strlen(name); b++)
            CHECK_EQ_INT((char)(w >> (8 * b)), name[c * 8 + b]);
    }
    m->value = get(h, STROBE__PST_LATEST, m->id << 16 | 0);
    m->ts = get(h, STROBE__PST_LATEST, m->id << 16 | 1);
    m->seq = get(h, STROBE__PST_LATEST, m->id << 16 | 2);
    CHECK(m->d.history <= 256);
    m->n = m->seq < m->d.history ? m->seq : m->d.history;
    for (uint64_t k = 0; k < m->n; k++) {
        uint64_t slot = (m->seq - m->n + k) % m->d.history;
        m->hts[k] = get(h, STROBE__PST_RING_TS, m->id << 16 | slot);
        m->hv[k] = get(h, STROBE__PST_RING_VALUE, m->id << 16 | slot);
    }
    /* nothing half-written: the latest sample is the newest ring entry */
    CHECK(m->n > 0);
    CHECK_EQ_U64(m->hts[m->n - 1], m->ts);
    CHECK_EQ_U64(m->hv[m->n - 1], m->value);
    return 0;
}

static void heap_close(struct heap *h)
{
    CHECK_EQ_INT(strobe__pst_close(&h->s), 0);
}

/* `strobe petra ARGS` must print exactly `want` and exit with `status`. */
static void check_cli(int status, const char *want, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void check_cli(int status, const char *want, const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *out;
    int rc = strobe_test_sh(&out, "'%s/strobe' petra %s", STROBE_BIN_DIR, args);
    if (rc != status || strcmp(out, want) != 0)
        STROBE_FAIL("strobe petra %s: status %d (expected %d)\n--- got\n%s--- expected\n%s---", args, rc,
                    status, out, want);
    free(out);
}

/* ---- unit cases ------------------------------------------------------------------ */

static const char *const two_metrics[] = {"a", "b", NULL};

/* Latest value and a ring that wraps at exactly `history` entries, read
 * with the API after each step and through the command at the end. */
STROBE_TEST(latest_and_history)
{
    const char *dir = strobe_test_tmpdir("latest_and_history");
    char heapf[4400];
    snprintf(heapf, sizeof heapf, "%s/heap", dir);
    for (uint64_t n = 1; n <= 9; n++) {
        unlink(heapf);
        struct strobe__daemon *d = daemon_from(
            "daemon: {producer: node1}\nstores:\n  - {plugin: petra, path: %s, history: 4, size: 64M}\n",
            heapf);
        strobe_set *set = add_set(d, "s", "node1/s", two_metrics);
        for (uint64_t k = 1; k <= n; k++) {
            uint64_t v[2] = {k, 1000 + k};
            update(d, set, (100 + k) * SEC + k, v, 2);
        }
        strobe__daemon_free(d);
        struct heap h;
        heap_open(&h, heapf);
        struct stored a, b;
        CHECK_EQ_INT(stored_read(&h, "node1/s/a", &a), 0);
        CHECK_EQ_INT(stored_read(&h, "node1/s/b", &b), 0);
        CHECK_EQ_INT(a.d.type, STROBE_MT_U64);
        CHECK_EQ_INT(a.d.history, 4);
        CHECK_EQ_U64(a.seq, n);
        CHECK_EQ_U64(a.value, n);
        CHECK_EQ_U64(b.value, 1000 + n);
        CHECK_EQ_U64(a.ts, (100 + n) * SEC + n);
        CHECK_EQ_U64(a.n, n < 4 ? n : 4);
        for (uint64_t k = 0; k < a.n; k++) {
            uint64_t want = n - a.n + 1 + k; /* sample number, oldest first */
            CHECK_EQ_U64(a.hv[k], want);
            CHECK_EQ_U64(b.hv[k], 1000 + want);
            CHECK_EQ_U64(a.hts[k], (100 + want) * SEC + want);
        }
        /* the ring is exactly 4 slots: no fifth key was ever written */
        uint64_t v;
        CHECK_EQ_INT(strobe_petra_get(h.s.t, h.s.sid[STROBE__PST_RING_TS], a.id << 16 | 4, &v), -ENOENT);
        struct stored none;
        CHECK_EQ_INT(stored_read(&h, "node1/s/c", &none), -ENOENT);
        heap_close(&h);
    }
    /* n = 9: samples 6..9 kept */
    check_cli(0, "node1/s/a\nnode1/s/b\n", "'%s'", heapf);
    check_cli(0, "node1/s/a\nnode1/s/b\n", "'%s' ls", heapf);
    check_cli(0, "node1/s/b 1009 109.000000009\nnode1/s/a 9 109.000000009\n", "'%s' get node1/s/b node1/s/a",
              heapf);
    check_cli(0, "106.000000006 6\n107.000000007 7\n108.000000008 8\n109.000000009 9\n",
              "'%s' history node1/s/a", heapf);
    check_cli(0, "108.000000008 1008\n109.000000009 1009\n", "'%s' history -n 2 node1/s/b", heapf);
    check_cli(0, "109.000000009 1009\n", "'%s' history node1/s/b --last 1", heapf);
    check_cli(0, "", "'%s' history node1/s/b -n 0", heapf);
    check_cli(0,
              "node1/s/a u64 samples 9 history 4\n"
              "  106.000000006 6\n  107.000000007 7\n  108.000000008 8\n  109.000000009 9\n"
              "node1/s/b u64 samples 9 history 4\n"
              "  106.000000006 1006\n  107.000000007 1007\n  108.000000008 1008\n  109.000000009 1009\n",
              "'%s' dump", heapf);
}

/* Enough samples that the descriptor logs fill and checkpoints run
 * between transactions of the store; the heap verifies and holds exactly
 * the last `history` samples. Prints the store's throughput. */
STROBE_TEST(checkpoints)
{
    const char *dir = strobe_test_tmpdir("checkpoints");
    char heapf[4400];
    snprintf(heapf, sizeof heapf, "%s/heap", dir);
    struct strobe__daemon *d = daemon_from(
        "daemon: {producer: node1}\nstores:\n  - {plugin: petra, path: %s, history: 16, size: 64M}\n", heapf);
    static const char *const three[] = {"a", "b", "c", NULL};
    strobe_set *set = add_set(d, "s", "node1/s", three);
    const uint64_t n = 30000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint64_t k = 1; k <= n; k++) {
        uint64_t v[3] = {k, 2 * k, 3 * k};
        update(d, set, k * SEC, v, 3);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%" PRIu64 " set updates (3 metrics, one transaction each) in %.3f s: %.0f/s\n", n, sec,
           (double)n / sec);
    strobe__daemon_free(d);
    struct heap h;
    heap_open(&h, heapf);
    struct strobe_petra_stats st;
    strobe_petra_stats_get(h.s.heap, &st);
    char why[256];
    CHECK_EQ_INT(strobe_petra_verify(h.s.heap, why, sizeof why), 0);
    printf("recovery: %" PRIu64 " descriptors replayed in %.3f ms\n", st.recovered_descriptors,
           (double)st.recovery_ns / 1e6);
    for (unsigned i = 0; i < 3; i++) {
        char name[32];
        struct stored m;
        snprintf(name, sizeof name, "node1/s/%c", 'a' + i);
        CHECK_EQ_INT(stored_read(&h, name, &m), 0);
        CHECK_EQ_U64(m.seq, n);
        CHECK_EQ_U64(m.n, 16);
        for (uint64_t k = 0; k < 16; k++) {
            CHECK_EQ_U64(m.hts[k], (n - 15 + k) * SEC);
            CHECK_EQ_U64(m.hv[k], (n - 15 + k) * (i + 1));
        }
    }
    heap_close(&h);
    check_cli(0, "node1/s/c 90000 30000.000000000\n", "'%s' get node1/s/c", heapf);
}

/* Every numeric type prints as `strobe ls` prints it; array elements are
 * metrics of their own; char and meta metrics and invalid values are not
 * stored; the same transaction seen twice is stored once. */
STROBE_TEST(types)
{
    const char *dir = strobe_test_tmpdir("types");
    char heapf[4400];
    snprintf(heapf, sizeof heapf, "%s/heap", dir);
    struct strobe__daemon *d =
        daemon_from("daemon: {producer: node1}\nstores:\n  - {plugin: petra, path: %s, size: 64M}\n", heapf);
    strobe_schema *sc;
    strobe_set *set;
    CHECK(strobe_schema_new("t", &sc) == 0);
    CHECK(strobe_schema_add(sc, "component_id", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META) == 0);
    CHECK(strobe_schema_add(sc, "u", NULL, STROBE_MT_U64, 1, 0) == 1);
    CHECK(strobe_schema_add(sc, "s", NULL, STROBE_MT_S32, 1, 0) == 2);
    CHECK(strobe_schema_add(sc, "d", NULL, STROBE_MT_D64, 1, 0) == 3);
    CHECK(strobe_schema_add(sc, "f", NULL, STROBE_MT_F32, 1, 0) == 4);
    CHECK(strobe_schema_add(sc, "arr", NULL, STROBE_MT_U16, 3, STROBE_METRIC_ARRAY) == 5);
    CHECK(strobe_schema_add(sc, "name", NULL, STROBE_MT_CHAR, 8, 0) == 6);
    CHECK(strobe_schema_add(sc, "big", NULL, STROBE_MT_S64, 1, 0) == 7);
    CHECK(strobe_schema_add(sc, "inv", NULL, STROBE_MT_U8, 1, 0) == 8);
    CHECK(strobe_set_new(sc, "node1", NULL, &set) == 0);
    strobe_schema_free(sc);
    pthread_mutex_lock(&d->lock);
    CHECK(strobe__daemon_set_add(d, set, STROBE_SET_PUBLISH, NULL) == 0);
    strobe__daemon_set_updated(d, set); /* never written: not consistent, nothing stored */
    strobe_set_u64(set, 0, 0, 7);
    for (int round = 0; round < 2; round++) {
        strobe_set_begin(set);
        strobe_set_u64(set, 1, 0, UINT64_MAX - (uint64_t)round);
        strobe_set_s64(set, 2, 0, -5 - round);
        strobe_set_d64(set, 3, 0, 0.1 + round);
        strobe_set_d64(set, 4, 0, 1.5);
        for (uint32_t j = 0; j < 3; j++)
            strobe_set_u64(set, 5, j, j + 1 + 10u * (uint32_t)round);
        strobe_set_str(set, 6, "abc");
        strobe_set_s64(set, 7, 0, INT64_MIN);
        strobe_set_valid(set, 8, round == 0); /* sample 2 of inv is invalid */
        strobe_set_end_at(set, (uint64_t)(round + 1) * SEC, 0);
        strobe__daemon_set_updated(d, set);
        strobe__daemon_set_updated(d, set); /* again: stored once */
    }
    pthread_mutex_unlock(&d->lock);
    strobe__daemon_free(d);
    check_cli(0,
              "node1/t/arr[0] u16 samples 2 history 64\n  1.000000000 1\n  2.000000000 11\n"
              "node1/t/arr[1] u16 samples 2 history 64\n  1.000000000 2\n  2.000000000 12\n"
              "node1/t/arr[2] u16 samples 2 history 64\n  1.000000000 3\n  2.000000000 13\n"
              "node1/t/big s64 samples 2 history 64\n  1.000000000 -9223372036854775808\n"
              "  2.000000000 -9223372036854775808\n"
              "node1/t/d d64 samples 2 history 64\n  1.000000000 0.1\n  2.000000000 1.1\n"
              "node1/t/f f32 samples 2 history 64\n  1.000000000 1.5\n  2.000000000 1.5\n"
              "node1/t/inv u8 samples 1 history 64\n  1.000000000 0\n"
              "node1/t/s s32 samples 2 history 64\n  1.000000000 -5\n  2.000000000 -6\n"
              "node1/t/u u64 samples 2 history 64\n  1.000000000 18446744073709551615\n"
              "  2.000000000 18446744073709551614\n",
              "'%s' dump", heapf);
    check_cli(0,
              "{\"name\": \"node1/t/d\", \"type\": \"d64\", \"samples\": 2, \"history_size\": 64, "
              "\"latest\": {\"timestamp_ns\": 2000000000, \"value\": 1.1},\n"
              "   \"history\": [{\"timestamp_ns\": 1000000000, \"value\": 0.1}, "
              "{\"timestamp_ns\": 2000000000, \"value\": 1.1}]},\n",
              "'%s' dump --json | grep -A1 '\"node1/t/d\"' | sed 's/^ *{/{/'", heapf);
    char *out;
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "'%s/strobe' petra '%s' dump --json | python3 -c 'import json,sys; "
                       "d=json.load(sys.stdin); print(len(d[\"metrics\"]), d[\"metrics\"][3][\"latest\"])'",
                       STROBE_BIN_DIR, heapf),
        0);
    CHECK_STR_EQ(out, "9 {'timestamp_ns': 2000000000, 'value': -9223372036854775808}\n");
    free(out);
    /* the stored pattern of a real is the double's bits */
    struct heap h;
    heap_open(&h, heapf);
    struct stored m;
    CHECK_EQ_INT(stored_read(&h, "node1/t/d", &m), 0);
    double want = 1.1;
    uint64_t bits;
    memcpy(&bits, &want, sizeof bits);
    CHECK_EQ_U64(m.value, bits);
    CHECK_EQ_INT(stored_read(&h, "node1/t/s", &m), 0);
    CHECK_EQ_U64(m.value, (uint64_t)(int64_t)-6);
    CHECK_EQ_INT(stored_read(&h, "node1/t/name", &m), -ENOENT);
    CHECK_EQ_INT(stored_read(&h, "node1/t/component_id", &m), -ENOENT);
    heap_close(&h);
}

/* A restarted store goes on where the last one stopped (same ids, the
 * ring continues); `history` of an existing metric stays what it was. */
STROBE_TEST(reopen)
{
    const char *dir = strobe_test_tmpdir("reopen");
    char heapf[4400];
    snprintf(heapf, sizeof heapf, "%s/heap", dir);
    for (int run = 0; run < 3; run++) {
        struct strobe__daemon *d =
            daemon_from("daemon: {producer: node1}\n"
                        "stores:\n  - {plugin: petra, path: %s, history: %d, size: 64M}\n",
                        heapf, run == 0 ? 3 : 5);
        strobe_set *set = add_set(d, "s", "node1/s", two_metrics);
        /* run 2 adds a metric: it gets history 5 */
        strobe_set *more = run == 2 ? add_set(d, "s2", "node1/s2", two_metrics) : NULL;
        for (uint64_t k = 1; k <= 2; k++) {
            uint64_t v[2] = {(uint64_t)run * 10 + k, 0};
            update(d, set, ((uint64_t)run * 10 + k) * SEC, v, 2);
            if (more)
                update(d, more, k * SEC, v, 2);
        }
        strobe__daemon_free(d);
    }
    /* history 3 from the first run: the ring keeps 3 of the 6 samples */
    check_cli(0, "12.000000000 12\n21.000000000 21\n22.000000000 22\n", "'%s' history node1/s/a -n 4", heapf);
    check_cli(0, "21.000000000 21\n22.000000000 22\n", "'%s' history node1/s/a -n 2", heapf);
    check_cli(0, "node1/s/a u64 samples 6 history 3\n", "'%s' dump | grep samples | head -1", heapf);
    check_cli(0, "node1/s2/a u64 samples 2 history 5\n", "'%s' dump | grep 's2/a '", heapf);
    /* a heap stays openable over many restarts: each open recovers and
     * each close checkpoints (a 32 MiB heap failed this: see SIZE_MIN in
     * petra_store.c) */
    for (int k = 0; k < 40; k++) {
        struct heap h;
        heap_open(&h, heapf);
        heap_close(&h);
    }
    check_cli(0, "22.000000000 22\n", "'%s' history node1/s/a -n 1", heapf);
}

/* Names longer than fit one transaction (written first, committed by the
 * descriptor INSERT), and a hash collision: a name already owns the id
 * that a new metric's name hashes to, so the new one probes on. */
STROBE_TEST(long_names_and_collision)
{
    const char *dir = strobe_test_tmpdir("long_names_and_collision");
    char heapf[4400], inst[300];
    snprintf(heapf, sizeof heapf, "%s/heap", dir);
    snprintf(inst, sizeof inst, "node1/%0200d", 0);
    memset(inst + 6, 'x', 200);

    /* plant "node1/other" at the id "node1/s/a" hashes to */
    struct strobe__pst s;
    char why[320];
    CHECK_EQ_INT(strobe__pst_open(heapf, 1, 64u << 20, 0, &s, why, sizeof why), 0);
    const char *planted = "node1/other";
    uint64_t id = strobe__pst_hash("node1/s/a", 9);
    struct strobe__pst_desc pd = {STROBE_MT_U64, (uint32_t)strlen(planted), 2};
    uint64_t c0 = 0, c1 = 0;
    memcpy(&c0, planted, 8);
    memcpy(&c1, planted + 8, strlen(planted) - 8);
    struct strobe_petra_op ops[] = {
        {STROBE_PETRA_INSERT, (uint8_t)s.sid[STROBE__PST_NAMES], id, strobe__pst_desc_pack(&pd)},
        {STROBE_PETRA_PUT, (uint8_t)s.sid[STROBE__PST_STRINGS], id << 16 | 0, c0},
        {STROBE_PETRA_PUT, (uint8_t)s.sid[STROBE__PST_STRINGS], id << 16 | 1, c1},
        {STROBE_PETRA_PUT, (uint8_t)s.sid[STROBE__PST_LATEST], id << 16 | 0, 77},
        {STROBE_PETRA_PUT, (uint8_t)s.sid[STROBE__PST_LATEST], id << 16 | 1, 5 * SEC},
        {STROBE_PETRA_PUT, (uint8_t)s.sid[STROBE__PST_LATEST], id << 16 | 2, 1},
        {STROBE_PETRA_PUT, (uint8_t)s.sid[STROBE__PST_RING_TS], id << 16 | 0, 5 * SEC},
        {STROBE_PETRA_PUT, (uint8_t)s.sid[STROBE__PST_RING_VALUE], id << 16 | 0, 77},
    };
    CHECK_EQ_INT(strobe_petra_execute(s.t, ops, sizeof ops / sizeof ops[0]), 0);
    CHECK_EQ_INT(strobe__pst_close(&s), 0);

    struct strobe__daemon *d =
        daemon_from("daemon: {producer: node1}\nstores:\n  - {plugin: petra, path: %s}\n", heapf);
    strobe_set *set = add_set(d, "s", "node1/s", two_metrics);
    strobe_set *lng = add_set(d, "l", inst, two_metrics);
    for (uint64_t k = 1; k <= 3; k++) {
        uint64_t v[2] = {k, 2 * k};
        update(d, set, k * SEC, v, 2);
        update(d, lng, k * SEC, v, 2);
    }
    strobe__daemon_free(d);

    struct heap h;
    heap_open(&h, heapf);
    struct stored m;
    CHECK_EQ_INT(stored_read(&h, "node1/s/a", &m), 0);
    CHECK(m.id != id); /* probed past the planted name */
    CHECK_EQ_U64(m.value, 3);
    /* the planted name is untouched (it is not on its own probe sequence,
     * so only its id finds it) */
    uint64_t at = id;
    struct strobe__pst_desc got;
    CHECK_EQ_INT(strobe__pst_lookup(&h.s, planted, strlen(planted), &at, &got), 0);
    CHECK_EQ_U64(at, id);
    CHECK_EQ_U64(get(&h, STROBE__PST_LATEST, id << 16 | 0), 77);
    char name[400];
    snprintf(name, sizeof name, "%s/b", inst);
    CHECK_EQ_INT(stored_read(&h, name, &m), 0);
    CHECK_EQ_U64(m.value, 6);
    CHECK_EQ_U64(m.seq, 3);
    heap_close(&h);
    check_cli(0, "node1/s/a 3 3.000000000\n", "'%s' get node1/s/a", heapf);
    char want[600];
    snprintf(want, sizeof want, "%s/b 6 3.000000000\n", inst);
    check_cli(0, want, "'%s' get %s/b", heapf, inst);
}

STROBE_TEST(config_errors)
{
    const char *dir = strobe_test_tmpdir("petra_config_errors");
    static const char *const bad[][2] = {
        {"{plugin: petra}", "`path` (the heap file) is required"},
        {"{plugin: petra, path: %s/h, size: 12X}", "size: '12X' is not a size"},
        {"{plugin: petra, path: %s/h, size: 32M}", "size: '32M' is too small: at least 64M"},
        {"{plugin: petra, path: %s/h, history: 0}", "history: must be between 1 and 65536"},
        {"{plugin: petra, path: %s/h, history: 65537}", "history: must be between 1 and 65536"},
        {"{plugin: petra, path: %s/h, histroy: 3}", "histroy: unknown key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char entry[4400], yaml[8192];
        snprintf(entry, sizeof entry, bad[i][0], dir);
        snprintf(yaml, sizeof yaml, "stores:\n  - %s\n", entry);
        CHECK_CONTAINS(inproc_refusal(yaml, "test.yaml"), bad[i][1]);
    }
    /* a file that is not a heap is refused, and left alone */
    char path[4400];
    snprintf(path, sizeof path, "%s/notaheap", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs("hello\n", f) >= 0 && fclose(f) == 0);
    char yaml[8192];
    snprintf(yaml, sizeof yaml, "stores:\n  - {plugin: petra, path: %s}\n", path);
    char err[1024];
    CHECK(inproc_build(yaml, "test.yaml", err, sizeof err) < 0);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == 6);
}

/* One writer per heap; `strobe petra` will not read a heap a store holds. */
STROBE_TEST(one_writer)
{
    const char *dir = strobe_test_tmpdir("one_writer");
    char heapf[4400], yaml[8192], err[1024];
    snprintf(heapf, sizeof heapf, "%s/heap", dir);
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: node1}\nstores:\n  - {plugin: petra, path: %s, size: 64M}\n", heapf);
    struct strobe__daemon *d = inproc_daemon(yaml, "test.yaml");
    CHECK(inproc_build(yaml, "test.yaml", err, sizeof err) < 0);
    char want[4600];
    snprintf(want, sizeof want, "strobe: petra: %s: in use by process %d (it holds the heap's lock)\n", heapf,
             (int)getpid());
    check_cli(1, want, "'%s' ls", heapf);
    strobe__daemon_free(d);
    check_cli(0, "", "'%s' ls", heapf);
    CHECK_EQ_INT(inproc_build(yaml, "test.yaml", err, sizeof err), 0);
}

STROBE_TEST(cli_errors)
{
    const char *dir = strobe_test_tmpdir("cli_errors");
    char heapf[4400], other[4400], want[9000];
    snprintf(heapf, sizeof heapf, "%s/heap", dir);
    snprintf(other, sizeof other, "%s/plain", dir);
    struct strobe__daemon *d =
        daemon_from("daemon: {producer: node1}\nstores:\n  - {plugin: petra, path: %s, size: 64M}\n", heapf);
    strobe_set *set = add_set(d, "s", "node1/s", two_metrics);
    uint64_t v[2] = {1, 2};
    update(d, set, SEC, v, 2);
    strobe__daemon_free(d);

    snprintf(want, sizeof want, "strobe: petra: %s/none: No such file or directory\n", dir);
    check_cli(1, want, "'%s/none' ls", dir);
    FILE *f = fopen(other, "w");
    CHECK(f && fputs("not a heap at all, just some text that is long enough\n", f) >= 0 && fclose(f) == 0);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' petra '%s' ls", STROBE_BIN_DIR, other), 1);
    snprintf(want, sizeof want, "strobe: petra: %s: ", other);
    CHECK(strncmp(out, want, strlen(want)) == 0 && strchr(out, '\n') == out + strlen(out) - 1);
    free(out);
    snprintf(want, sizeof want, "strobe: petra: %s: no metric 'node1/s/zz' (see 'strobe petra %s ls')\n",
             heapf, heapf);
    check_cli(1, want, "'%s' get node1/s/a node1/s/zz", heapf);
    check_cli(1, want, "'%s' history node1/s/zz", heapf);
    check_cli(2, "strobe: petra: which heap? give FILE (see 'strobe petra --help')\n", "%s", "");
    check_cli(2,
              "strobe: petra: unknown command 'cat' (ls, get, history or dump) (see 'strobe petra --help')\n",
              "'%s' cat", heapf);
    check_cli(2, "strobe: petra: get: which metric? (see 'strobe petra --help')\n", "'%s' get", heapf);
    check_cli(2, "strobe: petra: history: one metric at a time (see 'strobe petra --help')\n",
              "'%s' history a b", heapf);
    check_cli(2, "strobe: petra: -n x: not a number of samples (see 'strobe petra --help')\n",
              "'%s' history a -n x", heapf);
    check_cli(2, "strobe: petra: -n is an option of history (see 'strobe petra --help')\n", "'%s' ls -n 3",
              heapf);
    check_cli(2, "strobe: petra: --json is an option of dump (see 'strobe petra --help')\n", "'%s' ls --json",
              heapf);
    check_cli(2, "strobe: petra: ls: unexpected argument 'x' (see 'strobe petra --help')\n", "'%s' ls x",
              heapf);
    check_cli(2, "strobe: petra: unknown option '--bogus' (see 'strobe petra --help')\n", "'%s' --bogus",
              heapf);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' help petra | head -1", STROBE_BIN_DIR), 0);
    CHECK_CONTAINS(out, "usage: strobe petra FILE");
    free(out);
}

/* ---- crash: SIGKILL a real strobed -------------------------------------------- */

#define CRASH_RUNS 5
#define CRASH_METRICS 12 /* 4 transactions per set update */
#define CRASH_HISTORY 8
#define CRASH_BASE 1000

struct ack {
    uint64_t gn, ts;
};

struct acks {
    struct ack *v;
    size_t n, cap;
};

static void acks_add(struct acks *a, uint64_t gn, uint64_t ts)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 256;
        a->v = realloc(a->v, a->cap * sizeof *a->v);
        CHECK(a->v != NULL);
    }
    a->v[a->n++] = (struct ack){gn, ts};
}

/* The acknowledged samples of `instance` in log file `log`: complete
 * lines only (the kill may cut the last one). Returns how many. */
static size_t read_acks(const char *log, const char *instance, struct acks *out)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return 0;
    char line[2048], pat[600];
    snprintf(pat, sizeof pat, "petra: ack %s data_gn ", instance);
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        char *p = strstr(line, pat);
        if (!p || line[strlen(line) - 1] != '\n')
            continue;
        unsigned long long gn, ts;
        CHECK(sscanf(p + strlen(pat), "%llu ts %llu", &gn, &ts) == 2);
        if (out)
            acks_add(out, gn, ts);
        n++;
    }
    fclose(f);
    return n;
}

/* Checks one metric of one instance against every acknowledged sample
 * of every run so far (all[0..runs]), after run `run` was killed. */
static void check_metric(struct heap *h, const char *instance, unsigned i, struct acks *all, int run,
                         uint64_t *committed_min)
{
    char name[600];
    snprintf(name, sizeof name, "%s/m%u", instance, i);
    struct stored m;
    size_t total = 0;
    for (int r = 0; r <= run; r++)
        total += all[r].n;
    int rc = stored_read(h, name, &m); /* checks latest == newest ring entry */
    if (rc == -ENOENT) {
        CHECK_EQ_U64(total, 0);
        return;
    }
    /* every ring entry is a sample the sampler made, in time order */
    for (uint64_t k = 0; k < m.n; k++) {
        CHECK(k == 0 || m.hts[k] > m.hts[k - 1]);
        CHECK(m.hv[k] > CRASH_BASE && (m.hv[k] - CRASH_BASE) % (i + 1) == 0);
        for (int r = 0; r <= run; r++)
            for (size_t a = 0; a < all[r].n; a++)
                if (all[r].v[a].ts == m.hts[k] && m.hv[k] != CRASH_BASE + all[r].v[a].gn * (i + 1))
                    STROBE_FAIL("%s: sample at %" PRIu64 " is %" PRIu64 ", acknowledged as data_gn %" PRIu64,
                                name, m.hts[k], m.hv[k], all[r].v[a].gn);
    }
    /* nothing acknowledged is lost: the latest is at least the last
     * acknowledged, and every acknowledged sample not older than the
     * oldest kept one is kept */
    struct ack last = all[run].n ? all[run].v[all[run].n - 1] : (struct ack){0, 0};
    CHECK(m.ts >= last.ts);
    uint64_t kept_acked = 0;
    for (int r = 0; r <= run; r++) {
        for (size_t a = 0; a < all[r].n; a++) {
            if (all[r].v[a].ts < m.hts[0])
                continue;
            int found = 0;
            for (uint64_t k = 0; k < m.n && !found; k++)
                found = m.hts[k] == all[r].v[a].ts;
            if (!found)
                STROBE_FAIL("%s: acknowledged sample data_gn %" PRIu64 " ts %" PRIu64 " (run %d) lost", name,
                            all[r].v[a].gn, all[r].v[a].ts, r);
            kept_acked++;
        }
    }
    /* the ring holds the last `history` committed samples, and each run
     * commits at most one sample of a metric that it did not acknowledge
     * (the one in progress when killed) */
    CHECK(m.seq >= total);
    CHECK(m.seq <= total + (uint64_t)run + 1);
    CHECK(kept_acked + (uint64_t)run + 1 >= m.n);
    if (*committed_min > m.seq)
        *committed_min = m.seq;
}

static int count_key(void *arg, uint64_t key, uint64_t value)
{
    (*(int *)arg)++;
    return 0;
}

STROBE_TEST(crash)
{
    const char *dir = strobe_test_tmpdir("crash");
    char heapf[4400], yaml[16384], longinst[300];
    snprintf(heapf, sizeof heapf, "%s/heap", dir);
    /* a second set whose names (> 80 bytes) are written before their
     * descriptor: a kill there must leave no visible half-named metric */
    snprintf(longinst, sizeof longinst, "node1/%0120d", 0);
    memset(longinst + 6, 'y', 120);
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: node1}\n"
             "samplers:\n"
             "  - {plugin: synthetic, interval: 2ms, metrics: %d, base: %d}\n"
             "  - {plugin: synthetic, name: long, instance: %s, schema: long, interval: 2ms, metrics: %d,"
             " base: %d}\n"
             "stores:\n"
             "  - {plugin: petra, path: %s, history: %d, size: 64M}\n",
             CRASH_METRICS, CRASH_BASE, longinst, CRASH_METRICS, CRASH_BASE, heapf, CRASH_HISTORY);
    const char *inst[2] = {"node1/synthetic", longinst};
    struct acks all[2][CRASH_RUNS];
    memset(all, 0, sizeof all);
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    for (int run = 0; run < CRASH_RUNS; run++) {
        char name[32], log[4400];
        snprintf(name, sizeof name, "run%d", run);
        snprintf(log, sizeof log, "%s/%s.log", dir, name);
        pid_t pid = start_daemon(dir, name, yaml);
        /* 0.1 - 1 s of samples: ~4000 transactions a second, so the
         * kill lands in a checkpoint (one per ~2500) now and then */
        size_t want = 50 + (size_t)(rand() % 450);
        int waited = 0;
        while (read_acks(log, inst[0], NULL) < want) {
            int st;
            if (waitpid(pid, &st, WNOHANG) == pid) {
                char *text;
                strobe_test_sh(&text, "tail -n 20 '%s'", log);
                STROBE_FAIL("strobed run %d ended (status 0x%x):\n%s", run, st, text);
            }
            if ((waited += 5) > 15000)
                STROBE_FAIL("run %d: fewer than %zu samples acknowledged after 15 s", run, want);
            sleep_ms(5);
        }
        /* kill at a random moment of the sampling period (in the middle of
         * a transaction at times) */
        struct timespec ts = {0, (long)(rand() % 2000) * 1000L};
        nanosleep(&ts, NULL);
        stop_daemon(pid, SIGKILL);
        for (int k = 0; k < 2; k++)
            read_acks(log, inst[k], &all[k][run]);
        CHECK(all[0][run].n >= want);
        struct heap h;
        heap_open(&h, heapf);
        uint64_t committed_min = UINT64_MAX;
        for (int k = 0; k < 2; k++)
            for (unsigned i = 0; i < CRASH_METRICS; i++)
                check_metric(&h, inst[k], i, all[k], run, &committed_min);
        /* nothing but these metrics is in the heap */
        int count = 0;
        CHECK_EQ_INT(strobe_petra_foreach(h.s.t, h.s.sid[STROBE__PST_NAMES], count_key, &count), 0);
        CHECK_EQ_INT(count, 2 * CRASH_METRICS);
        struct strobe_petra_stats st;
        strobe_petra_stats_get(h.s.heap, &st);
        printf("run %d: %zu + %zu samples acknowledged, metrics hold >= %" PRIu64 " samples; "
               "recovery replayed %" PRIu64 " descriptors\n",
               run, all[0][run].n, all[1][run].n, committed_min, st.recovered_descriptors);
        heap_close(&h);
    }
    check_cli(0, "", "'%s' dump > /dev/null", heapf);
    for (int k = 0; k < 2; k++)
        for (int r = 0; r < CRASH_RUNS; r++)
            free(all[k][r].v);
}

/* A store killed with descriptors in its log, one of them damaged in the
 * middle of the log: `strobe petra` refuses the heap with the
 * descriptor's place; with --salvage it keeps the samples before it. */
STROBE_TEST(cli_salvage)
{
    const char *dir = strobe_test_tmpdir("cli_salvage");
    char heapf[4400], want[9000];
    snprintf(heapf, sizeof heapf, "%s/heap", dir);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct strobe__daemon *d =
            daemon_from("daemon: {producer: node1}\nstores:\n  - {plugin: petra, path: %s, size: 64M}\n", heapf);
        strobe_set *set = add_set(d, "s", "node1/s", two_metrics);
        for (uint64_t k = 1; k <= 4; k++) {
            uint64_t v[2] = {k, 1000 + k};
            update(d, set, (100 + k) * SEC + k, v, 2);
        }
        kill(getpid(), SIGKILL); /* no close: the descriptors stay live */
    }
    int status;
    CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* the store's descriptors, from the start of log 0 (docs/formats/petra-heap.md) */
    int fd = open(heapf, O_RDWR);
    CHECK(fd >= 0);
    uint64_t off[16], txid[16];
    unsigned n = 0;
    for (uint64_t at = 0; n < 16;) {
        uint8_t hd[16];
        CHECK_EQ_INT((int)pread(fd, hd, sizeof hd, (off_t)(65536 + at)), (int)sizeof hd);
        uint32_t magic;
        memcpy(&magic, hd, 4);
        memcpy(&txid[n], hd + 8, 8);
        if (magic != 0x44585450u || (n && txid[n] <= txid[n - 1]))
            break;
        off[n++] = at;
        at += (64u + 32u * hd[4] + 63u) & ~63u;
    }
    CHECK_EQ_INT(n, 4); /* one transaction per update */
    uint8_t b;
    CHECK_EQ_INT((int)pread(fd, &b, 1, (off_t)(65536 + off[2] + 72)), 1);
    b ^= 0x10; /* a key of the third update's transaction */
    CHECK_EQ_INT((int)pwrite(fd, &b, 1, (off_t)(65536 + off[2] + 72)), 1);
    close(fd);
    snprintf(want, sizeof want,
             "strobe: petra: %s: log 0 offset %llu: descriptor TXID %llu is damaged (checksum mismatch; TXID "
             "%llu at offset %llu follows it)\n",
             heapf, (unsigned long long)off[2], (unsigned long long)txid[2], (unsigned long long)txid[3],
             (unsigned long long)off[3]);
    check_cli(1, want, "'%s' get node1/s/a", heapf);
    check_cli(0, "node1/s/a 2 102.000000002\nnode1/s/b 1002 102.000000002\n",
              "--salvage '%s' get node1/s/a node1/s/b", heapf);
    /* the file now holds that prefix */
    check_cli(0, "101.000000001 1\n102.000000002 2\n", "'%s' history node1/s/a", heapf);
}

STROBE_TEST_MAIN(STROBE_CASE(latest_and_history), STROBE_CASE(checkpoints), STROBE_CASE(types),
                 STROBE_CASE(reopen), STROBE_CASE(long_names_and_collision), STROBE_CASE(config_errors),
                 STROBE_CASE(one_writer), STROBE_CASE(cli_errors), STROBE_CASE(crash),
                 STROBE_CASE(cli_salvage))
