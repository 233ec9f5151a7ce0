/* SPDX-License-Identifier: MIT */
/*
 * Prometheus exposition (http.h). Each metric of a set becomes the family
 * strobe_<schema>_<metric> (names sanitised to [a-zA-Z0-9_]; a counter,
 * STROBE_METRIC_COUNTER, is of type counter and named ..._total) with labels
 * (char meta metrics of the set, such as job_id, are labels too)
 * instance and producer (and index for array elements); one family's
 * samples from all sets of a schema are written together, as the format
 * requires. Invalid values are exported as NaN; char metrics are left out
 * (Prometheus values are numbers). The timestamp is the set's
 * transaction time in ms. A daemon that aggregates also exports each
 * producer's liveness, without timestamps (the scrape's time), and leaves
 * out the sets of a producer down longer than its stale_after: with their
 * explicit timestamps Prometheus would otherwise show their last values
 * as current for ever.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <strings.h>
#include <stdbool.h>
#include <nng/nng.h>
#include <nng/supplemental/http/http.h>
#include <nng/supplemental/tls/tls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/prom_names.h"
#include "strobed/aggregator.h"
#include "strobed/daemon.h"
#include "strobed/http.h"
#include "transport/proto.h"

struct strobe__http {
    struct strobe__daemon *d;
    nng_http_server *srv;
    nng_http_handler *h;
};

static void put_label(struct strobe__wr *w, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            strobe__wr_u8(w, '\\');
        if (*s == '\n') {
            strobe__wr_bytes(w, "\\n", 2);
            continue;
        }
        strobe__wr_u8(w, (uint8_t)*s);
    }
}

static void put_text(struct strobe__wr *w, const char *s) { strobe__wr_bytes(w, s, strlen(s)); }

/* the family name (prom_names.h) */
static void family(struct strobe__wr *w, const char *schema, const char *metric, bool counter)
{
    char name[STROBE__PROM_NAME_MAX];
    strobe__wr_bytes(w, name, strobe__prom_family(name, sizeof name, schema, metric, counter));
}

static int in_group(const struct strobe__daemon *d, size_t b, const char *schema)
{
    return (d->sets[b].flags & STROBE_SET_PUBLISH) && !(d->sets[b].flags & STROBE__SET_STALE) &&
           !strcmp(strobe_set_schema_name(d->sets[b].set), schema);
}

/* strobe_producer_up and strobe_producer_last_update_age_seconds of every
 * producer this daemon aggregates; marks the sets of those down longer
 * than their stale_after, which the families then leave out. */
static void put_producers(struct strobe__daemon *d, struct strobe__wr *w)
{
    uint64_t now = strobe__wall_ns();
    struct strobe__producer_state *st = calloc(d->nprod ? d->nprod : 1, sizeof *st);
    if (!st) {
        w->err = -ENOMEM;
        return;
    }
    for (size_t i = 0; i < d->nprod; i++)
        strobe__aggregator_state(d->prod[i], now, &st[i]);
    for (size_t b = 0; b < d->nsets; b++) {
        d->sets[b].flags &= ~STROBE__SET_STALE;
        for (size_t i = 0; i < d->nprod; i++)
            if (d->sets[b].source == d->prod[i] && st[i].stale)
                d->sets[b].flags |= STROBE__SET_STALE;
    }
    static const char *const fams[2] = {"strobe_producer_up", "strobe_producer_last_update_age_seconds"};
    for (int f = 0; f < 2 && d->nprod; f++) {
        put_text(w, "# TYPE ");
        put_text(w, fams[f]);
        put_text(w, " gauge\n");
        for (size_t i = 0; i < d->nprod; i++) {
            char val[64];
            put_text(w, fams[f]);
            put_text(w, "{producer=\"");
            put_label(w, st[i].address);
            if (f == 0)
                snprintf(val, sizeof val, "\"} %d\n", st[i].up);
            else
                snprintf(val, sizeof val, "\"} %.3f\n", (double)st[i].age_ns / 1e9);
            put_text(w, val);
        }
    }
    free(st);
}

/* name="value" (escaped) of each label after the first, ',' before it */
struct label_out {
    struct strobe__wr *w;
    int n;
};

static void put_one_label(void *ctx, const char *name, const char *value)
{
    struct label_out *o = ctx;
    struct strobe__wr *w = o->w;
    if (o->n++)
        strobe__wr_u8(w, ',');
    put_text(w, name);
    put_text(w, "=\"");
    put_label(w, value);
    strobe__wr_u8(w, '"');
}

/* One family: metric `mname` (described by set `desc`, metric m) with the
 * samples of every set of the schema group that starts at `a`. */
static void put_family(struct strobe__wr *w, const struct strobe__daemon *d, size_t a, const char *schema,
                       const strobe_set *desc, uint32_t m)
{
    const char *mname = strobe_set_metric_name(desc, m);
    bool counter = strobe__prom_is_counter(desc, m);
    put_text(w, "# TYPE ");
    family(w, schema, mname, counter);
    put_text(w, counter ? " counter\n" : " gauge\n");
    if (*strobe_set_metric_unit(desc, m)) {
        put_text(w, "# HELP ");
        family(w, schema, mname, counter);
        put_text(w, " unit: ");
        put_text(w, strobe_set_metric_unit(desc, m));
        strobe__wr_u8(w, '\n');
    }
    for (size_t b = a; b < d->nsets; b++) {
        strobe_set *s = d->sets[b].set;
        if (!in_group(d, b, schema))
            continue;
        int i = strobe_set_metric_index(s, mname);
        if (i < 0 || strobe_set_metric_type(s, (uint32_t)i) == STROBE_MT_CHAR || !strobe_set_is_consistent(s))
            continue;
        uint32_t cnt = strobe_set_metric_count(s, (uint32_t)i);
        for (uint32_t j = 0; j < cnt; j++) {
            char val[64], tail[64];
            family(w, schema, mname, counter);
            strobe__wr_u8(w, '{');
            struct label_out lo = { w, 0 };
            strobe__prom_labels(s, put_one_label, &lo);
            if (cnt > 1) {
                snprintf(val, sizeof val, ",index=\"%u\"", j);
                put_text(w, val);
            }
            put_text(w, "} ");
            if (!strobe_set_is_valid(s, (uint32_t)i))
                snprintf(val, sizeof val, "NaN");
            else
                strobe_set_format_value(s, (uint32_t)i, j, val, sizeof val);
            put_text(w, val);
            snprintf(tail, sizeof tail, " %llu\n", (unsigned long long)(strobe_set_timestamp(s) / 1000000ull));
            put_text(w, tail);
        }
    }
}

int strobe__prometheus_text(struct strobe__daemon *d, struct strobe__wr *w)
{
    put_producers(d, w);
    char *done = calloc(d->nsets + 1, 1); /* sets whose schema was written */
    if (!done)
        return -ENOMEM;
    for (size_t a = 0; a < d->nsets; a++) {
        if (done[a] || !(d->sets[a].flags & STROBE_SET_PUBLISH) || (d->sets[a].flags & STROBE__SET_STALE))
            continue;
        const char *schema = strobe_set_schema_name(d->sets[a].set);
        /* Sets of one schema name may differ in their metrics (a producer
         * restarted with another configuration): every distinct layout
         * adds the families the earlier ones did not have. */
        for (size_t l = a; l < d->nsets; l++) {
            if (!in_group(d, l, schema))
                continue;
            strobe_set *lay = d->sets[l].set;
            int seen = 0;
            for (size_t e = a; e < l && !seen; e++)
                seen = in_group(d, e, schema) && strobe_set_schema_sum(d->sets[e].set) == strobe_set_schema_sum(lay);
            if (seen)
                continue;
            for (uint32_t m = 0; m < strobe_set_card(lay); m++) {
                if (strobe_set_metric_type(lay, m) == STROBE_MT_CHAR)
                    continue;
                int emitted = 0;
                for (size_t e = a; e < l && !emitted; e++)
                    emitted = in_group(d, e, schema) &&
                              strobe_set_metric_index(d->sets[e].set, strobe_set_metric_name(lay, m)) >= 0;
                if (!emitted)
                    put_family(w, d, a, schema, lay, m);
            }
        }
        for (size_t b = a; b < d->nsets; b++)
            if (!strcmp(strobe_set_schema_name(d->sets[b].set), schema))
                done[b] = 1;
    }
    free(done);
    return w->err;
}

/* Equal without an early exit, so the time taken says nothing of where a
 * guess went wrong. */
static int same_secret(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    unsigned diff = (unsigned)(alen ^ blen);
    for (size_t i = 0; i < alen; i++)
        diff |= (unsigned char)a[i] ^ (unsigned char)b[i % (blen ? blen : 1)];
    return diff == 0;
}

/* The request's Authorization header carries the token: as a bearer token
 * (Prometheus `authorization: {credentials_file: ...}`) or as the
 * password of basic authentication, any user name (`basic_auth`). */
static int authorized(const char *header, const char *token)
{
    if (!header)
        return 0;
    if (strncasecmp(header, "Bearer ", 7) == 0)
        return same_secret(header + 7, strlen(header + 7), token);
    if (strncasecmp(header, "Basic ", 6) != 0)
        return 0;
    unsigned char plain[512];
    const char *b64 = header + 6;
    size_t len = strlen(b64);
    /* at most 3 bytes out for every 4 in: 510 fit, with the NUL */
    if (len > 4 * ((sizeof plain - 1) / 3))
        return 0;
    EVP_ENCODE_CTX *ctx = EVP_ENCODE_CTX_new();
    int out = 0, fin = 0;
    int bad = !ctx;
    if (!bad) {
        EVP_DecodeInit(ctx);
        bad = EVP_DecodeUpdate(ctx, plain, &out, (const unsigned char *)b64, (int)len) < 0 ||
              EVP_DecodeFinal(ctx, plain + out, &fin) != 1;
        EVP_ENCODE_CTX_free(ctx);
    }
    if (bad)
        return 0;
    size_t n = (size_t)(out + fin);
    plain[n] = 0;
    const char *colon = memchr(plain, ':', n);
    int ok = colon && same_secret(colon + 1, n - (size_t)(colon + 1 - (const char *)plain), token);
    memset(plain, 0, sizeof plain);
    return ok;
}

/* 401 with the schemes a scraper may use. */
static void refuse(nng_aio *aio, struct strobe__http *hs, const char *why)
{
    strobe__log(hs->d, STROBE_LOG_WARN, "/metrics: %s: refused (401)", why);
    nng_http_res *res;
    if (nng_http_res_alloc(&res) != 0) {
        nng_aio_finish(aio, NNG_ENOMEM);
        return;
    }
    static const char body[] = "401 Unauthorized: /metrics needs the daemon's token\n";
    nng_http_res_set_status(res, NNG_HTTP_STATUS_UNAUTHORIZED);
    nng_http_res_set_header(res, "WWW-Authenticate", "Bearer realm=\"strobed\", Basic realm=\"strobed\"");
    nng_http_res_set_header(res, "Content-Type", "text/plain; charset=utf-8");
    /* a body, so that the response has a length and the client is not left
     * waiting for more */
    nng_http_res_copy_data(res, body, sizeof body - 1);
    nng_aio_set_output(aio, 0, res);
    nng_aio_finish(aio, 0);
}

static void metrics_cb(nng_aio *aio)
{
    nng_http_req *req = nng_aio_get_input(aio, 0);
    nng_http_handler *h = nng_aio_get_input(aio, 1);
    struct strobe__http *hs = nng_http_handler_get_data(h);
    if (hs->d->http_token) {
        const char *auth = nng_http_req_get_header(req, "Authorization");
        if (!authorized(auth, hs->d->http_token)) {
            refuse(aio, hs, auth ? "wrong credentials" : "no credentials");
            return;
        }
    }
    struct strobe__wr w = { 0 };
    pthread_mutex_lock(&hs->d->lock);
    int rc = strobe__prometheus_text(hs->d, &w);
    pthread_mutex_unlock(&hs->d->lock);
    nng_http_res *res;
    if (nng_http_res_alloc(&res) != 0) {
        strobe__wr_free(&w);
        nng_aio_finish(aio, NNG_ENOMEM);
        return;
    }
    if (rc < 0) {
        nng_http_res_set_status(res, NNG_HTTP_STATUS_INTERNAL_SERVER_ERROR);
    } else {
        nng_http_res_set_header(res, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        nng_http_res_copy_data(res, w.buf ? (void *)w.buf : (void *)"", w.len);
    }
    strobe__wr_free(&w);
    nng_aio_set_output(aio, 0, res);
    nng_aio_finish(aio, 0);
}

/* Reads a whole PEM file (NUL-terminated); NULL and err on failure. */
static char *read_pem(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t n = 0;
    if (f) {
        buf = malloc(1 << 20);
        n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
        fclose(f);
    }
    if (!buf || n == 0) {
        snprintf(err, errlen, "%s: %s", path, !f ? strerror(errno) : "empty or unreadable");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

/* HTTPS for /metrics: the daemon's certificate and key (PEM). */
static int tls_setup(struct strobe__http *hs, struct strobe__daemon *d, char *err, size_t errlen)
{
    char *cert = read_pem(d->http_tls_cert, err, errlen), *key = cert ? read_pem(d->http_tls_key, err, errlen) : NULL;
    nng_tls_config *cfg = NULL;
    int rv = !cert || !key ? NNG_EINVAL : nng_tls_config_alloc(&cfg, NNG_TLS_MODE_SERVER);
    if (rv == 0 && (rv = nng_tls_config_own_cert(cfg, cert, key, NULL)) != 0)
        snprintf(err, errlen, "http_tls_cert %s / http_tls_key %s: %s", d->http_tls_cert, d->http_tls_key,
                 nng_strerror(rv));
    else if (rv == 0 && (rv = nng_http_server_set_tls(hs->srv, cfg)) != 0)
        snprintf(err, errlen, "https: %s", nng_strerror(rv));
    if (key)
        memset(key, 0, strlen(key));
    free(cert);
    free(key);
    if (cfg)
        nng_tls_config_free(cfg);
    return rv;
}

int strobe__http_start(struct strobe__daemon *d, const char *addr, struct strobe__http **out,
                       char *err, size_t errlen)
{
    struct strobe__http *hs = calloc(1, sizeof *hs);
    if (!hs)
        return -ENOMEM;
    hs->d = d;
    char url[512];
    snprintf(url, sizeof url, strstr(addr, "://") ? "%s" : d->http_tls_cert ? "https://%s" : "http://%s", addr);
    nng_url *u = NULL;
    int rv = nng_url_parse(&u, url);
    if (rv == 0)
        rv = nng_http_server_hold(&hs->srv, u);
    if (rv == 0 && d->http_tls_cert && (rv = tls_setup(hs, d, err, errlen)) != 0) {
        nng_url_free(u);
        nng_http_server_release(hs->srv);
        free(hs);
        return -EINVAL;
    }
    if (rv == 0)
        rv = nng_http_handler_alloc(&hs->h, "/metrics", metrics_cb);
    if (rv == 0) {
        nng_http_handler_set_data(hs->h, hs, NULL);
        rv = nng_http_server_add_handler(hs->srv, hs->h);
    }
    if (rv == 0)
        rv = nng_http_server_start(hs->srv);
    if (u)
        nng_url_free(u);
    if (rv) {
        snprintf(err, errlen, "http %s: %s", addr, nng_strerror(rv));
        if (hs->srv)
            nng_http_server_release(hs->srv);
        free(hs);
        return rv == NNG_EADDRINUSE ? -EADDRINUSE : -EINVAL;
    }
    strobe__log(d, STROBE_LOG_INFO, "Prometheus exposition on %s/metrics", url);
    *out = hs;
    return 0;
}

void strobe__http_stop(struct strobe__http *hs)
{
    if (!hs)
        return;
    nng_http_server_stop(hs->srv);
    nng_http_server_release(hs->srv);
    free(hs);
}
