/* SPDX-License-Identifier: MIT */
/* Shared-secret challenge/response (auth.h) on mbed TLS's HMAC-SHA256. */
#include <errno.h>
#include <mbedtls/md.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "transport/auth.h"

int strobe__auth_nonce(uint8_t nonce[STROBE_PROTO_NONCE])
{
    ssize_t n = getrandom(nonce, STROBE_PROTO_NONCE, 0);
    return n == STROBE_PROTO_NONCE ? 0 : -EIO;
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
    const mbedtls_md_info_t *md = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
    if (!md || mbedtls_md_hmac(md, (const unsigned char *)secret, strlen(secret), msg,
                               rl + 2 * STROBE_PROTO_NONCE, mac) != 0)
        return -EIO;
    return 0;
}

int strobe__auth_read_secret(const char *path, char **out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        n--;
    buf[n] = 0;
    *out = strdup(buf);
    /* do not leave the secret on the stack */
    memset(buf, 0, sizeof buf);
    return *out ? 0 : -ENOMEM;
}

int strobe__auth_equal(const uint8_t a[STROBE_PROTO_MAC], const uint8_t b[STROBE_PROTO_MAC])
{
    uint8_t diff = 0;
    for (int i = 0; i < STROBE_PROTO_MAC; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}
