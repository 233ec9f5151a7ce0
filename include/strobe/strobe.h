/* SPDX-License-Identifier: MIT */
/*
 * strobe public API: source annotations (regions), user metrics, and the
 * error-code table. Link with -lstrobe (pkg-config strobe). The same
 * runtime also measures unmodified programs through LD_PRELOAD
 * (`strobe run`); annotations then appear next to compiler-instrumented
 * functions in the same call tree.
 *
 * Regions and metrics are described by static handles: the first use
 * registers the handle with the runtime, later uses cost one relaxed load,
 * never a name lookup.
 */
#ifndef STROBE_STROBE_H
#define STROBE_STROBE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(STROBE_BUILDING_LIBRARY)
#define STROBE_API __attribute__((visibility("default")))
#else
#define STROBE_API
#endif

#define STROBE_VERSION_MAJOR 0
#define STROBE_VERSION_MINOR 1
#define STROBE_VERSION_PATCH 0
#define STROBE_VERSION_STRING "0.1.0"

/* ---- Errors -------------------------------------------------------------
 * Functions return 0 on success or a negative code: -errno for system
 * errors, or one of these for strobe's own conditions. */
enum strobe_error {
    STROBE_ERR_FORMAT = -1000,   /* a file is corrupt or not a strobe file */
    STROBE_ERR_TRUNCATED = -1001,/* a file ends in the middle of a record */
    STROBE_ERR_VERSION = -1002,  /* written by an unsupported format version */
    STROBE_ERR_SYNTAX = -1003,   /* a text input (filter, option) is malformed */
    STROBE_ERR_DISABLED = -1004, /* measurement is off in this process */
    STROBE_ERR_LIMIT = -1005,    /* a configured size limit was reached */
    STROBE_ERR_UNSUPPORTED = -1006, /* the request is valid but not supported */
    STROBE_ERR_ABORTED = -1007,  /* a transaction aborted (a precondition failed) */
};

/* Message for any code returned by a strobe function (never NULL, static). */
STROBE_API const char *strobe_strerror(int code);

/* ---- Regions --------------------------------------------------------- */
typedef struct strobe_region {
    const char *name;
    const char *file;
    int line;
    uint32_t id; /* 0 until registered; owned by the runtime */
} strobe_region_t;

#define STROBE_REGION_INIT(name_) { (name_), __FILE__, __LINE__, 0 }

/* Enter/leave a region. Regions must nest properly per thread. Safe to call
 * from any thread; not async-signal-safe. Return 0, STROBE_ERR_DISABLED when
 * not measuring, or -ENOMEM when the region table is full. */
STROBE_API int strobe_region_enter(strobe_region_t *region);
STROBE_API int strobe_region_exit(strobe_region_t *region);

/* Block-scoped convenience: STROBE_REGION_BEGIN(solve); ... STROBE_REGION_END(solve); */
#define STROBE_REGION_BEGIN(tag)                                              \
    static strobe_region_t strobe__region_##tag = STROBE_REGION_INIT(#tag);   \
    strobe_region_enter(&strobe__region_##tag)
#define STROBE_REGION_END(tag) strobe_region_exit(&strobe__region_##tag)

/* ---- User metrics ----------------------------------------------------
 * A metric adds values to the innermost open region of the calling thread:
 * the profile keeps count/sum/min/max per call path, the trace keeps every
 * sample. */
typedef struct strobe_metric {
    const char *name;
    const char *unit;
    uint32_t id; /* 0 until registered; owned by the runtime */
} strobe_metric_t;

#define STROBE_METRIC_INIT(name_, unit_) { (name_), (unit_), 0 }

STROBE_API int strobe_metric_add(strobe_metric_t *metric, int64_t value);

/* ---- Control --------------------------------------------------------- */

/* 1 when this process is being measured, 0 otherwise. */
STROBE_API int strobe_is_active(void);

/* Experiment directory of this process (static string), or NULL. */
STROBE_API const char *strobe_experiment_dir(void);

/* Recording on and off, like Score-P's SCOREP_RECORDING_OFF/ON, for the
 * whole process. While paused, regions entered and metric samples are
 * recorded neither in the trace nor in the profile (and the sampler takes
 * no samples); a region entered before the pause and left during it is
 * recorded with its real end, one entered during the pause is not
 * recorded even when it is left after it. Calls nest: recording resumes
 * at the strobe_resume() that matches the first strobe_pause(), and only
 * if neither `strobe run --toggle-signal` nor `--delay`/`--duration`
 * keeps it paused (each cause counts on its own). Each change is noted
 * with its time in the experiment; `strobe report` lists the paused
 * intervals. Thread-safe; not async-signal-safe.
 * strobe_pause: 0, STROBE_ERR_DISABLED when not measuring, -EOVERFLOW
 * beyond 2^29 nested pauses. strobe_resume: 0, STROBE_ERR_DISABLED, or
 * -EINVAL when no strobe_pause() is left to match (nothing changes). */
STROBE_API int strobe_pause(void);
STROBE_API int strobe_resume(void);

/* 1 when this process is being measured and recording is not paused. */
STROBE_API int strobe_is_recording(void);

#ifdef __cplusplus
}
#endif

#endif
