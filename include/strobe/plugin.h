/* SPDX-License-Identifier: MIT */
/*
 * strobed plugin interface (docs/strobed.md, "Writing a plugin").
 *
 * Samplers, transforms and stores are all plugins: a shared object that
 * strobed dlopen()s exports one function,
 *     const struct strobe_plugin *strobe_plugin_entry(void);
 * (STROBE_PLUGIN_DEFINE writes it). strobed's built-in plugins are
 * compiled in but registered through the same struct.
 *
 * strobed creates one instance per configuration entry: open() reads the
 * entry's keys through the host, creates its sets and returns its state.
 * Then, from one daemon thread at a time (never concurrently for the same
 * instance):
 *   sampler    sample() at every tick of its interval/offset schedule;
 *   transform  update() for every set the daemon sees change (sampled,
 *              aggregated, or produced by another transform); it ignores
 *              sets it does not use and reports its outputs with
 *              host->set_updated(), which feeds the next link of a chain;
 *   store      update() likewise, flush() at shutdown and on SIGHUP.
 * close() frees everything; sets the instance added are removed by the
 * host before close() is called.
 *
 * Plugins link only against libstrobe-monitor (metric sets); everything
 * else the daemon offers comes through struct strobe_plugin_host.
 */
#ifndef STROBE_PLUGIN_H
#define STROBE_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "strobe/metric_set.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STROBE_PLUGIN_ABI 1

enum strobe_plugin_kind {
    STROBE_PLUGIN_SAMPLER = 1,
    STROBE_PLUGIN_TRANSFORM = 2,
    STROBE_PLUGIN_STORE = 3
};

enum strobe_log_level {
    STROBE_LOG_ERROR = 0,
    STROBE_LOG_WARN = 1,
    STROBE_LOG_INFO = 2,
    STROBE_LOG_DEBUG = 3
};

/* set_add flags */
#define STROBE_SET_PUBLISH 0x1u /* visible to `strobe ls`, aggregators, Prometheus */

/* What strobed offers a plugin instance. All calls come from the thread
 * that called the plugin; none may be kept across instances. */
struct strobe_plugin_host {
    void *impl;           /* the daemon's; plugins do not touch it */
    const char *name;     /* this instance's name (config `name`, default: plugin) */
    const char *producer; /* the daemon's producer name (config `producer`, default: host name) */

    /* Configuration of this instance. Absent keys: cfg_str returns NULL,
     * cfg_list n = 0, the number getters store `def` and return 0. Values
     * that do not parse are reported (file, line, key) and give
     * STROBE_ERR_SYNTAX; open() should return that code as is. */
    const char *(*cfg_str)(const struct strobe_plugin_host *h, const char *key);
    int (*cfg_list)(const struct strobe_plugin_host *h, const char *key, const char *const **items,
                    size_t *n);
    int (*cfg_u64)(const struct strobe_plugin_host *h, const char *key, uint64_t def,
                   uint64_t *out);
    int (*cfg_double)(const struct strobe_plugin_host *h, const char *key, double def,
                      double *out);
    /* durations such as "250ms", "1s", "2m"; result in ns */
    int (*cfg_duration)(const struct strobe_plugin_host *h, const char *key, uint64_t def_ns,
                        uint64_t *out_ns);
    /* Report a configuration problem at `key` (its line in the file) and
     * return STROBE_ERR_SYNTAX. key may be NULL for the entry as a whole. */
    int (*cfg_error)(const struct strobe_plugin_host *h, const char *key, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

    /* Sets. set_add hands the set to the daemon, which serves it (if
     * published), stores it and frees it at shutdown or set_remove. */
    int (*set_add)(const struct strobe_plugin_host *h, strobe_set *set, unsigned flags);
    void (*set_remove)(const struct strobe_plugin_host *h, strobe_set *set);
    /* The set's transaction ended: run transforms and stores on it. */
    void (*set_updated)(const struct strobe_plugin_host *h, strobe_set *set);

    void (*log)(const struct strobe_plugin_host *h, enum strobe_log_level level, const char *fmt,
                ...) __attribute__((format(printf, 3, 4)));
};

struct strobe_plugin {
    uint32_t abi; /* STROBE_PLUGIN_ABI */
    enum strobe_plugin_kind kind;
    const char *name;    /* as written in the config file: `plugin: meminfo` */
    const char *summary; /* one line for `strobed --list-plugins` */
    int (*open)(const struct strobe_plugin_host *host, void **state);
    int (*sample)(void *state, uint64_t now_ns);           /* samplers */
    int (*update)(void *state, const strobe_set *set);      /* transforms, stores */
    int (*flush)(void *state);                              /* stores; may be NULL */
    void (*close)(void *state);
};

#define STROBE_PLUGIN_DEFINE(plugin_struct)                                                   \
    __attribute__((visibility("default"))) const struct strobe_plugin *strobe_plugin_entry(void) \
    {                                                                                         \
        return &(plugin_struct);                                                              \
    }

#ifdef __cplusplus
}
#endif
#endif
