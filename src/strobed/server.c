/* SPDX-License-Identifier: MIT */
/*
 * strobed request server (server.h). nng's asynchronous pattern: a pool
 * of contexts, each a small state machine (receive -> answer or park ->
 * send -> receive) driven by aio callbacks on nng's threads. Parked long
 * polls are answered by one waiter thread that sleeps on the daemon's
 * change condition. Control requests run on a thread of their own: a
 * command may close client sockets (stopping a producer), which nng does
 * not allow from its own callbacks (nng_close then waits for the very
 * task threads it blocks: the daemon hung). Authentication state is per pipe (connection): a
 * reconnect starts unauthenticated. With a secret, the handshake gives
 * the pipe a session key, and every later request on it must carry a MAC
 * under that key with a sequence number above the last one (session.h);
 * its reply is sealed with the same key and number. A request that fails
 * this ends the session and the connection. Refused proofs, requests
 * before authentication, requests failing their MAC and connections
 * closed after HELLO without authenticating are logged at warn with the
 * peer's address.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "monitor/set.h"
#include "strobed/control.h"
#include "strobed/daemon.h"
#include "strobed/server.h"
#include "transport/auth.h"
#include "transport/proto.h"
#include "transport/session.h"

#define WORKERS 32
#define MAX_PIPES 4096
/* Held long polls (push mode) may take at most PARK_MAX workers, so that
 * PARK_RESERVE are always free to answer at once, and at most
 * PARK_PER_HOST of them may come from one host: idle clients can no longer
 * park every worker and lock everyone else out. A request over a limit is
 * refused with STROBE_ERR_LIMIT (the client retries after an interval). */
#define PARK_RESERVE 8
#define PARK_MAX (WORKERS - PARK_RESERVE)
#define PARK_PER_HOST 8
#define REPLY_BUF_KEEP (1u << 20)

enum wstate { W_RECV, W_SEND, W_PARKED, W_CTL };

struct worker {
    struct strobe__server *s;
    _Atomic int state; /* enum wstate; atomic: the waiter looks at it while nng callbacks change it */
    nng_aio *aio;
    nng_ctx ctx;
    nng_msg *req;     /* parked request, or control request for the controller */
    char host[64];     /* parked: the peer's address without its port */
    uint64_t deadline; /* parked: CLOCK_MONOTONIC ns */
    uint64_t seq;      /* parked: daemon change_seq when parked */
    struct strobe__seal seal; /* what the answer is sealed with */
    struct strobe__wr wr;
};

struct pipe_auth {
    uint32_t id;
    int authed; /* with a secret: the session below is on */
    uint8_t expect[STROBE_PROTO_MAC]; /* the client proof we wait for */
    uint8_t key[STROBE_SESSION_KEY];  /* session key, from the HELLO's nonces */
    uint64_t seq;                     /* the last request's sequence number */
    char peer[64];                    /* for the log when it leaves unauthenticated */
};

struct strobe__server {
    struct strobe__daemon *d;
    nng_socket sock;
    struct worker w[WORKERS];
    pthread_mutex_t pmtx; /* guards pipes */
    struct pipe_auth *pipes;
    size_t npipes;
    pthread_t waiter;
    int waiter_started;
    int stopping;
    /* the controller thread: runs the requests of workers in W_CTL */
    pthread_mutex_t cmtx;
    pthread_cond_t cwake;
    pthread_t controller;
    int controller_started;
    int cstop;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- per-pipe authentication ------------------------------------------------ */

/* "HOST:PORT" of connection pid, or "connection N" when nng cannot say
 * (the fuzzers answer requests without a socket). */
static void peer_name(uint32_t pid, char *buf, size_t cap)
{
    nng_pipe p = { .id = pid };
    nng_sockaddr sa;
    char host[INET6_ADDRSTRLEN];
    int got = nng_pipe_get_addr(p, NNG_OPT_REMADDR, &sa) == 0;
    if (got && sa.s_family == NNG_AF_INET && inet_ntop(AF_INET, &sa.s_in.sa_addr, host, sizeof host))
        snprintf(buf, cap, "%s:%u", host, (unsigned)ntohs(sa.s_in.sa_port));
    else if (got && sa.s_family == NNG_AF_INET6 &&
             inet_ntop(AF_INET6, sa.s_in6.sa_addr, host, sizeof host))
        snprintf(buf, cap, "[%s]:%u", host, (unsigned)ntohs(sa.s_in6.sa_port));
    else
        snprintf(buf, cap, "connection %u", pid);
}

static struct pipe_auth *pipe_get(struct strobe__server *s, uint32_t id, int create)
{
    for (size_t i = 0; i < s->npipes; i++)
        if (s->pipes[i].id == id)
            return &s->pipes[i];
    if (!create || s->npipes == MAX_PIPES)
        return NULL;
    s->pipes[s->npipes] = (struct pipe_auth){ .id = id };
    return &s->pipes[s->npipes++];
}

static void pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    struct strobe__server *s = arg;
    if (ev != NNG_PIPE_EV_REM_POST)
        return;
    pthread_mutex_lock(&s->pmtx);
    for (size_t i = 0; i < s->npipes; i++)
        if (s->pipes[i].id == (uint32_t)nng_pipe_id(p)) {
            if (!s->pipes[i].authed)
                strobe__log(s->d, STROBE_LOG_WARN, "%s: closed the connection without authenticating",
                            s->pipes[i].peer);
            s->pipes[i] = s->pipes[--s->npipes];
            break;
        }
    pthread_mutex_unlock(&s->pmtx);
}

/* ---- request handling --------------------------------------------------------- */

static int published(const struct strobe__set_entry *e)
{
    return e->flags & STROBE_SET_PUBLISH;
}

static void reply_dir(struct strobe__server *s, struct strobe__wr *w)
{
    struct strobe__daemon *d = s->d;
    strobe__msg_begin(w, STROBE_MSG_DIR, 0);
    pthread_mutex_lock(&d->lock);
    uint32_t n = 0;
    for (size_t i = 0; i < d->nsets; i++)
        n += published(&d->sets[i]) != 0;
    strobe__wr_u32(w, n);
    for (size_t i = 0; i < d->nsets; i++) {
        if (!published(&d->sets[i]))
            continue;
        strobe__wr_str(w, strobe_set_instance(d->sets[i].set));
        strobe__wr_u64(w, strobe_set_meta_gn(d->sets[i].set));
        strobe__wr_u64(w, strobe_set_data_gn(d->sets[i].set));
    }
    pthread_mutex_unlock(&d->lock);
    strobe__msg_finish(w);
}

/* Appends one UPDATE item for set e, given what the client knows.
 * Returns 1 when something changed. */
static int put_item(struct strobe__wr *w, const char *name, strobe_set *set, uint64_t meta_gn,
                    uint64_t data_gn, uint64_t schema_sum)
{
    if (!set) {
        strobe__wr_str(w, name);
        strobe__wr_u8(w, STROBE_UPD_GONE);
        strobe__wr_u64(w, 0);
        strobe__wr_u64(w, 0);
        return 1;
    }
    uint64_t mg = strobe_set_meta_gn(set), dg = strobe_set_data_gn(set);
    /* a different schema under the same name (a producer restarted with
     * other metrics) needs the meta whatever the generations say */
    if (schema_sum != strobe_set_schema_sum(set))
        meta_gn = ~mg;
    uint8_t status = mg != meta_gn ? STROBE_UPD_FULL : dg != data_gn ? STROBE_UPD_DATA : STROBE_UPD_UNCHANGED;
    strobe__wr_str(w, name);
    strobe__wr_u8(w, status);
    strobe__wr_u64(w, mg);
    strobe__wr_u64(w, dg);
    if (status == STROBE_UPD_FULL) {
        size_t ml;
        const void *meta = strobe_set_meta(set, &ml);
        strobe__wr_u32(w, (uint32_t)ml);
        strobe__wr_bytes(w, meta, ml);
    }
    if (status != STROBE_UPD_UNCHANGED) {
        size_t dl;
        strobe_set_data(set, &dl);
        strobe__wr_u32(w, (uint32_t)dl);
        /* snapshot straight into the message: reserve, then copy */
        size_t at = w->len;
        strobe__wr_bytes(w, strobe_set_data(set, NULL), dl);
        if (!w->err) {
            uint64_t tmp[512];
            void *buf = dl <= sizeof tmp ? (void *)tmp : malloc(dl);
            if (buf && strobe_set_snapshot_data(set, buf, dl) != -ENOSPC)
                memcpy(w->buf + at, buf, dl);
            if (buf != tmp)
                free(buf);
        }
    }
    return status != STROBE_UPD_UNCHANGED;
}

/* Whether name matches one of the np globs (np = 0: no filter). */
static int matches(const char *name, char (*pats)[256], uint32_t np)
{
    if (np == 0)
        return 1;
    for (uint32_t k = 0; k < np; k++)
        if (fnmatch(pats[k], name, 0) == 0)
            return 1;
    return 0;
}

/* Builds the UPDATE reply for request body r (lock held). Returns the
 * number of changed items, or a negative code for a malformed request. */
static int reply_update(struct strobe__daemon *d, struct strobe__rd r, uint16_t flags,
                        struct strobe__wr *w, uint32_t *wait_ms)
{
    *wait_ms = strobe__rd_u32(&r);
    uint32_t n = strobe__rd_u32(&r);
    if (r.err || *wait_ms > STROBE_PROTO_MAX_WAIT_MS || n > r.n / 27)
        return STROBE_ERR_FORMAT;
    strobe__msg_begin(w, STROBE_MSG_UPDATE, 0);
    size_t count_at = w->len;
    strobe__wr_u32(w, 0);
    uint32_t items = 0;
    int changed = 0;
    /* sets the client listed */
    char name[256];
    char *listed = calloc(d->nsets + 1, 1);
    if (!listed)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        if (strobe__rd_str(&r, name, sizeof name) < 0)
            break;
        uint64_t mg = strobe__rd_u64(&r), dg = strobe__rd_u64(&r), sum = strobe__rd_u64(&r);
        if (r.err)
            break;
        struct strobe__set_entry *e = strobe__daemon_set_find(d, name);
        if (e && !published(e))
            e = NULL;
        if (e)
            listed[e - d->sets] = 1;
        changed += put_item(w, name, e ? e->set : NULL, mg, dg, sum);
        items++;
    }
    /* optional globs that limit the other sets sent */
    char (*pats)[256] = NULL;
    uint32_t np = 0;
    if (!r.err && (flags & STROBE_UPDATE_FILTER)) {
        np = strobe__rd_u32(&r);
        if (np > STROBE_PROTO_MAX_PATTERNS || np > r.n / 3 || !(pats = calloc(np ? np : 1, sizeof *pats)))
            r.err = STROBE_ERR_FORMAT;
        for (uint32_t k = 0; !r.err && k < np; k++)
            strobe__rd_str(&r, pats[k], sizeof pats[k]);
    }
    if (r.err || r.n) {
        free(pats);
        free(listed);
        return STROBE_ERR_FORMAT;
    }
    /* and, when asked, every other published set (that matches) in full,
     * a page at a time: the client lists them next round and gets more */
    size_t page_at = w->len;
    uint16_t more = 0;
    if (flags & STROBE_UPDATE_ALL)
        for (size_t i = 0; i < d->nsets; i++)
            if (published(&d->sets[i]) && !listed[i] && matches(strobe_set_instance(d->sets[i].set), pats, np)) {
                if (w->len - page_at >= STROBE_PROTO_UPDATE_PAGE) {
                    more = STROBE_UPDATE_MORE;
                    break;
                }
                changed += put_item(w, strobe_set_instance(d->sets[i].set), d->sets[i].set, 0, 0,
                                    strobe_set_schema_sum(d->sets[i].set));
                items++;
            }
    free(pats);
    free(listed);
    if (!w->err) {
        memcpy(w->buf + count_at, &items, 4);
        memcpy(w->buf + 6, &more, 2); /* the header's flags */
    }
    strobe__msg_finish(w);
    return w->err ? w->err : changed;
}

static void send_wr(struct worker *wk)
{
    nng_msg *msg;
    if (wk->seal.on)
        strobe__session_seal(&wk->wr, wk->seal.key, STROBE_SESSION_TO_CLIENT, wk->seal.seq);
    if (wk->wr.err || nng_msg_alloc(&msg, 0) != 0 || nng_msg_append(msg, wk->wr.buf, wk->wr.len) != 0) {
        /* cannot answer: drop the request, the client times out */
        wk->state = W_RECV;
        nng_ctx_recv(wk->ctx, wk->aio);
        return;
    }
    /* copied: a big reply's buffer is not kept for the next one (each of
     * the WORKERS holding the largest reply it ever built made a
     * producer's memory grow to several times its sets' and stay there) */
    if (wk->wr.cap > REPLY_BUF_KEEP)
        strobe__wr_free(&wk->wr);
    wk->state = W_SEND;
    nng_aio_set_msg(wk->aio, msg);
    nng_ctx_send(wk->ctx, wk->aio);
}

/* Handles HELLO and AUTH itself (answer in w, returns 0); for any other
 * request returns 1 when the connection may proceed, else 0 with an
 * ERROR in w. pid names the connection (nng pipe id). */
static int check_auth(struct strobe__server *s, uint32_t pid, uint8_t type, struct strobe__rd *r,
                      struct strobe__wr *w)
{
    const char *secret = s->d->secret;
    if (type != STROBE_MSG_HELLO && type != STROBE_MSG_AUTH && !secret)
        return 1;
    pthread_mutex_lock(&s->pmtx);
    struct pipe_auth *pa = pipe_get(s, pid, type == STROBE_MSG_HELLO);
    int ok = 0;
    if (type == STROBE_MSG_HELLO) {
        const uint8_t *cn = strobe__rd_bytes(r, STROBE_PROTO_NONCE);
        uint8_t sn[STROBE_PROTO_NONCE], proof[STROBE_PROTO_MAC] = { 0 };
        if (!cn || r->n || !pa || strobe__auth_nonce(sn) < 0) {
            strobe__msg_error(w, STROBE_ERR_FORMAT, pa ? "malformed HELLO" : "too many connections");
        } else {
            pa->authed = !secret;
            peer_name(pid, pa->peer, sizeof pa->peer);
            if (secret) {
                /* our proof now; the client's expected proof kept for
                 * AUTH, and the key of the session it opens */
                strobe__auth_mac(secret, "server", cn, sn, proof);
                strobe__auth_mac(secret, "client", sn, cn, pa->expect);
                strobe__session_key(secret, cn, sn, pa->key);
                pa->seq = 0;
            }
            strobe__msg_begin(w, STROBE_MSG_HELLO, secret ? STROBE_HELLO_AUTH_REQUIRED : 0);
            strobe__wr_bytes(w, sn, sizeof sn);
            strobe__wr_bytes(w, proof, sizeof proof);
            strobe__msg_finish(w);
        }
    } else if (type == STROBE_MSG_AUTH) {
        const uint8_t *mac = strobe__rd_bytes(r, STROBE_PROTO_MAC);
        if (pa && secret && mac && !r->n && strobe__auth_equal(mac, pa->expect)) {
            pa->authed = 1;
            strobe__msg_begin(w, STROBE_MSG_OK, 0);
            strobe__msg_finish(w);
        } else {
            char peer[64];
            peer_name(pid, peer, sizeof peer);
            strobe__log(s->d, STROBE_LOG_WARN, "%s: refused its proof of the shared secret", peer);
            strobe__msg_error(w, -EACCES, "authentication failed");
        }
    } else if (pa && pa->authed) {
        ok = 1;
    } else {
        char peer[64];
        peer_name(pid, peer, sizeof peer);
        strobe__log(s->d, STROBE_LOG_WARN, "%s: refused a request without authentication", peer);
        strobe__msg_error(w, -EACCES, "authenticate first (HELLO, AUTH)");
    }
    pthread_mutex_unlock(&s->pmtx);
    return ok;
}

/* Runtime control (control.h). Only over an authenticated connection:
 * check_auth let the request through, which with a secret means the
 * connection proved it knows the secret; without a secret nobody could,
 * and control is refused (a control request can load plugins and write
 * files as the daemon's user). */
static void reply_ctl(struct strobe__server *s, uint32_t pid, struct strobe__rd *r, struct strobe__wr *w)
{
    char peer[64];
    peer_name(pid, peer, sizeof peer);
    uint16_t n = strobe__rd_u16(r);
    char(*words)[256] = n <= STROBE__CONTROL_MAX_WORDS ? calloc(n ? n : 1, sizeof *words) : NULL;
    char *argv[STROBE__CONTROL_MAX_WORDS];
    for (uint16_t i = 0; words && i < n; i++) {
        strobe__rd_str(r, words[i], sizeof words[i]);
        argv[i] = words[i];
    }
    if (!words || r->err || r->n || n == 0) {
        free(words);
        strobe__msg_error(w, STROBE_ERR_FORMAT, "malformed CTL request");
        return;
    }
    /* checked after decoding, so that the fuzzer reaches the decoder */
    if (!s->d->secret) {
        free(words);
        strobe__log(s->d, STROBE_LOG_WARN, "%s: refused a control request: no shared secret", peer);
        strobe__msg_error(w, -EPERM, "runtime control needs a shared secret (daemon: secret_file)");
        return;
    }
    /* who asked for what, before it happens */
    char line[1024];
    size_t len = 0;
    for (uint16_t i = 0; i < n && len < sizeof line; i++)
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", i ? " " : "", words[i]);
    strobe__log(s->d, STROBE_LOG_INFO, "%s: control: %s", peer, line);
    char *text, err[1024] = "";
    int rc = strobe__control_run(s->d, argv, n, &text, err, sizeof err);
    if (rc < 0) {
        strobe__log(s->d, STROBE_LOG_WARN, "%s: control refused: %s", peer, err);
        strobe__msg_error(w, rc, err);
    } else {
        strobe__msg_begin(w, STROBE_MSG_CTL, 0);
        strobe__wr_u32(w, (uint32_t)strlen(text));
        strobe__wr_bytes(w, text, strlen(text));
        strobe__msg_finish(w);
        free(text);
    }
    free(words);
}

/* Within an authenticated connection (a secret, pipe pid authenticated),
 * checks the request's MAC and sequence number and takes its trailer off
 * *len, filling seal for the reply. 0 when the request may go on (also
 * outside a session, and for a HELLO that starts a new handshake);
 * -EBADMSG when it fails: logged, and the session ended. */
static int unseal(struct strobe__server *s, uint32_t pid, const void *req, size_t *len,
                  struct strobe__seal *seal)
{
    struct strobe__rd r;
    uint8_t type;
    uint16_t flags;
    if (!s->d->secret ||
        (strobe__msg_open(&r, req, *len, &type, &flags) == 0 && type == STROBE_MSG_HELLO))
        return 0;
    pthread_mutex_lock(&s->pmtx);
    struct pipe_auth *pa = pipe_get(s, pid, 0);
    if (!pa || !pa->authed) {
        pthread_mutex_unlock(&s->pmtx);
        return 0; /* check_auth refuses it, or handles AUTH */
    }
    uint64_t seq;
    size_t n;
    char why[96];
    int rc = strobe__session_open(pa->key, STROBE_SESSION_TO_SERVER, req, *len, &seq, &n);
    if (rc == 0 && seq > pa->seq) {
        pa->seq = seq;
        *seal = (struct strobe__seal){ .on = 1, .seq = seq };
        memcpy(seal->key, pa->key, sizeof seal->key);
        *len = n;
        pthread_mutex_unlock(&s->pmtx);
        return 0;
    }
    if (rc == 0)
        snprintf(why, sizeof why, "sequence number %llu after %llu: replayed or reordered",
                 (unsigned long long)seq, (unsigned long long)pa->seq);
    else
        snprintf(why, sizeof why, "%s", strobe__session_why(rc));
    strobe__log(s->d, STROBE_LOG_WARN, "%s: refused a request that failed authentication (%s); connection dropped",
                pa->peer, why);
    /* forgotten, not just unauthenticated: its close is not another
     * "left without authenticating" */
    *pa = s->pipes[--s->npipes];
    pthread_mutex_unlock(&s->pmtx);
    return -EBADMSG;
}

int strobe__server_answer(struct strobe__server *s, uint32_t pipe_id, const void *req, size_t len,
                          struct strobe__wr *w, uint32_t *wait_ms, struct strobe__seal *seal)
{
    struct strobe__daemon *d = s->d;
    struct strobe__rd r;
    uint8_t type;
    uint16_t flags;
    *wait_ms = 0;
    seal->on = 0;
    int rc = unseal(s, pipe_id, req, &len, seal);
    if (rc < 0) {
        w->len = 0;
        return rc;
    }
    rc = strobe__msg_open(&r, req, len, &type, &flags);
    if (rc < 0) {
        strobe__msg_error(w, rc, rc == STROBE_ERR_VERSION ? "unsupported protocol version"
                                                         : "malformed message");
    } else if (!check_auth(s, pipe_id, type, &r, w)) {
        /* HELLO/AUTH answered, or refused */
    } else if (type == STROBE_MSG_DIR) {
        reply_dir(s, w);
    } else if (type == STROBE_MSG_CTL) {
        reply_ctl(s, pipe_id, &r, w);
    } else if (type == STROBE_MSG_UPDATE) {
        pthread_mutex_lock(&d->lock);
        rc = reply_update(d, r, flags, w, wait_ms);
        if (rc == 0 && *wait_ms > 0 && !s->stopping)
            return 1; /* nothing changed: the caller parks it, lock held */
        pthread_mutex_unlock(&d->lock);
        if (rc < 0)
            strobe__msg_error(w, rc, "malformed UPDATE request");
    } else {
        strobe__msg_error(w, STROBE_ERR_UNSUPPORTED, "not a request type");
    }
    return 0;
}

/* The peer's address without its port, into host. */
static void peer_host(uint32_t pid, char *host, size_t cap)
{
    peer_name(pid, host, cap);
    char *colon = strrchr(host, ':');
    if (colon && strncmp(host, "connection ", 11) != 0)
        *colon = 0;
}

/* Whether one more long poll from `host` may be parked (d->lock held:
 * parked workers change state under it). */
static int may_park(const struct strobe__server *s, const char *host)
{
    int parked = 0, from_host = 0;
    for (int i = 0; i < WORKERS; i++)
        if (s->w[i].state == W_PARKED) {
            parked++;
            from_host += strcmp(s->w[i].host, host) == 0;
        }
    return parked < PARK_MAX && from_host < PARK_PER_HOST;
}

/* Answers a received request now, or parks a long poll. */
static void answer(struct worker *wk, nng_msg *req)
{
    struct strobe__server *s = wk->s;
    struct strobe__daemon *d = s->d;
    uint32_t wait_ms, pid = (uint32_t)nng_pipe_id(nng_msg_get_pipe(req));
    int rc = strobe__server_answer(s, pid, nng_msg_body(req), nng_msg_len(req), &wk->wr, &wait_ms, &wk->seal);
    if (rc < 0) {
        /* failed its MAC: no answer, and the connection goes */
        nng_pipe_close(nng_msg_get_pipe(req));
        nng_msg_free(req);
        wk->state = W_RECV;
        nng_ctx_recv(wk->ctx, wk->aio);
        return;
    }
    if (rc == 1) {
        peer_host(pid, wk->host, sizeof wk->host);
        if (!may_park(s, wk->host)) {
            pthread_mutex_unlock(&d->lock);
            strobe__log(d, STROBE_LOG_WARN, "%s: refused a held request: %d held at most, %d per host",
                        wk->host, PARK_MAX, PARK_PER_HOST);
            wk->wr.len = 0;
            wk->wr.err = 0;
            strobe__msg_error(&wk->wr, STROBE_ERR_LIMIT, "too many held requests; retry later");
            nng_msg_free(req);
            send_wr(wk);
            return;
        }
        if (wk->seal.on) /* the waiter reads the request again, without its MAC */
            nng_msg_chop(req, STROBE_SESSION_TRAILER);
        wk->state = W_PARKED;
        wk->req = req;
        wk->seq = d->change_seq;
        wk->deadline = mono_ns() + (uint64_t)wait_ms * 1000000ull;
        pthread_cond_broadcast(&d->changed); /* the waiter re-computes its timeout */
        pthread_mutex_unlock(&d->lock);
        return;
    }
    nng_msg_free(req);
    send_wr(wk);
}

/* Hands a control request to the controller, answers any other. */
static void handle(struct worker *wk, nng_msg *req)
{
    struct strobe__server *s = wk->s;
    if (strobe__msg_type(nng_msg_body(req), nng_msg_len(req)) != STROBE_MSG_CTL) {
        answer(wk, req);
        return;
    }
    pthread_mutex_lock(&s->cmtx);
    wk->req = req;
    wk->state = W_CTL;
    pthread_cond_signal(&s->cwake);
    pthread_mutex_unlock(&s->cmtx);
}

/* Runs the control requests, one at a time, off nng's threads. */
static void *controller(void *arg)
{
    struct strobe__server *s = arg;
    pthread_mutex_lock(&s->cmtx);
    while (!s->cstop) {
        struct worker *wk = NULL;
        for (int i = 0; i < WORKERS && !wk; i++)
            if (s->w[i].state == W_CTL)
                wk = &s->w[i];
        if (!wk) {
            pthread_cond_wait(&s->cwake, &s->cmtx);
            continue;
        }
        nng_msg *req = wk->req;
        wk->req = NULL;
        wk->state = W_SEND; /* answer() sets it again as it sends */
        pthread_mutex_unlock(&s->cmtx);
        answer(wk, req);
        pthread_mutex_lock(&s->cmtx);
    }
    pthread_mutex_unlock(&s->cmtx);
    return NULL;
}

static void worker_cb(void *arg)
{
    struct worker *wk = arg;
    int rv = nng_aio_result(wk->aio);
    int state = wk->state; /* one atomic load */
    switch (state) {
    case W_RECV:
        if (rv != 0) {
            if (rv != NNG_ECLOSED && rv != NNG_ECANCELED)
                nng_ctx_recv(wk->ctx, wk->aio);
            return;
        }
        handle(wk, nng_aio_get_msg(wk->aio));
        return;
    case W_SEND:
        if (rv != 0)
            nng_msg_free(nng_aio_get_msg(wk->aio));
        if (rv == NNG_ECLOSED || rv == NNG_ECANCELED)
            return;
        wk->state = W_RECV;
        nng_ctx_recv(wk->ctx, wk->aio);
        return;
    case W_PARKED:
    case W_CTL:
        return;
    }
}

/* Answers parked long polls whose sets changed or whose time is up. */
static void *waiter(void *arg)
{
    struct strobe__server *s = arg;
    struct strobe__daemon *d = s->d;
    pthread_mutex_lock(&d->lock);
    while (!s->stopping) {
        uint64_t now = mono_ns(), next = now + 1000000000ull;
        for (int i = 0; i < WORKERS; i++) {
            struct worker *wk = &s->w[i];
            if (wk->state != W_PARKED)
                continue;
            int due = now >= wk->deadline;
            if (!due && wk->seq == d->change_seq) {
                if (wk->deadline < next)
                    next = wk->deadline;
                continue;
            }
            struct strobe__rd r;
            uint8_t type;
            uint16_t flags;
            uint32_t wait_ms;
            strobe__msg_open(&r, nng_msg_body(wk->req), nng_msg_len(wk->req), &type, &flags);
            int rc = reply_update(d, r, flags, &wk->wr, &wait_ms);
            if (rc == 0 && !due) {
                wk->seq = d->change_seq; /* a change, but not to these sets */
                if (wk->deadline < next)
                    next = wk->deadline;
                continue;
            }
            nng_msg_free(wk->req);
            wk->req = NULL;
            send_wr(wk);
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t wait = next > now ? next - now : 0;
        ts.tv_sec += (time_t)(wait / 1000000000ull);
        ts.tv_nsec += (long)(wait % 1000000000ull);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&d->changed, &d->lock, &ts);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

int strobe__server_new(struct strobe__daemon *d, struct strobe__server **out)
{
    struct strobe__server *s = calloc(1, sizeof *s);
    if (!s || !(s->pipes = calloc(MAX_PIPES, sizeof *s->pipes))) {
        free(s);
        return -ENOMEM;
    }
    s->d = d;
    pthread_mutex_init(&s->pmtx, NULL);
    pthread_mutex_init(&s->cmtx, NULL);
    pthread_cond_init(&s->cwake, NULL);
    *out = s;
    return 0;
}

int strobe__server_start(struct strobe__daemon *d, const char *addr, struct strobe__server **out,
                         char *err, size_t errlen)
{
    struct strobe__server *s;
    if (strobe__server_new(d, &s) < 0)
        return -ENOMEM;
    char url[512];
    snprintf(url, sizeof url, strstr(addr, "://") ? "%s" : "tcp://%s", addr);
    int rv = nng_rep0_open(&s->sock);
    if (rv) {
        snprintf(err, errlen, "listen %s: %s", addr, nng_strerror(rv));
        pthread_mutex_destroy(&s->pmtx);
        pthread_mutex_destroy(&s->cmtx);
        pthread_cond_destroy(&s->cwake);
        free(s->pipes);
        free(s);
        return -EIO;
    }
    nng_socket_set_size(s->sock, NNG_OPT_RECVMAXSZ, STROBE_PROTO_MAX_REQUEST);
    nng_pipe_notify(s->sock, NNG_PIPE_EV_REM_POST, pipe_event, s);
    for (int i = 0; i < WORKERS && rv == 0; i++) {
        s->w[i].s = s;
        if ((rv = nng_aio_alloc(&s->w[i].aio, worker_cb, &s->w[i])) == 0)
            rv = nng_ctx_open(&s->w[i].ctx, s->sock);
    }
    if (rv == 0)
        rv = nng_listen(s->sock, url, NULL, 0);
    if (rv) {
        snprintf(err, errlen, "listen %s: %s", addr, nng_strerror(rv));
        strobe__server_stop(s);
        return rv == NNG_EADDRINUSE ? -EADDRINUSE : -EINVAL;
    }
    if (pthread_create(&s->waiter, NULL, waiter, s) != 0) {
        strobe__server_stop(s);
        return -EAGAIN;
    }
    s->waiter_started = 1;
    if (pthread_create(&s->controller, NULL, controller, s) != 0) {
        strobe__server_stop(s);
        return -EAGAIN;
    }
    s->controller_started = 1;
    for (int i = 0; i < WORKERS; i++) {
        s->w[i].state = W_RECV;
        nng_ctx_recv(s->w[i].ctx, s->w[i].aio);
    }
    strobe__log(d, STROBE_LOG_INFO, "serving sets on %s%s", url, d->secret ? " (shared secret)" : "");
    *out = s;
    return 0;
}

void strobe__server_stop(struct strobe__server *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->d->lock);
    s->stopping = 1;
    pthread_cond_broadcast(&s->d->changed);
    pthread_mutex_unlock(&s->d->lock);
    if (s->waiter_started)
        pthread_join(s->waiter, NULL);
    pthread_mutex_lock(&s->cmtx);
    s->cstop = 1;
    pthread_cond_signal(&s->cwake);
    pthread_mutex_unlock(&s->cmtx);
    if (s->controller_started)
        pthread_join(s->controller, NULL);
    if (s->d->nng_wedged)
        return; /* nng_close would wait for the hung reaper; nng's threads may
                   still call back into s: it stays, the process is exiting */
    if (nng_socket_id(s->sock) > 0) /* not opened for a server from strobe__server_new */
        nng_close(s->sock);
    for (int i = 0; i < WORKERS; i++) {
        if (s->w[i].aio) {
            nng_aio_stop(s->w[i].aio);
            nng_aio_free(s->w[i].aio);
        }
        if (s->w[i].req)
            nng_msg_free(s->w[i].req);
        strobe__wr_free(&s->w[i].wr);
    }
    pthread_mutex_destroy(&s->pmtx);
    pthread_mutex_destroy(&s->cmtx);
    pthread_cond_destroy(&s->cwake);
    free(s->pipes);
    free(s);
}
