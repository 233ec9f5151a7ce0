/* SPDX-License-Identifier: MIT */
/*
 * String escaping for the text formats the exporters write (JSON for the
 * Chrome trace, XML for Cube's anchor.xml). Names in an experiment come from
 * symbol tables, source paths and user annotations, so they may contain any
 * byte: both escapers validate UTF-8 and write U+FFFD for every byte that is
 * not part of a well-formed sequence, so the output is always valid UTF-8;
 * strobe__utf8_valid() does the same for the strings of binary formats.
 *
 * The escapers write to a stdio stream and never fail on their own; the
 * caller checks ferror() once when the file is complete.
 */
#ifndef STROBE_EXPORT_ESCAPE_H
#define STROBE_EXPORT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Length (1..4) of the well-formed UTF-8 sequence starting at p (n bytes
 * available), or 0 when p[0] does not start one (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF). n must be > 0. */
size_t strobe__utf8_seq_len(const unsigned char *p, size_t n);

/* Writes s as a JSON string literal, quotes included: ", \ and control
 * characters escaped, U+2028/U+2029 escaped (so the text is also valid
 * JavaScript), invalid UTF-8 replaced by \ufffd. NULL is written as "". */
void strobe__json_string(FILE *f, const char *s);

/* Writes s as XML character data usable both in element content and in a
 * double-quoted attribute value: & < > " escaped as entities; tab, newline
 * and carriage return written as a space (Cube's scanner folds them anyway);
 * other characters that XML 1.0 forbids and invalid UTF-8 replaced by
 * U+FFFD. NULL is written as nothing. */
void strobe__xml_text(FILE *f, const char *s);

/* A malloc'd copy of s (NULL is taken as "") in which every byte that is
 * not part of a well-formed UTF-8 sequence is replaced by U+FFFD: for
 * binary formats whose strings must be UTF-8 (Perfetto's protobuf).
 * Returns NULL when out of memory. */
char *strobe__utf8_valid(const char *s);

#endif
