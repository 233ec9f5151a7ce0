/* SPDX-License-Identifier: MIT */
/*
 * strobed as an operator runs it: the CSV store's rows reach the file
 * within a flush interval and survive a SIGKILL, SIGHUP reopens the log
 * file after logrotate renamed it, and `strobe ls --timeout` holds against
 * a daemon that does not answer.
 */
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "daemons.h"

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What a synthetic.csv holds: the rows of one set sampled from its first
 * sample on, so the n-th row has m0 = n. */
struct csv_rows {
    int n;          /* rows */
    double last_ts; /* time column of the last row */
    int ordered;    /* every row's m0 is its row number: none lost or twice */
    int whole;      /* the file ends with a line break: no torn row */
};

static struct csv_rows read_rows(const char *path)
{
    struct csv_rows r = { 0, 0, 1, 1 };
    FILE *f = fopen(path, "r");
    if (!f)
        return r;
    char line[4096];
    size_t len = 0;
    while (fgets(line, sizeof line, f)) {
        len = strlen(line);
        if (line[0] == '#')
            continue;
        double ts;
        long long m0;
        /* time,producer,instance,component_id,m0,... */
        if (sscanf(line, "%lf,n1,n1/synthetic,%*d,%lld,", &ts, &m0) != 2)
            STROBE_FAIL("%s: not a row of n1/synthetic: %s", path, line);
        r.n++;
        r.last_ts = ts;
        if (m0 != r.n)
            r.ordered = 0;
    }
    r.whole = len == 0 || line[len - 1] == '\n';
    fclose(f);
    return r;
}

/* Rows are on disk within 2 s of being sampled with the default flush
 * interval (1 s), and a SIGKILL loses at most the rows of the last
 * interval; with a long flush_interval nothing is written before the
 * stop, which writes everything. */
STROBE_TEST(csv_rows_reach_the_file)
{
    const char *dir = strobe_test_tmpdir("csv_flush");
    char y[2048], path[4200];
    snprintf(y, sizeof y,
             "daemon:\n  producer: n1\nsamplers:\n  - plugin: synthetic\n    interval: 100ms\n"
             "stores:\n  - plugin: csv\n    path: %s/csv\n",
             dir);
    snprintf(path, sizeof path, "%s/csv/synthetic.csv", dir);
    pid_t p = start_daemon(dir, "n1", y);
    struct csv_rows r = { 0 };
    for (int t = 0; t < 200 && r.n == 0; t++, sleep_ms(50))
        r = read_rows(path);
    double seen = wall_s();
    if (r.n == 0)
        STROBE_FAIL("no row in %s after 10 s", path);
    if (seen - r.last_ts > 2.0)
        STROBE_FAIL("the first row (sampled at %.3f) reached the file %.3f s later", r.last_ts, seen - r.last_ts);
    for (int t = 0; t < 30; t++, sleep_ms(100)) {
        double now = wall_s();
        r = read_rows(path);
        if (now - r.last_ts > 2.0)
            STROBE_FAIL("at %.3f the newest row on disk was sampled at %.3f", now, r.last_ts);
    }
    double killed = wall_s();
    stop_daemon(p, SIGKILL);
    r = read_rows(path);
    CHECK(r.ordered);
    CHECK(r.whole);
    /* the row sampled in (killed - 1.1 s, killed - 1 s] was older than
     * the flush interval; 0.2 s more for a late tick on a loaded machine */
    if (r.last_ts < killed - 1.3)
        STROBE_FAIL("killed at %.3f, the newest row on disk was sampled at %.3f", killed, r.last_ts);

    snprintf(y, sizeof y,
             "daemon:\n  producer: n1\nsamplers:\n  - plugin: synthetic\n    interval: 100ms\n"
             "stores:\n  - plugin: csv\n    path: %s/csv2\n    flush_interval: 1h\n    fsync: true\n",
             dir);
    snprintf(path, sizeof path, "%s/csv2/synthetic.csv", dir);
    p = start_daemon(dir, "n1b", y);
    sleep_ms(1500);
    CHECK_EQ_INT(read_rows(path).n, 0);
    stop_clean(p, dir, "n1b");
    r = read_rows(path);
    CHECK(r.n > 0);
    CHECK(r.ordered);
}

/* The data_gn of every "ack n1/synthetic data_gn N" line of a log file,
 * in file order, appended to v. */
static void read_acks(const char *path, long long *v, int *n, int cap)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        const char *a = strstr(line, "ack n1/synthetic data_gn ");
        if (a && *n < cap)
            v[(*n)++] = atoll(a + strlen("ack n1/synthetic data_gn "));
    }
    fclose(f);
}

/* logrotate's way: rename the log, SIGHUP. Later lines go to a new file
 * at the configured path, none lost or written twice. The petra store
 * logs every sample it acknowledges (at debug), with the set's data
 * generation, which grows by the same step at each sample: a stream of
 * numbered lines from the scheduler thread while the main thread swaps
 * the files. */
STROBE_TEST(sighup_reopens_log_file)
{
    const char *dir = strobe_test_tmpdir("logrotate");
    char y[4096], log[4200], old[4200];
    snprintf(log, sizeof log, "%s/strobed.log", dir);
    snprintf(y, sizeof y,
             "daemon:\n  producer: n1\n  log_file: %s\n  log_level: debug\n"
             "samplers:\n  - plugin: synthetic\n    interval: 10ms\n"
             "stores:\n  - plugin: petra\n    path: %s/n1.petra\n    size: 64M\n",
             log, dir);
    pid_t p = start_daemon(dir, "n1", y);
    for (int rot = 1; rot <= 3; rot++) {
        sleep_ms(400);
        snprintf(old, sizeof old, "%s.%d", log, rot);
        CHECK(rename(log, old) == 0);
        sleep_ms(50); /* lines written meanwhile go to the renamed file */
        CHECK(kill(p, SIGHUP) == 0);
    }
    sleep_ms(400);
    stop_clean(p, dir, "n1");
    static long long gn[100000];
    int n = 0, at[5];
    for (int rot = 1; rot <= 4; rot++) {
        if (rot <= 3)
            snprintf(old, sizeof old, "%s.%d", log, rot);
        else
            snprintf(old, sizeof old, "%s", log);
        read_acks(old, gn, &n, 100000);
        at[rot] = n;
        char *out;
        strobe_test_sh(&out, "grep -c 'log file %s reopened' '%s'", log, old);
        /* each new file starts with the line saying so */
        CHECK_STR_EQ(out, rot == 1 ? "0\n" : "1\n");
        free(out);
    }
    /* each file got acks (the daemon kept sampling through the rotations) */
    CHECK(at[1] > 0 && at[2] > at[1] && at[3] > at[2] && at[4] > at[3]);
    long long step = gn[1] - gn[0];
    CHECK(step > 0);
    for (int i = 1; i < n; i++)
        if (gn[i] - gn[i - 1] != step)
            STROBE_FAIL("ack %d: data_gn %lld after %lld (step %lld): a line lost or written twice", i, gn[i],
                        gn[i - 1], step);
}

/* Runs `strobe ls --timeout 1s` against port; checks its one line, its
 * exit status 1 and that it took at most 1 s + 0.5 s. Returns the time. */
static double ls_fails(int port, const char *line)
{
    char *out, want[256];
    double t0 = wall_s();
    /* under TSan a process that started threads sleeps 1 s at exit
     * (atexit_sleep_ms), which is not strobe's time */
    int st = strobe_test_sh(&out, "TSAN_OPTIONS=\"${TSAN_OPTIONS:+$TSAN_OPTIONS:}atexit_sleep_ms=0\" "
                            "'%s/strobe' ls --timeout 1s 127.0.0.1:%d", STROBE_BIN_DIR, port);
    double took = wall_s() - t0;
    snprintf(want, sizeof want, "strobe: ls: 127.0.0.1:%d: %s\n", port, line);
    CHECK_STR_EQ(out, want);
    CHECK_EQ_INT(st, 1);
    free(out);
    if (took > 1.5)
        STROBE_FAIL("strobe ls --timeout 1s to port %d took %.3f s", port, took);
    return took;
}

/* A listening socket that never accepts (the kernel completes the TCP
 * connection: what a daemon stopped with SIGSTOP looks like), a closed
 * port, and an nng server that takes requests and never replies. */
STROBE_TEST(ls_timeout_holds)
{
    int silent = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)test_port(0)) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(silent >= 0 && bind(silent, (struct sockaddr *)&a, sizeof a) == 0 && listen(silent, 8) == 0);
    CHECK(ls_fails(test_port(0), "no reply within 1s") >= 0.9);
    close(silent);

    ls_fails(test_port(1), "Connection refused");

    nng_socket rep;
    char url[64];
    snprintf(url, sizeof url, "tcp://127.0.0.1:%d", test_port(2));
    CHECK(nng_rep0_open(&rep) == 0 && nng_listen(rep, url, NULL, 0) == 0);
    CHECK(ls_fails(test_port(2), "no reply within 1s") >= 0.9);
    nng_close(rep);
}

STROBE_TEST_MAIN(STROBE_CASE(csv_rows_reach_the_file), STROBE_CASE(sighup_reopens_log_file),
                 STROBE_CASE(ls_timeout_holds))
