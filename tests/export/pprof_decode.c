/* SPDX-License-Identifier: MIT */
/*
 * Test-only pprof reader (pprof_decode.h).
 */
#include "pprof_decode.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export/profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;

struct dump {
    const Profile *p;
    FILE *out;
    char *err;
    size_t errsize;
    bool failed;
};

static void fail(struct dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct dump *d, const char *fmt, ...)
{
    if (d->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err, d->errsize, fmt, ap);
    va_end(ap);
    d->failed = true;
}

static const char *str(struct dump *d, int64_t i)
{
    if (i < 0 || (size_t)i >= d->p->n_string_table) {
        fail(d, "string index %" PRId64 " out of the table (%zu)", i, d->p->n_string_table);
        return "";
    }
    return d->p->string_table[i];
}

static const Perftools__Profiles__Function *function(struct dump *d, uint64_t id)
{
    for (size_t i = 0; i < d->p->n_function; i++)
        if (d->p->function[i]->id == id)
            return d->p->function[i];
    fail(d, "no function %" PRIu64, id);
    return NULL;
}

static const Perftools__Profiles__Location *location(struct dump *d, uint64_t id)
{
    for (size_t i = 0; i < d->p->n_location; i++)
        if (d->p->location[i]->id == id)
            return d->p->location[i];
    fail(d, "no location %" PRIu64, id);
    return NULL;
}

static bool has_mapping(const Profile *p, uint64_t id)
{
    for (size_t i = 0; i < p->n_mapping; i++)
        if (p->mapping[i]->id == id)
            return true;
    return false;
}

/* The frames of sample s, outermost first: its locations come leaf first,
 * and the lines of one location innermost (inlined) first. */
static void print_stack(struct dump *d, const Perftools__Profiles__Sample *s)
{
    bool first = true;
    for (size_t i = s->n_location_id; i-- > 0;) {
        const Perftools__Profiles__Location *l = location(d, s->location_id[i]);
        if (l && l->mapping_id && !has_mapping(d->p, l->mapping_id))
            fail(d, "location %" PRIu64 ": no mapping %" PRIu64, l->id, l->mapping_id);
        for (size_t k = l ? l->n_line : 0; k-- > 0;) {
            const Perftools__Profiles__Function *f = function(d, l->line[k]->function_id);
            fprintf(d->out, "%s%s", first ? "" : " > ", f ? str(d, f->name) : "?");
            first = false;
        }
    }
}

static void print_profile(struct dump *d)
{
    const Profile *p = d->p;
    if (p->n_string_table == 0 || p->string_table[0][0] != '\0')
        fail(d, "string_table[0] is not the empty string");
    fputs("types", d->out);
    for (size_t i = 0; i < p->n_sample_type; i++)
        fprintf(d->out, " %s/%s", str(d, p->sample_type[i]->type), str(d, p->sample_type[i]->unit));
    const Perftools__Profiles__ValueType *pt = p->period_type;
    fprintf(d->out, " default %s period %s/%s %" PRId64 "\n", str(d, p->default_sample_type),
            pt ? str(d, pt->type) : "", pt ? str(d, pt->unit) : "", p->period);
    fprintf(d->out, "time_nanos>0 %s duration %" PRId64 "\n", p->time_nanos > 0 ? "True" : "False",
            p->duration_nanos);
    for (size_t i = 0; i < p->n_comment; i++)
        fprintf(d->out, "comment %s\n", str(d, p->comment[i]));
    for (size_t i = 0; i < p->n_function; i++)
        str(d, p->function[i]->system_name), str(d, p->function[i]->filename);
    for (size_t i = 0; i < p->n_sample; i++) {
        const Perftools__Profiles__Sample *s = p->sample[i];
        if (s->n_value != p->n_sample_type)
            fail(d, "sample %zu has %zu values for %zu types", i, s->n_value, p->n_sample_type);
        fputs("sample ", d->out);
        print_stack(d, s);
        fputs(" [", d->out);
        for (size_t k = 0; k < s->n_label; k++) {
            const Perftools__Profiles__Label *l = s->label[k];
            fprintf(d->out, "%s%s=", k ? " " : "", str(d, l->key));
            if (l->str)
                fputs(str(d, l->str), d->out);
            else
                fprintf(d->out, "%" PRId64, l->num);
        }
        fputc(']', d->out);
        for (size_t k = 0; k < s->n_value; k++)
            fprintf(d->out, " %" PRId64, s->value[k]);
        fputc('\n', d->out);
    }
    for (size_t i = 0; i < p->n_location; i++) {
        const Perftools__Profiles__Location *l = p->location[i];
        for (size_t k = 0; l->n_line > 1 && k < l->n_line; k++) {
            const Perftools__Profiles__Function *f = function(d, l->line[k]->function_id);
            fprintf(d->out, "%s%s", k ? " in " : "inlined ", f ? str(d, f->name) : "?");
        }
        if (l->n_line > 1)
            fputc('\n', d->out);
    }
}

int pprof_dump(const char *path, char **text, char *err, size_t errsize)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        snprintf(err, errsize, "cannot open");
        return -1;
    }
    size_t len = 0, cap = 1 << 16;
    unsigned char *buf = malloc(cap);
    int n;
    while (buf && (n = gzread(gz, buf + len, (unsigned)(cap - len))) > 0)
        if ((len += (size_t)n) == cap)
            buf = realloc(buf, cap *= 2);
    int zerr;
    const char *zmsg = gzerror(gz, &zerr);
    bool bad = !buf || zerr != Z_OK || !gzeof(gz);
    if (bad)
        snprintf(err, errsize, "gunzip: %s", buf ? zmsg : "out of memory");
    gzclose(gz);
    Profile *p = bad ? NULL : perftools__profiles__profile__unpack(NULL, len, buf);
    free(buf);
    if (!p) {
        if (!bad)
            snprintf(err, errsize, "not a perftools.profiles.Profile");
        return -1;
    }
    size_t size;
    struct dump d = {.p = p, .out = open_memstream(text, &size), .err = err, .errsize = errsize};
    print_profile(&d);
    fclose(d.out);
    perftools__profiles__profile__free_unpacked(p, NULL);
    if (d.failed) {
        free(*text);
        *text = NULL;
    }
    return d.failed ? -1 : 0;
}
