/* SPDX-License-Identifier: MIT */
/*
 * `loadavg` sampler: /proc/loadavg as load1, load5, load15 (d64),
 * runnable, threads and last_pid (u64).
 *   keys: component_id, instance, path (default /proc/loadavg)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "plugins/plugins.h"
#include "plugins/procfile.h"

struct loadavg {
    const struct strobe_plugin_host *h;
    struct strobe__procfile file;
    strobe_set *set;
};

static int open_loadavg(const struct strobe_plugin_host *h, void **state)
{
    struct loadavg *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->h = h;
    uint64_t comp;
    int rc = h->cfg_u64(h, "component_id", 0, &comp);
    const char *instance = h->cfg_str(h, "instance");
    const char *path = h->cfg_str(h, "path");
    if (rc < 0) {
        free(s);
        return rc;
    }
    if ((rc = strobe__procfile_open(&s->file, h, path ? path : "/proc/loadavg")) < 0) {
        free(s);
        return rc;
    }
    strobe_schema *sc;
    if ((rc = strobe_schema_new("loadavg", &sc)) == 0) {
        strobe_schema_add(sc, "component_id", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META);
        static const char *const d[] = { "load1", "load5", "load15" };
        static const char *const u[] = { "runnable", "threads", "last_pid" };
        for (int i = 0; i < 3; i++)
            strobe_schema_add(sc, d[i], NULL, STROBE_MT_D64, 1, 0);
        for (int i = 0; i < 3; i++)
            strobe_schema_add(sc, u[i], NULL, STROBE_MT_U64, 1, 0);
        rc = strobe_set_new(sc, h->producer, instance, &s->set);
        strobe_schema_free(sc);
    }
    if (rc == 0) {
        strobe_set_u64(s->set, 0, 0, comp);
        if ((rc = h->set_add(h, s->set, STROBE_SET_PUBLISH)) < 0)
            strobe_set_free(s->set);
    } else if (rc == -EINVAL) {
        rc = h->cfg_error(h, "instance", "not a set name");
    }
    if (rc < 0) {
        strobe__procfile_close(&s->file);
        free(s);
        return rc;
    }
    *state = s;
    return 0;
}

static int sample_loadavg(void *state, uint64_t now_ns)
{
    struct loadavg *s = state;
    strobe_set_begin(s->set);
    ssize_t n = strobe__procfile_read(&s->file);
    double l1, l5, l15;
    unsigned long long run, thr, last;
    int ok = n > 0 &&
             sscanf(s->file.buf, "%lf %lf %lf %llu/%llu %llu", &l1, &l5, &l15, &run, &thr, &last) == 6;
    if (ok) {
        strobe_set_d64(s->set, 1, 0, l1);
        strobe_set_d64(s->set, 2, 0, l5);
        strobe_set_d64(s->set, 3, 0, l15);
        strobe_set_u64(s->set, 4, 0, run);
        strobe_set_u64(s->set, 5, 0, thr);
        strobe_set_u64(s->set, 6, 0, last);
    }
    for (uint32_t i = 1; i <= 6; i++)
        strobe_set_valid(s->set, i, ok);
    strobe_set_end(s->set);
    s->h->set_updated(s->h, s->set);
    return ok ? 0 : n < 0 ? (int)n : STROBE_ERR_FORMAT;
}

static void close_loadavg(void *state)
{
    struct loadavg *s = state;
    strobe__procfile_close(&s->file);
    free(s);
}

const struct strobe_plugin strobe__plugin_loadavg = {
    .abi = STROBE_PLUGIN_ABI, .kind = STROBE_PLUGIN_SAMPLER, .name = "loadavg",
    .summary = "/proc/loadavg: load averages, runnable and total threads",
    .open = open_loadavg, .sample = sample_loadavg, .close = close_loadavg,
};
