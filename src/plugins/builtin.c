/* SPDX-License-Identifier: MIT */
/* The table of built-in plugins, looked up by name before dlopen(). */
#include <stddef.h>

#include "common/build_config.h"
#include "plugins/plugins.h"
#include "strobed/daemon.h"

const struct strobe_plugin *const strobe__builtin_plugins[] = {
    &strobe__plugin_synthetic,
    &strobe__plugin_meminfo,
    &strobe__plugin_vmstat,
    &strobe__plugin_loadavg,
    &strobe__plugin_shm,
    &strobe__plugin_procstat,
    &strobe__plugin_procnetdev,
    &strobe__plugin_csv,
#if STROBE_WITH_PETRA
    &strobe__plugin_petra,
#endif
#if STROBE_WITH_INFLUX
    &strobe__plugin_influx,
#endif
    &strobe__plugin_delta,
    &strobe__plugin_rate,
    &strobe__plugin_ratio,
    &strobe__plugin_sum_vector,
    &strobe__plugin_window,
    &strobe__plugin_combine,
    &strobe__plugin_global_ratio,
    &strobe__plugin_separate,
#if STROBE_WITH_REMOTE_WRITE
    &strobe__plugin_remote_write,
#endif
#if STROBE_WITH_POSTGRES
    &strobe__plugin_postgres,
#endif
    NULL,
};
