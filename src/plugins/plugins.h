/* SPDX-License-Identifier: MIT */
/*
 * strobed's built-in plugins. Each is an ordinary struct strobe_plugin
 * (include/strobe/plugin.h): the daemon registers them exactly as it
 * would a dlopen()ed one.
 */
#ifndef STROBE_PLUGINS_PLUGINS_H
#define STROBE_PLUGINS_PLUGINS_H

#include "strobe/plugin.h"

extern const struct strobe_plugin strobe__plugin_synthetic;
extern const struct strobe_plugin strobe__plugin_meminfo;
extern const struct strobe_plugin strobe__plugin_vmstat;
extern const struct strobe_plugin strobe__plugin_loadavg;
extern const struct strobe_plugin strobe__plugin_shm;
/* samplers and stores (docs/plugins.md) */
extern const struct strobe_plugin strobe__plugin_procstat;
extern const struct strobe_plugin strobe__plugin_procnetdev;
extern const struct strobe_plugin strobe__plugin_csv;
extern const struct strobe_plugin strobe__plugin_petra;
extern const struct strobe_plugin strobe__plugin_influx;
/* transforms (docs/transforms.md) */
extern const struct strobe_plugin strobe__plugin_delta;
extern const struct strobe_plugin strobe__plugin_rate;
extern const struct strobe_plugin strobe__plugin_ratio;
extern const struct strobe_plugin strobe__plugin_sum_vector;
extern const struct strobe_plugin strobe__plugin_window;
extern const struct strobe_plugin strobe__plugin_combine;
extern const struct strobe_plugin strobe__plugin_global_ratio;
extern const struct strobe_plugin strobe__plugin_separate;
/* stores that talk to a server (outbox.h) */
extern const struct strobe_plugin strobe__plugin_remote_write;
extern const struct strobe_plugin strobe__plugin_postgres;

#endif
