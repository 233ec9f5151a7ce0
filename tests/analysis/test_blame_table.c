/* SPDX-License-Identifier: MIT */
/*
 * The .strobe_blame reader (src/analysis/blame_table.c) on hand-written
 * units (docs/formats/blame-table.md): a good unit parsed exactly, the
 * lookups (column, line union, several units), and every check of the
 * format's "Checks" list, each with its exact one-line error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blame_table.h"
#include "strobe/strobe.h"
#include "test.h"

/* The good unit; '|' stands for TAB. */
static const char *const good[] = {
    "strobe-blame|1|0",                         /* 0 */
    "file|0|/src/fix.c",                        /* 1 */
    "file|1|/src/inc/h.h",                      /* 2 */
    "func|0|fill|0|6",                          /* 3 */
    "func|1|main|0|12",                         /* 4 */
    "var|0|0|pointee|p0|-|dst[]|double|0|6",    /* 5 */
    "var|1|0|local|-|0|k|int|0|8",              /* 6 */
    "var|2|1|local|-|-|h|double *|0|18",        /* 7 */
    "var|3|1|heap|-|2|h[]|double|0|18",         /* 8 */
    "var|4|-|global|global|-|scale|double|-|0", /* 9 */
    "var|5|1|return|ret|-|return|int|0|12",     /* 10 */
    "loc|0|8|0|0,1",                            /* 11 */
    "loc|0|9|5|0",                              /* 12 */
    "loc|0|9|12|0,4",                           /* 13 */
    "loc|0|20|3|3,5",                           /* 14 */
    "loc|1|3|0|4",                              /* 15 */
    "call|0|20|3|1|fill|call",                  /* 16 */
    "bind|p0|3,5",                              /* 17 */
    "call|0|20|3|1|-|call",                     /* 18 */
    "call|0|21|0|1|worker\\tx|spawn",           /* 19 */
    "bind|p1*|2",                               /* 20 */
    "bind|ret|5",                               /* 21 */
    "end",                                      /* 22 */
};
#define NGOOD (sizeof good / sizeof good[0])

/* The good unit with line `at` replaced by `repl` (NULL: removed; at ==
 * NGOOD: repl appended), '|' as TAB; *off: the byte offset of line `at`. */
static char *unit_with(size_t at, const char *repl, size_t *off)
{
    char *s = malloc(4096);
    size_t n = 0;
    *off = 0;
    for (size_t i = 0; i <= NGOOD; i++) {
        const char *l = i == at ? repl : i < NGOOD ? good[i] : NULL;
        if (i == at)
            *off = n;
        if (!l)
            continue;
        for (const char *c = l; *c; c++)
            s[n++] = *c == '|' ? '\t' : *c;
        s[n++] = '\n';
    }
    s[n] = 0;
    return s;
}

static struct strobe__blame_table *parse_ok(const char *text, size_t n)
{
    struct strobe__blame_table *t;
    struct strobe_errbuf eb = {""};
    int rc = strobe__blame_table_parse(text, n, "./app", &t, &eb);
    if (rc)
        STROBE_FAIL("parse: %d %s", rc, eb.msg);
    return t;
}

static void check_set(const struct strobe__blame_table *t, const char *path, unsigned line, unsigned col,
                      const char *want)
{
    uint32_t *set = NULL;
    size_t n = 0, cap = 0;
    CHECK_EQ_INT(
        strobe__blame_table_find_loc(t, strobe__blame_table_path(t, path), line, col, &set, &n, &cap), 0);
    char got[256] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%u", i ? "," : "", set[i]);
    free(set);
    CHECK_STR_EQ(got, want);
}

STROBE_TEST(good_unit_exact)
{
    size_t off;
    char *text = unit_with(NGOOD, NULL, &off);
    struct strobe__blame_table *t = parse_ok(text, strlen(text));
    CHECK_EQ_U64(t->nunits, 1);
    CHECK_EQ_U64(t->npaths, 2);
    CHECK_STR_EQ(strobe__blame_str(t, t->paths[0]), "/src/fix.c");
    CHECK_STR_EQ(strobe__blame_str(t, t->paths[1]), "/src/inc/h.h");
    CHECK_EQ_U64(t->nfuncs, 2);
    CHECK_STR_EQ(strobe__blame_str(t, t->funcs[1].name), "main");
    CHECK_EQ_INT(t->funcs[1].path, 0);
    CHECK_EQ_INT(t->funcs[1].line, 12);
    CHECK_EQ_U64(t->nvars, 6);
    const struct strobe__blame_var *v = &t->vars[0];
    CHECK(v->func == 0 && v->kind == STROBE__BLAME_POINTEE && v->exit == 0 && v->parent == STROBE_NONE);
    CHECK_STR_EQ(strobe__blame_str(t, v->name), "dst[]");
    v = &t->vars[3];
    CHECK(v->func == 1 && v->kind == STROBE__BLAME_HEAP && v->exit == STROBE__BLAME_EXIT_NONE &&
          v->parent == 2);
    CHECK(v->path == 0 && v->line == 18);
    CHECK_STR_EQ(strobe__blame_str(t, t->vars[2].type), "double *");
    v = &t->vars[4];
    CHECK(v->func == STROBE_NONE && v->kind == STROBE__BLAME_GLOBAL && v->exit == STROBE__BLAME_EXIT_GLOBAL);
    CHECK(v->path == STROBE_NONE && v->line == 0);
    CHECK_EQ_INT(t->vars[5].exit, STROBE__BLAME_EXIT_RET);
    CHECK_EQ_U64(t->nlocs, 5);
    CHECK_EQ_U64(t->ncalls, 3);
    const struct strobe__blame_call *c = &t->calls[0];
    CHECK(c->path == 0 && c->line == 20 && c->col == 3 && c->func == 1 && !c->spawn && c->nbind == 1);
    CHECK_STR_EQ(strobe__blame_str(t, c->callee), "fill");
    CHECK_EQ_INT(t->binds[c->first_bind].exit, 0);
    CHECK_EQ_INT(t->binds[c->first_bind].nset, 2);
    CHECK_EQ_INT(t->calls[1].callee, STROBE_NONE);
    c = &t->calls[2];
    CHECK(c->spawn && c->nbind == 2 && t->binds[c->first_bind + 1].exit == STROBE__BLAME_EXIT_RET);
    CHECK_EQ_INT(t->binds[c->first_bind].exit, STROBE__BLAME_EXIT_THROUGH(1));
    CHECK_EQ_INT(STROBE__BLAME_EXIT_THROUGH_K(t->binds[c->first_bind].exit), 1);
    CHECK_STR_EQ(strobe__blame_str(t, c->callee), "worker\tx");
    /* lookups: an exact column, a column the line lacks, col 0 */
    check_set(t, "/src/fix.c", 9, 5, "0");
    check_set(t, "/src/fix.c", 9, 12, "0,4");
    check_set(t, "/src/fix.c", 9, 7, "0,4");
    check_set(t, "/src/fix.c", 9, 0, "0,4");
    check_set(t, "/src/fix.c", 10, 0, "");
    check_set(t, "/src/inc/h.h", 3, 0, "4");
    CHECK_EQ_INT(strobe__blame_table_path(t, "/src/none.c"), STROBE_NONE);
    CHECK_EQ_INT(strobe__blame_table_func_at(t, 0, 11), 0);
    CHECK_EQ_INT(strobe__blame_table_func_at(t, 0, 12), 1);
    CHECK_EQ_INT(strobe__blame_table_func_at(t, 0, 5), STROBE_NONE);
    size_t first;
    CHECK_EQ_U64(strobe__blame_table_line_calls(t, 0, 20, &first), 2);
    CHECK_EQ_U64(first, 0);
    /* calls by location and callee: the indirect one never matches */
    CHECK_EQ_U64(strobe__blame_table_next_call(t, 0, 20, 3, "fill", SIZE_MAX), 0);
    CHECK_EQ_U64(strobe__blame_table_next_call(t, 0, 20, 3, "fill", 0), SIZE_MAX);
    CHECK_EQ_U64(strobe__blame_table_next_call(t, 0, 20, 0, "fill", SIZE_MAX), 0);
    CHECK_EQ_U64(strobe__blame_table_next_call(t, 0, 20, 9, "fill", SIZE_MAX), 0);
    CHECK_EQ_U64(strobe__blame_table_next_call(t, 0, 20, 3, "main", SIZE_MAX), SIZE_MAX);
    CHECK_EQ_U64(strobe__blame_table_next_call(t, 0, 21, 0, "worker\tx", SIZE_MAX), 2);
    CHECK_EQ_U64(strobe__blame_table_next_call(t, 1, 20, 3, "fill", SIZE_MAX), SIZE_MAX);
    strobe__blame_table_free(t);
    free(text);
}

/* Two units (NUL padding between them) holding the same header line:
 * IDs renumbered, the lookup the union. */
STROBE_TEST(units_merged)
{
    size_t off;
    char *a = unit_with(NGOOD, NULL, &off);
    const char *b = "strobe-blame\t1\t3\tfuture\nfile\t0\t/src/inc/h.h\nfunc\t0\tg\t0\t1\t\n"
                    "var\t0\t0\tlocal\t-\t-\tz\tint\t0\t2\tmore\nnewkind\t1\t2\nloc\t0\t3\t0\t0\nend\n";
    char buf[4096];
    size_t la = strlen(a), lb = strlen(b);
    memcpy(buf, a, la);
    memset(buf + la, 0, 5);
    memcpy(buf + la + 5, b, lb);
    struct strobe__blame_table *t = parse_ok(buf, la + 5 + lb);
    CHECK_EQ_U64(t->nunits, 2);
    CHECK_EQ_U64(t->npaths, 2);
    CHECK_EQ_U64(t->nvars, 7);
    CHECK_EQ_INT(t->vars[6].func, 2);
    check_set(t, "/src/inc/h.h", 3, 0, "4,6");
    strobe__blame_table_free(t);
    free(a);
}

/* Line `at` replaced by `repl`: the parse refuses the unit with
 * "./app: .strobe_blame offset N: <want>", N the line's offset. */
static void refused(size_t at, const char *repl, const char *want)
{
    size_t off;
    char *text = unit_with(at, repl, &off);
    struct strobe__blame_table *t;
    struct strobe_errbuf eb = {""};
    CHECK_EQ_INT(strobe__blame_table_parse(text, strlen(text), "./app", &t, &eb), STROBE_ERR_FORMAT);
    CHECK(t != NULL && t->nunits == 0 && t->nvars == 0 && t->nlocs == 0);
    char full[600];
    snprintf(full, sizeof full, "./app: .strobe_blame offset %zu: %s", off, want);
    CHECK_STR_EQ(eb.msg, full);
    strobe__blame_table_free(t);
    free(text);
}

STROBE_TEST(checks_fields)
{
    refused(4, "func|1|main|0", "func 1: 3 fields, func has 4");
    refused(4, "func|1|main|0|4294967296", "func 1: LINE '4294967296' is not a number of at most 32 bits");
    refused(11, "loc|0|08|0|0,1", "loc: LINE '08' is not a number of at most 32 bits");
    refused(11, "loc|0|-8|0|0,1", "loc: LINE '-8' is not a number of at most 32 bits");
    refused(6, "var|1|0|static|-|0|k|int|0|8", "var 1: KIND 'static' is not a known kind");
    refused(6, "var|1|0|local|q0|0|k|int|0|8", "var 1: EXIT 'q0' is not -, ret, global, pK or pK*");
    refused(17, "bind|global|3,5", "bind: EXIT 'global' is not ret, pK or pK*");
    refused(16, "call|0|20|3|1|fill|fork", "call: FLAGS 'fork' is not call or spawn");
    refused(1, "file|0|/src/f\\q.c", "file 0: PATH has a bad escape at byte 6");
    refused(1, "file|0|/src/f.c\\", "file 0: PATH has a bad escape at byte 8");
    refused(7, "var|2|1|local|-|-|h|double\r*|0|18", "var 2: TYPE has a control byte 0x0d at byte 6");
    refused(11, "", "a line without a record name");
}

STROBE_TEST(checks_ids)
{
    refused(4, "func|2|main|0|12", "func 2: ID 2 is not the next func ID (1)");
    refused(2, "file|0|/src/inc/h.h", "file 0: ID 0 is not the next file ID (1)");
    refused(4, "func|1|main|2|12", "func 1: FILE 2 is not a defined file");
    refused(6, "var|1|2|local|-|0|k|int|0|8", "var 1: FUNC 2 is not a defined func");
    refused(6, "var|1|0|local|-|1|k|int|0|8", "var 1: PARENT 1 is not an earlier var");
    refused(16, "call|0|20|3|2|fill|call", "call: FUNC 2 is not a defined func");
}

STROBE_TEST(checks_sets)
{
    refused(11, "loc|0|8|0|", "loc: SET is empty");
    refused(11, "loc|0|8|0|1,0", "loc: SET is not ascending at var 0");
    refused(11, "loc|0|8|0|1,1", "loc: SET is not ascending at var 1");
    refused(11, "loc|0|8|0|0,6", "loc: SET names var 6, which is not defined");
    refused(11, "loc|0|8|0|0,,1", "loc: SET item '' is not a number of at most 32 bits");
    refused(17, "bind|p0|", "bind: SET is empty");
}

STROBE_TEST(checks_order)
{
    refused(12, "loc|0|8|0|0", "loc: 0:8:0 is not after the previous loc 0:8:0");
    refused(13, "loc|0|9|4|0", "loc: 0:9:4 is not after the previous loc 0:9:5");
    refused(18, "call|0|19|0|1|-|call", "call: 0:19:0 is before the previous call 0:20:3");
    refused(15, "bind|p0|3", "bind: follows no call");
    refused(21, "bind|p1*|5", "bind: EXIT p1* repeats in this call's binds");
    refused(11, "file|2|/src/x.c",
            "file 2: out of order (records come as strobe-blame, file, func, var, loc, "
            "call, bind, end)");
    refused(22, "strobe-blame|1|0",
            "strobe-blame: out of order (records come as strobe-blame, file, func, var, "
            "loc, call, bind, end)");
    refused(0, "file|0|/src/fix.c", "a unit begins with strobe-blame");
    refused(0, "strobe-blame|x|0", "strobe-blame: MAJOR 'x' is not a number of at most 32 bits");
    /* the section ends before `end`, or in the middle of a line */
    refused(22, NULL, "the line does not end with \\n (the section ends before the unit's end)");
    size_t off;
    char *text = unit_with(NGOOD, NULL, &off);
    struct strobe__blame_table *t;
    struct strobe_errbuf eb = {""};
    CHECK_EQ_INT(strobe__blame_table_parse(text, strlen(text) - 1, "./app", &t, &eb), STROBE_ERR_FORMAT);
    char want[200];
    snprintf(want, sizeof want,
             "./app: .strobe_blame offset %zu: the line does not end with \\n (the section ends before the "
             "unit's end)",
             strlen(text) - 4);
    CHECK_STR_EQ(eb.msg, want);
    strobe__blame_table_free(t);
    free(text);
}

/* A bad unit after a good one: the good one stays; a unit of another
 * major version is skipped with one warning. */
STROBE_TEST(bad_unit_keeps_earlier)
{
    size_t off;
    char *a = unit_with(NGOOD, NULL, &off);
    char buf[8192];
    const char *v2 = "strobe-blame\t2\t0\nthing\t1\nend\n";
    const char *bad = "strobe-blame\t1\t0\nfile\t1\t/x.c\nend\n";
    size_t la = strlen(a);
    snprintf(buf, sizeof buf, "%s%s%s", a, v2, bad);
    struct strobe__blame_table *t;
    struct strobe_errbuf eb = {""};
    CHECK_EQ_INT(strobe__blame_table_parse(buf, strlen(buf), "./app", &t, &eb), STROBE_ERR_FORMAT);
    CHECK_EQ_U64(t->nunits, 1);
    CHECK_EQ_U64(t->nvars, 6);
    CHECK_EQ_U64(t->nwarnings, 1);
    char want[200];
    snprintf(want, sizeof want,
             "./app: .strobe_blame offset %zu: version 2.0, this strobe reads 1.x: unit skipped", la);
    CHECK_STR_EQ(t->warnings[0], want);
    snprintf(want, sizeof want, "./app: .strobe_blame offset %zu: file 1: ID 1 is not the next file ID (0)",
             la + strlen(v2) + 17);
    CHECK_STR_EQ(eb.msg, want);
    check_set(t, "/src/fix.c", 20, 0, "3,5");
    strobe__blame_table_free(t);
    free(a);
}

STROBE_TEST(set_union)
{
    uint32_t *s = NULL;
    size_t n = 0, cap = 0;
    const uint32_t a[] = {1, 4, 9}, b[] = {0, 4, 5, 10}, c[] = {9};
    CHECK_EQ_INT(strobe__u32set_union(&s, &n, &cap, a, 3), 0);
    CHECK_EQ_INT(strobe__u32set_union(&s, &n, &cap, b, 4), 0);
    CHECK_EQ_INT(strobe__u32set_union(&s, &n, &cap, c, 1), 0);
    CHECK_EQ_U64(n, 6);
    const uint32_t want[] = {0, 1, 4, 5, 9, 10};
    for (size_t i = 0; i < 6; i++)
        CHECK_EQ_INT(s[i], want[i]);
    free(s);
}

/* An ELF file without the section is no table; with it, its units. */
STROBE_TEST(read_elf)
{
    const char *dir = strobe_test_tmpdir("blame_table_read_elf");
    size_t off;
    char *text = unit_with(NGOOD, NULL, &off);
    char path[4200];
    snprintf(path, sizeof path, "%s/unit.txt", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
    free(text);
    char *out = strobe_test_ok_in(dir, "printf 'int main(void){return 0;}' > p.c && cc -o p p.c && cp p q && "
                                       "objcopy --add-section .strobe_blame=unit.txt "
                                       "--set-section-flags .strobe_blame=contents,readonly q");
    free(out);
    struct strobe__blame_table *t;
    struct strobe_errbuf eb = {""};
    snprintf(path, sizeof path, "%s/p", dir);
    CHECK_EQ_INT(strobe__blame_table_read(path, &t, &eb), 0);
    CHECK(t == NULL);
    snprintf(path, sizeof path, "%s/q", dir);
    CHECK_EQ_INT(strobe__blame_table_read(path, &t, &eb), 0);
    CHECK(t != NULL && t->nunits == 1 && t->nvars == 6);
    strobe__blame_table_free(t);
    snprintf(path, sizeof path, "%s/unit.txt", dir);
    CHECK_EQ_INT(strobe__blame_table_read(path, &t, &eb), 0);
    CHECK(t == NULL);
}

STROBE_TEST_MAIN(STROBE_CASE(good_unit_exact), STROBE_CASE(units_merged), STROBE_CASE(checks_fields),
                 STROBE_CASE(checks_ids), STROBE_CASE(checks_sets), STROBE_CASE(checks_order),
                 STROBE_CASE(bad_unit_keeps_earlier), STROBE_CASE(set_union), STROBE_CASE(read_elf))
