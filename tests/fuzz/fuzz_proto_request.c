/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: one request message as strobed receives it, answered by
 * the server's own request handling without nng (strobe__server_answer:
 * header, HELLO/AUTH per connection, DIR, UPDATE decoding and the UPDATE
 * reply built from the daemon's sets, CTL decoding: control itself is
 * refused, for want of a secret or of authentication). The daemon (fuzz_daemon.h) is built
 * once and sampled once; each input gets a fresh server, so connection
 * state does not leak between inputs. The input is answered four times:
 * with no shared secret (DIR/UPDATE are reached), with one (HELLO makes
 * proofs, AUTH checks them, the rest is refused), and on a connection
 * authenticated by a real handshake, once as it is (its last bytes taken
 * as the MAC trailer: refused unless they are one) and once sealed with
 * the session's key (the decoders reached through the session, the answer
 * sealed). Every answer must be a well-formed message, and every item of
 * an UPDATE answer must apply to a client mirror (strobe__mirror_apply)
 * that starts empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_daemon.h"
#include "strobed/server.h"
#include "transport/client.h"
#include "transport/auth.h"
#include "transport/proto.h"
#include "transport/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Applies one item of the server's UPDATE answer to the mirror; only a
 * DATA item for a set the (initially empty) mirror lacks may be refused. */
static int apply_item(void *ctx, const struct strobe__update_item *it)
{
    struct strobe__mirror *m = ctx;
    int known = 0;
    for (size_t i = 0; i < m->n; i++)
        known |= strcmp(strobe_set_instance(m->sets[i]), it->name) == 0;
    int rc = strobe__mirror_apply(m, it, NULL, NULL);
    if (rc != 0 && !(rc == STROBE_ERR_FORMAT && it->status == STROBE_UPD_DATA && !known))
        abort();
    return 0;
}

/* One request to s on connection 1: the answer in w, which must be a
 * whole message; a sealed one must carry a good MAC, taken off. Returns
 * strobe__server_answer's code. */
static int ask(struct strobe__daemon *d, struct strobe__server *s, const void *req, size_t len,
               struct strobe__wr *w)
{
    uint32_t wait_ms;
    struct strobe__seal seal;
    w->len = 0;
    w->err = 0;
    int rc = strobe__server_answer(s, 1, req, len, w, &wait_ms, &seal);
    if (rc == 1)
        pthread_mutex_unlock(&d->lock); /* would be parked; the answer so far is in w */
    if (rc < 0)
        return rc;
    if (seal.on) {
        uint64_t seq;
        size_t n;
        if (strobe__session_seal(w, seal.key, STROBE_SESSION_TO_CLIENT, seal.seq) < 0 ||
            strobe__session_open(seal.key, STROBE_SESSION_TO_CLIENT, w->buf, w->len, &seq, &n) < 0 ||
            seq != seal.seq)
            abort();
        w->len = n;
    }
    return rc;
}

/* HELLO and AUTH as a client holding `secret` does them: the session key
 * in key. */
static void handshake(struct strobe__daemon *d, struct strobe__server *s, uint8_t key[STROBE_SESSION_KEY])
{
    static const uint8_t cn[STROBE_PROTO_NONCE] = { 1, 2, 3 };
    uint8_t proof[STROBE_PROTO_MAC];
    struct strobe__wr q = { 0 }, w = { 0 };
    struct strobe__rd r;
    uint8_t type;
    uint16_t flags;
    strobe__msg_begin(&q, STROBE_MSG_HELLO, 0);
    strobe__wr_bytes(&q, cn, sizeof cn);
    strobe__msg_finish(&q);
    if (ask(d, s, q.buf, q.len, &w) != 0 || strobe__msg_open(&r, w.buf, w.len, &type, &flags) != 0)
        abort();
    const uint8_t *sn = strobe__rd_bytes(&r, STROBE_PROTO_NONCE);
    if (type != STROBE_MSG_HELLO || !sn || strobe__auth_mac(d->secret, "client", sn, cn, proof) < 0 ||
        strobe__session_key(d->secret, cn, sn, key) < 0)
        abort();
    strobe__msg_begin(&q, STROBE_MSG_AUTH, 0);
    strobe__wr_bytes(&q, proof, sizeof proof);
    strobe__msg_finish(&q);
    if (ask(d, s, q.buf, q.len, &w) != 0 || strobe__msg_open(&r, w.buf, w.len, &type, &flags) != 0 ||
        type != STROBE_MSG_OK)
        abort();
    strobe__wr_free(&q);
    strobe__wr_free(&w);
}

enum how { PLAIN, SESSION_RAW, SESSION_SEALED };

static void answer(struct strobe__daemon *d, const uint8_t *data, size_t size, enum how how)
{
    struct strobe__server *s;
    struct strobe__wr w = { 0 }, sealed = { 0 };
    uint8_t key[STROBE_SESSION_KEY];
    if (strobe__server_new(d, &s) < 0)
        abort();
    if (how != PLAIN)
        handshake(d, s, key);
    if (how == SESSION_SEALED) {
        strobe__wr_bytes(&sealed, data, size);
        if (strobe__session_seal(&sealed, key, STROBE_SESSION_TO_SERVER, 1) < 0)
            abort();
        data = sealed.buf;
        size = sealed.len;
    }
    if (ask(d, s, data, size, &w) < 0) {
        /* refused for its MAC: only what was not sealed, within a session,
         * or sealed bytes too short for a header, or whose header claims
         * the trailer as its body (a message without a MAC, then) */
        uint32_t body = 0;
        if (size >= STROBE_PROTO_HDR + STROBE_SESSION_TRAILER)
            memcpy(&body, data + 8, 4);
        if (how == PLAIN || (how == SESSION_SEALED && size >= STROBE_PROTO_HDR + STROBE_SESSION_TRAILER &&
                             (size_t)body + STROBE_PROTO_HDR != size))
            abort();
        strobe__wr_free(&sealed);
        strobe__server_stop(s);
        return;
    }
    struct strobe__rd r;
    uint8_t type;
    uint16_t flags;
    if (w.err || strobe__msg_open(&r, w.buf, w.len, &type, &flags) != 0)
        abort(); /* the server must always answer with a valid message */
    if (type == STROBE_MSG_UPDATE) {
        struct strobe__mirror m = { 0 };
        if (strobe__update_reply_walk(&r, apply_item, &m) != 0)
            abort();
        strobe__mirror_free(&m);
    } else if (type == STROBE_MSG_ERROR) {
        int code;
        char text[256];
        if (strobe__msg_read_error(&r, &code, text, sizeof text) != 0)
            abort();
    }
    strobe__wr_free(&w);
    strobe__wr_free(&sealed);
    strobe__server_stop(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct strobe__daemon *d;
    static char secret[] = "fuzz-shared-secret";
    if (!d)
        d = fuzz_daemon_new();
    answer(d, data, size, PLAIN);
    d->secret = secret;
    answer(d, data, size, PLAIN);
    answer(d, data, size, SESSION_RAW);
    answer(d, data, size, SESSION_SEALED);
    d->secret = NULL;
    return 0;
}
