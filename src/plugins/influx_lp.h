/* SPDX-License-Identifier: MIT */
/*
 * InfluxDB line protocol for metric sets (docs/plugins.md, "influx"): the
 * encoder the influx store batches with, kept apart from the HTTP side so
 * that it can be tested and measured on its own.
 */
#ifndef STROBE_PLUGINS_INFLUX_LP_H
#define STROBE_PLUGINS_INFLUX_LP_H

#include <stdint.h>

#include "strobe/metric_set.h"
#include "transport/proto.h"

/* What one encoded set gave: fields written and values left out (invalid,
 * NaN or infinite, or a u64 above INT64_MAX, which InfluxDB 1.x integers
 * cannot hold). */
struct strobe__influx_count {
    uint64_t values, omitted;
};

/* Appends the points of a consistent set to w, each line ending in '\n':
 * one point with the scalar metrics, and one per array element j (tag
 * index=j) with element j of every array metric; a point whose fields
 * were all left out is not written. Adds to *n. Returns w->err (0 or
 * -ENOMEM). */
int strobe__influx_encode(struct strobe__wr *w, const strobe_set *set, struct strobe__influx_count *n);

#endif
