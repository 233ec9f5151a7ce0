/* SPDX-License-Identifier: MIT */
/*
 * The task graph's edges between selected threads, for the exporters'
 * flow arrows (flows.h).
 */
#include "export/flows.h"

#include "analysis/select.h"

struct flows {
    const struct strobe_experiment *exp;
    int (*flow)(void *arg, const struct strobe_tg_edge *e);
    void *arg;
};

/* A strobe_tg_sink edge callback: program order stays on its lane (no
 * arrow), nor is there one to or from a thread left out. */
static int edge(void *arg, const struct strobe_tg_edge *e)
{
    const struct flows *fl = arg;
    if (e->kind == STROBE_TG_PROGRAM || !strobe_thread_selected(fl->exp, e->from_thread) ||
        !strobe_thread_selected(fl->exp, e->to_thread))
        return 0;
    return fl->flow(fl->arg, e);
}

int strobe__export_flows(const struct strobe_experiment *exp,
                         int (*flow)(void *arg, const struct strobe_tg_edge *e), void *arg,
                         struct strobe_errbuf *eb)
{
    int rc = strobe_taskgraph_recorded(exp, eb);
    if (rc <= 0)
        return rc;
    struct flows fl = {.exp = exp, .flow = flow, .arg = arg};
    struct strobe_tg_sink sink = {.arg = &fl, .edge = edge};
    struct strobe_taskgraph *g = NULL;
    rc = strobe_taskgraph_build(exp, &sink, &g, eb);
    strobe_taskgraph_free(g);
    return rc;
}
