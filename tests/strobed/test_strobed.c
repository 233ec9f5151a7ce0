/* SPDX-License-Identifier: MIT */
/*
 * strobed end to end on loopback: a three-level aggregation tree with
 * exact values from the synthetic sampler, push on change, shared-secret
 * authentication, producer and aggregator restarts, a producer that never
 * answers, `strobe ls`, and a scrape by a real Prometheus server.
 */
#include <pthread.h>

#include "daemons.h"
#include "transport/client.h"

/* Synthetic sampler yaml: n samples of 3 metrics, then it stops, so the
 * final values are known everywhere: m_i = base + n * (i + 1). */
static void sampler_yaml(char *buf, size_t cap, const char *producer, int port, int comp, int samples,
                         const char *extra)
{
    snprintf(buf, cap,
             "daemon:\n  producer: %s\n  listen: 127.0.0.1:%d\n%s"
             "samplers:\n  - plugin: synthetic\n    interval: 100ms\n    metrics: 3\n"
             "    component_id: %d\n    samples: %d\n",
             producer, port, extra ? extra : "", comp, samples);
}

STROBE_TEST(three_level_topology)
{
    const char *dir = strobe_test_tmpdir("three_level");
    char y[2048];
    pid_t p[6];
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i + 1);
        sampler_yaml(y, sizeof y, name, test_port(i), 11 + i, 5, NULL);
        /* n3 derives in situ: it sees every sample, so its delta is exact
         * (m2 grows by 3 per sample) wherever the result is read */
        if (i == 2)
            strncat(y, "transforms:\n  - plugin: delta\n    input: '*/synthetic'\n", sizeof y - strlen(y) - 1);
        p[i] = start_daemon(dir, name, y);
    }
    /* two aggregators with overlapping sources (n2 reaches the top twice),
     * one top aggregator */
    snprintf(y, sizeof y,
             "daemon:\n  producer: aggA\n  listen: 127.0.0.1:%d\nproducers:\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n  - address: 127.0.0.1:%d\n    interval: 100ms\n",
             test_port(3), test_port(0), test_port(1));
    p[3] = start_daemon(dir, "aggA", y);
    snprintf(y, sizeof y,
             "daemon:\n  producer: aggB\n  listen: 127.0.0.1:%d\nproducers:\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n  - address: 127.0.0.1:%d\n    interval: 100ms\n",
             test_port(4), test_port(1), test_port(2));
    p[4] = start_daemon(dir, "aggB", y);
    /* the top stores the raw sets in a CSV file */
    snprintf(y, sizeof y,
             "daemon:\n  producer: top\n  listen: 127.0.0.1:%d\nproducers:\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n    offset: 50ms\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n    offset: 50ms\n"
             "stores:\n  - plugin: csv\n    path: %s\n    sets: '*/synthetic'\n",
             test_port(5), test_port(3), test_port(4), dir);
    p[5] = start_daemon(dir, "top", y);
    for (int i = 0; i < 3; i++) {
        char set[32];
        snprintf(set, sizeof set, "n%d/synthetic", i + 1);
        wait_value(test_port(5), NULL, set, "m2", 15, 15000);
        CHECK_EQ_INT(served_value(test_port(5), NULL, set, "m0", NULL), 5);
        CHECK_EQ_INT(served_value(test_port(5), NULL, set, "m1", NULL), 10);
        CHECK_EQ_INT(served_value(test_port(5), NULL, set, "component_id", NULL), 11 + i);
    }
    /* a pattern is applied by the daemon: only the matching set travels */
    {
        char addr[64];
        snprintf(addr, sizeof addr, "127.0.0.1:%d", test_port(5));
        struct strobe__client *c;
        CHECK_EQ_INT(strobe__client_open(addr, NULL, 2000, 1, &c), 0);
        struct strobe__mirror m = { 0 };
        const char *const pat[] = { "n2/*" };
        CHECK_EQ_INT(strobe__client_update(c, &m, pat, 1, 0, NULL, NULL), 0);
        CHECK_EQ_INT(m.n, 1);
        CHECK_STR_EQ(strobe_set_instance(m.sets[0]), "n2/synthetic");
        strobe__mirror_free(&m);
        strobe__client_close(c);
    }
    /* the middle level serves exactly its own sources */
    CHECK_EQ_INT(served_value(test_port(3), NULL, "n3/synthetic", "m0", NULL), -1);
    CHECK_EQ_INT(served_value(test_port(4), NULL, "n1/synthetic", "m0", NULL), -1);
    CHECK_EQ_INT(served_value(test_port(4), NULL, "n3/synthetic", "m0", NULL), 5);
    /* n3's in-situ delta of its last sample, two levels up */
    wait_value(test_port(5), NULL, "n3/synthetic_delta", "m2", 3, 5000);
    /* n2 reaches the top through both aggregators; the second copy is
     * refused with a warning once the top has pulled it (which may be
     * after the values above arrived through the first) */
    int dup = 0;
    for (int t = 0; t < 100 && !dup; t++, sleep_ms(50))
        dup = strobe_test_sh(NULL, "grep -q 'set n2/synthetic is already known from elsewhere' '%s/top.log'",
                             dir) == 0;
    CHECK(dup);
    static const char *const names[] = { "n1", "n2", "n3", "aggA", "aggB", "top" };
    for (int i = 5; i >= 0; i--)
        stop_clean(p[i], dir, names[i]);
    /* the store wrote the final sample of every set, once (a set is
     * passed on only when it changed) */
    char *csv;
    strobe_test_sh(&csv, "cd '%s' && head -1 synthetic.csv && for n in 1 2 3; do "
                   "grep -c \",n$n,n$n/synthetic,1$n,5,10,15\\$\" synthetic.csv; done", dir);
    CHECK_STR_EQ(csv, "#time,producer,instance,component_id,m0,m1,m2\n1\n1\n1\n");
    free(csv);
}

/* A producer in push mode answers as soon as a set changes: with a pull
 * interval of 10 s, values still arrive within a second of sampling. */
STROBE_TEST(push_on_change)
{
    const char *dir = strobe_test_tmpdir("push");
    char y[2048];
    snprintf(y, sizeof y,
             "daemon:\n  producer: n1\n  listen: 127.0.0.1:%d\n"
             "samplers:\n  - plugin: synthetic\n    interval: 300ms\n    samples: 4\n",
             test_port(0));
    pid_t s = start_daemon(dir, "n1", y);
    snprintf(y, sizeof y,
             "daemon:\n  producer: agg\n  listen: 127.0.0.1:%d\nproducers:\n"
             "  - address: 127.0.0.1:%d\n    mode: push\n    interval: 10s\n",
             test_port(1), test_port(0));
    pid_t a = start_daemon(dir, "agg", y);
    wait_value(test_port(1), NULL, "n1/synthetic", "m0", 4, 4000);
    stop_clean(a, dir, "agg");
    stop_clean(s, dir, "n1");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

STROBE_TEST(shared_secret)
{
    const char *dir = strobe_test_tmpdir("secret");
    char good[4096], bad[4096], y[2048], extra[4200];
    snprintf(good, sizeof good, "%s/good", dir);
    snprintf(bad, sizeof bad, "%s/bad", dir);
    write_private(good, "correct horse battery staple\n");
    write_private(bad, "not the right secret\n");
    snprintf(extra, sizeof extra, "  secret_file: %s\n", good);
    sampler_yaml(y, sizeof y, "n1", test_port(0), 1, 2, extra);
    pid_t s = start_daemon(dir, "n1", y);
    /* the right secret gets the data, directly and through an aggregator */
    wait_value(test_port(0), "correct horse battery staple", "n1/synthetic", "m0", 2, 5000);
    snprintf(y, sizeof y,
             "daemon:\n  producer: agg\n  listen: 127.0.0.1:%d\n  secret_file: %s\nproducers:\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n",
             test_port(1), good, test_port(0));
    pid_t a = start_daemon(dir, "agg", y);
    wait_value(test_port(1), "correct horse battery staple", "n1/synthetic", "m0", 2, 5000);
    char *out;
    int rc = strobe_test_sh(&out, "'%s/strobe' ls --secret-file '%s' 127.0.0.1:%d", STROBE_BIN_DIR,
                            bad, test_port(0));
    CHECK_EQ_INT(rc, 1);
    CHECK_CONTAINS(out, "did not prove it knows the secret");
    free(out);
    rc = strobe_test_sh(&out, "'%s/strobe' ls 127.0.0.1:%d", STROBE_BIN_DIR, test_port(0));
    CHECK_EQ_INT(rc, 1);
    CHECK_CONTAINS(out, "requires a shared secret");
    free(out);
    rc = strobe_test_sh(&out, "'%s/strobe' ls --secret-file '%s' 127.0.0.1:%d", STROBE_BIN_DIR,
                        good, test_port(0));
    CHECK_EQ_INT(rc, 0);
    CHECK_STR_EQ(out, "n1/synthetic\n");
    free(out);
    /* the secret never crosses the wire: what the daemons send each
     * other is HMACs of nonces (checked by construction in auth.c); an
     * aggregator with the wrong secret gets nothing */
    snprintf(y, sizeof y,
             "daemon:\n  producer: agg2\n  listen: 127.0.0.1:%d\n  secret_file: %s\nproducers:\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n",
             test_port(2), bad, test_port(0));
    pid_t a2 = start_daemon(dir, "agg2", y);
    /* its first pull is refused (it logs why); it never gets the set */
    int refused = 0;
    for (int t = 0; t < 100 && !refused; t++, sleep_ms(50))
        refused = strobe_test_sh(NULL, "grep -q 'did not prove it knows the secret' '%s/agg2.log'", dir) == 0;
    CHECK(refused);
    CHECK_EQ_INT(served_value(test_port(2), "not the right secret", "n1/synthetic", "m0", NULL), -1);
    stop_clean(a2, dir, "agg2");
    stop_clean(a, dir, "agg");
    stop_clean(s, dir, "n1");
}

/* A producer killed and restarted with other values, and an aggregator
 * killed and restarted: the level above picks both up again. */
STROBE_TEST(restarts)
{
    const char *dir = strobe_test_tmpdir("restarts");
    char y[2048];
    sampler_yaml(y, sizeof y, "n1", test_port(0), 1, 3, NULL);
    pid_t s = start_daemon(dir, "n1", y);
    snprintf(y, sizeof y,
             "daemon:\n  producer: agg\n  listen: 127.0.0.1:%d\nproducers:\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n",
             test_port(1), test_port(0));
    char agg_yaml[2048];
    snprintf(agg_yaml, sizeof agg_yaml, "%s", y);
    pid_t a = start_daemon(dir, "agg", agg_yaml);
    snprintf(y, sizeof y,
             "daemon:\n  producer: top\n  listen: 127.0.0.1:%d\nproducers:\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n",
             test_port(2), test_port(1));
    pid_t t = start_daemon(dir, "top", y);
    wait_value(test_port(2), NULL, "n1/synthetic", "m0", 3, 8000);
    stop_daemon(s, SIGKILL);
    /* the sampler comes back with base 100 and 2 samples: m0 = 102 */
    snprintf(y, sizeof y,
             "daemon:\n  producer: n1\n  listen: 127.0.0.1:%d\n"
             "samplers:\n  - plugin: synthetic\n    interval: 100ms\n    metrics: 3\n"
             "    base: 100\n    samples: 2\n    component_id: 1\n",
             test_port(0));
    s = start_daemon(dir, "n1b", y);
    wait_value(test_port(2), NULL, "n1/synthetic", "m0", 102, 10000);
    stop_daemon(a, SIGKILL);
    sleep_ms(300);
    a = start_daemon(dir, "agg", agg_yaml);
    /* the new aggregator starts from nothing; the top keeps its last copy
     * and then follows the new one */
    wait_value(test_port(1), NULL, "n1/synthetic", "m1", 104, 8000);
    wait_value(test_port(2), NULL, "n1/synthetic", "m1", 104, 8000);
    stop_daemon(t, SIGTERM);
    stop_daemon(a, SIGTERM);
    stop_daemon(s, SIGTERM);
}

/* Two test processes whose ids pick the same first block (as parallel
 * ctest runs can) still get different port blocks, and neither gets a
 * block whose ports someone else listens on. */
STROBE_TEST(port_blocks_are_exclusive)
{
    int mine = test_port(0);
    /* a port of the next block is busy: claims must skip that block */
    int busy = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(busy >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)(mine + 10 + 3)) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool busy_bound = bind(busy, (struct sockaddr *)&a, sizeof a) == 0 && listen(busy, 1) == 0;
    int fds[2];
    CHECK(pipe(fds) == 0);
    /* fork until a child's process id picks the same first block as ours */
    for (int tries = 0;; tries++) {
        CHECK(tries < 40000);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            if ((getpid() - getppid()) % TEST_PORT_BLOCKS != 0)
                _exit(3);
            /* what test_port does in a new test process */
            int other = test_port_claim((int)(getpid() % TEST_PORT_BLOCKS));
            _exit(write(fds[1], &other, sizeof other) == sizeof other ? 0 : 4);
        }
        int st;
        CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
        if (WEXITSTATUS(st) == 3)
            continue;
        CHECK_EQ_INT(WEXITSTATUS(st), 0);
        break;
    }
    int other = 0;
    CHECK(read(fds[0], &other, sizeof other) == sizeof other);
    CHECK(other != mine);
    if (busy_bound)
        CHECK(other != mine + 10);
    close(busy);
    close(fds[0]);
    close(fds[1]);
}

/* A producer that accepts the connection and never answers must not
 * delay the others: the live one keeps updating every 100 ms. */
STROBE_TEST(silent_producer_does_not_stall)
{
    const char *dir = strobe_test_tmpdir("silent");
    char y[2048];
    test_port(0); /* fix the port block before forking */
    pid_t hole = fork();
    if (hole == 0) {
        char port[16];
        snprintf(port, sizeof port, "%d", test_port(2));
        execlp("python3", "python3", "-c",
               "import socket,sys,time\n"
               "s=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
               "s.bind(('127.0.0.1',int(sys.argv[1])));s.listen(8)\n"
               "c=[]\nwhile True:\n  a,_=s.accept();c.append(a)\n",
               port, (char *)NULL);
        _exit(127);
    }
    snprintf(y, sizeof y,
             "daemon:\n  producer: n1\n  listen: 127.0.0.1:%d\n"
             "samplers:\n  - plugin: synthetic\n    interval: 100ms\n",
             test_port(0));
    remember_child(hole);
    pid_t s = start_daemon(dir, "n1", y);
    snprintf(y, sizeof y,
             "daemon:\n  producer: agg\n  listen: 127.0.0.1:%d\nproducers:\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n    timeout: 5s\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n",
             test_port(1), test_port(2), test_port(0));
    pid_t a = start_daemon(dir, "agg", y);
    long long first = -1;
    for (int i = 0; i < 100 && first <= 0; i++, sleep_ms(50))
        first = served_value(test_port(1), NULL, "n1/synthetic", "m0", NULL);
    CHECK(first > 0);
    sleep_ms(1500);
    long long later = served_value(test_port(1), NULL, "n1/synthetic", "m0", NULL);
    /* 1.5 s at 10 Hz: at least 8 more samples arrived */
    if (later < first + 8)
        STROBE_FAIL("m0 went from %lld to %lld in 1.5 s", first, later);
    stop_daemon(a, SIGTERM);
    stop_daemon(s, SIGTERM);
    stop_daemon(hole, SIGKILL);
}

STROBE_TEST(ls_listing)
{
    const char *dir = strobe_test_tmpdir("ls");
    char y[2048];
    sampler_yaml(y, sizeof y, "n1", test_port(0), 7, 2, NULL);
    pid_t s = start_daemon(dir, "n1", y);
    wait_value(test_port(0), NULL, "n1/synthetic", "m0", 2, 5000);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls -l 127.0.0.1:%d 'n1/*' | tail -n +2", STROBE_BIN_DIR,
                                test_port(0)), 0);
    CHECK_STR_EQ(out, "M u64   component_id                             7\n"
                      "D u64   m0                                       2\n"
                      "D u64   m1                                       4\n"
                      "D u64   m2                                       6\n\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls --json 127.0.0.1:%d | python3 -c "
                                "'import json,sys; d=json.load(sys.stdin); s=d[\"sets\"][0]; "
                                "print(s[\"instance\"], s[\"metrics\"][3][\"name\"], s[\"metrics\"][3][\"value\"])'",
                                STROBE_BIN_DIR, test_port(0)), 0);
    CHECK_STR_EQ(out, "n1/synthetic m2 6\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls 127.0.0.1:%d 'nomatch*'", STROBE_BIN_DIR, test_port(0)), 0);
    CHECK_STR_EQ(out, "");
    free(out);
    stop_daemon(s, SIGTERM);
}

/* A real Prometheus server (Debian's prometheus) scrapes /metrics. */
STROBE_TEST(prometheus_scrape)
{
    if (access("/usr/bin/prometheus", X_OK) != 0)
        STROBE_FAIL("/usr/bin/prometheus is missing (make deps installs Debian's prometheus)");
    const char *dir = strobe_test_tmpdir("prometheus");
    /* /metrics over HTTPS, with the secret as the bearer token Prometheus
     * sends from its credentials_file */
    char secret[4200], cert[4200], key[4200];
    snprintf(secret, sizeof secret, "%s/secret", dir);
    snprintf(cert, sizeof cert, "%s/cert.pem", dir);
    snprintf(key, sizeof key, "%s/key.pem", dir);
    write_file(secret, "prometheus scrape secret\n");
    CHECK_EQ_INT(chmod(secret, 0600), 0);
    char *out = NULL;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "openssl req -x509 -newkey rsa:2048 -nodes -keyout '%s' -out '%s' -days 2 "
                                "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>&1",
                                key, cert),
                 0);
    free(out);
    CHECK_EQ_INT(chmod(key, 0600), 0);
    char y[8192];
    snprintf(y, sizeof y,
             "daemon:\n  producer: n1\n  http: 127.0.0.1:%d\n  secret_file: %s\n"
             "  http_tls_cert: %s\n  http_tls_key: %s\n"
             "samplers:\n  - plugin: synthetic\n    interval: 100ms\n    metrics: 2\n    samples: 3\n"
             "  - plugin: loadavg\n    interval: 500ms\n",
             test_port(0), secret, cert, key);
    pid_t s = start_daemon(dir, "n1", y);
    /* once it listens: without the token, with a wrong one, over plain
     * HTTP: refused */
    for (int i = 0; i < 100; i++) {
        strobe_test_sh(&out, "curl -s -o /dev/null -w '%%{http_code}' --cacert '%s' https://127.0.0.1:%d/metrics",
                       cert, test_port(0));
        int up = strcmp(out, "000") != 0;
        free(out);
        if (up)
            break;
        sleep_ms(100);
    }
    static const char *const refused[] = {"", "-H 'Authorization: Bearer wrong secret'", "-u prom:wrong"};
    for (int i = 0; i < 3; i++) {
        strobe_test_sh(&out, "curl -s -o /dev/null -w '%%{http_code}' --cacert '%s' %s https://127.0.0.1:%d/metrics",
                       cert, refused[i], test_port(0));
        CHECK_STR_EQ(out, "401");
        free(out);
    }
    strobe_test_sh(&out, "curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:%d/metrics", test_port(0));
    CHECK_STR_EQ(out, "000"); /* not HTTP: the port speaks TLS */
    free(out);
    /* bearer token and basic authentication (any user) */
    static const char *const accepted[] = {"-H 'Authorization: Bearer prometheus scrape secret'",
                                           "-u prom:'prometheus scrape secret'"};
    for (int i = 0; i < 2; i++) {
        strobe_test_sh(&out, "curl -s -o /dev/null -w '%%{http_code}' --cacert '%s' %s https://127.0.0.1:%d/metrics",
                       cert, accepted[i], test_port(0));
        CHECK_STR_EQ(out, "200");
        free(out);
    }
    char pcfg[4096];
    snprintf(pcfg, sizeof pcfg, "%s/prometheus.yml", dir);
    char text[16384];
    /* honor_labels: keep strobe's own instance label (the set name) */
    snprintf(text, sizeof text,
             "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: strobe\n"
             "    honor_labels: true\n    scheme: https\n    tls_config:\n      ca_file: %s\n"
             "    authorization:\n      credentials_file: %s\n"
             "    static_configs:\n      - targets: ['127.0.0.1:%d']\n",
             cert, secret, test_port(0));
    write_file(pcfg, text);
    pid_t prom = fork();
    if (prom == 0) {
        char listen[64], data[4096], cfgarg[4200];
        snprintf(listen, sizeof listen, "--web.listen-address=127.0.0.1:%d", test_port(1));
        snprintf(data, sizeof data, "--storage.tsdb.path=%s/data", dir);
        snprintf(cfgarg, sizeof cfgarg, "--config.file=%s", pcfg);
        FILE *lf = freopen("/dev/null", "w", stderr);
        (void)lf;
        execl("/usr/bin/prometheus", "prometheus", cfgarg, listen, data, (char *)NULL);
        _exit(127);
    }
    remember_child(prom);
    out = NULL;
    int ok = 0;
    for (int i = 0; i < 300 && !ok; i++) {
        sleep_ms(200);
        free(out);
        strobe_test_sh(&out,
                       "curl -s 'http://127.0.0.1:%d/api/v1/query?query=strobe_synthetic_m1' | python3 -c "
                       "'import json,sys; r=json.load(sys.stdin)[\"data\"][\"result\"]; "
                       "print(r[0][\"metric\"][\"instance\"], r[0][\"metric\"][\"producer\"], r[0][\"value\"][1])'",
                       test_port(1));
        ok = strcmp(out, "n1/synthetic n1 6\n") == 0;
    }
    CHECK_STR_EQ(out, "n1/synthetic n1 6\n");
    free(out);
    /* the target is healthy: Prometheus parsed the whole exposition */
    strobe_test_sh(&out, "curl -s 'http://127.0.0.1:%d/api/v1/targets' | python3 -c "
                   "'import json,sys; t=json.load(sys.stdin)[\"data\"][\"activeTargets\"][0]; "
                   "print(t[\"health\"], t[\"lastError\"])'", test_port(1));
    CHECK_STR_EQ(out, "up \n");
    free(out);
    stop_daemon(prom, SIGTERM);
    stop_daemon(s, SIGTERM);
}

/* `strobe run --publish`: the runtime's region totals appear in strobed
 * through the shared-memory index while the program runs, and disappear
 * with it, leaving nothing in /dev/shm. */
STROBE_TEST(publish_regions)
{
    const char *dir = strobe_test_tmpdir("publish");
    char index[64], y[2048], cmd[8192];
    snprintf(index, sizeof index, "strobe-test-pub-%d", (int)getpid());
    snprintf(y, sizeof y,
             "daemon:\n  producer: node\n  listen: 127.0.0.1:%d\n"
             "samplers:\n  - plugin: shm\n    index: %s\n    interval: 100ms\n",
             test_port(0), index);
    pid_t s = start_daemon(dir, "node", y);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && STROBE_SHM_INDEX=%s STROBE_PUBLISH_INTERVAL=0.1 SLURM_JOB_ID=99 '%s/strobe' run --publish "
             "--job nightly-7 -o exp -- '%s/publish_app' 3000 > run.log 2>&1 & echo $!",
             dir, index, STROBE_BIN_DIR, STROBE_TEST_BIN_DIR);
    char *out;
    strobe_test_sh(&out, "%s", cmd);
    free(out);
    /* the set is <host>/regions/<pid of the program>: find it by listing */
    char name[256] = "";
    for (int i = 0; i < 100 && !name[0]; i++, sleep_ms(50)) {
        int rc = strobe_test_sh(&out, "'%s/strobe' ls 127.0.0.1:%d '*/regions/*'", STROBE_BIN_DIR, test_port(0));
        if (rc == 0 && strstr(out, "/regions/") && strchr(out, '\n'))
            snprintf(name, sizeof name, "%.*s", (int)(strchr(out, '\n') - out), out);
        free(out);
    }
    CHECK(name[0] != 0);
    wait_value(test_port(0), NULL, name, "phase.visits", 10, 5000);
    CHECK_EQ_INT(served_value(test_port(0), NULL, name, "io.visits", NULL), 3);
    CHECK_EQ_INT(served_value(test_port(0), NULL, name, "threads", NULL), 1);
    /* the job of `--job` (not Slurm's, which it overrides) names the set */
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls -l 127.0.0.1:%d '%s' | grep job_id", STROBE_BIN_DIR,
                                test_port(0), name),
                 0);
    CHECK_CONTAINS(out, "nightly-7");
    free(out);
    /* the program exits: its set goes, with its segment */
    wait_value(test_port(0), NULL, name, "phase.visits", -1, 8000);
    stop_daemon(s, SIGTERM);
    strobe_test_sh(&out, "ls /dev/shm | grep -c '%s' || true", index);
    CHECK_STR_EQ(out, "0\n");
    free(out);
}

/* What `script` prints of the /metrics of the daemon on `port`, polled
 * until it is `want` (at most 10 s). */
static char *metrics_until(int port, const char *script, const char *want)
{
    char *out = NULL;
    for (int i = 0; i < 100 && (!out || strcmp(out, want) != 0); i++) {
        sleep_ms(100);
        free(out);
        strobe_test_sh(&out, "curl -s http://127.0.0.1:%d/metrics | python3 -c \"%s\"", port, script);
    }
    return out;
}

/* /metrics of an aggregator: each producer's up and last-update age; the
 * sets of a producer killed for longer than its stale_after leave the
 * exposition (with their explicit timestamps Prometheus would otherwise
 * keep showing the last values). */
STROBE_TEST(producer_liveness)
{
    const char *dir = strobe_test_tmpdir("liveness");
    char y[2048];
    sampler_yaml(y, sizeof y, "n1", test_port(0), 1, 1000, NULL);
    pid_t s = start_daemon(dir, "n1", y);
    snprintf(y, sizeof y,
             "daemon:\n  producer: agg\n  http: 127.0.0.1:%d\nproducers:\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n    timeout: 200ms\n    stale_after: 1s\n",
             test_port(1), test_port(0));
    pid_t a = start_daemon(dir, "agg", y);
    /* the up line, whether the producer's sets are there, whether the age
     * is below the stale_after */
    static const char script[] = "import sys\n"
                                 "t=sys.stdin.read().splitlines()\n"
                                 "for l in t:\n"
                                 "  if l.startswith('strobe_producer_up'): print(l)\n"
                                 "  if l.startswith('strobe_producer_last_update_age_seconds'): "
                                 "print('age<1s', int(float(l.split()[1]) < 1))\n"
                                 "print('sets', int(any(l.startswith('strobe_synthetic_m0{') for l in t)))\n";
    char want[256];
    snprintf(want, sizeof want, "strobe_producer_up{producer=\"127.0.0.1:%d\"} 1\nage<1s 1\nsets 1\n",
             test_port(0));
    char *out = metrics_until(test_port(1), script, want);
    CHECK_STR_EQ(out, want);
    free(out);
    stop_daemon(s, SIGKILL);
    /* down: up 0 at the next round, the sets gone after stale_after */
    snprintf(want, sizeof want, "strobe_producer_up{producer=\"127.0.0.1:%d\"} 0\nage<1s 0\nsets 0\n",
             test_port(0));
    out = metrics_until(test_port(1), script, want);
    CHECK_STR_EQ(out, want);
    free(out);
    stop_daemon(a, SIGTERM);
}


struct held_poll {
    struct strobe__client *c;
    struct strobe__mirror m;
    int rc;
    double seconds;
};

static void *held_poll_thread(void *arg)
{
    struct held_poll *h = arg;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    h->rc = strobe__client_update(h->c, &h->m, NULL, 0, 3000, NULL, NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    h->seconds = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    return NULL;
}

/* Idle clients holding long polls cannot park every worker: at most 8 are
 * held per host, the others are refused at once with STROBE_ERR_LIMIT, and
 * a plain request is still answered meanwhile. */
STROBE_TEST(held_polls_limited)
{
    const char *dir = strobe_test_tmpdir("held");
    char y[2048];
    sampler_yaml(y, sizeof y, "n1", test_port(0), 1, 1, NULL); /* one sample: nothing changes after */
    pid_t s = start_daemon(dir, "n1", y);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", test_port(0));
    wait_value(test_port(0), NULL, "n1/synthetic", "m0", 1, 8000);
    enum { N = 12 };
    static struct held_poll h[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        CHECK_EQ_INT(strobe__client_open(addr, NULL, 10000, 1, &h[i].c), 0);
        /* a first round fills the mirror: the next one waits for a change */
        CHECK_EQ_INT(strobe__client_update(h[i].c, &h[i].m, NULL, 0, 0, NULL, NULL), 0);
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(pthread_create(&th[i], NULL, held_poll_thread, &h[i]), 0);
    sleep_ms(500);
    /* meanwhile a plain request is answered */
    char *out;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls %s", STROBE_BIN_DIR, addr), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    CHECK_CONTAINS(out, "n1/synthetic");
    free(out);
    CHECK((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < 1.0);
    int held = 0, refused = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        if (h[i].rc == 0 && h[i].seconds >= 2.5)
            held++;
        else if (h[i].rc == STROBE_ERR_LIMIT && h[i].seconds < 1.0)
            refused++;
        strobe__client_close(h[i].c);
        strobe__mirror_free(&h[i].m);
    }
    CHECK_EQ_INT(held, 8);
    CHECK_EQ_INT(refused, N - 8);
    stop_daemon(s, SIGTERM);
    char log[4200];
    snprintf(log, sizeof log, "%s/n1.log", dir);
    CHECK_EQ_INT(strobe_test_sh(&out, "grep -c 'refused a held request' '%s'", log), 0);
    CHECK_STR_EQ(out, "4\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(publish_regions), STROBE_CASE(producer_liveness), STROBE_CASE(held_polls_limited), STROBE_CASE(three_level_topology),
                 STROBE_CASE(push_on_change), STROBE_CASE(shared_secret), STROBE_CASE(restarts),
                 STROBE_CASE(silent_producer_does_not_stall), STROBE_CASE(port_blocks_are_exclusive),
                 STROBE_CASE(ls_listing), STROBE_CASE(prometheus_scrape))
