/* SPDX-License-Identifier: MIT */
/*
 * The influx store and its line-protocol encoder, against a real InfluxDB
 * 1.6 server (Debian package influxdb) that each test starts in its own
 * temporary directory: the exact text of the encoder, names that need
 * every kind of escape read back exactly, a strobed with the store in
 * its YAML, exact values, tags and timestamps through the outbox (plain
 * and gzip), an outage (the server starts late: every point arrives once,
 * one log line per state change), a server that never answers (timeouts), a refusal (a field type conflict:
 * 400, the batch dropped, one log line with InfluxDB's message), basic authentication and the configuration
 * errors.
 */
#include <math.h>

#include "plugins/influx_lp.h"
#include "plugins/influxd.h"
#include "plugins/store_sets.h"
#include "strobed/daemon.h"
#include "test.h"

#define SEC 1000000000ull
#define CREATED "{\"results\":[{\"statement_id\":0}]}"

/* Polls query q until InfluxDB answers `want`; fails after 20 s. */
static void wait_answer(const struct influxd *s, const char *db, const char *q, const char *want)
{
    char *got = NULL;
    for (int ms = 0; ms < 20000; ms += 50) {
        free(got);
        got = influxd_query(s, db, q);
        if (!strcmp(got, want)) {
            free(got);
            return;
        }
        sleep_ms(50);
    }
    STROBE_FAIL("%s: after 20 s\n--- got\n%s\n--- expected\n%s", q, got, want);
}

/* The number of lines of file `path` that contain `needle`. */
static int count_lines(const char *path, const char *needle)
{
    char pat[4200], *out;
    snprintf(pat, sizeof pat, "%s.pattern", path);
    write_private(pat, needle);
    strobe_test_sh(&out, "grep -cF -f '%s' '%s'", pat, path);
    int n = atoi(out);
    free(out);
    return n;
}

/* The points InfluxDB's HTTP service accepted since it started (its own
 * statistics), to see that nothing arrived twice: a point sent again
 * overwrites itself and does not show in a query. */
static long points_written(const struct influxd *s)
{
    char *stats = influxd_query(s, "", "SHOW STATS FOR 'httpd'");
    char path[4200], *out;
    snprintf(path, sizeof path, "%s/stats.json", s->dir);
    write_private(path, stats);
    free(stats);
    strobe_test_sh(
        &out,
        "python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[\"results\"][0][\"series\"][0]; "
        "print(r[\"values\"][0][r[\"columns\"].index(\"pointsWrittenOK\")])' '%s'",
        path);
    long n = atol(out);
    free(out);
    return n;
}

static char *encode(const strobe_set *set, struct strobe__influx_count *n)
{
    struct strobe__wr w = {0};
    CHECK(strobe__influx_encode(&w, set, n) == 0);
    strobe__wr_u8(&w, 0);
    CHECK(w.err == 0);
    return (char *)w.buf;
}

/* Every type, an array, a char meta tag, invalid and unwritable values:
 * the exact text, and InfluxDB reads it back as the same values. */
STROBE_TEST(encode_exact)
{
    strobe_schema *sc;
    strobe_set *set;
    CHECK(strobe_schema_new("node", &sc) == 0);
    CHECK(strobe_schema_add(sc, "component_id", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META) == 0);
    CHECK(strobe_schema_add(sc, "job", NULL, STROBE_MT_CHAR, 16, STROBE_METRIC_META) == 1);
    CHECK(strobe_schema_add(sc, "ticks", NULL, STROBE_MT_U64, 1, STROBE_METRIC_COUNTER) == 2);
    CHECK(strobe_schema_add(sc, "temp", NULL, STROBE_MT_S16, 1, 0) == 3);
    CHECK(strobe_schema_add(sc, "load", NULL, STROBE_MT_D64, 1, 0) == 4);
    CHECK(strobe_schema_add(sc, "cpu", NULL, STROBE_MT_U32, 3, STROBE_METRIC_ARRAY) == 5);
    CHECK(strobe_schema_add(sc, "freq", NULL, STROBE_MT_F32, 2, STROBE_METRIC_ARRAY) == 6);
    CHECK(strobe_schema_add(sc, "state", NULL, STROBE_MT_CHAR, 8, 0) == 7);
    CHECK(strobe_schema_add(sc, "bad", NULL, STROBE_MT_D64, 1, 0) == 8);
    CHECK(strobe_schema_add(sc, "huge", NULL, STROBE_MT_U64, 1, 0) == 9);
    CHECK(strobe_set_new(sc, "n1", "n1/node", &set) == 0);
    strobe_schema_free(sc);
    strobe_set_begin(set);
    strobe_set_u64(set, 0, 0, 7);
    strobe_set_str(set, 1, "4711");
    strobe_set_u64(set, 2, 0, 123456789012ull);
    strobe_set_s64(set, 3, 0, -40);
    strobe_set_d64(set, 4, 0, 0.1);
    for (uint32_t j = 0; j < 3; j++)
        strobe_set_u64(set, 5, j, 10 + j);
    strobe_set_d64(set, 6, 0, 2.5);
    strobe_set_d64(set, 6, 1, 3e9);
    strobe_set_str(set, 7, "up \"ok\"");
    strobe_set_d64(set, 8, 0, NAN);
    strobe_set_u64(set, 9, 0, UINT64_MAX);
    strobe_set_end_at(set, 1700000000123456789ull, 0);
    struct strobe__influx_count n = {0};
    char *got = encode(set, &n);
    CHECK_STR_EQ(
        got,
        "node,instance=n1/node,producer=n1,job=4711 component_id=7i,ticks=123456789012i,temp=-40i,"
        "load=0.1,state=\"up \\\"ok\\\"\" 1700000000123456789\n"
        "node,instance=n1/node,producer=n1,job=4711,index=0 cpu=10i,freq=2.5 1700000000123456789\n"
        "node,instance=n1/node,producer=n1,job=4711,index=1 cpu=11i,freq=3000000000 1700000000123456789\n"
        "node,instance=n1/node,producer=n1,job=4711,index=2 cpu=12i 1700000000123456789\n");
    CHECK_EQ_U64(n.values, 10);
    CHECK_EQ_U64(n.omitted, 2);

    /* an invalid metric is left out; a point left without fields is too */
    strobe_set_valid(set, 5, 0);
    strobe_set_valid(set, 6, 0);
    free(got);
    n = (struct strobe__influx_count){0};
    got = encode(set, &n);
    CHECK_STR_EQ(got,
                 "node,instance=n1/node,producer=n1,job=4711 component_id=7i,ticks=123456789012i,temp=-40i,"
                 "load=0.1,state=\"up \\\"ok\\\"\" 1700000000123456789\n");
    CHECK_EQ_U64(n.values, 5);
    CHECK_EQ_U64(n.omitted, 7);
    free(got);
    strobe_set_free(set);
}

/* Names with every character the line protocol escapes or cannot carry:
 * the exact text, and the names InfluxDB reads back. */
STROBE_TEST(escaping)
{
    const char *dir = strobe_test_tmpdir("escaping");
    struct influxd db = {0};
    influxd_start(&db, dir, test_port(0), test_port(1));
    influxd_check(&db, "", "CREATE DATABASE s", "{\"results\":[{\"statement_id\":0}]}");
    strobe_schema *sc;
    strobe_set *set;
    CHECK(strobe_schema_new("#my schema,v=1\\x\\", &sc) == 0);
    CHECK(strobe_schema_add(sc, "site name", NULL, STROBE_MT_CHAR, 32, STROBE_METRIC_META) == 0);
    CHECK(strobe_schema_add(sc, "note", NULL, STROBE_MT_CHAR, 32, STROBE_METRIC_META) == 1);
    CHECK(strobe_schema_add(sc, "a b,c=d", NULL, STROBE_MT_U64, 1, 0) == 2);
    CHECK(strobe_schema_add(sc, "g\"h", NULL, STROBE_MT_S64, 1, 0) == 3);
    CHECK(strobe_schema_add(sc, "time", NULL, STROBE_MT_U64, 1, 0) == 4);
    CHECK(strobe_schema_add(sc, "back\\slash", NULL, STROBE_MT_U64, 1, 0) == 5);
    CHECK(strobe_schema_add(sc, "q\\,r\\", NULL, STROBE_MT_U64, 1, 0) == 6);
    CHECK(strobe_schema_add(sc, "text", NULL, STROBE_MT_CHAR, 32, 0) == 7);
    CHECK(strobe_set_new(sc, "p 1", "p 1/in,st=x", &set) == 0);
    strobe_schema_free(sc);
    strobe_set_begin(set);
    strobe_set_str(set, 0, "room \"A\", rack=3\\");
    strobe_set_str(set, 1, "two\nlines\tand tab");
    strobe_set_u64(set, 2, 0, 1);
    strobe_set_s64(set, 3, 0, -2);
    strobe_set_u64(set, 4, 0, 3);
    strobe_set_u64(set, 5, 0, 4);
    strobe_set_u64(set, 6, 0, 5);
    strobe_set_str(set, 7, "say \"hi\" \\ bye\n");
    strobe_set_end_at(set, 1700000000000000001ull, 0);
    struct strobe__influx_count n = {0};
    char *got = encode(set, &n);
    CHECK_STR_EQ(got, "_my\\ schema\\,v=1\\x_,instance=p\\ 1/in\\,st\\=x,producer=p\\ 1,"
                      "site\\ name=room\\ \"A\"\\,\\ rack\\=3_,note=two_lines\tand\\ tab "
                      "a\\ b\\,c\\=d=1i,g\"h=-2i,time_=3i,back\\slash=4i,q_\\,r_=5i,"
                      "text=\"say \\\"hi\\\" \\\\ bye\n\" 1700000000000000001\n");
    char *ans = influxd_write(&db, "s", got);
    CHECK_STR_EQ(ans, "204 ");
    influxd_check(
        &db, "s", "SHOW MEASUREMENTS",
        "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"measurements\",\"columns\":[\"name\"],"
        "\"values\":[[\"_my schema,v=1\\\\x_\"]]}]}]}");
    influxd_check(
        &db, "s", "SELECT * FROM /.*/",
        "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"_my schema,v=1\\\\x_\",\"columns\":"
        "[\"time\",\"a b,c=d\",\"back\\\\slash\",\"g\\\"h\",\"instance\",\"note\",\"producer\",\"q_,r_\","
        "\"site name\",\"text\",\"time_\"],\"values\":[[1700000000000000001,1,4,-2,\"p 1/in,st=x\","
        "\"two_lines\\tand tab\",\"p 1\",5,\"room \\\"A\\\", rack=3_\",\"say \\\"hi\\\" \\\\ "
        "bye\\n\",3]]}]}]}");
    free(ans);
    free(got);
    strobe_set_free(set);
    influxd_stop(&db);
}

/* Sets the test updates itself go through the outbox to InfluxDB, plain
 * and gzip-compressed, in batches of 4 values (2 sets), and into a
 * retention policy: every value, tag and timestamp comes back exactly. */
STROBE_TEST(exact)
{
    const char *dir = strobe_test_tmpdir("exact");
    struct influxd db = {0};
    influxd_start(&db, dir, test_port(0), test_port(1));
    influxd_check(&db, "", "CREATE DATABASE plain", CREATED);
    influxd_check(&db, "", "CREATE DATABASE packed", CREATED);
    influxd_check(&db, "", "CREATE RETENTION POLICY long ON plain DURATION 1000w REPLICATION 1", CREATED);
    struct strobe__daemon *d = daemon_from(
        "daemon: {producer: node1, log_file: %s/d.log}\nstores:\n"
        "  - {plugin: influx, name: plain, url: 'http://127.0.0.1:%d/', db: plain, queue_dir: %s/q1, "
        "batch_values: 4}\n"
        "  - {plugin: influx, name: packed, url: 'http://127.0.0.1:%d', db: packed, queue_dir: %s/q2, "
        "batch_values: 4, "
        "gzip: true}\n"
        "  - {plugin: influx, name: kept, url: 'http://127.0.0.1:%d', db: plain, retention_policy: long, "
        "queue_dir: %s/q3}\n",
        dir, db.port, dir, db.port, dir, db.port, dir);
    strobe_set *s = add_set(d, "s", NULL, (const char *const[]){"a", "b", NULL});
    for (uint64_t k = 1; k <= 3; k++)
        update(d, s, 1700000000 * SEC + k * SEC + k, (uint64_t[]){k, 1000 * k}, 2);
    flush_stores(d);
    const char *want =
        "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"s\",\"columns\":[\"time\",\"a\",\"b\","
        "\"instance\",\"producer\"],\"values\":[[1700000001000000001,1,1000,\"node1/s\",\"node1\"],"
        "[1700000002000000002,2,2000,\"node1/s\",\"node1\"],[1700000003000000003,3,3000,\"node1/s\","
        "\"node1\"]]}]}]}";
    wait_answer(&db, "plain", "SELECT * FROM s", want);
    wait_answer(&db, "packed", "SELECT * FROM s", want);
    wait_answer(&db, "plain", "SELECT * FROM long.s", want);
    strobe__daemon_free(d);
    CHECK_EQ_INT(points_written(&db), 9);
    char log[4200];
    snprintf(log, sizeof log, "%s/d.log", dir);
    CHECK_EQ_INT(count_lines(log, "WARN"), 0);
    CHECK_EQ_INT(count_lines(log, "ERROR"), 0);
    influxd_stop(&db);
}

/* The server is down at first: the batches (one per set) wait in the
 * queue, the outage is logged once, and when influxd starts every point arrives exactly
 * once, logged once. */
STROBE_TEST(outage)
{
    const char *dir = strobe_test_tmpdir("outage");
    char log[4200];
    snprintf(log, sizeof log, "%s/d.log", dir);
    int port = test_port(0);
    struct strobe__daemon *d = daemon_from(
        "daemon: {producer: node1, log_file: %s}\nstores:\n"
        "  - {plugin: influx, url: 'http://127.0.0.1:%d', db: late, queue_dir: %s/q, batch_values: 2, "
        "retry_min: 50ms, retry_max: 400ms}\n",
        log, port, dir);
    strobe_set *s = add_set(d, "s", NULL, (const char *const[]){"a", "b", NULL});
    for (uint64_t k = 1; k <= 6; k++)
        update(d, s, 1700000000 * SEC + k, (uint64_t[]){k, 10 * k}, 2);
    flush_stores(d);
    sleep_ms(1500); /* a few retries, not a busy loop: one line */
    CHECK_EQ_INT(count_lines(log, "unreachable (connection refused); queueing, retrying with back-off"), 1);
    struct influxd db = {0};
    influxd_start(&db, dir, port, test_port(1));
    influxd_check(&db, "", "CREATE DATABASE late", CREATED);
    wait_answer(&db, "late", "SELECT count(a), sum(a), sum(b) FROM s",
                "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"s\",\"columns\":[\"time\","
                "\"count\",\"sum\","
                "\"sum_1\"],\"values\":[[0,6,21,210]]}]}]}");
    strobe__daemon_free(d);
    CHECK_EQ_INT(points_written(&db), 6);
    CHECK_EQ_INT(count_lines(log, "unreachable"), 1);
    CHECK_EQ_INT(count_lines(log, "delivered again after"), 1);
    CHECK_EQ_INT(count_lines(log, "6 batch(es) (390 B) were queued, 0 dropped"), 1);
    CHECK_EQ_INT(
        count_lines(
            log, "12 value(s) in 6 batch(es) since the start: 6 sent, 0 refused, 0 dropped, 0 left queued"),
        1);
    influxd_stop(&db);
}

/* A server that takes the connection but never answers: each request
 * times out after `timeout`, is retried, and the outage is logged once;
 * when InfluxDB answers on that port, every point arrives once. */
STROBE_TEST(slow)
{
    const char *dir = strobe_test_tmpdir("slow");
    char log[4200];
    snprintf(log, sizeof log, "%s/d.log", dir);
    int port = test_port(0);
    /* listening, never accepting: the kernel completes the handshake */
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(ls >= 0 && bind(ls, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(ls, 16) == 0);
    struct strobe__daemon *d = daemon_from(
        "daemon: {producer: node1, log_file: %s}\nstores:\n"
        "  - {plugin: influx, url: 'http://127.0.0.1:%d', db: slow, queue_dir: %s/q, batch_values: 1, "
        "timeout: 300ms, retry_min: 50ms, retry_max: 200ms}\n",
        log, port, dir);
    strobe_set *s = add_set(d, "s", NULL, (const char *const[]){"a", NULL});
    for (uint64_t k = 1; k <= 3; k++)
        update(d, s, 1700000000 * SEC + k, (uint64_t[]){k}, 1);
    sleep_ms(1500);
    CHECK_EQ_INT(count_lines(log, "unreachable (timeout after 0.3 s); queueing, retrying with back-off"), 1);
    close(ls);
    struct influxd db = {0};
    influxd_start(&db, dir, port, test_port(1));
    influxd_check(&db, "", "CREATE DATABASE slow", CREATED);
    wait_answer(&db, "slow", "SELECT count(a), sum(a) FROM s",
                "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"s\",\"columns\":[\"time\","
                "\"count\",\"sum\"],"
                "\"values\":[[0,3,6]]}]}]}");
    strobe__daemon_free(d);
    CHECK_EQ_INT(points_written(&db), 3);
    CHECK_EQ_INT(count_lines(log, "unreachable"), 1);
    CHECK_EQ_INT(count_lines(log, "delivered again after"), 1);
    influxd_stop(&db);
}

/* A field InfluxDB already has as a string: 400 "field type conflict",
 * the batch is dropped and counted, one line with InfluxDB's message,
 * and one when a batch is accepted again. */
STROBE_TEST(refused)
{
    const char *dir = strobe_test_tmpdir("refused");
    char log[4200];
    snprintf(log, sizeof log, "%s/d.log", dir);
    struct influxd db = {0};
    influxd_start(&db, dir, test_port(0), test_port(1));
    influxd_check(&db, "", "CREATE DATABASE r", CREATED);
    /* (a type is fixed per shard: the same week as the store's points) */
    char *ans = influxd_write(&db, "r", "s,instance=node1/s,producer=node1 a=\"text\" 1700000000000000000\n");
    CHECK_STR_EQ(ans, "204 ");
    free(ans);
    struct strobe__daemon *d =
        daemon_from("daemon: {producer: node1, log_file: %s}\nstores:\n"
                    "  - {plugin: influx, url: 'http://127.0.0.1:%d', db: r, queue_dir: %s/q, "
                    "batch_values: 1}\n",
                    log, db.port, dir);
    strobe_set *s = add_set(d, "s", NULL, (const char *const[]){"a", NULL});
    strobe_set *t = add_set(d, "t", NULL, (const char *const[]){"a", NULL});
    update(d, s, 1700000000 * SEC + 1, (uint64_t[]){1}, 1);
    update(d, s, 1700000000 * SEC + 2, (uint64_t[]){2}, 1);
    update(d, t, 1700000000 * SEC + 3, (uint64_t[]){3}, 1);
    wait_answer(&db, "r", "SELECT * FROM t",
                "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"t\",\"columns\":[\"time\",\"a\","
                "\"instance\","
                "\"producer\"],\"values\":[[1700000000000000003,3,\"node1/t\",\"node1\"]]}]}]}");
    strobe__daemon_free(d);
    influxd_check(&db, "r", "SELECT * FROM s",
                  "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"s\",\"columns\":[\"time\",\"a\","
                  "\"instance\","
                  "\"producer\"],\"values\":[[1700000000000000000,\"text\",\"node1/s\",\"node1\"]]}]}]}");
    CHECK_EQ_INT(
        count_lines(log,
                    "refused a batch (HTTP 400: partial write: field type conflict: input field "
                    "\"a\" on measurement \"s\" is type integer, already exists as type string dropped=1)"),
        1);
    CHECK_EQ_INT(count_lines(log, "refused a batch"), 1);
    CHECK_EQ_INT(
        count_lines(log,
                    "3 value(s) in 3 batch(es) since the start: 1 sent, 2 refused, 0 dropped, 0 left queued"),
        1);
    CHECK_EQ_INT(count_lines(log, "accepts batches again; 2 batch(es) were refused"), 1);
    influxd_stop(&db);
}

/* strobed with the store in its YAML: the synthetic sampler's 3 samples
 * (m_i = 10 + k * (i + 1), component_id 5) arrive, tagged with its
 * producer and instance, and the daemon stops cleanly. */
STROBE_TEST(strobed_yaml)
{
    const char *dir = strobe_test_tmpdir("strobed_yaml");
    struct influxd db = {0};
    influxd_start(&db, dir, test_port(0), test_port(1));
    influxd_check(&db, "", "CREATE DATABASE y", CREATED);
    char yaml[8192];
    snprintf(yaml, sizeof yaml,
             "daemon:\n  producer: n1\n  listen: 127.0.0.1:%d\n"
             "samplers:\n  - {plugin: synthetic, interval: 100ms, metrics: 2, base: 10, component_id: 5, "
             "samples: 3}\n"
             "stores:\n  - plugin: influx\n    url: http://127.0.0.1:%d\n    db: y\n    queue_dir: %s/q\n"
             "    batch_age: 100ms\n",
             test_port(2), db.port, dir);
    pid_t pid = start_daemon(dir, "strobed", yaml);
    wait_answer(
        &db, "y", "SELECT count(m0), sum(m0), sum(m1), max(component_id) FROM synthetic GROUP BY *",
        "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"synthetic\",\"tags\":{\"instance\":"
        "\"n1/synthetic\",\"producer\":\"n1\"},\"columns\":[\"time\",\"count\",\"sum\",\"sum_1\",\"max\"],"
        "\"values\":[[0,3,36,42,5]]}]}]}");
    stop_clean(pid, dir, "strobed");
    CHECK_EQ_INT(points_written(&db), 3);
    influxd_stop(&db);
}

/* InfluxDB 1.x with authentication: the right password writes; a wrong
 * one (401) is retried, not dropped, and logged once. */
STROBE_TEST(auth)
{
    const char *dir = strobe_test_tmpdir("auth");
    struct influxd db = {.auth = 1};
    influxd_start(&db, dir, test_port(0), test_port(1));
    /* the first user may be made without credentials: the admin */
    influxd_check(&db, "", "CREATE USER admin WITH PASSWORD 'adm' WITH ALL PRIVILEGES", CREATED);
    db.user = "admin:adm";
    influxd_check(&db, "", "CREATE DATABASE a", CREATED);
    influxd_check(&db, "", "CREATE USER strobe WITH PASSWORD 'right'", CREATED);
    influxd_check(&db, "", "GRANT WRITE ON a TO strobe", CREATED);
    char right[4200], wrong[4200], log[4200];
    snprintf(right, sizeof right, "%s/right", dir);
    snprintf(wrong, sizeof wrong, "%s/wrong", dir);
    snprintf(log, sizeof log, "%s/d.log", dir);
    write_private(right, "right\n");
    write_private(wrong, "wrong\n");
    struct strobe__daemon *d =
        daemon_from("daemon: {producer: node1, log_file: %s}\nstores:\n"
                    "  - {plugin: influx, name: ok, url: 'http://127.0.0.1:%d', db: a, username: strobe, "
                    "password_file: %s, "
                    "queue_dir: %s/q1, schemas: [s]}\n"
                    "  - {plugin: influx, name: bad, url: 'http://127.0.0.1:%d', db: a, username: strobe, "
                    "password_file: %s, "
                    "queue_dir: %s/q2, schemas: [t], retry_min: 50ms, retry_max: 200ms, timeout: 1s}\n",
                    log, db.port, right, dir, db.port, wrong, dir);
    strobe_set *s = add_set(d, "s", NULL, (const char *const[]){"a", NULL});
    strobe_set *t = add_set(d, "t", NULL, (const char *const[]){"a", NULL});
    update(d, s, 1700000000 * SEC + 1, (uint64_t[]){1}, 1);
    update(d, t, 1700000000 * SEC + 2, (uint64_t[]){2}, 1);
    flush_stores(d);
    wait_answer(&db, "a", "SELECT * FROM s",
                "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"s\",\"columns\":[\"time\",\"a\","
                "\"instance\","
                "\"producer\"],\"values\":[[1700000000000000001,1,\"node1/s\",\"node1\"]]}]}]}");
    sleep_ms(1000);
    strobe__daemon_free(d);
    influxd_check(&db, "a", "SELECT * FROM t", CREATED);
    CHECK_EQ_INT(count_lines(log, "bad: http://127.0.0.1"), 1);
    CHECK_EQ_INT(count_lines(log, "unreachable (HTTP 401: authorization failed); queueing"), 1);
    CHECK_EQ_INT(
        count_lines(
            log,
            "bad: 1 value(s) in 1 batch(es) since the start: 0 sent, 0 refused, 0 dropped, 1 left queued in"),
        1);
    CHECK_EQ_INT(
        count_lines(
            log,
            "ok: 1 value(s) in 1 batch(es) since the start: 1 sent, 0 refused, 0 dropped, 0 left queued in"),
        1);
    influxd_stop(&db);
}

/* Configuration errors: one message naming the key. */
STROBE_TEST(config_errors)
{
    const char *dir = strobe_test_tmpdir("config_errors");
    char y[9000], secret[4200];
    static const struct {
        const char *keys, *want;
    } cases[] = {
        {"db: x", "`url` (the InfluxDB server, e.g. http://127.0.0.1:8086) is required"},
        {"url: http://h:8086", "give `db` (InfluxDB 1.x) or `org` and `bucket` (InfluxDB 2.x), not neither"},
        {"url: http://h:8086, db: x, bucket: b, org: o", "not both"},
        {"url: http://h:8086, bucket: b", "`bucket` needs `org`"},
        {"url: http://h:8086, bucket: b, org: o, retention_policy: r",
         "`retention_policy` is InfluxDB 1.x's"},
        {"url: http://h:8086, db: x, gzip: maybe", "gzip: 'maybe': expected true or false"},
        {"url: http://h:8086, db: x, batch_values: 0", "batch_values: must be at least 1"},
        {"url: http://h:8086, db: x, username: u",
         "authenticate with `username` and `password_file`, or with `token_file`"},
        {"url: http://h:8086, db: x, password_file: SECRET",
         "authenticate with `username` and `password_file`"},
        {"url: http://h:8086, db: x, token_file: SECRET.open",
         "mode 0644 lets group or others access the secret"},
        {"url: http://h:8086, db: x, token_file: /nonexistent/t",
         "/nonexistent/t: No such file or directory"},
    };
    snprintf(secret, sizeof secret, "%s/secret", dir);
    write_private(secret, "pw\n");
    strobe_test_sh(NULL, "cp '%s' '%s.open' && chmod 644 '%s.open'", secret, secret, secret);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char keys[4800];
        const char *at = strstr(cases[i].keys, "SECRET");
        if (at)
            snprintf(keys, sizeof keys, "%.*s%s%s", (int)(at - cases[i].keys), cases[i].keys, secret, at + 6);
        else
            snprintf(keys, sizeof keys, "%s", cases[i].keys);
        snprintf(y, sizeof y, "stores:\n  - {plugin: influx, queue_dir: %s/q, %s}\n", dir, keys);
        const char *err = inproc_refusal(y, "test.yaml");
        if (!strstr(err, cases[i].want) || !strstr(err, "test.yaml:2"))
            STROBE_FAIL("%s\n--- got\n%s\n--- expected a line of test.yaml:2 with\n%s", y, err,
                        cases[i].want);
    }
}

STROBE_TEST_MAIN(STROBE_CASE(encode_exact), STROBE_CASE(escaping), STROBE_CASE(exact), STROBE_CASE(outage),
                 STROBE_CASE(slow), STROBE_CASE(refused), STROBE_CASE(strobed_yaml), STROBE_CASE(auth),
                 STROBE_CASE(config_errors))
