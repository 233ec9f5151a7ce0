/* SPDX-License-Identifier: MIT */
/*
 * HTTP POST through libcurl for the stores that push to a server over
 * HTTP (remote_write, influx): one connection kept alive
 * between requests, a time limit per request, an optional gzip body, and
 * the server's answer turned into the outbox's verdict (outbox.h).
 * A client belongs to one thread at a time (the outbox's sender thread).
 */
#ifndef STROBE_PLUGINS_HTTP_POST_H
#define STROBE_PLUGINS_HTTP_POST_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/outbox.h"
#include "strobe/plugin.h"

struct strobe__http_post;

struct strobe__http_answer {
    long status;    /* HTTP status, 0 when no answer came (connection refused, timeout, ...) */
    char body[512]; /* the start of the answer's body, NUL-terminated */
};

struct strobe__http_post_config {
    uint64_t timeout_ns;         /* the most one request takes, connecting included */
    const char *const *headers;  /* "Name: value" lines sent with every request, NULL-terminated
                                    (copied; NULL for none) */
    const char *user, *password; /* basic authentication (copied; user NULL for none) */
    const char *ca_file;         /* PEM CA certificates for https (NULL: the system's) */
};

/* A client for c. 0, -ENOMEM or -EIO (libcurl would not start). */
int strobe__http_post_open(const struct strobe__http_post_config *c, struct strobe__http_post **out);
void strobe__http_post_close(struct strobe__http_post *p);

/* POSTs len bytes to url, gzip-compressed (Content-Encoding: gzip) when
 * gzip is set. Returns the verdict: OK for 2xx; RETRY when no answer came,
 * for 408, 429 and 5xx; REFUSED for any other status. `why` gets a short
 * reason for the log ("HTTP 400: <the body on one line>", "Connection
 * refused", "timeout after 10 s"); *a (may be NULL) the status and the
 * body, for a store that judges some statuses or reads the body itself. */
enum strobe__send_result strobe__http_post(struct strobe__http_post *p, const char *url, const void *data,
                                           size_t len, int gzip, struct strobe__http_answer *a, char *why,
                                           size_t whylen);

/* The secret (password, token) in the file named by the configuration
 * key `key` (mode 0600, as strobed's own secrets) into *out (NULL when the
 * key is absent): 0, or the host's error naming the key. */
int strobe__http_read_secret(const struct strobe_plugin_host *h, const char *key, char **out);
/* Frees a secret, leaving no copy in the freed memory. NULL is allowed. */
void strobe__http_forget(char *secret);

#endif
