/* SPDX-License-Identifier: MIT */
/*
 * Human-readable numbers for the text report and the CLI: durations with an
 * adaptive unit (ns, µs, ms, s) and byte sizes (B, KiB, MiB, ...). The
 * output is stable (integer arithmetic, no locale) so tests can compare
 * report lines exactly, and a value never prints as "1000.000" of a unit:
 * it moves to the next unit instead.
 */
#ifndef STROBE_REPORT_UNITS_H
#define STROBE_REPORT_UNITS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Large enough for any string the functions below produce. */
#define STROBE_UNITS_LEN 32

/* "0 ns" .. "999 ns", "1.000 µs" .. "999.999 µs", "1.000 ms" .. "999.999 ms",
 * then "1.000 s" and up (rounded half up to 3 decimals). Returns buf. µ is
 * UTF-8 (2 bytes, 1 column). Thread-safe. */
char *strobe__fmt_time(char buf[STROBE_UNITS_LEN], uint64_t ns);

/* "0 B" .. "1023 B", then one decimal in KiB, MiB, GiB, TiB, PiB, EiB
 * ("3.1 MiB"). Returns buf. Thread-safe. */
char *strobe__fmt_bytes(char buf[STROBE_UNITS_LEN], uint64_t bytes);

/* a / b rounded half up (0 when b is 0), for per-visit averages. */
uint64_t strobe__div_round(uint64_t a, uint64_t b);

/* Display width in terminal columns of a UTF-8 string: bytes that do not
 * continue a multi-byte sequence (good enough for names and µ). */
size_t strobe__display_width(const char *s);

/* Writes s right-aligned (width > 0) or left-aligned (width <= 0) in
 * |width| display columns; longer strings are written whole. */
void strobe__cell(FILE *out, const char *s, int width);

#endif
