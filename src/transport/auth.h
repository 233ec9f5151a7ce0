/* SPDX-License-Identifier: MIT */
/*
 * Shared-secret authentication for strobed connections: a challenge and
 * response over both peers' random nonces with HMAC-SHA256 (OpenSSL), so
 * the secret itself never crosses the network and each side proves it
 * knows it. See docs/formats/protocol.md, "Authentication".
 */
#ifndef STROBE_TRANSPORT_AUTH_H
#define STROBE_TRANSPORT_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "transport/proto.h"

/* Fill a nonce from the kernel's random source: 0 or -errno. */
int strobe__auth_nonce(uint8_t nonce[STROBE_PROTO_NONCE]);
/* out = HMAC-SHA256(key, a || b): 0 or -EIO */
int strobe__auth_hmac(const void *key, size_t key_len, const void *a, size_t a_len, const void *b, size_t b_len,
                      uint8_t out[STROBE_PROTO_MAC]);
/* mac = HMAC-SHA256(secret, role || first || second); role is "server"
 * or "client" so a proof cannot be reflected back. */
int strobe__auth_mac(const char *secret, const char *role, const uint8_t first[STROBE_PROTO_NONCE],
                     const uint8_t second[STROBE_PROTO_NONCE], uint8_t mac[STROBE_PROTO_MAC]);
/* The shared secret in file `path` (trailing newlines, CRs and blanks
 * dropped; at most 1023 bytes read) into a malloc'ed *out: 0 or -errno
 * with "path: why" in err. The file must be owned by the effective user
 * (or root) and give no access to group or others (-EACCES otherwise). */
int strobe__auth_read_secret(const char *path, char **out, char *err, size_t errlen);
/* Constant-time comparison of two MACs: 1 when equal. */
int strobe__auth_equal(const uint8_t a[STROBE_PROTO_MAC], const uint8_t b[STROBE_PROTO_MAC]);

#endif
