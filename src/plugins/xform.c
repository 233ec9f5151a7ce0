/* SPDX-License-Identifier: MIT */
/*
 * Shared machinery of the transform plugins (xform.h, docs/transforms.md):
 * configuration keys, exact value arithmetic, result writing with
 * validity, name splitting and the per-input-set engine.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plugins/xform.h"

/* ---- configuration -------------------------------------------------------- */

int strobe__xform_cfg_bool(const struct strobe_plugin_host *h, const char *key, int def, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1", NULL};
    static const char *const no[] = {"false", "no", "off", "0", NULL};
    const char *s = h->cfg_str(h, key);
    *out = def;
    if (!s)
        return 0;
    for (size_t i = 0; yes[i]; i++)
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
    for (size_t i = 0; no[i]; i++)
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    return h->cfg_error(h, key, "'%s' is not true or false", s);
}

int strobe__xform_cfg_read(const struct strobe_plugin_host *h, unsigned what, struct strobe__xform_cfg *c)
{
    int rc, publish;
    memset(c, 0, sizeof *c);
    if ((rc = h->cfg_list(h, "input", &c->inputs, &c->ninputs)) < 0)
        return rc;
    if (c->ninputs == 0)
        return h->cfg_error(h, "input", "required: a glob or a list of globs of set instance names");
    for (size_t i = 0; i < c->ninputs; i++)
        if (!c->inputs[i][0])
            return h->cfg_error(h, "input", "item %zu is empty", i + 1);
    if ((what & STROBE__XFORM_METRICS) && (rc = h->cfg_list(h, "metrics", &c->metrics, &c->nmetrics)) < 0)
        return rc;
    if (what & STROBE__XFORM_OUTPUT) {
        c->output = h->cfg_str(h, "output");
        if (c->output && !c->output[0])
            return h->cfg_error(h, "output", "must not be empty");
    }
    if ((rc = strobe__xform_cfg_bool(h, "publish", 1, &publish)) < 0)
        return rc;
    c->publish = publish ? (int)STROBE_SET_PUBLISH : 0;
    return 0;
}

int strobe__xform_input_match(const struct strobe__xform_cfg *c, const char *instance)
{
    for (size_t i = 0; i < c->ninputs; i++)
        if (fnmatch(c->inputs[i], instance, 0) == 0)
            return 1;
    return 0;
}

int strobe__xform_metric_selected(const struct strobe__xform_cfg *c, const strobe_set *set, uint32_t i)
{
    if (strobe_set_metric_type(set, i) == STROBE_MT_CHAR ||
        (strobe_set_metric_flags(set, i) & STROBE_METRIC_META))
        return 0;
    if (c->nmetrics == 0)
        return 1;
    const char *name = strobe_set_metric_name(set, i);
    for (size_t k = 0; k < c->nmetrics; k++)
        if (fnmatch(c->metrics[k], name, 0) == 0)
            return 1;
    return 0;
}

/* Appends s to buf at *at; -ENAMETOOLONG when it does not fit. */
static int append(char *buf, size_t cap, size_t *at, const char *s, size_t n)
{
    if (*at + n >= cap)
        return -ENAMETOOLONG;
    memcpy(buf + *at, s, n);
    *at += n;
    buf[*at] = 0;
    return 0;
}

int strobe__xform_out_name(const char *tmpl, const char *input, const char *suffix, const char *group,
                           char *buf, size_t cap)
{
    size_t at = 0;
    int rc = 0;
    buf[0] = 0;
    if (!tmpl) {
        rc = append(buf, cap, &at, input, strlen(input));
        if (rc == 0 && suffix)
            rc = append(buf, cap, &at, suffix, strlen(suffix));
        if (rc == 0 && group) {
            rc = append(buf, cap, &at, "_", 1);
            if (rc == 0)
                rc = append(buf, cap, &at, group, strlen(group));
        }
    } else {
        for (const char *p = tmpl; *p && rc == 0;) {
            if (strncmp(p, "{input}", 7) == 0) {
                rc = append(buf, cap, &at, input, strlen(input));
                p += 7;
            } else if (strncmp(p, "{group}", 7) == 0 && group) {
                rc = append(buf, cap, &at, group, strlen(group));
                p += 7;
            } else {
                rc = append(buf, cap, &at, p, 1);
                p++;
            }
        }
    }
    /* the set limit, not only the buffer's: the set API would refuse it */
    if (rc == 0 && at > STROBE_SET_NAME_MAX)
        rc = -ENAMETOOLONG;
    return rc;
}

int strobe__xform_split_cfg(const struct strobe_plugin_host *h, struct strobe__xform_split *s)
{
    const char *sep = h->cfg_str(h, "separator");
    const char *at = h->cfg_str(h, "split");
    s->sep = sep ? sep : "_";
    s->last = 0;
    if (!s->sep[0])
        return h->cfg_error(h, "separator", "must not be empty");
    if (at && strcmp(at, "last") == 0)
        s->last = 1;
    else if (at && strcmp(at, "first") != 0)
        return h->cfg_error(h, "split", "'%s': expected first or last", at);
    return 0;
}

int strobe__xform_split_name(const struct strobe__xform_split *s, const char *name, char *head, char *tail,
                             size_t cap)
{
    size_t sl = strlen(s->sep);
    const char *at = strstr(name, s->sep);
    if (at && s->last)
        for (const char *n; (n = strstr(at + 1, s->sep));)
            at = n;
    if (!at || at == name || !at[sl])
        return -ENOENT;
    size_t hl = (size_t)(at - name);
    if (hl >= cap || strlen(at + sl) >= cap)
        return -ENAMETOOLONG;
    memcpy(head, name, hl);
    head[hl] = 0;
    strcpy(tail, at + sl);
    return 0;
}

/* ---- values ------------------------------------------------------------------ */

void strobe__xform_val_read(const strobe_set *set, uint32_t i, uint32_t j, struct strobe__xform_val *out)
{
    switch (strobe_set_metric_type(set, i)) {
    case STROBE_MT_U8:
    case STROBE_MT_U16:
    case STROBE_MT_U32:
    case STROBE_MT_U64:
        out->kind = STROBE__XV_U;
        out->v.u = strobe_set_get_u64(set, i, j);
        break;
    case STROBE_MT_S8:
    case STROBE_MT_S16:
    case STROBE_MT_S32:
    case STROBE_MT_S64:
        out->kind = STROBE__XV_S;
        out->v.s = strobe_set_get_s64(set, i, j);
        break;
    default:
        out->kind = STROBE__XV_D;
        out->v.d = strobe_set_get_d64(set, i, j);
        break;
    }
}

int strobe__xform_val_diff(const struct strobe__xform_val *prev, const struct strobe__xform_val *cur,
                           int counter, double *out)
{
    switch (cur->kind) {
    case STROBE__XV_U:
        if (cur->v.u >= prev->v.u) {
            *out = (double)(cur->v.u - prev->v.u);
            return 0;
        }
        if (counter)
            return -ERANGE;
        *out = -(double)(prev->v.u - cur->v.u);
        return 0;
    case STROBE__XV_S:
        /* The true difference of two int64 values lies in (-2^64, 2^64):
         * its magnitude always fits a uint64, and unsigned subtraction of
         * the two's complement patterns gives exactly that magnitude when
         * taken from the larger one. No signed overflow (undefined) ever
         * happens. */
        if (cur->v.s >= prev->v.s)
            *out = (double)((uint64_t)cur->v.s - (uint64_t)prev->v.s);
        else
            *out = -(double)((uint64_t)prev->v.s - (uint64_t)cur->v.s);
        return 0;
    case STROBE__XV_D:
        *out = cur->v.d - prev->v.d;
        return isfinite(*out) ? 0 : -EDOM;
    }
    return -EINVAL;
}

int strobe__xform_sum(const strobe_set *set, uint32_t i, double *out)
{
    uint32_t n = strobe_set_metric_count(set, i);
    enum strobe_metric_type t = strobe_set_metric_type(set, i);
    if (t == STROBE_MT_F32 || t == STROBE_MT_D64) {
        double s = 0;
        for (uint32_t j = 0; j < n; j++)
            s += strobe_set_get_d64(set, i, j);
        *out = s;
        return isfinite(s) ? 0 : -EDOM;
    }
    /* An array holds at most 2^23 elements (STROBE_SET_MAX_BYTES / 8), so
     * a 128-bit sum of 64-bit values cannot overflow: the result is exact
     * and rounded once (GCC/Clang __int128, as the whole tree assumes a
     * 64-bit GNU toolchain). */
    __int128 s = 0;
    int is_unsigned = t == STROBE_MT_U8 || t == STROBE_MT_U16 || t == STROBE_MT_U32 || t == STROBE_MT_U64;
    for (uint32_t j = 0; j < n; j++)
        s += is_unsigned ? (__int128)strobe_set_get_u64(set, i, j) : (__int128)strobe_set_get_s64(set, i, j);
    *out = (double)s;
    return 0;
}

int strobe__xform_put(strobe_set *out, uint32_t i, uint32_t j, double v, int ok)
{
    ok = ok && isfinite(v);
    strobe_set_d64(out, i, j, ok ? v : NAN);
    return ok;
}

void strobe__xform_copy(const strobe_set *in, uint32_t i, strobe_set *out, uint32_t k)
{
    uint32_t n = strobe_set_metric_count(in, i);
    int ok = strobe_set_is_valid(in, i), all = 1;
    for (uint32_t j = 0; j < n; j++)
        all &= strobe__xform_put(out, k, j, strobe_set_get_d64(in, i, j), ok);
    strobe_set_valid(out, k, all);
}

void strobe__xform_invalidate(strobe_set *out, uint32_t k)
{
    uint32_t n = strobe_set_metric_count(out, k);
    for (uint32_t j = 0; j < n; j++)
        strobe_set_d64(out, k, j, NAN);
    strobe_set_valid(out, k, 0);
}

int strobe__xform_set_new(const struct strobe_plugin_host *h, const char *producer, const char *instance,
                          const strobe_schema *schema, int publish, strobe_set **out)
{
    strobe_set *s;
    int rc = strobe_set_new(schema, producer, instance, &s);
    if (rc < 0)
        return rc;
    if ((rc = h->set_add(h, s, publish ? STROBE_SET_PUBLISH : 0)) < 0) {
        strobe_set_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int strobe__xform_schema_new(const char *base, const char *suffix, strobe_schema **out)
{
    char name[STROBE_SET_NAME_MAX + 1];
    int n = snprintf(name, sizeof name, "%s%s", base, suffix);
    if (n < 0 || (size_t)n >= sizeof name)
        return -ENAMETOOLONG;
    for (char *p = name; *p; p++)
        if (*p == '/')
            *p = '_';
    return strobe_schema_new(name, out);
}

/* ---- the per-input-set engine ---------------------------------------------------- */

int strobe__xform_new(const struct strobe_plugin_host *h, unsigned what, const struct strobe__xform_ops *ops,
                      const char *suffix, void *impl, struct strobe__xform **out)
{
    struct strobe__xform *x = calloc(1, sizeof *x);
    if (!x)
        return -ENOMEM;
    int rc = strobe__xform_cfg_read(h, what, &x->cfg);
    if (rc < 0) {
        free(x);
        return rc;
    }
    x->h = h;
    x->ops = ops;
    x->suffix = suffix;
    x->impl = impl;
    *out = x;
    return 0;
}

/* Forget a port's outputs and plugin state (schema change). */
static void port_reset(struct strobe__xform *x, struct strobe__xform_port *p)
{
    for (size_t i = 0; i < p->nouts; i++)
        x->h->set_remove(x->h, p->outs[i]);
    free(p->outs);
    p->outs = NULL;
    p->nouts = 0;
    free(p->src);
    p->src = NULL;
    p->nsrc = 0;
    if (p->priv && x->ops->priv_free)
        x->ops->priv_free(p->priv);
    p->priv = NULL;
    p->seen = p->failed = 0;
}

static void port_free(struct strobe__xform *x, struct strobe__xform_port *p)
{
    /* outputs are already gone (the daemon removed them before close) */
    free(p->outs);
    free(p->src);
    if (p->priv && x->ops->priv_free)
        x->ops->priv_free(p->priv);
    free(p->input);
    free(p);
}

void strobe__xform_free(struct strobe__xform *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->nports; i++)
        port_free(x, x->ports[i]);
    free(x->ports);
    free(x);
}

int strobe__xform_owns(const struct strobe__xform *x, const strobe_set *set)
{
    for (size_t i = 0; i < x->nports; i++)
        for (size_t k = 0; k < x->ports[i]->nouts; k++)
            if (x->ports[i]->outs[k] == set)
                return 1;
    return 0;
}

int strobe__xform_select(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    uint32_t card = strobe_set_card(in);
    free(p->src);
    p->nsrc = 0;
    if (!(p->src = malloc(((size_t)card + 1) * sizeof *p->src)))
        return -ENOMEM;
    for (uint32_t i = 0; i < card; i++)
        if (strobe__xform_metric_selected(&x->cfg, in, i))
            p->src[p->nsrc++] = i;
    return p->nsrc ? 0 : -ENOENT;
}

int strobe__xform_port_out(struct strobe__xform *x, struct strobe__xform_port *p, const strobe_set *in,
                           const char *group, const strobe_schema *schema)
{
    char name[STROBE_SET_NAME_MAX + 1];
    int rc =
        strobe__xform_out_name(x->cfg.output, strobe_set_instance(in), x->suffix, group, name, sizeof name);
    if (rc < 0)
        return rc;
    strobe_set **v = realloc(p->outs, (p->nouts + 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    p->outs = v;
    strobe_set *s;
    if ((rc = strobe__xform_set_new(x->h, strobe_set_producer(in), name, schema, x->cfg.publish, &s)) < 0)
        return rc;
    p->outs[p->nouts++] = s;
    return 0;
}

static struct strobe__xform_port *port_get(struct strobe__xform *x, const char *instance)
{
    for (size_t i = 0; i < x->nports; i++)
        if (strcmp(x->ports[i]->input, instance) == 0)
            return x->ports[i];
    struct strobe__xform_port **v = realloc(x->ports, (x->nports + 1) * sizeof *v);
    if (!v)
        return NULL;
    x->ports = v;
    struct strobe__xform_port *p = calloc(1, sizeof *p);
    if (!p || !(p->input = strdup(instance))) {
        free(p);
        return NULL;
    }
    x->ports[x->nports++] = p;
    return p;
}

int strobe__xform_update(struct strobe__xform *x, const strobe_set *in)
{
    const char *name = strobe_set_instance(in);
    /* a set in the middle of a transaction (shared memory writer) is read
     * at its next update instead of half-written */
    if (strobe__xform_owns(x, in) || !strobe__xform_input_match(&x->cfg, name) ||
        !strobe_set_is_consistent(in))
        return 0;
    struct strobe__xform_port *p = port_get(x, name);
    if (!p)
        return -ENOMEM;
    if ((p->nouts || p->failed) &&
        (p->schema_sum != strobe_set_schema_sum(in) || p->card != strobe_set_card(in)))
        port_reset(x, p); /* a new schema: plan again (even after a failure) */
    if (p->failed)
        return 0;
    if (!p->nouts) {
        p->schema_sum = strobe_set_schema_sum(in);
        p->card = strobe_set_card(in);
        int rc = x->ops->plan(x, in, p);
        if (rc < 0) {
            x->h->log(x->h, STROBE_LOG_WARN, "input %s ignored: %s", name,
                      rc == -ENOENT ? "none of the configured metrics" : strobe_strerror(rc));
            port_reset(x, p);
            p->failed = 1;
            return 0;
        }
    }
    uint64_t gn = strobe_set_data_gn(in), ts = strobe_set_timestamp(in);
    /* the same sample delivered twice (an aggregator re-announcing it)
     * must not count as a new one: it would make a zero delta */
    if (p->seen && gn == p->gn && ts == p->ts)
        return 0;
    p->seen = 1;
    p->gn = gn;
    p->ts = ts;
    int rc = x->ops->compute(x, in, p);
    if (rc <= 0)
        return rc;
    uint64_t dur = strobe_set_duration(in);
    /* p stays valid: ports are separately allocated, and a nested update
     * of this instance never resets a port other than its own input's */
    for (size_t i = 0; i < p->nouts; i++) {
        strobe_set_end_at(p->outs[i], ts, dur);
        x->h->set_updated(x->h, p->outs[i]);
    }
    return 0;
}

int strobe__xform_plugin_update(void *state, const strobe_set *in)
{
    return strobe__xform_update(state, in);
}

void strobe__xform_plugin_close(void *state)
{
    struct strobe__xform *x = state;
    if (x)
        free(x->impl);
    strobe__xform_free(x);
}
