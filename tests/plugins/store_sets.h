/* SPDX-License-Identifier: MIT */
/*
 * Test helpers for store plugins (csv, petra): an in-process daemon built
 * from printf-style configuration text, and sets of u64 metrics that the
 * test registers with it and updates itself, stamping each transaction.
 */
#ifndef STROBE_TESTS_PLUGINS_STORE_SETS_H
#define STROBE_TESTS_PLUGINS_STORE_SETS_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "strobe/metric_set.h"
#include "strobed/inproc.h"

static struct strobe__daemon *daemon_from(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static struct strobe__daemon *daemon_from(const char *fmt, ...)
{
    char yaml[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(yaml, sizeof yaml, fmt, ap);
    va_end(ap);
    return inproc_daemon(yaml, "test.yaml");
}

/* A set of schema `schema` with u64 metrics named in the NULL-terminated
 * list, registered with the daemon (which then owns it). */
static strobe_set *add_set(struct strobe__daemon *d, const char *schema, const char *instance,
                           const char *const *metrics)
{
    strobe_schema *sc;
    strobe_set *set;
    CHECK(strobe_schema_new(schema, &sc) == 0);
    for (size_t i = 0; metrics[i]; i++)
        CHECK(strobe_schema_add(sc, metrics[i], NULL, STROBE_MT_U64, 1, 0) >= 0);
    CHECK(strobe_set_new(sc, "node1", instance, &set) == 0);
    strobe_schema_free(sc);
    pthread_mutex_lock(&d->lock);
    CHECK(strobe__daemon_set_add(d, set, STROBE_SET_PUBLISH, NULL) == 0);
    pthread_mutex_unlock(&d->lock);
    return set;
}

/* One transaction stamped ts_ns: metric i gets v[i] (n values). */
static void update(struct strobe__daemon *d, strobe_set *set, uint64_t ts_ns, const uint64_t *v, size_t n)
{
    pthread_mutex_lock(&d->lock);
    strobe_set_begin(set);
    for (size_t i = 0; i < n; i++)
        strobe_set_u64(set, (uint32_t)i, 0, v[i]);
    strobe_set_end_at(set, ts_ns, 0);
    strobe__daemon_set_updated(d, set);
    pthread_mutex_unlock(&d->lock);
}

/* What the daemon does at every flush_interval: each store's flush(). */
static inline void flush_stores(struct strobe__daemon *d)
{
    pthread_mutex_lock(&d->lock);
    strobe__daemon_flush_stores(d);
    pthread_mutex_unlock(&d->lock);
}

#endif
