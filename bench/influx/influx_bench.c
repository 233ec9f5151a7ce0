/* SPDX-License-Identifier: MIT */
/*
 * The influx store's benchmark (bench/influx/run.sh, docs/performance.md,
 * "InfluxDB store"). Sets of u64 metrics updated round after round, each
 * round one second later, so that every point is distinct:
 *   encode SETS METRICS ROUNDS
 *       the line-protocol encoder alone (influx_lp.c) into a buffer that is
 *       emptied at each batch of 10,000 values, and in the same run the
 *       anchor: the same lines written with one snprintf per value (a
 *       naive encoder without escaping); prints the CPU ns of both, the
 *       bytes, and the bytes after zlib level 1 (what `gzip: true` sends,
 *       but for the gzip header and trailer).
 *   store URL DB QUEUE_DIR GZIP SETS METRICS ROUNDS
 *       an in-process daemon with an influx store (batch_values 10000)
 *       whose sets the program updates under the daemon's lock, as a
 *       sampler would; after the last round a flush, then it waits until
 *       the queue directory holds no batch (everything answered 2xx).
 *       Prints the values, the wall time and this process's CPU time
 *       (the daemon thread encoding and queueing, and the sender thread
 *       with libcurl).
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "plugins/influx_lp.h"
#include "strobed/config.h"
#include "strobed/daemon.h"

#define SEC 1000000000ull

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static strobe_set **make_sets(unsigned nsets, unsigned nmetrics)
{
    strobe_schema *sc;
    if (strobe_schema_new("bench", &sc) < 0)
        exit(1);
    for (unsigned i = 0; i < nmetrics; i++) {
        char name[32];
        snprintf(name, sizeof name, "metric_%u", i);
        strobe_schema_add(sc, name, NULL, STROBE_MT_U64, 1, 0);
    }
    strobe_set **v = calloc(nsets, sizeof *v);
    for (unsigned s = 0; s < nsets; s++) {
        char inst[64];
        snprintf(inst, sizeof inst, "node%04u/bench", s);
        if (strobe_set_new(sc, "bench", inst, &v[s]) < 0)
            exit(1);
    }
    strobe_schema_free(sc);
    return v;
}

static void fill(strobe_set *set, unsigned nmetrics, uint64_t round, unsigned s)
{
    strobe_set_begin(set);
    for (unsigned i = 0; i < nmetrics; i++)
        strobe_set_u64(set, i, 0, round * 1000003u + s * 131u + i * 7919u);
    strobe_set_end_at(set, 1700000000 * SEC + round * SEC + s, 0);
}

/* The anchor: one snprintf per value, no escaping. */
static void naive(struct strobe__wr *w, const strobe_set *set)
{
    char tmp[320];
    int n = snprintf(tmp, sizeof tmp, "%s,instance=%s,producer=%s ", strobe_set_schema_name(set),
                     strobe_set_instance(set), strobe_set_producer(set));
    strobe__wr_bytes(w, tmp, (size_t)n);
    for (uint32_t i = 0; i < strobe_set_card(set); i++) {
        n = snprintf(tmp, sizeof tmp, "%s%s=%" PRIu64 "i", i ? "," : "", strobe_set_metric_name(set, i),
                     strobe_set_get_u64(set, i, 0));
        strobe__wr_bytes(w, tmp, (size_t)n);
    }
    n = snprintf(tmp, sizeof tmp, " %" PRIu64 "\n", strobe_set_timestamp(set));
    strobe__wr_bytes(w, tmp, (size_t)n);
}

static int bench_encode(unsigned nsets, unsigned nmetrics, unsigned rounds)
{
    strobe_set **sets = make_sets(nsets, nmetrics);
    struct strobe__wr w = {0};
    struct strobe__influx_count n = {0};
    uint64_t enc = 0, nai = 0, bytes = 0, zbytes = 0, values = 0;
    uLongf zcap = 0;
    unsigned char *z = NULL;
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned s = 0; s < nsets; s++)
            fill(sets[s], nmetrics, r, s);
        for (int pass = 0; pass < 2; pass++) {
            uint64_t t0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), in_batch = 0;
            for (unsigned s = 0; s < nsets; s++) {
                if (pass == 0)
                    strobe__influx_encode(&w, sets[s], &n);
                else
                    naive(&w, sets[s]);
                if ((in_batch += nmetrics) >= 10000 || s == nsets - 1) {
                    if (pass == 0) {
                        uint64_t t1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
                        uLongf zlen = compressBound((uLong)w.len);
                        if (zlen > zcap && !(z = realloc(z, zcap = zlen)))
                            return 1;
                        if (compress2(z, &zlen, w.buf, (uLong)w.len, 1) != Z_OK)
                            return 1;
                        bytes += w.len;
                        zbytes += zlen;
                        t0 += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t1; /* not the encoder's */
                    }
                    w.len = 0;
                    in_batch = 0;
                }
            }
            *(pass == 0 ? &enc : &nai) += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
        }
        values += (uint64_t)nsets * nmetrics;
    }
    if (w.err || n.values != values)
        return 1;
    printf("encode values=%" PRIu64 " bytes=%" PRIu64 " zbytes=%" PRIu64 " encoder_ns=%" PRIu64
           " naive_ns=%" PRIu64 "\n",
           values, bytes, zbytes, enc, nai);
    free(z);
    strobe__wr_free(&w);
    for (unsigned s = 0; s < nsets; s++)
        strobe_set_free(sets[s]);
    free(sets);
    return 0;
}

static int queued(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, ".batch") != NULL;
    closedir(d);
    return n;
}

static int bench_store(const char *url, const char *db, const char *qdir, const char *gzip, unsigned nsets,
                       unsigned nmetrics, unsigned rounds)
{
    char yaml[2048], err[1024];
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: bench}\nstores:\n  - {plugin: influx, url: '%s', db: %s, queue_dir: '%s', "
             "gzip: %s, batch_values: 10000}\n",
             url, db, qdir, gzip);
    struct strobe__cfg *cfg;
    struct strobe__daemon *d;
    if (strobe__cfg_parse(yaml, strlen(yaml), "bench", &cfg, err, sizeof err) < 0 ||
        strobe__daemon_new(cfg, &d, err, sizeof err) < 0) {
        fprintf(stderr, "influx_bench: %s\n", err);
        return 1;
    }
    strobe_set **sets = make_sets(nsets, nmetrics);
    pthread_mutex_lock(&d->lock);
    for (unsigned s = 0; s < nsets; s++)
        strobe__daemon_set_add(d, sets[s], 0, NULL);
    pthread_mutex_unlock(&d->lock);
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    for (unsigned r = 0; r < rounds; r++) {
        pthread_mutex_lock(&d->lock);
        for (unsigned s = 0; s < nsets; s++) {
            fill(sets[s], nmetrics, r, s);
            strobe__daemon_set_updated(d, sets[s]);
        }
        pthread_mutex_unlock(&d->lock);
    }
    pthread_mutex_lock(&d->lock);
    strobe__daemon_flush_stores(d);
    pthread_mutex_unlock(&d->lock);
    /* every 20 ms: the polling (a readdir) is in this process's CPU time */
    while (queued(qdir)) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    uint64_t wall = clock_ns(CLOCK_MONOTONIC) - w0, cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
    printf("store values=%" PRIu64 " wall_ns=%" PRIu64 " cpu_ns=%" PRIu64 "\n",
           (uint64_t)nsets * nmetrics * rounds, wall, cpu);
    strobe__daemon_free(d);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "encode"))
        return bench_encode((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
    if (argc == 9 && !strcmp(argv[1], "store"))
        return bench_store(argv[2], argv[3], argv[4], argv[5], (unsigned)atoi(argv[6]),
                           (unsigned)atoi(argv[7]), (unsigned)atoi(argv[8]));
    fprintf(stderr, "usage: influx_bench encode SETS METRICS ROUNDS\n"
                    "       influx_bench store URL DB QUEUE_DIR GZIP SETS METRICS ROUNDS\n");
    return 2;
}
