/* SPDX-License-Identifier: MIT */
/*
 * A minimal streaming JSON writer, shared by the JSON report and the data
 * of the HTML report. Containers opened "inline" print their members on
 * one line; the others put each member on its own line, indented by two
 * spaces per level; a compact writer prints no whitespace at all.
 */
#ifndef STROBE_REPORT_JSONW_H
#define STROBE_REPORT_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define STROBE__JW_MAX_DEPTH 16

struct strobe__jw {
    FILE *out;
    bool compact; /* no newlines, indentation or spaces */
    bool html;    /* '<' in strings as \u003c: the document sits in a <script> */
    int depth;
    bool first[STROBE__JW_MAX_DEPTH];
    bool inline_[STROBE__JW_MAX_DEPTH];
    char close[STROBE__JW_MAX_DEPTH];
};

/* Separator and key before a member (key NULL inside arrays); the value
 * is then written by the caller. */
void strobe__jw_key(struct strobe__jw *w, const char *key);
/* Opens an object ('{') or array ('['); inl: its members on one line. */
void strobe__jw_open(struct strobe__jw *w, const char *key, char open, bool inl);
void strobe__jw_close(struct strobe__jw *w);
void strobe__jw_u64(struct strobe__jw *w, const char *key, uint64_t v);
void strobe__jw_i64(struct strobe__jw *w, const char *key, int64_t v);
/* %.17g, null when not finite */
void strobe__jw_double(struct strobe__jw *w, const char *key, double v);
void strobe__jw_null(struct strobe__jw *w, const char *key);
void strobe__jw_bool(struct strobe__jw *w, const char *key, bool v);
/* bytes that are not valid UTF-8 become U+FFFD */
void strobe__jw_str(struct strobe__jw *w, const char *key, const char *s);
/* index, or null for STROBE_NONE */
void strobe__jw_ref(struct strobe__jw *w, const char *key, uint32_t v);

#endif
