/* SPDX-License-Identifier: MIT */
/*
 * Transforms that group the metrics of one set by their names (seed
 * chapter 3.2.1.2 and Figure 3.4):
 *   global_ratio  for each metric its share of its group's sum, and for
 *                 each group "<group>_global", the sum;   <input>_global_ratio
 *   separate      one set per name key, e.g. per node;   <input>_<key>
 * The association is a name split (xform.h): name = head SEP tail at the
 * first (or last) SEP. global_ratio groups by tail (group: tail, default)
 * or head; separate names its outputs by head (key: head, default) or
 * tail and keeps the other part as the metric name. After combine, whose
 * metrics are "<producer>_<schema...>.<metric>", the defaults (separator
 * "_", split first) group the same metric of all nodes together and
 * separate per node, as in the seed's Lustre chain.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/plugins.h"
#include "plugins/xform.h"

#define NAME_CAP (STROBE_SET_NAME_MAX + 1)

/* Distinct strings in order of first appearance. */
struct names {
    char **v;
    size_t n;
};

static int names_index(struct names *s, const char *name, size_t *at)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0) {
            *at = i;
            return 0;
        }
    char **v = realloc(s->v, (s->n + 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    s->v = v;
    if (!(s->v[s->n] = strdup(name)))
        return -ENOMEM;
    *at = s->n++;
    return 0;
}

static void names_free(struct names *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* "head" or "tail" for group/key */
static int side_cfg(const struct strobe_plugin_host *h, const char *key, int def_tail, int *tail)
{
    const char *s = h->cfg_str(h, key);
    *tail = def_tail;
    if (!s)
        return 0;
    if (strcmp(s, "head") == 0 || strcmp(s, "tail") == 0) {
        *tail = s[0] == 't';
        return 0;
    }
    return h->cfg_error(h, key, "'%s': expected head or tail", s);
}

/* ---- global_ratio ----------------------------------------------------------------- */

struct gr_cfg {
    struct strobe__xform_split split;
    int group_tail;
};

struct gr_priv {
    uint32_t *group; /* per member (p->src[k]): its group */
    size_t ngroups;
    double *sum;
    int *ok;
};

static void gr_priv_free(void *v)
{
    struct gr_priv *g = v;
    free(g->group);
    free(g->sum);
    free(g->ok);
    free(g);
}

static int gr_plan(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    const struct gr_cfg *c = x->impl;
    struct gr_priv *g = calloc(1, sizeof *g);
    if (!g)
        return -ENOMEM;
    p->priv = g;
    int rc = strobe__xform_select(x, in, p);
    if (rc < 0)
        return rc;
    if (!(g->group = calloc(p->nsrc, sizeof *g->group)))
        return -ENOMEM;
    struct names groups = {0};
    char head[NAME_CAP], tail[NAME_CAP];
    uint32_t members = 0;
    /* keep only scalar metrics whose names split; p->src is compacted */
    for (uint32_t k = 0; rc >= 0 && k < p->nsrc; k++) {
        uint32_t i = p->src[k];
        if (strobe_set_metric_count(in, i) != 1 ||
            strobe__xform_split_name(&c->split, strobe_set_metric_name(in, i), head, tail, NAME_CAP) < 0)
            continue;
        size_t at;
        if ((rc = names_index(&groups, c->group_tail ? tail : head, &at)) < 0)
            break;
        p->src[members] = i;
        g->group[members++] = (uint32_t)at;
    }
    p->nsrc = members;
    strobe_schema *sc = NULL;
    if (rc >= 0 && members == 0)
        rc = -ENOENT;
    if (rc >= 0)
        rc = strobe__xform_schema_new(strobe_set_schema_name(in), x->suffix, &sc);
    for (uint32_t k = 0; rc >= 0 && k < members; k++)
        rc = strobe_schema_add(sc, strobe_set_metric_name(in, p->src[k]), NULL, STROBE_MT_D64, 1, 0);
    for (size_t gi = 0; rc >= 0 && gi < groups.n; gi++) {
        char name[NAME_CAP + 8];
        snprintf(name, sizeof name, "%s_global", groups.v[gi]);
        rc = strlen(name) > STROBE_SET_NAME_MAX ? -ENAMETOOLONG
                                                : strobe_schema_add(sc, name, NULL, STROBE_MT_D64, 1, 0);
    }
    g->ngroups = groups.n;
    names_free(&groups);
    if (rc >= 0 &&
        (!(g->sum = calloc(g->ngroups, sizeof *g->sum)) || !(g->ok = calloc(g->ngroups, sizeof *g->ok))))
        rc = -ENOMEM;
    if (rc >= 0)
        rc = strobe__xform_port_out(x, p, in, NULL, sc);
    strobe_schema_free(sc);
    return rc < 0 ? rc : 0;
}

/* A group sum is invalid when any member is invalid or not finite, or the
 * sum overflows; a ratio when its member or its group sum is invalid or
 * the sum is 0. */
static int gr_compute(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    struct gr_priv *g = p->priv;
    for (size_t gi = 0; gi < g->ngroups; gi++) {
        g->sum[gi] = 0;
        g->ok[gi] = 1;
    }
    for (uint32_t k = 0; k < p->nsrc; k++) {
        double v = strobe_set_get_d64(in, p->src[k], 0);
        g->sum[g->group[k]] += v;
        if (!strobe_set_is_valid(in, p->src[k]) || !isfinite(v))
            g->ok[g->group[k]] = 0;
    }
    strobe_set *out = p->outs[0];
    strobe_set_begin(out);
    for (uint32_t k = 0; k < p->nsrc; k++) {
        uint32_t gi = g->group[k];
        double s = g->sum[gi];
        int ok = g->ok[gi] && s != 0;
        strobe_set_valid(out, k,
                         strobe__xform_put(out, k, 0, ok ? strobe_set_get_d64(in, p->src[k], 0) / s : 0, ok));
    }
    for (size_t gi = 0; gi < g->ngroups; gi++) {
        uint32_t k = p->nsrc + (uint32_t)gi;
        strobe_set_valid(out, k, strobe__xform_put(out, k, 0, g->sum[gi], g->ok[gi]));
    }
    return 1;
}

static const struct strobe__xform_ops gr_ops = {
    .plan = gr_plan, .compute = gr_compute, .priv_free = gr_priv_free};

static int open_global_ratio(const struct strobe_plugin_host *h, void **state)
{
    struct gr_cfg *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    struct strobe__xform *x;
    int rc = strobe__xform_split_cfg(h, &c->split);
    if (rc == 0)
        rc = side_cfg(h, "group", 1, &c->group_tail);
    if (rc == 0)
        rc = strobe__xform_new(h, STROBE__XFORM_METRICS | STROBE__XFORM_OUTPUT, &gr_ops, "_global_ratio", c,
                               &x);
    if (rc < 0) {
        free(c);
        return rc;
    }
    *state = x;
    return 0;
}

const struct strobe_plugin strobe__plugin_global_ratio = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_TRANSFORM,
    .name = "global_ratio",
    .summary = "each metric's share of its name group's sum, and the group sums",
    .open = open_global_ratio,
    .update = strobe__xform_plugin_update,
    .close = strobe__xform_plugin_close,
};

/* ---- separate --------------------------------------------------------------------- */

struct sep_cfg {
    struct strobe__xform_split split;
    int key_tail;
    const char *const *common;
    size_t ncommon;
};

static const char *const default_common[] = {"*_global", NULL};

/* Per output: the input metrics it carries, in its metric order. */
struct sep_priv {
    uint32_t **src;
    uint32_t *n;
    size_t nouts;
};

static void sep_priv_free(void *v)
{
    struct sep_priv *s = v;
    for (size_t o = 0; o < s->nouts; o++)
        free(s->src[o]);
    free(s->src);
    free(s->n);
    free(s);
}

static int is_common(const struct sep_cfg *c, const char *name)
{
    for (size_t k = 0; k < c->ncommon; k++)
        if (fnmatch(c->common[k], name, 0) == 0)
            return 1;
    return 0;
}

static int sep_plan(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    const struct sep_cfg *c = x->impl;
    struct sep_priv *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    p->priv = s;
    int rc = strobe__xform_select(x, in, p);
    if (rc < 0)
        return rc;
    /* pass 1: the keys (outputs), in order of first appearance */
    struct names keys = {0};
    char head[NAME_CAP], tail[NAME_CAP];
    uint32_t *key_of = calloc(p->nsrc, sizeof *key_of); /* UINT32_MAX: common */
    if (!key_of)
        return -ENOMEM;
    for (uint32_t k = 0; rc >= 0 && k < p->nsrc; k++) {
        const char *name = strobe_set_metric_name(in, p->src[k]);
        size_t at;
        key_of[k] = UINT32_MAX;
        if (is_common(c, name) || strobe__xform_split_name(&c->split, name, head, tail, NAME_CAP) < 0)
            continue;
        if ((rc = names_index(&keys, c->key_tail ? tail : head, &at)) == 0)
            key_of[k] = (uint32_t)at;
    }
    if (rc >= 0 && keys.n == 0)
        rc = -ENOENT;
    if (rc >= 0 && (!(s->src = calloc(keys.n, sizeof *s->src)) || !(s->n = calloc(keys.n, sizeof *s->n))))
        rc = -ENOMEM;
    /* pass 2: one schema and set per key: its metrics renamed to the other
     * part of the name, then the common metrics under their own names */
    for (size_t o = 0; rc >= 0 && o < keys.n; o++) {
        strobe_schema *sc = NULL;
        s->nouts = o + 1;
        if (!(s->src[o] = malloc(p->nsrc * sizeof **s->src)))
            rc = -ENOMEM;
        if (rc >= 0)
            rc = strobe__xform_schema_new(strobe_set_schema_name(in), "_separate", &sc);
        for (int pass = 0; pass < 2 && rc >= 0; pass++)
            for (uint32_t k = 0; rc >= 0 && k < p->nsrc; k++) {
                uint32_t i = p->src[k];
                const char *name = strobe_set_metric_name(in, i);
                if (pass == 0 && key_of[k] == o) {
                    strobe__xform_split_name(&c->split, name, head, tail, NAME_CAP);
                    name = c->key_tail ? head : tail;
                } else if (!(pass == 1 && key_of[k] == UINT32_MAX)) {
                    continue;
                }
                rc = strobe_schema_add(sc, name, strobe_set_metric_unit(in, i), STROBE_MT_D64,
                                       strobe_set_metric_count(in, i), 0);
                if (rc >= 0)
                    s->src[o][s->n[o]++] = i;
            }
        if (rc >= 0)
            rc = strobe__xform_port_out(x, p, in, keys.v[o], sc);
        strobe_schema_free(sc);
    }
    free(key_of);
    names_free(&keys);
    return rc < 0 ? rc : 0;
}

static int sep_compute(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p)
{
    struct sep_priv *s = p->priv;
    for (size_t o = 0; o < p->nouts; o++) {
        strobe_set_begin(p->outs[o]);
        for (uint32_t k = 0; k < s->n[o]; k++)
            strobe__xform_copy(in, s->src[o][k], p->outs[o], k);
    }
    return 1;
}

static const struct strobe__xform_ops sep_ops = {
    .plan = sep_plan, .compute = sep_compute, .priv_free = sep_priv_free};

static int open_separate(const struct strobe_plugin_host *h, void **state)
{
    struct sep_cfg *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    struct strobe__xform *x;
    int rc = strobe__xform_split_cfg(h, &c->split);
    if (rc == 0)
        rc = side_cfg(h, "key", 0, &c->key_tail);
    if (rc == 0)
        rc = h->cfg_list(h, "common", &c->common, &c->ncommon);
    if (rc == 0 && c->ncommon == 0) {
        c->common = default_common;
        c->ncommon = 1;
    }
    /* no suffix: the outputs are <input>_<key> */
    if (rc == 0)
        rc = strobe__xform_new(h, STROBE__XFORM_METRICS | STROBE__XFORM_OUTPUT, &sep_ops, "", c, &x);
    if (rc < 0) {
        free(c);
        return rc;
    }
    *state = x;
    return 0;
}

const struct strobe_plugin strobe__plugin_separate = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_TRANSFORM,
    .name = "separate",
    .summary = "one set per name key (e.g. per node) from the metrics of one set",
    .open = open_separate,
    .update = strobe__xform_plugin_update,
    .close = strobe__xform_plugin_close,
};
