/* SPDX-License-Identifier: MIT */
/*
 * What the remote_write store costs per value (bench/monitor/remote_write.sh,
 * docs/performance.md "remote_write store"), measured in-process:
 *
 *   strobe-bench-remote-write SETS METRICS ROUNDS QDIR ROT URL_VM PID_VM URL_PROM PID_PROM
 *
 * An in-process daemon holds SETS sets of METRICS u64 metrics; each round
 * updates every set once (one transaction each, time stamps one second
 * apart, the last round now), ROUNDS rounds: SETS * METRICS * ROUNDS values.
 * Configurations, in the order rotated by ROT:
 *   nostore     the updates alone (writing the sets, the daemon's dispatch):
 *               the anchor the others are measured over;
 *   exposition  after each round the Prometheus text of /metrics for all
 *               sets (strobe__prometheus_text: what one scrape per round
 *               costs strobed, every value once), the pull path's cost;
 *   vm, prom    a remote_write store to the receiver at URL (VictoriaMetrics,
 *               Prometheus), default keys but batch_values from
 *               STROBE_BENCH_RW_BATCH (default 5000): the CPU time of the
 *               updating thread (the store's encoding, compression and
 *               queue writes run there) and of the whole process (the
 *               outbox's sender, libcurl, too) until the store was closed
 *               with every batch delivered, the wall time of that, and the
 *               receiver's CPU time (utime + stime of PID in /proc).
 * Each configuration prints one line:
 *   <name> values=N thread_ns=T process_ns=P wall_ns=W receiver_ns=R sent=S
 * STROBE_BENCH_RW_ONLY=<name> runs that configuration alone (for a profiler).
 * Instance names differ per configuration and ROT, so every run writes new
 * series and no sample is out of order for the receiver.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "strobe/metric_set.h"
#include "strobed/config.h"
#include "strobed/daemon.h"
#include "strobed/http.h"
#include "transport/proto.h"

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("strobe-bench-remote-write: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double clock_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* utime + stime of a process in ns; 0 without one */
static double proc_cpu_ns(long pid)
{
    if (pid <= 0)
        return 0;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(buf, sizeof buf, f))
        die("%s: %s", path, strerror(errno));
    fclose(f);
    const char *p = strrchr(buf, ')'); /* after the command name */
    unsigned long long ut, st;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        die("%s: unexpected format", path);
    return (double)(ut + st) * 1e9 / (double)sysconf(_SC_CLK_TCK);
}

struct config {
    const char *name;
    const char *url; /* NULL: no store */
    long pid;        /* the receiver */
    int exposition;
};

static void run(const struct config *c, long sets, long metrics, long rounds, const char *qdir, long rot)
{
    char yaml[2048];
    const char *batch = getenv("STROBE_BENCH_RW_BATCH");
    int n = snprintf(yaml, sizeof yaml, "daemon:\n  producer: bench\n  log_level: warn\n");
    if (c->url)
        snprintf(yaml + n, sizeof yaml - (size_t)n,
                 "stores:\n  - plugin: remote_write\n    name: %s\n    url: %s\n    queue_dir: %s/%s-%ld\n"
                 "    batch_values: %s\n    timeout: 120s\n",
                 c->name, c->url, qdir, c->name, rot, batch ? batch : "5000");
    char err[1024] = "";
    struct strobe__cfg *cfg;
    struct strobe__daemon *d;
    if (strobe__cfg_parse(yaml, strlen(yaml), "bench", &cfg, err, sizeof err) < 0 ||
        strobe__daemon_new(cfg, &d, err, sizeof err) < 0)
        die("daemon: %s", err);
    strobe_schema *sc;
    if (strobe_schema_new("bench", &sc) < 0)
        die("schema");
    for (long m = 0; m < metrics; m++) {
        char name[32];
        snprintf(name, sizeof name, "m%ld", m);
        if (strobe_schema_add(sc, name, NULL, STROBE_MT_U64, 1, 0) < 0)
            die("schema_add");
    }
    strobe_set **set = calloc((size_t)sets, sizeof *set);
    for (long i = 0; i < sets; i++) {
        char inst[128];
        snprintf(inst, sizeof inst, "bench/%s%ld/s%ld", c->name, rot, i);
        if (!set || strobe_set_new(sc, "bench", inst, &set[i]) < 0)
            die("set %s", inst);
        pthread_mutex_lock(&d->lock);
        int rc = strobe__daemon_set_add(d, set[i], STROBE_SET_PUBLISH, NULL);
        pthread_mutex_unlock(&d->lock);
        if (rc < 0)
            die("set %s: %d", inst, rc);
    }
    strobe_schema_free(sc);
    uint64_t now = (uint64_t)time(NULL) * 1000000000u;
    double r0 = proc_cpu_ns(c->pid), w0 = clock_of(CLOCK_MONOTONIC), p0 = clock_of(CLOCK_PROCESS_CPUTIME_ID),
           t0 = clock_of(CLOCK_THREAD_CPUTIME_ID);
    for (long r = 0; r < rounds; r++) {
        uint64_t ts = now - (uint64_t)(rounds - 1 - r) * 1000000000u;
        pthread_mutex_lock(&d->lock);
        for (long i = 0; i < sets; i++) {
            strobe_set_begin(set[i]);
            for (long m = 0; m < metrics; m++)
                strobe_set_u64(set[i], (uint32_t)m, 0, (uint64_t)(r * 1000 + m));
            strobe_set_end_at(set[i], ts, 0);
            strobe__daemon_set_updated(d, set[i]);
        }
        if (c->exposition) {
            struct strobe__wr w = {0};
            if (strobe__prometheus_text(d, &w) < 0)
                die("exposition");
            strobe__wr_free(&w);
        }
        pthread_mutex_unlock(&d->lock);
    }
    pthread_mutex_lock(&d->lock);
    strobe__daemon_flush_stores(d);
    pthread_mutex_unlock(&d->lock);
    double t1 = clock_of(CLOCK_THREAD_CPUTIME_ID);
    strobe__daemon_free(d); /* closes the store: waits until everything is delivered */
    double p1 = clock_of(CLOCK_PROCESS_CPUTIME_ID), w1 = clock_of(CLOCK_MONOTONIC), r1 = proc_cpu_ns(c->pid);
    free(set);
    printf("%s values=%ld thread_ns=%.0f process_ns=%.0f wall_ns=%.0f receiver_ns=%.0f\n", c->name,
           sets * metrics * rounds, t1 - t0, p1 - p0, w1 - w0, r1 - r0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 10)
        die("usage: strobe-bench-remote-write SETS METRICS ROUNDS QDIR ROT URL_VM PID_VM URL_PROM PID_PROM");
    long sets = atol(argv[1]), metrics = atol(argv[2]), rounds = atol(argv[3]), rot = atol(argv[5]);
    if (sets <= 0 || metrics <= 0 || rounds <= 0)
        die("SETS, METRICS and ROUNDS must be positive numbers");
    const struct config cfgs[] = {
        {"nostore", NULL, 0, 0},
        {"exposition", NULL, 0, 1},
        {"vm", argv[6], atol(argv[7]), 0},
        {"prom", argv[8], atol(argv[9]), 0},
    };
    size_t n = sizeof cfgs / sizeof cfgs[0];
    const char *only = getenv("STROBE_BENCH_RW_ONLY");
    for (size_t k = 0; k < n; k++) {
        const struct config *c = &cfgs[(k + (size_t)rot) % n];
        if (!only || !strcmp(only, c->name))
            run(c, sets, metrics, rounds, argv[4], rot);
    }
    return 0;
}
