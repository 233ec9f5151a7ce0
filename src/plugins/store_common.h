/* SPDX-License-Identifier: MIT */
/*
 * What every store plugin needs the same way (csv, petra, remote_write,
 * postgres, influx): the `sets`/`schemas` filter, true/false values and
 * creating its directory.
 */
#ifndef STROBE_PLUGINS_STORE_COMMON_H
#define STROBE_PLUGINS_STORE_COMMON_H

#include <stddef.h>

#include "strobe/plugin.h"

/* The keys `sets` (globs on instance names) and `schemas` (globs on schema
 * names); an empty list matches everything. The strings are the host's. */
struct strobe__store_filter {
    const char *const *sets, *const *schemas;
    size_t nsets, nschemas;
};

/* Reads `sets` and `schemas`: 0 or the host's error code. */
int strobe__store_filter_read(const struct strobe_plugin_host *h, struct strobe__store_filter *f);
/* 1 when the set's instance and schema names pass the filter. */
int strobe__store_filter_match(const struct strobe__store_filter *f, const strobe_set *set);
/* 1 when name matches one of the n globs (fnmatch), or n is 0. */
int strobe__store_glob_match(const char *const *globs, size_t n, const char *name);

/* true/yes/on/1 or false/no/off/0 into *out: 0, or STROBE_ERR_SYNTAX. */
int strobe__store_parse_bool(const char *s, int *out);

/* mkdir -p dir (mode 0755); 0, -errno, or -ENOTDIR when dir is a file. */
int strobe__store_make_dir(const char *dir);

#endif
