/* SPDX-License-Identifier: MIT */
/*
 * Test helpers: a real InfluxDB 1.x server (Debian package influxdb) in a
 * temporary directory, on loopback ports the test claimed, killed when the
 * test process ends by any path; writes and InfluxQL queries through the
 * curl tool, answers as InfluxDB's JSON text.
 */
#ifndef STROBE_TESTS_PLUGINS_INFLUXD_H
#define STROBE_TESTS_PLUGINS_INFLUXD_H

#include "strobed/daemons.h"

#define INFLUXD "/usr/bin/influxd"

struct influxd {
    char dir[4096];
    int port;
    pid_t pid;
    int auth;         /* set before influxd_start: [http] auth-enabled */
    const char *user; /* "name:password" the test's own requests authenticate with */
};

/* Starts influxd in <dir>/influxd (data kept across starts) with its HTTP
 * API on `port` and its RPC (backup) service on `rpc_port`, and waits for
 * /ping; everything else that would listen or phone home is off. */
static inline void influxd_start(struct influxd *s, const char *dir, int port, int rpc_port)
{
    if (access(INFLUXD, X_OK) != 0)
        STROBE_FAIL(INFLUXD " not found: install the Debian package influxdb");
    snprintf(s->dir, sizeof s->dir, "%s/influxd", dir);
    s->port = port;
    char conf[4200], log[4200];
    snprintf(conf, sizeof conf, "%s/influxd.conf", s->dir);
    snprintf(log, sizeof log, "%s/influxd.log", s->dir);
    strobe_test_sh(NULL, "mkdir -p '%s'", s->dir);
    FILE *f = fopen(conf, "w");
    CHECK(f != NULL);
    fprintf(f,
            "reporting-disabled = true\n"
            "bind-address = \"127.0.0.1:%d\"\n"
            "[meta]\n  dir = \"%s/meta\"\n  logging-enabled = false\n"
            "[data]\n  dir = \"%s/data\"\n  wal-dir = \"%s/wal\"\n  query-log-enabled = false\n"
            "[monitor]\n  store-enabled = false\n"
            "[subscriber]\n  enabled = false\n"
            "[continuous_queries]\n  enabled = false\n"
            "[http]\n  bind-address = \"127.0.0.1:%d\"\n  log-enabled = false\n  pprof-enabled = false\n"
            "  auth-enabled = %s\n"
            "[logging]\n  level = \"warn\"\n  suppress-logo = true\n",
            rpc_port, s->dir, s->dir, s->dir, port, s->auth ? "true" : "false");
    fclose(f);
    s->pid = fork();
    CHECK(s->pid >= 0);
    if (s->pid == 0) {
        FILE *lf = freopen(log, "a", stderr);
        lf = freopen(log, "a", stdout);
        (void)lf;
        execl(INFLUXD, "influxd", "-config", conf, (char *)NULL);
        _exit(127);
    }
    remember_child(s->pid);
    for (int ms = 0; ms < 30000; ms += 50) {
        if (strobe_test_sh(NULL, "curl -sf -o /dev/null http://127.0.0.1:%d/ping", port) == 0)
            return;
        int st;
        if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
            char *out;
            strobe_test_sh(&out, "tail -n 20 '%s'", log);
            STROBE_FAIL("influxd ended at start (status 0x%x):\n%s", st, out);
        }
        sleep_ms(50);
    }
    STROBE_FAIL("influxd did not answer /ping on port %d within 30 s", port);
}

static inline void influxd_stop(struct influxd *s)
{
    if (s->pid > 0)
        stop_daemon(s->pid, SIGKILL);
    s->pid = 0;
}

/* The answer of InfluxQL statement q (database db, timestamps in ns);
 * freed by the caller. */
static inline char *influxd_query(const struct influxd *s, const char *db, const char *q)
{
    char qf[4200];
    snprintf(qf, sizeof qf, "%s/q.txt", s->dir);
    write_private(qf, q);
    char *out;
    if (strobe_test_sh(
            &out, "curl -sS %s%s -XPOST 'http://127.0.0.1:%d/query?db=%s&epoch=ns' --data-urlencode 'q@%s'",
            s->user ? "-u " : "", s->user ? s->user : "", s->port, db, qf) != 0)
        STROBE_FAIL("query %s: %s", q, out);
    size_t n = strlen(out);
    while (n && out[n - 1] == '\n')
        out[--n] = 0;
    return out;
}

static inline void influxd_check(const struct influxd *s, const char *db, const char *q, const char *want)
{
    char *got = influxd_query(s, db, q);
    if (strcmp(got, want) != 0)
        STROBE_FAIL("%s:\n--- got\n%s\n--- expected\n%s", q, got, want);
    free(got);
}

/* Writes line-protocol text as the store would (precision ns); returns
 * InfluxDB's answer: the HTTP status, a space and the body. */
static inline char *influxd_write(const struct influxd *s, const char *db, const char *lines)
{
    char wf[4200];
    snprintf(wf, sizeof wf, "%s/w.txt", s->dir);
    write_private(wf, lines);
    char *out;
    strobe_test_sh(&out,
                   "curl -sS -w '%%{http_code} ' -XPOST 'http://127.0.0.1:%d/write?db=%s&precision=ns' "
                   "--data-binary '@%s'",
                   s->port, db, wf);
    return out;
}

#endif
