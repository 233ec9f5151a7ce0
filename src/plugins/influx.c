/* SPDX-License-Identifier: MIT */
/*
 * `influx` store: metric sets as InfluxDB line protocol (influx_lp.c) over
 * HTTP (docs/plugins.md, "influx"). update() encodes a set into the
 * current batch; a batch of batch_values values, one older than
 * batch_age, or what flush() finds is handed to the outbox (outbox.h),
 * whose sender thread POSTs it to /write (InfluxDB 1.x: db, optional
 * retention policy) or /api/v2/write (InfluxDB 2.x: org and bucket) with
 * precision=ns, so that a slow or dead server never holds up the daemon.
 *
 * The server's answer decides what happens to a batch: 2xx delivered;
 * no answer, 408, 429 and 5xx retried with back-off; 401, 403 and 404
 * retried too, because they are the site's configuration (credentials, a
 * database not yet created) that an administrator fixes, and the queue
 * keeps the data meanwhile (up to its bound); any other 4xx (400: a
 * field type conflict or a line InfluxDB cannot parse, 413: larger than
 * its max-body-size) is refused for good: the batch is dropped and
 * counted, and the outbox logs InfluxDB's own message once.
 *   keys: url (required), db or org + bucket, retention_policy, username +
 *         password_file, token_file, tls_ca_file, gzip, batch_values, batch_age,
 *         timeout, sets, schemas, queue_dir, queue_size, retry_min,
 *         retry_max.
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugins/http_post.h"
#include "plugins/influx_lp.h"
#include "plugins/outbox.h"
#include "plugins/plugins.h"
#include "plugins/store_common.h"

struct influx {
    const struct strobe_plugin_host *h;
    struct strobe__store_filter filter;
    struct strobe__outbox_config oc;
    struct strobe__outbox *outbox;
    struct strobe__http_post *http; /* used on the outbox's sender thread only */
    char *url;                      /* the write endpoint with its query string */
    char *base;                     /* the `url` key, for the log */
    int gzip;
    uint64_t batch_values, batch_age_ns, timeout_ns;
    struct strobe__wr batch;    /* encoded lines not yet handed to the outbox */
    uint64_t batch_n, batch_t0; /* values in it; when its first line came (monotonic ns) */
    struct strobe__influx_count count;
    uint64_t batches, skipped; /* handed to the outbox; inconsistent sets */
};

/* InfluxDB's message in an error answer such as {"error":"partial write:
 * field type conflict: ..."}, its JSON escapes undone for the log line. */
static void server_message(const char *body, char *out, size_t cap)
{
    const char *m = strstr(body, "\"error\":\"");
    size_t n = 0;
    for (m += 9; *m && *m != '"' && n + 1 < cap; m++) {
        if (*m == '\\' && m[1])
            m++;
        out[n++] = *m;
    }
    out[n] = 0;
}

/* The outbox's send callback: one batch, one POST. */
static enum strobe__send_result send_batch(void *ctx, const void *batch, size_t len, char *why, size_t whylen)
{
    struct influx *s = ctx;
    struct strobe__http_answer a;
    enum strobe__send_result r = strobe__http_post(s->http, s->url, batch, len, s->gzip, &a, why, whylen);
    if (a.status >= 300 && strstr(a.body, "\"error\":\"")) {
        char msg[400];
        server_message(a.body, msg, sizeof msg);
        snprintf(why, whylen, "HTTP %ld: %s", a.status, msg);
    }
    if (a.status == 401 || a.status == 403 || a.status == 404)
        r = STROBE__SEND_RETRY;
    return r;
}

/* Hands the current batch to the outbox. */
static int put_batch(struct influx *s)
{
    if (!s->batch.len)
        return 0;
    /* a batch the outbox cannot take is counted and logged there */
    int rc = strobe__outbox_put(s->outbox, s->batch.buf, s->batch.len);
    s->batches++;
    s->batch.len = 0;
    s->batch_n = 0;
    return rc == -EFBIG ? 0 : rc;
}

static int update_influx(void *state, const strobe_set *set)
{
    struct influx *s = state;
    if (!strobe__store_filter_match(&s->filter, set))
        return 0;
    if (!strobe_set_is_consistent(set)) {
        s->skipped++; /* half-written (or never written) data is not a point */
        return 0;
    }
    if (!s->batch.len)
        s->batch_t0 = strobe__outbox_now_ns();
    size_t len = s->batch.len;
    uint64_t before = s->count.values;
    int rc = strobe__influx_encode(&s->batch, set, &s->count);
    if (rc < 0) {
        s->batch.len = len; /* a set is in a batch whole or not at all */
        s->batch.err = 0;
        return rc;
    }
    s->batch_n += s->count.values - before;
    if (s->batch_n >= s->batch_values || strobe__outbox_now_ns() - s->batch_t0 >= s->batch_age_ns)
        return put_batch(s);
    return 0;
}

static int flush_influx(void *state)
{
    return put_batch(state);
}

static void close_influx(void *state)
{
    struct influx *s = state;
    put_batch(s);
    /* what the server does not take within one timeout stays queued on
     * disk for the next start */
    strobe__outbox_drain(s->outbox, s->timeout_ns);
    struct strobe__outbox_stats st;
    strobe__outbox_stats(s->outbox, &st);
    strobe__outbox_close(s->outbox);
    strobe__http_post_close(s->http);
    s->h->log(
        s->h,
        st.refused_batches || st.dropped_batches || st.queued_batches ? STROBE_LOG_WARN : STROBE_LOG_INFO,
        "%" PRIu64 " value(s) in %" PRIu64 " batch(es) since the start: %" PRIu64 " sent, %" PRIu64
        " refused, %" PRIu64 " dropped, %" PRIu64 " left queued in %s for the next start; %" PRIu64
        " value(s) left out (invalid, NaN or above INT64_MAX), %" PRIu64 " update(s) skipped (half-written)",
        s->count.values, s->batches, st.sent_batches, st.refused_batches, st.dropped_batches,
        st.queued_batches, s->oc.dir, s->count.omitted, s->skipped);
    strobe__wr_free(&s->batch);
    free(s->url);
    free(s->base);
    free(s);
}

/* "&name=<value, URL-encoded>" appended to the query string q. */
static int add_param(CURL *c, char *q, size_t cap, const char *name, const char *value)
{
    if (!value)
        return 0;
    char *e = curl_easy_escape(c, value, 0);
    if (!e)
        return -ENOMEM;
    size_t len = strlen(q);
    int n = snprintf(q + len, cap - len, "%s%s=%s", len ? "&" : "", name, e);
    curl_free(e);
    return n < 0 || (size_t)n >= cap - len ? -ENAMETOOLONG : 0;
}

/* The write endpoint: <url>/write?db=..&rp=..&precision=ns (1.x) or
 * <url>/api/v2/write?org=..&bucket=..&precision=ns (2.x). */
static int make_url(struct influx *s, const char *db, const char *rp, const char *org, const char *bucket)
{
    CURL *c = curl_easy_init();
    if (!c)
        return -ENOMEM;
    char q[2048] = "";
    int rc = 0;
    if (db)
        rc = add_param(c, q, sizeof q, "db", db);
    if (rc == 0)
        rc = add_param(c, q, sizeof q, "rp", rp);
    if (rc == 0)
        rc = add_param(c, q, sizeof q, "org", org);
    if (rc == 0)
        rc = add_param(c, q, sizeof q, "bucket", bucket);
    if (rc == 0)
        rc = add_param(c, q, sizeof q, "precision", "ns");
    curl_easy_cleanup(c);
    if (rc < 0)
        return rc;
    size_t blen = strlen(s->base);
    while (blen && s->base[blen - 1] == '/')
        blen--;
    size_t cap = blen + strlen(q) + 32;
    if (!(s->url = malloc(cap)))
        return -ENOMEM;
    snprintf(s->url, cap, "%.*s%s?%s", (int)blen, s->base, db ? "/write" : "/api/v2/write", q);
    return 0;
}

static int open_influx(const struct strobe_plugin_host *h, void **state)
{
    struct influx *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->h = h;
    char *password = NULL, *token = NULL;
    const char *url = h->cfg_str(h, "url"), *db = h->cfg_str(h, "db"),
               *rp = h->cfg_str(h, "retention_policy");
    const char *org = h->cfg_str(h, "org"), *bucket = h->cfg_str(h, "bucket"),
               *user = h->cfg_str(h, "username");
    const char *gz = h->cfg_str(h, "gzip");
    int rc;
    if ((rc = strobe__store_filter_read(h, &s->filter)) < 0 ||
        (rc = h->cfg_u64(h, "batch_values", 10000, &s->batch_values)) < 0 ||
        (rc = h->cfg_duration(h, "batch_age", 1000000000u, &s->batch_age_ns)) < 0 ||
        (rc = h->cfg_duration(h, "timeout", 10000000000u, &s->timeout_ns)) < 0 ||
        (rc = strobe__outbox_config_read(h, &s->oc)) < 0)
        goto fail;
    if (!url || !*url) {
        rc = h->cfg_error(h, NULL, "`url` (the InfluxDB server, e.g. http://127.0.0.1:8086) is required");
        goto fail;
    }
    if (!db == !bucket) {
        rc = h->cfg_error(h, NULL, "give `db` (InfluxDB 1.x) or `org` and `bucket` (InfluxDB 2.x), not %s",
                          db ? "both" : "neither");
        goto fail;
    }
    if (bucket && (!org || rp)) {
        rc = h->cfg_error(
            h, rp ? "retention_policy" : "bucket",
            rp ? "`retention_policy` is InfluxDB 1.x's; with a bucket (2.x) the bucket keeps the data"
               : "`bucket` needs `org`");
        goto fail;
    }
    if (gz && strobe__store_parse_bool(gz, &s->gzip) < 0) {
        rc = h->cfg_error(h, "gzip", "'%s': expected true or false", gz);
        goto fail;
    }
    if (!s->batch_values) {
        rc = h->cfg_error(h, "batch_values", "must be at least 1");
        goto fail;
    }
    if (!s->timeout_ns) {
        rc = h->cfg_error(h, "timeout", "must be more than 0");
        goto fail;
    }
    if ((rc = strobe__http_read_secret(h, "password_file", &password)) < 0 ||
        (rc = strobe__http_read_secret(h, "token_file", &token)) < 0)
        goto fail;
    if (!user != !password || (user && token)) {
        rc = h->cfg_error(h,
                          user       ? "username"
                          : password ? "password_file"
                                     : "token_file",
                          "authenticate with `username` and `password_file`, or with `token_file`");
        goto fail;
    }
    if (!(s->base = strdup(url))) {
        rc = -ENOMEM;
        goto fail;
    }
    if ((rc = make_url(s, db, rp, org, bucket)) < 0) {
        if (rc == -ENAMETOOLONG)
            rc = h->cfg_error(h, db ? "db" : "bucket", "the names make a URL longer than 2 kB");
        goto fail;
    }
    char auth[1100];
    const char *headers[] = {"Content-Type: text/plain; charset=utf-8", token ? auth : NULL, NULL};
    if (token)
        snprintf(auth, sizeof auth, "Authorization: Token %s", token);
    struct strobe__http_post_config hc = {
        .timeout_ns = s->timeout_ns,
        .headers = headers,
        .user = user,
        .password = password,
        .ca_file = h->cfg_str(h, "tls_ca_file"),
    };
    rc = strobe__http_post_open(&hc, &s->http);
    memset(auth, 0, sizeof auth);
    if (rc < 0)
        goto fail;
    s->oc.target = s->base;
    if ((rc = strobe__outbox_open(h, &s->oc, send_batch, s, &s->outbox)) < 0)
        goto fail;
    strobe__http_forget(password);
    strobe__http_forget(token);
    *state = s;
    return 0;
fail:
    strobe__http_forget(password);
    strobe__http_forget(token);
    strobe__http_post_close(s->http);
    free(s->url);
    free(s->base);
    free(s);
    return rc;
}

const struct strobe_plugin strobe__plugin_influx = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_STORE,
    .name = "influx",
    .summary = "InfluxDB line protocol over HTTP (1.x /write, 2.x /api/v2/write), batched, queued on disk",
    .open = open_influx,
    .update = update_influx,
    .flush = flush_influx,
    .close = close_influx,
};
