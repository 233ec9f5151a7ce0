/* SPDX-License-Identifier: MIT */
/*
 * CPU cost of strobed's sampling path, measured in-process
 * (bench/monitor/run.sh, docs/performance.md "Live monitoring"):
 *
 *   strobe-bench-monitor sample meminfo|vmstat N ROT
 *       A daemon with only that sampler, strobe__daemon_sample_all() N
 *       times, against two anchors measured in the same process and run:
 *       "floor", N pread()s of the same /proc file (what the kernel costs
 *       to produce the text, the least any sampler can pay), and "naive",
 *       N fopen/fscanf/fclose parses of it (what a simple sampler costs).
 *   strobe-bench-monitor xform N ROT
 *       Three daemons, each with a synthetic sampler of 43 metrics (the
 *       size of meminfo): alone ("base"), with a `rate` transform on it
 *       ("rate"), and with rate -> window avg n=5 ("chain"). The added
 *       cost of a transform per set is the difference to base.
 *   strobe-bench-monitor store RATE DIR ROT
 *       The csv store's periodic flush at RATE rows per second: a synthetic
 *       sampler of 43 metrics alone ("nostore"), with a csv store in DIR
 *       that writes only when 64 KiB are buffered ("buffered", the store
 *       without a flush_interval), with the daemon's flush after every
 *       RATE rows, one second of data ("flush", flush_interval: 1s), and
 *       the same with `fsync: true` ("fsync"). 20 s of data (at most
 *       200000 rows) per configuration. The flush's cost per second is the
 *       difference to "buffered" times RATE; wall time is given too, since
 *       fsync waits for the disk without using CPU. Every row is checked
 *       to be in its file at the end.
 *
 *   strobe-bench-monitor mac N ROT
 *       What authenticating strobed's messages costs at 1 M values/s. A
 *       daemon with 100 synthetic samplers of 100 metrics is sampled, an
 *       aggregator's UPDATE request is answered from it in-process
 *       (strobe__server_answer) and the mirror brought up to date, then it
 *       is sampled again: the reply to the next UPDATE, the DATA sections
 *       of 10,000 new values, is the message. Configurations, N each: "serve"
 *       answers that request (building the reply: the anchor), "hmac"
 *       seals the reply as strobed does (strobe__session_seal,
 *       HMAC-SHA256 of OpenSSL's libcrypto truncated to 16 bytes),
 *       "gcm128" and "gcm256" encrypt and tag the same bytes with mbed
 *       TLS's AES-GCM: TLS between strobed processes would be nng's TLS
 *       transport, which is built on mbed TLS, so this is what its records
 *       of AES-128-GCM or AES-256-GCM cost at least (TLS also splits
 *       records and copies). The ratios line gives each cost at 1 M
 *       values/s as a share of a core, and the ratios between them. The
 *       seal and a GCM tag are checked once, so a broken path cannot look
 *       fast.
 *   strobe-bench-monitor scale INSTANCES ROUNDS
 *       A daemon with INSTANCES synthetic samplers of 100 metrics and one
 *       transform: the CPU time of one round of sampling them all (median
 *       of ROUNDS), per instance and as a share of a core at 1 s.
 *   strobe-bench-monitor setbytes METRICS INSTANCE
 *       The bytes (meta + data sections) of the set of a synthetic sampler
 *       of METRICS metrics named INSTANCE: run.sh's unit for the memory
 *       of a daemon that holds such sets.
 *
 * ROT rotates the order of the configurations so that none always runs
 * first (run.sh passes the repetition number). Each configuration is
 * warmed up with N/10 samples, then timed with CLOCK_PROCESS_CPUTIME_ID
 * (user + kernel time: reading /proc is mostly kernel time); the user /
 * system split comes from getrusage(), whose split is tick-sampled and so
 * only approximate. No daemon thread is started, so the process's CPU
 * time is the sampling path's. The samplers' results are checked against
 * the naive parse and the transforms' outputs against the synthetic
 * values, so a broken path cannot look fast.
 *
 * Output, one line per configuration:
 *   <mode> <config> us=<CPU us per sample> user_us=<...> sys_us=<...> wall_us=<...>
 * then one line of ratios computed within this run.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/gcm.h>

#include "strobed/config.h"
#include "strobed/daemon.h"
#include "strobed/server.h"
#include "transport/client.h"
#include "transport/proto.h"
#include "transport/session.h"

#define MAX_FILE (64 * 1024)
#define MAX_LINES 1024
#define XFORM_METRICS 43

struct cost {
    double us, user_us, sys_us, wall_us; /* per iteration */
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("strobe-bench-monitor: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double tv_us(struct timeval tv)
{
    return (double)tv.tv_sec * 1e6 + (double)tv.tv_usec;
}

/* ---- the configurations ---------------------------------------------------- */

struct config {
    const char *name;
    /* one iteration; returns 0 or a negative code */
    int (*step)(struct config *c);
    struct strobe__daemon *d; /* daemon configurations */
    const char *path;         /* anchors */
    int fd;
    char *buf;
    unsigned long long vals[MAX_LINES];
    size_t nvals;
    long flush_every, steps; /* store: flush the stores every flush_every steps */
    struct mac_bench *mac;   /* mac */
    mbedtls_gcm_context *gcm;
};

static int step_daemon(struct config *c)
{
    return strobe__daemon_sample_all(c->d, 0);
}

static int step_store(struct config *c)
{
    int rc = strobe__daemon_sample_all(c->d, 0);
    if (c->flush_every && ++c->steps % c->flush_every == 0) {
        pthread_mutex_lock(&c->d->lock);
        strobe__daemon_flush_stores(c->d);
        pthread_mutex_unlock(&c->d->lock);
    }
    return rc;
}

static int step_pread(struct config *c)
{
    ssize_t n = pread(c->fd, c->buf, MAX_FILE - 1, 0);
    if (n <= 0)
        return n < 0 ? -errno : -EIO;
    c->buf[n] = 0;
    return 0;
}

/* What a simple sampler does: open, parse "name value [unit]" lines with
 * fscanf, close. The names are read (a sampler needs them to place the
 * values) but not compared. */
static int step_naive(struct config *c)
{
    FILE *f = fopen(c->path, "r");
    if (!f)
        return -errno;
    char name[128];
    unsigned long long v;
    size_t n = 0;
    while (n < MAX_LINES && fscanf(f, "%127s %llu%*[^\n]", name, &v) == 2)
        c->vals[n++] = v;
    fclose(f);
    c->nvals = n;
    return 0;
}

static struct cost measure(struct config *c, long n)
{
    for (long i = 0; i < n / 10 + 1; i++)
        if (c->step(c) < 0)
            die("%s: warm-up failed", c->name);
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    double w0 = wall_ns(), t0 = cpu_ns();
    for (long i = 0; i < n; i++)
        if (c->step(c) < 0)
            die("%s: iteration %ld failed", c->name, i);
    double t1 = cpu_ns(), w1 = wall_ns();
    getrusage(RUSAGE_SELF, &r1);
    return (struct cost){
        .us = (t1 - t0) / 1e3 / (double)n,
        .wall_us = (w1 - w0) / 1e3 / (double)n,
        .user_us = (tv_us(r1.ru_utime) - tv_us(r0.ru_utime)) / (double)n,
        .sys_us = (tv_us(r1.ru_stime) - tv_us(r0.ru_stime)) / (double)n,
    };
}

static struct strobe__daemon *daemon_from(const char *yaml)
{
    char err[1024] = "";
    struct strobe__cfg *cfg;
    struct strobe__daemon *d;
    if (strobe__cfg_parse(yaml, strlen(yaml), "bench", &cfg, err, sizeof err) < 0)
        die("configuration: %s", err);
    if (strobe__daemon_new(cfg, &d, err, sizeof err) < 0)
        die("daemon: %s", err);
    return d;
}

/* A daemon with `instances` synthetic samplers of 100 metrics (sets
 * bench/s0, bench/s1, ...), then the configuration text `tail`. */
static struct strobe__daemon *synthetic_daemon(long instances, const char *tail)
{
    size_t cap = (size_t)instances * 128 + 512 + strlen(tail);
    char *yaml = malloc(cap);
    if (!yaml)
        die("out of memory");
    size_t n = (size_t)snprintf(yaml, cap, "daemon:\n  producer: bench\n  log_level: error\nsamplers:\n");
    for (long i = 0; i < instances; i++)
        n += (size_t)snprintf(yaml + n, cap - n,
                              "  - plugin: synthetic\n    name: s%ld\n    instance: bench/s%ld\n    metrics: 100\n", i,
                              i);
    snprintf(yaml + n, cap - n, "%s", tail);
    struct strobe__daemon *d = daemon_from(yaml);
    free(yaml);
    return d;
}

static strobe_set *find_set(struct strobe__daemon *d, const char *instance)
{
    pthread_mutex_lock(&d->lock);
    struct strobe__set_entry *e = strobe__daemon_set_find(d, instance);
    pthread_mutex_unlock(&d->lock);
    if (!e)
        die("no set %s", instance);
    return e->set;
}

/* Runs the configurations in the order rotated by rot and prints them. */
static void run_all(const char *mode, struct config *cfgs, size_t n, long iters, long rot, struct cost *out)
{
    for (size_t k = 0; k < n; k++) {
        size_t i = (k + (size_t)rot) % n;
        out[i] = measure(&cfgs[i], iters);
    }
    for (size_t i = 0; i < n; i++)
        printf("%s %s us=%.3f user_us=%.3f sys_us=%.3f wall_us=%.3f\n", mode, cfgs[i].name, out[i].us,
               out[i].user_us, out[i].sys_us, out[i].wall_us);
}

/* ---- sample: meminfo / vmstat ---------------------------------------------- */

static void bench_sample(const char *plugin, long iters, long rot)
{
    char path[64], yaml[256];
    snprintf(path, sizeof path, "/proc/%s", plugin);
    snprintf(yaml, sizeof yaml, "daemon:\n  producer: bench\n  log_level: error\nsamplers:\n  - plugin: %s\n",
             plugin);
    static char buf[MAX_FILE];
    struct config c[3] = {
        {.name = "floor", .step = step_pread, .path = path, .buf = buf},
        {.name = "naive", .step = step_naive, .path = path},
        {.name = "strobe", .step = step_daemon, .d = daemon_from(yaml)},
    };
    if ((c[0].fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        die("%s: %s", path, strerror(errno));
    struct cost r[3];
    run_all(plugin, c, 3, iters, rot, r);

    /* the daemon's set has a value per line the naive parse found (plus
     * component_id), and the first line agrees where it cannot change */
    char instance[64];
    snprintf(instance, sizeof instance, "bench/%s", plugin);
    strobe_set *s = find_set(c[2].d, instance);
    if (strobe_set_card(s) != c[1].nvals + 1)
        die("%s: %u metrics in the set, %zu lines parsed naively", plugin, strobe_set_card(s) - 1,
            c[1].nvals);
    if (strobe_set_data_gn(s) != (uint64_t)(iters + iters / 10 + 1))
        die("%s: %llu samples taken, expected %ld", plugin, (unsigned long long)strobe_set_data_gn(s),
            iters + iters / 10 + 1);
    if (strcmp(plugin, "meminfo") == 0 && strobe_set_get_u64(s, 1, 0) != c[1].vals[0])
        die("meminfo: MemTotal %llu in the set, %llu parsed naively",
            (unsigned long long)strobe_set_get_u64(s, 1, 0), c[1].vals[0]);
    printf("%s ratios metrics=%zu strobe/naive=%.3f strobe/floor=%.3f naive/floor=%.3f\n", plugin, c[1].nvals,
           r[2].us / r[1].us, r[2].us / r[0].us, r[1].us / r[0].us);
    close(c[0].fd);
    strobe__daemon_free(c[2].d);
}

/* ---- xform: synthetic, + rate, + rate -> window avg ------------------------ */

#define XFORM_SAMPLER                                                                                        \
    "daemon:\n  producer: bench\n  log_level: error\n"                                                       \
    "samplers:\n  - plugin: synthetic\n    metrics: 43\n"
#define XFORM_RATE "  - plugin: rate\n    input: bench/synthetic\n"
#define XFORM_WINDOW "  - plugin: window\n    input: bench/synthetic_rate\n    op: avg\n    n: 5\n"

static void bench_xform(long iters, long rot)
{
    struct config c[3] = {
        {.name = "base", .step = step_daemon, .d = daemon_from(XFORM_SAMPLER)},
        {.name = "rate", .step = step_daemon, .d = daemon_from(XFORM_SAMPLER "transforms:\n" XFORM_RATE)},
        {.name = "chain",
         .step = step_daemon,
         .d = daemon_from(XFORM_SAMPLER "transforms:\n" XFORM_RATE XFORM_WINDOW)},
    };
    struct cost r[3];
    run_all("xform", c, 3, iters, rot, r);

    /* synthetic metric i grows by i + 1 per sample, so every rate and
     * every window average of metric i is (i + 1) times metric 0's */
    strobe_set *outs[2] = {find_set(c[1].d, "bench/synthetic_rate"),
                           find_set(c[2].d, "bench/synthetic_rate_avg_5")};
    for (int k = 0; k < 2; k++) {
        strobe_set *o = outs[k];
        if (strobe_set_card(o) != XFORM_METRICS)
            die("%s: %u metrics, expected %d", strobe_set_instance(o), strobe_set_card(o), XFORM_METRICS);
        double m0 = strobe_set_get_d64(o, 0, 0);
        for (uint32_t i = 0; i < XFORM_METRICS; i++) {
            double v = strobe_set_get_d64(o, i, 0);
            if (!strobe_set_is_valid(o, i) || !(m0 > 0) || fabs(v / m0 - (double)(i + 1)) > 1e-6 * (i + 1))
                die("%s: metric %u = %g (valid %d), m0 = %g", strobe_set_instance(o), i, v,
                    strobe_set_is_valid(o, i), m0);
        }
    }
    printf("xform ratios rate-base_us=%.3f window-rate_us=%.3f chain-base_us=%.3f rate/base=%.3f "
           "chain/base=%.3f\n",
           r[1].us - r[0].us, r[2].us - r[1].us, r[2].us - r[0].us, r[1].us / r[0].us, r[2].us / r[0].us);
    for (int i = 0; i < 3; i++)
        strobe__daemon_free(c[i].d);
}

/* ---- mac: authenticating the messages ------------------------------------- */

#define MAC_SETS 100
#define MAC_METRICS 100 /* what synthetic_daemon gives each set */

struct mac_bench {
    struct strobe__server *srv;
    struct strobe__wr req;   /* the aggregator's UPDATE request */
    struct strobe__wr reply; /* the answer: the message to protect */
    size_t reply_len;        /* without a trailer */
    uint8_t key[STROBE_SESSION_KEY];
    uint8_t *out; /* GCM's ciphertext */
    uint8_t tag[16];
    uint64_t seq;
};

static int step_serve(struct config *c)
{
    struct mac_bench *m = c->mac;
    uint32_t wait_ms;
    struct strobe__seal seal;
    return strobe__server_answer(m->srv, 1, m->req.buf, m->req.len, &m->reply, &wait_ms, &seal);
}

static int step_hmac(struct config *c)
{
    struct mac_bench *m = c->mac;
    m->reply.len = m->reply_len;
    return strobe__session_seal(&m->reply, m->key, STROBE_SESSION_TO_CLIENT, ++m->seq);
}

static int step_gcm(struct config *c)
{
    struct mac_bench *m = c->mac;
    uint8_t iv[12] = { 0 };
    memcpy(iv + 4, &m->seq, 8); /* a fresh nonce per record, as TLS does */
    m->seq++;
    return mbedtls_gcm_crypt_and_tag(c->gcm, MBEDTLS_GCM_ENCRYPT, m->reply_len, iv, sizeof iv, NULL, 0,
                                     m->reply.buf, m->out, sizeof m->tag, m->tag) == 0
               ? 0
               : -EIO;
}

static void gcm_init(mbedtls_gcm_context *g, const uint8_t *key, unsigned bits)
{
    mbedtls_gcm_init(g);
    if (mbedtls_gcm_setkey(g, MBEDTLS_CIPHER_ID_AES, key, bits) != 0)
        die("mac: AES-%u-GCM key setup failed", bits);
}

static void bench_mac(long iters, long rot)
{
    struct strobe__daemon *d = synthetic_daemon(MAC_SETS, "");
    struct mac_bench m = { 0 };
    struct strobe__mirror mirror = { 0 };
    struct strobe__rd r;
    uint8_t type;
    uint16_t flags;
    if (strobe__server_new(d, &m.srv) < 0)
        die("out of memory");
    /* the first round brings every set in full, as to a new aggregator */
    strobe__daemon_sample_all(d, 1);
    strobe__msg_begin(&m.req, STROBE_MSG_UPDATE, STROBE_UPDATE_ALL);
    strobe__wr_u32(&m.req, 0);
    strobe__wr_u32(&m.req, 0);
    struct config serve = { .name = "serve", .step = step_serve, .mac = &m };
    if (strobe__msg_finish(&m.req) < 0 || step_serve(&serve) != 0 ||
        strobe__msg_open(&r, m.reply.buf, m.reply.len, &type, &flags) != 0 ||
        strobe__client_update_apply(NULL, &mirror, &r, NULL, NULL) != 0 || mirror.n != MAC_SETS)
        die("mac: the first UPDATE round failed");
    /* then the aggregator's steady state: it lists what it has, and new
     * samples come back as DATA */
    strobe__msg_begin(&m.req, STROBE_MSG_UPDATE, STROBE_UPDATE_ALL);
    strobe__wr_u32(&m.req, 0);
    strobe__wr_u32(&m.req, (uint32_t)mirror.n);
    for (size_t i = 0; i < mirror.n; i++) {
        strobe__wr_str(&m.req, strobe_set_instance(mirror.sets[i]));
        strobe__wr_u64(&m.req, strobe_set_meta_gn(mirror.sets[i]));
        strobe__wr_u64(&m.req, strobe_set_data_gn(mirror.sets[i]));
        strobe__wr_u64(&m.req, strobe_set_schema_sum(mirror.sets[i]));
    }
    strobe__daemon_sample_all(d, 2);
    if (strobe__msg_finish(&m.req) < 0 || step_serve(&serve) != 0)
        die("mac: the second UPDATE round failed");
    m.reply_len = m.reply.len;
    size_t items = 0;
    if (strobe__msg_open(&r, m.reply.buf, m.reply.len, &type, &flags) != 0 ||
        strobe__client_update_apply(NULL, &mirror, &r, NULL, NULL) != 0)
        die("mac: the DATA reply does not apply");
    memcpy(&items, m.reply.buf + STROBE_PROTO_HDR, 4);
    if (items != MAC_SETS || strobe_set_data_gn(mirror.sets[0]) != strobe_set_data_gn(find_set(d, "bench/s0")))
        die("mac: the DATA reply has %zu sets, expected %d", items, MAC_SETS);
    strobe__mirror_free(&mirror);
    for (size_t i = 0; i < sizeof m.key; i++)
        m.key[i] = (uint8_t)(i * 7 + 1);
    if (!(m.out = malloc(m.reply_len)))
        die("out of memory");

    mbedtls_gcm_context g128, g256;
    gcm_init(&g128, m.key, 128);
    gcm_init(&g256, m.key, 256);
    struct config c[4] = {
        serve,
        { .name = "hmac", .step = step_hmac, .mac = &m },
        { .name = "gcm128", .step = step_gcm, .mac = &m, .gcm = &g128 },
        { .name = "gcm256", .step = step_gcm, .mac = &m, .gcm = &g256 },
    };
    struct cost res[4];
    run_all("mac", c, 4, iters, rot, res);
    /* the last reply served is the message; its seal and a tag must check */
    uint64_t seq;
    size_t len;
    uint8_t iv[12] = { 0 }, *plain = malloc(m.reply_len);
    m.reply.len = m.reply_len;
    if (!plain || strobe__session_seal(&m.reply, m.key, STROBE_SESSION_TO_CLIENT, 42) != 0 ||
        strobe__session_open(m.key, STROBE_SESSION_TO_CLIENT, m.reply.buf, m.reply.len, &seq, &len) != 0 ||
        seq != 42 || len != m.reply_len || step_gcm(&c[2]) != 0)
        die("mac: the seal does not check");
    memcpy(iv + 4, &(uint64_t){ m.seq - 1 }, 8);
    if (mbedtls_gcm_auth_decrypt(&g128, m.reply_len, iv, sizeof iv, NULL, 0, m.tag, sizeof m.tag, m.out, plain) !=
            0 ||
        memcmp(plain, m.reply.buf, m.reply_len) != 0)
        die("mac: the GCM tag does not check");
    free(plain);
    /* messages per second at 1 M values/s, and each cost as a share of a core */
    double per_s = 1e6 / (MAC_SETS * MAC_METRICS);
    printf("mac ratios bytes=%zu values=%d bytes_per_value=%.2f serve_core_pct=%.3f hmac_core_pct=%.3f "
           "gcm128_core_pct=%.3f gcm256_core_pct=%.3f hmac/serve=%.3f hmac/gcm128=%.3f hmac/gcm256=%.3f "
           "hmac_mb_per_s=%.0f gcm128_mb_per_s=%.0f\n",
           m.reply_len, MAC_SETS * MAC_METRICS, (double)m.reply_len / (MAC_SETS * MAC_METRICS),
           res[0].us * per_s / 1e4, res[1].us * per_s / 1e4, res[2].us * per_s / 1e4, res[3].us * per_s / 1e4,
           res[1].us / res[0].us, res[1].us / res[2].us, res[1].us / res[3].us,
           (double)m.reply_len / res[1].us, (double)m.reply_len / res[2].us);
    mbedtls_gcm_free(&g128);
    mbedtls_gcm_free(&g256);
    free(m.out);
    strobe__wr_free(&m.req);
    strobe__wr_free(&m.reply);
    strobe__server_stop(m.srv);
    strobe__daemon_free(d);
}

/* ---- scale: many sampler instances ----------------------------------------- */

/* CPU time of one round of `instances` synthetic samplers of 100 metrics
 * each plus one rate transform (so that every update is dispatched to a
 * consumer), the median of `rounds` rounds, as a share of one core at a
 * 1 s interval. Dispatching an update used to walk every instance: the
 * cost of a round grew with the square of the instances. */
static void bench_scale(long instances, long rounds)
{
    struct strobe__daemon *d = synthetic_daemon(instances, "transforms:\n  - plugin: rate\n    input: bench/s0\n");
    double *t = malloc((size_t)rounds * sizeof *t);
    if (!t)
        die("out of memory");
    strobe__daemon_sample_all(d, 1); /* warm-up */
    for (long r = 0; r < rounds; r++) {
        double t0 = cpu_ns();
        if (strobe__daemon_sample_all(d, (uint64_t)r + 2) < 0)
            die("scale: round %ld failed", r);
        t[r] = cpu_ns() - t0;
    }
    strobe_set *last = find_set(d, "bench/s0");
    if (strobe_set_data_gn(last) != (uint64_t)rounds + 1)
        die("scale: %llu samples of bench/s0, expected %ld", (unsigned long long)strobe_set_data_gn(last),
            rounds + 1);
    for (long i = 1; i < rounds; i++) /* insertion sort for the median */
        for (long j = i; j > 0 && t[j - 1] > t[j]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    double med = t[rounds / 2];
    printf("scale instances=%ld round_ms=%.3f us_per_instance=%.3f core_pct_at_1s=%.3f\n", instances, med / 1e6,
           med / 1e3 / (double)instances, med / 1e9 * 100.0);
    free(t);
    strobe__daemon_free(d);
}

/* ---- store: the csv store's periodic flush --------------------------------- */

static long lines_in(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("%s: %s", path, strerror(errno));
    long n = 0;
    for (int ch; (ch = getc(f)) != EOF;)
        n += ch == '\n';
    fclose(f);
    return n;
}

static void bench_store(long rate, const char *dir, long rot)
{
    static const char *const names[] = { "nostore", "buffered", "flush", "fsync" };
    char yaml[4][1024];
    struct config c[4];
    for (int i = 0; i < 4; i++) {
        int n = snprintf(yaml[i], sizeof yaml[i],
                         "daemon:\n  producer: bench\n  log_level: error\n"
                         "samplers:\n  - plugin: synthetic\n    metrics: 43\n");
        if (i)
            snprintf(yaml[i] + n, sizeof yaml[i] - (size_t)n,
                     "stores:\n  - plugin: csv\n    path: %s/%s\n    fsync: %s\n", dir, names[i],
                     i == 3 ? "true" : "false");
        c[i] = (struct config){ .name = names[i], .step = step_store, .d = daemon_from(yaml[i]),
                                .flush_every = i >= 2 ? rate : 0 };
    }
    long iters = rate * 20 > 200000 ? 200000 : rate * 20;
    struct cost r[4];
    run_all("store", c, 4, iters, rot, r);
    for (int i = 1; i < 4; i++) {
        strobe__daemon_free(c[i].d); /* writes what is buffered */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s/synthetic.csv", dir, names[i]);
        long rows = lines_in(path) - 1, want = iters + iters / 10 + 1;
        if (rows != want)
            die("%s: %ld rows in %s, expected %ld", names[i], rows, path, want);
    }
    strobe__daemon_free(c[0].d);
    /* per second of data: RATE rows */
    printf("store ratios rate=%ld flush-buffered_us_per_s=%.1f fsync-buffered_us_per_s=%.1f "
           "fsync-buffered_wall_us_per_s=%.1f\n",
           rate, (r[2].us - r[1].us) * (double)rate, (r[3].us - r[1].us) * (double)rate,
           (r[3].wall_us - r[1].wall_us) * (double)rate);
}

/* meta + data bytes of a synthetic set */
static void bench_setbytes(long metrics, const char *instance)
{
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "daemon:\n  producer: bench\n  log_level: error\nsamplers:\n"
             "  - plugin: synthetic\n    instance: \"%s\"\n    metrics: %ld\n",
             instance, metrics);
    struct strobe__daemon *d = daemon_from(yaml);
    size_t ml, dl;
    strobe_set *s = find_set(d, instance);
    strobe_set_meta(s, &ml);
    strobe_set_data(s, &dl);
    printf("setbytes=%zu meta=%zu data=%zu\n", ml + dl, ml, dl);
    strobe__daemon_free(d);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "setbytes") == 0) {
        char *end;
        long metrics = strtol(argv[2], &end, 10);
        if (*end || metrics < 1)
            goto usage;
        bench_setbytes(metrics, argv[3]);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "scale") == 0) {
        char *end;
        long inst = strtol(argv[2], &end, 10), rounds = *end ? 0 : strtol(argv[3], &end, 10);
        if (*end || inst < 1 || rounds < 1)
            goto usage;
        bench_scale(inst, rounds);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "store") == 0) {
        char *end;
        long rate = strtol(argv[2], &end, 10), rot;
        if (*end || rate < 1 || rate > 1000000)
            goto usage;
        rot = strtol(argv[4], &end, 10);
        if (*end || rot < 0)
            goto usage;
        bench_store(rate, argv[3], rot);
        return 0;
    }
    if (argc != 5 && !(argc == 4 && (strcmp(argv[1], "xform") == 0 || strcmp(argv[1], "mac") == 0)))
        goto usage;
    int x = argc == 4;
    char *end;
    long iters = strtol(argv[x ? 2 : 3], &end, 10);
    if (*end || iters < 10)
        goto usage;
    long rot = strtol(argv[x ? 3 : 4], &end, 10);
    if (*end || rot < 0)
        goto usage;
    if (x && strcmp(argv[1], "mac") == 0)
        bench_mac(iters, rot);
    else if (x)
        bench_xform(iters, rot);
    else if (strcmp(argv[1], "sample") == 0 &&
             (strcmp(argv[2], "meminfo") == 0 || strcmp(argv[2], "vmstat") == 0))
        bench_sample(argv[2], iters, rot);
    else
        goto usage;
    return 0;
usage:
    fputs("usage: strobe-bench-monitor sample meminfo|vmstat N ROT\n"
          "       strobe-bench-monitor xform N ROT\n"
          "       strobe-bench-monitor mac N ROT\n"
          "       strobe-bench-monitor scale INSTANCES ROUNDS\n"
          "       strobe-bench-monitor store RATE DIR ROT\n"
          "       strobe-bench-monitor setbytes METRICS INSTANCE\n",
          stderr);
    return 2;
}
