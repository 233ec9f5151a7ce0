/* SPDX-License-Identifier: MIT */
/*
 * strobed at scale (issue 13, part 3): tens of thousands of sets travel in
 * bounded UPDATE pages, and an aggregator holding 40,000 mirrored sets
 * stops at once. In-process daemons on loopback (the sets are added to
 * the producer's registry directly; no sampler is needed).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "daemons.h"
#include "inproc.h"
#include "strobed/config.h"
#include "strobed/daemon.h"
#include "transport/client.h"
#include "transport/proto.h"

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A producer daemon listening on port, publishing n sets "p/setI" of
 * `metrics` u64 metrics each. */
static struct strobe__daemon *producer_with_sets(int port, int n, int metrics)
{
    char text[256];
    snprintf(text, sizeof text, "daemon:\n  producer: p\n  listen: \"127.0.0.1:%d\"\n  log_level: error\n",
             port);
    struct strobe__daemon *d = inproc_daemon(text, "producer.yaml");
    strobe_schema *sc;
    CHECK_EQ_INT(strobe_schema_new("scale", &sc), 0);
    for (int i = 0; i < metrics; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%d", i);
        CHECK_EQ_INT(strobe_schema_add(sc, name, NULL, STROBE_MT_U64, 1, 0), i);
    }
    pthread_mutex_lock(&d->lock);
    for (int i = 0; i < n; i++) {
        char name[32];
        strobe_set *set;
        snprintf(name, sizeof name, "p/set%d", i);
        CHECK_EQ_INT(strobe_set_new(sc, "p", name, &set), 0);
        strobe_set_begin(set);
        strobe_set_u64(set, 0, 0, (uint64_t)i);
        strobe_set_end(set);
        CHECK_EQ_INT(strobe__daemon_set_add(d, set, STROBE_SET_PUBLISH, NULL), 0);
    }
    pthread_mutex_unlock(&d->lock);
    strobe_schema_free(sc);
    char err[256] = "";
    if (strobe__daemon_start(d, err, sizeof err) < 0)
        STROBE_FAIL("producer: %s", err);
    return d;
}

/* A first UPDATE of 3,000 sets of 100 metrics (about 12 MB) comes in
 * pages of STROBE_PROTO_UPDATE_PAGE bytes (the page is passed by at most
 * one set), each but the last flagged MORE, and after them the mirror
 * holds every set; `strobe ls` (strobe__client_update) gets them all in
 * one call. One reply of everything was as big as the producer's sets:
 * at 10,000 such sets, 40 MB that did not arrive within the timeout. */
STROBE_TEST(update_pages)
{
    enum { N = 3000, M = 100 };
    int port = test_port(0);
    struct strobe__daemon *d = producer_with_sets(port, N, M);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    struct strobe__client *c;
    CHECK_EQ_INT(strobe__client_open(addr, NULL, 10000, 0, &c), 0);
    struct strobe__mirror m = {0};
    size_t set_bytes = 0;
    int pages = 0, more = 1;
    while (more) {
        struct strobe__rd body;
        size_t had = m.n, bytes = m.bytes_in;
        CHECK_EQ_INT(strobe__client_update_fetch(c, &m, NULL, 0, 0, &body, &more), 0);
        CHECK_EQ_INT(strobe__client_update_apply(c, &m, &body, NULL, NULL), 0);
        pages++;
        CHECK(m.n > had);
        if (!set_bytes)
            set_bytes = (m.bytes_in - bytes) / (m.n - had);
        /* the page counts whole items: sections plus at most 64 bytes of
         * name, status, generations and lengths each */
        CHECK(m.bytes_in - bytes <= STROBE_PROTO_UPDATE_PAGE + set_bytes);
        if (more) /* a full page */
            CHECK(m.bytes_in - bytes + (m.n - had) * 64 >= STROBE_PROTO_UPDATE_PAGE);
        CHECK(pages <= N);
    }
    CHECK_EQ_U64(m.n, N);
    /* every set's bytes arrived once, in about the fewest pages */
    CHECK_EQ_U64(m.bytes_in, (size_t)N * set_bytes);
    CHECK(pages >= 3);
    CHECK(pages <= (int)(N * (set_bytes + 64) / STROBE_PROTO_UPDATE_PAGE) + 1);
    strobe__mirror_free(&m);

    CHECK_EQ_INT(strobe__client_update(c, &m, NULL, 0, 0, NULL, NULL), 0);
    CHECK_EQ_U64(m.n, N);
    strobe__mirror_free(&m);
    strobe__client_close(c);
    strobe__daemon_free(d);
}

/* An aggregator holding 40,000 mirrored sets stops within 2 s (systemd
 * gives 90 s; it took 111 s when each removed set rebuilt the registry's
 * index), also while a request to another producer, which accepted the
 * connection but never answers, waits for its 30 s timeout. Its log
 * shows the live producer connected and no failed round for it. */
STROBE_TEST(aggregator_stop_40k)
{
    enum { N = 40000 };
    const char *dir = strobe_test_tmpdir("aggregator_stop_40k");
    int port = test_port(0), mute = test_port(1);
    struct strobe__daemon *p = producer_with_sets(port, N, 1);
    /* accepts connections (the kernel does) and never says anything */
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)mute)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(ls >= 0 && bind(ls, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(ls, 8) == 0);

    char text[5200], log[4200];
    snprintf(log, sizeof log, "%s/agg.log", dir);
    snprintf(text, sizeof text,
             "daemon:\n  producer: agg\n  log_level: info\n  log_file: %s\n"
             "producers:\n"
             "  - address: \"127.0.0.1:%d\"\n    interval: 1s\n    timeout: 10s\n"
             "  - address: \"127.0.0.1:%d\"\n    interval: 1s\n    timeout: 30s\n",
             log, port, mute);
    struct strobe__daemon *a = inproc_daemon(text, "agg.yaml");
    char err[256] = "";
    if (strobe__daemon_start(a, err, sizeof err) < 0)
        STROBE_FAIL("aggregator: %s", err);
    size_t n = 0;
    for (double t0 = mono_s(); n < N && mono_s() - t0 < 90; sleep_ms(50)) {
        pthread_mutex_lock(&a->lock);
        n = a->nsets;
        pthread_mutex_unlock(&a->lock);
    }
    CHECK_EQ_U64(n, N);
    sleep_ms(2500); /* two more rounds, and the mute producer's request under way */

    double t0 = mono_s();
    strobe__daemon_free(a);
    double took = mono_s() - t0;
    printf("aggregator with %d sets stopped in %.3f s\n", N, took);
    CHECK(took < 2.0);

    char *out = NULL;
    strobe_test_sh(&out, "grep -c '127.0.0.1:%d:.*retrying' '%s' || true", port, log);
    CHECK_STR_EQ(out, "0\n");
    free(out);
    strobe_test_sh(&out, "grep -c 'producer 127.0.0.1:%d: connected' '%s' || true", port, log);
    CHECK_STR_EQ(out, "1\n");
    free(out);
    close(ls);
    strobe__daemon_free(p);
}

STROBE_TEST_MAIN(STROBE_CASE(update_pages), STROBE_CASE(aggregator_stop_40k))
