/* SPDX-License-Identifier: MIT */
/*
 * strobed wire protocol (docs/formats/protocol.md): request/reply
 * messages carried by nng's req/rep over TCP. Writers build messages in a
 * growable buffer; readers walk a bounded cursor that turns every
 * overrun into an error instead of a read past the end (the decoder is
 * fuzzed: tests/fuzz/fuzz_proto_reply.c and fuzz_proto_request.c).
 */
#ifndef STROBE_TRANSPORT_PROTO_H
#define STROBE_TRANSPORT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define STROBE_PROTO_MAGIC 0x42525453u /* "STRB" little-endian */
#define STROBE_PROTO_VERSION 2 /* 2: messages after the handshake carry a MAC (session.h) */
#define STROBE_PROTO_HDR 12
#define STROBE_PROTO_NONCE 16
#define STROBE_PROTO_MAC 32
#define STROBE_PROTO_MAX_MSG (256u << 20)
/* An UPDATE request lists every set the client has (up to 281 bytes
 * each): 1 MiB refused an aggregator's request past about 30,000 sets of
 * one producer, which then failed every round. 64 MiB hold over 200,000
 * sets with the longest names. */
#define STROBE_PROTO_MAX_REQUEST (64u << 20)
#define STROBE_PROTO_MAX_WAIT_MS 60000u

enum strobe__msg_type {
    STROBE_MSG_HELLO = 1,  /* req: client nonce; rep: flags, server nonce, server proof */
    STROBE_MSG_AUTH = 2,   /* req: client proof; rep: OK or ERROR */
    STROBE_MSG_DIR = 3,    /* req: empty; rep: published sets with generations */
    STROBE_MSG_UPDATE = 4, /* req: known generations; rep: what changed */
    STROBE_MSG_ERROR = 5,  /* rep: code, text */
    STROBE_MSG_OK = 6,     /* rep */
    STROBE_MSG_CTL = 7,    /* req: command words; rep: CTL with the reply text, or ERROR */
};

#define STROBE_HELLO_AUTH_REQUIRED 0x1u /* HELLO reply flag */
#define STROBE_UPDATE_ALL 0x1u          /* UPDATE request flag: also send sets not listed */
#define STROBE_UPDATE_FILTER 0x2u       /* ...only those matching the globs after the list */
#define STROBE_PROTO_MAX_PATTERNS 64
#define STROBE_UPDATE_MORE 0x1u /* UPDATE reply flag: unlisted sets were left out; ask again */
/* An UPDATE reply adds unlisted sets (ALL) until their items pass this
 * many bytes, then sets MORE: a first round with a producer of 10,000
 * large sets is a series of bounded replies, each well within the
 * client's timeout, instead of one that may never arrive in time. */
#define STROBE_PROTO_UPDATE_PAGE (4u << 20)

enum strobe__update_status {
    STROBE_UPD_UNCHANGED = 0, /* nothing follows */
    STROBE_UPD_DATA = 1,      /* data section follows */
    STROBE_UPD_FULL = 2,      /* meta then data section follow */
    STROBE_UPD_GONE = 3,      /* the set is no longer published */
};

struct strobe__wr {
    uint8_t *buf;
    size_t len, cap;
    int err; /* sticky -ENOMEM / STROBE_ERR_LIMIT */
};

struct strobe__rd {
    const uint8_t *p;
    size_t n;
    int err; /* sticky STROBE_ERR_FORMAT */
};

void strobe__wr_u8(struct strobe__wr *w, uint8_t v);
void strobe__wr_u16(struct strobe__wr *w, uint16_t v);
void strobe__wr_u32(struct strobe__wr *w, uint32_t v);
void strobe__wr_u64(struct strobe__wr *w, uint64_t v);
void strobe__wr_bytes(struct strobe__wr *w, const void *p, size_t n);
void strobe__wr_str(struct strobe__wr *w, const char *s); /* u16 length + bytes */
/* Starts a message (header with body length patched by finish). */
void strobe__msg_begin(struct strobe__wr *w, enum strobe__msg_type type, uint16_t flags);
int strobe__msg_finish(struct strobe__wr *w);
void strobe__wr_free(struct strobe__wr *w);

uint8_t strobe__rd_u8(struct strobe__rd *r);
uint16_t strobe__rd_u16(struct strobe__rd *r);
uint32_t strobe__rd_u32(struct strobe__rd *r);
uint64_t strobe__rd_u64(struct strobe__rd *r);
const void *strobe__rd_bytes(struct strobe__rd *r, size_t n);
/* A u16-prefixed string copied NUL-terminated into buf (cap > 255):
 * rejects empty, too long, and embedded NUL. */
int strobe__rd_str(struct strobe__rd *r, char *buf, size_t cap);
/* Checks the header; on success r covers exactly the body. */
int strobe__msg_open(struct strobe__rd *r, const void *msg, size_t len, uint8_t *type,
                     uint16_t *flags);
/* The type a message says it has (0 when it has no header), before its
 * length and MAC are checked: to route it, not to trust it. */
uint8_t strobe__msg_type(const void *msg, size_t len);

/* ERROR message: build / read. */
void strobe__msg_error(struct strobe__wr *w, int code, const char *text);
int strobe__msg_read_error(struct strobe__rd *r, int *code, char *text, size_t cap);

/* One entry of an UPDATE reply, as decoded. Sections point into the
 * message (not aligned). */
struct strobe__update_item {
    char name[256];
    uint8_t status;
    uint64_t meta_gn, data_gn;
    const void *meta, *data;
    uint32_t meta_len, data_len;
};

/* Walk an UPDATE reply body; fn is called for each well-formed entry and
 * may stop the walk by returning non-zero. Returns 0, fn's value, or
 * STROBE_ERR_FORMAT (entries before the bad one were delivered). */
int strobe__update_reply_walk(struct strobe__rd *body,
                              int (*fn)(void *ctx, const struct strobe__update_item *it), void *ctx);

#endif
