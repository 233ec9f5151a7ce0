/* SPDX-License-Identifier: MIT */
/*
 * HTTP POST through libcurl (http_post.h). The easy handle is kept between
 * requests so that its connection is reused: a store sending a batch a
 * second does not pay a TCP (or TLS) handshake each time. Signals are off
 * (CURLOPT_NOSIGNAL): the request runs on a sender thread of a daemon that
 * handles its own signals.
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "plugins/http_post.h"
#include "transport/auth.h"

struct strobe__http_post {
    CURL *curl;
    struct curl_slist *headers, *gzip_headers;
    uint64_t timeout_ns;
    unsigned char *z; /* gzip output, grown as needed */
    size_t zcap;
    struct strobe__http_answer *answer; /* of the request under way */
    size_t answer_len;
    char err[CURL_ERROR_SIZE]; /* libcurl's message for a failed request */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Keeps the start of the body; the rest is read and thrown away. */
static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    struct strobe__http_post *p = ctx;
    size_t len = size * n, room = sizeof p->answer->body - 1 - p->answer_len;
    size_t take = len < room ? len : room;
    memcpy(p->answer->body + p->answer_len, data, take);
    p->answer_len += take;
    p->answer->body[p->answer_len] = 0;
    return len;
}

static struct curl_slist *add_header(struct curl_slist *l, const char *line, int *bad)
{
    struct curl_slist *n = curl_slist_append(l, line);
    if (!n) {
        *bad = 1;
        return l;
    }
    return n;
}

int strobe__http_post_open(const struct strobe__http_post_config *c, struct strobe__http_post **out)
{
    const char *const *headers = c->headers;
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return -EIO;
    struct strobe__http_post *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->timeout_ns = c->timeout_ns;
    int bad = !(p->curl = curl_easy_init());
    /* "Expect: 100-continue" costs a round trip per large body */
    p->headers = add_header(NULL, "Expect:", &bad);
    for (size_t i = 0; headers && headers[i]; i++)
        p->headers = add_header(p->headers, headers[i], &bad);
    p->gzip_headers = add_header(NULL, "Expect:", &bad);
    for (size_t i = 0; headers && headers[i]; i++)
        p->gzip_headers = add_header(p->gzip_headers, headers[i], &bad);
    p->gzip_headers = add_header(p->gzip_headers, "Content-Encoding: gzip", &bad);
    if (bad) {
        strobe__http_post_close(p);
        return -ENOMEM;
    }
    long ms = (long)((c->timeout_ns + 999999) / 1000000);
    curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT_MS, ms);
    curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(p->curl, CURLOPT_WRITEDATA, p);
    curl_easy_setopt(p->curl, CURLOPT_POST, 1L);
    curl_easy_setopt(p->curl, CURLOPT_ERRORBUFFER, p->err);
    if (c->user) {
        curl_easy_setopt(p->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(p->curl, CURLOPT_USERNAME, c->user);
        curl_easy_setopt(p->curl, CURLOPT_PASSWORD, c->password ? c->password : "");
    }
    if (c->ca_file)
        curl_easy_setopt(p->curl, CURLOPT_CAINFO, c->ca_file);
    *out = p;
    return 0;
}

void strobe__http_post_close(struct strobe__http_post *p)
{
    if (!p)
        return;
    if (p->curl)
        curl_easy_cleanup(p->curl);
    curl_slist_free_all(p->headers);
    curl_slist_free_all(p->gzip_headers);
    free(p->z);
    free(p);
}

/* The whole body as one gzip member into p->z; its length, or 0 on
 * failure (out of memory). */
static size_t gzip_body(struct strobe__http_post *p, const void *data, size_t len)
{
    z_stream z = {0};
    /* windowBits 15 + 16: gzip framing, which Content-Encoding: gzip
     * names; level 1: line protocol compresses about 10x at it already */
    if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    size_t bound = deflateBound(&z, (uLong)len);
    if (bound > p->zcap) {
        unsigned char *n = realloc(p->z, bound);
        if (!n) {
            deflateEnd(&z);
            return 0;
        }
        p->z = n;
        p->zcap = bound;
    }
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)len;
    z.next_out = p->z;
    z.avail_out = (uInt)p->zcap;
    int rc = deflate(&z, Z_FINISH);
    size_t out = rc == Z_STREAM_END ? z.total_out : 0;
    deflateEnd(&z);
    return out;
}

enum strobe__send_result strobe__http_post(struct strobe__http_post *p, const char *url, const void *data,
                                           size_t len, int gzip, struct strobe__http_answer *a, char *why,
                                           size_t whylen)
{
    struct strobe__http_answer local;
    p->answer = a ? a : &local;
    p->answer->status = 0;
    p->answer->body[0] = 0;
    p->answer_len = 0;
    if (gzip && len < (1u << 31)) {
        size_t zlen = gzip_body(p, data, len);
        if (!zlen) {
            snprintf(why, whylen, "gzip: out of memory");
            return STROBE__SEND_RETRY;
        }
        data = p->z;
        len = zlen;
    } else {
        gzip = 0;
    }
    curl_easy_setopt(p->curl, CURLOPT_URL, url);
    curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, gzip ? p->gzip_headers : p->headers);
    curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, data);
    curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    p->err[0] = 0;
    CURLcode rc = curl_easy_perform(p->curl);
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        snprintf(why, whylen, "timeout after %.3g s", (double)p->timeout_ns / 1e9);
        return STROBE__SEND_RETRY;
    }
    if (rc == CURLE_COULDNT_CONNECT) {
        long err = 0;
        curl_easy_getinfo(p->curl, CURLINFO_OS_ERRNO, &err);
        snprintf(why, whylen, "%s", err ? strerror((int)err) : curl_easy_strerror(rc));
        if (why[0] >= 'A' && why[0] <= 'Z') /* "connection refused", as the log's other reasons */
            why[0] = (char)(why[0] - 'A' + 'a');
        return STROBE__SEND_RETRY;
    }
    if (rc != CURLE_OK) {
        snprintf(why, whylen, "%s", p->err[0] ? p->err : curl_easy_strerror(rc));
        return STROBE__SEND_RETRY;
    }
    long status = 0;
    curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
    p->answer->status = status;
    if (status >= 200 && status < 300)
        return STROBE__SEND_OK;
    /* the server's message on one line */
    const char *body = p->answer->body;
    int n = (int)strlen(body);
    while (n && (body[n - 1] == '\n' || body[n - 1] == '\r' || body[n - 1] == ' '))
        n--;
    snprintf(why, whylen, "HTTP %ld%s%.*s", status, n ? ": " : "", n, body);
    for (char *c = why; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    if (status == 408 || status == 429 || status >= 500)
        return STROBE__SEND_RETRY;
    return STROBE__SEND_REFUSED;
}

int strobe__http_read_secret(const struct strobe_plugin_host *h, const char *key, char **out)
{
    const char *path = h->cfg_str(h, key);
    *out = NULL;
    if (!path)
        return 0;
    char err[512];
    if (strobe__auth_read_secret(path, out, err, sizeof err) < 0)
        return h->cfg_error(h, key, "%s", err);
    return 0;
}

void strobe__http_forget(char *secret)
{
    if (secret)
        memset(secret, 0, strlen(secret));
    free(secret);
}
