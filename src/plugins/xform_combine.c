/* SPDX-License-Identifier: MIT */
/*
 * `combine` transform: several input sets -> one set (seed chapter
 * 3.2.1.2 and 3.2.2.4). Metric m of input "node1/lustre_rate" becomes
 * "node1_lustre_rate.m" ('/' -> '_', then '.', then the metric name);
 * inputs are laid out in instance-name order.
 *
 * Rounds. Each input keeps a short queue of its samples. A round starts
 * at t0, the oldest queued timestamp; it is complete when every known
 * input has a queued sample within `tolerance` of t0 (and at least
 * `expect` inputs are known). An incomplete round is emitted anyway once
 * `timeout` has passed since t0, with the metrics of the inputs that had
 * no sample close enough flagged invalid (they stay queued for a later
 * round): a missing or skewed producer never stalls the output. Time is
 * sample time: "now" is the newest input timestamp seen, so the output
 * is deterministic and independent of delivery delays; if every input
 * stops, nothing is emitted (there is nothing new to say).
 * The output is stamped t0, with duration = the spread of the
 * timestamps combined. Samples that arrive no later than the last round
 * + tolerance are too late and dropped, so output timestamps never go
 * back.
 *
 * Inputs. Names in `input` without glob characters are expected from the
 * start; inputs matched by globs become known when they first send. With
 * globs and no `expect`, the first round waits for the timeout to learn
 * its inputs. An input that appears after the output exists (or changes
 * schema) makes the output be rebuilt: removed and added again under the
 * same name with the larger schema.
 *   keys: input, metrics, publish (xform.h), output (instance name,
 *         default <producer>/<instance name>), tolerance (default
 *         250ms), timeout (default 2s), expect (default: see above)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/plugins.h"
#include "plugins/xform.h"

#define QUEUE_MAX 16 /* samples kept per input while a round waits */

struct sample {
    uint64_t ts;
    double *vals;      /* nelems */
    unsigned char *ok; /* per metric */
};

struct slot {
    char *input;
    uint64_t schema_sum;
    uint32_t card;
    int failed; /* no selected metric: ignored until its schema changes */
    uint32_t *src, nsrc;
    char **mname;     /* output names "<input with '/' -> '_'>.<metric>", per src */
    uint32_t *mcount; /* element counts, per src */
    size_t nelems;
    struct sample q[QUEUE_MAX];
    size_t qhead, qlen;
    uint64_t gn, ts;
    int seen;
    uint32_t out_first; /* its first metric in the output */
};

struct combine {
    const struct strobe_plugin_host *h;
    struct strobe__xform_cfg cfg;
    uint64_t tol, timeout, expect;
    int discovery;       /* globs and no `expect`: learn inputs for one timeout */
    struct slot **slots; /* sorted by input name */
    size_t nslots;
    strobe_set *out;
    int rebuild, busy, emitted;
    uint64_t now, last_round, dropped;
    char outname[STROBE_SET_NAME_MAX + 1];
};

static void queue_clear(struct slot *s)
{
    for (size_t k = 0; k < QUEUE_MAX; k++) {
        free(s->q[k].vals);
        free(s->q[k].ok);
        s->q[k].vals = NULL;
        s->q[k].ok = NULL;
    }
    s->qhead = s->qlen = 0;
}

static void slot_names_free(struct slot *s)
{
    for (uint32_t k = 0; s->mname && k < s->nsrc; k++)
        free(s->mname[k]);
    free(s->mname);
    free(s->mcount);
    s->mname = NULL;
    s->mcount = NULL;
}

static void slot_free(struct slot *s)
{
    queue_clear(s);
    slot_names_free(s);
    free(s->src);
    free(s->input);
    free(s);
}

/* (Re)select the input's metrics; the slot is failed when none. */
static int slot_plan(struct combine *c, struct slot *s, const strobe_set *in)
{
    queue_clear(s);
    slot_names_free(s);
    s->schema_sum = strobe_set_schema_sum(in);
    s->card = strobe_set_card(in);
    s->nsrc = 0;
    s->nelems = 0;
    s->seen = 0;
    s->failed = 1;
    free(s->src);
    size_t cap = (size_t)s->card + 1;
    if (!(s->src = malloc(cap * sizeof *s->src)) || !(s->mname = calloc(cap, sizeof *s->mname)) ||
        !(s->mcount = calloc(cap, sizeof *s->mcount)))
        return -ENOMEM;
    char prefix[STROBE_SET_NAME_MAX + 1];
    snprintf(prefix, sizeof prefix, "%s", s->input);
    for (char *p = prefix; *p; p++)
        if (*p == '/')
            *p = '_';
    for (uint32_t i = 0; i < s->card; i++)
        if (strobe__xform_metric_selected(&c->cfg, in, i)) {
            const char *m = strobe_set_metric_name(in, i);
            size_t len = strlen(prefix) + 1 + strlen(m) + 1;
            if (len > STROBE_SET_NAME_MAX + 1) {
                c->h->log(c->h, STROBE_LOG_WARN,
                          "%s: metric %s left out: '%s.%s' is longer "
                          "than %d bytes",
                          s->input, m, prefix, m, STROBE_SET_NAME_MAX);
                continue;
            }
            if (!(s->mname[s->nsrc] = malloc(len)))
                return -ENOMEM;
            snprintf(s->mname[s->nsrc], len, "%s.%s", prefix, m);
            s->mcount[s->nsrc] = strobe_set_metric_count(in, i);
            s->nelems += s->mcount[s->nsrc];
            s->src[s->nsrc++] = i;
        }
    s->failed = s->nsrc == 0;
    if (s->failed)
        c->h->log(c->h, STROBE_LOG_WARN, "input %s ignored: none of the configured metrics", s->input);
    return 0;
}

static struct slot *slot_get(struct combine *c, const char *name, int *created)
{
    size_t at = 0;
    *created = 0;
    while (at < c->nslots && strcmp(c->slots[at]->input, name) < 0)
        at++;
    if (at < c->nslots && strcmp(c->slots[at]->input, name) == 0)
        return c->slots[at];
    struct slot **v = realloc(c->slots, (c->nslots + 1) * sizeof *v);
    if (!v)
        return NULL;
    c->slots = v;
    struct slot *s = calloc(1, sizeof *s);
    if (!s || !(s->input = strdup(name))) {
        free(s);
        return NULL;
    }
    memmove(&c->slots[at + 1], &c->slots[at], (c->nslots - at) * sizeof *v);
    c->slots[at] = s;
    c->nslots++;
    *created = 1;
    return s;
}

/* Queue the sample; the oldest goes when the queue is full. */
static int slot_push(struct combine *c, struct slot *s, const strobe_set *in)
{
    if (s->qlen == QUEUE_MAX) {
        s->qhead = (s->qhead + 1) % QUEUE_MAX;
        s->qlen--;
        c->dropped++;
    }
    struct sample *q = &s->q[(s->qhead + s->qlen) % QUEUE_MAX];
    /* buffers are kept across samples; sized for the slot's current plan */
    if (!q->vals && !(q->vals = malloc(s->nelems * sizeof *q->vals)))
        return -ENOMEM;
    if (!q->ok && !(q->ok = malloc(s->nsrc)))
        return -ENOMEM;
    q->ts = strobe_set_timestamp(in);
    size_t e = 0;
    for (uint32_t k = 0; k < s->nsrc; k++) {
        uint32_t i = s->src[k], n = strobe_set_metric_count(in, i);
        q->ok[k] = (unsigned char)strobe_set_is_valid(in, i);
        for (uint32_t j = 0; j < n; j++, e++) {
            q->vals[e] = strobe_set_get_d64(in, i, j);
            if (!isfinite(q->vals[e]))
                q->ok[k] = 0;
        }
    }
    s->qlen++;
    return 0;
}

/* (Re)create the output from the inputs known now. */
static int build_output(struct combine *c)
{
    if (c->out) {
        c->h->set_remove(c->h, c->out);
        c->out = NULL;
    }
    char sname[STROBE_SET_NAME_MAX + 1];
    snprintf(sname, sizeof sname, "%s", c->h->name);
    for (char *p = sname; *p; p++)
        if (*p == '/')
            *p = '_';
    strobe_schema *sc;
    int rc = strobe_schema_new(sname, &sc);
    if (rc < 0)
        return rc;
    uint32_t at = 0;
    for (size_t k = 0; k < c->nslots && rc >= 0; k++) {
        struct slot *s = c->slots[k];
        if (s->failed)
            continue;
        s->out_first = at;
        for (uint32_t m = 0; m < s->nsrc && rc >= 0; m++, at++)
            rc = strobe_schema_add(sc, s->mname[m], NULL, STROBE_MT_D64, s->mcount[m], 0);
    }
    if (rc >= 0)
        rc = strobe__xform_set_new(c->h, c->h->producer, c->outname, sc, c->cfg.publish, &c->out);
    strobe_schema_free(sc);
    c->rebuild = 0;
    return rc < 0 ? rc : 0;
}

/* Emit every round that is complete or timed out. */
static int emit_rounds(struct combine *c)
{
    for (;;) {
        uint64_t t0 = UINT64_MAX;
        size_t live = 0, ready = 0;
        for (size_t k = 0; k < c->nslots; k++) {
            struct slot *s = c->slots[k];
            if (!s->failed && s->qlen && s->q[s->qhead].ts < t0)
                t0 = s->q[s->qhead].ts;
        }
        if (t0 == UINT64_MAX)
            return 0;
        for (size_t k = 0; k < c->nslots; k++) {
            struct slot *s = c->slots[k];
            if (s->failed)
                continue;
            live++;
            if (s->qlen && s->q[s->qhead].ts - t0 <= c->tol)
                ready++;
        }
        int complete = ready == live && live >= c->expect && !(c->discovery && !c->out);
        if (!complete && c->now - t0 < c->timeout)
            return 0;
        if (!c->out || c->rebuild) {
            int rc = build_output(c);
            if (rc < 0)
                return rc;
        }
        strobe_set *out = c->out;
        uint64_t last = t0;
        strobe_set_begin(out);
        for (size_t k = 0; k < c->nslots; k++) {
            struct slot *s = c->slots[k];
            if (s->failed)
                continue;
            struct sample *q = s->qlen ? &s->q[s->qhead] : NULL;
            int here = q && q->ts - t0 <= c->tol;
            size_t e = 0;
            for (uint32_t m = 0; m < s->nsrc; m++) {
                uint32_t i = s->out_first + m;
                if (!here) {
                    strobe__xform_invalidate(out, i);
                    continue;
                }
                int all = 1;
                for (uint32_t j = 0; j < s->mcount[m]; j++, e++)
                    all &= strobe__xform_put(out, i, j, q->vals[e], q->ok[m]);
                strobe_set_valid(out, i, all);
            }
            if (here) {
                if (q->ts > last)
                    last = q->ts;
                s->qhead = (s->qhead + 1) % QUEUE_MAX;
                s->qlen--;
            }
        }
        strobe_set_end_at(out, t0, last - t0);
        c->last_round = t0;
        c->emitted = 1;
        c->h->set_updated(c->h, out);
    }
}

static int update_combine(void *state, const strobe_set *in)
{
    struct combine *c = state;
    const char *name = strobe_set_instance(in);
    if (in == c->out || !strobe__xform_input_match(&c->cfg, name) || !strobe_set_is_consistent(in))
        return 0;
    int created, rc;
    struct slot *s = slot_get(c, name, &created);
    if (!s)
        return -ENOMEM;
    if (created || s->schema_sum != strobe_set_schema_sum(in) || s->card != strobe_set_card(in)) {
        if ((rc = slot_plan(c, s, in)) < 0)
            return rc;
        if (c->out)
            c->rebuild = 1;
    }
    if (s->failed)
        return 0;
    uint64_t gn = strobe_set_data_gn(in), ts = strobe_set_timestamp(in);
    if (s->seen && gn == s->gn && ts == s->ts)
        return 0; /* delivered twice */
    s->seen = 1;
    s->gn = gn;
    s->ts = ts;
    if (c->emitted && ts <= c->last_round + c->tol) {
        c->dropped++;
        c->h->log(c->h, STROBE_LOG_DEBUG, "%s: sample too late for its round, dropped", name);
        return 0;
    }
    if ((rc = slot_push(c, s, in)) < 0)
        return rc;
    if (ts > c->now)
        c->now = ts;
    /* an output reported from here may feed a chain that comes back to
     * this instance; the outer call goes on emitting */
    if (c->busy)
        return 0;
    c->busy = 1;
    rc = emit_rounds(c);
    c->busy = 0;
    return rc;
}

static void close_combine(void *state)
{
    struct combine *c = state;
    for (size_t k = 0; k < c->nslots; k++)
        slot_free(c->slots[k]);
    free(c->slots);
    free(c);
}

static int open_combine(const struct strobe_plugin_host *h, void **state)
{
    struct combine *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->h = h;
    int rc = strobe__xform_cfg_read(h, STROBE__XFORM_METRICS, &c->cfg);
    const char *output = rc == 0 ? h->cfg_str(h, "output") : NULL;
    if (rc == 0)
        rc = h->cfg_duration(h, "tolerance", 250000000ull, &c->tol);
    if (rc == 0)
        rc = h->cfg_duration(h, "timeout", 2000000000ull, &c->timeout);
    if (rc == 0)
        rc = h->cfg_u64(h, "expect", 0, &c->expect);
    if (rc == 0 && c->timeout == 0)
        rc = h->cfg_error(h, "timeout", "must be positive");
    if (rc == 0) {
        int n = output ? snprintf(c->outname, sizeof c->outname, "%s", output)
                       : snprintf(c->outname, sizeof c->outname, "%s/%s", h->producer, h->name);
        if (n < 0 || (size_t)n >= sizeof c->outname || !c->outname[0])
            rc = h->cfg_error(h, output ? "output" : NULL, "the output set name is too long");
    }
    if (rc == 0 && c->expect == 0) {
        size_t literal = 0;
        for (size_t i = 0; i < c->cfg.ninputs; i++)
            literal += strpbrk(c->cfg.inputs[i], "*?[") == NULL;
        c->expect = literal;
        c->discovery = literal < c->cfg.ninputs;
    }
    if (rc < 0) {
        free(c);
        return rc;
    }
    *state = c;
    return 0;
}

const struct strobe_plugin strobe__plugin_combine = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_TRANSFORM,
    .name = "combine",
    .summary = "several sets into one, aligned within a tolerance; late inputs flagged invalid",
    .open = open_combine,
    .update = update_combine,
    .close = close_combine,
};
