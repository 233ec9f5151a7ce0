/* SPDX-License-Identifier: MIT */
/*
 * strobed client (client.h): requests over nng req0, the shared-secret
 * handshake and the set mirror. A client holding a secret authenticates
 * every connection (nng pipe) before trusting a reply from it: the daemon
 * proves it knows the secret first, then the client; a reply that comes
 * over any other pipe (nng redialed in between) is dropped and the
 * handshake is done again. Within an authenticated connection every
 * request and reply carries a MAC under the session key (session.h); a
 * reply that fails it is refused and its connection closed, so nng
 * redials and the next request authenticates anew. A client without a
 * secret never handshakes and sends no MAC.
 *
 * Requests go through one aio, so that another thread can end the one
 * under way by cancelling it (strobe__client_abort). Closing the socket
 * under a blocked receive, as it once did, can deadlock nng (1.5 to 1.7:
 * its reaper waits for a task that never runs; nng issues 1543, 1813): the
 * socket is closed only by strobe__client_close, with nothing under way.
 */
#include <errno.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdatomic.h>
#include <nng/supplemental/util/platform.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/auth.h"
#include "transport/client.h"
#include "transport/proto.h"
#include "transport/session.h"

struct strobe__client {
    nng_socket sock;
    char addr[256]; /* as given, for messages naming the peer */
    char *secret;
    _Atomic uint32_t pipe; /* the newest connection (nng pipe id; 0: none yet) */
    uint32_t authed_pipe;  /* the connection the handshake succeeded on (0: none) */
    uint8_t key[STROBE_SESSION_KEY]; /* authed_pipe's session key */
    uint64_t seq;                    /* of the last request sent on authed_pipe */
    char err[512];
    struct strobe__wr wr;
    nng_msg *reply; /* the last reply, kept while the caller walks it */
    uint16_t reply_flags; /* its header's flags */
    nng_time deadline; /* one-shot client: every request ends by then; 0: none */
    nng_duration timeout_ms; /* of each request otherwise */
    nng_aio *aio;            /* the request under way */
    _Atomic int aborted;     /* strobe__client_abort was called */
};

static int from_nng(int rv)
{
    switch (rv) {
    case 0: return 0;
    case NNG_ETIMEDOUT: return -ETIMEDOUT;
    case NNG_ECONNREFUSED: return -ECONNREFUSED;
    case NNG_ENOMEM: return -ENOMEM;
    case NNG_EADDRINVAL: case NNG_EINVAL: return -EINVAL;
    case NNG_ECLOSED: return -EPIPE;
    case NNG_ECONNRESET: return -ECONNRESET;
    default: return -EIO;
    }
}

/* nng's callback when it (re)connects: the next request authenticates
 * first instead of being refused by the daemon */
static void pipe_added(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    (void)ev;
    atomic_store(&((struct strobe__client *)arg)->pipe, (uint32_t)nng_pipe_id(p));
}

/* A blocking nng_dial waits for the TCP connection, which the kernel gives
 * minutes for an unreachable host, and then for nng's own negotiation,
 * which nng gives 10 s whatever the socket's timeouts: a daemon stopped
 * with SIGSTOP (the kernel still accepts) held `strobe ls --timeout 2s`
 * for 10 s. So the dial runs in a thread and, when the deadline passes,
 * closing the socket ends it. */
struct dial {
    nng_socket sock;
    const char *url;
    nng_mtx *mtx;
    nng_cv *cv;
    int done, rv;
};

static void dial_thread(void *arg)
{
    struct dial *x = arg;
    int rv = nng_dial(x->sock, x->url, NULL, 0);
    nng_mtx_lock(x->mtx);
    x->rv = rv;
    x->done = 1;
    nng_cv_wake(x->cv);
    nng_mtx_unlock(x->mtx);
}

/* nng_dial(sock, url) that gives up at deadline (nng_clock() time) with
 * NNG_ETIMEDOUT, the socket then closed. */
static int dial_until(nng_socket sock, const char *url, nng_time deadline)
{
    struct dial x = { .sock = sock, .url = url };
    nng_thread *thr;
    int rv = nng_mtx_alloc(&x.mtx);
    if (rv == 0 && (rv = nng_cv_alloc(&x.cv, x.mtx)) == 0 && (rv = nng_thread_create(&thr, dial_thread, &x)) == 0) {
        nng_mtx_lock(x.mtx);
        while (!x.done && nng_cv_until(x.cv, deadline) != NNG_ETIMEDOUT)
            ;
        int done = x.done;
        nng_mtx_unlock(x.mtx);
        if (!done)
            nng_close(sock);
        nng_thread_destroy(thr); /* joins: the dial has returned */
        rv = done ? x.rv : NNG_ETIMEDOUT;
    }
    if (x.cv)
        nng_cv_free(x.cv);
    if (x.mtx)
        nng_mtx_free(x.mtx);
    return rv;
}

int strobe__client_open(const char *addr, const char *secret, uint32_t timeout_ms, int dial_now,
                        struct strobe__client **out)
{
    struct strobe__client *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    snprintf(c->addr, sizeof c->addr, "%s", addr);
    char url[512];
    if (strstr(addr, "://"))
        snprintf(url, sizeof url, "%s", addr);
    else
        snprintf(url, sizeof url, "tcp://%s", addr);
    if (dial_now)
        c->deadline = nng_clock() + timeout_ms;
    c->timeout_ms = (nng_duration)timeout_ms;
    int rv = nng_aio_alloc(&c->aio, NULL, NULL);
    if (rv == 0 && (rv = nng_req0_open(&c->sock)) != 0) {
        nng_aio_free(c->aio);
    } else if (rv == 0) {
        nng_socket_set_ms(c->sock, NNG_OPT_RECONNMINT, 100);
        nng_socket_set_ms(c->sock, NNG_OPT_RECONNMAXT, 2000);
        /* a request is answered or times out; re-sending it on its own
         * would only duplicate long polls */
        nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
        nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, STROBE_PROTO_MAX_MSG);
        nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_POST, pipe_added, c);
        /* dial_now: fail at once on a refused connection (strobe ls);
         * otherwise nng keeps redialing in the background (aggregators) */
        rv = dial_now ? dial_until(c->sock, url, c->deadline) : nng_dial(c->sock, url, NULL, NNG_FLAG_NONBLOCK);
        if (rv) {
            nng_close(c->sock);
            nng_aio_free(c->aio);
        }
    }
    if (rv) {
        free(c);
        return from_nng(rv);
    }
    if (secret && !(c->secret = strdup(secret))) {
        strobe__client_close(c);
        return -ENOMEM;
    }
    *out = c;
    return 0;
}

void strobe__client_close(struct strobe__client *c)
{
    if (!c)
        return;
    nng_aio_stop(c->aio); /* an aborted request has ended: nothing waits */
    nng_close(c->sock);
    nng_aio_free(c->aio);
    if (c->reply)
        nng_msg_free(c->reply);
    strobe__wr_free(&c->wr);
    if (c->secret) {
        memset(c->secret, 0, strlen(c->secret));
        free(c->secret);
    }
    memset(c->key, 0, sizeof c->key);
    free(c);
}

void strobe__client_abort(struct strobe__client *c)
{
    if (!c)
        return;
    /* the flag first: a request that starts after the cancel sees it
     * (run_aio), one under way is cancelled */
    atomic_store(&c->aborted, 1);
    nng_aio_cancel(c->aio);
}

void strobe__client_reset(struct strobe__client *c, uint32_t timeout_ms)
{
    c->timeout_ms = (nng_duration)timeout_ms;
    atomic_store(&c->aborted, 0);
}

/* Runs c->aio's operation, started by `start`, to its end: its nng
 * result. After strobe__client_abort every one ends at once (NNG_ECLOSED,
 * as the closed socket used to give). */
static int run_aio(struct strobe__client *c, void (*start)(nng_socket, nng_aio *), nng_duration timeout)
{
    if (atomic_load(&c->aborted))
        return NNG_ECLOSED;
    nng_aio_set_timeout(c->aio, timeout);
    start(c->sock, c->aio);
    if (atomic_load(&c->aborted))
        nng_aio_cancel(c->aio);
    nng_aio_wait(c->aio);
    int rv = nng_aio_result(c->aio);
    return rv == NNG_ECANCELED ? NNG_ECLOSED : rv;
}

const char *strobe__client_error(const struct strobe__client *c) { return c->err; }

static uint32_t reply_pipe(const struct strobe__client *c)
{
    return (uint32_t)nng_pipe_id(nng_msg_get_pipe(c->reply));
}

/* Checks the MAC of c->reply against the request just sent (its sequence
 * number), and takes the trailer off: 0 or -EBADMSG, the connection
 * then closed (a path that altered one message is not trusted with the
 * next) and the session forgotten. */
static int reply_unseal(struct strobe__client *c)
{
    uint64_t seq = 0;
    size_t len;
    int rc = strobe__session_open(c->key, STROBE_SESSION_TO_CLIENT, nng_msg_body(c->reply),
                                  nng_msg_len(c->reply), &seq, &len);
    if (rc == 0 && seq == c->seq)
        return nng_msg_chop(c->reply, STROBE_SESSION_TRAILER) == 0 ? 0 : -EIO;
    if (rc == 0)
        snprintf(c->err, sizeof c->err,
                 "reply failed authentication (sequence number %llu, expected %llu); connection dropped",
                 (unsigned long long)seq, (unsigned long long)c->seq);
    else
        snprintf(c->err, sizeof c->err, "reply failed authentication (%s); connection dropped",
                 strobe__session_why(rc));
    nng_pipe_close(nng_msg_get_pipe(c->reply));
    c->authed_pipe = 0;
    return -EBADMSG;
}

/* Sends c->wr, receives into c->reply and opens it. An ERROR reply gives
 * its code (text in c->err). Within an authenticated connection
 * (c->authed_pipe set) the request is sealed and the reply must be:
 * -ECONNRESET when the reply came over another connection, -EBADMSG when
 * it fails its MAC. */
static int roundtrip(struct strobe__client *c, struct strobe__rd *body, uint8_t *type, uint16_t *flags)
{
    int rc = strobe__msg_finish(&c->wr);
    int sealed = c->secret && c->authed_pipe;
    if (rc == 0 && sealed)
        rc = strobe__session_seal(&c->wr, c->key, STROBE_SESSION_TO_SERVER, ++c->seq);
    if (rc < 0)
        return rc;
    if (c->reply) {
        nng_msg_free(c->reply);
        c->reply = NULL;
    }
    nng_duration timeout = c->timeout_ms;
    if (c->deadline) {
        /* what is left of the one-shot client's time, for this round trip */
        nng_time now = nng_clock();
        timeout = now < c->deadline ? (nng_duration)(c->deadline - now) : 0;
        if (!timeout) {
            snprintf(c->err, sizeof c->err, "%s", nng_strerror(NNG_ETIMEDOUT));
            return -ETIMEDOUT;
        }
    }
    nng_msg *req;
    int rv = nng_msg_alloc(&req, 0);
    if (rv == 0 && (rv = nng_msg_append(req, c->wr.buf, c->wr.len)) != 0)
        nng_msg_free(req);
    if (rv == 0) {
        nng_aio_set_msg(c->aio, req);
        if ((rv = run_aio(c, nng_send_aio, timeout)) != 0)
            nng_msg_free(req); /* not sent: still ours */
    }
    if (rv == 0 && (rv = run_aio(c, nng_recv_aio, timeout)) == 0)
        c->reply = nng_aio_get_msg(c->aio);
    if (rv) {
        snprintf(c->err, sizeof c->err, "%s", nng_strerror(rv));
        return from_nng(rv);
    }
    if (sealed && reply_pipe(c) != c->authed_pipe)
        return -ECONNRESET; /* request() authenticates the new connection */
    if (sealed && (rc = reply_unseal(c)) < 0)
        return rc;
    rc = strobe__msg_open(body, nng_msg_body(c->reply), nng_msg_len(c->reply), type, flags);
    if (rc < 0) {
        snprintf(c->err, sizeof c->err, "malformed reply (%s)", strobe_strerror(rc));
        return rc;
    }
    if (*type == STROBE_MSG_ERROR) {
        int code;
        if (strobe__msg_read_error(body, &code, c->err, sizeof c->err) < 0) {
            snprintf(c->err, sizeof c->err, "malformed error reply");
            return STROBE_ERR_FORMAT;
        }
        return code;
    }
    return 0;
}

/* Mutual authentication of the current connection (only with a secret):
 * the daemon's proof over our fresh nonce first, so a proof recorded
 * from another handshake is worth nothing; then ours over its nonce.
 * Both sides then derive the session key from the two nonces. */
static int handshake(struct strobe__client *c)
{
    uint8_t cn[STROBE_PROTO_NONCE], mac[STROBE_PROTO_MAC], key[STROBE_SESSION_KEY];
    c->authed_pipe = 0;
    int rc = strobe__auth_nonce(cn);
    if (rc < 0)
        return rc;
    strobe__msg_begin(&c->wr, STROBE_MSG_HELLO, 0);
    strobe__wr_bytes(&c->wr, cn, sizeof cn);
    struct strobe__rd r;
    uint8_t type;
    uint16_t flags;
    if ((rc = roundtrip(c, &r, &type, &flags)) < 0)
        return rc;
    uint32_t pipe = reply_pipe(c);
    const uint8_t *sn = strobe__rd_bytes(&r, STROBE_PROTO_NONCE);
    const uint8_t *proof = strobe__rd_bytes(&r, STROBE_PROTO_MAC);
    if (type != STROBE_MSG_HELLO || r.err || r.n) {
        snprintf(c->err, sizeof c->err, "malformed HELLO reply");
        return STROBE_ERR_FORMAT;
    }
    /* a daemon without a secret (flag clear) proves nothing */
    if ((rc = strobe__auth_mac(c->secret, "server", cn, sn, mac)) < 0)
        return rc;
    if (!(flags & STROBE_HELLO_AUTH_REQUIRED) || !strobe__auth_equal(mac, proof)) {
        snprintf(c->err, sizeof c->err, "%s did not prove it knows the secret", c->addr);
        return -EACCES;
    }
    if ((rc = strobe__auth_mac(c->secret, "client", sn, cn, mac)) < 0 ||
        (rc = strobe__session_key(c->secret, cn, sn, key)) < 0) /* sn dies with the reply */
        return rc;
    strobe__msg_begin(&c->wr, STROBE_MSG_AUTH, 0);
    strobe__wr_bytes(&c->wr, mac, sizeof mac);
    if ((rc = roundtrip(c, &r, &type, &flags)) < 0) {
        if (rc == -EACCES)
            snprintf(c->err, sizeof c->err, "%s refused our proof of the secret", c->addr);
        return rc;
    }
    if (type != STROBE_MSG_OK) {
        snprintf(c->err, sizeof c->err, "unexpected reply type %u to AUTH", type);
        return STROBE_ERR_FORMAT;
    }
    if (reply_pipe(c) != pipe) {
        snprintf(c->err, sizeof c->err, "%s: connection lost while authenticating", c->addr);
        return -ECONNRESET;
    }
    memcpy(c->key, key, sizeof key);
    memset(key, 0, sizeof key);
    c->seq = 0;
    c->authed_pipe = pipe;
    return 0;
}

/* A request built by `build`. With a secret, the connection is
 * authenticated first, and a reply from any other connection is dropped
 * and the request sent once more after a new handshake; a reply that
 * fails its MAC ends the request with -EBADMSG. */
static int request(struct strobe__client *c, void (*build)(struct strobe__client *, const void *),
                   const void *arg, struct strobe__rd *body, uint8_t want)
{
    uint8_t type;
    uint16_t flags;
    for (int attempt = 0;; attempt++) {
        int rc;
        if (c->secret && (!c->authed_pipe || c->authed_pipe != atomic_load(&c->pipe)) &&
            (rc = handshake(c)) < 0) {
            /* nng sent the HELLO over a connection closing under it (one
             * closed after a reply failed its MAC): once more, over the
             * next one */
            if (rc == -ECONNRESET && attempt == 0)
                continue;
            return rc;
        }
        build(c, arg);
        rc = roundtrip(c, body, &type, &flags);
        if (rc == -EBADMSG)
            return rc; /* a reply that failed its MAC: not asked again */
        if (c->secret && c->reply && reply_pipe(c) != c->authed_pipe) {
            c->authed_pipe = 0;
            if (attempt == 0)
                continue;
            snprintf(c->err, sizeof c->err, "%s: connection lost while authenticating", c->addr);
            return -ECONNRESET;
        }
        if (rc == -EACCES && !c->secret)
            snprintf(c->err, sizeof c->err, "%s requires a shared secret (--secret-file)", c->addr);
        if (rc < 0)
            return rc;
        if (type != want) {
            snprintf(c->err, sizeof c->err, "unexpected reply type %u", type);
            return STROBE_ERR_FORMAT;
        }
        c->reply_flags = flags;
        return 0;
    }
}

static void build_dir(struct strobe__client *c, const void *arg)
{
    (void)arg;
    strobe__msg_begin(&c->wr, STROBE_MSG_DIR, 0);
}

int strobe__dir_decode(struct strobe__rd *r, struct strobe__dir_entry **out, size_t *n)
{
    uint32_t cnt = strobe__rd_u32(r);
    /* each entry takes at least 19 bytes: a count the body cannot hold is
     * a lie, not a reason to allocate */
    if (r->err || cnt > r->n / 19)
        return STROBE_ERR_FORMAT;
    struct strobe__dir_entry *v = calloc(cnt ? cnt : 1, sizeof *v);
    if (!v)
        return -ENOMEM;
    for (uint32_t i = 0; i < cnt; i++) {
        strobe__rd_str(r, v[i].name, sizeof v[i].name);
        v[i].meta_gn = strobe__rd_u64(r);
        v[i].data_gn = strobe__rd_u64(r);
    }
    if (r->err || r->n) {
        free(v);
        return STROBE_ERR_FORMAT;
    }
    *out = v;
    *n = cnt;
    return 0;
}

int strobe__client_dir(struct strobe__client *c, struct strobe__dir_entry **out, size_t *n)
{
    struct strobe__rd r;
    int rc = request(c, build_dir, NULL, &r, STROBE_MSG_DIR);
    if (rc < 0)
        return rc;
    rc = strobe__dir_decode(&r, out, n);
    if (rc == STROBE_ERR_FORMAT)
        snprintf(c->err, sizeof c->err, "malformed DIR reply");
    return rc;
}

struct ctl_words {
    char *const *words;
    size_t n;
};

static void build_ctl(struct strobe__client *c, const void *arg)
{
    const struct ctl_words *cw = arg;
    strobe__msg_begin(&c->wr, STROBE_MSG_CTL, 0);
    strobe__wr_u16(&c->wr, (uint16_t)cw->n);
    for (size_t i = 0; i < cw->n; i++)
        strobe__wr_str(&c->wr, cw->words[i]);
}

int strobe__client_ctl(struct strobe__client *c, char *const *words, size_t n, char **text)
{
    *text = NULL;
    if (n == 0 || n > 64) {
        snprintf(c->err, sizeof c->err, "a command has 1 to 64 words, not %zu", n);
        return -EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        if (!words[i][0] || strlen(words[i]) > 255) {
            snprintf(c->err, sizeof c->err, "'%.40s%s': a word has 1 to 255 bytes", words[i],
                     strlen(words[i]) > 40 ? "..." : "");
            return -EINVAL;
        }
    struct ctl_words cw = { words, n };
    struct strobe__rd r;
    int rc = request(c, build_ctl, &cw, &r, STROBE_MSG_CTL);
    if (rc < 0)
        return rc;
    uint32_t len = strobe__rd_u32(&r);
    const char *p = len <= r.n ? strobe__rd_bytes(&r, len) : NULL;
    if (r.err || !p || r.n || memchr(p, 0, len)) {
        snprintf(c->err, sizeof c->err, "malformed CTL reply");
        return STROBE_ERR_FORMAT;
    }
    if (!(*text = strndup(p, len)))
        return -ENOMEM;
    return 0;
}

/* ---- mirror ---------------------------------------------------------------- */

static const char *mirror_name(const void *ctx, size_t pos)
{
    return strobe_set_instance(((const struct strobe__mirror *)ctx)->sets[pos]);
}

/* by the index: a linear search per item made a round quadratic in the
 * sets (most of an aggregator's CPU at 10,000 sets per producer) */
static strobe_set **mirror_find(struct strobe__mirror *m, const char *name)
{
    size_t pos = strobe__name_index_find(&m->index, name, mirror_name, m);
    return pos == STROBE__NAME_NONE ? NULL : &m->sets[pos];
}

static void mirror_drop(struct strobe__mirror *m, strobe_set **slot,
                        void (*on_change)(void *, strobe_set *, enum strobe__mirror_event), void *ctx)
{
    strobe_set *s = *slot;
    strobe__name_index_remove(&m->index, (size_t)(slot - m->sets), m->n - 1, mirror_name, m);
    *slot = m->sets[--m->n];
    if (on_change)
        on_change(ctx, s, STROBE_MIRROR_GONE);
    strobe_set_free(s);
}

/* sections arrive at any alignment; the set API wants 8 */
static int apply_data_aligned(strobe_set *s, const void *data, size_t len)
{
    uint64_t stackbuf[512];
    void *buf = len <= sizeof stackbuf ? stackbuf : malloc(len + 8);
    if (!buf)
        return -ENOMEM;
    memcpy(buf, data, len);
    int rc = strobe_set_apply_data(s, buf, len);
    if (buf != stackbuf)
        free(buf);
    return rc;
}

int strobe__mirror_apply(struct strobe__mirror *m, const struct strobe__update_item *it,
                         void (*on_change)(void *, strobe_set *, enum strobe__mirror_event), void *ctx)
{
    strobe_set **slot = mirror_find(m, it->name);
    int rc = 0;
    switch (it->status) {
    case STROBE_UPD_UNCHANGED:
        return 0;
    case STROBE_UPD_GONE:
        if (slot)
            mirror_drop(m, slot, on_change, ctx);
        return 0;
    case STROBE_UPD_DATA:
        if (!slot)
            return STROBE_ERR_FORMAT; /* data for a set we never got meta for */
        rc = apply_data_aligned(*slot, it->data, it->data_len);
        if (rc == 0 && on_change)
            on_change(ctx, *slot, STROBE_MIRROR_UPDATED);
        return rc;
    case STROBE_UPD_FULL: {
        strobe_set *fresh;
        if ((rc = strobe_set_from_meta(it->meta, it->meta_len, &fresh)) < 0)
            return rc;
        if (strcmp(strobe_set_instance(fresh), it->name) != 0) {
            strobe_set_free(fresh);
            return STROBE_ERR_FORMAT;
        }
        if (slot && strobe_set_schema_sum(*slot) == strobe_set_schema_sum(fresh)) {
            /* same layout: only meta values changed; keep the set object
             * (the daemon's registry points at it) */
            size_t ml;
            const void *meta = strobe_set_meta(fresh, &ml);
            rc = strobe_set_apply_meta(*slot, meta, ml);
            strobe_set_free(fresh);
            if (rc == 0)
                rc = apply_data_aligned(*slot, it->data, it->data_len);
            if (rc == 0 && on_change)
                on_change(ctx, *slot, STROBE_MIRROR_UPDATED);
            return rc;
        }
        if (slot)
            mirror_drop(m, slot, on_change, ctx);
        if ((rc = apply_data_aligned(fresh, it->data, it->data_len)) < 0) {
            strobe_set_free(fresh);
            return rc;
        }
        if (m->n == m->cap) {
            size_t cap = m->cap ? m->cap * 2 : 16;
            strobe_set **v = realloc(m->sets, cap * sizeof *v);
            if (!v) {
                strobe_set_free(fresh);
                return -ENOMEM;
            }
            m->sets = v;
            m->cap = cap;
        }
        m->sets[m->n] = fresh;
        if (strobe__name_index_add(&m->index, m->n, m->n + 1, mirror_name, m) < 0) {
            strobe_set_free(fresh);
            return -ENOMEM;
        }
        m->n++;
        if (on_change)
            on_change(ctx, fresh, STROBE_MIRROR_NEW);
        return 0;
    }
    }
    return STROBE_ERR_FORMAT;
}

void strobe__mirror_free(struct strobe__mirror *m)
{
    for (size_t i = 0; i < m->n; i++)
        strobe_set_free(m->sets[i]);
    free(m->sets);
    strobe__name_index_free(&m->index);
    *m = (struct strobe__mirror){ 0 };
}

struct update_req {
    struct strobe__mirror *m;
    const char *const *patterns;
    size_t npatterns;
    uint32_t wait_ms;
};

static void build_update(struct strobe__client *c, const void *arg)
{
    const struct update_req *u = arg;
    /* what we have, so only changes travel; every other published set
     * (matching the patterns, if any) comes in full */
    strobe__msg_begin(&c->wr, STROBE_MSG_UPDATE,
                      STROBE_UPDATE_ALL | (u->npatterns ? STROBE_UPDATE_FILTER : 0));
    strobe__wr_u32(&c->wr, u->wait_ms);
    strobe__wr_u32(&c->wr, (uint32_t)u->m->n);
    for (size_t i = 0; i < u->m->n; i++) {
        strobe__wr_str(&c->wr, strobe_set_instance(u->m->sets[i]));
        strobe__wr_u64(&c->wr, strobe_set_meta_gn(u->m->sets[i]));
        strobe__wr_u64(&c->wr, strobe_set_data_gn(u->m->sets[i]));
        strobe__wr_u64(&c->wr, strobe_set_schema_sum(u->m->sets[i]));
    }
    if (u->npatterns) {
        strobe__wr_u32(&c->wr, (uint32_t)u->npatterns);
        for (size_t i = 0; i < u->npatterns; i++)
            strobe__wr_str(&c->wr, u->patterns[i]);
    }
}

struct walk_ctx {
    struct strobe__mirror *m;
    void (*on_change)(void *, strobe_set *, enum strobe__mirror_event);
    void *ctx;
};

static int walk_one(void *arg, const struct strobe__update_item *it)
{
    struct walk_ctx *w = arg;
    w->m->bytes_in += it->meta_len + it->data_len;
    int rc = strobe__mirror_apply(w->m, it, w->on_change, w->ctx);
    /* a stale data section (meta changed between our request and the
     * reply) is fixed by the next round, which asks with meta_gn 0 */
    if (rc == -ESTALE) {
        strobe_set **s = mirror_find(w->m, it->name);
        if (s)
            mirror_drop(w->m, s, w->on_change, w->ctx);
        return 0;
    }
    return rc;
}

int strobe__client_update_fetch(struct strobe__client *c, const struct strobe__mirror *m,
                                const char *const *patterns, size_t npatterns, uint32_t wait_ms,
                                struct strobe__rd *body, int *more)
{
    if (npatterns > STROBE_PROTO_MAX_PATTERNS)
        return -E2BIG;
    struct update_req u = { (struct strobe__mirror *)m, patterns, npatterns, wait_ms };
    int rc = request(c, build_update, &u, body, STROBE_MSG_UPDATE);
    *more = rc == 0 && (c->reply_flags & STROBE_UPDATE_MORE);
    return rc;
}

int strobe__client_update_apply(struct strobe__client *c, struct strobe__mirror *m,
                                struct strobe__rd *body,
                                void (*on_change)(void *, strobe_set *, enum strobe__mirror_event),
                                void *ctx)
{
    struct walk_ctx w = { m, on_change, ctx };
    int rc = strobe__update_reply_walk(body, walk_one, &w);
    if (rc < 0 && c)
        snprintf(c->err, sizeof c->err, "malformed UPDATE reply (%s)", strobe_strerror(rc));
    /* applied: the reply (as big as the changed sets) is not kept until
     * the next round */
    if (c && c->reply) {
        nng_msg_free(c->reply);
        c->reply = NULL;
    }
    return rc;
}

int strobe__client_update(struct strobe__client *c, struct strobe__mirror *m,
                          const char *const *patterns, size_t npatterns, uint32_t wait_ms,
                          void (*on_change)(void *, strobe_set *, enum strobe__mirror_event),
                          void *ctx)
{
    struct strobe__rd r;
    int more;
    /* a reply that left sets out (MORE) is followed at once by the next page */
    do {
        int rc = strobe__client_update_fetch(c, m, patterns, npatterns, wait_ms, &r, &more);
        if (rc < 0 || (rc = strobe__client_update_apply(c, m, &r, on_change, ctx)) < 0)
            return rc;
        wait_ms = 0;
    } while (more);
    return 0;
}
