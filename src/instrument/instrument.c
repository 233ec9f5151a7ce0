/* SPDX-License-Identifier: MIT */
/*
 * The directive instrumenter (instrument.h): takes the families' options
 * out of the compiler arguments, parses the file (source.c), plans the
 * edits of strobe's own directives here and of the others in omp.c and
 * spec.c, and writes the result.
 */
#include "instrument/instrument.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instrument/omp.h"
#include "instrument/source.h"
#include "instrument/spec.h"
#include "strobe/strobe.h"

#define NAME_MAX_LEN 128

enum strobe_kind { P_BEGIN, P_END, P_STMT, P_OFF, P_ON };

/* A strobe directive, parsed. */
struct strobe_pragma {
    enum strobe_kind kind;
    char name[NAME_MAX_LEN];
};

/* Parses the words of a strobe directive ("region begin(NAME)", ...). */
static int parse_words(struct strobe__inst_src *s, const struct strobe__inst_pragma *p,
                       struct strobe_pragma *out)
{
    char name[NAME_MAX_LEN] = "", buf[STROBE__INST_TEXT_MAX];
    const char *text = p->text;
    int n = 0;
    while (*text == ' ' || *text == '\t')
        text++;
    size_t len = strlen(text);
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
        len--;
    snprintf(buf, sizeof buf, "%.*s", (int)len, text);
    text = buf;
    if (strcmp(text, "off") == 0)
        out->kind = P_OFF;
    else if (strcmp(text, "on") == 0)
        out->kind = P_ON;
    else if (sscanf(text, "region begin ( %127[A-Za-z0-9_.:-] ) %n", name, &n) == 1 && text[n] == 0)
        out->kind = P_BEGIN;
    else if (sscanf(text, "region end ( %127[A-Za-z0-9_.:-] ) %n", name, &n) == 1 && text[n] == 0)
        out->kind = P_END;
    else if (sscanf(text, "region ( %127[A-Za-z0-9_.:-] ) %n", name, &n) == 1 && text[n] == 0)
        out->kind = P_STMT;
    else
        return strobe__inst_fail(
            s, p->line,
            "unknown strobe pragma (region begin(NAME), region end(NAME), region(NAME), off, on): %s", text);
    snprintf(out->name, sizeof out->name, "%s", name);
    return 0;
}

/* Plans strobe's own directives: pairs begins and ends, checks that
 * `off` and `on` alternate, and removes the directives they exclude. */
static int plan_strobe(struct strobe__inst_src *s)
{
    bool off = false;
    struct open {
        unsigned region, line;
        char name[NAME_MAX_LEN];
    } *open = calloc(s->npragmas + 1, sizeof *open);
    size_t nopen = 0;
    if (!open)
        return s->rc = -ENOMEM;
    for (size_t i = 0; i < s->npragmas && !s->rc; i++) {
        const struct strobe__inst_pragma *p = &s->pragmas[i];
        if (p->family != STROBE__INST_STROBE)
            continue;
        struct strobe_pragma sp;
        if (parse_words(s, p, &sp))
            break;
        if (sp.kind == P_OFF || sp.kind == P_ON) {
            if ((sp.kind == P_OFF) == off)
                strobe__inst_fail(s, p->line, off ? "strobe off while off" : "strobe on without off");
            off = sp.kind == P_OFF;
            strobe__inst_replace(s, p, "");
            continue;
        }
        if (off) {
            strobe__inst_replace(s, p, "");
            continue;
        }
        char code[96];
        if (sp.kind == P_BEGIN) {
            unsigned r = strobe__inst_region(s, sp.name, p->line);
            open[nopen].region = r;
            open[nopen].line = p->line;
            snprintf(open[nopen++].name, sizeof open->name, "%s", sp.name);
            snprintf(code, sizeof code, "strobe__inst_enter(strobe__inst_r%u());", r);
            strobe__inst_replace(s, p, code);
        } else if (sp.kind == P_END) {
            if (!nopen || strcmp(open[nopen - 1].name, sp.name) != 0) {
                strobe__inst_fail(s, p->line, "region end without its begin (regions nest): %s", sp.name);
                break;
            }
            snprintf(code, sizeof code, "strobe__inst_exit(strobe__inst_r%u());", open[--nopen].region);
            strobe__inst_replace(s, p, code);
        } else {
            struct strobe__inst_span st;
            if (!strobe__inst_stmt_after(s, p->end, &st)) {
                strobe__inst_fail(s, p->line, "region is not followed by a statement in its block: %s",
                                  sp.name);
                break;
            }
            unsigned r = strobe__inst_region(s, sp.name, p->line);
            strobe__inst_replace(s, p, "");
            /* a cleanup leaves the region however the statement is left */
            strobe__inst_edit(
                s, st.start, 0, STROBE__INST_OPEN, p->off,
                "{ strobe_region_t *strobe__inst_s%u __attribute__((cleanup(strobe__inst_leave), unused)) = "
                "strobe__inst_enter(strobe__inst_r%u()); ",
                r, r);
            strobe__inst_edit(s, st.end, 0, STROBE__INST_CLOSE, p->off, " }");
        }
    }
    if (!s->rc && nopen)
        strobe__inst_fail(s, open[nopen - 1].line, "region begin without its end: %s", open[nopen - 1].name);
    free(open);
    return s->rc;
}

/* The compiler arguments for libclang: -fopenmp becomes the _OPENMP macro
 * alone (libclang's OpenMP AST hides the statements inside a construct,
 * the plain one has their exact extents), -fgnu-tm, which clang does not
 * know, goes. */
static const char **parse_args(const char *const *args, int nargs, int *n, bool *omp, bool *tm)
{
    const char **out = calloc((size_t)nargs + 1, sizeof *out);
    if (!out)
        return NULL;
    *n = 0;
    for (int i = 0; i < nargs; i++) {
        if (strcmp(args[i], "-fopenmp") == 0 || strncmp(args[i], "-fopenmp=", 9) == 0) {
            if (!*omp)
                out[(*n)++] = "-D_OPENMP=201511";
            *omp = true;
        } else if (strcmp(args[i], "-fgnu-tm") == 0) {
            *tm = true;
        } else {
            out[(*n)++] = args[i];
        }
    }
    return out;
}

int strobe__instrument_file(const char *in, const char *out, const char *const *args, int nargs,
                            struct strobe_errbuf *eb)
{
    bool omp = false, tm = false;
    int n;
    const char **cargs = parse_args(args, nargs, &n, &omp, &tm);
    if (!cargs)
        return strobe__error(eb, -ENOMEM, "%s: out of memory", in);
    struct strobe__inst_src s = {.omp = omp, .watch = omp ? strobe__inst_omp_locks : NULL};
    CXIndex idx = clang_createIndex(0, 0);
    int rc = strobe__inst_src_open(&s, idx, in, cargs, n, eb);
    if (rc == 0 && plan_strobe(&s) == 0 && strobe__inst_plan_omp(&s) == 0)
        strobe__inst_plan_spec(&s, tm);
    if (rc == 0 && (rc = s.rc) == -ENOMEM)
        rc = strobe__error(eb, -ENOMEM, "%s: out of memory", in);
    if (rc == 0)
        rc = strobe__inst_write(&s, out);
    strobe__inst_src_close(&s);
    clang_disposeIndex(idx);
    free(cargs);
    return rc;
}
