/* SPDX-License-Identifier: MIT */
/*
 * The remote_write store against the real receivers, started by the test
 * in its own directory on its own ports: VictoriaMetrics (Debian's
 * victoria-metrics) and Prometheus 2.42 with its remote-write receiver,
 * queried back through their HTTP APIs for exact values, names and labels.
 * The bytes themselves are checked by decoding the batches a store queued
 * on disk (snappy, then the WriteRequest through protobuf-c): labels sorted,
 * type metadata, NaN for invalid values, samples in time order. Receivers
 * that are down, slow (accept and never answer) or refusing (HTTP 400) are
 * small servers in the test or a receiver started late; the log must hold
 * exactly one line per state change.
 */
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <snappy-c.h>
#include <sys/socket.h>

#include "plugins/store_sets.h"
#include "remote_write.pb-c.h"
#include "strobed/daemons.h"

#define SEC 1000000000ull

static void need(const char *bin, const char *package)
{
    if (access(bin, X_OK) != 0)
        STROBE_FAIL("%s is missing (Debian package %s; make deps installs it)", bin, package);
}

/* ---- the receivers ------------------------------------------------------------------ */

static void wait_http(const char *url, const char *what)
{
    for (int i = 0; i < 300; i++) {
        char *out;
        strobe_test_sh(&out, "curl -s -o /dev/null -w '%%{http_code}' '%s'", url);
        int ok = !strcmp(out, "200");
        free(out);
        if (ok)
            return;
        sleep_ms(100);
    }
    STROBE_FAIL("%s did not answer at %s within 30 s", what, url);
}

static pid_t start_vm(const char *dir, int port)
{
    need("/usr/bin/victoria-metrics", "victoria-metrics");
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char data[4200], listen[64], log[4200];
        snprintf(data, sizeof data, "-storageDataPath=%s/vm", dir);
        snprintf(listen, sizeof listen, "-httpListenAddr=127.0.0.1:%d", port);
        snprintf(log, sizeof log, "%s/vm.log", dir);
        FILE *lf = freopen(log, "a", stderr);
        lf = freopen(log, "a", stdout);
        (void)lf;
        execl("/usr/bin/victoria-metrics", "victoria-metrics", data, listen, (char *)NULL);
        _exit(127);
    }
    remember_child(pid);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/health", port);
    wait_http(url, "victoria-metrics");
    return pid;
}

static pid_t start_prometheus(const char *dir, int port)
{
    need("/usr/bin/prometheus", "prometheus");
    char cfg[4200];
    snprintf(cfg, sizeof cfg, "%s/prometheus.yml", dir);
    FILE *f = fopen(cfg, "w");
    CHECK(f && fputs("global:\n  scrape_interval: 1m\n", f) >= 0 && fclose(f) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char data[4200], listen[64], cfgarg[4300], log[4200];
        snprintf(data, sizeof data, "--storage.tsdb.path=%s/prom", dir);
        snprintf(listen, sizeof listen, "--web.listen-address=127.0.0.1:%d", port);
        snprintf(cfgarg, sizeof cfgarg, "--config.file=%s", cfg);
        snprintf(log, sizeof log, "%s/prometheus.log", dir);
        FILE *lf = freopen(log, "a", stderr);
        (void)lf;
        execl("/usr/bin/prometheus", "prometheus", "--web.enable-remote-write-receiver", cfgarg, listen, data,
              (char *)NULL);
        _exit(127);
    }
    remember_child(pid);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/-/ready", port);
    wait_http(url, "prometheus");
    return pid;
}

/* Every strobe_* series VictoriaMetrics holds, one line each, sorted:
 * name{label=value,...} v@ms v@ms ... */
static char *vm_export(int port)
{
    char *out;
    strobe_test_sh(
        &out,
        "curl -s 'http://127.0.0.1:%d/api/v1/export' -d 'match[]={__name__=~\"strobe_.*\"}' | python3 -c "
        "'import json,sys\n"
        "rows=[]\n"
        "for l in sys.stdin:\n"
        "  r=json.loads(l); m=r[\"metric\"]; n=m.pop(\"__name__\")\n"
        "  p=sorted(zip(r[\"timestamps\"],r[\"values\"]))\n"
        "  rows.append(n+\"{\"+\",\".join(k+\"=\"+m[k] for k in sorted(m))+\"} \"+"
        "\" \".join(\"%%g@%%d\"%%(v,t) for t,v in p))\n"
        "print(\"\\n\".join(sorted(rows)))'",
        port);
    return out;
}

/* "name{labels} v@ms ..." for every strobe_* series Prometheus holds in the
 * hour before `at_s` (a range query: every raw sample). */
static char *prom_series(int port, long at_s)
{
    char *out;
    strobe_test_sh(
        &out,
        "curl -gs 'http://127.0.0.1:%d/api/v1/query' --data-urlencode 'query={__name__=~\"strobe_.*\"}[1h]' "
        "--data-urlencode 'time=%ld' | python3 -c "
        "'import json,sys\n"
        "rows=[]\n"
        "for r in json.load(sys.stdin)[\"data\"][\"result\"]:\n"
        "  m=r[\"metric\"]; n=m.pop(\"__name__\")\n"
        "  rows.append(n+\"{\"+\",\".join(k+\"=\"+m[k] for k in sorted(m))+\"} \"+"
        "\" \".join(\"%%s@%%d\"%%(v,round(t*1000)) for t,v in r[\"values\"]))\n"
        "print(\"\\n\".join(sorted(rows)))'",
        port, at_s);
    return out;
}

/* Waits until VictoriaMetrics holds n strobe_* samples in all. */
static void wait_samples(int port, int n)
{
    int got = 0;
    for (int i = 0; i < 200 && got != n; i++) {
        char *out = vm_export(port);
        got = 0;
        for (char *p = out; (p = strchr(p, '@')); p++)
            got++;
        free(out);
        if (got != n)
            sleep_ms(150);
    }
    CHECK_EQ_INT(got, n);
}

/* The store's one log line (its only one when everything went well):
 * `values` values, every batch sent, nothing else. */
static void check_summary(const char *lines, const char *name, int values)
{
    char fmt[64], want[512];
    int got_values = -1, batches = -1;
    snprintf(fmt, sizeof fmt, "info  %s: %%d value(s) in %%d batch(es)", name);
    CHECK(sscanf(lines, fmt, &got_values, &batches) == 2);
    CHECK_EQ_INT(got_values, values);
    snprintf(want, sizeof want,
             "info  %s: %d value(s) in %d batch(es) since the start: %d sent, 0 refused, 0 dropped, 0 left "
             "queued for the next start; 0 update(s) skipped (half-written or not newer), 0 error(s)\n",
             name, values, batches, batches);
    CHECK_STR_EQ(lines, want);
}

/* ---- the test's own sets and the batches on disk --------------------------------- */

/* Schema node.mem: job_id (char meta: a label), MemFree (u64, kB), pkts
 * (a counter), temp (d64[2]: label index), note (char: left out). */
static strobe_set *mem_set(struct strobe__daemon *d)
{
    strobe_schema *sc;
    strobe_set *set;
    CHECK(strobe_schema_new("node.mem", &sc) == 0);
    CHECK(strobe_schema_add(sc, "job_id", NULL, STROBE_MT_CHAR, 16, STROBE_METRIC_META) >= 0);
    CHECK(strobe_schema_add(sc, "MemFree", "kB", STROBE_MT_U64, 1, 0) >= 0);
    CHECK(strobe_schema_add(sc, "pkts", NULL, STROBE_MT_U64, 1, STROBE_METRIC_COUNTER) >= 0);
    CHECK(strobe_schema_add(sc, "temp", "C", STROBE_MT_D64, 2, 0) >= 0);
    CHECK(strobe_schema_add(sc, "note", NULL, STROBE_MT_CHAR, 8, 0) >= 0);
    CHECK(strobe_set_new(sc, "n1", "n1/mem", &set) == 0);
    strobe_schema_free(sc);
    strobe_set_str(set, 0, "77.0");
    pthread_mutex_lock(&d->lock);
    CHECK(strobe__daemon_set_add(d, set, STROBE_SET_PUBLISH, NULL) == 0);
    pthread_mutex_unlock(&d->lock);
    return set;
}

/* One transaction at ts_ns; MemFree invalid when memfree is NaN. */
static void mem_update(struct strobe__daemon *d, strobe_set *set, uint64_t ts_ns, double memfree,
                       uint64_t pkts, double t0, double t1)
{
    pthread_mutex_lock(&d->lock);
    strobe_set_begin(set);
    if (isnan(memfree)) {
        strobe_set_valid(set, 1, 0);
    } else {
        strobe_set_valid(set, 1, 1);
        strobe_set_u64(set, 1, 0, (uint64_t)memfree);
    }
    strobe_set_u64(set, 2, 0, pkts);
    strobe_set_d64(set, 3, 0, t0);
    strobe_set_d64(set, 3, 1, t1);
    strobe_set_str(set, 4, "x");
    strobe_set_end_at(set, ts_ns, 0);
    strobe__daemon_set_updated(d, set);
    pthread_mutex_unlock(&d->lock);
}

static void flush(struct strobe__daemon *d)
{
    pthread_mutex_lock(&d->lock);
    strobe__daemon_flush_stores(d);
    pthread_mutex_unlock(&d->lock);
}

/* A queued batch decoded: "TYPE family type help" lines for the metadata,
 * then one line per series: labels in their order, samples. */
static char *decode_batch(const char *path)
{
    FILE *f = fopen(path, "rb");
    CHECK(f);
    static char z[1 << 20], pb[4 << 20];
    size_t zlen = fread(z, 1, sizeof z, f), len = sizeof pb;
    fclose(f);
    CHECK(snappy_uncompress(z, zlen, pb, &len) == SNAPPY_OK);
    StrobeRw__WriteRequest *req = strobe_rw__write_request__unpack(NULL, len, (const uint8_t *)pb);
    CHECK(req);
    static const char *const types[] = {"unknown", "counter", "gauge"};
    char *out = calloc(1, 1 << 16);
    size_t n = 0;
    for (size_t i = 0; i < req->n_metadata; i++) {
        StrobeRw__MetricMetadata *m = req->metadata[i];
        n += (size_t)snprintf(out + n, (1 << 16) - n, "TYPE %s %s '%s'\n", m->metric_family_name,
                              types[m->type <= 2 ? m->type : 0], m->help);
    }
    for (size_t i = 0; i < req->n_timeseries; i++) {
        StrobeRw__TimeSeries *t = req->timeseries[i];
        for (size_t l = 0; l < t->n_labels; l++)
            n += (size_t)snprintf(out + n, (1 << 16) - n, "%s%s=%s", l ? "," : "", t->labels[l]->name,
                                  t->labels[l]->value);
        for (size_t s = 0; s < t->n_samples; s++)
            n += (size_t)snprintf(out + n, (1 << 16) - n, " %g@%lld", t->samples[s]->value,
                                  (long long)t->samples[s]->timestamp);
        n += (size_t)snprintf(out + n, (1 << 16) - n, "\n");
    }
    strobe_rw__write_request__free_unpacked(req, NULL);
    return out;
}

static char *first_batch(const char *qdir)
{
    char *name;
    CHECK_EQ_INT(strobe_test_sh(&name, "ls '%s' | grep '\\.batch$' | head -1", qdir), 0);
    name[strcspn(name, "\n")] = 0;
    CHECK(*name);
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", qdir, name);
    free(name);
    return decode_batch(path);
}

/* The log's lines that contain `what`, without their time stamps. */
static char *log_lines(const char *path, const char *what)
{
    char *out;
    strobe_test_sh(&out, "grep -F -- '%s' '%s' | cut -d' ' -f3-", what, path);
    return out;
}

/* ---- receivers that misbehave: a thread of the test ------------------------------ */

/* Listens on 127.0.0.1:port. SLOW accepts and never answers (keeping the
 * connections); REFUSE answers every request with HTTP 400 and keeps the
 * first request's head. */
enum fake_kind { SLOW, REFUSE };
struct fake {
    enum fake_kind kind;
    int lfd, stop;
    int conns[256];
    int nconns;
    char head[2048];
    pthread_t thread;
};

static void fake_answer(struct fake *f, int c)
{
    char buf[65536];
    size_t n = 0;
    const char *end = NULL;
    ssize_t r;
    while (!end && n < sizeof buf - 1 && (r = read(c, buf + n, sizeof buf - 1 - n)) > 0) {
        n += (size_t)r;
        buf[n] = 0;
        end = strstr(buf, "\r\n\r\n");
    }
    if (!end)
        return;
    size_t head = (size_t)(end + 4 - buf), body = 0;
    const char *cl = strstr(buf, "\r\nContent-Length: ");
    if (cl)
        body = strtoul(cl + 18, NULL, 10);
    if (!f->head[0])
        snprintf(f->head, sizeof f->head, "%.*s", (int)head, buf);
    for (size_t got = n - head; got < body && (r = read(c, buf, sizeof buf)) > 0;)
        got += (size_t)r;
    static const char res[] = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 20\r\n"
                              "Connection: close\r\n\r\nout of order sample\n";
    CHECK(write(c, res, sizeof res - 1) == (ssize_t)(sizeof res - 1));
}

static void *fake_run(void *arg)
{
    struct fake *f = arg;
    while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
        struct pollfd p = {f->lfd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int c = accept(f->lfd, NULL, NULL);
        if (c < 0)
            continue;
        if (f->kind == SLOW && f->nconns < 256) {
            f->conns[f->nconns++] = c; /* read nothing, answer nothing */
            continue;
        }
        if (f->kind == REFUSE)
            fake_answer(f, c);
        close(c);
    }
    return NULL;
}

static void fake_start(struct fake *f, enum fake_kind kind, int port)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(f->lfd >= 0);
    int one = 1;
    setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(f->lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(f->lfd, 64) == 0);
    CHECK(pthread_create(&f->thread, NULL, fake_run, f) == 0);
}

static void fake_stop(struct fake *f)
{
    __atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
    pthread_join(f->thread, NULL);
    for (int i = 0; i < f->nconns; i++)
        close(f->conns[i]);
    close(f->lfd);
}

/* An in-process daemon (log in dir/d.log) with the store `rw` writing to
 * a port where nothing listens: its batches stay in qdir (dir/q), the
 * next attempt 30 s after the first. `keys`: more of the store's keys. */
static struct strobe__daemon *down_daemon(const char *dir, char qdir[4200], const char *keys)
{
    snprintf(qdir, 4200, "%s/q", dir);
    return daemon_from("daemon:\n  producer: n1\n  log_file: %s/d.log\n"
                       "stores:\n  - plugin: remote_write\n    name: rw\n"
                       "    url: http://127.0.0.1:%d/api/v1/write\n    queue_dir: %s\n"
                       "    retry_min: 30s\n    timeout: 200ms\n%s",
                       dir, test_port(0), qdir, keys);
}

/* ---- cases ------------------------------------------------------------------------------ */

/* The bytes: a batch queued while the receiver is down, decoded. */
STROBE_TEST(batch_encoding)
{
    const char *dir = strobe_test_tmpdir("rw_encoding");
    char qdir[4200];
    struct strobe__daemon *d = down_daemon(dir, qdir, "");
    strobe_set *set = mem_set(d);
    mem_update(d, set, 1000 * SEC + 500000000, 100, 7, 1.5, -2.25);
    mem_update(d, set, 1001 * SEC, NAN, 9, 3, 4);
    mem_update(d, set, 1001 * SEC, 5, 10, 5, 6); /* not newer: skipped */
    mem_update(d, set, 1002 * SEC + 1000000, 1ull << 53, 12, 0.1, 1e300);
    flush(d);
    sleep_ms(300); /* the first attempt fails; the next is 30 s away */
    char *got = first_batch(qdir);
    CHECK_STR_EQ(got, "TYPE strobe_node_mem_MemFree gauge 'unit: kB'\n"
                      "TYPE strobe_node_mem_pkts_total counter ''\n"
                      "TYPE strobe_node_mem_temp gauge 'unit: C'\n"
                      "__name__=strobe_node_mem_MemFree,instance=n1/mem,job_id=77.0,producer=n1"
                      " 100@1000500 nan@1001000 9.0072e+15@1002001\n"
                      "__name__=strobe_node_mem_pkts_total,instance=n1/mem,job_id=77.0,producer=n1"
                      " 7@1000500 9@1001000 12@1002001\n"
                      "__name__=strobe_node_mem_temp,index=0,instance=n1/mem,job_id=77.0,producer=n1"
                      " 1.5@1000500 3@1001000 0.1@1002001\n"
                      "__name__=strobe_node_mem_temp,index=1,instance=n1/mem,job_id=77.0,producer=n1"
                      " -2.25@1000500 4@1001000 1e+300@1002001\n");
    free(got);
    strobe__daemon_free(d);
    char log[4300];
    snprintf(log, sizeof log, "%s/d.log", dir);
    got = log_lines(log, "rw: ");
    char want[1024];
    snprintf(
        want, sizeof want,
        "warn  rw: http://127.0.0.1:%d/api/v1/write unreachable (connection refused); queueing, retrying "
        "with back-off\n"
        "warn  rw: 12 value(s) in 1 batch(es) since the start: 0 sent, 0 refused, 0 dropped, 1 left queued "
        "for the next start; 1 update(s) skipped (half-written or not newer), 0 error(s)\n",
        test_port(0));
    CHECK_STR_EQ(got, want);
    free(got);
}

/* batch_values splits batches; each is a complete WriteRequest. */
STROBE_TEST(batch_values_split)
{
    const char *dir = strobe_test_tmpdir("rw_split");
    char qdir[4200];
    struct strobe__daemon *d = down_daemon(dir, qdir, "    batch_values: 6\n");
    static const char *const names[] = {"a", "b", "c", NULL};
    strobe_set *set = add_set(d, "s", "n1/s", names);
    for (uint64_t k = 1; k <= 5; k++)
        update(d, set, k * SEC, (const uint64_t[]){k, 10 * k, 100 * k}, 3);
    flush(d);
    sleep_ms(300);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "ls '%s'", qdir), 0);
    CHECK_STR_EQ(out, "0000000000000000.batch\n0000000000000001.batch\n0000000000000002.batch\n");
    free(out);
    char path[4400];
    snprintf(path, sizeof path, "%s/0000000000000002.batch", qdir);
    out = decode_batch(path);
    CHECK_STR_EQ(out, "TYPE strobe_s_a gauge ''\nTYPE strobe_s_b gauge ''\nTYPE strobe_s_c gauge ''\n"
                      "__name__=strobe_s_a,instance=n1/s,producer=node1 5@5000\n"
                      "__name__=strobe_s_b,instance=n1/s,producer=node1 50@5000\n"
                      "__name__=strobe_s_c,instance=n1/s,producer=node1 500@5000\n");
    free(out);
    strobe__daemon_free(d);
}

/* The test's set into Prometheus 2.42: exact values (NaN included), names
 * (_total for the counter), labels (job_id, index). */
STROBE_TEST(prometheus_exact)
{
    const char *dir = strobe_test_tmpdir("rw_prometheus");
    start_prometheus(dir, test_port(1));
    struct strobe__daemon *d = daemon_from("daemon:\n  producer: n1\n  log_file: %s/d.log\n"
                                           "stores:\n  - plugin: remote_write\n    name: prom\n"
                                           "    url: http://127.0.0.1:%d/api/v1/write\n    queue_dir: %s/q\n",
                                           dir, test_port(1), dir);
    strobe_set *set = mem_set(d);
    long now = (long)time(NULL);
    uint64_t t0 = (uint64_t)(now - 60) * SEC;
    mem_update(d, set, t0, 100, 7, 1.5, -2.25);
    mem_update(d, set, t0 + SEC / 2, NAN, 9, 3, 4);
    mem_update(d, set, t0 + SEC, 12345678901, 12, 0.1, 1e300);
    flush(d);
    strobe__daemon_free(d); /* drains the queue (within `timeout`) */
    char *got = prom_series(test_port(1), now);
    long long ms = (long long)(now - 60) * 1000;
    char want[2048];
    snprintf(
        want, sizeof want,
        "strobe_node_mem_MemFree{instance=n1/mem,job_id=77.0,producer=n1} 100@%lld NaN@%lld "
        "12345678901@%lld\n"
        "strobe_node_mem_pkts_total{instance=n1/mem,job_id=77.0,producer=n1} 7@%lld 9@%lld 12@%lld\n"
        "strobe_node_mem_temp{index=0,instance=n1/mem,job_id=77.0,producer=n1} 1.5@%lld 3@%lld 0.1@%lld\n"
        "strobe_node_mem_temp{index=1,instance=n1/mem,job_id=77.0,producer=n1} -2.25@%lld 4@%lld "
        "1e+300@%lld\n",
        ms, ms + 500, ms + 1000, ms, ms + 500, ms + 1000, ms, ms + 500, ms + 1000, ms, ms + 500, ms + 1000);
    CHECK_STR_EQ(got, want);
    free(got);
    char log[4300];
    snprintf(log, sizeof log, "%s/d.log", dir);
    got = log_lines(log, "prom: ");
    CHECK_STR_EQ(
        got, "info  prom: 12 value(s) in 1 batch(es) since the start: 1 sent, 0 refused, 0 dropped, 0 "
             "left queued for the next start; 0 update(s) skipped (half-written or not newer), 0 error(s)\n");
    free(got);
}

/* A real strobed (synthetic sampler, remote_write in its YAML) into
 * VictoriaMetrics: every value, exactly. */
STROBE_TEST(victoria_metrics_strobed)
{
    const char *dir = strobe_test_tmpdir("rw_vm");
    start_vm(dir, test_port(1));
    char y[4096];
    snprintf(y, sizeof y,
             "daemon:\n  producer: n1\n"
             "samplers:\n  - plugin: synthetic\n    interval: 100ms\n    metrics: 2\n    samples: 5\n    "
             "base: 1000\n"
             "stores:\n  - plugin: remote_write\n    name: vm\n    url: http://127.0.0.1:%d/api/v1/write\n"
             "    queue_dir: %s/q\n    flush_interval: 200ms\n",
             test_port(1), dir);
    pid_t s = start_daemon(dir, "n1", y);
    /* (VictoriaMetrics answers "no such series" from a cache for a while:
     * ask once the daemon has sent everything, at its stop) */
    sleep_ms(1500);
    stop_clean(s, dir, "n1");
    wait_samples(test_port(1), 15);
    /* values base + k * (i + 1), k = 1..5; the timestamps are the sampler's */
    char *out = vm_export(test_port(1));
    char *line = strtok(out, "\n");
    static const char *const want[] = {
        "strobe_synthetic_component_id{instance=n1/synthetic,producer=n1} 0@",
        "strobe_synthetic_m0{instance=n1/synthetic,producer=n1} 1001@",
        "strobe_synthetic_m1{instance=n1/synthetic,producer=n1} 1002@",
    };
    static const char *const values[] = {"0 0 0 0 0", "1001 1002 1003 1004 1005", "1002 1004 1006 1008 1010"};
    for (int i = 0; i < 3; i++, line = strtok(NULL, "\n")) {
        CHECK(line);
        CHECK(!strncmp(line, want[i], strlen(want[i]) - 5));
        /* the values without their timestamps */
        char vals[256] = "";
        for (char *p = strchr(line, ' '); p; p = strchr(p + 1, ' ')) {
            char v[32];
            sscanf(p + 1, "%31[^@]", v);
            snprintf(vals + strlen(vals), sizeof vals - strlen(vals), "%s%s", *vals ? " " : "", v);
        }
        CHECK_STR_EQ(vals, values[i]);
    }
    free(out);
    char log[4300];
    snprintf(log, sizeof log, "%s/n1.log", dir);
    out = log_lines(log, "vm: ");
    check_summary(out, "vm", 15);
    free(out);
}

/* A strobed started while its receiver is down (nothing listening, or
 * a server that accepts and never answers) and VictoriaMetrics started on
 * that port seconds later: every value arrives exactly once, and the log
 * has exactly the two state changes. */
static void late_receiver(const char *name, int slow)
{
    const char *dir = strobe_test_tmpdir(name);
    int port = test_port(2);
    struct fake f;
    if (slow)
        fake_start(&f, SLOW, port);
    char y[4096];
    snprintf(y, sizeof y,
             "daemon:\n  producer: n1\n"
             "samplers:\n  - plugin: synthetic\n    interval: 100ms\n    metrics: 1\n    samples: 30\n"
             "stores:\n  - plugin: remote_write\n    name: vm\n    url: http://127.0.0.1:%d/api/v1/write\n"
             "    queue_dir: %s/q\n    flush_interval: 200ms\n    timeout: 300ms\n    retry_min: 100ms\n"
             "    retry_max: 400ms\n",
             port, dir);
    pid_t s = start_daemon(dir, "n1", y);
    sleep_ms(2000);
    char log[4300];
    snprintf(log, sizeof log, "%s/n1.log", dir);
    char *out = log_lines(log, "vm: ");
    char want[512];
    snprintf(
        want, sizeof want,
        "warn  vm: http://127.0.0.1:%d/api/v1/write unreachable (%s); queueing, retrying with back-off\n",
        port, slow ? "timeout after 0.3 s" : "connection refused");
    CHECK_STR_EQ(out, want);
    free(out);
    if (slow)
        fake_stop(&f);
    start_vm(dir, port);
    sleep_ms(2500); /* the sampler's 3 s are over; the queue drains */
    stop_clean(s, dir, "n1");
    wait_samples(port, 60);
    char *exported = vm_export(port);
    char vals[512] = "";
    for (int k = 1; k <= 30; k++)
        snprintf(vals + strlen(vals), sizeof vals - strlen(vals), " %d@", k);
    /* m0 = k for sample k: each exactly once, in order */
    char *m0 = strstr(exported, "strobe_synthetic_m0{instance=n1/synthetic,producer=n1}");
    CHECK(m0);
    m0[strcspn(m0, "\n")] = 0;
    char got[512] = "";
    for (char *p = strchr(m0, ' '); p; p = strchr(p + 1, ' ')) {
        int v;
        CHECK(sscanf(p + 1, "%d@", &v) == 1);
        snprintf(got + strlen(got), sizeof got - strlen(got), " %d@", v);
    }
    CHECK_STR_EQ(got, vals);
    free(exported);
    char *lines = log_lines(log, "vm: ");
    CHECK(!strncmp(lines, want, strlen(want)));
    char *second = strchr(lines, '\n') + 1, *third = strchr(second, '\n') + 1;
    double after;
    unsigned batches;
    snprintf(want, sizeof want,
             "info  vm: http://127.0.0.1:%d/api/v1/write delivered again after %%lf s; %%u batch(es)", port);
    CHECK(sscanf(second, want, &after, &batches) == 2);
    CHECK(after > 1.5 && after < 5 && batches > 0);
    static const char tail[] = " were queued, 0 dropped\n";
    CHECK(strstr(second, tail) == third - strlen(tail));
    check_summary(third, "vm", 60);
    free(lines);
}

STROBE_TEST(receiver_down_then_up)
{
    late_receiver("rw_down", 0);
}

STROBE_TEST(receiver_slow_then_up)
{
    late_receiver("rw_slow", 1);
}

/* A receiver that answers 400: batches dropped and counted, one log line
 * with its message, the protocol's headers in the requests. */
STROBE_TEST(receiver_refuses)
{
    const char *dir = strobe_test_tmpdir("rw_refuse");
    int port = test_port(2);
    struct fake f;
    fake_start(&f, REFUSE, port);
    char y[4096];
    snprintf(y, sizeof y,
             "daemon:\n  producer: n1\n"
             "samplers:\n  - plugin: synthetic\n    interval: 100ms\n    metrics: 1\n    samples: 5\n"
             "stores:\n  - plugin: remote_write\n    name: rw\n    url: http://127.0.0.1:%d/api/v1/write\n"
             "    queue_dir: %s/q\n    flush_interval: 200ms\n",
             port, dir);
    pid_t s = start_daemon(dir, "n1", y);
    sleep_ms(1500);
    stop_clean(s, dir, "n1");
    fake_stop(&f);
    CHECK_CONTAINS(f.head, "POST /api/v1/write HTTP/1.1\r\n");
    CHECK_CONTAINS(f.head, "\r\nContent-Encoding: snappy\r\n");
    CHECK_CONTAINS(f.head, "\r\nContent-Type: application/x-protobuf\r\n");
    CHECK_CONTAINS(f.head, "\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\n");
    char log[4300];
    snprintf(log, sizeof log, "%s/n1.log", dir);
    char *lines = log_lines(log, "rw: ");
    char want[1024];
    int n = snprintf(
        want, sizeof want,
        "error rw: http://127.0.0.1:%d/api/v1/write refused a batch (HTTP 400: out of order sample); "
        "refused batches are dropped (counted)\n"
        "warn  rw: 10 value(s) in ",
        port);
    CHECK(!strncmp(lines, want, (size_t)n));
    unsigned batches, refused;
    CHECK(sscanf(lines + n, "%u batch(es) since the start: 0 sent, %u refused,", &batches, &refused) == 2);
    CHECK(batches > 0 && refused == batches);
    CHECK_CONTAINS(lines,
                   " refused, 0 dropped, 0 left queued for the next start; 0 update(s) skipped (half-written "
                   "or not newer), 0 error(s)\n");
    CHECK_EQ_INT(strchr(strchr(lines, '\n') + 1, '\n')[1], 0); /* two lines */
    free(lines);
}

/* docs/strobed.md, "Into VictoriaMetrics": two node daemons, an aggregator
 * pulling both that writes to VictoriaMetrics, and the PromQL query for
 * the node that uses the most memory, checked against the samples. */
STROBE_TEST(two_level_topology)
{
    const char *dir = strobe_test_tmpdir("rw_topology");
    char secret[4200], y[4096];
    snprintf(secret, sizeof secret, "%s/secret", dir);
    write_private(secret, "topology test secret\n");
    pid_t node[2];
    for (int n = 0; n < 2; n++) {
        char name[16];
        snprintf(name, sizeof name, "node%d", n + 1);
        snprintf(y, sizeof y,
                 "daemon:\n  producer: %s\n  listen: 127.0.0.1:%d\n  secret_file: %s\n"
                 "samplers:\n  - plugin: meminfo\n    interval: 500ms\n",
                 name, test_port(3 + n), secret);
        node[n] = start_daemon(dir, name, y);
    }
    /* fresh samples visible to queries at once (the default waits 30 s) */
    int vm_port = test_port(5);
    need("/usr/bin/victoria-metrics", "victoria-metrics");
    pid_t vm = fork();
    CHECK(vm >= 0);
    if (vm == 0) {
        char data[4200], listen[64];
        snprintf(data, sizeof data, "-storageDataPath=%s/vm", dir);
        snprintf(listen, sizeof listen, "-httpListenAddr=127.0.0.1:%d", vm_port);
        FILE *lf = freopen("/dev/null", "w", stderr);
        lf = freopen("/dev/null", "w", stdout);
        (void)lf;
        execl("/usr/bin/victoria-metrics", "victoria-metrics", data, listen, "-search.latencyOffset=1s",
              (char *)NULL);
        _exit(127);
    }
    remember_child(vm);
    snprintf(y, sizeof y,
             "daemon:\n  producer: top\n  secret_file: %s\n"
             "producers:\n  - address: 127.0.0.1:%d\n    interval: 500ms\n    offset: 100ms\n"
             "  - address: 127.0.0.1:%d\n    interval: 500ms\n    offset: 100ms\n"
             "stores:\n  - plugin: remote_write\n    name: vm\n    url: http://127.0.0.1:%d/api/v1/write\n"
             "    queue_dir: %s/queue\n    flush_interval: 250ms\n",
             secret, test_port(3), test_port(4), vm_port, dir);
    pid_t top = start_daemon(dir, "top", y);
    sleep_ms(3000);
    stop_clean(node[0], dir, "node1");
    stop_clean(node[1], dir, "node2");
    sleep_ms(600);
    stop_clean(top, dir, "top");
    sleep_ms(1500);
    /* the last MemTotal - MemAvailable of each node, from the raw samples */
    char *used;
    strobe_test_sh(&used,
                   "curl -gs 'http://127.0.0.1:%d/api/v1/export' -d "
                   "'match[]={__name__=~\"strobe_meminfo_Mem(Total|Available)\"}' "
                   "| python3 -c 'import json,sys\n"
                   "last={}\n"
                   "for l in sys.stdin:\n"
                   "  r=json.loads(l); "
                   "last[(r[\"metric\"][\"producer\"],r[\"metric\"][\"__name__\"])]=r[\"values\"][-1]\n"
                   "u={p:last[(p,\"strobe_meminfo_MemTotal\")]-last[(p,\"strobe_meminfo_MemAvailable\")] for "
                   "p in (\"node1\",\"node2\")}\n"
                   "m=max(u.values()); print(int(m), *sorted(p for p in u if u[p]==m))'",
                   vm_port);
    char *top1;
    strobe_test_sh(
        &top1,
        "curl -s 'http://127.0.0.1:%d/api/v1/query' --data-urlencode "
        "'query=topk(1, strobe_meminfo_MemTotal - strobe_meminfo_MemAvailable)' | python3 -c 'import "
        "json,sys\n"
        "r=json.load(sys.stdin)[\"data\"][\"result\"]\n"
        "print(len(r), r[0][\"metric\"][\"producer\"], r[0][\"metric\"][\"instance\"], r[0][\"value\"][1])'",
        vm_port);
    /* "VALUE NODE..." with every node at the maximum (both nodes are this
     * machine: their samples can tie) */
    char got_prod[16], got_inst[64];
    long long v, got_v;
    int n;
    CHECK(sscanf(used, "%lld", &v) == 1 && v > 0);
    CHECK(sscanf(top1, "%d %15s %63s %lld", &n, got_prod, got_inst, &got_v) == 4);
    CHECK_EQ_INT(n, 1);
    CHECK(strstr(used, got_prod) != NULL);
    char inst[64];
    snprintf(inst, sizeof inst, "%s/meminfo", got_prod);
    CHECK_STR_EQ(got_inst, inst);
    CHECK_EQ_INT(got_v, v);
    free(used);
    free(top1);
    stop_daemon(vm, SIGTERM);
}

STROBE_TEST_MAIN(STROBE_CASE(batch_encoding), STROBE_CASE(batch_values_split), STROBE_CASE(prometheus_exact),
                 STROBE_CASE(victoria_metrics_strobed), STROBE_CASE(receiver_down_then_up),
                 STROBE_CASE(receiver_slow_then_up), STROBE_CASE(receiver_refuses),
                 STROBE_CASE(two_level_topology))
