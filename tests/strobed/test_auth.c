/* SPDX-License-Identifier: MIT */
/*
 * strobed authentication end to end: a client or aggregator holding the
 * secret refuses daemons that do not prove they know it (one without a
 * secret, one with another secret, one replaying a recorded proof); the
 * secret file's mode and owner are checked; refused proofs and
 * unauthenticated attempts are logged with the peer's address. After the
 * handshake every message carries a MAC: a proxy on the path that alters
 * or replays one gets it refused by the client or the daemon, and a
 * session cannot be used from another connection.
 */
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "daemons.h"
#include "transport/auth.h"
#include "transport/proto.h"
#include "transport/session.h"

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
    /* nng frees a closed socket in its own threads, later: finish that
     * before LeakSanitizer looks at exit (it once reported them) */
    static bool fini;
    if (!fini && atexit(nng_fini) == 0)
        fini = true;
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

/* Starts n1 with the secret in file good on port 0 and "open" without a
 * secret on port 1, and waits until both serve their values. */
static void genuine_and_open(const char *dir, const char *good, pid_t *genuine, pid_t *open_d)
{
    char y[8192];
    sampler_yaml(y, sizeof y, "n1", test_port(0), good);
    *genuine = start_daemon(dir, "n1", y);
    sampler_yaml(y, sizeof y, "open", test_port(1), NULL);
    *open_d = start_daemon(dir, "open", y);
    wait_value(test_port(0), GOOD, "n1/synthetic", "m0", 2, 5000);
    wait_value(test_port(1), NULL, "open/synthetic", "m0", 2, 5000);
}

STROBE_TEST(impostors_refused)
{
    const char *dir = strobe_test_tmpdir("impostors");
    char good[4096], other[4096], y[8192], want[256];
    char *out;
    two_secrets(dir, good, other);
    /* the genuine daemon, one without a secret, one with another secret */
    pid_t genuine, open_d;
    genuine_and_open(dir, good, &genuine, &open_d);
    sampler_yaml(y, sizeof y, "other", test_port(2), other);
    pid_t other_d = start_daemon(dir, "other", y);

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

/* ---- a man in the middle ------------------------------------------------------
 *
 * A TCP proxy between a client and a daemon that understands nng's
 * framing (an 8-byte SP header each way, then messages of a u64
 * big-endian length and a payload: the 4-byte request id, then strobed's
 * message) and does one thing, once, to the first message of a given type
 * going a given way: flip a byte of its body, or (replies) replace it
 * with the previous message of that type. */

enum mitm_action { MITM_NONE, MITM_FLIP, MITM_REPLAY };

struct mitm {
    int lfd, upstream;
    pthread_t th;
    pthread_mutex_t mtx;
    int to_client;            /* which way the victim goes */
    uint8_t type;             /* and its message type */
    enum mitm_action action;  /* MITM_NONE once done */
    uint8_t *saved;           /* MITM_REPLAY: the last such message seen */
    size_t saved_len;
};

struct mitm_pump {
    struct mitm *m;
    int from, to, to_client;
    _Atomic int *left; /* pumps of the connection still running */
};

static int read_full(int fd, void *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
    for (size_t put = 0; put < n;) {
        /* no SIGPIPE when the other end is gone */
        ssize_t r = send(fd, (const char *)buf + put, n - put, MSG_NOSIGNAL);
        if (r <= 0)
            return -1;
        put += (size_t)r;
    }
    return 0;
}

/* Does the armed action to one payload (request id + message) if it is
 * the victim; may replace *pl (malloc'ed) and *len. */
static void mitm_touch(struct mitm *m, int to_client, uint8_t **pl, size_t *len)
{
    if (*len < 4 + STROBE_PROTO_HDR)
        return;
    uint8_t *msg = *pl + 4;
    uint32_t body;
    memcpy(&body, msg + 8, 4);
    pthread_mutex_lock(&m->mtx);
    if (m->action != MITM_NONE && to_client == m->to_client && msg[5] == m->type &&
        4 + STROBE_PROTO_HDR + (size_t)body <= *len) {
        if (m->action == MITM_FLIP) {
            /* a reply's last body byte (a value of the last set); a
             * request's first (an UPDATE's wait_ms) */
            msg[STROBE_PROTO_HDR + (to_client ? body - 1 : 0)] ^= 0x01;
            m->action = MITM_NONE;
        } else if (m->saved) {
            uint8_t *v = malloc(4 + m->saved_len);
            CHECK(v != NULL);
            memcpy(v, *pl, 4); /* this request's id, the old reply */
            memcpy(v + 4, m->saved, m->saved_len);
            free(*pl);
            *pl = v;
            *len = 4 + m->saved_len;
            m->action = MITM_NONE;
        } else {
            m->saved = malloc(*len - 4);
            CHECK(m->saved != NULL);
            memcpy(m->saved, msg, *len - 4);
            m->saved_len = *len - 4;
        }
    }
    pthread_mutex_unlock(&m->mtx);
}

static void *mitm_pump_run(void *arg)
{
    struct mitm_pump *p = arg;
    uint8_t sp[8], lenbe[8];
    if (read_full(p->from, sp, 8) == 0 && write_full(p->to, sp, 8) == 0)
        while (read_full(p->from, lenbe, 8) == 0) {
            uint64_t len = 0;
            for (int i = 0; i < 8; i++)
                len = len << 8 | lenbe[i];
            CHECK(len < (64u << 20));
            size_t n = (size_t)len;
            uint8_t *pl = malloc(n ? n : 1);
            CHECK(pl != NULL);
            if (read_full(p->from, pl, n) < 0) {
                free(pl);
                break;
            }
            mitm_touch(p->m, p->to_client, &pl, &n);
            for (int i = 0; i < 8; i++)
                lenbe[i] = (uint8_t)((uint64_t)n >> (56 - 8 * i));
            int bad = write_full(p->to, lenbe, 8) < 0 || write_full(p->to, pl, n) < 0;
            free(pl);
            if (bad)
                break;
        }
    /* one way ended: so does the other, and the last one out closes */
    shutdown(p->from, SHUT_RDWR);
    shutdown(p->to, SHUT_RDWR);
    if (atomic_fetch_sub(p->left, 1) == 1) {
        close(p->from);
        close(p->to);
        free(p->left);
    }
    free(p);
    return NULL;
}

static void mitm_pump_start(struct mitm *m, int from, int to, int to_client, _Atomic int *left)
{
    struct mitm_pump *p = malloc(sizeof *p);
    CHECK(p != NULL);
    *p = (struct mitm_pump){ m, from, to, to_client, left };
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, mitm_pump_run, p), 0);
    pthread_detach(th);
}

static int tcp_socket(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    return fd;
}

static struct sockaddr_in loopback(int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static void *mitm_accept(void *arg)
{
    struct mitm *m = arg;
    for (;;) {
        int c = accept(m->lfd, NULL, NULL);
        if (c < 0)
            return NULL; /* mitm_stop shut it down */
        int u = tcp_socket();
        struct sockaddr_in a = loopback(m->upstream);
        if (connect(u, (struct sockaddr *)&a, sizeof a) < 0) {
            close(c);
            close(u);
            continue;
        }
        _Atomic int *left = malloc(sizeof *left);
        CHECK(left != NULL);
        atomic_init(left, 2);
        mitm_pump_start(m, c, u, 0, left);
        mitm_pump_start(m, u, c, 1, left);
    }
}

/* A proxy on loopback port `port` to the daemon on `upstream`. */
static void mitm_start(struct mitm *m, int port, int upstream)
{
    *m = (struct mitm){ .upstream = upstream };
    pthread_mutex_init(&m->mtx, NULL);
    m->lfd = tcp_socket();
    int one = 1;
    setsockopt(m->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = loopback(port);
    CHECK_EQ_INT(bind(m->lfd, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_EQ_INT(listen(m->lfd, 16), 0);
    CHECK_EQ_INT(pthread_create(&m->th, NULL, mitm_accept, m), 0);
}

/* Arms the proxy: `action` on the next message of `type` going to the
 * client (or to the daemon). */
static void mitm_arm(struct mitm *m, int to_client, uint8_t type, enum mitm_action action)
{
    pthread_mutex_lock(&m->mtx);
    m->to_client = to_client;
    m->type = type;
    m->action = action;
    free(m->saved);
    m->saved = NULL;
    pthread_mutex_unlock(&m->mtx);
}

static int mitm_done(struct mitm *m)
{
    pthread_mutex_lock(&m->mtx);
    int done = m->action == MITM_NONE;
    pthread_mutex_unlock(&m->mtx);
    return done;
}

/* Stops accepting (connections in flight end with their peers). */
static void mitm_stop(struct mitm *m)
{
    shutdown(m->lfd, SHUT_RDWR);
    pthread_join(m->th, NULL);
    close(m->lfd);
    free(m->saved);
}

/* One UPDATE round of client c into a fresh mirror: its code, and the
 * value of m0 of n1/synthetic (-1 when not there) in *m0. */
static int update_m0(struct strobe__client *c, long long *m0, size_t *nsets)
{
    struct strobe__mirror mr = { 0 };
    int rc = strobe__client_update(c, &mr, NULL, 0, 0, NULL, NULL);
    *m0 = -1;
    *nsets = mr.n;
    for (size_t i = 0; i < mr.n; i++)
        if (strcmp(strobe_set_instance(mr.sets[i]), "n1/synthetic") == 0)
            *m0 = (long long)strobe_set_get_u64(mr.sets[i], (uint32_t)strobe_set_metric_index(mr.sets[i], "m0"), 0);
    strobe__mirror_free(&mr);
    return rc;
}

/* A daemon n1 with the secret (in <dir>/good, path in good) serving
 * stable values, and a proxy to it whose address goes into addr. */
static pid_t daemon_behind_mitm(const char *dir, char *good, struct mitm *m, char *addr, size_t cap)
{
    char y[8192];
    snprintf(good, 4096, "%s/good", dir);
    write_private(good, GOOD "\n");
    sampler_yaml(y, sizeof y, "n1", test_port(0), good);
    pid_t d = start_daemon(dir, "n1", y);
    wait_value(test_port(0), GOOD, "n1/synthetic", "m0", 2, 5000);
    mitm_start(m, test_port(1), test_port(0));
    snprintf(addr, cap, "127.0.0.1:%d", test_port(1));
    return d;
}

/* A reply altered or replayed on the path is refused by the client (the
 * library, strobe ls, an aggregator), which uses nothing of it, says why,
 * drops the connection and authenticates the next one. A request altered
 * on the path is refused by the daemon, which logs it at warn and drops
 * the connection. */
STROBE_TEST(altered_messages_refused)
{
    const char *dir = strobe_test_tmpdir("altered");
    char good[4096], addr[64], want[512];
    char *out;
    struct mitm m;
    pid_t d = daemon_behind_mitm(dir, good, &m, addr, sizeof addr);
    struct strobe__client *c;
    CHECK_EQ_INT(strobe__client_open(addr, GOOD, 5000, 1, &c), 0);
    long long m0;
    size_t n;
    CHECK_EQ_INT(update_m0(c, &m0, &n), 0); /* through the proxy, untouched */
    CHECK_EQ_INT(m0, 2);
    /* one flipped bit in the data of an UPDATE reply */
    mitm_arm(&m, 1, STROBE_MSG_UPDATE, MITM_FLIP);
    CHECK_EQ_INT(update_m0(c, &m0, &n), -EBADMSG);
    CHECK(mitm_done(&m));
    CHECK_EQ_INT(n, 0); /* nothing of it reached the mirror */
    CHECK_STR_EQ(strobe__client_error(c), "reply failed authentication (bad MAC); connection dropped");
    /* the next round redials, authenticates again and gets the truth */
    CHECK_EQ_INT(update_m0(c, &m0, &n), 0);
    CHECK_EQ_INT(m0, 2);
    CHECK_EQ_INT(n, 1);
    /* a genuine reply of an earlier round, replayed for a later request */
    mitm_arm(&m, 1, STROBE_MSG_UPDATE, MITM_REPLAY);
    CHECK_EQ_INT(update_m0(c, &m0, &n), 0); /* recorded */
    CHECK_EQ_INT(update_m0(c, &m0, &n), -EBADMSG);
    CHECK(mitm_done(&m));
    CHECK_EQ_INT(n, 0);
    CHECK_STR_EQ(strobe__client_error(c),
                 "reply failed authentication (sequence number 2, expected 3); connection dropped");
    CHECK(!log_has(dir, "n1", "failed authentication"));
    /* a request altered on the path: wait_ms 0 made 1, harmless, but not
     * what the client asked; the daemon refuses it, says so and drops the
     * connection, and the client's next request goes through */
    mitm_arm(&m, 0, STROBE_MSG_UPDATE, MITM_FLIP);
    CHECK_EQ_INT(update_m0(c, &m0, &n), -ECONNRESET);
    CHECK(mitm_done(&m));
    wait_log(dir, "n1",
             "warn  127\\.0\\.0\\.1:[0-9]+: refused a request that failed authentication \\(bad MAC\\); "
             "connection dropped$");
    CHECK_EQ_INT(update_m0(c, &m0, &n), 0);
    CHECK_EQ_INT(m0, 2);
    strobe__client_close(c);

    /* strobe ls says so in one line */
    mitm_arm(&m, 1, STROBE_MSG_DIR, MITM_FLIP);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls --secret-file '%s' %s", STROBE_BIN_DIR, good, addr), 1);
    snprintf(want, sizeof want, "strobe: ls: %s: reply failed authentication (bad MAC); connection dropped\n",
             addr);
    CHECK_STR_EQ(out, want);
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "'%s/strobe' ls --secret-file '%s' %s", STROBE_BIN_DIR, good, addr), 0);
    CHECK_STR_EQ(out, "n1/synthetic\n");
    free(out);

    /* an aggregator pulling through the proxy: its first reply, every set
     * in full, altered; it says why, tries again, and what it then serves
     * is exactly what n1 serves */
    char y[8192], *genuine, *mirrored;
    snprintf(y, sizeof y,
             "daemon:\n  producer: agg\n  listen: 127.0.0.1:%d\n  secret_file: %s\nproducers:\n"
             "  - address: %s\n    interval: 100ms\n",
             test_port(2), good, addr);
    mitm_arm(&m, 1, STROBE_MSG_UPDATE, MITM_FLIP);
    pid_t agg = start_daemon(dir, "agg", y);
    snprintf(want, sizeof want,
             "warn  producer %s: .*reply failed authentication \\(bad MAC\\); connection dropped\\); retrying$",
             addr);
    wait_log(dir, "agg", want);
    CHECK(mitm_done(&m));
    wait_value(test_port(2), GOOD, "n1/synthetic", "m0", 2, 5000);
    CHECK_EQ_INT(strobe_test_sh(&genuine, "'%s/strobe' ls -l --secret-file '%s' 127.0.0.1:%d", STROBE_BIN_DIR,
                                good, test_port(0)),
                 0);
    CHECK_EQ_INT(strobe_test_sh(&mirrored, "'%s/strobe' ls -l --secret-file '%s' 127.0.0.1:%d n1/synthetic",
                                STROBE_BIN_DIR, good, test_port(2)),
                 0);
    CHECK_STR_EQ(mirrored, genuine);
    free(genuine);
    free(mirrored);
    stop_clean(agg, dir, "agg");
    mitm_stop(&m);
    stop_clean(d, dir, "n1");
    char *cnt;
    strobe_test_sh(&cnt, "grep -c 'failed authentication' '%s/n1.log'", dir);
    CHECK_STR_EQ(cnt, "1\n");
    free(cnt);
}

/* A raw connection to `port` authenticated as a client holding GOOD
 * does it: the session key in key. A request it sends is never sent again
 * (on a connection the daemon closed, its receive fails). */
static nng_socket raw_session(int port, uint8_t key[STROBE_SESSION_KEY])
{
    nng_socket s = raw_dial(port);
    nng_socket_set_ms(s, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
    uint8_t cn[STROBE_PROTO_NONCE] = { 9, 8, 7 }, reply[256], proof[STROBE_PROTO_MAC];
    size_t len;
    struct strobe__wr w = { 0 };
    struct strobe__rd r;
    uint8_t type;
    uint16_t flags;
    strobe__msg_begin(&w, STROBE_MSG_HELLO, 0);
    strobe__wr_bytes(&w, cn, sizeof cn);
    CHECK_EQ_INT(strobe__msg_finish(&w), 0);
    raw_roundtrip(s, &w, reply, sizeof reply, &len);
    CHECK_EQ_INT(strobe__msg_open(&r, reply, len, &type, &flags), 0);
    const uint8_t *sn = strobe__rd_bytes(&r, STROBE_PROTO_NONCE);
    CHECK(sn != NULL);
    CHECK_EQ_INT(strobe__auth_mac(GOOD, "client", sn, cn, proof), 0);
    CHECK_EQ_INT(strobe__session_key(GOOD, cn, sn, key), 0);
    strobe__msg_begin(&w, STROBE_MSG_AUTH, 0);
    strobe__wr_bytes(&w, proof, sizeof proof);
    CHECK_EQ_INT(strobe__msg_finish(&w), 0);
    raw_roundtrip(s, &w, reply, sizeof reply, &len);
    CHECK_EQ_INT(strobe__msg_open(&r, reply, len, &type, &flags), 0);
    CHECK_EQ_INT(type, STROBE_MSG_OK);
    strobe__wr_free(&w);
    return s;
}

/* A DIR request, sealed with key and seq (key NULL: not sealed). */
static void dir_request(struct strobe__wr *w, const uint8_t *key, uint64_t seq)
{
    strobe__msg_begin(w, STROBE_MSG_DIR, 0);
    CHECK_EQ_INT(strobe__msg_finish(w), 0);
    if (key)
        CHECK_EQ_INT(strobe__session_seal(w, key, STROBE_SESSION_TO_SERVER, seq), 0);
}

/* Sends w on s and expects no answer: the daemon closed the connection. */
static void raw_refused(nng_socket s, const struct strobe__wr *w)
{
    CHECK_EQ_INT(nng_send(s, w->buf, w->len, 0), 0);
    nng_msg *m;
    int rv = nng_recvmsg(s, &m, 0);
    if (rv == 0) {
        nng_msg_free(m);
        STROBE_FAIL("the daemon answered a request it should have refused");
    }
}

/* Replayed, reordered, unsealed and foreign requests are refused by the
 * daemon with one warn line each, and a session is bound to the
 * connection that authenticated: another cannot use it. Without a secret,
 * messages carry no MAC at all. */
STROBE_TEST(session_requests_checked)
{
    const char *dir = strobe_test_tmpdir("session");
    char good[4096];
    snprintf(good, sizeof good, "%s/good", dir);
    write_private(good, GOOD "\n");
    pid_t d, open_d;
    genuine_and_open(dir, good, &d, &open_d);
    uint8_t key[STROBE_SESSION_KEY], other[STROBE_SESSION_KEY], reply[4096];
    size_t len;
    struct strobe__wr w = { 0 }, w2 = { 0 };
    struct strobe__rd r;
    uint8_t type;
    uint16_t flags;
    uint64_t seq;

    /* a session: requests 1 and 3 answered, each reply sealed with the
     * request's number; then 3 again and 2 (late) refused */
    nng_socket a = raw_session(test_port(0), key);
    for (uint64_t q = 1; q <= 3; q += 2) {
        dir_request(&w, key, q);
        raw_roundtrip(a, &w, reply, sizeof reply, &len);
        CHECK_EQ_INT(strobe__msg_open(&r, reply, len, &type, &flags), STROBE_ERR_FORMAT); /* trailer */
        CHECK_EQ_INT(strobe__session_open(key, STROBE_SESSION_TO_CLIENT, reply, len, &seq, &len), 0);
        CHECK_EQ_U64(seq, q);
        CHECK_EQ_INT(strobe__msg_open(&r, reply, len, &type, &flags), 0);
        CHECK_EQ_INT(type, STROBE_MSG_DIR);
    }
    raw_refused(a, &w);
    wait_log(dir, "n1",
             "warn  127\\.0\\.0\\.1:[0-9]+: refused a request that failed authentication \\(sequence "
             "number 3 after 3: replayed or reordered\\); connection dropped$");
    nng_close(a);
    a = raw_session(test_port(0), key);
    dir_request(&w, key, 2);
    raw_roundtrip(a, &w, reply, sizeof reply, &len);
    dir_request(&w, key, 1);
    raw_refused(a, &w);
    wait_log(dir, "n1", "\\(sequence number 1 after 2: replayed or reordered\\); connection dropped$");
    nng_close(a);

    /* a request without its MAC, one sealed as a reply, one sealed with
     * another session's key */
    a = raw_session(test_port(0), key);
    dir_request(&w, NULL, 0);
    raw_refused(a, &w);
    wait_log(dir, "n1", "refused a request that failed authentication \\(missing MAC\\); connection dropped$");
    nng_close(a);
    a = raw_session(test_port(0), key);
    strobe__msg_begin(&w, STROBE_MSG_DIR, 0);
    CHECK_EQ_INT(strobe__msg_finish(&w), 0);
    CHECK_EQ_INT(strobe__session_seal(&w, key, STROBE_SESSION_TO_CLIENT, 1), 0);
    raw_refused(a, &w);
    nng_close(a);
    a = raw_session(test_port(0), key);
    nng_socket b = raw_session(test_port(0), other);
    CHECK(memcmp(key, other, sizeof key) != 0); /* fresh nonces, fresh keys */
    /* a's session, used on b */
    dir_request(&w, key, 1);
    raw_refused(b, &w);
    nng_close(b);
    /* and on a connection that never authenticated: refused as such */
    b = raw_dial(test_port(0));
    raw_roundtrip(b, &w, reply, sizeof reply, &len);
    CHECK_EQ_INT(strobe__msg_open(&r, reply, len, &type, &flags), 0);
    CHECK_EQ_INT(type, STROBE_MSG_ERROR);
    nng_close(b);
    /* a itself is still fine */
    raw_roundtrip(a, &w, reply, sizeof reply, &len);
    CHECK_EQ_INT(strobe__session_open(key, STROBE_SESSION_TO_CLIENT, reply, len, &seq, &len), 0);
    nng_close(a);
    stop_clean(d, dir, "n1");
    char *cnt;
    strobe_test_sh(&cnt, "grep -c 'failed authentication' '%s/n1.log'", dir);
    CHECK_STR_EQ(cnt, "5\n"); /* 2 sequence numbers, missing, as a reply, other key */
    free(cnt);
    strobe_test_sh(&cnt, "grep -c 'failed authentication (bad MAC)' '%s/n1.log'", dir);
    CHECK_STR_EQ(cnt, "2\n");
    free(cnt);

    /* without a secret: the same DIR is a whole message, both ways */
    b = raw_dial(test_port(1));
    dir_request(&w2, NULL, 0);
    raw_roundtrip(b, &w2, reply, sizeof reply, &len);
    CHECK_EQ_INT(strobe__msg_open(&r, reply, len, &type, &flags), 0);
    CHECK_EQ_INT(type, STROBE_MSG_DIR);
    nng_close(b);
    strobe__wr_free(&w);
    strobe__wr_free(&w2);
    stop_clean(open_d, dir, "open");
}

STROBE_TEST_MAIN(STROBE_CASE(impostors_refused), STROBE_CASE(replayed_proof_refused),
                 STROBE_CASE(secret_file_checked), STROBE_CASE(refusals_logged),
                 STROBE_CASE(altered_messages_refused), STROBE_CASE(session_requests_checked))
