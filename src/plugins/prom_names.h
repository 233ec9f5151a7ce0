/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus names of strobe's metrics, one definition for every place
 * that gives them: strobed's /metrics exposition (src/strobed/http.c) and
 * the stores that write into Prometheus-style engines (remote_write, and
 * influx/postgres where their data model fits). Metric m of a set of
 * schema S is the family strobe_<S>_<m>, both names sanitised to
 * [a-zA-Z0-9_], with `_total` appended for a counter
 * (STROBE_METRIC_COUNTER, type counter; everything else is a gauge). Its
 * labels are instance and producer, then each valid char meta metric of
 * the set (such as an application's job_id) under its sanitised name, and
 * index="<j>" for element j of an array metric (count > 1).
 */
#ifndef STROBE_PLUGINS_PROM_NAMES_H
#define STROBE_PLUGINS_PROM_NAMES_H

#include <stddef.h>

#include "strobe/metric_set.h"

/* Room for the longest family name: strobe_ + schema + _ + metric + _total. */
#define STROBE__PROM_NAME_MAX (7 + STROBE_SET_NAME_MAX + 1 + STROBE_SET_NAME_MAX + 6 + 1)

/* Writes the family name of metric `metric` of schema `schema` into buf
 * (NUL-terminated; cap >= STROBE__PROM_NAME_MAX never truncates) and
 * returns its length. */
size_t strobe__prom_family(char *buf, size_t cap, const char *schema, const char *metric, int counter);

/* 1 when metric m of the set is exposed as a counter. */
int strobe__prom_is_counter(const strobe_set *s, uint32_t m);

/* Calls fn(ctx, name, value) for each label of the set's samples, in the
 * order above, index excepted (the caller adds it per element). name is
 * valid during the call only; value points into the set. */
typedef void (*strobe__prom_label_fn)(void *ctx, const char *name, const char *value);
void strobe__prom_labels(const strobe_set *s, strobe__prom_label_fn fn, void *ctx);

#endif
