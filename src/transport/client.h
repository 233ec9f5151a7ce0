/* SPDX-License-Identifier: MIT */
/*
 * strobed client: one request/reply connection to a daemon (nng req0 over
 * TCP; nng redials by itself after failures), the authentication
 * handshake, and a mirror of the daemon's published sets kept current
 * with UPDATE requests that carry the generations already known, so only
 * changed sections travel. Used by aggregators and `strobe ls`.
 * Not thread-safe: one thread per client.
 */
#ifndef STROBE_TRANSPORT_CLIENT_H
#define STROBE_TRANSPORT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/name_index.h"
#include "strobe/metric_set.h"

struct strobe__client;

/* addr: "host:port" or a full nng URL. secret may be NULL; with one,
 * every request first needs the daemon to prove it knows the secret
 * (otherwise -EACCES, and the error text "ADDR did not prove it knows the
 * secret"; every -EACCES text names the peer), and every later request
 * and reply carries a MAC under the connection's session key (session.h):
 * a reply that fails it makes its request fail with -EBADMSG ("reply
 * failed authentication (...); connection dropped"), nothing of it used,
 * and the next request authenticates a new connection. With dial_now (a
 * one-shot client such as `strobe ls`) the connection is made before
 * returning (a refused one is an error), and timeout_ms bounds the whole life of the
 * client: the connection, the handshake and every request end within
 * timeout_ms of this call, or fail with -ETIMEDOUT. Otherwise it returns
 * at once, nng (re)connects in the background and timeout_ms bounds each
 * request (sending it and waiting for its reply). */
int strobe__client_open(const char *addr, const char *secret, uint32_t timeout_ms, int dial_now,
                        struct strobe__client **out);
void strobe__client_close(struct strobe__client *c);
/* From another thread: the request c's own thread waits for (or its next
 * one) fails at once, until strobe__client_reset. NULL is ignored. */
void strobe__client_abort(struct strobe__client *c);
/* After an abort, with no request under way: c serves again, each request
 * bounded by timeout_ms (the connection and its session are kept). */
void strobe__client_reset(struct strobe__client *c, uint32_t timeout_ms);
/* Last error text (server's ERROR message or a local reason). */
const char *strobe__client_error(const struct strobe__client *c);

struct strobe__dir_entry {
    char name[256];
    uint64_t meta_gn, data_gn;
};
/* Published sets of the daemon (malloc'ed array in *out). */
int strobe__client_dir(struct strobe__client *c, struct strobe__dir_entry **out, size_t *n);
/* Decodes the body of a DIR reply (what strobe__client_dir does with it):
 * 0 with a malloc'ed array in *out, STROBE_ERR_FORMAT or -ENOMEM. */
struct strobe__rd;
int strobe__dir_decode(struct strobe__rd *r, struct strobe__dir_entry **out, size_t *n);

/* Runtime control: sends the command words (1 to 64, each 1 to 255
 * bytes; docs/strobed.md) and gives the daemon's reply text (malloc'ed,
 * NUL-terminated) in *text. A refused command gives its code, with the
 * daemon's one-line reason in strobe__client_error. */
int strobe__client_ctl(struct strobe__client *c, char *const *words, size_t n, char **text);

enum strobe__mirror_event { STROBE_MIRROR_NEW, STROBE_MIRROR_UPDATED, STROBE_MIRROR_GONE };

struct strobe__mirror {
    strobe_set **sets;
    size_t n, cap;
    /* by instance name, over positions in sets: sort sets (strobe ls)
     * only once the mirror is not updated any more */
    struct strobe__name_index index;
    size_t bytes_in; /* section bytes received, for statistics */
};

/* One UPDATE round (more when the daemon sends the sets in pages): asks
 * for every published set (or only those matching one of `patterns`,
 * fnmatch globs, when given; at most STROBE_PROTO_MAX_PATTERNS; the
 * daemon filters, so other sets do not travel), applies the replies to
 * the mirror and reports each change. For a
 * GONE event the set is freed after the callback returns. wait_ms > 0
 * asks the server to hold the reply until something changes (push on
 * change) or the time passes. */
int strobe__client_update(struct strobe__client *c, struct strobe__mirror *m,
                          const char *const *patterns, size_t npatterns, uint32_t wait_ms,
                          void (*on_change)(void *ctx, strobe_set *set, enum strobe__mirror_event ev),
                          void *ctx);
/* The two halves of one round of strobe__client_update, for callers that
 * must hold a lock while the mirror changes but not while the network
 * waits. body points into the client's last reply until it is applied
 * (the apply half frees it). *more: the daemon left sets out of this
 * reply (a page of STROBE_PROTO_UPDATE_PAGE bytes of sets the mirror did
 * not have); the next round gets more. The apply half takes c only for
 * its error text and the reply: c may be NULL (the fuzz target
 * tests/fuzz/fuzz_proto_reply.c applies replies without a connection). */
int strobe__client_update_fetch(struct strobe__client *c, const struct strobe__mirror *m,
                                const char *const *patterns, size_t npatterns, uint32_t wait_ms,
                                struct strobe__rd *body, int *more);
int strobe__client_update_apply(struct strobe__client *c, struct strobe__mirror *m,
                                struct strobe__rd *body,
                                void (*on_change)(void *ctx, strobe_set *set, enum strobe__mirror_event ev),
                                void *ctx);
void strobe__mirror_free(struct strobe__mirror *m);

/* Applies one decoded UPDATE item to a mirror (exposed for the fuzzer). */
struct strobe__update_item;
int strobe__mirror_apply(struct strobe__mirror *m, const struct strobe__update_item *it,
                         void (*on_change)(void *ctx, strobe_set *set, enum strobe__mirror_event ev),
                         void *ctx);

#endif
