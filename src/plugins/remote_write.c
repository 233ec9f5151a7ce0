/* SPDX-License-Identifier: MIT */
/*
 * `remote_write` store: the Prometheus remote-write 1.0 protocol
 * (docs/plugins.md, "remote_write"). Each numeric metric element of a set
 * is one time series named and labelled exactly as strobed's /metrics
 * shows it (prom_names.h); update() appends the set's values, stamped with
 * its transaction time in ms, to the series of the current batch. A batch
 * (a WriteRequest: every series with its samples in time order, and the
 * families' type metadata) is packed by protobuf-c, compressed by snappy
 * and handed to the outbox (outbox.h) when it holds batch_values values,
 * when it is batch_age old at an update, and at every flush(); the
 * outbox's thread POSTs it (http_post.h) and retries what the receiver did
 * not take. Invalid values are sent as NaN, as /metrics shows them; char
 * metrics are left out (values are numbers), meta char metrics are labels.
 *   keys: url (the receiver's write endpoint; required), sets, schemas,
 *         batch_values (default 5000), batch_age (default 1s),
 *         timeout (per request, default 10s), queue_dir, queue_size,
 *         retry_min, retry_max (outbox.h), username + password_file
 *         (basic authentication), bearer_token_file, tls_ca_file.
 * An update whose timestamp is not newer than the set's last one is
 * skipped (counted): the receiver would refuse the whole batch for one
 * out-of-order sample.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/name_index.h"
#include "plugins/http_post.h"
#include "plugins/outbox.h"
#include "plugins/plugins.h"
#include "plugins/prom_names.h"
#include "plugins/store_common.h"
#include "remote_write.pb-c.h"

/* One series: metric `metric`, element `elem` of a set. */
struct rw_series {
    StrobeRw__TimeSeries ts;
    StrobeRw__Label *lab; /* its labels; ts.labels points at them, sorted */
    StrobeRw__Sample *s;  /* samples of the current batch */
    size_t cap;
    uint32_t metric, elem;
};

/* The families (with their type) of one schema layout. */
struct rw_schema {
    uint64_t sum;
    StrobeRw__MetricMetadata *md;
    size_t nmd;
    int in_batch;
};

/* A set seen by the store, by instance name. */
struct rw_set {
    char *instance;
    uint64_t sum;
    uint64_t last_ms; /* the newest timestamp taken */
    struct rw_series *series;
    size_t nseries;
    char **strings; /* what the labels point at */
    size_t nstrings;
    struct rw_schema *schema;
    int in_batch;
};

struct rw {
    const struct strobe_plugin_host *h;
    char *url;
    struct strobe__store_filter filter;
    uint64_t batch_values, batch_age_ns, timeout_ns;
    struct rw_set **sets;
    size_t nsets;
    struct strobe__name_index index;
    struct rw_schema **schemas;
    size_t nschemas;
    /* the current batch */
    struct rw_set **batch;
    size_t nbatch, batchcap;
    uint64_t nvalues, started_ns;
    StrobeRw__TimeSeries **tsp;
    StrobeRw__MetricMetadata **mdp;
    StrobeRw__Sample **sp;
    size_t tspcap, mdpcap, spcap;
    uint8_t *pb, *z;
    size_t pbcap, zcap;
    struct strobe__outbox *out;
    struct strobe__http_post *http; /* the sender thread's */
    uint64_t values, batches, skipped, errors;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *v = realloc(*p, c * size);
    if (!v)
        return -ENOMEM;
    *p = v;
    *cap = c;
    return 0;
}

/* ---- sets and their series -------------------------------------------------------- */

static void set_free(struct rw_set *st)
{
    for (size_t i = 0; i < st->nseries; i++) {
        free(st->series[i].ts.labels);
        free(st->series[i].lab);
        free(st->series[i].s);
    }
    for (size_t i = 0; i < st->nstrings; i++)
        free(st->strings[i]);
    free(st->strings);
    free(st->series);
    free(st->instance);
    free(st);
}

/* A string the set's labels point at, owned by the set. */
static char *keep(struct rw_set *st, const char *s)
{
    char **v = realloc(st->strings, (st->nstrings + 1) * sizeof *v);
    if (!v)
        return NULL;
    st->strings = v;
    return (v[st->nstrings] = strdup(s)) ? v[st->nstrings++] : NULL;
}

struct common_labels {
    struct rw_set *st;
    StrobeRw__Label l[64];
    size_t n;
    int err;
};

static void add_common(void *ctx, const char *name, const char *value)
{
    struct common_labels *c = ctx;
    if (c->n == sizeof c->l / sizeof c->l[0]) {
        c->err = -E2BIG;
        return;
    }
    StrobeRw__Label *l = &c->l[c->n];
    strobe_rw__label__init(l);
    if (!(l->name = keep(c->st, name)) || !(l->value = keep(c->st, value)))
        c->err = -ENOMEM;
    else
        c->n++;
}

static int cmp_label(const void *a, const void *b)
{
    return strcmp((*(StrobeRw__Label *const *)a)->name, (*(StrobeRw__Label *const *)b)->name);
}

/* The families of a schema layout, shared by its sets. */
static struct rw_schema *schema_for(struct rw *s, const strobe_set *set)
{
    uint64_t sum = strobe_set_schema_sum(set);
    for (size_t i = 0; i < s->nschemas; i++)
        if (s->schemas[i]->sum == sum)
            return s->schemas[i];
    struct rw_schema **v = realloc(s->schemas, (s->nschemas + 1) * sizeof *v);
    if (!v)
        return NULL;
    s->schemas = v;
    struct rw_schema *sc = calloc(1, sizeof *sc);
    uint32_t card = strobe_set_card(set);
    if (!sc || !(sc->md = calloc(card ? card : 1, sizeof *sc->md))) {
        free(sc);
        return NULL;
    }
    sc->sum = sum;
    const char *schema = strobe_set_schema_name(set);
    int fail = 0;
    for (uint32_t m = 0; m < card && !fail; m++) {
        if (strobe_set_metric_type(set, m) == STROBE_MT_CHAR)
            continue;
        StrobeRw__MetricMetadata *md = &sc->md[sc->nmd];
        strobe_rw__metric_metadata__init(md);
        char name[STROBE__PROM_NAME_MAX], help[STROBE_SET_NAME_MAX + 8];
        int counter = strobe__prom_is_counter(set, m);
        strobe__prom_family(name, sizeof name, schema, strobe_set_metric_name(set, m), counter);
        md->type = counter ? STROBE_RW__METRIC_METADATA__METRIC_TYPE__COUNTER
                           : STROBE_RW__METRIC_METADATA__METRIC_TYPE__GAUGE;
        const char *unit = strobe_set_metric_unit(set, m);
        snprintf(help, sizeof help, "unit: %s", unit);
        fail = !(md->metric_family_name = strdup(name)) || (*unit && !(md->help = strdup(help)));
        sc->nmd++;
    }
    s->schemas[s->nschemas++] = sc;
    return fail ? NULL : sc;
}

/* Builds the series of a set the store has not seen (with this layout). */
static int set_series(struct rw *s, struct rw_set *st, const strobe_set *set)
{
    struct common_labels c = {.st = st};
    strobe__prom_labels(set, add_common, &c);
    if (c.err)
        return c.err;
    if (!(st->schema = schema_for(s, set)))
        return -ENOMEM;
    const char *schema = strobe_set_schema_name(set);
    size_t n = 0;
    for (uint32_t m = 0; m < strobe_set_card(set); m++)
        if (strobe_set_metric_type(set, m) != STROBE_MT_CHAR)
            n += strobe_set_metric_count(set, m);
    if (!(st->series = calloc(n ? n : 1, sizeof *st->series)))
        return -ENOMEM;
    for (uint32_t m = 0; m < strobe_set_card(set); m++) {
        if (strobe_set_metric_type(set, m) == STROBE_MT_CHAR)
            continue;
        uint32_t cnt = strobe_set_metric_count(set, m);
        char name[STROBE__PROM_NAME_MAX];
        strobe__prom_family(name, sizeof name, schema, strobe_set_metric_name(set, m),
                            strobe__prom_is_counter(set, m));
        const char *fam = keep(st, name);
        if (!fam)
            return -ENOMEM;
        for (uint32_t j = 0; j < cnt; j++) {
            struct rw_series *se = &st->series[st->nseries++];
            strobe_rw__time_series__init(&se->ts);
            se->metric = m;
            se->elem = j;
            size_t nl = c.n + 1 + (cnt > 1);
            if (!(se->lab = calloc(nl, sizeof *se->lab)) ||
                !(se->ts.labels = calloc(nl, sizeof *se->ts.labels)))
                return -ENOMEM;
            memcpy(se->lab, c.l, c.n * sizeof *se->lab);
            strobe_rw__label__init(&se->lab[c.n]);
            se->lab[c.n].name = "__name__";
            se->lab[c.n].value = (char *)fam;
            if (cnt > 1) {
                char idx[16];
                snprintf(idx, sizeof idx, "%" PRIu32, j);
                strobe_rw__label__init(&se->lab[c.n + 1]);
                se->lab[c.n + 1].name = "index";
                if (!(se->lab[c.n + 1].value = keep(st, idx)))
                    return -ENOMEM;
            }
            for (size_t k = 0; k < nl; k++)
                se->ts.labels[k] = &se->lab[k];
            /* the receiver wants the labels sorted by name */
            qsort(se->ts.labels, nl, sizeof *se->ts.labels, cmp_label);
            se->ts.n_labels = nl;
        }
    }
    return 0;
}

static const char *set_name_at(const void *ctx, size_t pos)
{
    return ((const struct rw *)ctx)->sets[pos]->instance;
}

/* ---- batches -------------------------------------------------------------------------- */

/* Packs, compresses and queues the current batch; empties it. */
static int emit(struct rw *s)
{
    if (!s->nvalues)
        return 0;
    size_t nts = 0, nmd = 0, nsp = 0;
    for (size_t b = 0; b < s->nbatch; b++) {
        nts += s->batch[b]->nseries;
        for (size_t i = 0; i < s->batch[b]->nseries; i++)
            nsp += s->batch[b]->series[i].ts.n_samples;
        if (!s->batch[b]->schema->in_batch) {
            s->batch[b]->schema->in_batch = 1;
            nmd += s->batch[b]->schema->nmd;
        }
    }
    int rc = 0;
    if (grow((void **)&s->tsp, &s->tspcap, nts, sizeof *s->tsp) < 0 ||
        grow((void **)&s->mdp, &s->mdpcap, nmd, sizeof *s->mdp) < 0 ||
        grow((void **)&s->sp, &s->spcap, nsp, sizeof *s->sp) < 0)
        rc = -ENOMEM;
    StrobeRw__WriteRequest req = STROBE_RW__WRITE_REQUEST__INIT;
    req.timeseries = s->tsp;
    req.metadata = s->mdp;
    StrobeRw__Sample **sp = s->sp;
    for (size_t b = 0; rc == 0 && b < s->nbatch; b++) {
        struct rw_set *st = s->batch[b];
        for (size_t i = 0; i < st->nseries; i++) {
            struct rw_series *se = &st->series[i];
            /* repeated messages are arrays of pointers in protobuf-c: one
             * array for the whole batch, a slice per series */
            se->ts.samples = sp;
            for (size_t k = 0; k < se->ts.n_samples; k++)
                *sp++ = &se->s[k];
            s->tsp[req.n_timeseries++] = &se->ts;
        }
        if (st->schema->in_batch == 1) {
            for (size_t m = 0; m < st->schema->nmd; m++)
                s->mdp[req.n_metadata++] = &st->schema->md[m];
            st->schema->in_batch = 2;
        }
    }
    if (rc == 0) {
        size_t len = strobe_rw__write_request__get_packed_size(&req);
        size_t zlen = snappy_max_compressed_length(len);
        if (grow((void **)&s->pb, &s->pbcap, len, 1) < 0 || grow((void **)&s->z, &s->zcap, zlen, 1) < 0)
            rc = -ENOMEM;
        else if (strobe_rw__write_request__pack(&req, s->pb) != len ||
                 snappy_compress((const char *)s->pb, len, (char *)s->z, &zlen) != SNAPPY_OK)
            rc = -EIO;
        else
            rc = strobe__outbox_put(s->out, s->z, zlen);
    }
    if (rc == 0) {
        s->values += s->nvalues;
        s->batches++;
    } else {
        s->errors++;
    }
    for (size_t b = 0; b < s->nbatch; b++) {
        s->batch[b]->in_batch = 0;
        s->batch[b]->schema->in_batch = 0;
        for (size_t i = 0; i < s->batch[b]->nseries; i++)
            s->batch[b]->series[i].ts.n_samples = 0;
    }
    s->nbatch = 0;
    s->nvalues = 0;
    return rc;
}

static struct rw_set *set_for(struct rw *s, const strobe_set *set)
{
    const char *inst = strobe_set_instance(set);
    size_t pos = strobe__name_index_find(&s->index, inst, set_name_at, s);
    if (pos != STROBE__NAME_NONE && s->sets[pos]->sum == strobe_set_schema_sum(set))
        return s->sets[pos];
    if (pos != STROBE__NAME_NONE && s->sets[pos]->in_batch && emit(s) < 0)
        return NULL; /* another layout under the name: the old one's samples go first */
    struct rw_set *st = calloc(1, sizeof *st);
    if (!st || !(st->instance = strdup(inst))) {
        free(st);
        return NULL;
    }
    st->sum = strobe_set_schema_sum(set);
    if (set_series(s, st, set) < 0) {
        set_free(st);
        return NULL;
    }
    if (pos != STROBE__NAME_NONE) {
        st->last_ms = s->sets[pos]->last_ms;
        set_free(s->sets[pos]);
        s->sets[pos] = st;
        return st;
    }
    struct rw_set **v = realloc(s->sets, (s->nsets + 1) * sizeof *v);
    if (!v) {
        set_free(st);
        return NULL;
    }
    s->sets = v;
    s->sets[s->nsets] = st;
    if (strobe__name_index_add(&s->index, s->nsets, s->nsets + 1, set_name_at, s) < 0) {
        set_free(st);
        return NULL;
    }
    s->nsets++;
    return st;
}

static int update_rw(void *state, const strobe_set *set)
{
    struct rw *s = state;
    if (!strobe__store_filter_match(&s->filter, set))
        return 0;
    if (!strobe_set_is_consistent(set)) {
        s->skipped++; /* half-written (or never written) data is no sample */
        return 0;
    }
    struct rw_set *st = set_for(s, set);
    if (!st) {
        s->errors++;
        return -ENOMEM;
    }
    int64_t ms = (int64_t)(strobe_set_timestamp(set) / 1000000u);
    if ((uint64_t)ms <= st->last_ms) {
        s->skipped++;
        return 0;
    }
    if (!st->in_batch) {
        if (grow((void **)&s->batch, &s->batchcap, s->nbatch + 1, sizeof *s->batch) < 0)
            return -ENOMEM;
        s->batch[s->nbatch++] = st;
        st->in_batch = 1;
    }
    if (!s->nvalues)
        s->started_ns = strobe__outbox_now_ns();
    st->last_ms = (uint64_t)ms;
    for (size_t i = 0; i < st->nseries; i++) {
        struct rw_series *se = &st->series[i];
        if (grow((void **)&se->s, &se->cap, se->ts.n_samples + 1, sizeof *se->s) < 0)
            return -ENOMEM;
        StrobeRw__Sample *smp = &se->s[se->ts.n_samples++];
        strobe_rw__sample__init(smp);
        smp->timestamp = ms;
        smp->value =
            strobe_set_is_valid(set, se->metric) ? strobe_set_get_d64(set, se->metric, se->elem) : NAN;
    }
    s->nvalues += st->nseries;
    if (s->nvalues >= s->batch_values || strobe__outbox_now_ns() - s->started_ns >= s->batch_age_ns)
        return emit(s);
    return 0;
}

static int flush_rw(void *state)
{
    return emit(state);
}

/* ---- sending (the outbox's thread) --------------------------------------------------- */

static enum strobe__send_result send_rw(void *ctx, const void *batch, size_t len, char *why, size_t whylen)
{
    struct rw *s = ctx;
    return strobe__http_post(s->http, s->url, batch, len, 0, NULL, why, whylen);
}

/* ---- the plugin ------------------------------------------------------------------------- */

static void free_rw(struct rw *s)
{
    for (size_t i = 0; i < s->nsets; i++)
        set_free(s->sets[i]);
    for (size_t i = 0; i < s->nschemas; i++) {
        for (size_t m = 0; m < s->schemas[i]->nmd; m++) {
            free(s->schemas[i]->md[m].metric_family_name);
            if (s->schemas[i]->md[m].help != protobuf_c_empty_string)
                free(s->schemas[i]->md[m].help);
        }
        free(s->schemas[i]->md);
        free(s->schemas[i]);
    }
    strobe__name_index_free(&s->index);
    strobe__http_post_close(s->http);
    free(s->schemas);
    free(s->sets);
    free(s->batch);
    free(s->tsp);
    free(s->mdp);
    free(s->sp);
    free(s->pb);
    free(s->z);
    free(s->url);
    free(s);
}

static void close_rw(void *state)
{
    struct rw *s = state;
    emit(s);
    /* what the receiver does not take within one timeout stays queued on
     * disk for the next start */
    strobe__outbox_drain(s->out, s->timeout_ns);
    struct strobe__outbox_stats st;
    strobe__outbox_stats(s->out, &st);
    strobe__outbox_close(s->out);
    s->h->log(s->h,
              st.refused_batches || st.dropped_batches || st.queued_batches || s->errors ? STROBE_LOG_WARN
                                                                                         : STROBE_LOG_INFO,
              "%" PRIu64 " value(s) in %" PRIu64 " batch(es) since the start: %" PRIu64 " sent, %" PRIu64
              " refused, %" PRIu64 " dropped, %" PRIu64 " left queued for the next start; %" PRIu64
              " update(s) skipped (half-written or not newer), %" PRIu64 " error(s)",
              s->values, s->batches, st.sent_batches, st.refused_batches, st.dropped_batches,
              st.queued_batches, s->skipped, s->errors);
    free_rw(s);
}

static int open_rw(const struct strobe_plugin_host *h, void **state)
{
    struct rw *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->h = h;
    struct strobe__outbox_config oc;
    char *password = NULL, *token = NULL;
    const char *url = h->cfg_str(h, "url"), *user = h->cfg_str(h, "username"),
               *ca = h->cfg_str(h, "tls_ca_file");
    int rc;
    if ((rc = strobe__store_filter_read(h, &s->filter)) < 0 ||
        (rc = h->cfg_u64(h, "batch_values", 5000, &s->batch_values)) < 0 ||
        (rc = h->cfg_duration(h, "batch_age", 1000000000u, &s->batch_age_ns)) < 0 ||
        (rc = h->cfg_duration(h, "timeout", 10000000000u, &s->timeout_ns)) < 0 ||
        (rc = strobe__outbox_config_read(h, &oc)) < 0 ||
        (rc = strobe__http_read_secret(h, "password_file", &password)) < 0 ||
        (rc = strobe__http_read_secret(h, "bearer_token_file", &token)) < 0)
        goto fail;
    if (!url || !*url) {
        rc = h->cfg_error(
            h, NULL, "`url` (the receiver's write endpoint, e.g. http://host:9090/api/v1/write) is required");
        goto fail;
    }
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
        rc = h->cfg_error(h, "url", "'%s': expected http://... or https://...", url);
        goto fail;
    }
    if (!!user != !!password) {
        rc = h->cfg_error(h, user ? "username" : "password_file",
                          "basic authentication needs both username and password_file");
        goto fail;
    }
    if (token && user) {
        rc = h->cfg_error(h, "bearer_token_file", "give either bearer_token_file or username/password_file");
        goto fail;
    }
    if (s->batch_values == 0 || s->timeout_ns < 1000000u) {
        rc = h->cfg_error(h, s->batch_values ? "timeout" : "batch_values", "must be at least %s",
                          s->batch_values ? "1ms" : "1");
        goto fail;
    }
    if (!(s->url = strdup(url))) {
        rc = -ENOMEM;
        goto fail;
    }
    char auth[1100];
    const char *hdrs[] = {"Content-Encoding: snappy",
                          "Content-Type: application/x-protobuf",
                          "X-Prometheus-Remote-Write-Version: 0.1.0",
                          "User-Agent: strobed",
                          token ? auth : NULL,
                          NULL};
    if (token)
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    struct strobe__http_post_config hc = {
        .timeout_ns = s->timeout_ns, .headers = hdrs, .user = user, .password = password, .ca_file = ca};
    rc = strobe__http_post_open(&hc, &s->http);
    memset(auth, 0, sizeof auth);
    if (rc < 0)
        goto fail;
    oc.target = s->url;
    if ((rc = strobe__outbox_open(h, &oc, send_rw, s, &s->out)) < 0)
        goto fail;
    strobe__http_forget(password);
    strobe__http_forget(token);
    *state = s;
    return 0;
fail:
    strobe__http_forget(password);
    strobe__http_forget(token);
    free_rw(s);
    return rc;
}

const struct strobe_plugin strobe__plugin_remote_write = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_STORE,
    .name = "remote_write",
    .summary = "Prometheus remote-write 1.0 (VictoriaMetrics, Prometheus, Mimir, ...), queued on disk",
    .open = open_rw,
    .update = update_rw,
    .flush = flush_rw,
    .close = close_rw,
};
