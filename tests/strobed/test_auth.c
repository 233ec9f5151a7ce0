/* SPDX-License-Identifier: MIT */
/*
 * strobed authentication end to end: a client or aggregator holding the
 * secret refuses daemons that do not prove they know it (one without a
 * secret, one with another secret, one replaying a recorded proof); the
 * secret file's mode and owner are checked; refused proofs and
 * unauthenticated attempts are logged with the peer's address.
 */
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <pthread.h>

#include "daemons.h"
#include "transport/proto.h"

#define GOOD "correct horse battery staple"

/* <dir>/good holds GOOD, <dir>/other another secret (cap 4096 each). */
static void two_secrets(const char *dir, char *good, char *other)
{
    snprintf(good, 4096, "%s/good", dir);
    snprintf(other, 4096, "%s/other", dir);
    write_private(good, GOOD "\n");
    write_private(other, "another secret entirely\n");
}

static void sampler_yaml(char *buf, size_t cap, const char *producer, int port, const char *secret_file)
{
    char extra[4200] = "";
    if (secret_file)
        snprintf(extra, sizeof extra, "  secret_file: %s\n", secret_file);
    snprintf(buf, cap,
             "daemon:\n  producer: %s\n  listen: 127.0.0.1:%d\n%s"
             "samplers:\n  - plugin: synthetic\n    interval: 100ms\n    samples: 2\n",
             producer, port, extra);
}

/* One request on a raw req0 connection `s`: the reply's bytes in
 * reply/len (cap bytes at most). */
static void raw_roundtrip(nng_socket s, const struct strobe__wr *w, uint8_t *reply, size_t cap, size_t *len)
{
    CHECK_EQ_INT(nng_send(s, w->buf, w->len, 0), 0);
    nng_msg *m;
    CHECK_EQ_INT(nng_recvmsg(s, &m, 0), 0);
    CHECK(nng_msg_len(m) <= cap);
    *len = nng_msg_len(m);
    memcpy(reply, nng_msg_body(m), *len);
    nng_msg_free(m);
}

static nng_socket raw_dial(int port)
{
    nng_socket s;
    char url[64];
    snprintf(url, sizeof url, "tcp://127.0.0.1:%d", port);
    CHECK_EQ_INT(nng_req0_open(&s), 0);
    nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 5000);
    CHECK_EQ_INT(nng_dial(s, url, NULL, 0), 0);
    return s;
}

static void build_hello(struct strobe__wr *w)
{
    uint8_t cn[STROBE_PROTO_NONCE] = {1, 2, 3};
    strobe__msg_begin(w, STROBE_MSG_HELLO, 0);
    strobe__wr_bytes(w, cn, sizeof cn);
    CHECK_EQ_INT(strobe__msg_finish(w), 0);
}

/* An impostor that recorded a genuine daemon's HELLO reply answers every
 * HELLO with it, and anything else with a directory of one set. */
struct impostor {
    nng_socket sock;
    uint8_t hello[256];
    size_t hello_len;
};

static void *impostor_run(void *arg)
{
    struct impostor *im = arg;
    for (;;) {
        nng_msg *m;
        if (nng_recvmsg(im->sock, &m, 0) != 0)
            return NULL; /* closed */
        struct strobe__rd r;
        uint8_t type;
        uint16_t flags;
        int ok = strobe__msg_open(&r, nng_msg_body(m), nng_msg_len(m), &type, &flags) == 0;
        nng_msg_free(m);
        struct strobe__wr w = {0};
        if (ok && type == STROBE_MSG_HELLO) {
            strobe__wr_bytes(&w, im->hello, im->hello_len);
        } else {
            strobe__msg_begin(&w, STROBE_MSG_DIR, 0);
            strobe__wr_u32(&w, 1);
            strobe__wr_str(&w, "stolen/set");
            strobe__wr_u64(&w, 1);
            strobe__wr_u64(&w, 1);
            strobe__msg_finish(&w);
        }
        nng_send(im->sock, w.buf, w.len, 0);
        strobe__wr_free(&w);
    }
}

static int log_has(const char *dir, const char *name, const char *regex)
{
    return strobe_test_sh(NULL, "grep -qE '%s' '%s/%s.log'", regex, dir, name) == 0;
}

static void wait_log(const char *dir, const char *name, const char *regex)
{
    for (int t = 0; t < 100; t++, sleep_ms(50))
        if (log_has(dir, name, regex))
            return;
    char *log;
    strobe_test_sh(&log, "tail -n 20 '%s/%s.log'", dir, name);
    STROBE_FAIL("%s.log has no line matching %s:\n%s", name, regex, log);
}

STROBE_TEST(impostors_refused)
{
    const char *dir = strobe_test_tmpdir("impostors");
    char good[4096], other[4096], y[8192], want[256];
    char *out;
    two_secrets(dir, good, other);
    /* the genuine daemon, one without a secret, one with another secret */
    sampler_yaml(y, sizeof y, "n1", test_port(0), good);
    pid_t genuine = start_daemon(dir, "n1", y);
    sampler_yaml(y, sizeof y, "open", test_port(1), NULL);
    pid_t open_d = start_daemon(dir, "open", y);
    sampler_yaml(y, sizeof y, "other", test_port(2), other);
    pid_t other_d = start_daemon(dir, "other", y);
    wait_value(test_port(0), GOOD, "n1/synthetic", "m0", 2, 5000);
    wait_value(test_port(1), NULL, "open/synthetic", "m0", 2, 5000);

    /* strobe ls with the secret refuses both impostors, listing or not */
    for (int i = 1; i <= 2; i++)
        for (int lng = 0; lng < 2; lng++) {
            int rc = strobe_test_sh(&out, "'%s/strobe' ls %s --secret-file '%s' 127.0.0.1:%d", STROBE_BIN_DIR,
                                    lng ? "-l" : "", good, test_port(i));
            snprintf(want, sizeof want, "strobe: ls: 127.0.0.1:%d did not prove it knows the secret\n",
                     test_port(i));
            CHECK_EQ_INT(rc, 1);
            CHECK_STR_EQ(out, want);
            free(out);
        }
    /* without a secret, a daemon without one is served as before */
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls 127.0.0.1:%d", STROBE_BIN_DIR, test_port(1)), 0);
    CHECK_STR_EQ(out, "open/synthetic\n");
    free(out);
    /* the genuine daemon still serves the secret's holder */
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls --secret-file '%s' 127.0.0.1:%d", STROBE_BIN_DIR, good,
                                test_port(0)),
                 0);
    CHECK_STR_EQ(out, "n1/synthetic\n");
    free(out);

    /* an aggregator with the secret mirrors the genuine daemon only, and
     * says why it refuses the others */
    snprintf(y, sizeof y,
             "daemon:\n  producer: agg\n  listen: 127.0.0.1:%d\n  secret_file: %s\nproducers:\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n"
             "  - address: 127.0.0.1:%d\n    interval: 100ms\n    mode: push\n",
             test_port(3), good, test_port(0), test_port(1), test_port(2));
    pid_t agg = start_daemon(dir, "agg", y);
    wait_value(test_port(3), GOOD, "n1/synthetic", "m0", 2, 5000);
    for (int i = 1; i <= 2; i++) {
        char re[256];
        snprintf(
            re, sizeof re,
            "warn  producer: 127\\.0\\.0\\.1:%d did not prove it knows the secret; next attempt in 0\\.1 s$",
            test_port(i));
        wait_log(dir, "agg", re);
        /* the back-off doubles */
        snprintf(
            re, sizeof re,
            "warn  producer: 127\\.0\\.0\\.1:%d did not prove it knows the secret; next attempt in 0\\.4 s$",
            test_port(i));
        wait_log(dir, "agg", re);
    }
    CHECK_EQ_INT(served_value(test_port(3), GOOD, "open/synthetic", "m0", NULL), -1);
    CHECK_EQ_INT(served_value(test_port(3), GOOD, "other/synthetic", "m0", NULL), -1);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls --secret-file '%s' 127.0.0.1:%d", STROBE_BIN_DIR, good,
                                test_port(3)),
                 0);
    CHECK_STR_EQ(out, "n1/synthetic\n");
    free(out);
    stop_clean(agg, dir, "agg");
    stop_clean(other_d, dir, "other");
    stop_clean(open_d, dir, "open");
    stop_clean(genuine, dir, "n1");
}

/* A proof recorded from a genuine handshake, replayed by an impostor: it
 * was made over another client nonce, so it proves nothing. */
STROBE_TEST(replayed_proof_refused)
{
    const char *dir = strobe_test_tmpdir("replay");
    char good[4096], y[8192], want[256], url[64];
    char *out;
    snprintf(good, sizeof good, "%s/good", dir);
    write_private(good, GOOD "\n");
    sampler_yaml(y, sizeof y, "n1", test_port(0), good);
    pid_t genuine = start_daemon(dir, "n1", y);
    wait_value(test_port(0), GOOD, "n1/synthetic", "m0", 2, 5000);

    struct impostor im = {0};
    nng_socket s = raw_dial(test_port(0));
    struct strobe__wr w = {0};
    build_hello(&w);
    raw_roundtrip(s, &w, im.hello, sizeof im.hello, &im.hello_len);
    strobe__wr_free(&w);
    nng_close(s);
    /* what was recorded is a genuine proof: header + nonce + MAC */
    CHECK_EQ_INT(im.hello_len, STROBE_PROTO_HDR + STROBE_PROTO_NONCE + STROBE_PROTO_MAC);

    CHECK_EQ_INT(nng_rep0_open(&im.sock), 0);
    snprintf(url, sizeof url, "tcp://127.0.0.1:%d", test_port(1));
    CHECK_EQ_INT(nng_listen(im.sock, url, NULL, 0), 0);
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, impostor_run, &im), 0);
    /* the impostor does serve a client without a secret... */
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls 127.0.0.1:%d", STROBE_BIN_DIR, test_port(1)), 0);
    CHECK_STR_EQ(out, "stolen/set\n");
    free(out);
    /* ...but the secret's holder sees through the replay */
    int rc = strobe_test_sh(&out, "'%s/strobe' ls --secret-file '%s' 127.0.0.1:%d", STROBE_BIN_DIR, good,
                            test_port(1));
    snprintf(want, sizeof want, "strobe: ls: 127.0.0.1:%d did not prove it knows the secret\n", test_port(1));
    CHECK_EQ_INT(rc, 1);
    CHECK_STR_EQ(out, want);
    free(out);
    nng_close(im.sock);
    pthread_join(th, NULL);
    stop_clean(genuine, dir, "n1");
}

/* strobed at --check and at start, and strobe ls, refuse a secret file
 * that group or others can access, or that another user owns. */
STROBE_TEST(secret_file_checked)
{
    const char *dir = strobe_test_tmpdir("secret_file");
    char path[4096], y[8192], want[8192];
    char *out;
    snprintf(path, sizeof path, "%s/secret", dir);
    write_private(path, GOOD "\n");
    sampler_yaml(y, sizeof y, "n1", test_port(0), path);
    char cfg[4200];
    snprintf(cfg, sizeof cfg, "%s/n1.yaml", dir);
    write_private(cfg, y);
    static const unsigned modes[] = {0640, 0604, 0620, 0644};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        CHECK_EQ_INT(chmod(path, modes[i]), 0);
        snprintf(want, sizeof want,
                 "strobed: %s: mode %04o lets group or others access the secret (chmod 600)\n", path,
                 modes[i]);
        CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobed' -c '%s' --check", STROBE_BIN_DIR, cfg), 1);
        CHECK_STR_EQ(out, want);
        free(out);
        CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobed' -c '%s'", STROBE_BIN_DIR, cfg), 1);
        CHECK_STR_EQ(out, want);
        free(out);
        snprintf(want, sizeof want,
                 "strobe: ls: %s: mode %04o lets group or others access the secret (chmod 600)\n", path,
                 modes[i]);
        CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls --secret-file '%s' 127.0.0.1:%d", STROBE_BIN_DIR,
                                    path, test_port(0)),
                     1);
        CHECK_STR_EQ(out, want);
        free(out);
    }
    CHECK_EQ_INT(chmod(path, 0600), 0);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobed' -c '%s' --check", STROBE_BIN_DIR, cfg), 0);
    free(out);
    /* a file of another user: only root can make one to test with */
    if (geteuid() == 0) {
        CHECK_EQ_INT(chown(path, 4242, (gid_t)-1), 0);
        snprintf(want, sizeof want,
                 "strobed: %s: owned by uid 4242, not by the user running this (uid 0) or root\n", path);
        CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobed' -c '%s' --check", STROBE_BIN_DIR, cfg), 1);
        CHECK_STR_EQ(out, want);
        free(out);
        snprintf(want, sizeof want,
                 "strobe: ls: %s: owned by uid 4242, not by the user running this (uid 0) or root\n", path);
        CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls --secret-file '%s' 127.0.0.1:%d", STROBE_BIN_DIR,
                                    path, test_port(0)),
                     1);
        CHECK_STR_EQ(out, want);
        free(out);
    }
}

/* The daemon logs, with the peer's address, a refused proof, a request
 * before authentication, and a connection that leaves unauthenticated. */
STROBE_TEST(refusals_logged)
{
    const char *dir = strobe_test_tmpdir("refusals");
    char good[4096], other[4096], y[8192];
    two_secrets(dir, good, other);
    sampler_yaml(y, sizeof y, "n1", test_port(0), good);
    pid_t d = start_daemon(dir, "n1", y);
    wait_value(test_port(0), GOOD, "n1/synthetic", "m0", 2, 5000);
    CHECK(!log_has(dir, "n1", "warn"));

    /* a client without the secret */
    CHECK_EQ_INT(strobe_test_sh(NULL, "'%s/strobe' ls 127.0.0.1:%d", STROBE_BIN_DIR, test_port(0)), 1);
    wait_log(dir, "n1", "warn  127\\.0\\.0\\.1:[0-9]+: refused a request without authentication$");
    /* a client with another secret refuses the daemon and leaves */
    CHECK_EQ_INT(strobe_test_sh(NULL, "'%s/strobe' ls --secret-file '%s' 127.0.0.1:%d", STROBE_BIN_DIR, other,
                                test_port(0)),
                 1);
    wait_log(dir, "n1", "warn  127\\.0\\.0\\.1:[0-9]+: closed the connection without authenticating$");
    /* a wrong proof */
    nng_socket s = raw_dial(test_port(0));
    struct strobe__wr w = {0};
    uint8_t reply[256];
    size_t len;
    build_hello(&w);
    raw_roundtrip(s, &w, reply, sizeof reply, &len);
    uint8_t mac[STROBE_PROTO_MAC] = {0};
    strobe__msg_begin(&w, STROBE_MSG_AUTH, 0);
    strobe__wr_bytes(&w, mac, sizeof mac);
    CHECK_EQ_INT(strobe__msg_finish(&w), 0);
    raw_roundtrip(s, &w, reply, sizeof reply, &len);
    struct strobe__rd r;
    uint8_t type;
    uint16_t flags;
    CHECK_EQ_INT(strobe__msg_open(&r, reply, len, &type, &flags), 0);
    CHECK_EQ_INT(type, STROBE_MSG_ERROR);
    strobe__wr_free(&w);
    wait_log(dir, "n1", "warn  127\\.0\\.0\\.1:[0-9]+: refused its proof of the shared secret$");
    nng_close(s);
    stop_clean(d, dir, "n1");
    /* each refusal once: 2 connections left unauthenticated (the other
     * secret's and the wrong proof's) */
    char *n;
    strobe_test_sh(
        &n,
        "grep -c 'without authenticating' '%s/n1.log'; grep -c 'without authentication$' '%s/n1.log'; "
        "grep -c 'refused its proof' '%s/n1.log'",
        dir, dir, dir);
    CHECK_STR_EQ(n, "2\n1\n1\n");
    free(n);
}

STROBE_TEST_MAIN(STROBE_CASE(impostors_refused), STROBE_CASE(replayed_proof_refused),
                 STROBE_CASE(secret_file_checked), STROBE_CASE(refusals_logged))
