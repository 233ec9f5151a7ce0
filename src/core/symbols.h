/* SPDX-License-Identifier: MIT */
/*
 * Function names at run time, needed only to apply STROBE_FILTER to
 * compiler-instrumented functions (the analysis resolves names offline).
 *
 * Names come from elfutils' libdwfl, which the runtime loads with
 * dlopen("libdw.so.1") the first time a filter needs it: linking libdw
 * would load it (and libelf, libz, liblzma, libbz2, libzstd) into every
 * measured program, filter or not.
 *
 * When a module is first described, all its function symbols are read at
 * once into a table sorted by address, each marked measured or excluded
 * by the filter; registering a function later is a binary search with no
 * allocation, so it can happen inside a signal handler. Only modules
 * loaded after start-up are read on the slow path of their first function
 * (libdw allocates then).
 */
#ifndef STROBE_CORE_SYMBOLS_H
#define STROBE_CORE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "core/runtime.h"

#define STROBE__SYM_MEASURED 1u /* the filter keeps it */

/* Loads libdw when a filter is set. Called at start-up without the lock:
 * dlopen takes the loader's lock, which another thread running an
 * instrumented constructor inside its own dlopen may hold while waiting
 * for ours. */
void strobe__symbols_prepare(void);

/* Reads the function symbols of strobe__rt.modules[first..] (caller holds
 * lock). Not async-signal-safe. Prints one warning the first time libdw
 * cannot be loaded; functions then stay measured and unnamed. */
void strobe__symbols_load_locked(size_t first);

/* The function symbol starting exactly at addr, or NULL. Caller holds
 * lock. Async-signal-safe. */
const struct strobe__symbol *strobe__symbol_at(uintptr_t addr);

#endif
