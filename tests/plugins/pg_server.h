/* SPDX-License-Identifier: MIT */
/*
 * Test helper: a PostgreSQL 15 server of the test's own, in a temporary
 * directory under /tmp (initdb'ed there, trust authentication, listening
 * only on a unix socket in that directory, so no port is shared with
 * anything), and SQL through libpq. As root it runs as `nobody`, since the
 * server refuses to run as root. The server is killed and the directory
 * removed when the test process exits by any path (a failed CHECK too;
 * a SIGKILLed test takes the server with it, not the directory).
 * A missing server fails the test naming the Debian package.
 */
#ifndef STROBE_TESTS_PLUGINS_PG_SERVER_H
#define STROBE_TESTS_PLUGINS_PG_SERVER_H

#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#define PG_BIN "/usr/lib/postgresql/15/bin"
#define PG_NOBODY 65534

static struct {
    char dir[64];       /* the socket directory; data in <dir>/data */
    char conninfo[160]; /* superuser `postgres`, database `postgres` */
    pid_t pid;          /* postmaster, 0 when stopped */
} pg;

static void pg_cleanup(void)
{
    if (pg.pid > 0 && kill(pg.pid, SIGQUIT) == 0) /* immediate shutdown */
        waitpid(pg.pid, NULL, 0);
    pg.pid = 0;
    if (pg.dir[0])
        strobe_test_sh(NULL, "rm -rf '%s'", pg.dir);
}

/* Runs a PostgreSQL program (as nobody when root), its output appended
 * to <dir>/server.log; returns its pid. */
static pid_t pg_spawn(const char *const *argv)
{
    char log[128];
    snprintf(log, sizeof log, "%s/server.log", pg.dir);
    pid_t parent = getpid(), pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(PG_NOBODY) < 0 || setuid(PG_NOBODY) < 0))
            _exit(126);
        /* a test killed outright (its timeout) runs no atexit handler:
         * the server then shuts down when the test process is gone (set
         * after setuid, which clears it) */
        if (prctl(PR_SET_PDEATHSIG, SIGQUIT) < 0 || getppid() != parent)
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static void pg_fail_log(const char *what)
{
    char *log;
    strobe_test_sh(&log, "tail -n 20 '%s/server.log'", pg.dir);
    STROBE_FAIL("%s; server.log:\n%s", what, log);
}

/* Starts the server on the data directory made by pg_init and waits
 * until it accepts connections (at most 30 s). */
static void pg_start(void)
{
    char data[96];
    snprintf(data, sizeof data, "%s/data", pg.dir);
    const char *const argv[] = {PG_BIN "/postgres",  "-D", data,        "-k", pg.dir, "-p", "5432", "-c",
                                "listen_addresses=", "-c", "fsync=off", NULL};
    pg.pid = pg_spawn(argv);
    for (int ms = 0; ms < 30000; ms += 50) {
        if (PQping(pg.conninfo) == PQPING_OK)
            return;
        if (waitpid(pg.pid, NULL, WNOHANG) == pg.pid) {
            pg.pid = 0;
            pg_fail_log("postgres exited at start");
        }
        struct timespec ts = {0, 50000000L};
        nanosleep(&ts, NULL);
    }
    pg_fail_log("postgres does not accept connections after 30 s");
}

/* Stops the server the way `pg_ctl stop -m fast` does (SIGINT: sessions
 * are cut, the server shuts down cleanly) and waits for it. */
static void pg_stop(void)
{
    CHECK(pg.pid > 0 && kill(pg.pid, SIGINT) == 0);
    CHECK(waitpid(pg.pid, NULL, 0) == pg.pid);
    pg.pid = 0;
}

/* A fresh cluster in a new temporary directory, started. */
static void pg_init(void)
{
    if (access(PG_BIN "/postgres", X_OK) != 0 || access(PG_BIN "/initdb", X_OK) != 0)
        STROBE_FAIL("no PostgreSQL 15 server in " PG_BIN " (Debian package postgresql-15)");
    snprintf(pg.dir, sizeof pg.dir, "/tmp/strobe-pg-XXXXXX");
    CHECK(mkdtemp(pg.dir) != NULL);
    atexit(pg_cleanup);
    if (geteuid() == 0)
        CHECK(chown(pg.dir, PG_NOBODY, PG_NOBODY) == 0);
    snprintf(pg.conninfo, sizeof pg.conninfo, "host=%s port=5432 user=postgres dbname=postgres", pg.dir);
    char data[96];
    snprintf(data, sizeof data, "%s/data", pg.dir);
    const char *const argv[] = {PG_BIN "/initdb", "-D", data,   "-U",         "postgres",  "-A",
                                "trust",          "-E", "UTF8", "--locale=C", "--no-sync", NULL};
    int st;
    CHECK(waitpid(pg_spawn(argv), &st, 0) > 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        pg_fail_log("initdb failed");
    pg_start();
}

/* The result of sql as text: rows on lines, columns separated by '|',
 * NULL as "NULL"; the caller frees it. An SQL error fails the test, or
 * with `lenient` is the result ("ERROR: ...", as pg_wait polls a table
 * that may not exist yet). */
static char *pg_result(const char *sql, int lenient)
{
    PGconn *c = PQconnectdb(pg.conninfo);
    if (PQstatus(c) != CONNECTION_OK)
        STROBE_FAIL("connect %s: %s", pg.conninfo, PQerrorMessage(c));
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    CHECK(out != NULL);
    out[0] = 0;
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        if (!lenient)
            STROBE_FAIL("%s: %s", sql, PQerrorMessage(c));
        snprintf(out, cap, "%s", PQerrorMessage(c));
    }
    for (int i = 0; i < PQntuples(r); i++)
        for (int j = 0; j < PQnfields(r); j++) {
            const char *v = PQgetisnull(r, i, j) ? "NULL" : PQgetvalue(r, i, j);
            while (n + strlen(v) + 2 >= cap)
                CHECK((out = realloc(out, cap *= 2)) != NULL);
            n += (size_t)sprintf(out + n, "%s%c", v, j + 1 < PQnfields(r) ? '|' : '\n');
        }
    PQclear(r);
    PQfinish(c);
    return out;
}

static char *pg_query(const char *sql)
{
    return pg_result(sql, 0);
}

static void pg_exec(const char *sql)
{
    free(pg_query(sql));
}

/* Polls sql until it gives want; fails after ms with what it gave last. */
static void pg_wait(const char *sql, const char *want, long ms)
{
    char *got = NULL;
    for (long t = 0; t <= ms; t += 50) {
        free(got);
        got = pg_result(sql, 1);
        if (strcmp(got, want) == 0) {
            free(got);
            return;
        }
        struct timespec ts = {0, 50000000L};
        nanosleep(&ts, NULL);
    }
    STROBE_FAIL("%s\n--- gave after %ld ms\n%s--- expected\n%s", sql, ms, got, want);
}

static void pg_expect(const char *sql, const char *want)
{
    char *got = pg_query(sql);
    if (strcmp(got, want) != 0)
        STROBE_FAIL("%s\n--- got\n%s--- expected\n%s", sql, got, want);
    free(got);
}

#endif
