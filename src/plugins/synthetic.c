/* SPDX-License-Identifier: MIT */
/*
 * `synthetic` sampler: deterministic values for tests and benchmarks.
 * Sample k (1, 2, ...) sets metric i (m0, m1, ...) to base + k * (i + 1);
 * component_id is a meta metric. With `samples: N` it stops after N
 * samples, so a test can wait for known final values anywhere in a
 * topology.
 *   keys: metrics (default 4), base (default 0), component_id (default 0),
 *         samples (default 0 = unlimited), schema (default "synthetic")
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "plugins/plugins.h"

struct synthetic {
    const struct strobe_plugin_host *h;
    strobe_set *set;
    uint64_t metrics, base, limit, k;
};

static int open_synthetic(const struct strobe_plugin_host *h, void **state)
{
    struct synthetic *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->h = h;
    uint64_t comp;
    int rc;
    const char *schema_name = h->cfg_str(h, "schema");
    const char *instance = h->cfg_str(h, "instance");
    if ((rc = h->cfg_u64(h, "metrics", 4, &s->metrics)) < 0 ||
        (rc = h->cfg_u64(h, "base", 0, &s->base)) < 0 ||
        (rc = h->cfg_u64(h, "component_id", 0, &comp)) < 0 ||
        (rc = h->cfg_u64(h, "samples", 0, &s->limit)) < 0)
        goto fail;
    if (s->metrics == 0 || s->metrics > 10000) {
        rc = h->cfg_error(h, "metrics", "must be between 1 and 10000");
        goto fail;
    }
    strobe_schema *sc;
    if ((rc = strobe_schema_new(schema_name ? schema_name : "synthetic", &sc)) < 0) {
        rc = h->cfg_error(h, "schema", "not a schema name (no '/')");
        goto fail;
    }
    strobe_schema_add(sc, "component_id", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META);
    for (uint64_t i = 0; i < s->metrics && rc >= 0; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%llu", (unsigned long long)i);
        rc = strobe_schema_add(sc, name, NULL, STROBE_MT_U64, 1, 0);
    }
    if (rc >= 0)
        rc = strobe_set_new(sc, h->producer, instance, &s->set);
    strobe_schema_free(sc);
    if (rc < 0) {
        if (rc == -EINVAL)
            rc = h->cfg_error(h, "instance", "not a set name");
        goto fail;
    }
    strobe_set_u64(s->set, 0, 0, comp);
    if ((rc = h->set_add(h, s->set, STROBE_SET_PUBLISH)) < 0) {
        strobe_set_free(s->set);
        goto fail;
    }
    *state = s;
    return 0;
fail:
    free(s);
    return rc;
}

static int sample_synthetic(void *state, uint64_t now_ns)
{
    struct synthetic *s = state;
    if (s->limit && s->k >= s->limit)
        return 0;
    s->k++;
    strobe_set_begin(s->set);
    for (uint64_t i = 0; i < s->metrics; i++)
        strobe_set_u64(s->set, (uint32_t)i + 1, 0, s->base + s->k * (i + 1));
    strobe_set_end(s->set);
    s->h->set_updated(s->h, s->set);
    return 0;
}

static void close_synthetic(void *state) { free(state); }

const struct strobe_plugin strobe__plugin_synthetic = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_SAMPLER,
    .name = "synthetic",
    .summary = "deterministic values base + k*(i+1) for tests and benchmarks",
    .open = open_synthetic,
    .sample = sample_synthetic,
    .close = close_synthetic,
};
