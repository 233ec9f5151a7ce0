/* SPDX-License-Identifier: MIT */
/*
 * HTTP POST through libcurl for the stores that push to a server over
 * HTTP (influx; meant for remote_write too): one connection kept alive
 * between requests, a time limit per request, an optional gzip body, and
 * the server's answer turned into the outbox's verdict (outbox.h).
 * A client belongs to one thread at a time (the outbox's sender thread).
 */
#ifndef STROBE_PLUGINS_HTTP_POST_H
#define STROBE_PLUGINS_HTTP_POST_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/outbox.h"

struct strobe__http_post;

struct strobe__http_answer {
    long status;    /* HTTP status, 0 when no answer came (connection refused, timeout, ...) */
    char body[512]; /* the start of the answer's body, NUL-terminated */
};

/* A client whose requests each take at most timeout_ns; headers is a
 * NULL-terminated list of "Name: value" lines sent with every request
 * (copied; NULL for none); user/password (NULL for none) give basic
 * authentication. 0, -ENOMEM or -EIO (libcurl would not start). */
int strobe__http_post_open(uint64_t timeout_ns, const char *const *headers, const char *user,
                           const char *password, struct strobe__http_post **out);
void strobe__http_post_close(struct strobe__http_post *p);

/* POSTs len bytes to url, gzip-compressed (Content-Encoding: gzip) when
 * gzip is set. Returns the verdict: OK for 2xx; RETRY when no answer came,
 * for 408, 429 and 5xx; REFUSED for any other status. `why` gets a short
 * reason for the log ("HTTP 503", "connection refused", "timeout after
 * 10 s"); *a (may be NULL) the status and the body, for a store that
 * judges some statuses otherwise. */
enum strobe__send_result strobe__http_post(struct strobe__http_post *p, const char *url, const void *data,
                                           size_t len, int gzip, struct strobe__http_answer *a, char *why,
                                           size_t whylen);

#endif
