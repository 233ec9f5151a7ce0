/* SPDX-License-Identifier: MIT */
/*
 * The payload of a SAMPLE event record (ext 9, docs/formats/trace.md
 * "Sampling"), encoded by the in-process sampler's signal handler
 * (src/core/sample.c) and by `strobe record --pid` (src/cli/cmd_record.c).
 */
#ifndef STROBE_COMMON_SAMPLE_RECORD_H
#define STROBE_COMMON_SAMPLE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The payload of frames ips[0..n) (n <= STROBE_SAMPLE_MAX_FRAMES) into
 * out[STROBE_MAX_EXT_PAYLOAD]; frames that do not fit are cut (flagged
 * truncated). Returns its length. Async-signal-safe. */
size_t strobe__sample_encode(uint8_t *out, uint64_t weight, uint64_t missed, const uint64_t *ips, unsigned n,
                             bool truncated);

#endif
