/* SPDX-License-Identifier: MIT */
/* Byte sizes and durations as users write them, in options, environment
 * variables and configuration files: one parser each for all of strobe. */
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

/* Parses a duration "250ms", "1.5s", "2m", "1h", "10us", "100ns"; a bare
 * number is seconds. Returns 0 or STROBE_ERR_SYNTAX (negative, not a
 * number, unknown unit, more than 10^18 ns). */
int strobe__parse_duration(const char *s, unsigned long long *ns);

#endif
