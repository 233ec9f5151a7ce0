/* SPDX-License-Identifier: MIT */
/*
 * What every transform plugin (docs/transforms.md) shares: the common
 * configuration keys (input, metrics, output, publish), exact reading and
 * differencing of typed metric values, writing d64 results together with
 * their validity, metric-name splitting for the grouping transforms, and
 * the "per input set" engine that delta, rate, ratio, sum_vector, window,
 * global_ratio and separate run on: it matches input sets, creates their
 * outputs lazily, rebuilds them when an input's schema changes, drops
 * duplicate deliveries and stamps outputs with the input's timestamp.
 *
 * Everything here runs under the daemon lock (plugin calls are never
 * concurrent for one instance), so nothing is thread-safe on its own.
 */
#ifndef STROBE_PLUGINS_XFORM_H
#define STROBE_PLUGINS_XFORM_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/plugin.h"

/* ---- configuration ------------------------------------------------------ */

#define STROBE__XFORM_METRICS 0x1u /* the plugin reads the `metrics` key */
#define STROBE__XFORM_OUTPUT 0x2u  /* the plugin reads the `output` key */

struct strobe__xform_cfg {
    const char *const *inputs; /* globs on set instance names (fnmatch) */
    size_t ninputs;
    const char *const *metrics; /* globs on metric names; none = all numeric data metrics */
    size_t nmetrics;
    const char *output; /* output name template or NULL (strobe__xform_out_name) */
    int publish;        /* STROBE_SET_PUBLISH or 0 */
};

/* Reads input (required), publish, and metrics/output when `what` says so.
 * Returns 0 or the host's STROBE_ERR_SYNTAX (already reported). The
 * strings stay valid for the instance's lifetime (they live in the config
 * tree and in lists the host frees with the instance). */
int strobe__xform_cfg_read(const struct strobe_plugin_host *h, unsigned what, struct strobe__xform_cfg *c);
/* A boolean key: true/false/yes/no/on/off/1/0. */
int strobe__xform_cfg_bool(const struct strobe_plugin_host *h, const char *key, int def, int *out);
/* 1 if the instance name matches one of the input globs. */
int strobe__xform_input_match(const struct strobe__xform_cfg *c, const char *instance);
/* 1 if metric i of `set` is numeric (not char), lives in the data section
 * and matches `metrics` (or `metrics` is empty). */
int strobe__xform_metric_selected(const struct strobe__xform_cfg *c, const strobe_set *set, uint32_t i);

/* Output instance name. Without a template: input + suffix (+ "_" group
 * when group is not NULL). A template replaces "{input}" with the input
 * instance and "{group}" with group; other text is copied. Returns 0 or
 * -ENAMETOOLONG. */
int strobe__xform_out_name(const char *tmpl, const char *input, const char *suffix, const char *group,
                           char *buf, size_t cap);

/* Name splitting for global_ratio and separate: a metric name is
 * head <separator> tail, split at the first (default) or last occurrence
 * of the separator (keys `separator`, default "_", and `split`:
 * first|last). */
struct strobe__xform_split {
    const char *sep;
    int last;
};
int strobe__xform_split_cfg(const struct strobe_plugin_host *h, struct strobe__xform_split *s);
/* 0 with head and tail written (each cap bytes), -ENOENT when the name
 * has no separator or one side would be empty, -ENAMETOOLONG. */
int strobe__xform_split_name(const struct strobe__xform_split *s, const char *name, char *head, char *tail,
                             size_t cap);

/* ---- values ------------------------------------------------------------- */

/* One element kept in its own arithmetic, so differences of 64-bit
 * integers are exact before they become doubles. */
enum strobe__xform_kind { STROBE__XV_U, STROBE__XV_S, STROBE__XV_D };
struct strobe__xform_val {
    enum strobe__xform_kind kind;
    union {
        uint64_t u;
        int64_t s;
        double d;
    } v;
};

void strobe__xform_val_read(const strobe_set *set, uint32_t i, uint32_t j, struct strobe__xform_val *out);
/* cur - prev as a double. The difference is formed exactly in 64-bit
 * integer arithmetic (two's complement, wrapped differences recovered by
 * the sign of the comparison) and rounded once when converted. Unsigned
 * values with counter != 0 are counters: cur < prev (reset, or a wrap
 * that cannot be told from one) gives -ERANGE. A non-finite difference of
 * reals gives -EDOM. Otherwise 0. */
int strobe__xform_val_diff(const struct strobe__xform_val *prev, const struct strobe__xform_val *cur,
                           int counter, double *out);
/* Sum of the elements of metric i: integers are summed exactly in 128 bits
 * (no overflow for any array a set can hold) and rounded once; reals in
 * double. -EDOM when the sum is not finite, else 0. */
int strobe__xform_sum(const strobe_set *set, uint32_t i, double *out);

/* Store element j of d64 metric i of `out`: v when ok and finite, NaN
 * otherwise. Returns 1 when the stored value is a valid number, else 0, so
 * a caller can AND it into the metric's validity. */
int strobe__xform_put(strobe_set *out, uint32_t i, uint32_t j, double v, int ok);

/* Copy every element of metric i of `in` to d64 metric k of `out`, with
 * its validity (invalid too when an element is not finite). */
void strobe__xform_copy(const strobe_set *in, uint32_t i, strobe_set *out, uint32_t k);
/* Store metric k of `out` as invalid (every element NaN). */
void strobe__xform_invalidate(strobe_set *out, uint32_t k);

/* Create a set of `schema` named `instance`, add it to the daemon
 * (published when publish) and return it. The daemon owns it on success;
 * on failure nothing is left behind. */
int strobe__xform_set_new(const struct strobe_plugin_host *h, const char *producer, const char *instance,
                          const strobe_schema *schema, int publish, strobe_set **out);
/* schema name for an output: the input's schema name + suffix ('/' is
 * not allowed in schema names, so it never appears in either). */
int strobe__xform_schema_new(const char *base, const char *suffix, strobe_schema **out);

/* ---- the per-input-set engine --------------------------------------------- */

struct strobe__xform;

/* State kept per matched input set. */
struct strobe__xform_port {
    char *input;         /* input instance name */
    uint64_t schema_sum; /* of the input when the outputs were planned */
    uint32_t card;
    uint64_t gn, ts;   /* last sample seen (duplicate deliveries are dropped) */
    int seen, failed;  /* failed: planning failed once; the input is ignored */
    strobe_set **outs; /* owned by the daemon */
    size_t nouts;
    uint32_t *src; /* selected input metrics (strobe__xform_select) */
    uint32_t nsrc;
    void *priv; /* the plugin's, freed with ops->priv_free */
};

struct strobe__xform_ops {
    /* Decide the outputs for a new input (or one whose schema changed):
     * select metrics, build schemas and add outputs with
     * strobe__xform_port_out. 0 or a negative code (the input is then
     * ignored; the engine logs it once). */
    int (*plan)(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p);
    /* One new sample of `in`. Return 1 after strobe_set_begin() on every
     * output and writing every metric (the engine ends the transactions
     * with the input's timestamp and reports them), 0 to emit nothing
     * (outputs untouched), or a negative code. */
    int (*compute)(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p);
    void (*priv_free)(void *priv);
};

struct strobe__xform {
    const struct strobe_plugin_host *h;
    struct strobe__xform_cfg cfg;
    const struct strobe__xform_ops *ops;
    const char *suffix;                /* default output suffix, e.g. "_rate" */
    void *impl;                        /* the plugin's configuration */
    struct strobe__xform_port **ports; /* pointers: stable across nested updates */
    size_t nports;
};

/* Reads the common keys (what: STROBE__XFORM_*) and returns a new engine.
 * suffix must outlive it (a literal or a string in impl). */
int strobe__xform_new(const struct strobe_plugin_host *h, unsigned what, const struct strobe__xform_ops *ops,
                      const char *suffix, void *impl, struct strobe__xform **out);
/* The plugin's update(): ignores sets it does not use, including its own
 * outputs. */
int strobe__xform_update(struct strobe__xform *x, const strobe_set *in);
/* Frees the engine (not impl). The outputs are the daemon's: it removes
 * them before close(), so they are not touched here. */
void strobe__xform_free(struct strobe__xform *x);

/* struct strobe_plugin callbacks for plugins whose state is an engine
 * and whose impl is one malloc'ed block (or NULL). */
int strobe__xform_plugin_update(void *state, const strobe_set *in);
void strobe__xform_plugin_close(void *state);

/* Fill p->src with the selected metrics of `in`; -ENOENT when none. */
int strobe__xform_select(struct strobe__xform *x, const strobe_set *in, struct strobe__xform_port *p);
/* Create an output for port p from `schema`, named from the `output`
 * template or input + x->suffix (+ "_" group), with the input's producer.
 * Appends it to p->outs. */
int strobe__xform_port_out(struct strobe__xform *x, struct strobe__xform_port *p, const strobe_set *in,
                           const char *group, const strobe_schema *schema);
/* 1 if `set` is an output of any port of x. */
int strobe__xform_owns(const struct strobe__xform *x, const strobe_set *set);

#endif
