/* SPDX-License-Identifier: MIT */
/*
 * The file being instrumented (source.h): libclang's parse, the directives
 * found in its tokens, its statements' and functions' extents, and the
 * rewrite: the prologue, then the file's own bytes with the edits.
 */
#ifndef _GNU_SOURCE /* vasprintf */
#define _GNU_SOURCE
#endif
#include "instrument/source.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/keymap.h" /* strobe__grow */
#include "export/output.h"
#include "strobe/strobe.h"

struct strobe__inst_edit {
    unsigned at, skip;
    enum strobe__inst_side side;
    unsigned depth;
    char *text;
};

struct strobe__inst_desc {
    char *name;
    unsigned line;
};

struct strobe__inst_func {
    unsigned start, end;
    char *name;
};

/* ---- tokens and directives ---------------------------------------------- */

static unsigned tok_offset(struct strobe__inst_src *s, CXToken t, unsigned *line)
{
    unsigned l, c, o;
    clang_getSpellingLocation(clang_getTokenLocation(s->tu, t), NULL, &l, &c, &o);
    if (line)
        *line = l;
    return o;
}

/* The token's bytes end (its offset plus its spelling's length). */
static unsigned tok_end(struct strobe__inst_src *s, CXToken t)
{
    unsigned o;
    clang_getSpellingLocation(clang_getRangeEnd(clang_getTokenExtent(s->tu, t)), NULL, NULL, NULL, &o);
    return o;
}

static bool tok_is(struct strobe__inst_src *s, CXToken t, const char *word)
{
    CXString sp = clang_getTokenSpelling(s->tu, t);
    bool eq = strcmp(clang_getCString(sp), word) == 0;
    clang_disposeString(sp);
    return eq;
}

int strobe__inst_fail(struct strobe__inst_src *s, unsigned line, const char *fmt, ...)
{
    if (s->rc == 0) {
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        s->rc = strobe__error(s->eb, STROBE_ERR_SYNTAX, "%s:%u: %s", s->path, line, what);
    }
    return s->rc;
}

/* The first token at or after byte `off` (tokens are in file order). */
static unsigned first_token_at(struct strobe__inst_src *s, unsigned off)
{
    unsigned lo = 0, hi = s->ntoks;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (tok_offset(s, s->toks[mid], NULL) < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The family of a directive whose first word is `word`, or -1. */
static int family_of(const char *word, size_t len)
{
    static const struct {
        const char *word;
        enum strobe__inst_family family;
    } families[] = {{"strobe", STROBE__INST_STROBE},
                    {"omp", STROBE__INST_OMP},
                    {"tm_atomic", STROBE__INST_TM},
                    {"speculative", STROBE__INST_SPECULATIVE}};
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (strlen(families[i].word) == len && memcmp(families[i].word, word, len) == 0)
            return (int)families[i].family;
    return -1;
}

/* Adds p, its words without trailing blanks (a _Pragma's string may end
 * in some), so that every reader compares them alike. */
static int add_pragma(struct strobe__inst_src *s, const struct strobe__inst_pragma *p)
{
    if (strobe__grow((void **)&s->pragmas, &s->pcap, s->npragmas + 1, sizeof *s->pragmas))
        return s->rc = -ENOMEM;
    struct strobe__inst_pragma *q = &s->pragmas[s->npragmas++];
    *q = *p;
    size_t len = strlen(q->text);
    while (len && (q->text[len - 1] == ' ' || q->text[len - 1] == '\t'))
        q->text[--len] = 0;
    return 0;
}

/* The words of tokens [i, j) with one space between them. */
static void join_tokens(struct strobe__inst_src *s, unsigned i, unsigned j, char *out, size_t len)
{
    size_t k = 0;
    out[0] = 0;
    for (; i < j && k + 1 < len; i++) {
        if (clang_getTokenKind(s->toks[i]) == CXToken_Comment)
            continue;
        CXString sp = clang_getTokenSpelling(s->tu, s->toks[i]);
        k += (size_t)snprintf(out + k, len - k, "%s%s", k ? " " : "", clang_getCString(sp));
        clang_disposeString(sp);
    }
}

/* A `_Pragma("...")` string's contents, unescaped (C11 6.10.9). */
static void unstring(const char *lit, size_t n, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 1; i + 1 < n && k + 1 < len; i++) {
        if (lit[i] == '\\' && i + 2 < n)
            i++;
        out[k++] = lit[i];
    }
    out[k] = 0;
}

/* Whether token j is on the line of token j - 1, or on the next one after
 * a backslash that continues it. */
static bool same_directive(struct strobe__inst_src *s, unsigned j)
{
    unsigned from = tok_end(s, s->toks[j - 1]), to = tok_offset(s, s->toks[j], NULL);
    bool continued = false;
    for (unsigned i = from; i < to; i++) {
        if (s->buf[i] == '\n') {
            if (!continued)
                return false;
            continued = false;
        } else if (s->buf[i] == '\\') {
            continued = true;
        } else if (s->buf[i] != ' ' && s->buf[i] != '\t' && s->buf[i] != '\r') {
            continued = false;
        }
    }
    return true;
}

/* Finds `#pragma FAMILY ...` lines and `_Pragma("FAMILY ...")`. */
static int find_pragmas(struct strobe__inst_src *s)
{
    for (unsigned i = 0; i < s->ntoks && !s->rc; i++) {
        CXToken t = s->toks[i];
        unsigned line, prev_line = 0;
        unsigned off = tok_offset(s, t, &line);
        if (i)
            tok_offset(s, s->toks[i - 1], &prev_line);
        if (clang_getTokenKind(t) == CXToken_Punctuation && tok_is(s, t, "#") &&
            (i == 0 || prev_line < line)) {
            /* a directive, to its line's end: a _Pragma in a #define is
             * the macro's, not one here */
            unsigned j = i + 1;
            while (j < s->ntoks && same_directive(s, j))
                j++;
            if (j > i + 2 && tok_is(s, s->toks[i + 1], "pragma")) {
                CXString w = clang_getTokenSpelling(s->tu, s->toks[i + 2]);
                const char *word = clang_getCString(w);
                int fam = family_of(word, strlen(word));
                clang_disposeString(w);
                if (fam >= 0) {
                    struct strobe__inst_pragma p = {
                        .off = off, .end = tok_end(s, s->toks[j - 1]), .line = line};
                    p.family = (enum strobe__inst_family)fam;
                    join_tokens(s, i + 3, j, p.text, sizeof p.text);
                    add_pragma(s, &p);
                }
            }
            i = j - 1;
        } else if (clang_getTokenKind(t) == CXToken_Identifier && tok_is(s, t, "_Pragma") &&
                   i + 3 < s->ntoks && tok_is(s, s->toks[i + 1], "(") &&
                   clang_getTokenKind(s->toks[i + 2]) == CXToken_Literal && tok_is(s, s->toks[i + 3], ")")) {
            CXString sp = clang_getTokenSpelling(s->tu, s->toks[i + 2]);
            const char *lit = clang_getCString(sp);
            size_t n = strlen(lit);
            char text[STROBE__INST_TEXT_MAX];
            if (n >= 2 && lit[0] == '"' && lit[n - 1] == '"') {
                unstring(lit, n, text, sizeof text);
                const char *w = text + strspn(text, " \t");
                size_t wl = strcspn(w, " \t");
                int fam = family_of(w, wl);
                if (fam >= 0) {
                    struct strobe__inst_pragma p = {
                        .off = off, .end = tok_end(s, s->toks[i + 3]), .line = line};
                    p.family = (enum strobe__inst_family)fam;
                    snprintf(p.text, sizeof p.text, "%s", w + wl + strspn(w + wl, " \t"));
                    add_pragma(s, &p);
                    i += 3;
                }
            }
            clang_disposeString(sp);
        }
    }
    return s->rc;
}

/* A directive made by a macro: `#define PAR _Pragma("omp parallel")` used
 * as `PAR`, or `#define PRAGMA(x) _Pragma(#x)` used as `PRAGMA(omp
 * parallel)`: the expansion [off, end) is replaced like the directive. A
 * macro whose body holds more than the _Pragma is left as it is
 * (docs/instrument.md). */
static enum CXChildVisitResult macro_pragma(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    struct strobe__inst_src *s = data;
    if (clang_getCursorKind(c) != CXCursor_MacroExpansion)
        return CXChildVisit_Continue;
    CXSourceRange r = clang_getCursorExtent(c);
    CXFile f;
    unsigned line, off, end;
    clang_getSpellingLocation(clang_getRangeStart(r), &f, &line, NULL, &off);
    clang_getSpellingLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &end);
    if (!f || !clang_File_isEqual(f, s->file))
        return CXChildVisit_Continue;
    CXCursor def = clang_getCursorReferenced(c);
    if (clang_Cursor_isNull(def))
        return CXChildVisit_Continue;
    CXToken *dt;
    unsigned n;
    clang_tokenize(s->tu, clang_getCursorExtent(def), &dt, &n);
    /* the body: after the name, and after the parameter list */
    unsigned b = 1;
    bool fn = clang_Cursor_isMacroFunctionLike(def);
    if (fn)
        while (b < n && !tok_is(s, dt[b++], ")"))
            ;
    struct strobe__inst_pragma p = {.off = off, .end = end, .line = line};
    char text[STROBE__INST_TEXT_MAX] = "";
    if (n == b + 4 && tok_is(s, dt[b], "_Pragma") && tok_is(s, dt[b + 1], "(") && tok_is(s, dt[b + 3], ")") &&
        clang_getTokenKind(dt[b + 2]) == CXToken_Literal) {
        CXString sp = clang_getTokenSpelling(s->tu, dt[b + 2]);
        const char *lit = clang_getCString(sp);
        if (lit[0] == '"')
            unstring(lit, strlen(lit), text, sizeof text);
        clang_disposeString(sp);
    } else if (fn && n == b + 5 && tok_is(s, dt[b], "_Pragma") && tok_is(s, dt[b + 1], "(") &&
               tok_is(s, dt[b + 2], "#") && tok_is(s, dt[b + 4], ")")) {
        /* _Pragma(#x): the argument's words */
        unsigned i = first_token_at(s, off), j;
        while (i < s->ntoks && !tok_is(s, s->toks[i], "("))
            i++;
        for (j = i + 1; j < s->ntoks && tok_offset(s, s->toks[j], NULL) < end; j++)
            ;
        if (j > i + 1)
            join_tokens(s, i + 1, j - 1, text, sizeof text);
    }
    clang_disposeTokens(s->tu, dt, n);
    const char *w = text + strspn(text, " \t");
    size_t wl = strcspn(w, " \t");
    int fam = family_of(w, wl);
    if (fam >= 0) {
        p.family = (enum strobe__inst_family)fam;
        snprintf(p.text, sizeof p.text, "%s", w + wl + strspn(w + wl, " \t"));
        add_pragma(s, &p);
    }
    return s->rc ? CXChildVisit_Break : CXChildVisit_Continue;
}

static int cmp_pragma(const void *a, const void *b)
{
    const struct strobe__inst_pragma *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* ---- statements and functions ------------------------------------------- */

static unsigned cursor_offset(CXSourceLocation loc)
{
    unsigned o;
    clang_getSpellingLocation(loc, NULL, NULL, NULL, &o);
    return o;
}

static bool in_main_file(struct strobe__inst_src *s, CXCursor c)
{
    CXFile f;
    clang_getSpellingLocation(clang_getRangeStart(clang_getCursorExtent(c)), &f, NULL, NULL, NULL);
    return f && clang_File_isEqual(f, s->file);
}

/* Records a call of a function of s->watch; true on error. */
static bool watch_call(struct strobe__inst_src *s, CXCursor c, unsigned start, unsigned end)
{
    CXString n = clang_getCursorSpelling(c);
    const char *name = clang_getCString(n);
    size_t i = 0;
    while (s->watch[i] && strcmp(s->watch[i], name) != 0)
        i++;
    clang_disposeString(n);
    if (!s->watch[i])
        return false;
    if (strobe__grow((void **)&s->calls, &s->ccap, s->ncalls + 1, sizeof *s->calls)) {
        s->rc = -ENOMEM;
        return true;
    }
    unsigned line;
    clang_getSpellingLocation(clang_getCursorLocation(c), NULL, &line, NULL, NULL);
    s->calls[s->ncalls++] = (struct strobe__inst_call){start, end, line, i};
    return false;
}

/* Every statement and expression of the main file, and its function
 * definitions: a directive's statement is the longest that begins first
 * after it. */
static enum CXChildVisitResult collect(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    struct strobe__inst_src *s = data;
    if (!in_main_file(s, c))
        return CXChildVisit_Continue;
    enum CXCursorKind k = clang_getCursorKind(c);
    CXSourceRange r = clang_getCursorExtent(c);
    unsigned start = cursor_offset(clang_getRangeStart(r)), end = cursor_offset(clang_getRangeEnd(r));
    if (k == CXCursor_FunctionDecl && clang_isCursorDefinition(c)) {
        if (strobe__grow((void **)&s->funcs, &s->fcap, s->nfuncs + 1, sizeof *s->funcs)) {
            s->rc = -ENOMEM;
            return CXChildVisit_Break;
        }
        CXString n = clang_getCursorSpelling(c);
        s->funcs[s->nfuncs++] = (struct strobe__inst_func){start, end, strdup(clang_getCString(n))};
        clang_disposeString(n);
    } else if (clang_isStatement(k) || clang_isExpression(k)) {
        if (k == CXCursor_CallExpr && s->watch && watch_call(s, c, start, end))
            return CXChildVisit_Break;
        if (strobe__grow((void **)&s->stmts, &s->scap, s->nstmts + 1, sizeof *s->stmts)) {
            s->rc = -ENOMEM;
            return CXChildVisit_Break;
        }
        s->stmts[s->nstmts++] = (struct strobe__inst_span){start, end};
    }
    return CXChildVisit_Recurse;
}

static int cmp_span(const void *a, const void *b)
{
    const struct strobe__inst_span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end;
}

/* The end of a statement whose extent ends at `end`: libclang's extent
 * of a statement that ends in an expression stops before its `;`. */
static unsigned stmt_end(struct strobe__inst_src *s, unsigned end)
{
    if (end > 0 && (s->buf[end - 1] == '}' || s->buf[end - 1] == ';'))
        return end;
    unsigned lo = first_token_at(s, end);
    while (lo < s->ntoks && clang_getTokenKind(s->toks[lo]) == CXToken_Comment)
        lo++;
    return lo < s->ntoks && tok_is(s, s->toks[lo], ";") ? tok_offset(s, s->toks[lo], NULL) + 1 : end;
}

const struct strobe__inst_span *strobe__inst_stmt_after(struct strobe__inst_src *s, unsigned off,
                                                        struct strobe__inst_span *out)
{
    size_t lo = 0, hi = s->nstmts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->stmts[mid].start < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == s->nstmts)
        return NULL;
    /* a statement of the same block, not the next one after the block's
     * end: nothing but comments and directives lie between */
    unsigned t = first_token_at(s, off);
    for (; t < s->ntoks && tok_offset(s, s->toks[t], NULL) < s->stmts[lo].start; t++)
        if (clang_getTokenKind(s->toks[t]) == CXToken_Punctuation && tok_is(s, s->toks[t], "}"))
            return NULL;
    out->start = s->stmts[lo].start;
    out->end = stmt_end(s, s->stmts[lo].end);
    return out;
}

bool strobe__inst_excluded(const struct strobe__inst_src *s, unsigned off)
{
    bool zone = false;
    for (size_t i = 0; i < s->npragmas && s->pragmas[i].off < off; i++)
        if (s->pragmas[i].family == STROBE__INST_STROBE &&
            (strcmp(s->pragmas[i].text, "off") == 0 || strcmp(s->pragmas[i].text, "on") == 0))
            zone = s->pragmas[i].text[1] == 'f';
    return zone;
}

unsigned strobe__inst_for_header(struct strobe__inst_src *s, unsigned t)
{
    if (!strobe__inst_token_is(s, t, "for") || !strobe__inst_token_is(s, t + 1, "("))
        return 0;
    unsigned depth = 0;
    for (t += 1; t < s->ntoks; t++) {
        if (strobe__inst_token_is(s, t, "("))
            depth++;
        else if (strobe__inst_token_is(s, t, ")") && --depth == 0)
            return t;
    }
    return 0;
}

const char *strobe__inst_function_at(const struct strobe__inst_src *s, unsigned off)
{
    for (size_t i = 0; i < s->nfuncs; i++)
        if (s->funcs[i].start <= off && off < s->funcs[i].end)
            return s->funcs[i].name ? s->funcs[i].name : "";
    return "";
}

unsigned strobe__inst_function_start(const struct strobe__inst_src *s, unsigned off)
{
    for (size_t i = 0; i < s->nfuncs; i++)
        if (s->funcs[i].start <= off && off < s->funcs[i].end)
            return s->funcs[i].start;
    return 0;
}

unsigned strobe__inst_token_at(struct strobe__inst_src *s, unsigned off)
{
    return first_token_at(s, off);
}

unsigned strobe__inst_token_start(struct strobe__inst_src *s, unsigned i)
{
    return tok_offset(s, s->toks[i], NULL);
}

unsigned strobe__inst_token_end(struct strobe__inst_src *s, unsigned i)
{
    return tok_end(s, s->toks[i]);
}

bool strobe__inst_token_is(struct strobe__inst_src *s, unsigned i, const char *word)
{
    return i < s->ntoks && clang_getTokenKind(s->toks[i]) != CXToken_Comment && tok_is(s, s->toks[i], word);
}

/* ---- edits and descriptors ---------------------------------------------- */

unsigned strobe__inst_region(struct strobe__inst_src *s, const char *name, unsigned line)
{
    if (strobe__grow((void **)&s->descs, &s->dcap, s->ndescs + 1, sizeof *s->descs)) {
        s->rc = -ENOMEM;
        return 0;
    }
    char *n = strdup(name);
    if (!n) {
        s->rc = -ENOMEM;
        return 0;
    }
    s->descs[s->ndescs++] = (struct strobe__inst_desc){n, line};
    return (unsigned)s->ndescs;
}

int strobe__inst_edit(struct strobe__inst_src *s, unsigned at, unsigned skip, enum strobe__inst_side side,
                      unsigned depth, const char *fmt, ...)
{
    if (strobe__grow((void **)&s->edits, &s->ecap, s->nedits + 1, sizeof *s->edits))
        return s->rc = -ENOMEM;
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return s->rc = -ENOMEM;
    s->edits[s->nedits++] = (struct strobe__inst_edit){at, skip, side, depth, text};
    return 0;
}

int strobe__inst_replace(struct strobe__inst_src *s, const struct strobe__inst_pragma *p, const char *code)
{
    unsigned nl = 0;
    for (unsigned i = p->off; i < p->end; i++)
        nl += s->buf[i] == '\n';
    char lines[64] = "";
    for (unsigned i = 0; i < nl && i + 1 < sizeof lines; i++)
        lines[i] = '\n';
    return strobe__inst_edit(s, p->off, p->end - p->off, STROBE__INST_OPEN, p->off, "%s%s", code, lines);
}

bool strobe__inst_quote(char *buf, size_t len, const char *str)
{
    size_t k = strlen(buf);
    for (; *str; str++) {
        if (k + 3 > len)
            return false;
        if (*str == '"' || *str == '\\')
            buf[k++] = '\\';
        buf[k++] = *str;
    }
    buf[k] = 0;
    return true;
}

static int cmp_edit(const void *a, const void *b)
{
    const struct strobe__inst_edit *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    if (x->side != y->side)
        return x->side == STROBE__INST_CLOSE ? -1 : 1;
    if (x->depth != y->depth) /* closing: inner (later) first; opening: outer first */
        return (x->depth < y->depth) == (x->side == STROBE__INST_OPEN) ? -1 : 1;
    return 0;
}

/* ---- output -------------------------------------------------------------- */

static void put_literal(FILE *out, const char *str)
{
    fputc('"', out);
    for (; *str; str++) {
        if (*str == '"' || *str == '\\')
            fputc('\\', out);
        fputc(*str, out);
    }
    fputc('"', out);
}

/* The calls the edits make go through weak references, so that the file
 * runs without strobe's runtime as the original does. A descriptor is
 * registered with its kind before its first entry. The helpers are not
 * the program's functions: -finstrument-functions (strobe cc) leaves them
 * alone. */
static const char prologue[] =
    "/* instrumented by strobe instrument: the original follows the #line */\n"
    "#include <strobe/strobe.h>\n"
    "#include <strobe/adapter.h>\n"
    "#pragma weak strobe_region_enter\n"
    "#pragma weak strobe_region_exit\n"
    "#pragma weak strobe_region_define\n"
    "#pragma weak strobe_metric_add\n"
    "static inline __attribute__((unused, no_instrument_function)) strobe_region_t "
    "*strobe__inst_enter(strobe_region_t *r)\n"
    "{ if (strobe_region_enter) strobe_region_enter(r); return r; }\n"
    "static inline __attribute__((unused, no_instrument_function)) void strobe__inst_exit(strobe_region_t "
    "*r)\n"
    "{ if (strobe_region_exit) strobe_region_exit(r); }\n"
    "static inline __attribute__((unused, no_instrument_function)) void strobe__inst_leave(strobe_region_t "
    "**r) { "
    "strobe__inst_exit(*r); }\n"
    "static inline __attribute__((unused, no_instrument_function)) void strobe__inst_in(strobe_region_t *r, "
    "unsigned kind)\n"
    "{ if (strobe_region_enter && strobe_region_define) {\n"
    "    if (!__atomic_load_n(&r->id, __ATOMIC_ACQUIRE)) strobe_region_define(r, kind);\n"
    "    strobe_region_enter(r); } }\n";

/* OpenMP: the implicit task of a parallel region begins; its first
 * thread adds the team size to the parallel region, still its innermost
 * (docs/openmp.md: the OTF2 export's fork). */
static const char prologue_omp[] =
    "#include <omp.h>\n"
    "static __attribute__((unused)) strobe_metric_t strobe__inst_team = {\"omp team size\", \"threads\", "
    "0};\n"
    "static inline __attribute__((unused, no_instrument_function)) void strobe__inst_task(strobe_region_t "
    "*r)\n"
    "{ if (strobe_metric_add && omp_get_thread_num() == 0)\n"
    "    strobe_metric_add(&strobe__inst_team, omp_get_num_threads());\n"
    "  strobe__inst_in(r, 4); }\n";

/* Speculative constructs (spec.c): the outlined code's context, and the
 * calls around its run (which the construct's own line makes, so that
 * the runtime names its chunks after that line). The region gets the SE
 * statistics of its run as metrics (differences of
 * strobe_se_get_all_stats, process-wide). */
static const char prologue_spec[] =
    "#include <errno.h>\n"
    "#include <strobe/tm.h>\n"
    "#pragma weak strobe_spec_for\n"
    "#pragma weak strobe_spec_sections\n"
    "#pragma weak strobe_se_get_all_stats\n"
    "struct strobe__inst_spec { void **v; long lb, st; };\n"
    "static __attribute__((unused)) strobe_metric_t strobe__inst_se_metric[6] = {\n"
    "  {\"se.nonspec_committed\", \"chunks\", 0}, {\"se.spec_committed\", \"chunks\", 0},\n"
    "  {\"se.rollbacks\", \"rollbacks\", 0}, {\"se.serialized.irrevocable\", \"chunks\", 0},\n"
    "  {\"se.serialized.max_rollbacks\", \"chunks\", 0}, {\"se.serialized.other\", \"chunks\", 0}};\n"
    "static inline __attribute__((unused, no_instrument_function)) void strobe__inst_se(strobe_se_report_t "
    "*r)\n"
    "{ strobe_se_report_t z = {0, 0, 0, 0, 0, 0}; *r = z; if (strobe_se_get_all_stats) "
    "strobe_se_get_all_stats(r); }\n"
    "static inline __attribute__((unused, no_instrument_function)) void strobe__inst_se_add(const "
    "strobe_se_report_t *a, const "
    "strobe_se_report_t *b)\n"
    "{ unsigned long d[6] = {b->total_nonspec_committed - a->total_nonspec_committed,\n"
    "    b->total_spec_committed - a->total_spec_committed, b->total_rollbacks - a->total_rollbacks,\n"
    "    b->total_serialized_jmv - a->total_serialized_jmv, b->total_serialized_maxrb - "
    "a->total_serialized_maxrb,\n"
    "    b->total_serialized_other - a->total_serialized_other};\n"
    "  for (int i = 0; i < 6; i++) if (d[i] && strobe_metric_add) "
    "strobe_metric_add(&strobe__inst_se_metric[i], (int64_t)d[i]); }\n"
    "static inline __attribute__((unused, no_instrument_function)) long strobe__inst_trip(long lb, long ub, "
    "long st)\n"
    "{ if (st > 0) return ub > lb ? (ub - lb + st - 1) / st : 0;\n"
    "  return st < 0 && lb > ub ? (lb - ub - st - 1) / -st : 0; }\n"
    "static inline __attribute__((unused, no_instrument_function)) void "
    "strobe__inst_spec_begin(strobe_region_t *r, "
    "strobe_se_report_t "
    "*a)\n"
    "{ strobe__inst_in(r, 19); strobe__inst_se(a); }\n"
    "static inline __attribute__((unused, no_instrument_function)) void "
    "strobe__inst_spec_end(strobe_region_t *r, const "
    "strobe_se_report_t *a)\n"
    "{ strobe_se_report_t b; strobe__inst_se(&b); strobe__inst_se_add(a, &b); strobe__inst_exit(r); }\n";

static int write_file(struct strobe__inst_src *s, FILE *out)
{
    fputs(prologue, out);
    if (s->omp)
        fputs(prologue_omp, out);
    if (s->spec)
        fputs(prologue_spec, out);
    /* a descriptor is reached through a function, not named as a
     * variable: a parallel region with default(none) would require every
     * variable it names to be listed */
    for (size_t i = 0; i < s->ndescs; i++) {
        fprintf(out,
                "static inline __attribute__((unused, no_instrument_function)) strobe_region_t "
                "*strobe__inst_r%zu(void)\n"
                "{ static strobe_region_t r = {",
                i + 1);
        put_literal(out, s->descs[i].name);
        fputs(", ", out);
        put_literal(out, s->path);
        fprintf(out, ", %u, 0}; return &r; }\n", s->descs[i].line);
    }
    fputs("#line 1 ", out);
    put_literal(out, s->path);
    fputc('\n', out);
    if (s->nedits)
        qsort(s->edits, s->nedits, sizeof *s->edits, cmp_edit);
    size_t at = 0;
    for (size_t i = 0; i < s->nedits; i++) {
        const struct strobe__inst_edit *e = &s->edits[i];
        if (e->at < at) /* inside a replaced directive (a region() with no statement of its own) */
            continue;
        fwrite(s->buf + at, 1, e->at - at, out);
        fputs(e->text, out);
        at = e->at + e->skip;
    }
    fwrite(s->buf + at, 1, s->len - at, out);
    return ferror(out) ? -EIO : 0;
}

int strobe__inst_write(struct strobe__inst_src *s, const char *out)
{
    struct strobe__out_file o;
    int rc = strobe__out_file_open(&o, out, s->eb);
    if (rc)
        return rc;
    if (write_file(s, o.f) == 0)
        return strobe__out_file_commit(&o, s->eb);
    strobe__out_file_abort(&o);
    return strobe__error(s->eb, -EIO, "%s: cannot be written", out);
}

/* ---- parse --------------------------------------------------------------- */

/* The first error of the parse, as "file:line:col: message". */
static int parse_errors(struct strobe__inst_src *s)
{
    unsigned n = clang_getNumDiagnostics(s->tu);
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(s->tu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
        if (sev >= CXDiagnostic_Error) {
            CXString m =
                clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation | CXDiagnostic_DisplayColumn);
            /* the file itself is wrong, not a directive: exit status 1 */
            strobe__error(s->eb, -EINVAL, "%s", clang_getCString(m));
            clang_disposeString(m);
            clang_disposeDiagnostic(d);
            return -EINVAL;
        }
        clang_disposeDiagnostic(d);
    }
    return 0;
}

int strobe__inst_src_open(struct strobe__inst_src *s, CXIndex idx, const char *path, const char *const *args,
                          int nargs, struct strobe_errbuf *eb)
{
    s->path = path;
    s->eb = eb;
    enum CXErrorCode ec = clang_parseTranslationUnit2(
        idx, path, args, nargs, NULL, 0,
        CXTranslationUnit_KeepGoing | CXTranslationUnit_DetailedPreprocessingRecord, &s->tu);
    if (ec != CXError_Success) {
        s->tu = NULL;
        return strobe__error(eb, -EIO, "%s: cannot be parsed (libclang error %d)", path, (int)ec);
    }
    int rc = parse_errors(s);
    if (rc)
        return rc;
    s->file = clang_getFile(s->tu, path);
    s->buf = s->file ? clang_getFileContents(s->tu, s->file, &s->len) : NULL;
    if (!s->buf)
        return strobe__error(eb, -EIO, "%s: cannot be read", path);
    CXSourceRange all = clang_getRange(clang_getLocationForOffset(s->tu, s->file, 0),
                                       clang_getLocationForOffset(s->tu, s->file, (unsigned)s->len));
    clang_tokenize(s->tu, all, &s->toks, &s->ntoks);
    if (find_pragmas(s) == 0)
        clang_visitChildren(clang_getTranslationUnitCursor(s->tu), macro_pragma, s);
    if (s->npragmas > 1)
        qsort(s->pragmas, s->npragmas, sizeof *s->pragmas, cmp_pragma);
    if (s->rc == 0 && (s->npragmas || s->watch)) {
        clang_visitChildren(clang_getTranslationUnitCursor(s->tu), collect, s);
        if (s->nstmts)
            qsort(s->stmts, s->nstmts, sizeof *s->stmts, cmp_span);
    }
    if (s->rc == -ENOMEM)
        return strobe__error(eb, -ENOMEM, "%s: out of memory", path);
    return s->rc;
}

void strobe__inst_src_close(struct strobe__inst_src *s)
{
    if (s->tu && s->toks)
        clang_disposeTokens(s->tu, s->toks, s->ntoks);
    for (size_t i = 0; i < s->nedits; i++)
        free(s->edits[i].text);
    free(s->edits);
    for (size_t i = 0; i < s->ndescs; i++)
        free(s->descs[i].name);
    free(s->descs);
    for (size_t i = 0; i < s->nfuncs; i++)
        free(s->funcs[i].name);
    free(s->funcs);
    free(s->stmts);
    free(s->calls);
    free(s->pragmas);
    if (s->tu)
        clang_disposeTranslationUnit(s->tu);
}
