/* SPDX-License-Identifier: MIT */
/*
 * Rendering of the comparison of experiments (diff.h): the call paths of
 * the union tree by impact with both sides' values and their change, the
 * user metrics, TM statistics and MPI summaries matched by name, and the
 * regression gate's verdict; as text, as JSON and as the HTML page's
 * differential flame graph data. Every number comes from the diff model;
 * times go through units.c like the report's.
 */
#include "report/diff.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/jsonw.h"
#include "report/report.h"
#include "report/units.h"
#include "report/view.h"
#include "strobe/strobe.h"

static const char *const value_key[STROBE_DIFF_NVALUES] = {"visits", "incl_ns", "excl_ns", "samples"};

/* The value ranked by --sort. */
static int sort_value(int sort)
{
    return sort == STROBE_REPORT_SORT_EXCL     ? STROBE_DIFF_EXCL
           : sort == STROBE_REPORT_SORT_VISITS ? STROBE_DIFF_VISITS
                                               : STROBE_DIFF_INCL;
}

static double delta(const struct strobe_diff_node *n, int k)
{
    return n->v[1][k].mean - n->v[0][k].mean;
}

/* A path with its impact, for sorting. */
struct ranked_path {
    double impact; /* |change| of the sort key */
    uint32_t depth, node;
};

/* Largest change first; ties by depth, then by node index (creation
 * order: the first run's order), so the output is stable. */
static int by_impact(const void *pa, const void *pb)
{
    const struct ranked_path *a = pa, *b = pb;
    if (a->impact != b->impact)
        return a->impact < b->impact ? 1 : -1;
    if (a->depth != b->depth)
        return a->depth < b->depth ? -1 : 1;
    return a->node < b->node ? -1 : 1;
}

/* Every path but the root, by impact (malloc'd [nnodes - 1]) or NULL. */
static uint32_t *ranked(const struct strobe_diff *d, int sort)
{
    size_t n = d->nnodes ? d->nnodes - 1 : 0;
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    struct ranked_path *r = malloc((n ? n : 1) * sizeof *r);
    if (!idx || !r) {
        free(idx);
        free(r);
        return NULL;
    }
    int k = sort_value(sort);
    for (uint32_t i = 0; i < n; i++)
        r[i] = (struct ranked_path){fabs(delta(&d->nodes[i + 1], k)), d->nodes[i + 1].depth, i + 1};
    qsort(r, n, sizeof *r, by_impact);
    for (size_t i = 0; i < n; i++)
        idx[i] = r[i].node;
    free(r);
    return idx;
}

/* "main > compute > leaf" into *buf (grown as needed). 0 or -ENOMEM. */
static int path_name(const struct strobe_diff *d, uint32_t n, char **buf, size_t *cap)
{
    size_t len = 0;
    for (uint32_t i = n; i != 0 && i != STROBE_NONE; i = d->nodes[i].parent)
        len += strlen(d->nodes[i].name) + 3;
    if (len + 1 > *cap) {
        char *p = realloc(*buf, len + 1);
        if (!p)
            return -ENOMEM;
        *buf = p;
        *cap = len + 1;
    }
    size_t end = len > 3 ? len - 3 : 0;
    (*buf)[end] = 0;
    for (uint32_t i = n; i != 0 && i != STROBE_NONE; i = d->nodes[i].parent) {
        size_t l = strlen(d->nodes[i].name);
        end -= l;
        memcpy(*buf + end, d->nodes[i].name, l);
        if (end >= 3) {
            end -= 3;
            memcpy(*buf + end, " > ", 3);
        }
    }
    return 0;
}

/* Where a path is: "both", "a" or "b". */
static const char *presence(const struct strobe_diff_node *n)
{
    return n->in[0] && n->in[1] ? "both" : n->in[0] ? "a" : "b";
}

/* ---- text -------------------------------------------------------------- */

static uint64_t round_ns(double v)
{
    return v <= 0 ? 0 : (uint64_t)llround(v);
}

/* A time, a count (one decimal when a mean of repeated runs is not whole),
 * or a signed change of either. */
static char *fmt_value(char buf[STROBE_UNITS_LEN], double v, bool time, bool sign)
{
    const char *s = !sign ? "" : v > 0 ? "+" : v < 0 ? "-" : "";
    double a = fabs(v);
    if (time) {
        char t[STROBE_UNITS_LEN];
        snprintf(buf, STROBE_UNITS_LEN, "%s%s", s, strobe__fmt_time(t, round_ns(a)));
    } else if (a == floor(a)) {
        snprintf(buf, STROBE_UNITS_LEN, "%s%.0f", s, a);
    } else {
        snprintf(buf, STROBE_UNITS_LEN, "%s%.1f", s, a);
    }
    return buf;
}

/* "+12.5%", "-3.0%", "0.0%", or "new" when it was 0 in A. */
static char *fmt_rel(char buf[STROBE_UNITS_LEN], double a, double b)
{
    double r = strobe_diff_rel(a, b);
    if (isnan(r))
        snprintf(buf, STROBE_UNITS_LEN, "%s", b == 0 ? "0.0%" : "new");
    else
        snprintf(buf, STROBE_UNITS_LEN, "%+.1f%%", r);
    if (strcmp(buf, "+0.0%") == 0 || strcmp(buf, "-0.0%") == 0)
        strcpy(buf, "0.0%");
    return buf;
}

/* "1.000 ms..2.000 ms": a side's range of the value over its runs. */
static char *fmt_range(char buf[2 * STROBE_UNITS_LEN + 4], const struct strobe_diff_spread *s, bool time)
{
    char lo[STROBE_UNITS_LEN], hi[STROBE_UNITS_LEN];
    snprintf(buf, 2 * STROBE_UNITS_LEN + 4, "%s..%s", fmt_value(lo, s->min, time, false),
             fmt_value(hi, s->max, time, false));
    return buf;
}

static void cell(FILE *out, const char *s, int width)
{
    fputc(' ', out);
    strobe__cell(out, s, width);
}

/* The header lines: the runs of each side. */
static void text_sides(FILE *out, const struct strobe_diff *d, const struct strobe_diff_report_opts *o)
{
    static const char side_name[2] = {'A', 'B'};
    for (int s = 0; s < 2; s++) {
        fprintf(out, "%c: ", side_name[s]);
        for (size_t r = 0; r < d->nruns[s]; r++)
            fprintf(out, "%s%s", r ? ", " : "", o->dirs[s][r]);
        if (d->nruns[s] > 1)
            fprintf(out, " (%zu runs: means, with the range of inclusive time)", d->nruns[s]);
        fputc('\n', out);
    }
}

#define W_TIME 11
#define W_COUNT 9
#define W_REL 8
#define W_RANGE 23
#define W_SAMPLES 10

static void text_paths(FILE *out, const struct strobe_diff *d, const struct strobe_diff_report_opts *o,
                       const uint32_t *idx, char **name, size_t *cap)
{
    size_t npaths = d->nnodes ? d->nnodes - 1 : 0, only[2] = {0, 0};
    for (size_t n = 1; n < d->nnodes; n++)
        if (!d->nodes[n].in[0] || !d->nodes[n].in[1])
            only[d->nodes[n].in[1]]++;
    static const char *const sort_title[] = {"exclusive time", "inclusive time", "visits"};
    fprintf(out, "\ncall paths: %zu (%zu in both, %zu only in A, %zu only in B), by change of %s\n", npaths,
            npaths - only[0] - only[1], only[0], only[1], sort_title[o->sort]);
    bool spread = d->nruns[0] > 1 || d->nruns[1] > 1, samples = d->samples[0] && d->samples[1];
    static const struct {
        const char *title;
        int width;
    } cols[] = {{"incl A", W_TIME},    {"incl B", W_TIME},    {"Δ incl", W_TIME},
                {"Δ%", W_REL},         {"excl A", W_TIME},    {"excl B", W_TIME},
                {"visits A", W_COUNT}, {"visits B", W_COUNT}, {"Δ visits", W_COUNT}};
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
        cell(out, cols[c].title, cols[c].width);
    if (samples) {
        cell(out, "samples A", W_SAMPLES);
        cell(out, "samples B", W_SAMPLES);
    }
    if (spread) {
        cell(out, "incl A range", W_RANGE);
        cell(out, "incl B range", W_RANGE);
    }
    fputs("  path\n", out);
    size_t shown = o->top && o->top < npaths ? o->top : npaths;
    char b[STROBE_UNITS_LEN], r[2 * STROBE_UNITS_LEN + 4];
    for (size_t i = 0; i < shown; i++) {
        const struct strobe_diff_node *n = &d->nodes[idx[i]];
        const struct strobe_diff_spread(*v)[STROBE_DIFF_NVALUES] = n->v;
        cell(out, fmt_value(b, v[0][STROBE_DIFF_INCL].mean, true, false), W_TIME);
        cell(out, fmt_value(b, v[1][STROBE_DIFF_INCL].mean, true, false), W_TIME);
        cell(out, fmt_value(b, delta(n, STROBE_DIFF_INCL), true, true), W_TIME);
        cell(out, fmt_rel(b, v[0][STROBE_DIFF_INCL].mean, v[1][STROBE_DIFF_INCL].mean), W_REL);
        cell(out, fmt_value(b, v[0][STROBE_DIFF_EXCL].mean, true, false), W_TIME);
        cell(out, fmt_value(b, v[1][STROBE_DIFF_EXCL].mean, true, false), W_TIME);
        cell(out, fmt_value(b, v[0][STROBE_DIFF_VISITS].mean, false, false), W_COUNT);
        cell(out, fmt_value(b, v[1][STROBE_DIFF_VISITS].mean, false, false), W_COUNT);
        cell(out, fmt_value(b, delta(n, STROBE_DIFF_VISITS), false, true), W_COUNT);
        if (samples) {
            cell(out, fmt_value(b, v[0][STROBE_DIFF_SAMPLES].mean, false, false), W_SAMPLES);
            cell(out, fmt_value(b, v[1][STROBE_DIFF_SAMPLES].mean, false, false), W_SAMPLES);
        }
        if (spread) {
            cell(out, fmt_range(r, &v[0][STROBE_DIFF_INCL], true), W_RANGE);
            cell(out, fmt_range(r, &v[1][STROBE_DIFF_INCL], true), W_RANGE);
        }
        if (path_name(d, idx[i], name, cap) == 0)
            fprintf(out, "  %s", *name);
        if (!n->in[0] || !n->in[1])
            fprintf(out, " [only in %c]", n->in[0] ? 'A' : 'B');
        if (spread && !n->beyond_spread)
            fputs(" [within spread]", out);
        if (n->failed)
            fputs(" [FAILED]", out);
        fputc('\n', out);
    }
    if (shown < npaths)
        fprintf(out, "  ... %zu more call paths (--top 0 shows all)\n", npaths - shown);
}

/* The rows of named items (metrics, TM blocks, MPI functions): per item
 * and field that is not 0 on both sides, A, B, the change and Δ%. */
static void text_items(FILE *out, const struct strobe_diff *d, const char *title,
                       const struct strobe_diff_item *items, size_t nitems, const char *const *fields,
                       size_t nfields, const bool *is_time, char **name, size_t *cap)
{
    if (nitems == 0)
        return;
    fprintf(out, "\n%s\n", title);
    cell(out, "A", W_TIME);
    cell(out, "B", W_TIME);
    cell(out, "Δ", W_TIME);
    cell(out, "Δ%", W_REL);
    fputs("  what\n", out);
    char b[STROBE_UNITS_LEN];
    for (size_t i = 0; i < nitems; i++) {
        for (size_t f = 0; f < nfields; f++) {
            struct strobe_diff_spread a = strobe_diff_item_spread(d, &items[i], f, 0),
                                      bs = strobe_diff_item_spread(d, &items[i], f, 1);
            if (a.max == 0 && a.min == 0 && bs.max == 0 && bs.min == 0)
                continue;
            bool t = is_time && is_time[f];
            cell(out, fmt_value(b, a.mean, t, false), W_TIME);
            cell(out, fmt_value(b, bs.mean, t, false), W_TIME);
            cell(out, fmt_value(b, bs.mean - a.mean, t, true), W_TIME);
            cell(out, fmt_rel(b, a.mean, bs.mean), W_REL);
            fputs("  ", out);
            if (items[i].node != STROBE_NONE && path_name(d, items[i].node, name, cap) == 0)
                fprintf(out, "%s: ", *name);
            fprintf(out, "%s %s\n", items[i].name, fields[f]);
        }
    }
}

static const char *const metric_fields[STROBE_DIFF_METRIC_FIELDS] = {"count", "sum"};
static const char *const mpi_fields[STROBE_DIFF_MPI_FIELDS] = {"calls", "time"};
static const bool mpi_time[STROBE_DIFF_MPI_FIELDS] = {false, true};
static const char *const mpi_total_fields[STROBE_DIFF_MPI_NTOTALS] = {"time in MPI", "MPI calls", "messages",
                                                                      "message bytes"};
static const bool mpi_total_time[STROBE_DIFF_MPI_NTOTALS] = {true, false, false, false};

/* "transactions", "commits", "rollbacks", "aborts read_conflict", ... */
static void tm_field_names(char names[STROBE_DIFF_TM_FIELDS][40], const char *ptrs[STROBE_DIFF_TM_FIELDS])
{
    static const char *const first[3] = {"transactions", "commits", "rollbacks"};
    for (int f = 0; f < STROBE_DIFF_TM_FIELDS; f++) {
        if (f < 3)
            snprintf(names[f], 40, "%s", first[f]);
        else
            snprintf(names[f], 40, "aborts %s", strobe_tm_abort_name(f - 3));
        ptrs[f] = names[f];
    }
}

/* What a side lacks for a section compared only when both have it. */
static void text_one_sided(FILE *out, const char *what, const bool has[2])
{
    if (has[0] != has[1])
        fprintf(out, "\n%s: only %c has them; not compared\n", what, has[0] ? 'A' : 'B');
}

static void text_gate(FILE *out, const struct strobe_diff *d, const struct strobe_diff_report_opts *o,
                      const uint32_t *idx, char **name, size_t *cap)
{
    char floor[STROBE_UNITS_LEN], b[STROBE_UNITS_LEN], a_s[STROBE_UNITS_LEN], b_s[STROBE_UNITS_LEN];
    fprintf(out, "\ngate (--fail-above %g%%, --min-time %s): ", o->fail_above,
            strobe__fmt_time(floor, o->min_ns));
    if (o->nfailed == 0) {
        fputs("passed\n", out);
        return;
    }
    fprintf(out, "%zu call path%s failed\n", o->nfailed, o->nfailed == 1 ? "" : "s");
    for (size_t i = 0; i + 1 < d->nnodes; i++) {
        const struct strobe_diff_node *n = &d->nodes[idx[i]];
        if (!n->failed || path_name(d, idx[i], name, cap) != 0)
            continue;
        fprintf(out, "  FAILED %s: inclusive time %s -> %s (%s)\n", *name,
                fmt_value(a_s, n->v[0][STROBE_DIFF_INCL].mean, true, false),
                fmt_value(b_s, n->v[1][STROBE_DIFF_INCL].mean, true, false),
                fmt_rel(b, n->v[0][STROBE_DIFF_INCL].mean, n->v[1][STROBE_DIFF_INCL].mean));
    }
}

int strobe_report_diff_text(FILE *out, const struct strobe_diff *d, const struct strobe_diff_report_opts *o)
{
    uint32_t *idx = ranked(d, o->sort);
    if (!idx)
        return -ENOMEM;
    char *name = NULL;
    size_t cap = 0;
    text_sides(out, d, o);
    text_paths(out, d, o, idx, &name, &cap);
    text_one_sided(out, "samples", d->samples);
    text_items(out, d, "user metrics per call path", d->metrics, d->nmetrics, metric_fields,
               STROBE_DIFF_METRIC_FIELDS, NULL, &name, &cap);
    text_one_sided(out, "TM statistics", d->tm);
    if (d->tm[0] && d->tm[1]) {
        char names[STROBE_DIFF_TM_FIELDS][40];
        const char *ptrs[STROBE_DIFF_TM_FIELDS];
        tm_field_names(names, ptrs);
        text_items(out, d, "transactional memory per atomic block", d->tm_blocks, d->ntm_blocks, ptrs,
                   STROBE_DIFF_TM_FIELDS, NULL, &name, &cap);
    }
    text_one_sided(out, "MPI summaries", d->mpi);
    if (d->mpi[0] && d->mpi[1]) {
        struct strobe_diff_item totals = {.name = "all ranks:", .node = STROBE_NONE, .runs = d->mpi_totals};
        text_items(out, d, "MPI", &totals, 1, mpi_total_fields, STROBE_DIFF_MPI_NTOTALS, mpi_total_time,
                   &name, &cap);
        text_items(out, d, "MPI per function", d->mpi_funcs, d->nmpi_funcs, mpi_fields,
                   STROBE_DIFF_MPI_FIELDS, mpi_time, &name, &cap);
    }
    if (o->gate)
        text_gate(out, d, o, idx, &name, &cap);
    free(name);
    free(idx);
    return strobe__report_flush(out);
}

/* ---- JSON -------------------------------------------------------------- */

/* A side's values of a path: means, and with repeated runs min and max. */
static void json_side(struct strobe__jw *w, const char *key, const struct strobe_diff *d,
                      const struct strobe_diff_spread *v, int s)
{
    int nvalues = d->samples[0] && d->samples[1] ? STROBE_DIFF_NVALUES : STROBE_DIFF_SAMPLES;
    strobe__jw_open(w, key, '{', true);
    for (int k = 0; k < nvalues; k++)
        strobe__jw_double(w, value_key[k], v[k].mean);
    if (d->nruns[s] > 1) {
        static const char *const which[2] = {"min", "max"};
        for (int m = 0; m < 2; m++) {
            strobe__jw_open(w, which[m], '{', true);
            for (int k = 0; k < nvalues; k++)
                strobe__jw_double(w, value_key[k], m ? v[k].max : v[k].min);
            strobe__jw_close(w);
        }
    }
    strobe__jw_close(w);
}

/* rel: percent, null when A is 0 */
static void json_change(struct strobe__jw *w, const char *key, const double *a, const double *b, size_t n,
                        const char *const *keys, bool rel)
{
    strobe__jw_open(w, key, '{', true);
    for (size_t k = 0; k < n; k++)
        strobe__jw_double(w, keys[k], rel ? strobe_diff_rel(a[k], b[k]) : b[k] - a[k]);
    strobe__jw_close(w);
}

static void json_node_change(struct strobe__jw *w, const struct strobe_diff *d,
                             const struct strobe_diff_node *n)
{
    int nvalues = d->samples[0] && d->samples[1] ? STROBE_DIFF_NVALUES : STROBE_DIFF_SAMPLES;
    double a[STROBE_DIFF_NVALUES], b[STROBE_DIFF_NVALUES];
    for (int k = 0; k < STROBE_DIFF_NVALUES; k++) {
        a[k] = n->v[0][k].mean;
        b[k] = n->v[1][k].mean;
    }
    json_change(w, "delta", a, b, (size_t)nvalues, value_key, false);
    json_change(w, "rel_pct", a, b, (size_t)nvalues, value_key, true);
}

/* Items as objects {name, [path], a, b, delta, rel_pct} over FIELDS. */
static void json_items(struct strobe__jw *w, const char *key, const struct strobe_diff *d,
                       const struct strobe_diff_item *items, size_t nitems, const char *const *fields,
                       size_t nfields)
{
    strobe__jw_open(w, key, '[', false);
    for (size_t i = 0; i < nitems; i++) {
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_str(w, "name", items[i].name);
        if (items[i].node != STROBE_NONE)
            strobe__jw_u64(w, "path", items[i].node);
        double v[2][STROBE_DIFF_TM_FIELDS];
        for (int s = 0; s < 2; s++) {
            strobe__jw_open(w, s ? "b" : "a", '{', true);
            for (size_t f = 0; f < nfields; f++) {
                v[s][f] = strobe_diff_item_spread(d, &items[i], f, s).mean;
                strobe__jw_double(w, fields[f], v[s][f]);
            }
            strobe__jw_close(w);
        }
        json_change(w, "delta", v[0], v[1], nfields, fields, false);
        json_change(w, "rel_pct", v[0], v[1], nfields, fields, true);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
}

int strobe_report_diff_json(FILE *out, const struct strobe_diff *d, const struct strobe_diff_report_opts *o)
{
    uint32_t *idx = ranked(d, o->sort);
    if (!idx)
        return -ENOMEM;
    struct strobe__jw jw = {.out = out}, *w = &jw;
    strobe__jw_open(w, NULL, '{', false);
    strobe__jw_str(w, "schema", "strobe-diff");
    strobe__jw_u64(w, "version", STROBE_DIFF_JSON_VERSION);
    for (int s = 0; s < 2; s++) {
        strobe__jw_open(w, s ? "b" : "a", '{', false);
        strobe__jw_open(w, "runs", '[', true);
        for (size_t r = 0; r < d->nruns[s]; r++)
            strobe__jw_str(w, NULL, o->dirs[s][r]);
        strobe__jw_close(w);
        strobe__jw_bool(w, "samples", d->samples[s]);
        strobe__jw_bool(w, "tm", d->tm[s]);
        strobe__jw_bool(w, "mpi", d->mpi[s]);
        strobe__jw_close(w);
    }
    strobe__jw_str(w, "sort", strobe_report_sort_name(o->sort));
    strobe__jw_open(w, "paths", '[', false);
    for (size_t i = 0; i + 1 < d->nnodes; i++) {
        const struct strobe_diff_node *n = &d->nodes[idx[i]];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "id", idx[i]);
        strobe__jw_u64(w, "parent", n->parent);
        strobe__jw_u64(w, "depth", n->depth);
        strobe__jw_str(w, "name", n->name);
        strobe__jw_str(w, "file", n->file);
        strobe__jw_str(w, "in", presence(n));
        json_side(w, "a", d, n->v[0], 0);
        json_side(w, "b", d, n->v[1], 1);
        json_node_change(w, d, n);
        strobe__jw_bool(w, "beyond_spread", n->beyond_spread);
        if (o->gate)
            strobe__jw_bool(w, "failed", n->failed);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    json_items(w, "metrics", d, d->metrics, d->nmetrics, metric_fields, STROBE_DIFF_METRIC_FIELDS);
    if (d->tm[0] && d->tm[1]) {
        char names[STROBE_DIFF_TM_FIELDS][40];
        const char *ptrs[STROBE_DIFF_TM_FIELDS];
        tm_field_names(names, ptrs);
        for (int f = 3; f < STROBE_DIFF_TM_FIELDS; f++) /* "aborts_read_conflict" */
            names[f][6] = '_';
        json_items(w, "tm", d, d->tm_blocks, d->ntm_blocks, ptrs, STROBE_DIFF_TM_FIELDS);
    }
    if (d->mpi[0] && d->mpi[1]) {
        static const char *const total_keys[STROBE_DIFF_MPI_NTOTALS] = {"mpi_ns", "calls", "messages",
                                                                        "bytes"};
        static const char *const func_keys[STROBE_DIFF_MPI_FIELDS] = {"calls", "ns"};
        strobe__jw_open(w, "mpi", '{', false);
        struct strobe_diff_item totals = {.name = "all", .node = STROBE_NONE, .runs = d->mpi_totals};
        json_items(w, "totals", d, &totals, 1, total_keys, STROBE_DIFF_MPI_NTOTALS);
        json_items(w, "functions", d, d->mpi_funcs, d->nmpi_funcs, func_keys, STROBE_DIFF_MPI_FIELDS);
        strobe__jw_close(w);
    }
    if (o->gate) {
        strobe__jw_open(w, "gate", '{', false);
        strobe__jw_double(w, "fail_above_pct", o->fail_above);
        strobe__jw_u64(w, "min_time_ns", o->min_ns);
        strobe__jw_open(w, "failed", '[', true);
        for (size_t i = 0; i + 1 < d->nnodes; i++)
            if (d->nodes[idx[i]].failed)
                strobe__jw_u64(w, NULL, idx[i]);
        strobe__jw_close(w);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    fputc('\n', out);
    free(idx);
    return strobe__report_flush(out);
}

/* ---- HTML data --------------------------------------------------------- */

void strobe__report_diff_html_data(struct strobe__jw *w, const char *key, const struct strobe_diff *d,
                                   const struct strobe_diff_report_opts *o)
{
    strobe__jw_open(w, key, '{', false);
    for (int s = 0; s < 2; s++) {
        strobe__jw_open(w, s ? "b_runs" : "a_runs", '[', true);
        for (size_t r = 0; r < d->nruns[s]; r++)
            strobe__jw_str(w, NULL, o->dirs[s][r]);
        strobe__jw_close(w);
    }
    /* columns in node order: parents come before their children */
    strobe__jw_open(w, "parent", '[', true);
    for (size_t n = 0; n < d->nnodes; n++)
        strobe__jw_ref(w, NULL, d->nodes[n].parent);
    strobe__jw_close(w);
    strobe__jw_open(w, "name", '[', true);
    for (size_t n = 0; n < d->nnodes; n++)
        strobe__jw_str(w, NULL, d->nodes[n].name);
    strobe__jw_close(w);
    strobe__jw_open(w, "in", '[', true);
    for (size_t n = 0; n < d->nnodes; n++)
        strobe__jw_str(w, NULL, presence(&d->nodes[n]));
    strobe__jw_close(w);
    static const char *const cols[2][2] = {{"visits_a", "visits_b"}, {"incl_a", "incl_b"}};
    for (int k = 0; k < 2; k++) {
        for (int s = 0; s < 2; s++) {
            strobe__jw_open(w, cols[k][s], '[', true);
            for (size_t n = 0; n < d->nnodes; n++)
                strobe__jw_double(w, NULL, d->nodes[n].v[s][k ? STROBE_DIFF_INCL : STROBE_DIFF_VISITS].mean);
            strobe__jw_close(w);
        }
    }
    strobe__jw_close(w);
}
