/* SPDX-License-Identifier: MIT */
/*
 * Values per second per core into PostgreSQL (bench/postgres/run.sh,
 * docs/performance.md "PostgreSQL store"):
 *
 *   strobe-bench-postgres store CONNINFO ROWS DIR
 *       The postgres store in an in-process daemon (queue in DIR): ROWS
 *       updates spread over 10 sets of one schema of 100 u64 metrics
 *       (numeric(20,0) columns, the costliest type the store writes), the
 *       daemon's flush after every 1000 updates; the time ends when the
 *       server has committed every row (the store's close drains its
 *       queue). The store's side is this process's CPU time (encoding on
 *       the daemon thread, the outbox's disk queue and libpq on the
 *       sender thread); the server's is the CPU time of the backend of the
 *       store's connection (found by application_name) from /proc.
 *   strobe-bench-postgres design CONNINFO ROWS ROT
 *       The table designs of docs/plugins.md with the same values, sent
 *       by one COPY per 50,000 values, without the store: "wide" (one row
 *       per update, a bigint column per metric; the store's design) and
 *       "narrow" (time, producer, instance, metric, value: a row per
 *       value), each with its index and in COPY's text and binary formats.
 *       ROT rotates their order.
 *
 * Every configuration checks the row count it made, so a broken path
 * cannot look fast. Output, one line per configuration:
 *   <mode> <config> values=<n> wall_s=<s> client_cpu_s=<s> server_cpu_s=<s>
 *   values_per_s=<wall rate> values_per_core_s=<values / (client + server CPU)>
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "strobed/config.h"
#include "strobed/daemon.h"

#define METRICS 100
#define SETS 10
#define BATCH_VALUES 50000

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("strobe-bench-postgres: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double now_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* utime + stime of a process, in seconds */
static double proc_cpu_s(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        die("%s: cannot read the server backend's CPU time", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    unsigned long long ut = 0, st = 0;
    /* fields 14 and 15 after the command in parentheses */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        die("%s: unexpected format", path);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static PGconn *connect_or_die(const char *conninfo)
{
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK)
        die("%s: %s", conninfo, PQerrorMessage(c));
    PQclear(PQexec(c, "SET client_min_messages TO warning")); /* no "does not exist, skipping" */
    return c;
}

static void exec_or_die(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
        die("%s: %s", sql, PQerrorMessage(c));
    PQclear(r);
}

static long long query_number(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        die("%s: %s", sql, PQerrorMessage(c));
    long long v = atoll(PQgetvalue(r, 0, 0));
    PQclear(r);
    return v;
}

static void report(const char *mode, const char *config, uint64_t values, double wall, double client,
                   double server)
{
    printf("%s %s values=%" PRIu64 " wall_s=%.3f client_cpu_s=%.3f server_cpu_s=%.3f values_per_s=%.0f "
           "values_per_core_s=%.0f\n",
           mode, config, values, wall, client, server, (double)values / wall,
           (double)values / (client + server));
    fflush(stdout);
}

/* ---- the store ----------------------------------------------------------------- */

static void bench_store(const char *conninfo, long rows, const char *dir)
{
    PGconn *c = connect_or_die(conninfo);
    exec_or_die(c, "DROP TABLE IF EXISTS strobe_bench");
    char yaml[4096], err[1024] = "";
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: node1}\n"
             "stores:\n  - {plugin: postgres, conninfo: '%s', queue_dir: '%s', timeout: 60s}\n",
             conninfo, dir);
    struct strobe__cfg *cfg;
    struct strobe__daemon *d;
    if (strobe__cfg_parse(yaml, strlen(yaml), "bench.yaml", &cfg, err, sizeof err) < 0 ||
        strobe__daemon_new(cfg, &d, err, sizeof err) < 0)
        die("daemon: %s", err);
    strobe_schema *sc;
    strobe_set *sets[SETS];
    if (strobe_schema_new("bench", &sc) < 0)
        die("schema");
    for (int i = 0; i < METRICS; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        if (strobe_schema_add(sc, name, NULL, STROBE_MT_U64, 1, STROBE_METRIC_COUNTER) < 0)
            die("schema");
    }
    for (int k = 0; k < SETS; k++) {
        char inst[32];
        snprintf(inst, sizeof inst, "node1/bench%d", k);
        if (strobe_set_new(sc, "node1", inst, &sets[k]) < 0 ||
            strobe__daemon_set_add(d, sets[k], STROBE_SET_PUBLISH, NULL) < 0)
            die("set");
    }
    strobe_schema_free(sc);
    /* the first batch creates the table: not part of the measurement */
    strobe_set_begin(sets[0]);
    strobe_set_end_at(sets[0], 1600000000000000000ull, 0);
    strobe__daemon_set_updated(d, sets[0]);
    strobe__daemon_flush_stores(d);
    while (query_number(c, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'strobed'") < 1 ||
           query_number(c, "SELECT count(*) FROM pg_tables WHERE tablename = 'strobe_bench'") < 1 ||
           query_number(c, "SELECT count(*) FROM strobe_bench") < 1)
        usleep(10000);
    int backend = (int)query_number(c, "SELECT pid FROM pg_stat_activity WHERE application_name = 'strobed'");

    double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID), s0 = proc_cpu_s(backend);
    uint64_t t0 = 1700000000000000000ull;
    for (long r = 0; r < rows; r++) {
        strobe_set *s = sets[r % SETS];
        strobe_set_begin(s);
        for (uint32_t i = 0; i < METRICS; i++)
            strobe_set_u64(s, i, 0, (uint64_t)r * 1000 + i);
        strobe_set_end_at(s, t0 + (uint64_t)(r / SETS) * 1000000000u, 0);
        strobe__daemon_set_updated(d, s);
        if (r % 1000 == 999)
            strobe__daemon_flush_stores(d);
    }
    strobe__daemon_flush_stores(d);
    strobe__daemon_free(d); /* drains the queue: every row committed */
    double wall = now_s(CLOCK_MONOTONIC) - w0, client = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    double server = proc_cpu_s(backend) - s0;
    long long got = query_number(c, "SELECT count(*) FROM strobe_bench WHERE time > '2021-01-01'");
    if (got != rows)
        die("store: %lld rows in strobe_bench, expected %ld", got, rows);
    report("store", "postgres", (uint64_t)rows * METRICS, wall, client, server);
    PQfinish(c);
}

/* ---- the designs ------------------------------------------------------------------ */

struct buf {
    char *p;
    size_t len, cap;
};

static char *room(struct buf *b, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        if (!(b->p = realloc(b->p, b->cap)))
            die("out of memory");
    }
    return b->p + b->len;
}

static void put(struct buf *b, const void *p, size_t n)
{
    memcpy(room(b, n), p, n);
    b->len += n;
}

static void put_be(struct buf *b, uint64_t v, int bytes)
{
    unsigned char tmp[8];
    for (int i = 0; i < bytes; i++)
        tmp[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    put(b, tmp, (size_t)bytes);
}

static void put_field(struct buf *b, const void *p, uint32_t n)
{
    put_be(b, n, 4);
    put(b, p, n);
}

/* binary COPY's timestamptz: microseconds since 2000-01-01 */
#define PG_EPOCH_US 946684800000000ull

static void put_text_time(struct buf *b, uint64_t us)
{
    time_t sec = (time_t)(us / 1000000u);
    struct tm tm;
    gmtime_r(&sec, &tm);
    char *p = room(b, 64);
    size_t n = strftime(p, 64, "%Y-%m-%d %H:%M:%S", &tm);
    n += (size_t)snprintf(p + n, 64 - n, ".%06" PRIu64 "+00", us % 1000000u);
    b->len += n;
}

struct design {
    const char *name;
    int narrow, binary;
};

/* One COPY of the rows [from, to) of the design into its table. */
static void copy_rows(PGconn *c, const struct design *ds, struct buf *b, long from, long to)
{
    b->len = 0;
    if (ds->binary) {
        put(b, "PGCOPY\n\377\r\n\0", 11);
        put_be(b, 0, 4);
        put_be(b, 0, 4);
    }
    for (long r = from; r < to; r++) {
        uint64_t us = 1700000000000000ull + (uint64_t)(r / SETS) * 1000000u;
        char inst[32], name[32];
        int il = snprintf(inst, sizeof inst, "node1/bench%ld", r % SETS);
        for (int i = 0; i < (ds->narrow ? METRICS : 1); i++) {
            uint64_t v = (uint64_t)r * 1000 + (uint64_t)i;
            int nl = snprintf(name, sizeof name, "strobe_bench_m%d_total", i);
            if (ds->binary) {
                put_be(b, ds->narrow ? 5 : 3 + METRICS, 2);
                put_be(b, 8, 4);
                put_be(b, us - PG_EPOCH_US, 8);
                put_field(b, "node1", 5);
                put_field(b, inst, (uint32_t)il);
                if (ds->narrow) {
                    double dv = (double)v;
                    uint64_t bits;
                    memcpy(&bits, &dv, 8);
                    put_field(b, name, (uint32_t)nl);
                    put_be(b, 8, 4);
                    put_be(b, bits, 8);
                } else {
                    for (int m = 0; m < METRICS; m++) {
                        put_be(b, 8, 4);
                        put_be(b, v + (uint64_t)m, 8);
                    }
                }
                continue;
            }
            put_text_time(b, us);
            put(b, "\tnode1\t", 7);
            put(b, inst, (size_t)il);
            if (ds->narrow) {
                b->len += (size_t)snprintf(room(b, 64), 64, "\t%s\t%" PRIu64 "\n", name, v);
                continue;
            }
            for (int m = 0; m < METRICS; m++)
                b->len += (size_t)snprintf(room(b, 32), 32, "\t%" PRIu64, v + (uint64_t)m);
            put(b, "\n", 1);
        }
    }
    if (ds->binary)
        put_be(b, 0xffff, 2);
    char sql[128];
    snprintf(sql, sizeof sql, "COPY %s FROM STDIN%s", ds->narrow ? "bench_narrow" : "bench_wide",
             ds->binary ? " (FORMAT binary)" : "");
    PGresult *res = PQexec(c, sql);
    if (PQresultStatus(res) != PGRES_COPY_IN)
        die("%s: %s", sql, PQerrorMessage(c));
    PQclear(res);
    if (PQputCopyData(c, b->p, (int)b->len) != 1 || PQputCopyEnd(c, NULL) != 1)
        die("COPY: %s", PQerrorMessage(c));
    while ((res = PQgetResult(c))) {
        if (PQresultStatus(res) != PGRES_COMMAND_OK)
            die("COPY: %s", PQerrorMessage(c));
        PQclear(res);
    }
}

static void bench_design(const char *conninfo, long rows, int rot)
{
    static const struct design ds[] = {
        {"wide-text", 0, 0}, {"wide-binary", 0, 1}, {"narrow-text", 1, 0}, {"narrow-binary", 1, 1}};
    enum { N = sizeof ds / sizeof *ds };
    PGconn *c = connect_or_die(conninfo);
    int backend = PQbackendPID(c);
    struct buf b = {0};
    char cols[4096];
    int n = 0;
    for (int m = 0; m < METRICS; m++)
        n += snprintf(cols + n, sizeof cols - (size_t)n, ", m%d bigint", m);
    char ddl[8192];
    snprintf(ddl, sizeof ddl,
             "DROP TABLE IF EXISTS bench_wide, bench_narrow;"
             "CREATE TABLE bench_wide (time timestamptz NOT NULL, producer text NOT NULL, instance text NOT "
             "NULL%s);"
             "CREATE INDEX ON bench_wide (instance, time);"
             "CREATE TABLE bench_narrow (time timestamptz NOT NULL, producer text NOT NULL, instance text "
             "NOT NULL, "
             "metric text NOT NULL, value double precision);"
             "CREATE INDEX ON bench_narrow (metric, instance, time)",
             cols);
    exec_or_die(c, ddl);
    for (int k = 0; k < N; k++) {
        const struct design *d = &ds[(k + rot) % N];
        exec_or_die(c, "TRUNCATE bench_wide, bench_narrow");
        long step = BATCH_VALUES / METRICS; /* rows of either design per COPY */
        double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID), s0 = proc_cpu_s(backend);
        for (long r = 0; r < rows; r += step)
            copy_rows(c, d, &b, r, r + step < rows ? r + step : rows);
        double wall = now_s(CLOCK_MONOTONIC) - w0, client = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        double server = proc_cpu_s(backend) - s0;
        long long got = query_number(c, d->narrow ? "SELECT count(*) FROM bench_narrow"
                                                  : "SELECT count(*) FROM bench_wide");
        if (got != rows * (d->narrow ? METRICS : 1))
            die("%s: %lld rows, expected %ld", d->name, got, rows * (d->narrow ? METRICS : 1));
        report("design", d->name, (uint64_t)rows * METRICS, wall, client, server);
    }
    exec_or_die(c, "DROP TABLE bench_wide, bench_narrow");
    free(b.p);
    PQfinish(c);
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "store") == 0)
        bench_store(argv[2], atol(argv[3]), argv[4]);
    else if (argc == 5 && strcmp(argv[1], "design") == 0)
        bench_design(argv[2], atol(argv[3]), atoi(argv[4]));
    else
        die("usage: strobe-bench-postgres store CONNINFO ROWS DIR | design CONNINFO ROWS ROT");
    return 0;
}
