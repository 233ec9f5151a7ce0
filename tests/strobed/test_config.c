/* SPDX-License-Identifier: MIT */
/*
 * strobed configuration errors: each names file, line and key, and the
 * daemon is not created. Plus the quick-start command line and an
 * external plugin loaded with dlopen().
 */
#include <time.h>
#include <unistd.h>

#include "common/size.h"
#include "strobed/config.h"
#include "strobed/daemon.h"
#include "strobed/http.h"
#include "strobed/inproc.h"
#include <stdbool.h>

#include "test.h"
#include "transport/proto.h"

/* Builds a daemon from text; returns its code and the message in err. */
static int build(const char *text, char *err, size_t cap)
{
    return inproc_build(text, "t.yaml", err, cap);
}

static void expect_error(const char *text, const char *msg)
{
    char err[1024];
    int rc = build(text, err, sizeof err);
    if (rc != STROBE_ERR_SYNTAX)
        STROBE_FAIL("expected a syntax error for:\n%s\ngot %d (%s)", text, rc, err);
    CHECK_STR_EQ(err, msg);
}

STROBE_TEST(errors_name_line_and_key)
{
    expect_error("daemon:\n  producer: a\nbogus: 1\n", "t.yaml:3: bogus: unknown key");
    expect_error("daemon:\n  lissten: x\n", "t.yaml:2: lissten: unknown key in daemon");
    expect_error("daemon:\n  producer: a/b\n", "t.yaml:2: producer: 'a/b' is not a producer name (no '/')");
    expect_error("daemon:\n  log_level: loud\n",
                 "t.yaml:2: log_level: 'loud': expected error, warn, info or debug");
    expect_error("samplers:\n  - plugin: synthetic\n    interval: soon\n",
                 "t.yaml:3: interval: 'soon' is not a positive duration");
    expect_error("samplers:\n  - plugin: synthetic\n    interval: 1s\n    offset: 2s\n",
                 "t.yaml:4: offset: '2s' is not a duration below the interval");
    expect_error("samplers:\n  - plugin: synthetic\n    colour: blue\n",
                 "t.yaml:3: colour: unknown key for plugin synthetic");
    expect_error("samplers:\n  - interval: 1s\n", "t.yaml:2: sampler entry without 'plugin'");
    expect_error("samplers:\n  plugin: synthetic\n",
                 "t.yaml:1: samplers: expected a list of entries ('- plugin: ...')");
    expect_error("samplers:\n  - plugin: synthetic\n  - plugin: synthetic\n",
                 "t.yaml:3: plugin: a second instance named 'synthetic' (give each a distinct 'name')");
    expect_error("samplers:\n  - plugin: synthetic\n    metrics: 0\n",
                 "t.yaml:3: synthetic: metrics: must be between 1 and 10000");
    expect_error("samplers:\n  - plugin: synthetic\n    metrics: -3\n",
                 "t.yaml:3: synthetic: metrics: '-3' is not a non-negative integer");
    expect_error("producers:\n  - interval: 1s\n",
                 "t.yaml:2: producers: '' entry without 'address' (host:port)");
    expect_error("producers:\n  - address: nowhere\n",
                 "t.yaml:2: producers: address: 'nowhere' is not host:port");
    expect_error("producers:\n  - address: 127.0.0.1:1\n    mode: shove\n",
                 "t.yaml:3: producers: mode: 'shove' is not pull or push");
    expect_error("daemon:\n  producer: a\n  producer: b\n", "t.yaml:3: producer: given twice");
    expect_error("daemon: [\n", "t.yaml:2: did not find expected node content while parsing a flow node");
    expect_error("- a\n- b\n", "t.yaml:1: the top level must be a mapping of sections");
    expect_error("", "t.yaml:1: the file is empty");
    char err[1024];
    int rc = build("samplers:\n  - plugin: nope\n", err, sizeof err);
    CHECK_EQ_INT(rc, STROBE_ERR_SYNTAX);
    CHECK_CONTAINS(err, "t.yaml:2: plugin: no built-in plugin 'nope' and libstrobe_nope.so: cannot open");
    /* aliases cannot be used to blow the tree up */
    char bomb[4096] = "a: &a [x,x,x,x,x,x,x,x,x,x]\n";
    for (char c = 'b'; c <= 'h'; c++) {
        char line[128];
        snprintf(line, sizeof line, "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", c, c, c - 1,
                 c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
        strcat(bomb, line);
    }
    struct strobe__cfg *cfg;
    CHECK_EQ_INT(strobe__cfg_parse(bomb, strlen(bomb), "bomb.yaml", &cfg, err, sizeof err), STROBE_ERR_SYNTAX);
    CHECK_CONTAINS(err, "more than 100000 values");
}

STROBE_TEST(valid_config_runs)
{
    char err[1024];
    CHECK_EQ_INT(build("daemon:\n  producer: n1\n  log_level: warn\nsamplers:\n"
                       "  - plugin: synthetic\n    name: s1\n    interval: 250ms\n    offset: 100ms\n"
                       "  - plugin: synthetic\n    name: s2\n    instance: n1/other\n"
                       "  - plugin: meminfo\n  - plugin: vmstat\n  - plugin: loadavg\n",
                       err, sizeof err), 0);
    struct strobe__cfg *cfg;
    const char *text = "daemon:\n  producer: n1\nsamplers:\n  - plugin: synthetic\n    base: 10\n";
    CHECK_EQ_INT(strobe__cfg_parse(text, strlen(text), "t.yaml", &cfg, err, sizeof err), 0);
    struct strobe__daemon *d;
    CHECK_EQ_INT(strobe__daemon_new(cfg, &d, err, sizeof err), 0);
    strobe__daemon_sample_all(d, 0);
    strobe__daemon_sample_all(d, 0);
    pthread_mutex_lock(&d->lock);
    struct strobe__set_entry *e = strobe__daemon_set_find(d, "n1/synthetic");
    CHECK(e != NULL);
    CHECK_EQ_U64(strobe_set_get_u64(e->set, 1, 0), 12); /* base + 2 * 1 */
    CHECK_EQ_U64(strobe_set_get_u64(e->set, 4, 0), 18); /* base + 2 * 4 */
    CHECK_EQ_U64(strobe_set_data_gn(e->set), 2);
    pthread_mutex_unlock(&d->lock);
    strobe__daemon_free(d);
}

STROBE_TEST(durations_and_sizes)
{
    unsigned long long v;
    CHECK_EQ_INT(strobe__parse_duration("250ms", &v), 0);
    CHECK_EQ_U64(v, 250000000ull);
    CHECK_EQ_INT(strobe__parse_duration("1.5s", &v), 0);
    CHECK_EQ_U64(v, 1500000000ull);
    CHECK_EQ_INT(strobe__parse_duration("2m", &v), 0);
    CHECK_EQ_U64(v, 120000000000ull);
    CHECK_EQ_INT(strobe__parse_duration("3", &v), 0);
    CHECK_EQ_U64(v, 3000000000ull);
    CHECK_EQ_INT(strobe__parse_duration("10us", &v), 0);
    CHECK_EQ_U64(v, 10000ull);
    CHECK_EQ_INT(strobe__parse_duration("-1s", &v), STROBE_ERR_SYNTAX);
    CHECK_EQ_INT(strobe__parse_duration("1 fortnight", &v), STROBE_ERR_SYNTAX);
    CHECK_EQ_INT(strobe__parse_duration("nan", &v), STROBE_ERR_SYNTAX);
    uint64_t b;
    CHECK_EQ_INT(strobe__parse_size("64M", &b), 0);
    CHECK_EQ_U64(b, 64ull << 20);
    CHECK_EQ_INT(strobe__parse_size("10k", &b), 0);
    CHECK_EQ_U64(b, 10240);
    CHECK_EQ_INT(strobe__parse_size("12", &b), 0);
    CHECK_EQ_U64(b, 12);
    CHECK_EQ_INT(strobe__parse_size("2GiB", &b), 0);
    CHECK_EQ_U64(b, 2ull << 30);
    CHECK_EQ_INT(strobe__parse_size("1P", &b), STROBE_ERR_SYNTAX);
    CHECK_EQ_INT(strobe__parse_size("-5", &b), STROBE_ERR_SYNTAX);
    CHECK_EQ_INT(strobe__parse_size("99999999999G", &b), STROBE_ERR_SYNTAX);
}

/* Values that parse but cannot work are refused when the configuration
 * is built (so by --check): a schedule below 1 ms, a port no socket can
 * have, a key of one kind of entry given to another. */
STROBE_TEST(unworkable_values)
{
    expect_error("samplers:\n  - plugin: synthetic\n    interval: 1ns\n",
                 "t.yaml:3: interval: '1ns' is below the minimum interval of 1ms");
    expect_error("samplers:\n  - plugin: synthetic\n    interval: 999us\n",
                 "t.yaml:3: interval: '999us' is below the minimum interval of 1ms");
    expect_error("producers:\n  - address: 127.0.0.1:10444\n    interval: 0.5ms\n",
                 "t.yaml:3: producers: interval: '0.5ms' is below the minimum interval of 1ms");
    expect_error("stores:\n  - plugin: csv\n    path: /tmp\n    flush_interval: 100us\n",
                 "t.yaml:4: flush_interval: '100us' is below the minimum interval of 1ms");
    expect_error("stores:\n  - plugin: csv\n    path: /tmp\n    flush_interval: later\n",
                 "t.yaml:4: flush_interval: 'later' is not a positive duration");
    expect_error("stores:\n  - plugin: csv\n    path: /tmp\n    interval: 1s\n",
                 "t.yaml:4: interval: unknown key for plugin csv");
    expect_error("samplers:\n  - plugin: synthetic\n    flush_interval: 1s\n",
                 "t.yaml:3: flush_interval: unknown key for plugin synthetic");
    expect_error("transforms:\n  - plugin: delta\n    input: '*'\n    interval: 1s\n",
                 "t.yaml:4: interval: unknown key for plugin delta");
    expect_error("stores:\n  - plugin: csv\n    path: /tmp\n    fsync: maybe\n",
                 "t.yaml:4: csv: fsync: 'maybe': expected true or false");
    expect_error("producers:\n  - address: 127.0.0.1:99999\n",
                 "t.yaml:2: producers: address: '127.0.0.1:99999' has no port from 1 to 65535");
    expect_error("producers:\n  - address: tcp://node1:0\n",
                 "t.yaml:2: producers: address: 'tcp://node1:0' has no port from 1 to 65535");
    expect_error("producers:\n  - address: 'node1:'\n",
                 "t.yaml:2: producers: address: 'node1:' has no port from 1 to 65535");
    expect_error("producers:\n  - address: node1:http\n",
                 "t.yaml:2: producers: address: 'node1:http' has no port from 1 to 65535");
    expect_error("daemon:\n  listen: 0.0.0.0:70000\n",
                 "t.yaml:2: listen: '0.0.0.0:70000' has no port from 1 to 65535");
    expect_error("daemon:\n  http: '[::1]:-1'\n", "t.yaml:2: http: '[::1]:-1' has no port from 1 to 65535");
    char err[1024];
    CHECK_EQ_INT(build("daemon:\n  listen: '[::1]:65535'\nsamplers:\n  - plugin: synthetic\n    interval: 1ms\n"
                       "stores:\n  - plugin: csv\n    path: unworkable-csv\n    flush_interval: 1ms\n"
                       "    fsync: true\nproducers:\n  - address: tcp://127.0.0.1:1\n    interval: 1ms\n",
                       err, sizeof err),
                 0);
    /* --check says it in one line and exits 1, like every invalid configuration */
    const char *dir = strobe_test_tmpdir("unworkable");
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && printf 'producers:\\n  - address: node1:99999\\n' > b.yaml && "
                                "'%s/strobed' -c b.yaml --check", dir, STROBE_BIN_DIR),
                 1);
    CHECK_STR_EQ(out, "strobed: b.yaml:2: producers: address: 'node1:99999' has no port from 1 to 65535\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && printf 'samplers:\\n  - plugin: synthetic\\n    interval: 1ns\\n' "
                                "> a.yaml && '%s/strobed' -c a.yaml --check", dir, STROBE_BIN_DIR),
                 1);
    CHECK_STR_EQ(out, "strobed: a.yaml:3: interval: '1ns' is below the minimum interval of 1ms\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobed' --sample synthetic --interval 1ns --check", STROBE_BIN_DIR), 2);
    CHECK_STR_EQ(out, "strobed: --interval 1ns: below the minimum interval of 1ms\n");
    free(out);
}

STROBE_TEST(cli_errors)
{
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobed' -c /nonexistent.yaml", STROBE_BIN_DIR), 1);
    CHECK_STR_EQ(out, "strobed: /nonexistent.yaml: No such file or directory\n");
    free(out);
    const char *dir = strobe_test_tmpdir("cli");
    CHECK_EQ_INT(strobe_test_sh(&out, "printf 'samplers:\\n  - plugin: synthetic\\n    metrics: x\\n' > '%s/b.yaml'; "
                                "'%s/strobed' -c '%s/b.yaml'", dir, STROBE_BIN_DIR, dir), 1);
    CHECK_CONTAINS(out, "b.yaml:3: synthetic: metrics: 'x' is not a non-negative integer\n");
    CHECK_CONTAINS(out, "strobed: ");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobed' --sample synthetic,loadavg --interval 1s --check",
                                STROBE_BIN_DIR), 0);
    CHECK_STR_EQ(out, "strobed: command line: configuration is valid\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobed' --sample synthetic --interval fast --check", STROBE_BIN_DIR), 2);
    CHECK_STR_EQ(out, "strobed: --interval fast: not a positive duration (e.g. 500ms, 1s)\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobed'", STROBE_BIN_DIR), 2);
    free(out);
}

/* An out-of-tree plugin (examples/plugins/counter.c) loaded with dlopen. */
STROBE_TEST(external_plugin)
{
    char err[1024];
    char text[1024];
    snprintf(text, sizeof text,
             "daemon:\n  producer: n1\nplugin_path: %s\nsamplers:\n  - plugin: counter\n    step: 5\n",
             STROBE_LIB_DIR);
    struct strobe__cfg *cfg;
    CHECK_EQ_INT(strobe__cfg_parse(text, strlen(text), "t.yaml", &cfg, err, sizeof err), 0);
    struct strobe__daemon *d;
    if (strobe__daemon_new(cfg, &d, err, sizeof err) < 0)
        STROBE_FAIL("%s", err);
    for (int i = 0; i < 3; i++)
        strobe__daemon_sample_all(d, 0);
    pthread_mutex_lock(&d->lock);
    struct strobe__set_entry *e = strobe__daemon_set_find(d, "n1/counter");
    CHECK(e != NULL);
    CHECK_EQ_U64(strobe_set_get_u64(e->set, 0, 0), 15);
    pthread_mutex_unlock(&d->lock);
    strobe__daemon_free(d);
}

/* A started daemon with a listener and nothing to do sleeps: the server's
 * waiter once timed its waits on the wrong clock and spun on the lock.
 * Half a second of CPU time over 1 s of wall time is far above an idle
 * daemon (a few ms) and far below the spin (about 1 s). */
STROBE_TEST(idle_daemon_sleeps)
{
    char err[1024], text[256];
    snprintf(text, sizeof text, "daemon:\n  producer: n1\n  listen: 127.0.0.1:%d\n",
             23000 + (int)(getpid() % 1000));
    struct strobe__cfg *cfg;
    CHECK_EQ_INT(strobe__cfg_parse(text, strlen(text), "t.yaml", &cfg, err, sizeof err), 0);
    struct strobe__daemon *d;
    if (strobe__daemon_new(cfg, &d, err, sizeof err) < 0)
        STROBE_FAIL("%s", err);
    if (strobe__daemon_start(d, err, sizeof err) < 0)
        STROBE_FAIL("start: %s", err);
    struct timespec t0, t1, pause = { 1, 0 };
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    nanosleep(&pause, NULL);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    double cpu = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (cpu > 0.5)
        STROBE_FAIL("an idle daemon used %.3f s of CPU in 1 s", cpu);
    strobe__daemon_free(d);
}

/* An in-process daemon of producer n1 with nothing configured. */
static struct strobe__daemon *minimal_daemon(void)
{
    char err[1024];
    const char *text = "daemon:\n  producer: n1\n";
    struct strobe__cfg *cfg;
    CHECK_EQ_INT(strobe__cfg_parse(text, strlen(text), "t.yaml", &cfg, err, sizeof err), 0);
    struct strobe__daemon *d;
    CHECK_EQ_INT(strobe__daemon_new(cfg, &d, err, sizeof err), 0);
    return d;
}

static strobe_set *prom_set(const char *instance, int extra, uint64_t v)
{
    strobe_schema *sc;
    CHECK_EQ_INT(strobe_schema_new("app", &sc), 0);
    strobe_schema_add(sc, "calls", "", STROBE_MT_U64, 1, STROBE_METRIC_COUNTER);
    strobe_schema_add(sc, "load", "%", STROBE_MT_D64, 2, 0);
    strobe_schema_add(sc, "label", NULL, STROBE_MT_CHAR, 8, 0);
    if (extra)
        strobe_schema_add(sc, "extra", NULL, STROBE_MT_S32, 1, 0);
    strobe_set *set;
    CHECK_EQ_INT(strobe_set_new(sc, "n\"1", instance, &set), 0);
    strobe_schema_free(sc);
    strobe_set_begin(set);
    strobe_set_u64(set, 0, 0, v);
    strobe_set_d64(set, 1, 0, 0.5);
    strobe_set_d64(set, 1, 1, 1.25);
    strobe_set_valid(set, 1, v != 2);
    if (extra)
        strobe_set_s64(set, 3, 0, -7);
    strobe_set_end_at(set, 1700000000123456789ull, 0);
    return set;
}

/* The Prometheus exposition: families together, labels escaped, arrays
 * indexed, invalid values NaN, char metrics left out, a counter typed as
 * one and named _total, and a second layout of the same schema adding only
 * its own families. */
STROBE_TEST(prometheus_text)
{
    struct strobe__daemon *d = minimal_daemon();
    pthread_mutex_lock(&d->lock);
    CHECK_EQ_INT(strobe__daemon_set_add(d, prom_set("a/app", 0, 1), STROBE_SET_PUBLISH, NULL), 0);
    CHECK_EQ_INT(strobe__daemon_set_add(d, prom_set("b/app", 1, 2), STROBE_SET_PUBLISH, NULL), 0);
    CHECK_EQ_INT(strobe__daemon_set_add(d, prom_set("hidden/app", 0, 3), 0, NULL), 0);
    struct strobe__wr w = { 0 };
    CHECK_EQ_INT(strobe__prometheus_text(d, &w), 0);
    strobe__wr_u8(&w, 0);
    CHECK_STR_EQ((const char *)w.buf,
                 "# TYPE strobe_app_calls_total counter\n"
                 "strobe_app_calls_total{instance=\"a/app\",producer=\"n\\\"1\"} 1 1700000000123\n"
                 "strobe_app_calls_total{instance=\"b/app\",producer=\"n\\\"1\"} 2 1700000000123\n"
                 "# TYPE strobe_app_load gauge\n"
                 "# HELP strobe_app_load unit: %\n"
                 "strobe_app_load{instance=\"a/app\",producer=\"n\\\"1\",index=\"0\"} 0.5 1700000000123\n"
                 "strobe_app_load{instance=\"a/app\",producer=\"n\\\"1\",index=\"1\"} 1.25 1700000000123\n"
                 "strobe_app_load{instance=\"b/app\",producer=\"n\\\"1\",index=\"0\"} NaN 1700000000123\n"
                 "strobe_app_load{instance=\"b/app\",producer=\"n\\\"1\",index=\"1\"} NaN 1700000000123\n"
                 "# TYPE strobe_app_extra gauge\n"
                 "strobe_app_extra{instance=\"b/app\",producer=\"n\\\"1\"} -7 1700000000123\n");
    strobe__wr_free(&w);
    pthread_mutex_unlock(&d->lock);
    strobe__daemon_free(d);
}

/* A set's char meta metrics (an application's job_id) are labels of its
 * samples in /metrics; char data metrics are still left out. */
STROBE_TEST(prometheus_meta_labels)
{
    struct strobe__daemon *d = minimal_daemon();
    strobe_schema *sc;
    CHECK_EQ_INT(strobe_schema_new("regions", &sc), 0);
    strobe_schema_add(sc, "pid", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META);
    strobe_schema_add(sc, "main.visits", NULL, STROBE_MT_U64, 1, STROBE_METRIC_COUNTER);
    strobe_schema_add(sc, "job_id", NULL, STROBE_MT_CHAR, 64, STROBE_METRIC_META);
    strobe_set *set;
    CHECK_EQ_INT(strobe_set_new(sc, "node", "node/regions/7", &set), 0);
    strobe_schema_free(sc);
    strobe_set_u64(set, 0, 0, 7);
    strobe_set_str(set, 2, "4242.3");
    strobe_set_begin(set);
    strobe_set_u64(set, 1, 0, 5);
    strobe_set_end_at(set, 1700000000123456789ull, 0);
    pthread_mutex_lock(&d->lock);
    CHECK_EQ_INT(strobe__daemon_set_add(d, set, STROBE_SET_PUBLISH, NULL), 0);
    struct strobe__wr w = { 0 };
    CHECK_EQ_INT(strobe__prometheus_text(d, &w), 0);
    strobe__wr_u8(&w, 0);
    CHECK_STR_EQ((const char *)w.buf,
                 "# TYPE strobe_regions_pid gauge\n"
                 "strobe_regions_pid{instance=\"node/regions/7\",producer=\"node\",job_id=\"4242.3\"} 7 1700000000123\n"
                 "# TYPE strobe_regions_main_visits_total counter\n"
                 "strobe_regions_main_visits_total{instance=\"node/regions/7\",producer=\"node\",job_id=\"4242.3\"} 5 "
                 "1700000000123\n");
    strobe__wr_free(&w);
    pthread_mutex_unlock(&d->lock);
    strobe__daemon_free(d);
}

/* The registry: 5000 sets added, 4000 removed in a scattered order, then
 * every remaining one is found by name and no removed one is (removal
 * patches the index in place: the last entry takes the removed place). */
STROBE_TEST(registry_add_remove)
{
    struct strobe__daemon *d = minimal_daemon();
    enum { N = 5000 };
    static strobe_set *sets[N];
    strobe_schema *sc;
    CHECK_EQ_INT(strobe_schema_new("reg", &sc), 0);
    strobe_schema_add(sc, "v", NULL, STROBE_MT_U64, 1, 0);
    pthread_mutex_lock(&d->lock);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "n1/set%d", i);
        CHECK_EQ_INT(strobe_set_new(sc, "n1", name, &sets[i]), 0);
        CHECK_EQ_INT(strobe__daemon_set_add(d, sets[i], STROBE_SET_PUBLISH, NULL), 0);
    }
    static bool gone[N];
    for (int k = 0; k < 4000; k++) {
        int i = (int)(((unsigned)k * 7919u) % N); /* 7919 is prime: 4000 distinct sets */
        CHECK(!gone[i]);
        strobe__daemon_set_remove(d, sets[i]);
        gone[i] = true;
    }
    CHECK_EQ_U64(d->nsets, N - 4000);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "n1/set%d", i);
        struct strobe__set_entry *e = strobe__daemon_set_find(d, name);
        if (gone[i])
            CHECK(e == NULL);
        else
            CHECK(e != NULL && e->set == sets[i]);
    }
    pthread_mutex_unlock(&d->lock);
    strobe_schema_free(sc);
    strobe__daemon_free(d);
}

STROBE_TEST_MAIN(STROBE_CASE(prometheus_text), STROBE_CASE(prometheus_meta_labels), STROBE_CASE(registry_add_remove), STROBE_CASE(errors_name_line_and_key), STROBE_CASE(valid_config_runs),
                 STROBE_CASE(durations_and_sizes), STROBE_CASE(cli_errors), STROBE_CASE(external_plugin),
                 STROBE_CASE(idle_daemon_sleeps), STROBE_CASE(unworkable_values))
