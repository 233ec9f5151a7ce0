/* SPDX-License-Identifier: MIT */
/*
 * JSON and XML string escapers with UTF-8 validation (see escape.h).
 */
#include "export/escape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD in UTF-8 */

size_t strobe__utf8_seq_len(const unsigned char *p, size_t n)
{
    unsigned char b = p[0];
    if (b < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (b >= 0xc2 && b <= 0xdf) {
        len = 2;
    } else if (b >= 0xe0 && b <= 0xef) {
        len = 3;
        if (b == 0xe0)
            lo = 0xa0; /* overlong */
        else if (b == 0xed)
            hi = 0x9f; /* UTF-16 surrogates */
    } else if (b >= 0xf0 && b <= 0xf4) {
        len = 4;
        if (b == 0xf0)
            lo = 0x90; /* overlong */
        else if (b == 0xf4)
            hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0; /* continuation byte, 0xc0/0xc1, 0xf5..0xff */
    }
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

void strobe__json_string(FILE *f, const char *s)
{
    putc('"', f);
    if (s) {
        const unsigned char *p = (const unsigned char *)s;
        size_t n = 0;
        while (p[n])
            n++;
        while (n > 0) {
            unsigned char c = *p;
            if (c < 0x80) {
                switch (c) {
                case '"':
                    fputs("\\\"", f);
                    break;
                case '\\':
                    fputs("\\\\", f);
                    break;
                case '\b':
                    fputs("\\b", f);
                    break;
                case '\f':
                    fputs("\\f", f);
                    break;
                case '\n':
                    fputs("\\n", f);
                    break;
                case '\r':
                    fputs("\\r", f);
                    break;
                case '\t':
                    fputs("\\t", f);
                    break;
                default:
                    if (c < 0x20)
                        fprintf(f, "\\u%04x", c);
                    else
                        putc(c, f);
                }
                p++, n--;
                continue;
            }
            size_t len = strobe__utf8_seq_len(p, n);
            if (len == 0) {
                fputs("\\ufffd", f);
                p++, n--;
                continue;
            }
            /* U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR are valid
             * JSON but end a line in JavaScript; escape them for viewers that
             * eval or line-split the file. */
            if (len == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
                fprintf(f, "\\u%04x", 0x2000u | (p[2] == 0xa8 ? 0x28u : 0x29u));
            else
                fwrite(p, 1, len, f);
            p += len, n -= len;
        }
    }
    putc('"', f);
}

void strobe__xml_text(FILE *f, const char *s)
{
    if (!s)
        return;
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (p[n])
        n++;
    while (n > 0) {
        unsigned char c = *p;
        if (c < 0x80) {
            switch (c) {
            case '&':
                fputs("&amp;", f);
                break;
            case '<':
                fputs("&lt;", f);
                break;
            case '>':
                fputs("&gt;", f);
                break;
            case '"':
                fputs("&quot;", f);
                break;
            case '\t':
            case '\n':
            case '\r':
                putc(' ', f);
                break;
            default:
                if (c < 0x20)
                    fputs(replacement, f); /* not a legal XML 1.0 character */
                else
                    putc(c, f);
            }
            p++, n--;
            continue;
        }
        size_t len = strobe__utf8_seq_len(p, n);
        if (len == 0) {
            fputs(replacement, f);
            p++, n--;
            continue;
        }
        /* U+FFFE and U+FFFF are well-formed UTF-8 but not XML characters. */
        if (len == 3 && p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf))
            fputs(replacement, f);
        else
            fwrite(p, 1, len, f);
        p += len, n -= len;
    }
}

char *strobe__utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    char *out = malloc(3 * n + 1); /* each invalid byte grows to 3 */
    if (!out)
        return NULL;
    char *o = out;
    while (n > 0) {
        size_t len = strobe__utf8_seq_len(p, n);
        if (len == 0) {
            memcpy(o, replacement, 3);
            o += 3;
            len = 1;
        } else {
            memcpy(o, p, len);
            o += len;
        }
        p += len;
        n -= len;
    }
    *o = '\0';
    return out;
}
