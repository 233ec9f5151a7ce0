/* SPDX-License-Identifier: MIT */
/*
 * The postgres store against a real PostgreSQL 15 server that each test
 * starts in a temporary directory (pg_server.h): the table it creates
 * (column types, comments, index), exact values of every metric type
 * read back with SELECT, COPY escapes, invalid values as NULL; a real
 * strobed sampling into it; a server stopped and started again while
 * strobed keeps sampling (every row exactly once, one log line per state
 * change); a batch the server refuses (wrong column type, no INSERT
 * privilege): dropped, counted, logged once; configuration errors.
 */
#include "plugins/pg_server.h"
#include "strobed/config.h"
#include "strobed/daemon.h"
#include "strobed/daemons.h"
#include "strobed/inproc.h"
#include "test.h"

#define SEC 1000000000ull

static void flush(struct strobe__daemon *d)
{
    pthread_mutex_lock(&d->lock);
    strobe__daemon_flush_stores(d);
    pthread_mutex_unlock(&d->lock);
}

/* The lines of the file that contain `what`. */
static int count_lines(const char *path, const char *what)
{
    char *out;
    CHECK(strobe_test_sh(&out, "grep -c -F -- '%s' '%s' || true", what, path) == 0);
    int n = atoi(out);
    free(out);
    return n;
}

STROBE_TEST(all_types)
{
    pg_init();
    const char *dir = strobe_test_tmpdir("pg_all_types");
    char yaml[8192];
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: node1}\nstores:\n  - {plugin: postgres, conninfo: '%s', queue_dir: %s/q}\n",
             pg.conninfo, dir);
    struct strobe__daemon *d = inproc_daemon(yaml, "test.yaml");
    strobe_schema *sc;
    strobe_set *set;
    CHECK(strobe_schema_new("t", &sc) == 0);
    CHECK(strobe_schema_add(sc, "component_id", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META) == 0);
    CHECK(strobe_schema_add(sc, "job_id", NULL, STROBE_MT_CHAR, 16, STROBE_METRIC_META) == 1);
    CHECK(strobe_schema_add(sc, "a", "B", STROBE_MT_U64, 1, STROBE_METRIC_COUNTER) == 2);
    CHECK(strobe_schema_add(sc, "b", NULL, STROBE_MT_S32, 1, 0) == 3);
    CHECK(strobe_schema_add(sc, "c", "s", STROBE_MT_D64, 1, 0) == 4);
    CHECK(strobe_schema_add(sc, "arr", NULL, STROBE_MT_U16, 3, STROBE_METRIC_ARRAY) == 5);
    CHECK(strobe_schema_add(sc, "name", NULL, STROBE_MT_CHAR, 8, 0) == 6);
    CHECK(strobe_schema_add(sc, "user", NULL, STROBE_MT_S64, 1, 0) == 7);
    CHECK(strobe_schema_add(sc, "one", NULL, STROBE_MT_F32, 1, STROBE_METRIC_ARRAY) == 8);
    CHECK(strobe_schema_add(sc, "s8", NULL, STROBE_MT_S8, 1, 0) == 9);
    CHECK(strobe_schema_add(sc, "u32", NULL, STROBE_MT_U32, 1, 0) == 10);
    CHECK(strobe_schema_add(sc, "time", NULL, STROBE_MT_U8, 1, 0) == 11);
    CHECK(strobe_set_new(sc, "node1", NULL, &set) == 0);
    strobe_schema_free(sc);
    pthread_mutex_lock(&d->lock);
    CHECK(strobe__daemon_set_add(d, set, STROBE_SET_PUBLISH, NULL) == 0);
    strobe__daemon_set_updated(d, set); /* never written: not consistent, no row */

    strobe_set_u64(set, 0, 0, 7);
    strobe_set_str(set, 1, "job-42");
    strobe_set_begin(set);
    strobe_set_u64(set, 2, 0, UINT64_MAX);
    strobe_set_s64(set, 3, 0, -5);
    strobe_set_d64(set, 4, 0, 0.1);
    for (uint32_t j = 0; j < 3; j++)
        strobe_set_u64(set, 5, j, 65533 + j);
    strobe_set_str(set, 6, "a\tb\\c\n");
    strobe_set_s64(set, 7, 0, INT64_MIN);
    strobe_set_d64(set, 8, 0, 1.5);
    strobe_set_s64(set, 9, 0, -128);
    strobe_set_u64(set, 10, 0, UINT32_MAX);
    strobe_set_u64(set, 11, 0, 255);
    strobe_set_end_at(set, 1700000000123456789ull, 10);
    strobe__daemon_set_updated(d, set);

    /* invalid values are NULL, an empty string is '' */
    strobe_set_begin(set);
    strobe_set_u64(set, 2, 0, 0);
    strobe_set_valid(set, 3, 0);
    strobe_set_d64(set, 4, 0, -2.5e-300);
    strobe_set_valid(set, 5, 0);
    strobe_set_str(set, 6, "");
    strobe_set_d64(set, 8, 0, 1.0 / 0.0);
    strobe_set_end_at(set, 1700000001000001999ull, 10);
    strobe__daemon_set_updated(d, set);
    pthread_mutex_unlock(&d->lock);
    flush(d);

    pg_wait("SELECT count(*) FROM strobe_t", "2\n", 10000);
    pg_expect("SET TIME ZONE 'UTC'; SELECT time, producer, instance, component_id, job_id, a, b, c, arr, "
              "name, \"user\", one, s8, u32, metric_time FROM strobe_t ORDER BY time",
              "2023-11-14 22:13:20.123456+00|node1|node1/t|7|job-42|18446744073709551615|-5|0.1|"
              "{65533,65534,65535}|a\tb\\c\n|-9223372036854775808|{1.5}|-128|4294967295|255\n"
              "2023-11-14 22:13:21.000001+00|node1|node1/t|7|job-42|0|NULL|-2.5e-300|NULL||"
              "-9223372036854775808|{Infinity}|-128|4294967295|255\n");
    /* the DDL of docs/plugins.md: types, comments, the index */
    pg_expect("SELECT attname, format_type(atttypid, atttypmod), attnotnull, "
              "coalesce(col_description(attrelid, attnum), '') FROM pg_attribute "
              "WHERE attrelid = 'strobe_t'::regclass AND attnum > 0 ORDER BY attnum",
              "time|timestamp with time zone|t|\n"
              "producer|text|t|\n"
              "instance|text|t|\n"
              "component_id|numeric(20,0)|f|meta\n"
              "job_id|text|f|meta\n"
              "a|numeric(20,0)|f|counter, unit B\n"
              "b|integer|f|gauge\n"
              "c|double precision|f|gauge, unit s\n"
              "arr|integer[]|f|gauge\n"
              "name|text|f|gauge\n"
              "user|bigint|f|gauge\n"
              "one|real[]|f|gauge\n"
              "s8|smallint|f|gauge\n"
              "u32|bigint|f|gauge\n"
              "metric_time|smallint|f|gauge\n");
    pg_expect("SELECT indexdef FROM pg_indexes WHERE tablename = 'strobe_t'",
              "CREATE INDEX strobe_t_instance_time ON public.strobe_t USING btree (instance, \"time\")\n");
    strobe__daemon_free(d);
}

/* Sample k of the synthetic sampler sets m<i> to k * (i + 1). */
static char *synthetic_rows(int from, int to)
{
    char *want = malloc(64 * (size_t)(to - from + 1) + 1);
    CHECK(want != NULL);
    size_t n = 0;
    want[0] = 0;
    for (int k = from; k <= to; k++)
        n += (size_t)sprintf(want + n, "%d|%d|%d\n", k, 2 * k, 3 * k);
    return want;
}

/* The table holds exactly samples 1..n, once each. */
static void expect_samples(int n)
{
    char *want = synthetic_rows(1, n);
    pg_expect("SELECT m0, m1, m2 FROM strobe_synthetic ORDER BY time", want);
    free(want);
}

/* Starts strobed, its log in <dir>/d.log: the synthetic sampler (3
 * metrics) `samples` times at 50 ms, into a postgres store with the
 * queue in <dir>/q and the keys given, connecting with the test's conninfo
 * and `more` (" user=..."). */
static pid_t start_sampling_as(const char *dir, const char *more, int samples, const char *keys)
{
    char yaml[8192];
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: node1, listen: '127.0.0.1:%d'}\n"
             "samplers:\n  - {plugin: synthetic, metrics: 3, samples: %d, interval: 50ms}\n"
             "stores:\n  - {plugin: postgres, conninfo: '%s%s', queue_dir: %s/q, %s}\n",
             test_port(0), samples, pg.conninfo, more, dir, keys);
    return start_daemon(dir, "d", yaml);
}

static pid_t start_sampling(const char *dir, int samples, const char *keys)
{
    return start_sampling_as(dir, "", samples, keys);
}

/* <dir>/d.log has one line with `down` and one with `up`: one line per
 * state change, not one per attempt. */
static void expect_one_outage(const char *dir, const char *down, const char *up)
{
    char log[4200];
    snprintf(log, sizeof log, "%s/d.log", dir);
    if (count_lines(log, down) != 1 || count_lines(log, up) != 1) {
        char *text;
        strobe_test_sh(&text, "grep -v DEBUG '%s' | tail -n 30", log);
        STROBE_FAIL("expected one line per state change in %s:\n%s", log, text);
    }
}

STROBE_TEST(strobed_samples)
{
    pg_init();
    const char *dir = strobe_test_tmpdir("pg_strobed_samples");
    pid_t pid = start_sampling(dir, 20, "batch_age: 200ms");
    pg_wait("SELECT count(*) FROM strobe_synthetic", "20\n", 20000);
    expect_samples(20);
    pg_expect("SELECT DISTINCT producer, instance, component_id FROM strobe_synthetic",
              "node1|node1/synthetic|0\n");
    stop_clean(pid, dir, "d");
}

/* The server stops (fast shutdown) while strobed samples and comes back
 * 3 s later: every sample arrives exactly once; the store's log says once
 * that the server is unreachable and once that it delivers again. */
STROBE_TEST(server_restart)
{
    pg_init();
    const char *dir = strobe_test_tmpdir("pg_server_restart");
    pid_t pid =
        start_sampling(dir, 100, "batch_age: 100ms, batch_values: 30, retry_min: 50ms, retry_max: 500ms");
    pg_wait("SELECT count(*) > 0 FROM strobe_synthetic", "t\n", 20000);
    pg_stop();
    sleep_ms(3000);
    pg_start();
    pg_wait("SELECT count(*) FROM strobe_synthetic", "100\n", 30000);
    expect_samples(100);
    stop_clean(pid, dir, "d");
    expect_one_outage(dir, "unreachable", "delivered again");
}

/* The backend of the store's connection stops answering (SIGSTOP, while
 * idle, so it holds no batch): after `timeout` the store gives up on it,
 * logs one line, reconnects and delivers; every sample exactly once. */
STROBE_TEST(server_hangs)
{
    pg_init();
    const char *dir = strobe_test_tmpdir("pg_server_hangs");
    pid_t pid = start_sampling(dir, 60, "batch_age: 100ms, timeout: 1s, retry_min: 50ms, retry_max: 500ms");
    pg_wait("SELECT count(*) > 0 FROM strobe_synthetic", "t\n", 20000);
    char *out = pg_query("SELECT pid FROM pg_stat_activity WHERE application_name = 'strobed'");
    pid_t backend = atoi(out);
    free(out);
    CHECK(backend > 0);
    for (int tries = 0;; tries++) {
        CHECK(tries < 100 && kill(backend, SIGSTOP) == 0);
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT state FROM pg_stat_activity WHERE pid = %d", (int)backend);
        out = pg_query(sql);
        int idle = strcmp(out, "idle\n") == 0;
        free(out);
        if (idle)
            break;
        kill(backend, SIGCONT);
        sleep_ms(20);
    }
    pg_wait("SELECT count(*) FROM strobe_synthetic", "60\n", 30000);
    kill(backend, SIGCONT);
    expect_samples(60);
    stop_clean(pid, dir, "d");
    expect_one_outage(dir, "unreachable (no answer within 1 s)", "delivered again");
}

/* strobed stops while the server is down: its batches stay queued on
 * disk and the next strobed (same queue_dir) delivers them first. */
STROBE_TEST(queued_across_strobed_restart)
{
    pg_init();
    pg_stop();
    const char *dir = strobe_test_tmpdir("pg_queued_across_restart");
    const char *keys = "batch_age: 100ms, timeout: 1s, retry_min: 50ms, retry_max: 200ms";
    char log[4200];
    snprintf(log, sizeof log, "%s/d.log", dir);
    pid_t pid = start_sampling(dir, 10, keys);
    sleep_ms(1500);
    stop_clean(pid, dir, "d");
    CHECK(count_lines(log, "0 batch(es) delivered, 0 refused, 0 dropped at the queue bound") == 1);
    pg_start();
    pid = start_sampling(dir, 10, keys);
    /* both runs' samples 1..10, each once per run */
    pg_wait("SELECT count(*) FROM strobe_synthetic", "20\n", 20000);
    pg_expect("SELECT m0, count(*), count(DISTINCT time) FROM strobe_synthetic GROUP BY m0 ORDER BY m0",
              "1|2|2\n2|2|2\n3|2|2\n4|2|2\n5|2|2\n6|2|2\n7|2|2\n8|2|2\n9|2|2\n10|2|2\n");
    stop_clean(pid, dir, "d");
    CHECK(count_lines(log, "queued in") == 1);
}

/* A table whose column has another type, then a role without INSERT:
 * each batch is refused, dropped, counted and logged with the server's
 * message; strobed goes on. */
STROBE_TEST(refused)
{
    pg_init();
    pg_exec("CREATE TABLE strobe_synthetic (\"time\" timestamptz, producer text, instance text, "
            "component_id numeric, m0 date)");
    pg_exec("CREATE ROLE reader LOGIN");
    const char *dir = strobe_test_tmpdir("pg_refused");
    char yaml[16384], log[4200];
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: node1, listen: '127.0.0.1:%d'}\n"
             "samplers:\n"
             "  - {plugin: synthetic, metrics: 1, samples: 5, interval: 50ms}\n"
             "  - {plugin: synthetic, name: other, schema: other, metrics: 1, samples: 5, interval: 50ms}\n"
             "stores:\n"
             "  - {plugin: postgres, name: badtype, conninfo: '%s', queue_dir: %s/q1, schemas: [synthetic],\n"
             "     batch_values: 1}\n"
             "  - {plugin: postgres, name: noinsert, conninfo: '%s user=reader', queue_dir: %s/q2,\n"
             "     schemas: [other], batch_values: 1}\n",
             test_port(0), pg.conninfo, dir, pg.conninfo, dir);
    snprintf(log, sizeof log, "%s/d.log", dir);
    pg_exec("CREATE TABLE strobe_other (\"time\" timestamptz NOT NULL, producer text NOT NULL, "
            "instance text NOT NULL, component_id numeric(20,0), m0 numeric(20,0))");
    pid_t pid = start_daemon(dir, "d", yaml);
    sleep_ms(1500);
    stop_clean(pid, dir, "d");
    pg_expect("SELECT (SELECT count(*) FROM strobe_synthetic), (SELECT count(*) FROM strobe_other)", "0|0\n");
    int type = count_lines(log, "invalid input syntax for type date: \"1\", SQLSTATE 22007");
    int perm = count_lines(log, "permission denied for table strobe_other, SQLSTATE 42501");
    /* counted: the store's summary at the stop */
    int summary =
        count_lines(log, "batch(es) delivered, 5 refused, 0 dropped at the queue bound, 0 left queued");
    if (type != 1 || perm != 1 || summary != 2) {
        char *text;
        strobe_test_sh(&text, "grep -v DEBUG '%s' | tail -n 30", log);
        STROBE_FAIL("expected one line for each refusal in %s:\n%s", log, text);
    }
}

/* A site's own table, partitioned by time as docs/plugins.md suggests,
 * with the columns of its DDL, and a role that may only INSERT into it:
 * the store copies into it and never needs more. */
STROBE_TEST(site_table_insert_only)
{
    pg_init();
    pg_exec(
        "CREATE TABLE \"strobe_synthetic\" (\"time\" timestamptz NOT NULL, \"producer\" text NOT NULL, "
        "\"instance\" text NOT NULL, \"component_id\" numeric(20,0), \"m0\" numeric(20,0), "
        "\"m1\" numeric(20,0), \"m2\" numeric(20,0)) PARTITION BY RANGE (\"time\");"
        "CREATE TABLE strobe_synthetic_old PARTITION OF strobe_synthetic FOR VALUES FROM (MINVALUE) TO "
        "('2020-01-01');"
        "CREATE TABLE strobe_synthetic_new PARTITION OF strobe_synthetic FOR VALUES FROM ('2020-01-01') TO "
        "(MAXVALUE);"
        "CREATE INDEX ON strobe_synthetic (\"instance\", \"time\");"
        "CREATE ROLE inserter LOGIN; GRANT INSERT ON strobe_synthetic TO inserter");
    const char *dir = strobe_test_tmpdir("pg_site_table");
    pid_t pid = start_sampling_as(dir, " user=inserter", 10, "batch_age: 100ms");
    pg_wait("SELECT count(*) FROM strobe_synthetic_new", "10\n", 20000);
    expect_samples(10);
    stop_clean(pid, dir, "d");
    pg_expect("SELECT count(*) FROM strobe_synthetic_old", "0\n");
}

/* A role that must give a password (scram-sha-256), which comes from the
 * passfile named in conninfo, never from the YAML, as docs/plugins.md
 * tells a site to do; the log names the server without it. */
STROBE_TEST(passfile)
{
    pg_init();
    pg_exec("CREATE ROLE writer LOGIN PASSWORD 'pw-in-file'; GRANT CREATE ON SCHEMA public TO writer");
    char *hba = pg_query("SHOW hba_file");
    hba[strcspn(hba, "\n")] = 0;
    /* rewritten in place: the file stays the server's (owner, mode) */
    CHECK(strobe_test_sh(
              NULL, "{ echo 'local all writer scram-sha-256'; cat '%s'; } >'%s.new' && cat '%s.new' >'%s'",
              hba, hba, hba, hba) == 0);
    free(hba);
    pg_exec("SELECT pg_reload_conf()");
    char nopass[256];
    snprintf(nopass, sizeof nopass, "%s user=writer passfile=/nonexistent", pg.conninfo);
    for (int ms = 0;; ms += 20) { /* the reload is asynchronous */
        PGconn *c = PQconnectdb(nopass);
        int in = PQstatus(c) == CONNECTION_OK;
        PQfinish(c);
        if (!in)
            break;
        CHECK(ms < 5000);
        sleep_ms(20);
    }
    const char *dir = strobe_test_tmpdir("pg_passfile");
    char pass[4200];
    snprintf(pass, sizeof pass, "%s/pgpass", dir);
    write_private(pass, "*:*:*:writer:pw-in-file\n");
    char yaml[16384];
    snprintf(
        yaml, sizeof yaml,
        "daemon: {producer: node1, listen: '127.0.0.1:%d'}\n"
        "samplers:\n  - {plugin: synthetic, metrics: 3, samples: 10, interval: 50ms}\n"
        "stores:\n"
        "  - {plugin: postgres, conninfo: '%s user=writer passfile=%s', queue_dir: %s/q, batch_age: 100ms}\n"
        "  - {plugin: postgres, name: nopass, conninfo: '%s user=writer passfile=/nonexistent', queue_dir: "
        "%s/q2,\n"
        "     table_prefix: other_, retry_min: 1s, timeout: 1s}\n",
        test_port(0), pg.conninfo, pass, dir, pg.conninfo, dir);
    pid_t pid = start_daemon(dir, "d", yaml);
    pg_wait("SELECT count(*) FROM strobe_synthetic", "10\n", 20000);
    expect_samples(10);
    pg_expect("SELECT tableowner FROM pg_tables WHERE tablename = 'strobe_synthetic'", "writer\n");
    stop_clean(pid, dir, "d");
    char log[4200];
    snprintf(log, sizeof log, "%s/d.log", dir);
    CHECK(count_lines(log, "nopass: host=") == 2); /* unreachable, then the totals at the stop */
    CHECK(count_lines(log, "unreachable (connection to server on socket") == 1);
    CHECK(count_lines(log, "pw-in-file") == 0);
}

STROBE_TEST(config_errors)
{
    CHECK(strstr(inproc_refusal("stores:\n  - {plugin: postgres}\n", "t.yaml"), "`conninfo`") != NULL);
    const char *e = inproc_refusal("stores:\n  - {plugin: postgres, conninfo: 'host'}\n", "t.yaml");
    CHECK(strstr(e, "t.yaml:2") && strstr(e, "conninfo") && strstr(e, "host"));
    e = inproc_refusal("stores:\n  - {plugin: postgres, conninfo: 'dbname=x', timeout: 0s}\n", "t.yaml");
    CHECK(strstr(e, "timeout") != NULL);
}

STROBE_TEST_MAIN(STROBE_CASE(all_types), STROBE_CASE(strobed_samples), STROBE_CASE(server_restart),
                 STROBE_CASE(server_hangs), STROBE_CASE(queued_across_strobed_restart), STROBE_CASE(refused),
                 STROBE_CASE(site_table_insert_only), STROBE_CASE(passfile), STROBE_CASE(config_errors))
