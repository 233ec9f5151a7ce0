/* SPDX-License-Identifier: MIT */
/*
 * Metric sets: the unit of live monitoring (docs/formats/metric-set.md).
 *
 * A schema names and types the metrics; a set is one instance of a schema,
 * named "producer/schema" unless told otherwise. A set is two contiguous,
 * self-describing byte sections, so it can be copied to the wire, mapped
 * in shared memory or stored without translation:
 *   meta  header, descriptors, names, and the values of meta metrics
 *         (rarely changing: component id, rank); meta_gn counts changes.
 *   data  header (data_gn, meta_gn it belongs to, transaction timestamp,
 *         duration, consistent flag), a validity bit per metric, and the
 *         values of data metrics; overwritten in place by each sample.
 * A writer brackets a sample with strobe_set_begin/strobe_set_end; readers
 * take consistent copies with strobe_set_snapshot_data (seqlock style).
 * All integers are little-endian; values are naturally aligned.
 *
 * Link with -lstrobe-monitor (pkg-config strobe-monitor). A set is not
 * thread-safe against several writers; one writer and any number of
 * readers (also in other processes, through shared memory) are fine.
 */
#ifndef STROBE_METRIC_SET_H
#define STROBE_METRIC_SET_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

enum strobe_metric_type {
    STROBE_MT_U8 = 1,
    STROBE_MT_S8,
    STROBE_MT_U16,
    STROBE_MT_S16,
    STROBE_MT_U32,
    STROBE_MT_S32,
    STROBE_MT_U64,
    STROBE_MT_S64,
    STROBE_MT_F32,
    STROBE_MT_D64,
    STROBE_MT_CHAR, /* a character array: a NUL-padded string of count bytes */
    STROBE_MT_LAST = STROBE_MT_CHAR
};

/* Metric flags (strobe_schema_add). */
#define STROBE_METRIC_META 0x1u  /* lives in the meta section */
#define STROBE_METRIC_ARRAY 0x2u /* an array of count elements (set by count > 1 too) */
/* a count that only grows (ticks, calls, bytes since start): exported to
 * Prometheus as a counter; its rate is what a query takes */
#define STROBE_METRIC_COUNTER 0x4u

/* Limits, so that every section fits a 32-bit offset and a wire message. */
#define STROBE_SET_NAME_MAX 255       /* instance, producer, schema, metric names */
#define STROBE_SET_MAX_METRICS 65535
#define STROBE_SET_MAX_BYTES (64u << 20) /* meta or data section */

typedef struct strobe_schema strobe_schema;
typedef struct strobe_set strobe_set;

/* Type name as in listings ("u64", "d64", "char"), or NULL. */
STROBE_API const char *strobe_metric_type_name(enum strobe_metric_type t);
/* Inverse of strobe_metric_type_name: 0 or STROBE_ERR_SYNTAX. */
STROBE_API int strobe_metric_type_parse(const char *name, enum strobe_metric_type *out);
/* Size of one element in bytes (1 for char). */
STROBE_API size_t strobe_metric_type_size(enum strobe_metric_type t);

/* ---- Schemas ------------------------------------------------------------ */
STROBE_API int strobe_schema_new(const char *name, strobe_schema **out);
STROBE_API void strobe_schema_free(strobe_schema *s);
/* Add a metric; returns its index (>= 0) or a negative code: -EINVAL for a
 * bad name/type/count, -EEXIST for a duplicate name, STROBE_ERR_LIMIT. unit
 * may be NULL or "". count is 1 for a scalar, the length for an array or
 * char metric. */
STROBE_API int strobe_schema_add(strobe_schema *s, const char *name, const char *unit,
                                 enum strobe_metric_type type, uint32_t count, unsigned flags);
STROBE_API uint32_t strobe_schema_card(const strobe_schema *s);
STROBE_API const char *strobe_schema_name(const strobe_schema *s);

/* ---- Sets --------------------------------------------------------------- */
/* New set with zeroed values, all metrics valid, data_gn 0, not yet
 * consistent. instance may be NULL for "producer/schema". */
STROBE_API int strobe_set_new(const strobe_schema *schema, const char *producer,
                              const char *instance, strobe_set **out);
/* Same layout placed in caller memory (shared memory): meta at `meta`,
 * data at `data`, of strobe_set_layout_size() bytes each. The set then
 * never frees them. */
STROBE_API int strobe_set_layout_size(const strobe_schema *schema, const char *producer,
                                      const char *instance, size_t *meta_size,
                                      size_t *data_size);
STROBE_API int strobe_set_new_in(const strobe_schema *schema, const char *producer,
                                 const char *instance, void *meta, void *data,
                                 strobe_set **out);
/* A set over sections received or mapped from elsewhere: validates the meta
 * section (every offset, name and descriptor; STROBE_ERR_FORMAT otherwise)
 * and copies it; data starts zeroed with data_gn 0 and inconsistent. */
STROBE_API int strobe_set_from_meta(const void *meta, size_t len, strobe_set **out);
/* A set that reads sections owned by someone else (a shared-memory
 * segment), without copying; the meta section is validated first. */
STROBE_API int strobe_set_attach(const void *meta, size_t meta_len, void *data, size_t data_len,
                                 strobe_set **out);
STROBE_API void strobe_set_free(strobe_set *set);

STROBE_API const char *strobe_set_instance(const strobe_set *set);
STROBE_API const char *strobe_set_producer(const strobe_set *set);
STROBE_API const char *strobe_set_schema_name(const strobe_set *set);
STROBE_API uint64_t strobe_set_schema_sum(const strobe_set *set);
STROBE_API uint32_t strobe_set_card(const strobe_set *set);
STROBE_API uint64_t strobe_set_meta_gn(const strobe_set *set);
STROBE_API uint64_t strobe_set_data_gn(const strobe_set *set);
/* Transaction end time (ns since the Unix epoch) and its duration (ns). */
STROBE_API uint64_t strobe_set_timestamp(const strobe_set *set);
STROBE_API uint64_t strobe_set_duration(const strobe_set *set);
STROBE_API int strobe_set_is_consistent(const strobe_set *set);
/* The raw sections (for the wire, stores and shared memory). */
STROBE_API const void *strobe_set_meta(const strobe_set *set, size_t *len);
STROBE_API const void *strobe_set_data(const strobe_set *set, size_t *len);

/* Metric lookup and description. Index out of range is a caller bug:
 * the accessors return 0/NULL for it. */
STROBE_API int strobe_set_metric_index(const strobe_set *set, const char *name);
STROBE_API const char *strobe_set_metric_name(const strobe_set *set, uint32_t i);
STROBE_API const char *strobe_set_metric_unit(const strobe_set *set, uint32_t i);
STROBE_API enum strobe_metric_type strobe_set_metric_type(const strobe_set *set, uint32_t i);
STROBE_API uint32_t strobe_set_metric_count(const strobe_set *set, uint32_t i);
STROBE_API unsigned strobe_set_metric_flags(const strobe_set *set, uint32_t i);

/* ---- Writing -------------------------------------------------------------
 * begin marks the data inconsistent; end stamps the transaction (timestamp =
 * now, duration = now - begin), increments data_gn and marks it consistent.
 * Setting a meta metric increments meta_gn (and should happen rarely). */
STROBE_API void strobe_set_begin(strobe_set *set);
STROBE_API void strobe_set_end(strobe_set *set);
/* end with an explicit timestamp and duration (transforms, replays, tests) */
STROBE_API void strobe_set_end_at(strobe_set *set, uint64_t timestamp_ns, uint64_t duration_ns);
/* Store element j of metric i, converted to the metric's type. Integers
 * out of the type's range saturate and mark the metric invalid; NaN in
 * an integer metric marks it invalid. */
STROBE_API void strobe_set_u64(strobe_set *set, uint32_t i, uint32_t j, uint64_t v);
STROBE_API void strobe_set_s64(strobe_set *set, uint32_t i, uint32_t j, int64_t v);
STROBE_API void strobe_set_d64(strobe_set *set, uint32_t i, uint32_t j, double v);
/* Atomically add to an integer element (u64/s64 wrap modulo 2^64, smaller
 * types wrap at their width): for sets that several processes update at
 * once, such as a shared-memory set aggregated over MPI ranks. No-op for
 * real and char metrics. */
STROBE_API void strobe_set_add_u64(strobe_set *set, uint32_t i, uint32_t j, uint64_t delta);
/* Char metric: copies at most count-1 bytes, NUL-pads the rest. */
STROBE_API void strobe_set_str(strobe_set *set, uint32_t i, const char *s);
/* Per-metric validity (transforms flag invalid results with it). */
STROBE_API void strobe_set_valid(strobe_set *set, uint32_t i, int valid);

/* ---- Reading ------------------------------------------------------------- */
STROBE_API uint64_t strobe_set_get_u64(const strobe_set *set, uint32_t i, uint32_t j);
STROBE_API int64_t strobe_set_get_s64(const strobe_set *set, uint32_t i, uint32_t j);
STROBE_API double strobe_set_get_d64(const strobe_set *set, uint32_t i, uint32_t j);
/* Char metric as a NUL-terminated string (points into the set). */
STROBE_API const char *strobe_set_get_str(const strobe_set *set, uint32_t i);
STROBE_API int strobe_set_is_valid(const strobe_set *set, uint32_t i);
/* Format element j of metric i as text ("%" PRIu64, "%.17g", the string). */
STROBE_API int strobe_set_format_value(const strobe_set *set, uint32_t i, uint32_t j, char *buf,
                                       size_t cap);

/* Copy the data section into buf (cap >= data size) so that the copy is
 * consistent: retried while a writer is inside a transaction. Returns 0,
 * -EAGAIN if no consistent copy could be taken (the copy is then the last
 * attempt, marked inconsistent), -ENOSPC if cap is too small. */
STROBE_API int strobe_set_snapshot_data(const strobe_set *set, void *buf, size_t cap);
/* Replace the data section with one received from elsewhere: validated
 * against this set's meta (size, magic, meta_gn). STROBE_ERR_FORMAT if it
 * does not belong to this meta, -ESTALE if its meta_gn differs. */
STROBE_API int strobe_set_apply_data(strobe_set *set, const void *data, size_t len);
/* Replace the meta section (meta metric values changed, same layout):
 * STROBE_ERR_FORMAT if the layout or schema differ. */
STROBE_API int strobe_set_apply_meta(strobe_set *set, const void *meta, size_t len);

#ifdef __cplusplus
}
#endif
#endif
