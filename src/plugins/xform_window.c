/* SPDX-License-Identifier: MIT */
/*
 * `window` transform: min, max or average of each metric over the last n
 * samples of its input set (seed chapter 3.2.1.2, windowed min/max/avg).
 * Output <input>_<op>_<n>, e.g. node1/lustre_rate_avg_4; the seed writes
 * a literal "_avg_n", we put the width in so that two windows of
 * different widths over one input do not collide.
 *   keys: input, metrics, output, publish (xform.h), op: min|max|avg
 *         (required), n: 1..100000 (required)
 * The output is invalid until n samples were seen and while any sample
 * in the window is invalid (or not finite), so an invalid rate makes the
 * windows over it invalid for exactly n samples.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/plugins.h"
#include "plugins/xform.h"

#define WINDOW_MAX 100000

enum window_op { OP_MIN, OP_MAX, OP_AVG };

struct window_cfg {
    enum window_op op;
    uint64_t n;
    char suffix[32];
};

struct window_priv {
    double *vals;      /* ring of n samples, each nelems values */
    unsigned char *ok; /* ring of n samples, each nsrc validity flags */
    size_t nelems;
    uint64_t filled, head;
};

static void window_priv_free(void *v)
{
    struct window_priv *w = v;
    free(w->vals);
    free(w->ok);
    free(w);
}

static int window_plan(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    const struct window_cfg *c = x->impl;
    int rc = strobe__xform_select(x, in, p);
    strobe_schema *sc = NULL;
    if (rc == 0)
        rc = strobe__xform_schema_new(strobe_set_schema_name(in), x->suffix, &sc);
    size_t nelems = 0;
    for (uint32_t k = 0; rc >= 0 && k < p->nsrc; k++) {
        uint32_t i = p->src[k];
        nelems += strobe_set_metric_count(in, i);
        rc = strobe_schema_add(sc, strobe_set_metric_name(in, i), strobe_set_metric_unit(in, i),
                               STROBE_MT_D64, strobe_set_metric_count(in, i), 0);
    }
    if (rc >= 0)
        rc = strobe__xform_port_out(x, p, in, NULL, sc);
    strobe_schema_free(sc);
    if (rc < 0)
        return rc;
    struct window_priv *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    p->priv = w;
    w->nelems = nelems;
    if (!(w->vals = calloc(c->n * nelems, sizeof *w->vals)) || !(w->ok = calloc(c->n * p->nsrc, 1)))
        return -ENOMEM;
    return 0;
}

static int window_compute(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    const struct window_cfg *c = x->impl;
    struct window_priv *w = p->priv;
    uint64_t n = c->n;
    /* store the new sample in the slot of the oldest */
    double *vals = w->vals + w->head * w->nelems;
    unsigned char *ok = w->ok + w->head * p->nsrc;
    size_t e = 0;
    for (uint32_t k = 0; k < p->nsrc; k++) {
        uint32_t i = p->src[k], cnt = strobe_set_metric_count(in, i);
        ok[k] = (unsigned char)strobe_set_is_valid(in, i);
        for (uint32_t j = 0; j < cnt; j++, e++) {
            vals[e] = strobe_set_get_d64(in, i, j);
            if (!isfinite(vals[e])) /* even if flagged valid: NaN would poison min/max */
                ok[k] = 0;
        }
    }
    w->head = (w->head + 1) % n;
    if (w->filled < n)
        w->filled++;

    strobe_set *out = p->outs[0];
    strobe_set_begin(out);
    e = 0;
    for (uint32_t k = 0; k < p->nsrc; k++) {
        uint32_t cnt = strobe_set_metric_count(in, p->src[k]);
        int valid = w->filled == n;
        for (uint64_t s = 0; s < n && valid; s++)
            valid = w->ok[s * p->nsrc + k];
        int all = 1;
        for (uint32_t j = 0; j < cnt; j++, e++) {
            double r = 0;
            if (valid) {
                r = w->vals[e];
                for (uint64_t s = 1; s < n; s++) {
                    double v = w->vals[s * w->nelems + e];
                    if (c->op == OP_MIN)
                        r = v < r ? v : r;
                    else if (c->op == OP_MAX)
                        r = v > r ? v : r;
                    else
                        r += v;
                }
                if (c->op == OP_AVG)
                    r /= (double)n;
            }
            all &= strobe__xform_put(out, k, j, r, valid);
        }
        strobe_set_valid(out, k, all);
    }
    return 1;
}

static const struct strobe__xform_ops window_ops = {
    .plan = window_plan, .compute = window_compute, .priv_free = window_priv_free};

static int open_window(const struct strobe_plugin_host *h, void **state)
{
    static const char *const ops[] = {[OP_MIN] = "min", [OP_MAX] = "max", [OP_AVG] = "avg"};
    struct window_cfg *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    const char *op = h->cfg_str(h, "op");
    int rc = h->cfg_u64(h, "n", 0, &c->n);
    if (rc == 0 && (c->n == 0 || c->n > WINDOW_MAX))
        rc = h->cfg_error(
            h, "n", c->n ? "must be at most %d samples" : "required: the window length in samples (1..%d)",
            WINDOW_MAX);
    if (rc == 0 && !op)
        rc = h->cfg_error(h, "op", "required: min, max or avg");
    if (rc == 0) {
        size_t i = 0;
        while (i < 3 && strcmp(op, ops[i]) != 0)
            i++;
        if (i == 3)
            rc = h->cfg_error(h, "op", "'%s': expected min, max or avg", op);
        c->op = (enum window_op)i;
    }
    struct strobe__xform *x;
    if (rc == 0) {
        snprintf(c->suffix, sizeof c->suffix, "_%s_%llu", ops[c->op], (unsigned long long)c->n);
        rc =
            strobe__xform_new(h, STROBE__XFORM_METRICS | STROBE__XFORM_OUTPUT, &window_ops, c->suffix, c, &x);
    }
    if (rc < 0) {
        free(c);
        return rc;
    }
    *state = x;
    return 0;
}

const struct strobe_plugin strobe__plugin_window = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_TRANSFORM,
    .name = "window",
    .summary = "min, max or average of each metric over the last n samples",
    .open = open_window,
    .update = strobe__xform_plugin_update,
    .close = strobe__xform_plugin_close,
};
