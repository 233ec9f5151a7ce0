/* SPDX-License-Identifier: MIT */
/*
 * The streaming JSON writer of jsonw.h: UTF-8 validation of strings, one
 * separator rule for objects and arrays, and exact integers.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "analysis/experiment.h"
#include "report/jsonw.h"

/* Length of the valid UTF-8 sequence at p, or 0 when it is not valid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static int utf8_len(const unsigned char *p)
{
    unsigned char c = p[0];
    unsigned char lo = 0x80, hi = 0xbf;
    int n;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4;
    else
        return 0;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* Writes s as a JSON string. Bytes that are not valid UTF-8 (file names
 * are arbitrary bytes) become U+FFFD so the document stays valid JSON. */
static void jw_string(const struct strobe__jw *w, const char *s)
{
    FILE *out = w->out;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    fputc('"', out);
    while (*p) {
        unsigned char c = *p;
        if (c == '<' && w->html) {
            /* in a <script> element "</script" would end it */
            fputs("\\u003c", out);
            p++;
        } else if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
            p++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n':
                fputs("\\n", out);
                break;
            case '\t':
                fputs("\\t", out);
                break;
            case '\r':
                fputs("\\r", out);
                break;
            default:
                fprintf(out, "\\u%04x", c);
                break;
            }
            p++;
        } else if (c < 0x80) {
            fputc(c, out);
            p++;
        } else {
            int n = utf8_len(p);
            if (n) {
                fwrite(p, 1, (size_t)n, out);
                p += n;
            } else {
                fputs("\\ufffd", out);
                p++;
            }
        }
    }
    fputc('"', out);
}

/* Separator and key before a member (key NULL inside arrays). */
void strobe__jw_key(struct strobe__jw *w, const char *key)
{
    int d = w->depth;
    if (d > 0) {
        bool first = w->first[d];
        w->first[d] = false;
        if (!first)
            fputc(',', w->out);
        if (w->compact) {
        } else if (w->inline_[d]) {
            if (!first)
                fputc(' ', w->out);
        } else {
            fputc('\n', w->out);
            for (int i = 0; i < d; i++)
                fputs("  ", w->out);
        }
    }
    if (key) {
        jw_string(w, key);
        fputs(w->compact ? ":" : ": ", w->out);
    }
}

void strobe__jw_open(struct strobe__jw *w, const char *key, char open, bool inl)
{
    strobe__jw_key(w, key);
    fputc(open, w->out);
    if (w->depth + 1 >= STROBE__JW_MAX_DEPTH)
        abort(); /* the schema nests 5 levels; deeper is a bug here */
    bool parent_inline = w->depth > 0 && w->inline_[w->depth];
    w->depth++;
    w->first[w->depth] = true;
    w->inline_[w->depth] = inl || parent_inline;
    w->close[w->depth] = open == '{' ? '}' : ']';
}

void strobe__jw_close(struct strobe__jw *w)
{
    int d = w->depth--;
    if (!w->compact && !w->inline_[d] && !w->first[d]) {
        fputc('\n', w->out);
        for (int i = 0; i < w->depth; i++)
            fputs("  ", w->out);
    }
    fputc(w->close[d], w->out);
}

void strobe__jw_u64(struct strobe__jw *w, const char *key, uint64_t v)
{
    strobe__jw_key(w, key);
    fprintf(w->out, "%" PRIu64, v);
}

void strobe__jw_i64(struct strobe__jw *w, const char *key, int64_t v)
{
    strobe__jw_key(w, key);
    fprintf(w->out, "%" PRId64, v);
}

void strobe__jw_double(struct strobe__jw *w, const char *key, double v)
{
    strobe__jw_key(w, key);
    if (isfinite(v))
        fprintf(w->out, "%.17g", v);
    else
        fputs("null", w->out);
}

void strobe__jw_null(struct strobe__jw *w, const char *key)
{
    strobe__jw_key(w, key);
    fputs("null", w->out);
}

void strobe__jw_bool(struct strobe__jw *w, const char *key, bool v)
{
    strobe__jw_key(w, key);
    fputs(v ? "true" : "false", w->out);
}

void strobe__jw_str(struct strobe__jw *w, const char *key, const char *s)
{
    strobe__jw_key(w, key);
    jw_string(w, s);
}

/* Index or null for STROBE_NONE references. */
void strobe__jw_ref(struct strobe__jw *w, const char *key, uint32_t v)
{
    if (v == STROBE_NONE)
        strobe__jw_null(w, key);
    else
        strobe__jw_u64(w, key, v);
}
