/* SPDX-License-Identifier: MIT */
/*
 * The directive instrumenter (instrument.h): libclang gives the file's
 * tokens (pragmas included, comments kept apart) and the statements'
 * extents; the output is the file's own bytes with edits at byte offsets,
 * none of which adds a line.
 */
#ifndef _GNU_SOURCE /* vasprintf */
#define _GNU_SOURCE
#endif
#include "instrument/instrument.h"

#include <clang-c/Index.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/keymap.h" /* strobe__grow */
#include "export/output.h"
#include "strobe/strobe.h"

#define NAME_MAX_LEN 128

enum pragma_kind { P_BEGIN, P_END, P_STMT, P_OFF, P_ON };

/* One strobe pragma: its bytes [off, end) in the file, replaced by the
 * edit; the region it names and the descriptor it uses. */
struct pragma {
    unsigned off, end, line;
    enum pragma_kind kind;
    char name[NAME_MAX_LEN];
    unsigned region; /* descriptor number, 1.. (0: none) */
    bool off_zone;   /* between `off` and `on`: removed, not instrumented */
};

/* A text inserted at offset `at` (stable order: by offset, then as added). */
struct edit {
    unsigned at, skip; /* the bytes [at, at + skip) are replaced */
    size_t seq;        /* order among the edits at one offset */
    char *text;
};

struct stmt {
    unsigned start, end; /* [start, end) as libclang gives it */
};

/* A compound statement and the statements directly in it. */
struct block {
    unsigned start, end;
    struct stmt *stmts;
    size_t n, cap;
};

struct inst {
    const char *path;
    CXTranslationUnit tu;
    CXFile file;
    const char *buf;
    size_t len;
    CXToken *toks;
    unsigned ntoks;
    struct pragma *pragmas;
    size_t npragmas, pcap;
    struct edit *edits;
    size_t nedits, ecap;
    struct block *blocks;
    size_t nblocks, bcap;
    unsigned nregions;
    struct strobe_errbuf *eb;
    int rc;
};

static unsigned tok_offset(struct inst *s, CXToken t, unsigned *line)
{
    unsigned l, c, o;
    clang_getSpellingLocation(clang_getTokenLocation(s->tu, t), NULL, &l, &c, &o);
    if (line)
        *line = l;
    return o;
}

/* The token's bytes end (its offset plus its spelling's length). */
static unsigned tok_end(struct inst *s, CXToken t)
{
    unsigned o;
    clang_getSpellingLocation(clang_getRangeEnd(clang_getTokenExtent(s->tu, t)), NULL, NULL, NULL, &o);
    return o;
}

static bool tok_is(struct inst *s, CXToken t, const char *word)
{
    CXString sp = clang_getTokenSpelling(s->tu, t);
    bool eq = strcmp(clang_getCString(sp), word) == 0;
    clang_disposeString(sp);
    return eq;
}

static int fail(struct inst *s, unsigned line, const char *what, const char *name)
{
    if (s->rc == 0)
        s->rc = strobe__error(s->eb, STROBE_ERR_SYNTAX, "%s:%u: %s%s", s->path, line, what, name ? name : "");
    return s->rc;
}

/* Parses the words of a strobe pragma ("region begin(NAME)", ...; text,
 * without the leading "strobe") into p. */
static int parse_words(struct inst *s, const char *text, struct pragma *p)
{
    char name[NAME_MAX_LEN] = "", buf[512];
    int n = 0;
    while (*text == ' ' || *text == '\t')
        text++;
    size_t len = strlen(text);
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
        len--;
    snprintf(buf, sizeof buf, "%.*s", (int)len, text);
    text = buf;
    if (strcmp(text, "off") == 0)
        p->kind = P_OFF;
    else if (strcmp(text, "on") == 0)
        p->kind = P_ON;
    else if (sscanf(text, "region begin ( %127[A-Za-z0-9_.:-] ) %n", name, &n) == 1 && text[n] == 0)
        p->kind = P_BEGIN;
    else if (sscanf(text, "region end ( %127[A-Za-z0-9_.:-] ) %n", name, &n) == 1 && text[n] == 0)
        p->kind = P_END;
    else if (sscanf(text, "region ( %127[A-Za-z0-9_.:-] ) %n", name, &n) == 1 && text[n] == 0)
        p->kind = P_STMT;
    else
        return fail(
            s, p->line,
            "unknown strobe pragma (region begin(NAME), region end(NAME), region(NAME), off, on): ", text);
    snprintf(p->name, sizeof p->name, "%s", name);
    return 0;
}

static int add_pragma(struct inst *s, struct pragma *p, const char *text)
{
    if (parse_words(s, text, p))
        return s->rc;
    if (strobe__grow((void **)&s->pragmas, &s->pcap, s->npragmas + 1, sizeof *s->pragmas))
        return s->rc = -ENOMEM;
    s->pragmas[s->npragmas++] = *p;
    return 0;
}

/* The words of tokens [i, j) with spaces between them. */
static void join_tokens(struct inst *s, unsigned i, unsigned j, char *out, size_t len)
{
    size_t k = 0;
    out[0] = 0;
    for (; i < j && k + 1 < len; i++) {
        CXString sp = clang_getTokenSpelling(s->tu, s->toks[i]);
        k += (size_t)snprintf(out + k, len - k, "%s%s", k ? " " : "", clang_getCString(sp));
        clang_disposeString(sp);
    }
}

/* Finds `#pragma strobe ...` lines and `_Pragma("strobe ...")`. */
static int find_pragmas(struct inst *s)
{
    char text[512];
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
            unsigned j = i + 1, l;
            while (j < s->ntoks && (tok_offset(s, s->toks[j], &l), l == line))
                j++;
            if (j > i + 2 && tok_is(s, s->toks[i + 1], "pragma") && tok_is(s, s->toks[i + 2], "strobe")) {
                struct pragma p = {.off = off, .end = tok_end(s, s->toks[j - 1]), .line = line};
                join_tokens(s, i + 3, j, text, sizeof text);
                add_pragma(s, &p, text);
            }
            i = j - 1;
        } else if (clang_getTokenKind(t) == CXToken_Identifier && tok_is(s, t, "_Pragma") &&
                   i + 3 < s->ntoks && tok_is(s, s->toks[i + 1], "(") &&
                   clang_getTokenKind(s->toks[i + 2]) == CXToken_Literal && tok_is(s, s->toks[i + 3], ")")) {
            CXString sp = clang_getTokenSpelling(s->tu, s->toks[i + 2]);
            const char *lit = clang_getCString(sp);
            size_t n = strlen(lit);
            if (n >= 2 && lit[0] == '"' && lit[n - 1] == '"' && strncmp(lit + 1, "strobe", 6) == 0 &&
                (lit[7] == ' ' || lit[7] == '\t')) {
                snprintf(text, sizeof text, "%.*s", (int)(n - 8), lit + 7);
                struct pragma p = {.off = off, .end = tok_end(s, s->toks[i + 3]), .line = line};
                add_pragma(s, &p, text);
                i += 3;
            }
            clang_disposeString(sp);
        }
    }
    return s->rc;
}

static unsigned cursor_offset(CXSourceLocation loc)
{
    unsigned o;
    clang_getSpellingLocation(loc, NULL, NULL, NULL, &o);
    return o;
}

static bool in_main_file(struct inst *s, CXCursor c)
{
    CXFile f;
    clang_getSpellingLocation(clang_getRangeStart(clang_getCursorExtent(c)), &f, NULL, NULL, NULL);
    return f && clang_File_isEqual(f, s->file);
}

static enum CXChildVisitResult child_of_block(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    struct inst *s = data;
    struct block *b = &s->blocks[s->nblocks - 1];
    if (strobe__grow((void **)&b->stmts, &b->cap, b->n + 1, sizeof *b->stmts)) {
        s->rc = -ENOMEM;
        return CXChildVisit_Break;
    }
    CXSourceRange r = clang_getCursorExtent(c);
    b->stmts[b->n++] =
        (struct stmt){cursor_offset(clang_getRangeStart(r)), cursor_offset(clang_getRangeEnd(r))};
    return CXChildVisit_Continue;
}

/* Every compound statement of the main file with its statements. */
static enum CXChildVisitResult find_blocks(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    struct inst *s = data;
    if (clang_getCursorKind(c) == CXCursor_CompoundStmt && in_main_file(s, c)) {
        if (strobe__grow((void **)&s->blocks, &s->bcap, s->nblocks + 1, sizeof *s->blocks)) {
            s->rc = -ENOMEM;
            return CXChildVisit_Break;
        }
        CXSourceRange r = clang_getCursorExtent(c);
        s->blocks[s->nblocks++] = (struct block){cursor_offset(clang_getRangeStart(r)),
                                                 cursor_offset(clang_getRangeEnd(r)), NULL, 0, 0};
        clang_visitChildren(c, child_of_block, s);
    }
    return s->rc ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* The end of a statement whose extent ends at `end`: libclang's extent
 * of a statement that ends in an expression stops before its `;`. */
static unsigned stmt_end(struct inst *s, unsigned end)
{
    if (end > 0 && (s->buf[end - 1] == '}' || s->buf[end - 1] == ';'))
        return end;
    /* the first token at or after end (tokens are in file order) */
    unsigned lo = 0, hi = s->ntoks;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (tok_offset(s, s->toks[mid], NULL) < end)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo < s->ntoks && clang_getTokenKind(s->toks[lo]) == CXToken_Comment)
        lo++;
    return lo < s->ntoks && tok_is(s, s->toks[lo], ";") ? tok_offset(s, s->toks[lo], NULL) + 1 : end;
}

/* The statement right after pragma p in the innermost block holding it. */
static const struct stmt *stmt_after(struct inst *s, const struct pragma *p)
{
    const struct block *in = NULL;
    for (size_t i = 0; i < s->nblocks; i++) {
        const struct block *b = &s->blocks[i];
        if (b->start < p->off && p->end < b->end && (!in || b->start > in->start))
            in = b;
    }
    for (size_t i = 0; in && i < in->n; i++)
        if (in->stmts[i].start >= p->end)
            return &in->stmts[i];
    return NULL;
}

static int add_edit(struct inst *s, unsigned at, unsigned skip, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add_edit(struct inst *s, unsigned at, unsigned skip, const char *fmt, ...)
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
    s->edits[s->nedits] = (struct edit){at, skip, s->nedits, text};
    s->nedits++;
    return 0;
}

/* The replacement of pragma p's bytes: `code`, then the newlines the
 * pragma spanned (a continued line), so no line moves. */
static int replace_pragma(struct inst *s, const struct pragma *p, const char *code)
{
    unsigned nl = 0;
    for (unsigned i = p->off; i < p->end; i++)
        nl += s->buf[i] == '\n';
    char lines[64] = "";
    for (unsigned i = 0; i < nl && i + 1 < sizeof lines; i++)
        lines[i] = '\n';
    return add_edit(s, p->off, p->end - p->off, "%s%s", code, lines);
}

/* Pairs begins and ends, numbers the descriptors and makes the edits. */
static int plan_edits(struct inst *s)
{
    bool off = false;
    size_t *open = calloc(s->npragmas + 1, sizeof *open), nopen = 0;
    if (!open)
        return s->rc = -ENOMEM;
    for (size_t i = 0; i < s->npragmas && !s->rc; i++) {
        struct pragma *p = &s->pragmas[i];
        if (p->kind == P_OFF || p->kind == P_ON) {
            if ((p->kind == P_OFF) == off)
                fail(s, p->line, off ? "strobe off while off" : "strobe on without off", NULL);
            off = p->kind == P_OFF;
            replace_pragma(s, p, "");
            continue;
        }
        p->off_zone = off;
        if (off) {
            replace_pragma(s, p, "");
            continue;
        }
        char code[96];
        if (p->kind == P_BEGIN) {
            p->region = ++s->nregions;
            open[nopen++] = i;
            snprintf(code, sizeof code, "strobe__inst_enter(&strobe__inst_r%u);", p->region);
            replace_pragma(s, p, code);
        } else if (p->kind == P_END) {
            if (!nopen || strcmp(s->pragmas[open[nopen - 1]].name, p->name) != 0) {
                fail(s, p->line, "region end without its begin (regions nest): ", p->name);
                break;
            }
            p->region = s->pragmas[open[--nopen]].region;
            snprintf(code, sizeof code, "strobe__inst_exit(&strobe__inst_r%u);", p->region);
            replace_pragma(s, p, code);
        } else {
            const struct stmt *st = stmt_after(s, p);
            if (!st) {
                fail(s, p->line, "region is not followed by a statement in its block: ", p->name);
                break;
            }
            p->region = ++s->nregions;
            replace_pragma(s, p, "");
            add_edit(
                s, st->start, 0,
                "{ strobe_region_t *strobe__inst_s%u __attribute__((cleanup(strobe__inst_leave), unused)) = "
                "strobe__inst_enter(&strobe__inst_r%u); ",
                p->region, p->region);
            add_edit(s, stmt_end(s, st->end), 0, " }");
        }
    }
    if (!s->rc && nopen)
        fail(s, s->pragmas[open[nopen - 1]].line,
             "region begin without its end: ", s->pragmas[open[nopen - 1]].name);
    free(open);
    return s->rc;
}

static int cmp_edit(const void *a, const void *b)
{
    const struct edit *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A C string literal of s. */
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

static int write_output(struct inst *s, FILE *out)
{
    fputs("/* instrumented by strobe instrument: the original follows the #line */\n"
          "#include <strobe/strobe.h>\n"
          "#pragma weak strobe_region_enter\n"
          "#pragma weak strobe_region_exit\n"
          "static inline strobe_region_t *strobe__inst_enter(strobe_region_t *r)\n"
          "{ if (strobe_region_enter) strobe_region_enter(r); return r; }\n"
          "static inline void strobe__inst_exit(strobe_region_t *r)\n"
          "{ if (strobe_region_exit) strobe_region_exit(r); }\n"
          "static inline void strobe__inst_leave(strobe_region_t **r) { strobe__inst_exit(*r); }\n",
          out);
    for (size_t i = 0; i < s->npragmas; i++) {
        const struct pragma *p = &s->pragmas[i];
        if (p->off_zone || (p->kind != P_BEGIN && p->kind != P_STMT))
            continue;
        fprintf(out, "static strobe_region_t strobe__inst_r%u = {", p->region);
        put_literal(out, p->name);
        fputs(", ", out);
        put_literal(out, s->path);
        fprintf(out, ", %u, 0};\n", p->line);
    }
    fputs("#line 1 ", out);
    put_literal(out, s->path);
    fputc('\n', out);
    if (s->nedits)
        qsort(s->edits, s->nedits, sizeof *s->edits, cmp_edit);
    size_t at = 0;
    for (size_t i = 0; i < s->nedits; i++) {
        const struct edit *e = &s->edits[i];
        if (e->at < at) /* inside a replaced pragma: a region() with no statement of its own */
            continue;
        fwrite(s->buf + at, 1, e->at - at, out);
        fputs(e->text, out);
        at = e->at + e->skip;
    }
    fwrite(s->buf + at, 1, s->len - at, out);
    return ferror(out) ? -EIO : 0;
}

/* The first error of the parse, as "file:line:col: message". */
static int parse_errors(struct inst *s)
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

int strobe__instrument_file(const char *in, const char *out, const char *const *args, int nargs,
                            struct strobe_errbuf *eb)
{
    struct inst s = {.path = in, .eb = eb};
    CXIndex idx = clang_createIndex(0, 0);
    enum CXErrorCode ec =
        clang_parseTranslationUnit2(idx, in, args, nargs, NULL, 0, CXTranslationUnit_KeepGoing, &s.tu);
    int rc;
    if (ec != CXError_Success) {
        rc = strobe__error(eb, -EIO, "%s: cannot be parsed (libclang error %d)", in, (int)ec);
        clang_disposeIndex(idx);
        return rc;
    }
    if ((rc = parse_errors(&s)) != 0)
        goto out;
    s.file = clang_getFile(s.tu, in);
    s.buf = s.file ? clang_getFileContents(s.tu, s.file, &s.len) : NULL;
    if (!s.buf) {
        rc = strobe__error(eb, -EIO, "%s: cannot be read", in);
        goto out;
    }
    CXSourceRange all = clang_getRange(clang_getLocationForOffset(s.tu, s.file, 0),
                                       clang_getLocationForOffset(s.tu, s.file, (unsigned)s.len));
    clang_tokenize(s.tu, all, &s.toks, &s.ntoks);
    if (find_pragmas(&s) == 0) {
        clang_visitChildren(clang_getTranslationUnitCursor(s.tu), find_blocks, &s);
        plan_edits(&s);
    }
    if ((rc = s.rc) == -ENOMEM)
        rc = strobe__error(eb, -ENOMEM, "%s: out of memory", in);
    if (rc == 0) {
        struct strobe__out_file o;
        if ((rc = strobe__out_file_open(&o, out, eb)) == 0) {
            if (write_output(&s, o.f) == 0) {
                rc = strobe__out_file_commit(&o, eb);
            } else {
                strobe__out_file_abort(&o);
                rc = strobe__error(eb, -EIO, "%s: cannot be written", out);
            }
        }
    }
    clang_disposeTokens(s.tu, s.toks, s.ntoks);
out:
    for (size_t i = 0; i < s.nedits; i++)
        free(s.edits[i].text);
    free(s.edits);
    for (size_t i = 0; i < s.nblocks; i++)
        free(s.blocks[i].stmts);
    free(s.blocks);
    free(s.pragmas);
    clang_disposeTranslationUnit(s.tu);
    clang_disposeIndex(idx);
    return rc;
}
