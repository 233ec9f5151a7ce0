/* SPDX-License-Identifier: MIT */
/*
 * JSON rendering of the report (schema: docs/formats/report-json.md). The
 * JSON is complete whatever the text options say (--top and --threads do
 * not apply; --sort orders the flat profile and the children of each call
 * tree node) and carries exact integers: nanoseconds and counts as read,
 * never rounded or scaled. The call tree is a flat pre-order array of nodes
 * with parent ids, so arbitrarily deep recursion neither nests the
 * document nor exceeds a parser's nesting limit.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/locks.h"
#include "report/malloc.h"
#include "report/report.h"
#include "report/score.h"
#include "report/verdict.h"
#include "report/view.h"
#include "common/format.h"
#include "strobe/strobe.h"

/* ---- A minimal streaming writer ----------------------------------------
 * Containers opened "inline" print their members on one line; the others
 * put each member on its own line, indented by two spaces per level. */
#define JW_MAX_DEPTH 16

struct jw {
    FILE *out;
    int depth;
    bool first[JW_MAX_DEPTH];
    bool inline_[JW_MAX_DEPTH];
    char close[JW_MAX_DEPTH];
};

/* Length of the valid UTF-8 sequence at p, or 0 when it is not valid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static int utf8_len(const unsigned char *p)
{
    unsigned char c = p[0];
    unsigned char lo = 0x80, hi = 0xbf;
    int n;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4;
    else
        return 0;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* Writes s as a JSON string. Bytes that are not valid UTF-8 (file names
 * are arbitrary bytes) become U+FFFD so the document stays valid JSON. */
static void jw_string(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    fputc('"', out);
    while (*p) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
            p++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n':
                fputs("\\n", out);
                break;
            case '\t':
                fputs("\\t", out);
                break;
            case '\r':
                fputs("\\r", out);
                break;
            default:
                fprintf(out, "\\u%04x", c);
                break;
            }
            p++;
        } else if (c < 0x80) {
            fputc(c, out);
            p++;
        } else {
            int n = utf8_len(p);
            if (n) {
                fwrite(p, 1, (size_t)n, out);
                p += n;
            } else {
                fputs("\\ufffd", out);
                p++;
            }
        }
    }
    fputc('"', out);
}

/* Separator and key before a member (key NULL inside arrays). */
static void jw_key(struct jw *w, const char *key)
{
    int d = w->depth;
    if (d > 0) {
        bool first = w->first[d];
        w->first[d] = false;
        if (!first)
            fputc(',', w->out);
        if (w->inline_[d]) {
            if (!first)
                fputc(' ', w->out);
        } else {
            fputc('\n', w->out);
            for (int i = 0; i < d; i++)
                fputs("  ", w->out);
        }
    }
    if (key) {
        jw_string(w->out, key);
        fputs(": ", w->out);
    }
}

static void jw_open(struct jw *w, const char *key, char open, bool inl)
{
    jw_key(w, key);
    fputc(open, w->out);
    if (w->depth + 1 >= JW_MAX_DEPTH)
        abort(); /* the schema nests 5 levels; deeper is a bug here */
    bool parent_inline = w->depth > 0 && w->inline_[w->depth];
    w->depth++;
    w->first[w->depth] = true;
    w->inline_[w->depth] = inl || parent_inline;
    w->close[w->depth] = open == '{' ? '}' : ']';
}

static void jw_close(struct jw *w)
{
    int d = w->depth--;
    if (!w->inline_[d] && !w->first[d]) {
        fputc('\n', w->out);
        for (int i = 0; i < w->depth; i++)
            fputs("  ", w->out);
    }
    fputc(w->close[d], w->out);
}

static void jw_u64(struct jw *w, const char *key, uint64_t v)
{
    jw_key(w, key);
    fprintf(w->out, "%" PRIu64, v);
}

static void jw_i64(struct jw *w, const char *key, int64_t v)
{
    jw_key(w, key);
    fprintf(w->out, "%" PRId64, v);
}

static void jw_double(struct jw *w, const char *key, double v)
{
    jw_key(w, key);
    if (isfinite(v))
        fprintf(w->out, "%.17g", v);
    else
        fputs("null", w->out);
}

static void jw_null(struct jw *w, const char *key)
{
    jw_key(w, key);
    fputs("null", w->out);
}

static void jw_bool(struct jw *w, const char *key, bool v)
{
    jw_key(w, key);
    fputs(v ? "true" : "false", w->out);
}

static void jw_str(struct jw *w, const char *key, const char *s)
{
    jw_key(w, key);
    jw_string(w->out, s);
}

/* Index or null for STROBE_NONE references. */
static void jw_ref(struct jw *w, const char *key, uint32_t v)
{
    if (v == STROBE_NONE)
        jw_null(w, key);
    else
        jw_u64(w, key, v);
}

/* ---- Document ---------------------------------------------------------- */

/* Opens the top-level object: schema, version, dir. */
static void json_begin(struct jw *w, const char *schema, const struct strobe_experiment *exp)
{
    jw_open(w, NULL, '{', false);
    jw_str(w, "schema", schema);
    jw_u64(w, "version", STROBE_REPORT_JSON_VERSION);
    jw_str(w, "dir", exp->dir);
}

/* visits, incl_ns, excl_ns, min_ns, max_ns (null without a completed
 * visit), sumsq_ns2 */
static void json_stats(struct jw *w, const struct strobe_stats *s)
{
    jw_u64(w, "visits", s->visits);
    jw_u64(w, "incl_ns", s->incl_ns);
    jw_u64(w, "excl_ns", s->excl_ns);
    if (s->min_ns == UINT64_MAX) {
        jw_null(w, "min_ns");
        jw_null(w, "max_ns");
    } else {
        jw_u64(w, "min_ns", s->min_ns);
        jw_u64(w, "max_ns", s->max_ns);
    }
    jw_double(w, "sumsq_ns2", s->sumsq_ns);
    jw_u64(w, "open_at_end", s->open_at_end);
}

static void json_metric_stats(struct jw *w, const struct strobe_metric_stats *m)
{
    jw_u64(w, "count", m->count);
    jw_i64(w, "sum", m->sum);
    jw_i64(w, "min", m->min);
    jw_i64(w, "max", m->max);
}

static void json_summary(struct jw *w, const struct strobe__report_view *v)
{
    const struct strobe_experiment *exp = v->exp;
    jw_open(w, "summary", '{', false);
    jw_u64(w, "duration_ns", exp->duration_ns);
    jw_u64(w, "processes", exp->nprocesses);
    jw_u64(w, "threads", exp->nthreads);
    jw_u64(w, "events", exp->total_events);
    jw_u64(w, "trace_bytes", exp->total_bytes);
    jw_u64(w, "dropped", exp->total_dropped);
    jw_u64(w, "thread_time_ns", v->thread_time_ns);
    jw_u64(w, "total_excl_ns", v->total_excl_ns);
    jw_u64(w, "overhead_events", v->overhead_events);
    jw_bool(w, "overhead_events_estimated", v->events_estimated);
    if (v->overhead_known) {
        jw_u64(w, "overhead_ns", (uint64_t)(v->overhead_ns + 0.5));
        jw_u64(w, "overhead_low_ns", (uint64_t)(v->overhead_ns * STROBE__OVERHEAD_LOW + 0.5));
        jw_u64(w, "overhead_high_ns", (uint64_t)(v->overhead_ns * STROBE__OVERHEAD_HIGH + 0.5));
    } else {
        jw_null(w, "overhead_ns");
        jw_null(w, "overhead_low_ns");
        jw_null(w, "overhead_high_ns");
    }
    jw_str(w, "profile_source",
           v->prof->source == STROBE_PROFILE_FILES   ? "profile"
           : v->prof->source == STROBE_PROFILE_TRACE ? "trace"
           : v->prof->source == STROBE_PROFILE_MIXED ? "mixed"
                                                     : "unknown");
    jw_u64(w, "profile_traced_threads", v->prof->traced);
    jw_bool(w, "profile_incomplete", v->prof->incomplete);
    jw_u64(w, "open_at_end", v->open_at_end);
    jw_close(w);
}

static void json_system(struct jw *w, const struct strobe__report_view *v)
{
    const struct strobe_experiment *exp = v->exp;
    jw_open(w, "processes", '[', false);
    for (size_t p = 0; p < exp->nprocesses; p++) {
        const struct strobe_process_info *pi = &exp->processes[p];
        jw_open(w, NULL, '{', true);
        jw_u64(w, "index", p);
        jw_str(w, "dir", pi->dir);
        jw_u64(w, "pid", pi->pid);
        jw_u64(w, "ppid", pi->ppid);
        jw_str(w, "exe", pi->exe);
        jw_ref(w, "parent", pi->parent);
        jw_u64(w, "start_realtime_ns", pi->start_realtime_ns);
        jw_bool(w, "exited", pi->exited);
        if (pi->exited)
            jw_i64(w, "exit_status", pi->exit_status);
        else
            jw_null(w, "exit_status");
        jw_double(w, "overhead_ns_per_event", pi->overhead_ns_per_event);
        if (pi->has_rank) {
            jw_u64(w, "rank", pi->rank);
            if (pi->world_size)
                jw_u64(w, "world_size", pi->world_size);
            else
                jw_null(w, "world_size");
        } else {
            jw_null(w, "rank");
            jw_null(w, "world_size");
        }
        jw_close(w);
    }
    jw_close(w);

    jw_open(w, "threads", '[', false);
    for (size_t t = 0; t < exp->nthreads; t++) {
        const struct strobe_thread_info *th = &exp->threads[t];
        jw_open(w, NULL, '{', true);
        jw_u64(w, "index", t);
        jw_u64(w, "process", th->process);
        jw_u64(w, "thread", th->index);
        jw_u64(w, "tid", th->tid);
        jw_ref(w, "parent", th->parent);
        jw_bool(w, "trace", th->stream_path != NULL);
        jw_bool(w, "profile", th->profile_path != NULL);
        jw_u64(w, "begin_ns", th->begin_ns);
        jw_u64(w, "end_ns", th->end_ns);
        jw_u64(w, "events", th->events);
        jw_u64(w, "bytes", th->bytes);
        jw_u64(w, "dropped", th->dropped);
        jw_bool(w, "ended", th->ended);
        jw_bool(w, "at_exit", th->at_exit);
        jw_bool(w, "summarized", th->summarized);
        jw_u64(w, "visits", v->thread_visits[t]);
        jw_u64(w, "incl_ns", v->thread_incl_ns[t]);
        if (th->has_rusage) {
            const struct strobe_rusage *ru = &th->rusage;
            jw_open(w, "rusage", '{', true);
            jw_u64(w, "utime_us", ru->utime_us);
            jw_u64(w, "stime_us", ru->stime_us);
            jw_u64(w, "maxrss_kb", ru->maxrss_kb);
            jw_u64(w, "minflt", ru->minflt);
            jw_u64(w, "majflt", ru->majflt);
            jw_u64(w, "nvcsw", ru->nvcsw);
            jw_u64(w, "nivcsw", ru->nivcsw);
            jw_close(w);
        } else {
            jw_null(w, "rusage");
        }
        jw_close(w);
    }
    jw_close(w);
}

static void json_defs(struct jw *w, const struct strobe_experiment *exp)
{
    jw_open(w, "regions", '[', false);
    for (size_t r = 0; r < exp->nregions; r++) {
        const struct strobe_region_def *d = &exp->regions[r];
        jw_open(w, NULL, '{', true);
        jw_u64(w, "id", r);
        jw_str(w, "name", d->name);
        jw_str(w, "file", d->file);
        jw_u64(w, "line", d->line);
        jw_str(w, "module", d->module);
        jw_u64(w, "address", d->address);
        jw_str(w, "kind", strobe_region_kind_name(d->kind));
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "metrics", '[', false);
    for (size_t m = 0; m < exp->nmetrics; m++) {
        jw_open(w, NULL, '{', true);
        jw_u64(w, "id", m);
        jw_str(w, "name", exp->metrics[m].name);
        jw_str(w, "unit", exp->metrics[m].unit);
        jw_close(w);
    }
    jw_close(w);
}

static void json_flat(struct jw *w, const struct strobe__report_view *v)
{
    jw_str(w, "sort", strobe_report_sort_name(v->sort));
    jw_open(w, "flat", '[', false);
    for (size_t i = 0; i < v->nflat; i++) {
        const struct strobe__flat_row *r = &v->flat[i];
        jw_open(w, NULL, '{', true);
        jw_u64(w, "region", r->region);
        jw_u64(w, "visits", r->visits);
        jw_u64(w, "incl_ns", r->incl_ns);
        jw_u64(w, "excl_ns", r->excl_ns);
        jw_u64(w, "sum_incl_ns", r->sum_incl_ns);
        jw_u64(w, "open_at_end", r->open_at_end);
        if (r->min_ns == UINT64_MAX) {
            jw_null(w, "min_ns");
            jw_null(w, "max_ns");
        } else {
            jw_u64(w, "min_ns", r->min_ns);
            jw_u64(w, "max_ns", r->max_ns);
        }
        jw_double(w, "sumsq_ns2", r->sumsq_ns);
        jw_close(w);
    }
    jw_close(w);
}

static void json_node(struct jw *w, const struct strobe__report_view *v, uint32_t n, uint32_t id,
                      uint32_t parent_id, uint32_t depth)
{
    const struct strobe_experiment *exp = v->exp;
    const struct strobe_cnode *node = &v->prof->nodes[n];
    jw_open(w, NULL, '{', true);
    jw_u64(w, "id", id);
    jw_ref(w, "parent", parent_id);
    jw_u64(w, "depth", depth);
    jw_ref(w, "region", node->region);
    if (n == 0) { /* the root: a container, not a region */
        jw_close(w);
        return;
    }
    json_stats(w, &node->total);
    jw_open(w, "threads", '[', true);
    for (size_t t = 0; t < exp->nthreads; t++) {
        const struct strobe_stats *s = strobe__node_thread(v, n, t);
        if (!s->visits && !s->incl_ns)
            continue;
        jw_open(w, NULL, '{', true);
        jw_u64(w, "thread", t);
        json_stats(w, s);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "metrics", '[', true);
    for (size_t m = 0; node->metrics && m < exp->nmetrics; m++) {
        if (!node->metrics[m].count)
            continue;
        jw_open(w, NULL, '{', true);
        jw_u64(w, "metric", m);
        json_metric_stats(w, &node->metrics[m]);
        jw_open(w, "threads", '[', true);
        for (size_t t = 0; node->thread_metrics && t < exp->nthreads; t++) {
            const struct strobe_metric_stats *tm = &node->thread_metrics[t * exp->nmetrics + m];
            if (!tm->count)
                continue;
            jw_open(w, NULL, '{', true);
            jw_u64(w, "thread", t);
            json_metric_stats(w, tm);
            jw_close(w);
        }
        jw_close(w);
        jw_close(w);
    }
    jw_close(w);
    jw_close(w);
}

/* Pre-order over the sorted children; ids are positions in this order. */
static int json_tree(struct jw *w, const struct strobe__report_view *v)
{
    uint32_t *nodes, *depths;
    size_t n;
    uint32_t *id_at = malloc((v->prof->nnodes + 1) * sizeof *id_at); /* last id seen at each depth */
    if (!id_at || strobe__report_preorder(v, &nodes, &depths, &n) != 0) {
        free(id_at);
        return -ENOMEM;
    }
    jw_open(w, "calltree", '[', false);
    json_node(w, v, 0, 0, STROBE_NONE, 0);
    id_at[0] = 0;
    for (size_t i = 0; i < n; i++) {
        id_at[depths[i]] = (uint32_t)(i + 1);
        json_node(w, v, nodes[i], (uint32_t)(i + 1), id_at[depths[i] - 1], depths[i]);
    }
    jw_close(w);
    free(nodes);
    free(depths);
    free(id_at);
    return 0;
}

/* `--by`: the groups and, per call path (by JSON call-tree id), the
 * per-group sums and their min/avg/max. */
static void json_groups(struct jw *w, const struct strobe__report_view *v,
                        const struct strobe__report_groups *g, int by)
{
    const struct strobe_experiment *exp = v->exp;
    jw_open(w, "by", '{', false);
    jw_str(w, "key", by == STROBE_REPORT_BY_RANK ? "rank" : "process");
    jw_u64(w, "left_out", g->left_out);
    jw_open(w, "groups", '[', false);
    for (size_t k = 0; k < g->n; k++) {
        jw_open(w, NULL, '{', true);
        if (by == STROBE_REPORT_BY_RANK)
            jw_u64(w, "rank", exp->processes[g->leader[k]].rank);
        jw_open(w, "processes", '[', true);
        const struct strobe_process_info *lead = &exp->processes[g->leader[k]];
        for (size_t p = 0; p < exp->nprocesses; p++)
            if (p == g->leader[k] || (by == STROBE_REPORT_BY_RANK && exp->processes[p].has_rank &&
                                      exp->processes[p].rank == lead->rank))
                jw_u64(w, NULL, p);
        jw_close(w);
        jw_u64(w, "threads", g->nthreads[k]);
        jw_u64(w, "visits", g->visits[k]);
        jw_u64(w, "incl_ns", g->incl_ns[k]);
        jw_u64(w, "events", g->events[k]);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "calltree", '[', false);
    for (size_t i = 0; i < g->npaths; i++) {
        jw_open(w, NULL, '{', true);
        jw_u64(w, "id", i + 1);
        const char *keys[2] = {"visits", "incl_ns"};
        const uint64_t *vals[2] = {g->path_visits, g->path_incl_ns};
        for (int m = 0; m < 2; m++) {
            uint64_t mn = UINT64_MAX, mx = 0, sum = 0;
            jw_open(w, keys[m], '{', true);
            jw_open(w, "groups", '[', true);
            for (size_t k = 0; k < g->n; k++) {
                uint64_t x = vals[m][i * g->n + k];
                jw_u64(w, NULL, x);
                mn = x < mn ? x : mn;
                mx = x > mx ? x : mx;
                sum += x;
            }
            jw_close(w);
            jw_u64(w, "min", mn);
            jw_double(w, "avg", (double)sum / (double)g->n);
            jw_u64(w, "max", mx);
            jw_close(w);
        }
        jw_close(w);
    }
    jw_close(w);
    jw_close(w);
}

static void json_tm_cell(struct jw *w, const struct strobe_tm_cell *c, bool times, bool aborts)
{
    jw_u64(w, "transactions", c->transactions);
    jw_u64(w, "rollbacks", c->rollbacks);
    jw_u64(w, "cancels", c->cancels);
    jw_open(w, "serialized", '{', true);
    for (int k = 0; k < STROBE_TM_NSERIAL; k++)
        jw_u64(w, strobe_tm_serial_name(k), c->serialized[k]);
    jw_close(w);
    if (times) {
        jw_u64(w, "committed_ns", c->committed_ns);
        jw_u64(w, "aborted_ns", c->aborted_ns);
        jw_u64(w, "cancelled_ns", c->cancelled_ns);
    } else {
        jw_null(w, "committed_ns");
        jw_null(w, "aborted_ns");
        jw_null(w, "cancelled_ns");
    }
    if (!aborts) {
        jw_null(w, "aborts");
        return;
    }
    jw_open(w, "aborts", '{', true);
    for (int k = 0; k < STROBE_TM_NCAUSES; k++)
        jw_u64(w, strobe_tm_abort_name(k), c->aborts[k]);
    jw_close(w);
}

/* The verdict on a block (verdict.h) and the figures it rests on. */
static void json_tm_verdict(struct jw *w, const struct strobe_tm_cell *c, bool times)
{
    struct strobe__tm_verdict v;
    strobe__tm_verdict(c, times, &v);
    jw_open(w, "verdict", '{', true);
    jw_str(w, "grade", v.grade_name);
    jw_double(w, "rollback_rate", v.rollback_rate);
    if (times)
        jw_double(w, "wasted", v.wasted);
    else
        jw_null(w, "wasted");
    jw_double(w, "serialized", v.serialized);
    jw_close(w);
}

/* The transactional-memory section (docs/formats/report-json.md). */
static void json_tm(struct jw *w, const struct strobe_experiment *exp, const struct strobe_tm_model *m)
{
    jw_open(w, "tm", '{', false);
    if (exp->tm) {
        jw_str(w, "level", strobe_tm_level_name(exp->tm_level));
        jw_bool(w, "level_inferred", exp->tm_level_inferred);
    } else {
        jw_null(w, "level");
        jw_null(w, "level_inferred");
    }
    jw_bool(w, "has_events", m->has_events);
    jw_bool(w, "has_counts", m->has_counts);
    jw_open(w, "blocks", '[', false);
    for (size_t b = 0; b < m->nblocks; b++) {
        jw_open(w, NULL, '{', false);
        jw_ref(w, "region", m->blocks[b]);
        struct strobe_tm_cell sum;
        strobe_tm_block_total(m, b, &sum);
        json_tm_cell(w, &sum, m->has_events, m->has_aborts);
        json_tm_verdict(w, &sum, m->has_events);
        jw_open(w, "threads", '[', false);
        for (size_t t = 0; t < m->nthreads; t++) {
            jw_open(w, NULL, '{', true);
            jw_u64(w, "thread", t);
            json_tm_cell(w, &m->cells[b * m->nthreads + t], m->has_events, m->has_aborts);
            jw_close(w);
        }
        jw_close(w);
        jw_close(w);
    }
    jw_close(w);
    if (m->has_events) {
        jw_open(w, "states", '[', false);
        for (size_t t = 0; t < m->nthreads; t++) {
            jw_open(w, NULL, '{', true);
            jw_u64(w, "thread", t);
            for (int k = 0; k < STROBE_TM_STATE_COUNT; k++)
                jw_u64(w, strobe_tm_state_name(k), m->states[t * STROBE_TM_STATE_COUNT + k]);
            jw_close(w);
        }
        jw_close(w);
        /* aborted_by[culprit][victim]; the last row: culprit unknown */
        jw_open(w, "aborted_by", '[', false);
        for (size_t c = 0; c <= m->nthreads; c++) {
            jw_open(w, NULL, '[', true);
            for (size_t t = 0; t < m->nthreads; t++)
                jw_u64(w, NULL, m->aborted_by[c * m->nthreads + t]);
            jw_close(w);
        }
        jw_close(w);
    } else {
        jw_null(w, "states");
        jw_null(w, "aborted_by");
    }
    jw_close(w);
}

/* ---- MPI --------------------------------------------------------------- */

static void json_u64_array(struct jw *w, const char *key, const uint64_t *v, size_t n)
{
    jw_open(w, key, '[', true);
    for (size_t i = 0; i < n; i++)
        jw_u64(w, NULL, v[i]);
    jw_close(w);
}

/* The MPI section (docs/formats/report-json.md). */
static void json_mpi(struct jw *w, const struct strobe_mpi_model *m)
{
    jw_open(w, "mpi", '{', false);
    jw_u64(w, "ranks", m->nranks);
    jw_u64(w, "messages", m->messages);
    jw_u64(w, "bytes", m->bytes);
    jw_bool(w, "traced", m->traced);
    jw_open(w, "per_rank", '[', false);
    for (uint32_t r = 0; r < m->nranks; r++) {
        const struct strobe_mpi_rank *k = &m->ranks[r];
        jw_open(w, NULL, '{', true);
        jw_u64(w, "rank", r);
        jw_bool(w, "measured", k->present);
        jw_u64(w, "mpi_ns", k->mpi_ns);
        jw_u64(w, "thread_ns", k->thread_ns);
        jw_u64(w, "calls", k->calls);
        jw_u64(w, "sent", k->sent);
        jw_u64(w, "sent_bytes", k->sent_bytes);
        jw_u64(w, "received", k->received);
        jw_u64(w, "received_bytes", k->received_bytes);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "functions", '[', false);
    for (size_t i = 0; i < m->ncalls; i++) {
        const struct strobe_mpi_call *c = &m->calls[i];
        jw_open(w, NULL, '{', true);
        jw_ref(w, "region", c->region);
        jw_u64(w, "calls", c->calls);
        jw_u64(w, "ns", c->ns);
        json_u64_array(w, "rank_ns", c->rank_ns, m->nranks);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "sizes", '[', false);
    for (unsigned b = 0; b < STROBE_MPI_HIST_BUCKETS; b++) {
        if (!m->hist[b])
            continue;
        jw_open(w, NULL, '{', true);
        jw_u64(w, "min_bytes", strobe_mpi_bucket_low(b));
        if (b + 1 < STROBE_MPI_HIST_BUCKETS)
            jw_u64(w, "max_bytes", b ? strobe_mpi_bucket_low(b + 1) - 1 : 0);
        else
            jw_null(w, "max_bytes");
        jw_u64(w, "messages", m->hist[b]);
        jw_u64(w, "bytes", m->hist_bytes[b]);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "matrix_bytes", '[', false);
    for (uint32_t r = 0; r < m->nranks; r++)
        json_u64_array(w, NULL, m->matrix_bytes + (size_t)r * m->nranks, m->nranks);
    jw_close(w);
    jw_open(w, "matrix_messages", '[', false);
    for (uint32_t r = 0; r < m->nranks; r++)
        json_u64_array(w, NULL, m->matrix_messages + (size_t)r * m->nranks, m->nranks);
    jw_close(w);
    jw_open(w, "collectives", '[', false);
    for (unsigned c = 1; c < STROBE_MPI_NCOLLS; c++) {
        if (!m->colls[c].calls)
            continue;
        jw_open(w, NULL, '{', true);
        jw_str(w, "name", strobe_mpi_coll_name(c));
        jw_u64(w, "calls", m->colls[c].calls);
        jw_u64(w, "sent_bytes", m->colls[c].sent_bytes);
        jw_u64(w, "received_bytes", m->colls[c].received_bytes);
        jw_close(w);
    }
    jw_close(w);
    jw_close(w);
}

/* ---- Memory (--malloc) ---------------------------------------------------- */

/* The call path of merged node n as region indices from depth 1 down;
 * null for a path the profile does not have ([] for the thread root). */
static void json_malloc_path(struct jw *w, const struct strobe_profile *prof, uint32_t n)
{
    uint32_t depth = n == STROBE_NONE ? 0 : prof->nodes[n].depth;
    uint32_t *regions = depth ? malloc(depth * sizeof *regions) : NULL;
    if (n == STROBE_NONE || (depth && !regions)) { /* out of memory: as unknown */
        jw_null(w, "path");
        return;
    }
    for (uint32_t k = n, i = depth; k != 0 && i > 0; k = prof->nodes[k].parent)
        regions[--i] = prof->nodes[k].region;
    jw_open(w, "path", '[', true);
    for (uint32_t i = 0; i < depth; i++)
        jw_u64(w, NULL, regions[i]);
    jw_close(w);
    free(regions);
}

/* The memory section (docs/formats/report-json.md). */
static void json_malloc(struct jw *w, const struct strobe_experiment *exp, const struct strobe_profile *prof,
                        const struct strobe_malloc_model *m)
{
    jw_open(w, "malloc", '{', false);
    jw_open(w, "processes", '[', false);
    for (size_t p = 0; p < exp->nprocesses; p++) {
        const struct strobe_malloc_info *mi = &exp->processes[p].malloc;
        if (!mi->on)
            continue;
        jw_open(w, NULL, '{', true);
        jw_u64(w, "process", p);
        jw_u64(w, "large_bytes", mi->large);
        jw_bool(w, "summarized", mi->summarized);
        if (mi->summarized) {
            jw_u64(w, "peak_bytes", mi->peak_bytes);
            if (mi->peak_bytes)
                jw_u64(w, "peak_ns", mi->peak_ns);
            else
                jw_null(w, "peak_ns");
            jw_u64(w, "live_bytes", mi->live_bytes);
            jw_u64(w, "live_blocks", mi->live_blocks);
            jw_u64(w, "untracked_blocks", mi->untracked);
        }
        jw_close(w);
    }
    jw_close(w);
    jw_u64(w, "allocs", m->allocs);
    jw_u64(w, "alloc_bytes", m->alloc_bytes);
    jw_u64(w, "frees", m->frees);
    jw_u64(w, "freed_bytes", m->freed_bytes);
    jw_u64(w, "live_blocks", m->live_blocks);
    jw_u64(w, "live_bytes", m->live_bytes);
    jw_open(w, "paths", '[', false);
    for (size_t i = 0; i < m->npaths; i++) {
        const struct strobe_malloc_path *p = &m->paths[i];
        jw_open(w, NULL, '{', true);
        json_malloc_path(w, prof, p->node);
        jw_u64(w, "allocs", p->allocs);
        jw_u64(w, "alloc_bytes", p->alloc_bytes);
        jw_u64(w, "frees", p->frees);
        jw_u64(w, "freed_bytes", p->freed_bytes);
        jw_u64(w, "live_blocks", p->live_blocks);
        jw_u64(w, "live_bytes", p->live_bytes);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "leaks", '[', false);
    for (size_t i = 0; i < m->nleaks; i++) {
        const struct strobe_malloc_leak *l = &m->leaks[i];
        jw_open(w, NULL, '{', true);
        jw_u64(w, "thread", l->thread);
        json_malloc_path(w, prof, l->node);
        jw_u64(w, "blocks", l->blocks);
        jw_u64(w, "bytes", l->bytes);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "large", '[', false);
    for (size_t i = 0; i < m->nlarge; i++) {
        const struct strobe_malloc_large *l = &m->large[i];
        jw_open(w, NULL, '{', true);
        jw_u64(w, "time_ns", l->time_ns);
        jw_u64(w, "thread", l->thread);
        jw_str(w, "event", l->op == STROBE_ALLOC_ALLOC ? "alloc" : "free");
        jw_str(w, "call", strobe__malloc_call_name(l->call));
        jw_u64(w, "address", l->address);
        jw_u64(w, "bytes", l->size);
        json_malloc_path(w, prof, l->node);
        jw_close(w);
    }
    jw_close(w);
    jw_close(w);
}

/* ---- Synchronization (--locks) -------------------------------------------- */

/* The object's symbol (null for a non-global object) and address. */
static void json_object(struct jw *w, uint32_t process, const char *name, uint64_t object)
{
    jw_u64(w, "process", process);
    if (name)
        jw_str(w, "name", name);
    else
        jw_null(w, "name");
    jw_u64(w, "address", object);
}

/* The synchronization section (docs/formats/report-json.md). */
static void json_locks(struct jw *w, const struct strobe_lock_model *m)
{
    jw_open(w, "locks", '{', false);
    jw_u64(w, "profiled_threads", m->profiled_threads);
    jw_open(w, "objects", '[', false);
    for (size_t i = 0; i < m->nrows; i++) {
        const struct strobe_lock_row *r = &m->rows[i];
        jw_open(w, NULL, '{', true);
        jw_str(w, "kind", strobe__sync_kind_name(r->kind));
        json_object(w, r->process, r->name, r->object);
        jw_open(w, "path", '[', true);
        for (uint32_t k = 0; k < r->depth; k++)
            jw_u64(w, NULL, r->path[k]);
        jw_close(w);
        jw_u64(w, "acquisitions", r->acquisitions);
        jw_u64(w, "contended", r->contended);
        jw_u64(w, "wait_ns", r->wait_ns);
        jw_u64(w, "max_wait_ns", r->max_wait_ns);
        if (r->hold_samples)
            jw_u64(w, "hold_ns", r->hold_ns);
        else
            jw_null(w, "hold_ns");
        jw_u64(w, "hold_samples", r->hold_samples);
        jw_open(w, "threads", '[', true);
        for (size_t k = 0; k < r->nthreads; k++) {
            jw_open(w, NULL, '{', true);
            jw_u64(w, "thread", r->threads[k].thread);
            jw_u64(w, "acquisitions", r->threads[k].acquisitions);
            jw_close(w);
        }
        jw_close(w);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "sites", '[', false);
    for (size_t i = 0; i < m->nsites; i++) {
        const struct strobe_lock_site *s = &m->sites[i];
        jw_open(w, NULL, '{', true);
        jw_str(w, "kind", strobe__sync_kind_name(s->kind));
        json_object(w, s->process, s->name, s->object);
        jw_str(w, "function", s->function);
        jw_str(w, "file", s->file);
        jw_u64(w, "line", s->line);
        jw_u64(w, "waits", s->waits);
        jw_u64(w, "wait_ns", s->wait_ns);
        jw_u64(w, "max_wait_ns", s->max_wait_ns);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "barriers", '[', false);
    for (size_t i = 0; i < m->nbarriers; i++) {
        const struct strobe_barrier_row *b = &m->barriers[i];
        jw_open(w, NULL, '{', true);
        json_object(w, b->process, b->name, b->object);
        jw_u64(w, "episodes", b->episodes);
        jw_u64(w, "waits", b->waits);
        jw_u64(w, "wait_ns", b->wait_ns);
        jw_u64(w, "max_wait_ns", b->max_wait_ns);
        jw_u64(w, "threads", b->nthreads);
        jw_close(w);
    }
    jw_close(w);
    jw_close(w);
}

/* ---- Filter advice (--score) ------------------------------------------- */

/* events, bytes, overhead_ns (null without a measured cost per event) */
static void json_cost(struct jw *w, const struct strobe__score *s, const struct strobe__score_estimate *e)
{
    jw_u64(w, "events", e->events);
    jw_u64(w, "bytes", e->bytes);
    if (s->view.overhead_known)
        jw_u64(w, "overhead_ns", (uint64_t)llround(e->overhead_ns));
    else
        jw_null(w, "overhead_ns");
}

static void json_estimate(struct jw *w, const char *key, const struct strobe__score *s,
                          const struct strobe__score_estimate *e)
{
    jw_open(w, key, '{', true);
    json_cost(w, s, e);
    jw_close(w);
}

int strobe__score_json(FILE *out, const struct strobe__score *s)
{
    const struct strobe_experiment *exp = s->view.exp;
    char line[512];
    struct jw w = {.out = out};
    json_begin(&w, "strobe-score", exp);
    jw_open(&w, "target", '{', true);
    if (s->target.kind == STROBE__SCORE_SIZE) {
        jw_str(&w, "kind", "size");
        jw_u64(&w, "bytes", s->target.bytes);
    } else {
        jw_str(&w, "kind", "overhead");
        jw_double(&w, "percent", s->target.pct);
    }
    jw_close(&w);
    jw_u64(&w, "thread_time_ns", s->view.thread_time_ns);
    jw_u64(&w, "dropped", exp->total_dropped);
    jw_double(&w, "bytes_per_event", s->bytes_per_event);
    jw_str(&w, "bytes_per_event_from", s->bytes_measured ? "trace" : "format");
    json_estimate(&w, "full_run", s, &s->full);
    json_estimate(&w, "filtered", s, &s->filtered);
    json_estimate(&w, "regions_total", s, &s->regions);
    json_estimate(&w, "regions_kept", s, &s->kept);
    jw_u64(&w, "excluded", s->nexcluded);
    if (s->evaluable)
        jw_bool(&w, "target_met", s->met);
    else
        jw_null(&w, "target_met");
    strobe__score_outcome(s, line, sizeof line);
    jw_str(&w, "outcome", line);
    jw_open(&w, "regions", '[', false);
    for (size_t i = 0; i < s->nrows; i++) {
        const struct strobe__score_row *r = &s->rows[i];
        jw_open(&w, NULL, '{', true);
        jw_u64(&w, "region", r->region);
        jw_str(&w, "name", exp->regions[r->region].name);
        jw_str(&w, "kind", strobe_region_kind_name(exp->regions[r->region].kind));
        jw_u64(&w, "visits", r->visits);
        jw_u64(&w, "incl_ns", r->incl_ns);
        jw_u64(&w, "excl_ns", r->excl_ns);
        jw_bool(&w, "timed", r->timed);
        json_cost(&w, s, &r->cost);
        jw_str(&w, "filter", strobe__score_filter_name(r->filter));
        jw_close(&w);
    }
    jw_close(&w);
    jw_close(&w);
    fputc('\n', out);
    return strobe__report_flush(out);
}

/* ---- Samples (--samples) -------------------------------------------------- */

/* The sampled section (docs/formats/report-json.md). */
static void json_samples(struct jw *w, const struct strobe_experiment *exp, const struct strobe_profile *prof,
                         const struct strobe_sample_model *m)
{
    jw_open(w, "samples", '{', false);
    jw_u64(w, "hz", m->hz);
    jw_str(w, "source", m->source == STROBE_SAMPLE_PERF ? "perf" : "timer");
    jw_bool(w, "mixed_rates", m->mixed_rates);
    jw_u64(w, "records", m->records);
    jw_u64(w, "samples", m->samples);
    jw_u64(w, "missed", m->missed);
    jw_u64(w, "truncated", m->truncated);
    jw_u64(w, "unstacked", m->unstacked);
    jw_open(w, "threads", '[', false);
    for (size_t t = 0; t < exp->nthreads; t++) {
        jw_open(w, NULL, '{', true);
        jw_u64(w, "thread", t);
        jw_u64(w, "records", m->threads[t].records);
        jw_u64(w, "samples", m->threads[t].samples);
        jw_u64(w, "missed", m->threads[t].missed);
        jw_u64(w, "truncated", m->threads[t].truncated);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "functions", '[', false);
    for (size_t i = 0; i < m->nfuncs; i++) {
        const struct strobe_sample_func *f = &m->funcs[i];
        jw_open(w, NULL, '{', false);
        jw_str(w, "name", f->name);
        jw_str(w, "module", f->module);
        jw_str(w, "file", f->file);
        jw_u64(w, "line", f->line);
        jw_u64(w, "self", f->self);
        jw_u64(w, "total", f->total);
        /* per thread, only the threads it was sampled in: [thread, self, total] */
        jw_open(w, "threads", '[', true);
        for (size_t t = 0; t < exp->nthreads; t++) {
            if (!f->thread_total[t])
                continue;
            jw_open(w, NULL, '[', true);
            jw_u64(w, NULL, t);
            jw_u64(w, NULL, f->thread_self[t]);
            jw_u64(w, NULL, f->thread_total[t]);
            jw_close(w);
        }
        jw_close(w);
        jw_close(w);
    }
    jw_close(w);
    /* the call tree: node 0 is the root, parents before children */
    jw_open(w, "tree", '[', false);
    for (size_t n = 0; n < m->nnodes; n++) {
        const struct strobe_sample_node *x = &m->nodes[n];
        jw_open(w, NULL, '{', true);
        jw_u64(w, "id", n);
        jw_ref(w, "parent", x->parent);
        jw_ref(w, "function", x->func);
        jw_u64(w, "self", x->self);
        jw_u64(w, "total", x->total);
        jw_close(w);
    }
    jw_close(w);
    jw_open(w, "paths", '[', false);
    for (size_t i = 0; i < m->npaths; i++) {
        const struct strobe_sample_path *p = &m->paths[i];
        jw_open(w, NULL, '{', true);
        if (prof)
            json_malloc_path(w, prof, p->node);
        else
            jw_null(w, "path");
        jw_u64(w, "samples", p->samples);
        jw_ref(w, "function", p->top_func);
        jw_u64(w, "function_samples", p->top_samples);
        jw_close(w);
    }
    jw_close(w);
    jw_close(w);
}

int strobe_report_json(FILE *out, const struct strobe_experiment *exp, const struct strobe_profile *prof,
                       const struct strobe_report_opts *opts)
{
    struct strobe__report_view v;
    int rc = strobe__report_view_build(&v, exp, prof, opts ? opts->sort : STROBE_REPORT_SORT_EXCL);
    if (rc)
        return rc;
    struct jw w = {.out = out};
    json_begin(&w, "strobe-report", exp);
    jw_open(&w, "meta", '{', false);
    for (size_t i = 0; i < exp->nmeta; i++)
        if (exp->meta_keys[i])
            jw_str(&w, exp->meta_keys[i], exp->meta_values[i]);
    jw_close(&w);
    json_summary(&w, &v);
    json_system(&w, &v);
    json_defs(&w, exp);
    json_flat(&w, &v);
    rc = json_tree(&w, &v);
    if (rc == 0 && opts && opts->by != STROBE_REPORT_BY_NONE) {
        struct strobe__report_groups g;
        if ((rc = strobe__report_groups_build(&g, &v, opts->by)) == 0) {
            json_groups(&w, &v, &g, opts->by);
            strobe__report_groups_free(&g);
        }
    }
    if (rc == 0 && opts && opts->tm)
        json_tm(&w, exp, opts->tm);
    if (rc == 0 && opts && opts->malloc)
        json_malloc(&w, exp, prof, opts->malloc);
    if (rc == 0 && opts && opts->samples)
        json_samples(&w, exp, prof, opts->samples);
    if (rc == 0 && opts && opts->locks)
        json_locks(&w, opts->locks);
    if (rc == 0 && opts && opts->mpi)
        json_mpi(&w, opts->mpi);
    jw_close(&w);
    fputc('\n', out);
    strobe__report_view_free(&v);
    return rc ? rc : strobe__report_flush(out);
}
