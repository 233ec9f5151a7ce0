/* SPDX-License-Identifier: MIT */
/*
 * InfluxDB line protocol encoder (influx_lp.h). A set becomes
 *     <schema>,instance=I,producer=P[,<char meta>=V...] <scalars> <ts>
 *     <schema>,instance=I,producer=P[,...],index=J <element J of each array> <ts>
 * with integers as <n>i, reals as the shortest decimal that reads back
 * exactly, data char metrics as strings, and the transaction time in ns.
 *
 * Escaping follows the line protocol: a comma or space in the measurement,
 * a comma, space or equals sign in tag keys, tag values and field keys is
 * preceded by a backslash; in a string value '"' and '\' are. What the
 * protocol cannot carry is replaced by '_' (checked against InfluxDB
 * 1.6.7, tests/plugins/test_influx.c): a line break (it ends the line),
 * a backslash before one of those characters, another backslash or the
 * end of the name (InfluxDB would read it as an escape, and it unescapes
 * "\\" in measurements but not in tags), and a '#' that starts the
 * measurement (the line would be a comment). The key `time` is refused by
 * InfluxDB, so a metric or meta metric of that name is written `time_`.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "plugins/influx_lp.h"

enum part { MEASUREMENT, KEY, STRING };

/* Whether c needs a backslash in this part of a line. */
static int special(enum part p, char c)
{
    if (p == STRING)
        return c == '"' || c == '\\';
    return c == ',' || c == ' ' || (p == KEY && c == '=');
}

/* Whether c cannot appear at s[i] of a name, and is written '_'. */
static int unwritable(const char *s, size_t i)
{
    char c = s[i];
    if (c == '\n' || c == '\r')
        return 1;
    if (c != '\\')
        return 0;
    char next = s[i + 1];
    return !next || next == '\\' || next == ',' || next == ' ' || next == '=';
}

static void put_escaped(struct strobe__wr *w, enum part p, const char *s)
{
    size_t start = 0, i = 0;
    if (p == MEASUREMENT && s[0] == '#') {
        strobe__wr_u8(w, '_');
        start = i = 1;
    }
    for (; s[i]; i++) {
        char c = s[i];
        /* the common case: letters, digits, '_', '.', '-', '/' */
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (c >= 'A' && c <= 'Z'))
            continue;
        int esc = special(p, c), repl = p != STRING && unwritable(s, i);
        if (!esc && !repl)
            continue;
        strobe__wr_bytes(w, s + start, i - start);
        strobe__wr_u8(w, repl ? '_' : '\\');
        start = repl ? i + 1 : i;
    }
    strobe__wr_bytes(w, s + start, i - start);
}

static void put_key(struct strobe__wr *w, const char *name)
{
    put_escaped(w, KEY, name);
    if (!strcmp(name, "time"))
        strobe__wr_u8(w, '_');
}

static void put_u64(struct strobe__wr *w, uint64_t v)
{
    char digits[20];
    size_t n = sizeof digits;
    do
        digits[--n] = (char)('0' + v % 10);
    while ((v /= 10));
    strobe__wr_bytes(w, digits + n, sizeof digits - n);
}

/* The tag set shared by all points of the set (without the leading
 * measurement): instance, producer and the valid, non-empty char meta
 * metrics, as /metrics makes them labels (strobed/http.c). */
static void put_tags(struct strobe__wr *w, const strobe_set *set)
{
    strobe__wr_bytes(w, ",instance=", 10);
    put_escaped(w, KEY, strobe_set_instance(set));
    strobe__wr_bytes(w, ",producer=", 10);
    put_escaped(w, KEY, strobe_set_producer(set));
    for (uint32_t i = 0; i < strobe_set_card(set); i++) {
        if (strobe_set_metric_type(set, i) != STROBE_MT_CHAR ||
            !(strobe_set_metric_flags(set, i) & STROBE_METRIC_META) || !strobe_set_is_valid(set, i))
            continue;
        const char *name = strobe_set_metric_name(set, i), *value = strobe_set_get_str(set, i);
        if (!*value || !strcmp(name, "instance") || !strcmp(name, "producer") || !strcmp(name, "index"))
            continue; /* InfluxDB has no empty tags; the others are ours */
        strobe__wr_u8(w, ',');
        put_key(w, name);
        strobe__wr_u8(w, '=');
        put_escaped(w, KEY, value);
    }
}

/* Appends `,name=value` (or `name=value` for the first field); returns
 * whether a field was written. */
static int put_field(struct strobe__wr *w, const strobe_set *set, uint32_t i, uint32_t j, int first,
                     struct strobe__influx_count *n)
{
    enum strobe_metric_type t = strobe_set_metric_type(set, i);
    if (!strobe_set_is_valid(set, i))
        goto omit;
    char tmp[40];
    uint64_t u = 0;
    switch (t) {
    case STROBE_MT_F32:
    case STROBE_MT_D64:
        if (!isfinite(strobe_set_get_d64(set, i, j)))
            goto omit; /* the line protocol has no NaN or infinity */
        break;
    case STROBE_MT_S8:
    case STROBE_MT_S16:
    case STROBE_MT_S32:
    case STROBE_MT_S64:
    case STROBE_MT_CHAR:
        break;
    default:
        if ((u = strobe_set_get_u64(set, i, j)) > INT64_MAX)
            goto omit; /* InfluxDB 1.x integers are signed 64-bit */
        break;
    }
    if (!first)
        strobe__wr_u8(w, ',');
    put_key(w, strobe_set_metric_name(set, i));
    strobe__wr_u8(w, '=');
    switch (t) {
    case STROBE_MT_F32:
    case STROBE_MT_D64:
        if (strobe_set_format_value(set, i, j, tmp, sizeof tmp) == 0)
            strobe__wr_bytes(w, tmp, strlen(tmp));
        break;
    case STROBE_MT_S8:
    case STROBE_MT_S16:
    case STROBE_MT_S32:
    case STROBE_MT_S64: {
        int64_t v = strobe_set_get_s64(set, i, j);
        if (v < 0)
            strobe__wr_u8(w, '-');
        put_u64(w, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
        strobe__wr_u8(w, 'i');
        break;
    }
    case STROBE_MT_CHAR:
        strobe__wr_u8(w, '"');
        put_escaped(w, STRING, strobe_set_get_str(set, i));
        strobe__wr_u8(w, '"');
        break;
    default:
        put_u64(w, u);
        strobe__wr_u8(w, 'i');
        break;
    }
    n->values++;
    return 1;
omit:
    n->omitted++;
    return 0;
}

/* Ends the point that starts at `start` with the timestamp, or takes it
 * back when it got no field. */
static void end_point(struct strobe__wr *w, size_t start, int fields, uint64_t ts)
{
    if (!fields) {
        if (!w->err)
            w->len = start;
        return;
    }
    strobe__wr_u8(w, ' ');
    put_u64(w, ts);
    strobe__wr_u8(w, '\n');
}

/* The measurement and the tags; repeated for each point of the set. */
static void put_head(struct strobe__wr *w, const strobe_set *set)
{
    put_escaped(w, MEASUREMENT, strobe_set_schema_name(set));
    put_tags(w, set);
}

int strobe__influx_encode(struct strobe__wr *w, const strobe_set *set, struct strobe__influx_count *n)
{
    uint64_t ts = strobe_set_timestamp(set);
    uint32_t card = strobe_set_card(set), elements = 0;
    size_t start = w->len;
    put_head(w, set);
    strobe__wr_u8(w, ' ');
    int fields = 0;
    for (uint32_t i = 0; i < card; i++) {
        uint32_t cnt = strobe_set_metric_count(set, i);
        int is_char = strobe_set_metric_type(set, i) == STROBE_MT_CHAR;
        if (is_char && (strobe_set_metric_flags(set, i) & STROBE_METRIC_META))
            continue; /* a tag */
        if (cnt > 1 && !is_char) {
            elements = cnt > elements ? cnt : elements;
            continue;
        }
        fields += put_field(w, set, i, 0, !fields, n);
    }
    end_point(w, start, fields, ts);
    for (uint32_t j = 0; j < elements; j++) {
        start = w->len;
        put_head(w, set);
        strobe__wr_bytes(w, ",index=", 7);
        put_u64(w, j);
        strobe__wr_u8(w, ' ');
        fields = 0;
        for (uint32_t i = 0; i < card; i++) {
            uint32_t cnt = strobe_set_metric_count(set, i);
            if (cnt > 1 && cnt > j && strobe_set_metric_type(set, i) != STROBE_MT_CHAR)
                fields += put_field(w, set, i, j, !fields, n);
        }
        end_point(w, start, fields, ts);
    }
    return w->err;
}
