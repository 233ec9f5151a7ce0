/* SPDX-License-Identifier: MIT */
/*
 * Internal view of the metric set layout (docs/formats/metric-set.md):
 * the section headers and descriptors the wire protocol, shared-memory
 * index and stores read directly.
 */
#ifndef STROBE_MONITOR_SET_H
#define STROBE_MONITOR_SET_H

#include <stdint.h>

#include "strobe/metric_set.h"

#define STROBE__SET_META_MAGIC "SMET"
#define STROBE__SET_DATA_MAGIC "SDAT"
#define STROBE__SET_VERSION 1

struct strobe__set_meta_hdr {
    char magic[4];
    uint16_t version;
    uint16_t hdr_size;
    uint32_t meta_size;
    uint32_t data_size;
    uint64_t meta_gn;
    uint64_t schema_sum;
    uint32_t card;
    uint32_t desc_off;
    uint32_t instance_off;
    uint32_t producer_off;
    uint32_t schema_off;
    uint32_t strings_end;
    uint32_t reserved[2];
};

struct strobe__set_desc {
    uint32_t name_off;
    uint32_t unit_off;
    uint8_t type;
    uint8_t flags;
    uint16_t reserved;
    uint32_t count;
    uint32_t value_off; /* in the meta section for meta metrics, else in data */
    uint32_t reserved2;
};

struct strobe__set_data_hdr {
    char magic[4];
    uint32_t data_size;
    uint64_t meta_gn;
    uint64_t data_gn;
    uint64_t timestamp_ns;
    uint64_t duration_ns;
    uint32_t consistent;
    uint32_t card;
    uint64_t begin_ns; /* writer's monotonic begin time */
    uint64_t reserved;
};

_Static_assert(sizeof(struct strobe__set_meta_hdr) == 64, "meta header is 64 bytes");
_Static_assert(sizeof(struct strobe__set_desc) == 24, "descriptor is 24 bytes");
_Static_assert(sizeof(struct strobe__set_data_hdr) == 64, "data header is 64 bytes");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "metric sets are little-endian; a big-endian port must swap");

/* Size of the validity bitmap that follows the data header. */
static inline uint32_t strobe__set_bitmap_bytes(uint32_t card)
{
    return (card + 63) / 64 * 8;
}

/* Validates a meta section; 0 or STROBE_ERR_FORMAT. */
int strobe__set_meta_check(const void *meta, size_t len);
/* Validates a data section against a checked meta section. */
int strobe__set_data_check(const void *meta, const void *data, size_t len);

#endif
