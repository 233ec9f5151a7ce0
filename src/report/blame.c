/* SPDX-License-Identifier: MIT */
/* The blame section of the text and JSON reports (see blame.h). */
#include "report/blame.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blame_table.h"

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* "local", or "heap, allocated at FILE:LINE" */
static void kind_cell(char *buf, size_t size, const struct strobe_blame_var *v)
{
    if (v->kind == STROBE__BLAME_HEAP && v->file[0])
        snprintf(buf, size, "heap, allocated at %s:%u", v->file, v->line);
    else
        snprintf(buf, size, "%s", strobe__blame_kind_name(v->kind));
}

/* "func file:line" or "global" */
static void defined_cell(char *buf, size_t size, const struct strobe_blame_var *v)
{
    if (!v->function)
        snprintf(buf, size, "global");
    else if (v->file[0] && v->kind != STROBE__BLAME_HEAP)
        snprintf(buf, size, "%s %s:%u", v->function, v->file, v->line);
    else
        snprintf(buf, size, "%s", v->function);
}

struct var_table {
    const struct strobe_blame_model *m;
    int wname, wtype, wdef;
};

static void var_row(FILE *out, const struct var_table *vt, uint32_t i, int depth, bool measure, int *w)
{
    const struct strobe_blame_var *v = &vt->m->vars[i];
    char def[1024], kind[1024];
    defined_cell(def, sizeof def, v);
    kind_cell(kind, sizeof kind, v);
    int wn = 2 * depth + (int)strlen(v->name);
    if (measure) {
        w[0] = wn > w[0] ? wn : w[0];
        w[1] = (int)strlen(v->type) > w[1] ? (int)strlen(v->type) : w[1];
        w[2] = (int)strlen(def) > w[2] ? (int)strlen(def) : w[2];
    } else {
        fprintf(out, "  %8" PRIu64 " %6.1f%%  %*s%-*s  %-*s  %-*s  %s\n", v->samples,
                pct(v->samples, vt->m->samples), 2 * depth, "", vt->wname - 2 * depth, v->name, vt->wtype,
                v->type, vt->wdef, def, kind);
    }
    /* its display children, largest first (vars are in that order) */
    for (uint32_t c = i + 1; c < vt->m->nvars; c++)
        if (vt->m->vars[c].parent == i)
            var_row(out, vt, c, depth + 1, measure, w);
}

void strobe__report_blame_text(FILE *out, const struct strobe_blame_model *m, size_t top)
{
    fputs("\nData-centric blame (strobe report --blame; docs/blame.md)\n", out);
    fprintf(out, "  %" PRIu64 " samples", m->samples);
    if (m->hz)
        fprintf(out, " at %" PRIu32 " Hz", m->hz);
    else
        fputs(" from the sample list", out);
    fprintf(out, ", %zu distinct stacks; blame tables in %zu module%s\n", m->nstacks, m->ntables,
            m->ntables == 1 ? "" : "s");
    if (m->ntables == 0)
        fputs("  (no sampled module has a blame table: build the program with `strobe cc`, which stores one)\n",
              out);

    fputs(
        "\nVariables (blame: the samples whose statements contribute to each one's value; a row includes the "
        "rows under it)\n",
        out);
    struct var_table vt = {m, 8, 4, 10};
    int w[3] = {8, 4, 10};
    size_t roots = 0, shown = 0;
    for (uint32_t i = 0; i < m->nvars; i++)
        if (m->vars[i].parent == STROBE_NONE && (!top || roots++ < top))
            var_row(out, &vt, i, 0, true, w);
    vt.wname = w[0];
    vt.wtype = w[1];
    vt.wdef = w[2];
    fprintf(out, "  %8s %7s  %-*s  %-*s  %-*s  %s\n", "samples", "blame%", vt.wname, "variable", vt.wtype,
            "type", vt.wdef, "defined in", "kind");
    for (uint32_t i = 0; i < m->nvars; i++)
        if (m->vars[i].parent == STROBE_NONE && (!top || shown++ < top))
            var_row(out, &vt, i, 0, false, w);
    if (top && roots > top)
        fprintf(out, "  (%zu more; --top 0 shows all)\n", roots - top);
    if (m->nvars == 0)
        fputs("  (no sample was charged to a variable)\n", out);
    fprintf(out, "  unknown data: %" PRIu64 " samples (%.1f%%)", m->unknown, pct(m->unknown, m->samples));
    const char *sep = ": ";
    for (int r = 0; r < STROBE_BLAME_NREASONS; r++)
        if (m->by_reason[r]) {
            fprintf(out, "%s%s %" PRIu64, sep, strobe_blame_reason_name(r), m->by_reason[r]);
            sep = ", ";
        }
    fputc('\n', out);
    if (m->caller_unknown)
        fprintf(out,
                "  (%" PRIu64
                " charged samples found no call record for their exit variables: caller unknown)\n",
                m->caller_unknown);

    fputs("\nFunctions (code-centric: samples in each function (self) and with it on the stack (total); its "
          "top variable, its own or a global)\n",
          out);
    fprintf(out, "  %8s %8s %8s  %-24s  %s\n", "self", "total", "unknown", "top variable",
            "function  file:line");
    for (size_t i = 0; i < m->nfuncs && (!top || i < top); i++) {
        const struct strobe_blame_func *f = &m->funcs[i];
        char var[256] = "-";
        if (f->top_var != STROBE_NONE)
            snprintf(var, sizeof var, "%s %.1f%%", m->vars[f->top_var].name, pct(f->top_samples, f->total));
        fprintf(out, "  %8" PRIu64 " %8" PRIu64 " %7.1f%%  %-24s  %s", f->self, f->total,
                pct(f->unknown, f->total), var, f->name);
        if (f->file[0])
            fprintf(out, "  %s:%u", f->file, f->line);
        fputc('\n', out);
    }
    if (top && m->nfuncs > top)
        fprintf(out, "  (%zu more; --top 0 shows all)\n", m->nfuncs - top);

    for (size_t p = 0; p < m->npoints; p++) {
        const struct strobe_blame_point *pt = &m->points[p];
        fprintf(out, "\nBlame point %s (hybrid): %" PRIu64 " samples through it (%.1f%%)", pt->function,
                pt->samples, pct(pt->samples, m->samples));
        if (!pt->samples) {
            fputs(", it was never sampled\n", out);
            continue;
        }
        fputs(", most common call path: ", out);
        for (size_t i = 0; i < pt->npath; i++)
            fprintf(out, "%s%s", i ? " > " : "", pt->path[i]);
        fputc('\n', out);
        fprintf(out, "  %8s %7s  %s\n", "samples", "%", "its variable");
        for (size_t i = 0; i < pt->nvars && (!top || i < top); i++)
            fprintf(out, "  %8" PRIu64 " %6.1f%%  %s\n", pt->vars[i].samples,
                    pct(pt->vars[i].samples, pt->samples), m->vars[pt->vars[i].var].name);
        if (pt->ncallees) {
            fputs("  in callees:", out);
            for (size_t i = 0; i < pt->ncallees && (!top || i < top); i++)
                fprintf(out, "%s %s %" PRIu64, i ? "," : "", pt->callees[i].name, pt->callees[i].samples);
            fputc('\n', out);
        }
    }
}

/* A percentage with one decimal, as a JSON number. */
static void jw_pct(struct strobe__jw *w, const char *key, uint64_t a, uint64_t b)
{
    strobe__jw_key(w, key);
    fprintf(w->out, "%.1f", pct(a, b));
}

void strobe__report_blame_json(struct strobe__jw *w, const struct strobe_blame_model *m)
{
    strobe__jw_open(w, "blame", '{', false);
    strobe__jw_u64(w, "samples", m->samples);
    strobe__jw_u64(w, "hz", m->hz);
    strobe__jw_open(w, "unknown", '{', true);
    strobe__jw_u64(w, "samples", m->unknown);
    jw_pct(w, "percent", m->unknown, m->samples);
    strobe__jw_open(w, "by_reason", '{', true);
    for (int r = 0; r < STROBE_BLAME_NREASONS; r++)
        strobe__jw_u64(w, strobe_blame_reason_name(r), m->by_reason[r]);
    strobe__jw_close(w);
    strobe__jw_close(w);
    strobe__jw_u64(w, "caller_unknown", m->caller_unknown);
    strobe__jw_open(w, "variables", '[', false);
    for (uint32_t i = 0; i < m->nvars; i++) {
        const struct strobe_blame_var *v = &m->vars[i];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "id", i);
        strobe__jw_str(w, "name", v->name);
        strobe__jw_str(w, "type", v->type);
        strobe__jw_str(w, "kind", strobe__blame_kind_name(v->kind));
        if (v->function)
            strobe__jw_str(w, "function", v->function);
        else
            strobe__jw_null(w, "function");
        strobe__jw_str(w, "file", v->file);
        strobe__jw_u64(w, "line", v->line);
        strobe__jw_ref(w, "parent", v->parent);
        strobe__jw_u64(w, "samples", v->samples);
        jw_pct(w, "percent", v->samples, m->samples);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "functions", '[', false);
    for (size_t i = 0; i < m->nfuncs; i++) {
        const struct strobe_blame_func *f = &m->funcs[i];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_str(w, "name", f->name);
        strobe__jw_str(w, "file", f->file);
        strobe__jw_u64(w, "line", f->line);
        strobe__jw_u64(w, "self", f->self);
        strobe__jw_u64(w, "total", f->total);
        strobe__jw_ref(w, "top_variable", f->top_var);
        strobe__jw_u64(w, "top_samples", f->top_samples);
        strobe__jw_u64(w, "unknown", f->unknown);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "points", '[', false);
    for (size_t p = 0; p < m->npoints; p++) {
        const struct strobe_blame_point *pt = &m->points[p];
        strobe__jw_open(w, NULL, '{', false);
        strobe__jw_str(w, "function", pt->function);
        strobe__jw_u64(w, "samples", pt->samples);
        strobe__jw_open(w, "path", '[', true);
        for (size_t i = 0; i < pt->npath; i++)
            strobe__jw_str(w, NULL, pt->path[i]);
        strobe__jw_close(w);
        strobe__jw_open(w, "variables", '[', false);
        for (size_t i = 0; i < pt->nvars; i++) {
            strobe__jw_open(w, NULL, '{', true);
            strobe__jw_u64(w, "id", pt->vars[i].var);
            strobe__jw_u64(w, "samples", pt->vars[i].samples);
            jw_pct(w, "percent", pt->vars[i].samples, pt->samples);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
        strobe__jw_open(w, "callees", '[', false);
        for (size_t i = 0; i < pt->ncallees; i++) {
            strobe__jw_open(w, NULL, '{', true);
            strobe__jw_str(w, "name", pt->callees[i].name);
            strobe__jw_u64(w, "samples", pt->callees[i].samples);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_close(w);
}
