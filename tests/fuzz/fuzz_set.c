/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a metric set's meta and data sections as received from the
 * network or a shared-memory segment (docs/formats/metric-set.md), through
 * strobe_set_from_meta, strobe_set_apply_data and strobe_set_apply_meta,
 * then every accessor and strobe_set_format_value over every element.
 * Input: a little-endian u32 meta length, the meta section, and the data
 * section as the rest. Both are copied to 8-aligned memory first, as the
 * client does (sections arrive at any alignment; the set API wants 8).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor/set.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink; /* keeps the reads from being optimised away */

static void read_all(strobe_set *s)
{
    char buf[64];
    sink += strlen(strobe_set_instance(s)) + strlen(strobe_set_producer(s)) +
            strlen(strobe_set_schema_name(s));
    sink += strobe_set_schema_sum(s) + strobe_set_meta_gn(s) + strobe_set_data_gn(s) +
            strobe_set_timestamp(s) + strobe_set_duration(s) + (uint64_t)strobe_set_is_consistent(s);
    size_t ml, dl;
    sink += (uintptr_t)strobe_set_meta(s, &ml) + (uintptr_t)strobe_set_data(s, &dl) + ml + dl;
    uint32_t card = strobe_set_card(s);
    for (uint32_t i = 0; i <= card; i++) { /* one past the end: must be refused */
        const char *name = strobe_set_metric_name(s, i);
        const char *unit = strobe_set_metric_unit(s, i);
        if ((name == NULL) != (i == card) || (unit == NULL) != (i == card))
            abort();
        if (name) {
            int k = strobe_set_metric_index(s, name);
            if (k < 0 || (uint32_t)k > i) /* a duplicate name finds the first one */
                abort();
            sink += strlen(name) + strlen(unit);
        }
        uint32_t count = strobe_set_metric_count(s, i);
        sink += strobe_set_metric_type(s, i) + strobe_set_metric_flags(s, i) +
                (uint64_t)strobe_set_is_valid(s, i);
        sink += strlen(strobe_set_get_str(s, i));
        for (uint32_t j = 0; j <= count; j++) {
            double v = strobe_set_get_d64(s, i, j);
            uint64_t bits;
            memcpy(&bits, &v, 8); /* a cast of an out-of-range double would be UB here */
            sink += strobe_set_get_u64(s, i, j) + (uint64_t)strobe_set_get_s64(s, i, j) + bits;
            if (strobe_set_format_value(s, i, j, buf, sizeof buf) == 0 && strlen(buf) >= sizeof buf)
                abort();
            strobe_set_format_value(s, i, j, buf, 3); /* too small: -ENOSPC, never an overrun */
        }
    }
}

/* Writes every element back with its own value (the setters must stay in
 * bounds on any layout the checks accept). */
static void write_all(strobe_set *s)
{
    uint32_t card = strobe_set_card(s);
    for (uint32_t i = 0; i < card; i++) {
        uint32_t count = strobe_set_metric_count(s, i);
        enum strobe_metric_type t = strobe_set_metric_type(s, i);
        if (t == STROBE_MT_CHAR) {
            char tmp[64];
            snprintf(tmp, sizeof tmp, "%s", strobe_set_get_str(s, i));
            strobe_set_str(s, i, tmp);
            continue;
        }
        for (uint32_t j = 0; j < count && j < 64; j++) {
            if (t == STROBE_MT_F32 || t == STROBE_MT_D64)
                strobe_set_d64(s, i, j, strobe_set_get_d64(s, i, j));
            else if (t == STROBE_MT_S8 || t == STROBE_MT_S16 || t == STROBE_MT_S32 || t == STROBE_MT_S64)
                strobe_set_s64(s, i, j, strobe_set_get_s64(s, i, j));
            else
                strobe_set_u64(s, i, j, strobe_set_get_u64(s, i, j));
            strobe_set_add_u64(s, i, j, 0);
        }
        strobe_set_valid(s, i, strobe_set_is_valid(s, i));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t ml;
    if (size < 4)
        return 0;
    memcpy(&ml, data, 4);
    data += 4;
    size -= 4;
    if (ml > size)
        return 0;
    size_t dl = size - ml;
    strobe_set *s;
    if (strobe_set_from_meta(data, ml, &s) < 0)
        return 0;
    read_all(s); /* a fresh set: meta as received, data all zero */
    uint64_t *meta = malloc(ml ? ml : 1), *dat = malloc(dl ? dl : 1); /* malloc: 16-aligned */
    if (meta && dat) {
        memcpy(meta, data, ml);
        memcpy(dat, data + ml, dl);
        if (strobe_set_apply_meta(s, meta, ml) != 0) /* its own meta: always accepted */
            abort();
        if (strobe_set_apply_data(s, dat, dl) == 0) {
            read_all(s);
            if (strobe_set_is_consistent(s)) {
                size_t len;
                strobe_set_data(s, &len);
                uint64_t *snap = malloc(len);
                if (snap && strobe_set_snapshot_data(s, snap, len) != 0)
                    abort();
                free(snap);
            }
        }
        write_all(s);
        read_all(s);
    }
    free(meta);
    free(dat);
    strobe_set_free(s);
    return 0;
}
