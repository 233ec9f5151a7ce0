/* SPDX-License-Identifier: MIT */
/* Shared-secret challenge/response (auth.h) on OpenSSL's HMAC-SHA256
 * (libcrypto: it uses the processor's SHA extensions where there are any,
 * which matters for the per-message MACs of session.c). */
#include <errno.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transport/auth.h"

int strobe__auth_nonce(uint8_t nonce[STROBE_PROTO_NONCE])
{
    ssize_t n = getrandom(nonce, STROBE_PROTO_NONCE, 0);
    return n == STROBE_PROTO_NONCE ? 0 : -EIO;
}

int strobe__auth_hmac(const void *key, size_t key_len, const void *a, size_t a_len, const void *b, size_t b_len,
                      uint8_t out[STROBE_PROTO_MAC])
{
    EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
                           OSSL_PARAM_construct_end()};
    size_t n = 0;
    int ok = ctx && EVP_MAC_init(ctx, key, key_len, params) && EVP_MAC_update(ctx, a, a_len) &&
             EVP_MAC_update(ctx, b, b_len) && EVP_MAC_final(ctx, out, &n, STROBE_PROTO_MAC) &&
             n == STROBE_PROTO_MAC;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(hmac);
    return ok ? 0 : -EIO;
}

int strobe__auth_mac(const char *secret, const char *role, const uint8_t first[STROBE_PROTO_NONCE],
                     const uint8_t second[STROBE_PROTO_NONCE], uint8_t mac[STROBE_PROTO_MAC])
{
    uint8_t msg[16 + 2 * STROBE_PROTO_NONCE];
    size_t rl = strlen(role);
    if (rl > 16)
        return -EINVAL;
    memcpy(msg, role, rl);
    memcpy(msg + rl, first, STROBE_PROTO_NONCE);
    memcpy(msg + rl + STROBE_PROTO_NONCE, second, STROBE_PROTO_NONCE);
    return strobe__auth_hmac(secret, strlen(secret), msg, rl + 2 * STROBE_PROTO_NONCE, NULL, 0, mac);
}

int strobe__auth_read_secret(const char *path, char **out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        int rc = -errno;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return rc;
    }
    /* checked on the open file, so what is checked is what is read */
    struct stat st;
    if (fstat(fileno(f), &st) < 0) {
        int rc = -errno;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        fclose(f);
        return rc;
    }
    /* as ssh does with private keys: a secret others can read, or one
     * another user can rewrite, is no longer a secret of ours */
    if (st.st_mode & 077) {
        snprintf(err, errlen, "%s: mode %04o lets group or others access the secret (chmod 600)",
                 path, (unsigned)(st.st_mode & 07777));
        fclose(f);
        return -EACCES;
    }
    if (st.st_uid != geteuid() && st.st_uid != 0) {
        snprintf(err, errlen, "%s: owned by uid %u, not by the user running this (uid %u) or root",
                 path, (unsigned)st.st_uid, (unsigned)geteuid());
        fclose(f);
        return -EACCES;
    }
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        n--;
    buf[n] = 0;
    *out = strdup(buf);
    /* do not leave the secret on the stack */
    memset(buf, 0, sizeof buf);
    if (!*out) {
        snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
        return -ENOMEM;
    }
    return 0;
}

int strobe__auth_equal(const uint8_t a[STROBE_PROTO_MAC], const uint8_t b[STROBE_PROTO_MAC])
{
    uint8_t diff = 0;
    for (int i = 0; i < STROBE_PROTO_MAC; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}
