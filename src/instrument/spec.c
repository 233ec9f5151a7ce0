/* SPDX-License-Identifier: MIT */
/*
 * tm_atomic and speculative directives (spec.h).
 *
 * A speculative loop's body (a speculative section's statement) is
 * outlined into a transaction_safe function placed just before the
 * function that holds it, so that GCC makes its transactional clone and
 * strobe's speculative runtime can run it. The outlined copy reaches the
 * enclosing function's local variables and parameters through pointers:
 * each reference is rewritten to `(*(__typeof__(T) *)strobe__v[j])`, with
 * the exact references and declarations from the AST. `#line` directives
 * around the copy give it the original's line numbers, so no line of the
 * file moves and diagnostics and debuggers name the original body.
 */
#ifndef _GNU_SOURCE /* asprintf, open_memstream */
#define _GNU_SOURCE
#endif
#include "instrument/spec.h"

#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/keymap.h" /* strobe__grow */
#include "common/format.h"

/* A local variable the outlined code reaches through strobe__v[index]. */
struct capture {
    unsigned decl; /* byte offset of its declaration: the variable's key */
    char name[128], type[256];
};

/* A reference to rewrite: bytes [off, off + len) of the file. */
struct ref {
    unsigned off, len;
    size_t capture; /* index, or SIZE_MAX for a `continue` to turn into `return` */
};

struct outline {
    struct strobe__inst_src *s;
    const struct strobe__inst_pragma *p;
    unsigned start, end; /* the code outlined */
    unsigned loop_var;   /* declaration offset of the loop variable (UINT_MAX: none) */
    struct capture *caps;
    size_t ncaps, ccap;
    struct ref *refs;
    size_t nrefs, rcap;
    unsigned loops; /* loops and switches around the current cursor, inside the code */
};

static unsigned offset_of(CXSourceLocation loc, CXFile *file)
{
    unsigned o;
    clang_getSpellingLocation(loc, file, NULL, NULL, &o);
    return o;
}

static int add_ref(struct outline *o, unsigned off, unsigned len, size_t capture)
{
    if (strobe__grow((void **)&o->refs, &o->rcap, o->nrefs + 1, sizeof *o->refs))
        return o->s->rc = -ENOMEM;
    o->refs[o->nrefs++] = (struct ref){off, len, capture};
    return 0;
}

/* A reference to a variable of the enclosing function declared outside
 * the outlined code: captured. */
static int reference(struct outline *o, CXCursor c)
{
    CXCursor d = clang_getCursorReferenced(c);
    enum CXCursorKind k = clang_getCursorKind(d);
    if (k != CXCursor_VarDecl && k != CXCursor_ParmDecl)
        return 0;
    if (clang_Cursor_getStorageClass(d) == CX_SC_Extern)
        return 0;
    enum CXCursorKind parent = clang_getCursorKind(clang_getCursorSemanticParent(d));
    if (parent != CXCursor_FunctionDecl)
        return 0; /* a global: the outlined code names it itself */
    CXFile f;
    unsigned decl = offset_of(clang_getCursorLocation(d), &f);
    if ((decl >= o->start && decl < o->end) || decl == o->loop_var)
        return 0;
    unsigned line;
    clang_getSpellingLocation(clang_getCursorLocation(c), NULL, &line, NULL, NULL);
    CXType t = clang_getCursorType(d);
    if (t.kind == CXType_VariableArray || t.kind == CXType_DependentSizedArray) {
        CXString n = clang_getCursorSpelling(d);
        strobe__inst_fail(o->s, line,
                          "speculative: %s is a variable-length array, which cannot be reached "
                          "from the outlined code",
                          clang_getCString(n));
        clang_disposeString(n);
        return o->s->rc;
    }
    size_t i = 0;
    while (i < o->ncaps && o->caps[i].decl != decl)
        i++;
    if (i == o->ncaps) {
        if (strobe__grow((void **)&o->caps, &o->ccap, o->ncaps + 1, sizeof *o->caps))
            return o->s->rc = -ENOMEM;
        CXString ts = clang_getTypeSpelling(t);
        CXString dn = clang_getCursorSpelling(d);
        o->caps[i].decl = decl;
        snprintf(o->caps[i].name, sizeof o->caps[i].name, "%s", clang_getCString(dn));
        clang_disposeString(dn);
        snprintf(o->caps[i].type, sizeof o->caps[i].type, "%s", clang_getCString(ts));
        clang_disposeString(ts);
        o->ncaps++;
    }
    CXString n = clang_getCursorSpelling(c);
    unsigned len = (unsigned)strlen(clang_getCString(n));
    clang_disposeString(n);
    return add_ref(o, offset_of(clang_getCursorLocation(c), NULL), len, i);
}

/* Walks the outlined code: captures, and the statements that cannot leave
 * an outlined body (a `continue` of the loop itself becomes `return`). */
static enum CXChildVisitResult walk(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    struct outline *o = data;
    CXFile f;
    CXSourceRange r = clang_getCursorExtent(c);
    unsigned off = offset_of(clang_getRangeStart(r), &f), end = offset_of(clang_getRangeEnd(r), NULL);
    if (!f || !clang_File_isEqual(f, o->s->file) || end <= o->start || off >= o->end)
        return CXChildVisit_Continue;
    if (off < o->start)
        return CXChildVisit_Recurse; /* around the code: its children may be in it */
    enum CXCursorKind k = clang_getCursorKind(c);
    unsigned line;
    clang_getSpellingLocation(clang_getCursorLocation(c), NULL, &line, NULL, NULL);
    switch (k) {
    case CXCursor_DeclRefExpr:
        reference(o, c);
        break;
    case CXCursor_ReturnStmt:
    case CXCursor_GotoStmt:
    case CXCursor_IndirectGotoStmt:
        strobe__inst_fail(o->s, line, "speculative: %s leaves the speculative code early (not supported)",
                          k == CXCursor_ReturnStmt ? "return" : "goto");
        break;
    case CXCursor_BreakStmt:
        if (o->loops == 0)
            strobe__inst_fail(o->s, line,
                              "speculative: break leaves the speculative code early (not supported)");
        break;
    case CXCursor_ContinueStmt:
        if (o->loops == 0)
            add_ref(o, off, 8, SIZE_MAX);
        break;
    case CXCursor_ForStmt:
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
    case CXCursor_SwitchStmt:
        o->loops++;
        clang_visitChildren(c, walk, o);
        o->loops--;
        return o->s->rc ? CXChildVisit_Break : CXChildVisit_Continue;
    default:
        break;
    }
    return o->s->rc ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static int cmp_ref(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The code [start, end) with its references rewritten, as one string
 * whose newlines are the original's. */
static char *rewritten(struct outline *o)
{
    if (o->nrefs)
        qsort(o->refs, o->nrefs, sizeof *o->refs, cmp_ref);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f)
        return NULL;
    unsigned at = o->start;
    for (size_t i = 0; i < o->nrefs; i++) {
        const struct ref *r = &o->refs[i];
        if (r->off < at)
            continue;
        fwrite(o->s->buf + at, 1, r->off - at, f);
        if (r->capture == SIZE_MAX)
            fputs("return", f);
        else
            fprintf(f, "(*(__typeof__(%s) *)strobe__v[%zu])", o->caps[r->capture].type, r->capture);
        at = r->off + r->len;
    }
    fwrite(o->s->buf + at, 1, o->end - at, f);
    if (fclose(f)) {
        free(out);
        return NULL;
    }
    return out;
}

static unsigned line_of(struct strobe__inst_src *s, unsigned off)
{
    unsigned line = 1;
    for (unsigned i = 0; i < off && i < s->len; i++)
        line += s->buf[i] == '\n';
    return line;
}

/* Outlines [start, end) into a function `static void NAME(PARAMS)` whose
 * body begins with `prelude`, inserted before the enclosing function. */
static int outline(struct outline *o, const char *name, const char *params, const char *prelude)
{
    struct strobe__inst_src *s = o->s;
    clang_visitChildren(clang_getTranslationUnitCursor(s->tu), walk, o);
    if (s->rc)
        return s->rc;
    char *code = rewritten(o);
    if (!code)
        return s->rc = -ENOMEM;
    unsigned fstart = strobe__inst_function_start(s, o->p->off);
    unsigned col = 0;
    while (col < fstart && s->buf[fstart - col - 1] != '\n')
        col++;
    strobe__inst_edit(s, fstart, 0, STROBE__INST_OPEN, o->p->off,
                      "\n#line %u \"%s\"\n__attribute__((transaction_safe)) static void %s(%s)\n"
                      "{ struct strobe__inst_spec *strobe__c = strobe__p; void **strobe__v = strobe__c->v; "
                      "(void)strobe__v; %s%s }\n#line %u \"%s\"\n%*s",
                      line_of(s, o->start), s->path, name, params, prelude, code, line_of(s, fstart), s->path,
                      (int)col, "");
    free(code);
    return s->rc;
}

/* The void * list of the captured variables' addresses, "{&a, &b}". */
static void capture_list(const struct outline *o, char *out, size_t len)
{
    size_t k = (size_t)snprintf(out, len, "{");
    for (size_t i = 0; i < o->ncaps && k < len; i++)
        k += (size_t)snprintf(out + k, len - k, "%s(void *)&%s", i ? ", " : "", o->caps[i].name);
    if (k < len)
        snprintf(out + k, len - k, "%s}", o->ncaps ? "" : "0");
}

/* ---- tm_atomic ------------------------------------------------------------ */

static int tm_atomic(struct strobe__inst_src *s, const struct strobe__inst_pragma *p)
{
    bool safe = strcmp(p->text, "safe_mode") == 0;
    if (!safe && p->text[0])
        return strobe__inst_fail(s, p->line, "tm_atomic: unknown clause '%s' (safe_mode is the only one)",
                                 p->text);
    struct strobe__inst_span st;
    if (!strobe__inst_stmt_after(s, p->end, &st) || s->buf[st.start] != '{')
        return strobe__inst_fail(s, p->line, "tm_atomic is not followed by a compound statement { ... }");
    /* a transaction the STM serializes on an irrevocable action (BG/Q's
     * JMV), or one the compiler checks has none */
    return strobe__inst_replace(s, p, safe ? "__transaction_atomic" : "__transaction_relaxed");
}

/* ---- speculative ---------------------------------------------------------- */

/* The source text of bytes [a, b). */
static void text_of(struct strobe__inst_src *s, unsigned a, unsigned b, char *out, size_t len)
{
    snprintf(out, len, "%.*s", (int)(b > a ? b - a : 0), s->buf + a);
}

/* Clauses of a speculative directive after its first word: num_threads(N)
 * and, for loops, schedule(static, C). */
static int spec_clauses(struct strobe__inst_src *s, const struct strobe__inst_pragma *p, const char *rest,
                        char *threads, char *chunk, size_t len)
{
    snprintf(threads, len, "0");
    if (chunk)
        snprintf(chunk, len, "1");
    const char *c = rest;
    while (*(c += strspn(c, " \t,"))) {
        int n = 0;
        char arg[256];
        if (sscanf(c, "num_threads ( %255[^)] ) %n", arg, &n) == 1 && n) {
            snprintf(threads, len, "(unsigned)(%s)", arg);
        } else if (chunk && sscanf(c, "schedule ( static , %255[^)] ) %n", arg, &n) == 1 && n) {
            snprintf(chunk, len, "(long)(%s)", arg);
        } else {
            return strobe__inst_fail(s, p->line,
                                     "speculative: unknown clause at '%s' (num_threads(N), "
                                     "schedule(static, CHUNK) on a loop)",
                                     c);
        }
        c += n;
    }
    return 0;
}

/* Refuses other directives inside code a speculative construct replaces
 * (their edits would be lost). */
static int alone(struct strobe__inst_src *s, const struct strobe__inst_pragma *p, unsigned a, unsigned b,
                 const char *allowed)
{
    for (size_t i = 0; i < s->npragmas; i++) {
        const struct strobe__inst_pragma *q = &s->pragmas[i];
        if (q->off >= a && q->off < b &&
            !(allowed && q->family == STROBE__INST_SPECULATIVE && strcmp(q->text, allowed) == 0))
            return strobe__inst_fail(s, q->line,
                                     "a directive inside the speculative construct of line %u "
                                     "is not supported",
                                     p->line);
    }
    return 0;
}

/* Replaces the speculative construct: its statement st by `code` (made
 * by the caller, freed here; NULL: out of memory) with the newlines st
 * held, and the directive p by nothing. */
static int replace_construct(struct strobe__inst_src *s, const struct strobe__inst_pragma *p,
                             const struct strobe__inst_span *st, char *code)
{
    if (!code)
        return s->rc = -ENOMEM;
    struct strobe__inst_pragma span = *p;
    span.off = st->start;
    span.end = st->end;
    int rc = strobe__inst_replace(s, &span, code);
    free(code);
    return rc ? rc : strobe__inst_replace(s, p, "");
}

/* The parts of a canonical loop header: for (INIT; COND; INC). */
struct loop {
    char var[128], type[256], lb[512], ub[512], step[512];
    int op; /* '<', 'l' (<=), '>', 'g' (>=) */
    bool declared;
    unsigned var_decl, body;
};

static int bad_loop(struct strobe__inst_src *s, const struct strobe__inst_pragma *p)
{
    return strobe__inst_fail(s, p->line,
                             "speculative for needs a canonical loop: for ([TYPE] I = LB; I <, <=, >, >= "
                             "UB; I++, I--, I += STEP, I -= STEP) with an integer I");
}

/* The loop variable's type and declaration from the AST. */
static bool loop_var(struct strobe__inst_src *s, unsigned off, struct loop *l)
{
    CXCursor c = clang_getCursor(s->tu, clang_getLocationForOffset(s->tu, s->file, off));
    if (clang_getCursorKind(c) == CXCursor_DeclRefExpr)
        c = clang_getCursorReferenced(c);
    if (clang_getCursorKind(c) != CXCursor_VarDecl)
        return false;
    CXType t = clang_getCanonicalType(clang_getCursorType(c));
    if (t.kind < CXType_Char_U || t.kind > CXType_LongLong) /* bool and the integers */
        return false;
    CXString ts = clang_getTypeSpelling(clang_getCursorType(c));
    snprintf(l->type, sizeof l->type, "%s", clang_getCString(ts));
    clang_disposeString(ts);
    l->var_decl = offset_of(clang_getCursorLocation(c), NULL);
    return true;
}

static int parse_loop(struct strobe__inst_src *s, const struct strobe__inst_pragma *p,
                      const struct strobe__inst_span *st, struct loop *l)
{
    unsigned t = strobe__inst_token_at(s, st->start), close = strobe__inst_for_header(s, t);
    if (!close)
        return strobe__inst_fail(s, p->line, "speculative for is not followed by a for loop");
    /* the three parts, split at the header's top-level semicolons */
    unsigned part[3][2], k = 0, depth = 0, from = t + 2;
    for (unsigned i = t + 2; i < close; i++) {
        if (strobe__inst_token_is(s, i, "("))
            depth++;
        else if (strobe__inst_token_is(s, i, ")"))
            depth--;
        else if (depth == 0 && strobe__inst_token_is(s, i, ";")) {
            if (k == 2)
                return bad_loop(s, p);
            part[k][0] = from, part[k++][1] = i, from = i + 1;
        }
    }
    if (k != 2)
        return bad_loop(s, p);
    part[2][0] = from, part[2][1] = close;
    l->body = strobe__inst_token_end(s, close);
    /* INIT: [TYPE] I = LB */
    unsigned eq = part[0][0];
    while (eq < part[0][1] && !strobe__inst_token_is(s, eq, "="))
        eq++;
    if (eq == part[0][1] || eq == part[0][0] || eq + 1 >= part[0][1])
        return bad_loop(s, p);
    l->declared = eq - 1 > part[0][0];
    text_of(s, strobe__inst_token_start(s, eq - 1), strobe__inst_token_end(s, eq - 1), l->var, sizeof l->var);
    if (!loop_var(s, strobe__inst_token_start(s, eq - 1), l))
        return bad_loop(s, p);
    text_of(s, strobe__inst_token_start(s, eq + 1), strobe__inst_token_end(s, part[0][1] - 1), l->lb,
            sizeof l->lb);
    /* COND: I OP UB */
    unsigned c = part[1][0];
    if (part[1][1] - c < 3 || !strobe__inst_token_is(s, c, l->var))
        return bad_loop(s, p);
    static const struct {
        const char *tok;
        int op;
    } ops[] = {{"<", '<'}, {"<=", 'l'}, {">", '>'}, {">=", 'g'}};
    l->op = 0;
    for (size_t j = 0; j < 4; j++)
        if (strobe__inst_token_is(s, c + 1, ops[j].tok))
            l->op = ops[j].op;
    if (!l->op)
        return bad_loop(s, p);
    text_of(s, strobe__inst_token_start(s, c + 2), strobe__inst_token_end(s, part[1][1] - 1), l->ub,
            sizeof l->ub);
    /* INC: I++, ++I, I--, --I, I += STEP, I -= STEP */
    unsigned a = part[2][0], n = part[2][1] - a;
    bool up = l->op == '<' || l->op == 'l';
    if (n == 2 && (strobe__inst_token_is(s, a, l->var) || strobe__inst_token_is(s, a + 1, l->var)) &&
        (strobe__inst_token_is(s, a, up ? "++" : "--") || strobe__inst_token_is(s, a + 1, up ? "++" : "--")))
        snprintf(l->step, sizeof l->step, "%s", up ? "1" : "-1");
    else if (n >= 3 && strobe__inst_token_is(s, a, l->var) &&
             strobe__inst_token_is(s, a + 1, up ? "+=" : "-=")) {
        char e[480];
        text_of(s, strobe__inst_token_start(s, a + 2), strobe__inst_token_end(s, part[2][1] - 1), e,
                sizeof e);
        snprintf(l->step, sizeof l->step, "%s(%s)", up ? "" : "-", e);
    } else
        return bad_loop(s, p);
    return 0;
}

static unsigned spec_region(struct strobe__inst_src *s, const struct strobe__inst_pragma *p, const char *what)
{
    char name[256];
    snprintf(name, sizeof name, "%s@%s", what, strobe__inst_function_at(s, p->off));
    return strobe__inst_region(s, name, p->line);
}

static int speculative_for(struct strobe__inst_src *s, const struct strobe__inst_pragma *p, const char *rest,
                           unsigned *nout)
{
    char threads[300], chunk[300];
    struct strobe__inst_span st;
    struct loop l = {.op = 0};
    if (spec_clauses(s, p, rest, threads, chunk, sizeof threads))
        return s->rc;
    if (!strobe__inst_stmt_after(s, p->end, &st))
        return strobe__inst_fail(s, p->line, "speculative for is not followed by a for loop");
    if (parse_loop(s, p, &st, &l) || alone(s, p, st.start, st.end, NULL))
        return s->rc;
    struct outline o = {.s = s, .p = p, .start = l.body, .end = st.end, .loop_var = l.var_decl};
    char name[64], prelude[1024];
    snprintf(name, sizeof name, "strobe__inst_spec%u", ++*nout);
    snprintf(prelude, sizeof prelude, "%s %s = (%s)(strobe__c->lb + strobe__k * strobe__c->st); ", l.type,
             l.var, l.type);
    int rc = outline(&o, name, "long strobe__k, void *strobe__p", prelude);
    if (rc == 0) {
        unsigned r = spec_region(s, p, "speculative for");
        char caps[2048], *code = NULL;
        capture_list(&o, caps, sizeof caps);
        const char *adj = l.op == 'l' ? " + 1" : l.op == 'g' ? " - 1" : "";
        if (asprintf(
                &code,
                "{ struct strobe__inst_spec strobe__c = {(void *[])%s, (long)(%s), (long)(%s)}; "
                "long strobe__n = strobe__inst_trip(strobe__c.lb, (long)(%s)%s, strobe__c.st); "
                "strobe_se_report_t strobe__se; strobe__inst_spec_begin(strobe__inst_r%u(), &strobe__se); "
                "if (!strobe_spec_for || strobe_spec_for(0, strobe__n, %s, %s, &strobe__c, %s) == -EINVAL) "
                "for (long strobe__k = 0; strobe__k < strobe__n; strobe__k++) %s(strobe__k, &strobe__c); "
                "strobe__inst_spec_end(strobe__inst_r%u(), &strobe__se); %s%s%s%s%s }",
                caps, l.lb, l.step, l.ub, adj, r, chunk, name, threads, name, r, l.declared ? "" : l.var,
                l.declared ? "" : " = (", l.declared ? "" : l.type,
                l.declared ? "" : ")(strobe__c.lb + strobe__n * strobe__c.st)", l.declared ? "" : ";") < 0)
            code = NULL;
        rc = replace_construct(s, p, &st, code);
    }
    free(o.caps);
    free(o.refs);
    return rc;
}

static int speculative_sections(struct strobe__inst_src *s, size_t at, const char *rest, unsigned *nout)
{
    const struct strobe__inst_pragma *p = &s->pragmas[at];
    char threads[300];
    struct strobe__inst_span st;
    if (spec_clauses(s, p, rest, threads, NULL, sizeof threads))
        return s->rc;
    if (!strobe__inst_stmt_after(s, p->end, &st) || s->buf[st.start] != '{')
        return strobe__inst_fail(s, p->line, "speculative sections is not followed by a compound statement");
    if (alone(s, p, st.start, st.end, "section"))
        return s->rc;
    struct outline o = {.s = s, .p = p, .loop_var = UINT32_MAX};
    unsigned first = ++*nout, n = 0;
    char fns[1024] = "";
    for (size_t i = at + 1; i < s->npragmas && s->pragmas[i].off < st.end && !s->rc; i++) {
        const struct strobe__inst_pragma *q = &s->pragmas[i];
        struct strobe__inst_span sec;
        if (!strobe__inst_stmt_after(s, q->end, &sec))
            return strobe__inst_fail(s, q->line, "speculative section is not followed by a statement");
        o.start = sec.start;
        o.end = sec.end;
        o.nrefs = 0;
        char name[64];
        snprintf(name, sizeof name, "strobe__inst_spec%u_%u", first, n++);
        if (outline(&o, name, "void *strobe__p", "") == 0)
            snprintf(fns + strlen(fns), sizeof fns - strlen(fns), "%s%s", n > 1 ? ", " : "", name);
    }
    int rc = s->rc;
    if (rc == 0 && n == 0)
        rc = strobe__inst_fail(s, p->line, "speculative sections has no speculative section");
    if (rc == 0) {
        unsigned r = spec_region(s, p, "speculative sections");
        char caps[2048], *code = NULL;
        capture_list(&o, caps, sizeof caps);
        if (asprintf(
                &code,
                "{ struct strobe__inst_spec strobe__c = {(void *[])%s, 0, 0}; "
                "static const strobe_spec_section_fn strobe__f[] = {%s}; "
                "strobe_se_report_t strobe__se; strobe__inst_spec_begin(strobe__inst_r%u(), &strobe__se); "
                "if (!strobe_spec_sections || strobe_spec_sections(strobe__f, %u, &strobe__c, %s) == "
                "-EINVAL) "
                "for (unsigned strobe__k = 0; strobe__k < %u; strobe__k++) strobe__f[strobe__k](&strobe__c); "
                "strobe__inst_spec_end(strobe__inst_r%u(), &strobe__se); }",
                caps, fns, r, n, threads, n, r) < 0)
            code = NULL;
        rc = replace_construct(s, p, &st, code);
    }
    free(o.caps);
    free(o.refs);
    return rc;
}

int strobe__inst_plan_spec(struct strobe__inst_src *s, bool tm)
{
    unsigned nout = 0;
    for (size_t i = 0; i < s->npragmas && !s->rc; i++) {
        const struct strobe__inst_pragma *p = &s->pragmas[i];
        if (p->family != STROBE__INST_TM && p->family != STROBE__INST_SPECULATIVE)
            continue;
        if (!tm)
            return strobe__inst_fail(s, p->line,
                                     "#pragma %s needs GCC's transactional memory: compile with gcc "
                                     "and pass -fgnu-tm (clang has no transactional memory)",
                                     p->family == STROBE__INST_TM ? "tm_atomic" : "speculative");
        if (p->family == STROBE__INST_TM) {
            tm_atomic(s, p);
            continue;
        }
        s->spec = true;
        size_t w = strcspn(p->text, " \t(");
        const char *rest = p->text + w;
        if (w == 3 && strncmp(p->text, "for", 3) == 0)
            speculative_for(s, p, rest, &nout);
        else if (w == 8 && strncmp(p->text, "sections", 8) == 0)
            speculative_sections(s, i, rest, &nout);
        else if (w == 7 && strncmp(p->text, "section", 7) == 0)
            ; /* taken by its sections, which refuses one elsewhere */
        else
            strobe__inst_fail(s, p->line, "unknown speculative directive '%s' (for, sections, section)",
                              p->text);
    }
    return s->rc;
}
