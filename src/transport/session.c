/* SPDX-License-Identifier: MIT */
/* Message authentication within an authenticated connection (session.h),
 * on HMAC-SHA256 (auth.c). */
#include <errno.h>
#include <string.h>

#include "transport/auth.h"
#include "transport/session.h"

int strobe__session_key(const char *secret, const uint8_t cn[STROBE_PROTO_NONCE],
                        const uint8_t sn[STROBE_PROTO_NONCE], uint8_t key[STROBE_SESSION_KEY])
{
    return strobe__auth_mac(secret, "session", cn, sn, key);
}

/* HMAC-SHA256(key, dir || seq || msg), whole */
static int mac(const uint8_t key[STROBE_SESSION_KEY], uint8_t dir, uint64_t seq, const void *msg, size_t len,
               uint8_t out[STROBE_PROTO_MAC])
{
    uint8_t pre[9];
    pre[0] = dir;
    memcpy(pre + 1, &seq, 8); /* little-endian host (monitor/set.h) */
    return strobe__auth_hmac(key, STROBE_SESSION_KEY, pre, sizeof pre, msg, len, out);
}

int strobe__session_seal(struct strobe__wr *w, const uint8_t key[STROBE_SESSION_KEY], uint8_t dir,
                         uint64_t seq)
{
    uint8_t tag[STROBE_PROTO_MAC];
    if (w->err)
        return w->err;
    int rc = mac(key, dir, seq, w->buf, w->len, tag);
    if (rc < 0)
        return rc;
    strobe__wr_u64(w, seq);
    strobe__wr_bytes(w, tag, STROBE_SESSION_TAG);
    return w->err;
}

int strobe__session_open(const uint8_t key[STROBE_SESSION_KEY], uint8_t dir, const void *msg, size_t len,
                         uint64_t *seq, size_t *msg_len)
{
    const uint8_t *p = msg;
    uint32_t body;
    /* the header's body length tells a message that ends where the
     * trailer should start */
    if (len >= STROBE_PROTO_HDR && (memcpy(&body, p + 8, 4), (size_t)body + STROBE_PROTO_HDR == len))
        return -ENOMSG;
    if (len < STROBE_PROTO_HDR + STROBE_SESSION_TRAILER)
        return -EBADMSG;
    size_t n = len - STROBE_SESSION_TRAILER;
    uint8_t want[STROBE_PROTO_MAC], got[STROBE_PROTO_MAC] = { 0 };
    memcpy(seq, p + n, 8);
    if (mac(key, dir, *seq, p, n, want) < 0)
        return -EBADMSG;
    memcpy(got, p + n + 8, STROBE_SESSION_TAG);
    /* only the transmitted half counts */
    memset(want + STROBE_SESSION_TAG, 0, STROBE_PROTO_MAC - STROBE_SESSION_TAG);
    if (!strobe__auth_equal(want, got))
        return -EBADMSG;
    *msg_len = n;
    return 0;
}

const char *strobe__session_why(int rc)
{
    return rc == -ENOMSG ? "missing MAC" : "bad MAC";
}
