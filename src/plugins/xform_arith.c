/* SPDX-License-Identifier: MIT */
/*
 * Point-wise transforms (docs/transforms.md, seed chapter 3.2.1.2):
 *   delta       N_i = M_i(t) - M_i(t-1)                   output <input>_delta
 *   rate        N_i = (M_i(t) - M_i(t-1)) / dt  [1/s]     output <input>_rate
 *   ratio       N_k = num_k(t) / den_k(t)                 output <input>_ratio
 *   sum_vector  N_i = sum over the elements of M_i(t)     output <input>_sum
 * All run on the per-input-set engine (xform.h): one output per input
 * set, d64 values, the input's timestamp. Validity rules are stated at
 * each compute function.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/plugins.h"
#include "plugins/xform.h"

/* Output schema with one d64 metric per selected input metric, same name,
 * element count `count` (0: the input's) and the input unit + unit_suffix. */
static int plan_same_names(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p,
                           uint32_t count, const char *unit_suffix)
{
    int rc = strobe__xform_select(x, in, p);
    strobe_schema *sc = NULL;
    if (rc == 0)
        rc = strobe__xform_schema_new(strobe_set_schema_name(in), x->suffix, &sc);
    for (uint32_t k = 0; rc >= 0 && k < p->nsrc; k++) {
        uint32_t i = p->src[k];
        char unit[STROBE_SET_NAME_MAX + 1];
        const char *u = strobe_set_metric_unit(in, i);
        snprintf(unit, sizeof unit, "%s%s", u ? u : "", u && u[0] ? unit_suffix : "");
        rc = strobe_schema_add(sc, strobe_set_metric_name(in, i), unit, STROBE_MT_D64,
                               count ? count : strobe_set_metric_count(in, i), 0);
    }
    if (rc >= 0)
        rc = strobe__xform_port_out(x, p, in, NULL, sc);
    strobe_schema_free(sc);
    return rc < 0 ? rc : 0;
}

/* ---- delta and rate ----------------------------------------------------------- */

struct diff_cfg {
    int per_second; /* rate */
    int counter;    /* unsigned metrics are counters: going backwards is invalid */
};

struct diff_priv {
    struct strobe__xform_val *prev; /* every element of every selected metric */
    unsigned char *prev_ok;         /* per selected metric */
    uint64_t prev_ts;
    int have;
};

static void diff_priv_free(void *v)
{
    struct diff_priv *d = v;
    free(d->prev);
    free(d->prev_ok);
    free(d);
}

static int diff_plan(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    const struct diff_cfg *c = x->impl;
    int rc = plan_same_names(x, in, p, 0, c->per_second ? "/s" : "");
    if (rc < 0)
        return rc;
    size_t n = 0;
    for (uint32_t k = 0; k < p->nsrc; k++)
        n += strobe_set_metric_count(in, p->src[k]);
    struct diff_priv *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    p->priv = d; /* freed by the engine from here on */
    if (!(d->prev = calloc(n, sizeof *d->prev)) || !(d->prev_ok = calloc(p->nsrc, 1)))
        return -ENOMEM;
    return 0;
}

/* Remember the sample; the first one only starts the series. */
static void diff_keep(const strobe_set *in, struct strobe__xform_port *p, struct diff_priv *d)
{
    size_t e = 0;
    for (uint32_t k = 0; k < p->nsrc; k++) {
        uint32_t i = p->src[k], n = strobe_set_metric_count(in, i);
        for (uint32_t j = 0; j < n; j++)
            strobe__xform_val_read(in, i, j, &d->prev[e++]);
        d->prev_ok[k] = (unsigned char)strobe_set_is_valid(in, i);
    }
    d->prev_ts = strobe_set_timestamp(in);
    d->have = 1;
}

/* Invalid when: either sample of the metric is invalid; dt < 0 (a clock
 * went back), or dt == 0 for rate; an unsigned counter went backwards
 * (counter: true); the result is not finite. */
static int diff_compute(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    const struct diff_cfg *c = x->impl;
    struct diff_priv *d = p->priv;
    if (!d->have) {
        diff_keep(in, p, d);
        return 0;
    }
    uint64_t ts = strobe_set_timestamp(in);
    /* dt in seconds, signed, without wrapping the unsigned timestamps */
    double dt = ts >= d->prev_ts ? (double)(ts - d->prev_ts) / 1e9 : -(double)(d->prev_ts - ts) / 1e9;
    int dt_ok = c->per_second ? dt > 0 : dt >= 0;
    strobe_set *out = p->outs[0];
    strobe_set_begin(out);
    size_t e = 0;
    for (uint32_t k = 0; k < p->nsrc; k++) {
        uint32_t i = p->src[k], n = strobe_set_metric_count(in, i);
        int ok = dt_ok && d->prev_ok[k] && strobe_set_is_valid(in, i);
        int all = 1;
        for (uint32_t j = 0; j < n; j++, e++) {
            struct strobe__xform_val cur;
            double v = 0;
            strobe__xform_val_read(in, i, j, &cur);
            int rc = strobe__xform_val_diff(&d->prev[e], &cur, c->counter, &v);
            if (c->per_second && rc == 0 && dt_ok)
                v /= dt;
            all &= strobe__xform_put(out, k, j, v, ok && rc == 0);
            d->prev[e] = cur;
        }
        strobe_set_valid(out, k, all);
        d->prev_ok[k] = (unsigned char)strobe_set_is_valid(in, i);
    }
    d->prev_ts = ts;
    return 1;
}

static const struct strobe__xform_ops diff_ops = {
    .plan = diff_plan, .compute = diff_compute, .priv_free = diff_priv_free};

static int open_diff(const struct strobe_plugin_host *h, void **state, int per_second)
{
    struct diff_cfg *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->per_second = per_second;
    struct strobe__xform *x;
    int rc = strobe__xform_cfg_bool(h, "counter", 1, &c->counter);
    if (rc == 0)
        rc = strobe__xform_new(h, STROBE__XFORM_METRICS | STROBE__XFORM_OUTPUT, &diff_ops,
                               per_second ? "_rate" : "_delta", c, &x);
    if (rc < 0) {
        free(c);
        return rc;
    }
    *state = x;
    return 0;
}

static int open_delta(const struct strobe_plugin_host *h, void **state)
{
    return open_diff(h, state, 0);
}

static int open_rate(const struct strobe_plugin_host *h, void **state)
{
    return open_diff(h, state, 1);
}

const struct strobe_plugin strobe__plugin_delta = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_TRANSFORM,
    .name = "delta",
    .summary = "difference of each metric between consecutive samples (exact for 64-bit integers)",
    .open = open_delta,
    .update = strobe__xform_plugin_update,
    .close = strobe__xform_plugin_close,
};

const struct strobe_plugin strobe__plugin_rate = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_TRANSFORM,
    .name = "rate",
    .summary = "delta of each metric per second of transaction time",
    .open = open_rate,
    .update = strobe__xform_plugin_update,
    .close = strobe__xform_plugin_close,
};

/* ---- ratio ------------------------------------------------------------------------ */

struct ratio_cfg {
    const char *const *num, *const *den;
    size_t nnum, nden;
};

/* p->src holds pairs (numerator, denominator) of metric indices. */
static int ratio_plan(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    const struct ratio_cfg *c = x->impl;
    if (!(p->src = malloc(2 * c->nnum * sizeof *p->src)))
        return -ENOMEM;
    strobe_schema *sc;
    int rc = strobe__xform_schema_new(strobe_set_schema_name(in), x->suffix, &sc);
    for (size_t k = 0; rc >= 0 && k < c->nnum; k++) {
        const char *dn = c->den[c->nden == 1 ? 0 : k];
        int ni = strobe_set_metric_index(in, c->num[k]), di = strobe_set_metric_index(in, dn);
        if (ni < 0 || di < 0) {
            x->h->log(x->h, STROBE_LOG_WARN, "%s has no metric %s", strobe_set_instance(in),
                      ni < 0 ? c->num[k] : dn);
            rc = -ENOENT;
            break;
        }
        uint32_t nc = strobe_set_metric_count(in, (uint32_t)ni);
        uint32_t dc = strobe_set_metric_count(in, (uint32_t)di);
        if (strobe_set_metric_type(in, (uint32_t)ni) == STROBE_MT_CHAR ||
            strobe_set_metric_type(in, (uint32_t)di) == STROBE_MT_CHAR || (dc != 1 && dc != nc)) {
            /* an array numerator takes a scalar or an equally long
             * denominator; strings have no ratio */
            rc = -EINVAL;
            break;
        }
        char name[STROBE_SET_NAME_MAX + 2];
        int len = snprintf(name, sizeof name, "%s_per_%s", c->num[k], dn);
        if (len < 0 || len > STROBE_SET_NAME_MAX) {
            rc = -ENAMETOOLONG;
            break;
        }
        p->src[2 * k] = (uint32_t)ni;
        p->src[2 * k + 1] = (uint32_t)di;
        rc = strobe_schema_add(sc, name, NULL, STROBE_MT_D64, nc, 0);
    }
    p->nsrc = (uint32_t)c->nnum;
    if (rc >= 0)
        rc = strobe__xform_port_out(x, p, in, NULL, sc);
    strobe_schema_free(sc);
    return rc < 0 ? rc : 0;
}

/* Invalid when numerator or denominator is invalid, the denominator is 0,
 * or the quotient is not finite. Integers are read as doubles (rounded
 * to 53 bits: a relative error of at most 2^-53 each, harmless for a
 * ratio). */
static int ratio_compute(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    strobe_set *out = p->outs[0];
    strobe_set_begin(out);
    for (uint32_t k = 0; k < p->nsrc; k++) {
        uint32_t ni = p->src[2 * k], di = p->src[2 * k + 1];
        uint32_t n = strobe_set_metric_count(in, ni), dc = strobe_set_metric_count(in, di);
        int ok = strobe_set_is_valid(in, ni) && strobe_set_is_valid(in, di), all = 1;
        for (uint32_t j = 0; j < n; j++) {
            double den = strobe_set_get_d64(in, di, dc == 1 ? 0 : j);
            double v = den != 0 ? strobe_set_get_d64(in, ni, j) / den : 0;
            all &= strobe__xform_put(out, k, j, v, ok && den != 0);
        }
        strobe_set_valid(out, k, all);
    }
    return 1;
}

static const struct strobe__xform_ops ratio_ops = {.plan = ratio_plan, .compute = ratio_compute};

static int open_ratio(const struct strobe_plugin_host *h, void **state)
{
    struct ratio_cfg *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    int rc = h->cfg_list(h, "numerator", &c->num, &c->nnum);
    if (rc == 0)
        rc = h->cfg_list(h, "denominator", &c->den, &c->nden);
    if (rc == 0 && c->nnum == 0)
        rc = h->cfg_error(h, "numerator", "required: a metric name or a list of them");
    if (rc == 0 && (c->nden == 0 || (c->nden != 1 && c->nden != c->nnum)))
        rc = h->cfg_error(h, "denominator", "required: one metric name, or one per numerator (%zu)", c->nnum);
    struct strobe__xform *x;
    if (rc == 0)
        rc = strobe__xform_new(h, STROBE__XFORM_OUTPUT, &ratio_ops, "_ratio", c, &x);
    if (rc < 0) {
        free(c);
        return rc;
    }
    *state = x;
    return 0;
}

const struct strobe_plugin strobe__plugin_ratio = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_TRANSFORM,
    .name = "ratio",
    .summary = "numerator metrics divided by denominator metrics of the same sample",
    .open = open_ratio,
    .update = strobe__xform_plugin_update,
    .close = strobe__xform_plugin_close,
};

/* ---- sum_vector ------------------------------------------------------------------- */

static int sum_plan(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    return plan_same_names(x, in, p, 1, "");
}

/* Invalid when the input metric is invalid or a real sum is not finite;
 * integer sums are exact (strobe__xform_sum). */
static int sum_compute(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    strobe_set *out = p->outs[0];
    strobe_set_begin(out);
    for (uint32_t k = 0; k < p->nsrc; k++) {
        double v = 0;
        int rc = strobe__xform_sum(in, p->src[k], &v);
        strobe_set_valid(out, k,
                         strobe__xform_put(out, k, 0, v, rc == 0 && strobe_set_is_valid(in, p->src[k])));
    }
    return 1;
}

static const struct strobe__xform_ops sum_ops = {.plan = sum_plan, .compute = sum_compute};

static int open_sum_vector(const struct strobe_plugin_host *h, void **state)
{
    struct strobe__xform *x;
    int rc = strobe__xform_new(h, STROBE__XFORM_METRICS | STROBE__XFORM_OUTPUT, &sum_ops, "_sum", NULL, &x);
    if (rc == 0)
        *state = x;
    return rc;
}

const struct strobe_plugin strobe__plugin_sum_vector = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_TRANSFORM,
    .name = "sum_vector",
    .summary = "sum of the elements of each (array) metric",
    .open = open_sum_vector,
    .update = strobe__xform_plugin_update,
    .close = strobe__xform_plugin_close,
};
