/* SPDX-License-Identifier: MIT */
/* Prometheus names and labels of a set's metrics (prom_names.h). */
#include <string.h>

#include "plugins/prom_names.h"

/* Appends s to buf[*n..cap) with every character outside [a-zA-Z0-9_]
 * replaced by '_'. */
static void put_name(char *buf, size_t cap, size_t *n, const char *s)
{
    for (; *s; s++, (*n)++) {
        char c = *s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (*n + 1 < cap)
            buf[*n] = ok ? c : '_';
    }
}

size_t strobe__prom_family(char *buf, size_t cap, const char *schema, const char *metric, int counter)
{
    size_t n = 0;
    put_name(buf, cap, &n, "strobe_");
    put_name(buf, cap, &n, schema);
    put_name(buf, cap, &n, "_");
    put_name(buf, cap, &n, metric);
    if (counter)
        put_name(buf, cap, &n, "_total");
    if (cap)
        buf[n < cap ? n : cap - 1] = 0;
    return n;
}

int strobe__prom_is_counter(const strobe_set *s, uint32_t m)
{
    return (strobe_set_metric_flags(s, m) & STROBE_METRIC_COUNTER) != 0;
}

void strobe__prom_labels(const strobe_set *s, strobe__prom_label_fn fn, void *ctx)
{
    fn(ctx, "instance", strobe_set_instance(s));
    fn(ctx, "producer", strobe_set_producer(s));
    /* The set's char meta metrics (such as an application's job_id) are
     * labels: they name the set, they are not values. */
    for (uint32_t i = 0; i < strobe_set_card(s); i++) {
        if (strobe_set_metric_type(s, i) != STROBE_MT_CHAR ||
            !(strobe_set_metric_flags(s, i) & STROBE_METRIC_META) || !strobe_set_is_valid(s, i))
            continue;
        const char *name = strobe_set_metric_name(s, i);
        if (!strcmp(name, "instance") || !strcmp(name, "producer") || !strcmp(name, "index"))
            continue; /* the labels every sample has */
        char label[STROBE_SET_NAME_MAX + 2];
        size_t n = 0;
        if (*name >= '0' && *name <= '9')
            label[n++] = '_'; /* a label name starts with a letter or '_' */
        put_name(label, sizeof label, &n, name);
        label[n] = 0;
        fn(ctx, label, strobe_set_get_str(s, i));
    }
}
