/* SPDX-License-Identifier: MIT */
/*
 * The task graph's edges between threads (analysis/taskgraph.h), as the
 * trace exporters draw them: one flow arrow per edge from the end of the
 * task it leaves to the start of the task it enters, so Chrome JSON and
 * Perfetto draw the same arrows.
 */
#ifndef STROBE_EXPORT_FLOWS_H
#define STROBE_EXPORT_FLOWS_H

#include "analysis/taskgraph.h"
#include "export/export.h"

/* When exp was recorded with `strobe run --taskgraph`, builds its task
 * graph and calls flow for every edge other than program order whose two
 * threads are selected (analysis/select.h), in the builder's order. Returns
 * 0 (also without a recorded graph), what flow returned when negative, or
 * -errno / STROBE_ERR_* with a message in eb. */
int strobe__export_flows(const struct strobe_experiment *exp,
                         int (*flow)(void *arg, const struct strobe_tg_edge *e), void *arg,
                         struct strobe_errbuf *eb);

#endif
