/* SPDX-License-Identifier: MIT */
/* Byte sizes as users write them, in options, environment variables and
 * configuration files: one parser for all of strobe. */
#ifndef STROBE_COMMON_SIZE_H
#define STROBE_COMMON_SIZE_H

#include <stdint.h>

/* Parses a byte size "123", "64k", "16M", "1G", "2T" (binary multiples;
 * k, m, g, t in either case; optional trailing 'B' or 'iB') in full. Returns 0 or
 * STROBE_ERR_SYNTAX (also on overflow). */
int strobe__parse_size(const char *s, uint64_t *out);

/* Parses a sampling rate in Hz (`strobe run --sample=HZ`, STROBE_SAMPLE):
 * decimal digits only, STROBE_SAMPLE_HZ_MIN..MAX (format.h). Returns 0 or
 * STROBE_ERR_SYNTAX. */
int strobe__parse_sample_hz(const char *s, uint32_t *out);

#endif
