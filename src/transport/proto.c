/* SPDX-License-Identifier: MIT */
/*
 * strobed wire protocol: little-endian primitive encoders and a bounded
 * decoder cursor (proto.h, docs/formats/protocol.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strobe/metric_set.h"
#include "transport/proto.h"

static void reserve(struct strobe__wr *w, size_t n)
{
    if (w->err)
        return;
    if (w->len + n > STROBE_PROTO_MAX_MSG) {
        w->err = STROBE_ERR_LIMIT;
        return;
    }
    if (w->len + n <= w->cap)
        return;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + n)
        cap *= 2;
    uint8_t *b = realloc(w->buf, cap);
    if (!b) {
        w->err = -ENOMEM;
        return;
    }
    w->buf = b;
    w->cap = cap;
}

void strobe__wr_bytes(struct strobe__wr *w, const void *p, size_t n)
{
    reserve(w, n);
    if (!w->err && n) {
        memcpy(w->buf + w->len, p, n);
        w->len += n;
    }
}

/* the host is little-endian (static assert in monitor/set.h), so the
 * wire order is the memory order */
void strobe__wr_u8(struct strobe__wr *w, uint8_t v) { strobe__wr_bytes(w, &v, 1); }
void strobe__wr_u16(struct strobe__wr *w, uint16_t v) { strobe__wr_bytes(w, &v, 2); }
void strobe__wr_u32(struct strobe__wr *w, uint32_t v) { strobe__wr_bytes(w, &v, 4); }
void strobe__wr_u64(struct strobe__wr *w, uint64_t v) { strobe__wr_bytes(w, &v, 8); }

void strobe__wr_str(struct strobe__wr *w, const char *s)
{
    size_t n = strlen(s);
    if (n > UINT16_MAX) {
        w->err = STROBE_ERR_LIMIT;
        return;
    }
    strobe__wr_u16(w, (uint16_t)n);
    strobe__wr_bytes(w, s, n);
}

void strobe__msg_begin(struct strobe__wr *w, enum strobe__msg_type type, uint16_t flags)
{
    w->len = 0;
    w->err = 0;
    strobe__wr_u32(w, STROBE_PROTO_MAGIC);
    strobe__wr_u8(w, STROBE_PROTO_VERSION);
    strobe__wr_u8(w, (uint8_t)type);
    strobe__wr_u16(w, flags);
    strobe__wr_u32(w, 0);
}

int strobe__msg_finish(struct strobe__wr *w)
{
    if (w->err)
        return w->err;
    uint32_t body = (uint32_t)(w->len - STROBE_PROTO_HDR);
    memcpy(w->buf + 8, &body, 4);
    return 0;
}

void strobe__wr_free(struct strobe__wr *w)
{
    free(w->buf);
    *w = (struct strobe__wr){ 0 };
}

const void *strobe__rd_bytes(struct strobe__rd *r, size_t n)
{
    if (r->err || n > r->n) {
        r->err = STROBE_ERR_FORMAT;
        return NULL;
    }
    const void *p = r->p;
    r->p += n;
    r->n -= n;
    return p;
}

#define RD(type, r)                                                                                \
    do {                                                                                           \
        type v = 0;                                                                                \
        const void *p = strobe__rd_bytes(r, sizeof v);                                             \
        if (p)                                                                                     \
            memcpy(&v, p, sizeof v);                                                               \
        return v;                                                                                  \
    } while (0)

uint8_t strobe__rd_u8(struct strobe__rd *r) { RD(uint8_t, r); }
uint16_t strobe__rd_u16(struct strobe__rd *r) { RD(uint16_t, r); }
uint32_t strobe__rd_u32(struct strobe__rd *r) { RD(uint32_t, r); }
uint64_t strobe__rd_u64(struct strobe__rd *r) { RD(uint64_t, r); }

int strobe__rd_str(struct strobe__rd *r, char *buf, size_t cap)
{
    uint16_t n = strobe__rd_u16(r);
    const char *p = strobe__rd_bytes(r, n);
    if (!p || n == 0 || n >= cap || n > STROBE_SET_NAME_MAX || memchr(p, 0, n)) {
        r->err = STROBE_ERR_FORMAT;
        return STROBE_ERR_FORMAT;
    }
    memcpy(buf, p, n);
    buf[n] = 0;
    return 0;
}

int strobe__msg_open(struct strobe__rd *r, const void *msg, size_t len, uint8_t *type,
                     uint16_t *flags)
{
    *r = (struct strobe__rd){ msg, len, 0 };
    uint32_t magic = strobe__rd_u32(r);
    uint8_t version = strobe__rd_u8(r);
    *type = strobe__rd_u8(r);
    *flags = strobe__rd_u16(r);
    uint32_t body = strobe__rd_u32(r);
    if (r->err || magic != STROBE_PROTO_MAGIC || body != r->n)
        return STROBE_ERR_FORMAT;
    if (version != STROBE_PROTO_VERSION)
        return STROBE_ERR_VERSION;
    if (*type < STROBE_MSG_HELLO || *type > STROBE_MSG_CTL)
        return STROBE_ERR_FORMAT;
    return 0;
}

uint8_t strobe__msg_type(const void *msg, size_t len)
{
    struct strobe__rd r = { msg, len, 0 };
    uint32_t magic = strobe__rd_u32(&r);
    strobe__rd_u8(&r); /* version */
    uint8_t type = strobe__rd_u8(&r);
    return r.err || magic != STROBE_PROTO_MAGIC ? 0 : type;
}

void strobe__msg_error(struct strobe__wr *w, int code, const char *text)
{
    strobe__msg_begin(w, STROBE_MSG_ERROR, 0);
    strobe__wr_u32(w, (uint32_t)code);
    size_t n = strlen(text);
    if (n > 1024)
        n = 1024;
    strobe__wr_u16(w, (uint16_t)n);
    strobe__wr_bytes(w, text, n);
    strobe__msg_finish(w);
}

int strobe__msg_read_error(struct strobe__rd *r, int *code, char *text, size_t cap)
{
    *code = (int)strobe__rd_u32(r);
    uint16_t n = strobe__rd_u16(r);
    const char *p = strobe__rd_bytes(r, n);
    if (!p || r->n)
        return STROBE_ERR_FORMAT;
    size_t k = 0;
    /* printable ASCII only: the text ends up on a terminal */
    for (size_t i = 0; i < n && k + 1 < cap; i++)
        text[k++] = (p[i] >= 0x20 && p[i] < 0x7f) ? p[i] : '?';
    if (cap)
        text[k] = 0;
    if (*code >= 0)
        *code = STROBE_ERR_FORMAT; /* errors are negative by definition */
    return 0;
}

int strobe__update_reply_walk(struct strobe__rd *r,
                              int (*fn)(void *ctx, const struct strobe__update_item *it), void *ctx)
{
    uint32_t n = strobe__rd_u32(r);
    if (r->err)
        return STROBE_ERR_FORMAT;
    for (uint32_t i = 0; i < n; i++) {
        struct strobe__update_item it = { 0 };
        if (strobe__rd_str(r, it.name, sizeof it.name) < 0)
            return STROBE_ERR_FORMAT;
        it.status = strobe__rd_u8(r);
        it.meta_gn = strobe__rd_u64(r);
        it.data_gn = strobe__rd_u64(r);
        if (it.status == STROBE_UPD_FULL) {
            it.meta_len = strobe__rd_u32(r);
            if (it.meta_len > STROBE_SET_MAX_BYTES)
                return STROBE_ERR_FORMAT;
            it.meta = strobe__rd_bytes(r, it.meta_len);
        }
        if (it.status == STROBE_UPD_FULL || it.status == STROBE_UPD_DATA) {
            it.data_len = strobe__rd_u32(r);
            if (it.data_len > STROBE_SET_MAX_BYTES)
                return STROBE_ERR_FORMAT;
            it.data = strobe__rd_bytes(r, it.data_len);
        }
        if (r->err || it.status > STROBE_UPD_GONE)
            return STROBE_ERR_FORMAT;
        int rc = fn(ctx, &it);
        if (rc)
            return rc;
    }
    return r->n ? STROBE_ERR_FORMAT : 0;
}
