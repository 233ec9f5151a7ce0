/* SPDX-License-Identifier: MIT */
/*
 * Per-connection message authentication after the shared-secret
 * handshake (auth.h): both sides derive a session key from the secret and
 * the handshake's two nonces, and every later message carries a trailer
 * of a sequence number and a MAC over (direction, sequence number,
 * message), so a message altered, replayed, reordered or moved to another
 * connection is refused. See docs/formats/protocol.md, "Message
 * authentication", and docs/strobed.md for why an HMAC and not TLS.
 */
#ifndef STROBE_TRANSPORT_SESSION_H
#define STROBE_TRANSPORT_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "transport/proto.h"

#define STROBE_SESSION_KEY 32
/* HMAC-SHA256 truncated to 128 bits (as RFC 4868's HMAC-SHA-256-128) */
#define STROBE_SESSION_TAG 16
#define STROBE_SESSION_TRAILER (8 + STROBE_SESSION_TAG) /* u64 sequence number, tag */

/* Which way a message goes: part of the MAC, so a request cannot be
 * passed off as a reply or the other way round. */
enum strobe__session_dir { STROBE_SESSION_TO_SERVER = 1, STROBE_SESSION_TO_CLIENT = 2 };

/* What a reply must be sealed with: the session key of the connection the
 * request came over and the request's sequence number (on = 0: no
 * session, the reply goes as it is). */
struct strobe__seal {
    int on;
    uint64_t seq;
    uint8_t key[STROBE_SESSION_KEY];
};

/* key = HMAC-SHA256(secret, "session" || client nonce || server nonce):
 * the label keeps it apart from both proofs, which travel in the clear.
 * 0 or -EIO. */
int strobe__session_key(const char *secret, const uint8_t cn[STROBE_PROTO_NONCE],
                        const uint8_t sn[STROBE_PROTO_NONCE], uint8_t key[STROBE_SESSION_KEY]);

/* Appends the trailer to the finished message in w: u64 seq, then
 * HMAC-SHA256(key, dir || seq || message) truncated. 0 or w's error. */
int strobe__session_seal(struct strobe__wr *w, const uint8_t key[STROBE_SESSION_KEY], uint8_t dir,
                         uint64_t seq);

/* Checks the trailer of msg (len bytes, trailer included): 0 with the
 * sequence number in *seq and the length of the message without its
 * trailer in *msg_len; -ENOMSG when msg is a whole message without a
 * trailer, -EBADMSG when the MAC does not match (or msg is too short). The
 * caller checks the sequence number. Compares in constant time. */
int strobe__session_open(const uint8_t key[STROBE_SESSION_KEY], uint8_t dir, const void *msg, size_t len,
                         uint64_t *seq, size_t *msg_len);

/* "bad MAC", "missing MAC" for a code of strobe__session_open. */
const char *strobe__session_why(int rc);

#endif
