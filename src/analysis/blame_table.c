/* SPDX-License-Identifier: MIT */
/*
 * Reader of the .strobe_blame section (blame_table.h). The section is
 * untrusted text: every unit is parsed in one pass that checks each field
 * before it is used, straight into the table's arrays; a bad unit is
 * rolled back and ends the parse, the units before it stay.
 */
#define _GNU_SOURCE
#include "analysis/blame_table.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/symbols.h"
#include "strobe/strobe.h"

/* The order records come in (a bind belongs to its call). */
enum { R_HEADER, R_FILE, R_FUNC, R_VAR, R_LOC, R_CALL, R_END };

#define MAX_FIELDS 11 /* var: the record's name and ten fields; more are ignored */

struct field {
    const char *s;
    size_t n;
};

struct parser {
    struct strobe__blame_table *t;
    const char *module;
    struct strobe_errbuf *eb;
    size_t off;      /* of the line being parsed */
    char record[48]; /* the line's record as errors name it: "var 7" */
    struct field f[MAX_FIELDS];
    int nf;
    /* the unit being parsed */
    uint32_t *ufile; /* unit file ID -> path index */
    size_t nufile, ufile_cap;
    size_t func_base, var_base;
    int stage;
    bool have_loc, have_call, in_call; /* in_call: the last record a call or bind */
    uint32_t last_file;
    unsigned last_line, last_col;
    uint32_t lcall_file;
    unsigned lcall_line, lcall_col;
};

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct parser *p, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (p->record[0])
        return strobe__error(p->eb, STROBE_ERR_FORMAT, "%s: .strobe_blame offset %zu: %s: %s", p->module,
                             p->off, p->record, what);
    return strobe__error(p->eb, STROBE_ERR_FORMAT, "%s: .strobe_blame offset %zu: %s", p->module, p->off,
                         what);
}

static bool field_is(const struct field *f, const char *s)
{
    return f->n == strlen(s) && memcmp(f->s, s, f->n) == 0;
}

/* A decimal number of at most 32 bits, without sign or leading zero. */
static bool parse_u32(const char *s, size_t n, uint32_t *v)
{
    if (n == 0 || n > 10 || (s[0] == '0' && n > 1))
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    if (x > UINT32_MAX)
        return false;
    *v = (uint32_t)x;
    return true;
}

/* A field shown in a message: printable and short. */
static const char *shown(const struct field *f, char *buf, size_t size)
{
    size_t k = 0;
    for (size_t i = 0; i < f->n && k + 4 < size; i++)
        buf[k++] = (unsigned char)f->s[i] < 0x20 || (unsigned char)f->s[i] >= 0x7f ? '?' : f->s[i];
    if (k + 4 >= size && f->n > k)
        memcpy(buf + k, "...", 3), k += 3;
    buf[k] = 0;
    return buf;
}

static int number(struct parser *p, int i, const char *name, uint32_t *v)
{
    char b[40];
    if (!parse_u32(p->f[i].s, p->f[i].n, v))
        return fail(p, "%s '%s' is not a number of at most 32 bits", name, shown(&p->f[i], b, sizeof b));
    return 0;
}

static int add_bytes(struct strobe__blame_table *t, const char *s, size_t n)
{
    if (strobe__grow((void **)&t->strtab, &t->strtab_cap, t->strtab_len + n, 1))
        return -ENOMEM;
    memcpy(t->strtab + t->strtab_len, s, n);
    t->strtab_len += n;
    return 0;
}

/* Field i unescaped into the strtab; *off its offset. */
static int string(struct parser *p, int i, const char *name, uint32_t *off)
{
    struct strobe__blame_table *t = p->t;
    const struct field *f = &p->f[i];
    if (t->strtab_len + f->n + 1 > UINT32_MAX)
        return fail(p, "%s: the table's strings exceed 4 GB", name);
    size_t start = t->strtab_len;
    for (size_t k = 0; k < f->n; k++) {
        char c = f->s[k];
        if (c == '\\') {
            char e = k + 1 < f->n ? f->s[k + 1] : 0;
            if (e != '\\' && e != 't' && e != 'n') {
                t->strtab_len = start;
                return fail(p, "%s has a bad escape at byte %zu", name, k);
            }
            c = e == 't' ? '\t' : e == 'n' ? '\n' : '\\';
            k++;
        } else if ((unsigned char)c < 0x20) {
            t->strtab_len = start;
            return fail(p, "%s has a control byte 0x%02x at byte %zu", name, (unsigned char)c, k);
        }
        if (add_bytes(t, &c, 1))
            return -ENOMEM;
    }
    if (add_bytes(t, "", 1))
        return -ENOMEM;
    *off = (uint32_t)start;
    return 0;
}

/* Field i, a symbol, as the sampled stacks name functions (symbols.c:
 * C++ names demangled), into the strtab; *off its offset. */
static int symbol(struct parser *p, int i, const char *name, uint32_t *off)
{
    int rc = string(p, i, name, off);
    struct strobe__blame_table *t = p->t;
    if (rc || strncmp(t->strtab + *off, "_Z", 2) != 0)
        return rc;
    char *plain = strobe__readable_name(t->strtab + *off);
    if (!plain)
        return -ENOMEM;
    size_t n = strlen(plain) + 1;
    t->strtab_len = *off; /* the mangled form is not kept */
    rc = t->strtab_len + n > UINT32_MAX ? fail(p, "%s: the table's strings exceed 4 GB", name)
                                        : add_bytes(t, plain, n);
    free(plain);
    return rc;
}

/* A unit file ID field (or "-" when dash_ok: *path STROBE_NONE). */
static int file_ref(struct parser *p, int i, bool dash_ok, uint32_t *path)
{
    uint32_t id;
    if (dash_ok && field_is(&p->f[i], "-")) {
        *path = STROBE_NONE;
        return 0;
    }
    int rc = number(p, i, "FILE", &id);
    if (rc)
        return rc;
    if (id >= p->nufile)
        return fail(p, "FILE %u is not a defined file", id);
    *path = id;
    return 0;
}

static int func_ref(struct parser *p, int i, bool dash_ok, uint32_t *func)
{
    uint32_t id;
    if (dash_ok && field_is(&p->f[i], "-")) {
        *func = STROBE_NONE;
        return 0;
    }
    int rc = number(p, i, "FUNC", &id);
    if (rc)
        return rc;
    if (id >= p->t->nfuncs - p->func_base)
        return fail(p, "FUNC %u is not a defined func", id);
    *func = (uint32_t)(p->func_base + id);
    return 0;
}

/* "-", "ret", "global" (when global_ok) or "pK". */
static int exit_ref(struct parser *p, int i, bool none_ok, int32_t *exit)
{
    const struct field *f = &p->f[i];
    uint32_t k;
    char b[40];
    if (none_ok && field_is(f, "-"))
        *exit = STROBE__BLAME_EXIT_NONE;
    else if (field_is(f, "ret"))
        *exit = STROBE__BLAME_EXIT_RET;
    else if (none_ok && field_is(f, "global"))
        *exit = STROBE__BLAME_EXIT_GLOBAL;
    else if (f->n > 1 && f->s[0] == 'p' && parse_u32(f->s + 1, f->n - 1, &k) && k <= INT32_MAX)
        *exit = (int32_t)k;
    else if (f->n > 2 && f->s[0] == 'p' && f->s[f->n - 1] == '*' && parse_u32(f->s + 1, f->n - 2, &k) &&
             k <= INT32_MAX - 4)
        *exit = STROBE__BLAME_EXIT_THROUGH(k);
    else
        return fail(p, "EXIT '%s' is not %s", shown(f, b, sizeof b),
                    none_ok ? "-, ret, global, pK or pK*" : "ret, pK or pK*");
    return 0;
}

/* A SET field: ascending var IDs of the unit, not empty; appended to the
 * pool (renumbered). */
static int set_ref(struct parser *p, int i, uint32_t *first, uint32_t *n)
{
    struct strobe__blame_table *t = p->t;
    const struct field *f = &p->f[i];
    size_t start = t->nsets, nvars = t->nvars - p->var_base;
    char b[40];
    if (f->n == 0)
        return fail(p, "SET is empty");
    for (size_t k = 0; k <= f->n;) {
        size_t e = k;
        while (e < f->n && f->s[e] != ',')
            e++;
        uint32_t v;
        struct field item = {f->s + k, e - k};
        if (!parse_u32(item.s, item.n, &v)) {
            t->nsets = start;
            return fail(p, "SET item '%s' is not a number of at most 32 bits", shown(&item, b, sizeof b));
        }
        if (v >= nvars) {
            t->nsets = start;
            return fail(p, "SET names var %u, which is not defined", v);
        }
        if (t->nsets > start && t->sets[t->nsets - 1] >= p->var_base + v) {
            t->nsets = start;
            return fail(p, "SET is not ascending at var %u", v);
        }
        if (strobe__grow((void **)&t->sets, &t->sets_cap, t->nsets + 1, sizeof *t->sets))
            return -ENOMEM;
        t->sets[t->nsets++] = (uint32_t)(p->var_base + v);
        k = e + 1;
    }
    if (t->nsets > UINT32_MAX)
        return fail(p, "SET: the table's sets exceed 2^32 entries");
    *first = (uint32_t)start;
    *n = (uint32_t)(t->nsets - start);
    return 0;
}

static int path_id(struct strobe__blame_table *t, uint32_t str, uint32_t *id)
{
    const char *s = t->strtab + str;
    *id = (uint32_t)t->npaths;
    int rc = strobe__keymap_get_or_put(&t->path_ids, s, strlen(s), id);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (strobe__grow((void **)&t->paths, &t->paths_cap, t->npaths + 1, sizeof *t->paths))
        return -ENOMEM;
    t->paths[t->npaths++] = str;
    return 0;
}

/* The ID field 1 of a file/func/var record: the next of its kind. */
static int next_id(struct parser *p, const char *kind, size_t expected)
{
    uint32_t id;
    int rc = number(p, 1, "ID", &id);
    if (rc)
        return rc;
    if (id != expected)
        return fail(p, "ID %u is not the next %s ID (%zu)", id, kind, expected);
    return 0;
}

static int compare_key(uint32_t f1, unsigned l1, unsigned c1, uint32_t f2, unsigned l2, unsigned c2)
{
    if (f1 != f2)
        return f1 < f2 ? -1 : 1;
    if (l1 != l2)
        return l1 < l2 ? -1 : 1;
    return c1 < c2 ? -1 : c1 > c2;
}

/* One record (p->f[0..nf)) of a unit whose header was read. Returns 0,
 * 1 at `end`, or an error. */
static int record(struct parser *p)
{
    static const struct {
        const char *name;
        int stage, fields;
    } kinds[] = {{"file", R_FILE, 3}, {"func", R_FUNC, 5}, {"var", R_VAR, 10}, {"loc", R_LOC, 5},
                 {"call", R_CALL, 7}, {"bind", R_CALL, 3}, {"end", R_END, 1},  {"strobe-blame", R_HEADER, 3}};
    struct strobe__blame_table *t = p->t;
    int k = -1;
    for (int i = 0; i < (int)(sizeof kinds / sizeof kinds[0]); i++)
        if (field_is(&p->f[0], kinds[i].name))
            k = i;
    if (p->f[0].n == 0)
        return fail(p, "a line without a record name");
    if (k < 0) /* a kind of a later minor version */
        return 0;
    char b[40];
    uint32_t id;
    if (k <= 2 && p->nf > 1 && parse_u32(p->f[1].s, p->f[1].n, &id))
        snprintf(p->record, sizeof p->record, "%s %u", kinds[k].name, id);
    else
        snprintf(p->record, sizeof p->record, "%s", kinds[k].name);
    if (kinds[k].stage < p->stage || kinds[k].stage == R_HEADER)
        return fail(p, "out of order (records come as strobe-blame, file, func, var, loc, call, bind, end)");
    bool is_bind = strcmp(kinds[k].name, "bind") == 0;
    if (is_bind && !p->in_call)
        return fail(p, "follows no call");
    p->in_call = false;
    p->stage = kinds[k].stage;
    if (p->nf < kinds[k].fields)
        return fail(p, "%d fields, %s has %d", p->nf - 1, kinds[k].name, kinds[k].fields - 1);
    int rc = 0;
    switch (kinds[k].stage) {
    case R_FILE: {
        uint32_t s, pid;
        if ((rc = next_id(p, "file", p->nufile)) || (rc = string(p, 2, "PATH", &s)) ||
            (rc = path_id(t, s, &pid)))
            return rc;
        if (strobe__grow((void **)&p->ufile, &p->ufile_cap, p->nufile + 1, sizeof *p->ufile))
            return -ENOMEM;
        p->ufile[p->nufile++] = pid;
        return 0;
    }
    case R_FUNC: {
        struct strobe__blame_func fn;
        uint32_t file;
        if ((rc = next_id(p, "func", t->nfuncs - p->func_base)) || (rc = symbol(p, 2, "NAME", &fn.name)) ||
            (rc = file_ref(p, 3, false, &file)) || (rc = number(p, 4, "LINE", &fn.line)))
            return rc;
        fn.path = p->ufile[file];
        if (strobe__grow((void **)&t->funcs, &t->funcs_cap, t->nfuncs + 1, sizeof *t->funcs))
            return -ENOMEM;
        t->funcs[t->nfuncs++] = fn;
        return 0;
    }
    case R_VAR: {
        struct strobe__blame_var v;
        uint32_t file;
        if ((rc = next_id(p, "var", t->nvars - p->var_base)) || (rc = func_ref(p, 2, true, &v.func)))
            return rc;
        v.kind = -1;
        for (int i = 0; i < STROBE__BLAME_NKINDS; i++)
            if (field_is(&p->f[3], strobe__blame_kind_name(i)))
                v.kind = i;
        if (v.kind < 0)
            return fail(p, "KIND '%s' is not a known kind", shown(&p->f[3], b, sizeof b));
        if ((rc = exit_ref(p, 4, true, &v.exit)))
            return rc;
        if (field_is(&p->f[5], "-")) {
            v.parent = STROBE_NONE;
        } else {
            if ((rc = number(p, 5, "PARENT", &v.parent)))
                return rc;
            if (v.parent >= t->nvars - p->var_base)
                return fail(p, "PARENT %u is not an earlier var", v.parent);
            v.parent += (uint32_t)p->var_base;
        }
        if ((rc = string(p, 6, "NAME", &v.name)) || (rc = string(p, 7, "TYPE", &v.type)) ||
            (rc = file_ref(p, 8, true, &file)) || (rc = number(p, 9, "LINE", &v.line)))
            return rc;
        v.path = file == STROBE_NONE ? STROBE_NONE : p->ufile[file];
        if (strobe__grow((void **)&t->vars, &t->vars_cap, t->nvars + 1, sizeof *t->vars))
            return -ENOMEM;
        t->vars[t->nvars++] = v;
        return 0;
    }
    case R_LOC: {
        struct strobe__blame_loc l;
        uint32_t file;
        if ((rc = file_ref(p, 1, false, &file)) || (rc = number(p, 2, "LINE", &l.line)) ||
            (rc = number(p, 3, "COL", &l.col)))
            return rc;
        if (p->have_loc && compare_key(file, l.line, l.col, p->last_file, p->last_line, p->last_col) <= 0)
            return fail(p, "%u:%u:%u is not after the previous loc %u:%u:%u", file, l.line, l.col,
                        p->last_file, p->last_line, p->last_col);
        if ((rc = set_ref(p, 4, &l.set, &l.nset)))
            return rc;
        p->have_loc = true;
        p->last_file = file;
        p->last_line = l.line;
        p->last_col = l.col;
        l.path = p->ufile[file];
        if (strobe__grow((void **)&t->locs, &t->locs_cap, t->nlocs + 1, sizeof *t->locs))
            return -ENOMEM;
        t->locs[t->nlocs++] = l;
        return 0;
    }
    case R_CALL:
        break;
    default: /* end */
        return 1;
    }
    if (is_bind) {
        struct strobe__blame_bind bd;
        struct strobe__blame_call *c = &t->calls[t->ncalls - 1];
        if ((rc = exit_ref(p, 1, false, &bd.exit)))
            return rc;
        for (size_t i = c->first_bind; i < t->nbinds; i++)
            if (t->binds[i].exit == bd.exit)
                return fail(p, "EXIT %s repeats in this call's binds", shown(&p->f[1], b, sizeof b));
        if ((rc = set_ref(p, 2, &bd.set, &bd.nset)))
            return rc;
        if (strobe__grow((void **)&t->binds, &t->binds_cap, t->nbinds + 1, sizeof *t->binds))
            return -ENOMEM;
        t->binds[t->nbinds++] = bd;
        c->nbind++;
        p->in_call = true;
        return 0;
    }
    struct strobe__blame_call c = {.callee = STROBE_NONE};
    uint32_t file;
    if ((rc = file_ref(p, 1, false, &file)) || (rc = number(p, 2, "LINE", &c.line)) ||
        (rc = number(p, 3, "COL", &c.col)) || (rc = func_ref(p, 4, false, &c.func)))
        return rc;
    if (!field_is(&p->f[5], "-") && (rc = symbol(p, 5, "CALLEE", &c.callee)))
        return rc;
    if (field_is(&p->f[6], "spawn"))
        c.spawn = true;
    else if (!field_is(&p->f[6], "call"))
        return fail(p, "FLAGS '%s' is not call or spawn", shown(&p->f[6], b, sizeof b));
    if (p->have_call && compare_key(file, c.line, c.col, p->lcall_file, p->lcall_line, p->lcall_col) < 0)
        return fail(p, "%u:%u:%u is before the previous call %u:%u:%u", file, c.line, c.col, p->lcall_file,
                    p->lcall_line, p->lcall_col);
    p->have_call = true;
    p->lcall_file = file;
    p->lcall_line = c.line;
    p->lcall_col = c.col;
    c.path = p->ufile[file];
    c.first_bind = (uint32_t)t->nbinds;
    if (strobe__grow((void **)&t->calls, &t->calls_cap, t->ncalls + 1, sizeof *t->calls))
        return -ENOMEM;
    t->calls[t->ncalls++] = c;
    p->in_call = true;
    return 0;
}

/* Splits the line [s, s + n) into p->f; fields beyond MAX_FIELDS are
 * ignored (a later minor version's). */
static void split(struct parser *p, const char *s, size_t n)
{
    p->nf = 0;
    size_t k = 0;
    while (p->nf < MAX_FIELDS) {
        size_t e = k;
        while (e < n && s[e] != '\t')
            e++;
        p->f[p->nf++] = (struct field){s + k, e - k};
        if (e >= n)
            break;
        k = e + 1;
    }
}

/* The line at p->off of the section s[0..n): its length without the
 * newline, or fails when it has none. */
static int next_line(struct parser *p, const char *s, size_t n, size_t *len)
{
    const char *nl = memchr(s + p->off, '\n', n - p->off);
    if (!nl)
        return fail(p, "the line does not end with \\n (the section ends before the unit's end)");
    *len = (size_t)(nl - (s + p->off));
    return 0;
}

/* The unit at p->off: parsed into p->t (rolled back on error), or skipped
 * with a warning when of another major version. p->off ends after it. */
static int unit(struct parser *p, const char *s, size_t n)
{
    struct strobe__blame_table *t = p->t;
    size_t len = 0, saved[] = {t->strtab_len, t->nfuncs, t->nvars, t->nsets, t->nlocs, t->ncalls, t->nbinds};
    p->record[0] = 0;
    int rc = next_line(p, s, n, &len);
    if (rc)
        return rc;
    split(p, s + p->off, len);
    uint32_t major, minor;
    snprintf(p->record, sizeof p->record, "strobe-blame");
    if (!field_is(&p->f[0], "strobe-blame")) {
        p->record[0] = 0;
        return fail(p, "a unit begins with strobe-blame");
    }
    if (p->nf < 3)
        return fail(p, "%d fields, strobe-blame has 2", p->nf - 1);
    if ((rc = number(p, 1, "MAJOR", &major)) || (rc = number(p, 2, "MINOR", &minor)))
        return rc;
    size_t start = p->off;
    p->off += len + 1;
    if (major != STROBE__BLAME_MAJOR) {
        /* skipped as a whole: its records are of a shape we do not know */
        while ((rc = next_line(p, s, n, &len)) == 0 && !(len == 3 && memcmp(s + p->off, "end", 3) == 0))
            p->off += len + 1;
        if (rc)
            return rc;
        p->off += len + 1;
        char *w = NULL;
        if (asprintf(&w, "%s: .strobe_blame offset %zu: version %u.%u, this strobe reads %d.x: unit skipped",
                     p->module, start, major, minor, STROBE__BLAME_MAJOR) < 0 ||
            strobe__grow((void **)&t->warnings, &t->warnings_cap, t->nwarnings + 1, sizeof *t->warnings)) {
            free(w);
            return -ENOMEM;
        }
        t->warnings[t->nwarnings++] = w;
        return 0;
    }
    p->nufile = 0;
    p->func_base = t->nfuncs;
    p->var_base = t->nvars;
    p->stage = R_HEADER;
    p->have_loc = p->have_call = p->in_call = false;
    for (;;) {
        p->record[0] = 0;
        if ((rc = next_line(p, s, n, &len)))
            break;
        split(p, s + p->off, len);
        if ((rc = record(p)) < 0)
            break;
        p->off += len + 1;
        if (rc == 1) {
            t->nunits++;
            return 0;
        }
    }
    t->strtab_len = saved[0];
    t->nfuncs = saved[1];
    t->nvars = saved[2];
    t->nsets = saved[3];
    t->nlocs = saved[4];
    t->ncalls = saved[5];
    t->nbinds = saved[6];
    return rc;
}

static int cmp_loc(const void *a, const void *b)
{
    const struct strobe__blame_loc *x = a, *y = b;
    int c = compare_key(x->path, x->line, x->col, y->path, y->line, y->col);
    /* the set index keeps the units' order among equal keys */
    return c ? c : (x->set < y->set ? -1 : x->set > y->set);
}

static int cmp_call(const void *a, const void *b)
{
    const struct strobe__blame_call *x = a, *y = b;
    int c = compare_key(x->path, x->line, x->col, y->path, y->line, y->col);
    return c ? c : (x->first_bind < y->first_bind ? -1 : x->first_bind > y->first_bind);
}

int strobe__blame_table_parse(const void *bytes, size_t n, const char *module,
                              struct strobe__blame_table **out, struct strobe_errbuf *eb)
{
    struct strobe__blame_table *t = calloc(1, sizeof *t);
    *out = NULL;
    if (!t)
        return strobe__error(eb, -ENOMEM, "%s: out of memory", module);
    struct parser p = {.t = t, .module = module, .eb = eb};
    const char *s = bytes;
    int rc = 0;
    while (rc == 0) {
        while (p.off < n && s[p.off] == 0) /* padding between units */
            p.off++;
        if (p.off >= n)
            break;
        rc = unit(&p, s, n);
    }
    free(p.ufile);
    if (rc == -ENOMEM) {
        strobe__blame_table_free(t);
        return strobe__error(eb, -ENOMEM, "%s: out of memory", module);
    }
    /* a call's binds stay where they are: sorting moves the calls only */
    if (t->nlocs)
        qsort(t->locs, t->nlocs, sizeof *t->locs, cmp_loc);
    if (t->ncalls)
        qsort(t->calls, t->ncalls, sizeof *t->calls, cmp_call);
    *out = t;
    return rc;
}

int strobe__blame_table_read(const char *path, struct strobe__blame_table **out, struct strobe_errbuf *eb)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    size_t shstrndx;
    int rc = 0;
    if (elf && elf_kind(elf) == ELF_K_ELF && elf_getshdrstrndx(elf, &shstrndx) == 0) {
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
            GElf_Shdr sh;
            const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
            if (!name || strcmp(name, ".strobe_blame") != 0 || sh.sh_type == SHT_NOBITS)
                continue;
            Elf_Data *data = elf_rawdata(scn, NULL);
            rc = strobe__blame_table_parse(data && data->d_buf ? data->d_buf : "", data ? data->d_size : 0,
                                           path, out, eb);
            break;
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return rc;
}

void strobe__blame_table_free(struct strobe__blame_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nwarnings; i++)
        free(t->warnings[i]);
    free(t->warnings);
    strobe__keymap_free(&t->path_ids);
    free(t->strtab);
    free(t->paths);
    free(t->funcs);
    free(t->vars);
    free(t->sets);
    free(t->locs);
    free(t->calls);
    free(t->binds);
    free(t);
}

uint32_t strobe__blame_table_path(const struct strobe__blame_table *t, const char *path)
{
    uint32_t id;
    return strobe__keymap_get(&t->path_ids, path, strlen(path), &id) ? id : STROBE_NONE;
}

/* The entries of (path, line) in the sorted array base[0..n) of records
 * of `size` bytes that begin with the key (path, line). */
static size_t line_range(const void *base, size_t n, size_t size, uint32_t path, unsigned line, size_t *first)
{
    const char *p = base;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct strobe__blame_loc *k = (const void *)(p + mid * size);
        if (compare_key(k->path, k->line, 0, path, line, 0) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t e = lo;
    for (const struct strobe__blame_loc *k;
         e < n && (k = (const void *)(p + e * size), k->path == path) && k->line == line;)
        e++;
    *first = lo;
    return e - lo;
}

/* line_range reads a call's key through a loc's: they must agree */
_Static_assert(offsetof(struct strobe__blame_loc, path) == offsetof(struct strobe__blame_call, path) &&
                   offsetof(struct strobe__blame_loc, line) == offsetof(struct strobe__blame_call, line),
               "locs and calls begin with the same key");

size_t strobe__blame_table_line_locs(const struct strobe__blame_table *t, uint32_t path, unsigned line,
                                     size_t *first)
{
    return line_range(t->locs, t->nlocs, sizeof *t->locs, path, line, first);
}

size_t strobe__blame_table_line_calls(const struct strobe__blame_table *t, uint32_t path, unsigned line,
                                      size_t *first)
{
    return line_range(t->calls, t->ncalls, sizeof *t->calls, path, line, first);
}

int strobe__u32set_union(uint32_t **set, size_t *n, size_t *cap, const uint32_t *b, size_t nb)
{
    if (strobe__grow((void **)set, cap, *n + nb, sizeof **set))
        return -ENOMEM;
    /* merge from the back, in place */
    uint32_t *a = *set;
    size_t i = *n, j = nb, k = *n + nb;
    while (j > 0) {
        if (i > 0 && a[i - 1] > b[j - 1])
            a[--k] = a[--i];
        else if (i > 0 && a[i - 1] == b[j - 1])
            a[--k] = a[--i], j--;
        else
            a[--k] = b[--j];
    }
    while (i > 0)
        a[--k] = a[--i];
    /* duplicates left a gap at the front */
    if (k)
        memmove(a, a + k, (*n + nb - k) * sizeof *a);
    *n = *n + nb - k;
    return 0;
}

int strobe__blame_table_find_loc(const struct strobe__blame_table *t, uint32_t path, unsigned line,
                                 unsigned col, uint32_t **set, size_t *n, size_t *cap)
{
    size_t first, count = strobe__blame_table_line_locs(t, path, line, &first);
    bool exact = false;
    for (size_t i = first; col && i < first + count; i++)
        exact |= t->locs[i].col == col;
    *n = 0;
    for (size_t i = first; i < first + count; i++) {
        const struct strobe__blame_loc *l = &t->locs[i];
        if ((!exact || l->col == col) && strobe__u32set_union(set, n, cap, t->sets + l->set, l->nset))
            return -ENOMEM;
    }
    return 0;
}

size_t strobe__blame_table_next_call(const struct strobe__blame_table *t, uint32_t path, unsigned line,
                                     unsigned col, const char *callee, size_t after)
{
    size_t first, n = strobe__blame_table_line_calls(t, path, line, &first);
    bool exact = false;
    for (size_t c = first; col && c < first + n; c++)
        exact |= t->calls[c].col == col;
    for (size_t c = after == SIZE_MAX ? first : after + 1; c < first + n; c++) {
        const struct strobe__blame_call *call = &t->calls[c];
        if ((!exact || call->col == col) && call->callee != STROBE_NONE &&
            strcmp(strobe__blame_str(t, call->callee), callee) == 0)
            return c;
    }
    return SIZE_MAX;
}

uint32_t strobe__blame_table_func_at(const struct strobe__blame_table *t, uint32_t path, unsigned line)
{
    uint32_t best = STROBE_NONE;
    for (size_t i = 0; i < t->nfuncs; i++)
        if (t->funcs[i].path == path && t->funcs[i].line <= line &&
            (best == STROBE_NONE || t->funcs[i].line > t->funcs[best].line))
            best = (uint32_t)i;
    return best;
}
