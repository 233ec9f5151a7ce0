/* SPDX-License-Identifier: MIT */
/*
 * An out-of-tree strobed sampler, built as libstrobe_counter.so: the
 * smallest complete plugin. Its set "<producer>/counter" holds one u64
 * that grows by `step` (default 1) at every sample. Load it with
 *     plugin_path: /dir/with/the/so
 *     samplers:
 *       - plugin: counter
 *         step: 5
 * Build: cc -shared -fPIC counter.c $(pkg-config --cflags --libs strobe-monitor)
 */
#include <errno.h>
#include <stdlib.h>

#include <strobe/plugin.h>

struct counter {
    const struct strobe_plugin_host *h;
    strobe_set *set;
    uint64_t step, value;
};

static int counter_open(const struct strobe_plugin_host *h, void **state)
{
    struct counter *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->h = h;
    strobe_schema *schema;
    int rc = h->cfg_u64(h, "step", 1, &c->step);
    if (rc == 0 && (rc = strobe_schema_new("counter", &schema)) == 0) {
        strobe_schema_add(schema, "value", NULL, STROBE_MT_U64, 1, STROBE_METRIC_COUNTER); /* only grows */
        rc = strobe_set_new(schema, h->producer, NULL, &c->set);
        strobe_schema_free(schema);
    }
    if (rc == 0 && (rc = h->set_add(h, c->set, STROBE_SET_PUBLISH)) < 0)
        strobe_set_free(c->set);
    if (rc < 0) {
        free(c);
        return rc;
    }
    *state = c;
    return 0;
}

static int counter_sample(void *state, uint64_t now_ns)
{
    struct counter *c = state;
    (void)now_ns;
    c->value += c->step;
    strobe_set_begin(c->set);
    strobe_set_u64(c->set, 0, 0, c->value);
    strobe_set_end(c->set);
    c->h->set_updated(c->h, c->set);
    return 0;
}

static void counter_close(void *state) { free(state); }

static const struct strobe_plugin counter_plugin = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_SAMPLER,
    .name = "counter",
    .summary = "example: a counter that grows by `step` per sample",
    .open = counter_open,
    .sample = counter_sample,
    .close = counter_close,
};

STROBE_PLUGIN_DEFINE(counter_plugin)
