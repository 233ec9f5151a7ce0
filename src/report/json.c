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

#include "report/jsonw.h"
#include "report/locks.h"
#include "report/taskgraph.h"
#include "report/malloc.h"
#include "report/report.h"
#include "report/blame.h"
#include "report/samples.h"
#include "report/score.h"
#include "report/verdict.h"
#include "report/view.h"
#include "analysis/align.h"
#include "common/format.h"
#include "strobe/strobe.h"

/* ---- Document ---------------------------------------------------------- */

/* Opens the top-level object: schema, version, dir. */
static void json_begin(struct strobe__jw *w, const char *key, const char *schema,
                       const struct strobe_experiment *exp)
{
    strobe__jw_open(w, key, '{', false);
    strobe__jw_str(w, "schema", schema);
    strobe__jw_u64(w, "version", STROBE_REPORT_JSON_VERSION);
    strobe__jw_str(w, "dir", exp->dir);
}

/* visits, incl_ns, excl_ns, min_ns, max_ns (null without a completed
 * visit), sumsq_ns2 */
static void json_stats(struct strobe__jw *w, const struct strobe_stats *s)
{
    strobe__jw_u64(w, "visits", s->visits);
    strobe__jw_u64(w, "incl_ns", s->incl_ns);
    strobe__jw_u64(w, "excl_ns", s->excl_ns);
    if (s->min_ns == UINT64_MAX) {
        strobe__jw_null(w, "min_ns");
        strobe__jw_null(w, "max_ns");
    } else {
        strobe__jw_u64(w, "min_ns", s->min_ns);
        strobe__jw_u64(w, "max_ns", s->max_ns);
    }
    strobe__jw_double(w, "sumsq_ns2", s->sumsq_ns);
    strobe__jw_u64(w, "open_at_end", s->open_at_end);
}

static void json_metric_stats(struct strobe__jw *w, const struct strobe_metric_stats *m)
{
    strobe__jw_u64(w, "count", m->count);
    strobe__jw_i64(w, "sum", m->sum);
    strobe__jw_i64(w, "min", m->min);
    strobe__jw_i64(w, "max", m->max);
}

static void json_summary(struct strobe__jw *w, const struct strobe__report_view *v)
{
    const struct strobe_experiment *exp = v->exp;
    strobe__jw_open(w, "summary", '{', false);
    strobe__jw_u64(w, "duration_ns", exp->duration_ns);
    strobe__jw_u64(w, "processes", exp->nprocesses);
    strobe__jw_u64(w, "threads", exp->nthreads);
    strobe__jw_u64(w, "events", exp->total_events);
    strobe__jw_u64(w, "trace_bytes", exp->total_bytes);
    strobe__jw_u64(w, "dropped", exp->total_dropped);
    strobe__jw_u64(w, "thread_time_ns", v->thread_time_ns);
    strobe__jw_u64(w, "total_excl_ns", v->total_excl_ns);
    strobe__jw_u64(w, "overhead_events", v->overhead_events);
    strobe__jw_bool(w, "overhead_events_estimated", v->events_estimated);
    if (v->overhead_known) {
        strobe__jw_u64(w, "overhead_ns", (uint64_t)(v->overhead_ns + 0.5));
        strobe__jw_u64(w, "overhead_low_ns", (uint64_t)(v->overhead_ns * STROBE__OVERHEAD_LOW + 0.5));
        strobe__jw_u64(w, "overhead_high_ns", (uint64_t)(v->overhead_ns * STROBE__OVERHEAD_HIGH + 0.5));
    } else {
        strobe__jw_null(w, "overhead_ns");
        strobe__jw_null(w, "overhead_low_ns");
        strobe__jw_null(w, "overhead_high_ns");
    }
    strobe__jw_str(w, "profile_source",
                   v->prof->source == STROBE_PROFILE_FILES   ? "profile"
                   : v->prof->source == STROBE_PROFILE_TRACE ? "trace"
                   : v->prof->source == STROBE_PROFILE_MIXED ? "mixed"
                                                             : "unknown");
    strobe__jw_u64(w, "profile_traced_threads", v->prof->traced);
    strobe__jw_bool(w, "profile_incomplete", v->prof->incomplete);
    strobe__jw_u64(w, "open_at_end", v->open_at_end);
    if (v->exp->chunk_count) {
        strobe__jw_u64(w, "chunk_first", v->exp->chunk_first);
        strobe__jw_u64(w, "chunk_last", v->exp->chunk_first + v->exp->chunk_count - 1);
    } else {
        strobe__jw_null(w, "chunk_first");
        strobe__jw_null(w, "chunk_last");
    }
    strobe__jw_close(w);
}

static void json_blocks(struct strobe__jw *w, const struct strobe_blocks_summary *b)
{
    strobe__jw_open(w, "blocks", '{', false);
    strobe__jw_u64(w, "streams", b->streams);
    strobe__jw_u64(w, "blocks", b->blocks);
    strobe__jw_u64(w, "reads", b->reads);
    strobe__jw_u64(w, "writes", b->writes);
    strobe__jw_u64(w, "marks", b->marks);
    strobe__jw_u64(w, "bytes", b->bytes);
    if (b->reads + b->writes)
        strobe__jw_double(w, "bytes_per_memory_event", (double)b->bytes / (double)(b->reads + b->writes));
    else
        strobe__jw_null(w, "bytes_per_memory_event");
    strobe__jw_close(w);
}

static void json_system(struct strobe__jw *w, const struct strobe__report_view *v)
{
    const struct strobe_experiment *exp = v->exp;
    strobe__jw_open(w, "processes", '[', false);
    for (size_t p = 0; p < exp->nprocesses; p++) {
        const struct strobe_process_info *pi = &exp->processes[p];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "index", p);
        strobe__jw_str(w, "dir", pi->dir);
        strobe__jw_u64(w, "pid", pi->pid);
        strobe__jw_u64(w, "ppid", pi->ppid);
        strobe__jw_str(w, "exe", pi->exe);
        strobe__jw_ref(w, "parent", pi->parent);
        strobe__jw_u64(w, "start_realtime_ns", pi->start_realtime_ns);
        strobe__jw_bool(w, "exited", pi->exited);
        if (pi->exited)
            strobe__jw_i64(w, "exit_status", pi->exit_status);
        else
            strobe__jw_null(w, "exit_status");
        strobe__jw_double(w, "overhead_ns_per_event", pi->overhead_ns_per_event);
        strobe__jw_str(w, "clock_align", strobe_align_method_name(pi->align));
        strobe__jw_u64(w, "clock_domain", pi->align_domain);
        strobe__jw_double(w, "clock_offset_ns", pi->align_offset_ns);
        strobe__jw_double(w, "clock_drift_ppm", pi->align_drift * 1e6);
        strobe__jw_u64(w, "clock_bound_ns", pi->align_bound_ns);
        if (pi->has_rank) {
            strobe__jw_u64(w, "rank", pi->rank);
            if (pi->world_size)
                strobe__jw_u64(w, "world_size", pi->world_size);
            else
                strobe__jw_null(w, "world_size");
        } else {
            strobe__jw_null(w, "rank");
            strobe__jw_null(w, "world_size");
        }
        static const char *const cause[] = {"", "api", "signal", "timer"};
        strobe__jw_open(w, "paused", '[', false);
        for (size_t i = 0; i < pi->nrecording; i += 2) {
            strobe__jw_open(w, NULL, '{', true);
            strobe__jw_u64(w, "from_ns", pi->recording[i].ns);
            if (i + 1 < pi->nrecording)
                strobe__jw_u64(w, "to_ns", pi->recording[i + 1].ns);
            else
                strobe__jw_null(w, "to_ns");
            strobe__jw_str(w, "cause", cause[pi->recording[i].cause]);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);

    strobe__jw_open(w, "threads", '[', false);
    for (size_t t = 0; t < exp->nthreads; t++) {
        const struct strobe_thread_info *th = &exp->threads[t];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "index", t);
        strobe__jw_u64(w, "process", th->process);
        strobe__jw_u64(w, "thread", th->index);
        strobe__jw_u64(w, "tid", th->tid);
        strobe__jw_ref(w, "parent", th->parent);
        if (th->ring) { /* flight recorder: what the ring kept */
            strobe__jw_open(w, "ring", '{', true);
            strobe__jw_u64(w, "from_ns", th->window_ns);
            strobe__jw_u64(w, "to_ns", th->end_ns);
            if (th->summarized)
                strobe__jw_u64(w, "overwritten", th->overwritten);
            else
                strobe__jw_null(w, "overwritten");
            strobe__jw_u64(w, "overwritten_chunks", th->overwritten_chunks);
            strobe__jw_close(w);
        } else {
            strobe__jw_null(w, "ring");
        }
        strobe__jw_bool(w, "trace", th->stream_path != NULL);
        strobe__jw_bool(w, "profile", th->profile_path != NULL);
        strobe__jw_u64(w, "begin_ns", th->begin_ns);
        strobe__jw_u64(w, "end_ns", th->end_ns);
        strobe__jw_u64(w, "events", th->events);
        strobe__jw_u64(w, "bytes", th->bytes);
        strobe__jw_u64(w, "dropped", th->dropped);
        strobe__jw_bool(w, "ended", th->ended);
        strobe__jw_bool(w, "at_exit", th->at_exit);
        strobe__jw_bool(w, "summarized", th->summarized);
        strobe__jw_u64(w, "visits", v->thread_visits[t]);
        strobe__jw_u64(w, "incl_ns", v->thread_incl_ns[t]);
        if (th->has_rusage) {
            const struct strobe_rusage *ru = &th->rusage;
            strobe__jw_open(w, "rusage", '{', true);
            strobe__jw_u64(w, "utime_us", ru->utime_us);
            strobe__jw_u64(w, "stime_us", ru->stime_us);
            strobe__jw_u64(w, "maxrss_kb", ru->maxrss_kb);
            strobe__jw_u64(w, "minflt", ru->minflt);
            strobe__jw_u64(w, "majflt", ru->majflt);
            strobe__jw_u64(w, "nvcsw", ru->nvcsw);
            strobe__jw_u64(w, "nivcsw", ru->nivcsw);
            strobe__jw_close(w);
        } else {
            strobe__jw_null(w, "rusage");
        }
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
}

static void json_defs(struct strobe__jw *w, const struct strobe_experiment *exp)
{
    strobe__jw_open(w, "regions", '[', false);
    for (size_t r = 0; r < exp->nregions; r++) {
        const struct strobe_region_def *d = &exp->regions[r];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "id", r);
        strobe__jw_str(w, "name", d->name);
        strobe__jw_str(w, "file", d->file);
        strobe__jw_u64(w, "line", d->line);
        strobe__jw_str(w, "module", d->module);
        strobe__jw_u64(w, "address", d->address);
        strobe__jw_str(w, "kind", strobe_region_kind_name(d->kind));
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "metrics", '[', false);
    for (size_t m = 0; m < exp->nmetrics; m++) {
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "id", m);
        strobe__jw_str(w, "name", exp->metrics[m].name);
        strobe__jw_str(w, "unit", exp->metrics[m].unit);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
}

static void json_flat(struct strobe__jw *w, const struct strobe__report_view *v)
{
    strobe__jw_str(w, "sort", strobe_report_sort_name(v->sort));
    strobe__jw_open(w, "flat", '[', false);
    for (size_t i = 0; i < v->nflat; i++) {
        const struct strobe__flat_row *r = &v->flat[i];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "region", r->region);
        strobe__jw_u64(w, "visits", r->visits);
        strobe__jw_u64(w, "incl_ns", r->incl_ns);
        strobe__jw_u64(w, "excl_ns", r->excl_ns);
        strobe__jw_u64(w, "sum_incl_ns", r->sum_incl_ns);
        strobe__jw_u64(w, "open_at_end", r->open_at_end);
        if (r->min_ns == UINT64_MAX) {
            strobe__jw_null(w, "min_ns");
            strobe__jw_null(w, "max_ns");
        } else {
            strobe__jw_u64(w, "min_ns", r->min_ns);
            strobe__jw_u64(w, "max_ns", r->max_ns);
        }
        strobe__jw_double(w, "sumsq_ns2", r->sumsq_ns);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
}

static void json_node(struct strobe__jw *w, const struct strobe__report_view *v, uint32_t n, uint32_t id,
                      uint32_t parent_id, uint32_t depth)
{
    const struct strobe_experiment *exp = v->exp;
    const struct strobe_cnode *node = &v->prof->nodes[n];
    strobe__jw_open(w, NULL, '{', true);
    strobe__jw_u64(w, "id", id);
    strobe__jw_ref(w, "parent", parent_id);
    strobe__jw_u64(w, "depth", depth);
    strobe__jw_ref(w, "region", node->region);
    if (n == 0) { /* the root: a container, not a region */
        strobe__jw_close(w);
        return;
    }
    json_stats(w, &node->total);
    strobe__jw_open(w, "threads", '[', true);
    for (size_t t = 0; t < exp->nthreads; t++) {
        const struct strobe_stats *s = strobe__node_thread(v, n, t);
        if (!s->visits && !s->incl_ns)
            continue;
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "thread", t);
        json_stats(w, s);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "metrics", '[', true);
    for (size_t m = 0; node->metrics && m < exp->nmetrics; m++) {
        if (!node->metrics[m].count)
            continue;
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "metric", m);
        json_metric_stats(w, &node->metrics[m]);
        strobe__jw_open(w, "threads", '[', true);
        for (size_t t = 0; node->thread_metrics && t < exp->nthreads; t++) {
            const struct strobe_metric_stats *tm = &node->thread_metrics[t * exp->nmetrics + m];
            if (!tm->count)
                continue;
            strobe__jw_open(w, NULL, '{', true);
            strobe__jw_u64(w, "thread", t);
            json_metric_stats(w, tm);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_close(w);
}

/* One column of the call tree as columns: member KEY of every node in
 * pre-order (order[0] is the root, which has none: null). */
enum column { COL_VISITS, COL_INCL, COL_EXCL, COL_MIN, COL_MAX };

static void json_stat_value(struct strobe__jw *w, const struct strobe_stats *s, enum column c)
{
    switch (c) {
    case COL_VISITS:
        strobe__jw_u64(w, NULL, s->visits);
        break;
    case COL_INCL:
        strobe__jw_u64(w, NULL, s->incl_ns);
        break;
    case COL_EXCL:
        strobe__jw_u64(w, NULL, s->excl_ns);
        break;
    case COL_MIN:
    case COL_MAX:
        if (s->visits)
            strobe__jw_u64(w, NULL, c == COL_MIN ? s->min_ns : s->max_ns);
        else
            strobe__jw_null(w, NULL);
        break;
    }
}

static const char *const column_key[] = {"visits", "incl_ns", "excl_ns", "min_ns", "max_ns"};

/* The call tree as columns (the HTML report's data; 4-5 times smaller
 * than the node objects): parallel arrays over the nodes in pre-order
 * (parent -1 and region -1 for the root), the user metrics as parallel
 * arrays of (node, metric) entries, and the per-thread statistics as
 * parallel arrays of (node, thread) entries in node order. */
static void json_tree_columns(struct strobe__jw *w, const struct strobe__report_view *v, const uint32_t *order,
                              const uint32_t *parent, size_t n)
{
    const struct strobe_experiment *exp = v->exp;
    strobe__jw_open(w, "calltree_columns", '{', false);
    strobe__jw_open(w, "parent", '[', true);
    for (size_t i = 0; i < n; i++)
        strobe__jw_i64(w, NULL, i ? (int64_t)parent[i] : -1);
    strobe__jw_close(w);
    strobe__jw_open(w, "region", '[', true);
    for (size_t i = 0; i < n; i++)
        strobe__jw_i64(w, NULL, i ? (int64_t)v->prof->nodes[order[i]].region : -1);
    strobe__jw_close(w);
    for (enum column c = COL_VISITS; c <= COL_MAX; c++) {
        strobe__jw_open(w, column_key[c], '[', true);
        for (size_t i = 0; i < n; i++)
            json_stat_value(w, &v->prof->nodes[order[i]].total, c);
        strobe__jw_close(w);
    }
    /* user metrics: one entry per (node, metric) recorded there, summed
     * over threads */
    static const char *const metric_key[] = {"node", "metric", "count", "sum", "min", "max"};
    strobe__jw_open(w, "metrics", '{', false);
    for (int c = 0; c < 6; c++) {
        strobe__jw_open(w, metric_key[c], '[', true);
        for (size_t i = 1; i < n; i++) {
            const struct strobe_cnode *node = &v->prof->nodes[order[i]];
            for (size_t m = 0; node->metrics && m < exp->nmetrics; m++) {
                const struct strobe_metric_stats *x = &node->metrics[m];
                if (!x->count)
                    continue;
                if (c < 3)
                    strobe__jw_u64(w, NULL, c == 0 ? i : c == 1 ? m : x->count);
                else
                    strobe__jw_i64(w, NULL, c == 3 ? x->sum : c == 4 ? x->min : x->max);
            }
        }
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "threads", '{', false);
    for (int c = -2; c <= COL_MAX; c++) { /* -2: node, -1: thread, then the statistics */
        strobe__jw_open(w, c == -2 ? "node" : c == -1 ? "thread" : column_key[c], '[', true);
        for (size_t i = 1; i < n; i++)
            for (size_t t = 0; t < exp->nthreads; t++) {
                const struct strobe_stats *s = strobe__node_thread(v, order[i], t);
                if (!s->visits && !s->incl_ns)
                    continue;
                if (c < 0)
                    strobe__jw_u64(w, NULL, c == -2 ? i : t);
                else
                    json_stat_value(w, s, (enum column)c);
            }
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_close(w);
}

/* Pre-order over the sorted children; ids are positions in this order. */
static int json_tree(struct strobe__jw *w, const struct strobe__report_view *v, bool columns)
{
    uint32_t *nodes, *depths;
    size_t n;
    uint32_t *id_at = malloc((v->prof->nnodes + 1) * sizeof *id_at); /* last id seen at each depth */
    uint32_t *order = malloc((v->prof->nnodes + 1) * sizeof *order), *parent = NULL;
    if (order)
        parent = malloc((v->prof->nnodes + 1) * sizeof *parent);
    if (!id_at || !parent || strobe__report_preorder(v, &nodes, &depths, &n) != 0) {
        free(id_at);
        free(order);
        free(parent);
        return -ENOMEM;
    }
    order[0] = 0;
    parent[0] = STROBE_NONE;
    id_at[0] = 0;
    for (size_t i = 0; i < n; i++) {
        id_at[depths[i]] = (uint32_t)(i + 1);
        order[i + 1] = nodes[i];
        parent[i + 1] = id_at[depths[i] - 1];
    }
    if (columns) {
        json_tree_columns(w, v, order, parent, n + 1);
    } else {
        strobe__jw_open(w, "calltree", '[', false);
        json_node(w, v, 0, 0, STROBE_NONE, 0);
        for (size_t i = 0; i < n; i++)
            json_node(w, v, nodes[i], (uint32_t)(i + 1), parent[i + 1], depths[i]);
        strobe__jw_close(w);
    }
    free(nodes);
    free(depths);
    free(id_at);
    free(order);
    free(parent);
    return 0;
}

/* `--by`: the groups and, per call path (by JSON call-tree id), the
 * per-group sums and their min/avg/max. */
static void json_groups(struct strobe__jw *w, const struct strobe__report_view *v,
                        const struct strobe__report_groups *g, int by)
{
    const struct strobe_experiment *exp = v->exp;
    strobe__jw_open(w, "by", '{', false);
    strobe__jw_str(w, "key", by == STROBE_REPORT_BY_RANK ? "rank" : "process");
    strobe__jw_u64(w, "left_out", g->left_out);
    strobe__jw_open(w, "groups", '[', false);
    for (size_t k = 0; k < g->n; k++) {
        strobe__jw_open(w, NULL, '{', true);
        if (by == STROBE_REPORT_BY_RANK)
            strobe__jw_u64(w, "rank", exp->processes[g->leader[k]].rank);
        strobe__jw_open(w, "processes", '[', true);
        const struct strobe_process_info *lead = &exp->processes[g->leader[k]];
        for (size_t p = 0; p < exp->nprocesses; p++)
            if (p == g->leader[k] || (by == STROBE_REPORT_BY_RANK && exp->processes[p].has_rank &&
                                      exp->processes[p].rank == lead->rank))
                strobe__jw_u64(w, NULL, p);
        strobe__jw_close(w);
        strobe__jw_u64(w, "threads", g->nthreads[k]);
        strobe__jw_u64(w, "visits", g->visits[k]);
        strobe__jw_u64(w, "incl_ns", g->incl_ns[k]);
        strobe__jw_u64(w, "events", g->events[k]);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "calltree", '[', false);
    for (size_t i = 0; i < g->npaths; i++) {
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "id", i + 1);
        const char *keys[2] = {"visits", "incl_ns"};
        const uint64_t *vals[2] = {g->path_visits, g->path_incl_ns};
        for (int m = 0; m < 2; m++) {
            uint64_t mn = UINT64_MAX, mx = 0, sum = 0;
            strobe__jw_open(w, keys[m], '{', true);
            strobe__jw_open(w, "groups", '[', true);
            for (size_t k = 0; k < g->n; k++) {
                uint64_t x = vals[m][i * g->n + k];
                strobe__jw_u64(w, NULL, x);
                mn = x < mn ? x : mn;
                mx = x > mx ? x : mx;
                sum += x;
            }
            strobe__jw_close(w);
            strobe__jw_u64(w, "min", mn);
            strobe__jw_double(w, "avg", (double)sum / (double)g->n);
            strobe__jw_u64(w, "max", mx);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_close(w);
}

static void json_tm_cell(struct strobe__jw *w, const struct strobe_tm_cell *c, bool times, bool aborts)
{
    strobe__jw_u64(w, "transactions", c->transactions);
    strobe__jw_u64(w, "rollbacks", c->rollbacks);
    strobe__jw_u64(w, "cancels", c->cancels);
    strobe__jw_open(w, "serialized", '{', true);
    for (int k = 0; k < STROBE_TM_NSERIAL; k++)
        strobe__jw_u64(w, strobe_tm_serial_name(k), c->serialized[k]);
    strobe__jw_close(w);
    if (times) {
        strobe__jw_u64(w, "committed_ns", c->committed_ns);
        strobe__jw_u64(w, "aborted_ns", c->aborted_ns);
        strobe__jw_u64(w, "cancelled_ns", c->cancelled_ns);
    } else {
        strobe__jw_null(w, "committed_ns");
        strobe__jw_null(w, "aborted_ns");
        strobe__jw_null(w, "cancelled_ns");
    }
    if (!aborts) {
        strobe__jw_null(w, "aborts");
        return;
    }
    strobe__jw_open(w, "aborts", '{', true);
    for (int k = 0; k < STROBE_TM_NCAUSES; k++)
        strobe__jw_u64(w, strobe_tm_abort_name(k), c->aborts[k]);
    strobe__jw_close(w);
}

/* The verdict on a block (verdict.h) and the figures it rests on. */
static void json_tm_verdict(struct strobe__jw *w, const struct strobe_tm_cell *c, bool times)
{
    struct strobe__tm_verdict v;
    strobe__tm_verdict(c, times, &v);
    strobe__jw_open(w, "verdict", '{', true);
    strobe__jw_str(w, "grade", v.grade_name);
    strobe__jw_str(w, "summary", v.summary);
    strobe__jw_str(w, "advice", v.advice);
    strobe__jw_double(w, "rollback_rate", v.rollback_rate);
    if (times)
        strobe__jw_double(w, "wasted", v.wasted);
    else
        strobe__jw_null(w, "wasted");
    strobe__jw_double(w, "serialized", v.serialized);
    strobe__jw_close(w);
}

/* The transactional-memory section (docs/formats/report-json.md). */
static void json_tm(struct strobe__jw *w, const struct strobe_experiment *exp,
                    const struct strobe_tm_model *m)
{
    strobe__jw_open(w, "tm", '{', false);
    if (exp->tm) {
        strobe__jw_str(w, "level", strobe_tm_level_name(exp->tm_level));
        strobe__jw_bool(w, "level_inferred", exp->tm_level_inferred);
        strobe__jw_str(w, "recorded", strobe_tm_level_recorded(exp->tm_level));
    } else {
        strobe__jw_null(w, "level");
        strobe__jw_null(w, "level_inferred");
        strobe__jw_null(w, "recorded");
    }
    strobe__jw_bool(w, "has_events", m->has_events);
    strobe__jw_bool(w, "has_counts", m->has_counts);
    strobe__jw_open(w, "blocks", '[', false);
    for (size_t b = 0; b < m->nblocks; b++) {
        strobe__jw_open(w, NULL, '{', false);
        strobe__jw_ref(w, "region", m->blocks[b]);
        struct strobe_tm_cell sum;
        strobe_tm_block_total(m, b, &sum);
        json_tm_cell(w, &sum, m->has_events, m->has_aborts);
        json_tm_verdict(w, &sum, m->has_events);
        strobe__jw_open(w, "threads", '[', false);
        for (size_t t = 0; t < m->nthreads; t++) {
            strobe__jw_open(w, NULL, '{', true);
            strobe__jw_u64(w, "thread", t);
            json_tm_cell(w, &m->cells[b * m->nthreads + t], m->has_events, m->has_aborts);
            json_tm_verdict(w, &m->cells[b * m->nthreads + t], m->has_events);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    /* per thread, over all blocks */
    strobe__jw_open(w, "threads", '[', false);
    for (size_t t = 0; t < m->nthreads; t++) {
        struct strobe_tm_cell sum = {0};
        for (size_t b = 0; b < m->nblocks; b++)
            strobe_tm_cell_add(&sum, &m->cells[b * m->nthreads + t]);
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "thread", t);
        json_tm_cell(w, &sum, m->has_events, m->has_aborts);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    if (m->has_events) {
        strobe__jw_open(w, "states", '[', false);
        for (size_t t = 0; t < m->nthreads; t++) {
            strobe__jw_open(w, NULL, '{', true);
            strobe__jw_u64(w, "thread", t);
            for (int k = 0; k < STROBE_TM_STATE_COUNT; k++)
                strobe__jw_u64(w, strobe_tm_state_name(k), m->states[t * STROBE_TM_STATE_COUNT + k]);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
        /* aborted_by[culprit][victim]; the last row: culprit unknown */
        strobe__jw_open(w, "aborted_by", '[', false);
        for (size_t c = 0; c <= m->nthreads; c++) {
            strobe__jw_open(w, NULL, '[', true);
            for (size_t t = 0; t < m->nthreads; t++)
                strobe__jw_u64(w, NULL, m->aborted_by[c * m->nthreads + t]);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
    } else {
        strobe__jw_null(w, "states");
        strobe__jw_null(w, "aborted_by");
    }
    strobe__jw_close(w);
}

/* ---- MPI --------------------------------------------------------------- */

static void json_u64_array(struct strobe__jw *w, const char *key, const uint64_t *v, size_t n)
{
    strobe__jw_open(w, key, '[', true);
    for (size_t i = 0; i < n; i++)
        strobe__jw_u64(w, NULL, v[i]);
    strobe__jw_close(w);
}

/* The MPI section (docs/formats/report-json.md). */
static void json_mpi(struct strobe__jw *w, const struct strobe_mpi_model *m)
{
    strobe__jw_open(w, "mpi", '{', false);
    strobe__jw_u64(w, "ranks", m->nranks);
    strobe__jw_u64(w, "messages", m->messages);
    strobe__jw_u64(w, "bytes", m->bytes);
    strobe__jw_bool(w, "traced", m->traced);
    strobe__jw_u64(w, "matched_messages", m->pairs);
    strobe__jw_i64(w, "skew_ns", m->skew_ns);
    strobe__jw_i64(w, "skew_unaligned_ns", m->skew_unaligned_ns);
    strobe__jw_open(w, "per_rank", '[', false);
    for (uint32_t r = 0; r < m->nranks; r++) {
        const struct strobe_mpi_rank *k = &m->ranks[r];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "rank", r);
        strobe__jw_bool(w, "measured", k->present);
        strobe__jw_u64(w, "mpi_ns", k->mpi_ns);
        strobe__jw_u64(w, "thread_ns", k->thread_ns);
        strobe__jw_u64(w, "calls", k->calls);
        strobe__jw_u64(w, "sent", k->sent);
        strobe__jw_u64(w, "sent_bytes", k->sent_bytes);
        strobe__jw_u64(w, "received", k->received);
        strobe__jw_u64(w, "received_bytes", k->received_bytes);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "functions", '[', false);
    for (size_t i = 0; i < m->ncalls; i++) {
        const struct strobe_mpi_call *c = &m->calls[i];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_ref(w, "region", c->region);
        strobe__jw_u64(w, "calls", c->calls);
        strobe__jw_u64(w, "ns", c->ns);
        json_u64_array(w, "rank_ns", c->rank_ns, m->nranks);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "sizes", '[', false);
    for (unsigned b = 0; b < STROBE_MPI_HIST_BUCKETS; b++) {
        if (!m->hist[b])
            continue;
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "min_bytes", strobe_mpi_bucket_low(b));
        if (b + 1 < STROBE_MPI_HIST_BUCKETS)
            strobe__jw_u64(w, "max_bytes", b ? strobe_mpi_bucket_low(b + 1) - 1 : 0);
        else
            strobe__jw_null(w, "max_bytes");
        strobe__jw_u64(w, "messages", m->hist[b]);
        strobe__jw_u64(w, "bytes", m->hist_bytes[b]);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "matrix_bytes", '[', false);
    for (uint32_t r = 0; r < m->nranks; r++)
        json_u64_array(w, NULL, m->matrix_bytes + (size_t)r * m->nranks, m->nranks);
    strobe__jw_close(w);
    strobe__jw_open(w, "matrix_messages", '[', false);
    for (uint32_t r = 0; r < m->nranks; r++)
        json_u64_array(w, NULL, m->matrix_messages + (size_t)r * m->nranks, m->nranks);
    strobe__jw_close(w);
    strobe__jw_open(w, "collectives", '[', false);
    for (unsigned c = 1; c < STROBE_MPI_NCOLLS; c++) {
        if (!m->colls[c].calls)
            continue;
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_str(w, "name", strobe_mpi_coll_name(c));
        strobe__jw_u64(w, "calls", m->colls[c].calls);
        strobe__jw_u64(w, "sent_bytes", m->colls[c].sent_bytes);
        strobe__jw_u64(w, "received_bytes", m->colls[c].received_bytes);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_close(w);
}

/* ---- Memory (--malloc) ---------------------------------------------------- */

/* The call path of merged node n as region indices from depth 1 down;
 * null for a path the profile does not have ([] for the thread root). */
static void json_malloc_path(struct strobe__jw *w, const struct strobe_profile *prof, uint32_t n)
{
    uint32_t depth = n == STROBE_NONE ? 0 : prof->nodes[n].depth;
    uint32_t *regions = depth ? malloc(depth * sizeof *regions) : NULL;
    if (n == STROBE_NONE || (depth && !regions)) { /* out of memory: as unknown */
        strobe__jw_null(w, "path");
        return;
    }
    for (uint32_t k = n, i = depth; k != 0 && i > 0; k = prof->nodes[k].parent)
        regions[--i] = prof->nodes[k].region;
    strobe__jw_open(w, "path", '[', true);
    for (uint32_t i = 0; i < depth; i++)
        strobe__jw_u64(w, NULL, regions[i]);
    strobe__jw_close(w);
    free(regions);
}

/* The memory section (docs/formats/report-json.md). */
static void json_malloc(struct strobe__jw *w, const struct strobe_experiment *exp,
                        const struct strobe_profile *prof, const struct strobe_malloc_model *m)
{
    strobe__jw_open(w, "malloc", '{', false);
    strobe__jw_open(w, "processes", '[', false);
    for (size_t p = 0; p < exp->nprocesses; p++) {
        const struct strobe_malloc_info *mi = &exp->processes[p].malloc;
        if (!mi->on)
            continue;
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "process", p);
        strobe__jw_u64(w, "large_bytes", mi->large);
        strobe__jw_bool(w, "summarized", mi->summarized);
        if (mi->summarized) {
            strobe__jw_u64(w, "peak_bytes", mi->peak_bytes);
            if (mi->peak_bytes)
                strobe__jw_u64(w, "peak_ns", mi->peak_ns);
            else
                strobe__jw_null(w, "peak_ns");
            strobe__jw_u64(w, "live_bytes", mi->live_bytes);
            strobe__jw_u64(w, "live_blocks", mi->live_blocks);
            strobe__jw_u64(w, "untracked_blocks", mi->untracked);
        }
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_u64(w, "allocs", m->allocs);
    strobe__jw_u64(w, "alloc_bytes", m->alloc_bytes);
    strobe__jw_u64(w, "frees", m->frees);
    strobe__jw_u64(w, "freed_bytes", m->freed_bytes);
    strobe__jw_u64(w, "live_blocks", m->live_blocks);
    strobe__jw_u64(w, "live_bytes", m->live_bytes);
    strobe__jw_open(w, "paths", '[', false);
    for (size_t i = 0; i < m->npaths; i++) {
        const struct strobe_malloc_path *p = &m->paths[i];
        strobe__jw_open(w, NULL, '{', true);
        json_malloc_path(w, prof, p->node);
        strobe__jw_u64(w, "allocs", p->allocs);
        strobe__jw_u64(w, "alloc_bytes", p->alloc_bytes);
        strobe__jw_u64(w, "frees", p->frees);
        strobe__jw_u64(w, "freed_bytes", p->freed_bytes);
        strobe__jw_u64(w, "live_blocks", p->live_blocks);
        strobe__jw_u64(w, "live_bytes", p->live_bytes);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "leaks", '[', false);
    for (size_t i = 0; i < m->nleaks; i++) {
        const struct strobe_malloc_leak *l = &m->leaks[i];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "thread", l->thread);
        json_malloc_path(w, prof, l->node);
        strobe__jw_u64(w, "blocks", l->blocks);
        strobe__jw_u64(w, "bytes", l->bytes);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "large", '[', false);
    for (size_t i = 0; i < m->nlarge; i++) {
        const struct strobe_malloc_large *l = &m->large[i];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "time_ns", l->time_ns);
        strobe__jw_u64(w, "thread", l->thread);
        strobe__jw_str(w, "event", l->op == STROBE_ALLOC_ALLOC ? "alloc" : "free");
        strobe__jw_str(w, "call", strobe__malloc_call_name(l->call));
        strobe__jw_u64(w, "address", l->address);
        strobe__jw_u64(w, "bytes", l->size);
        json_malloc_path(w, prof, l->node);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_close(w);
}

/* ---- Synchronization (--locks) -------------------------------------------- */

/* The object's symbol (null for a non-global object) and address. */
static void json_object(struct strobe__jw *w, uint32_t process, const char *name, uint64_t object)
{
    strobe__jw_u64(w, "process", process);
    if (name)
        strobe__jw_str(w, "name", name);
    else
        strobe__jw_null(w, "name");
    strobe__jw_u64(w, "address", object);
}

/* The synchronization section (docs/formats/report-json.md). */
static void json_locks(struct strobe__jw *w, const struct strobe_lock_model *m)
{
    strobe__jw_open(w, "locks", '{', false);
    strobe__jw_u64(w, "profiled_threads", m->profiled_threads);
    strobe__jw_open(w, "objects", '[', false);
    for (size_t i = 0; i < m->nrows; i++) {
        const struct strobe_lock_row *r = &m->rows[i];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_str(w, "kind", strobe__sync_kind_name(r->kind));
        json_object(w, r->process, r->name, r->object);
        strobe__jw_open(w, "path", '[', true);
        for (uint32_t k = 0; k < r->depth; k++)
            strobe__jw_u64(w, NULL, r->path[k]);
        strobe__jw_close(w);
        strobe__jw_u64(w, "acquisitions", r->acquisitions);
        strobe__jw_u64(w, "contended", r->contended);
        strobe__jw_u64(w, "wait_ns", r->wait_ns);
        strobe__jw_u64(w, "max_wait_ns", r->max_wait_ns);
        if (r->hold_samples)
            strobe__jw_u64(w, "hold_ns", r->hold_ns);
        else
            strobe__jw_null(w, "hold_ns");
        strobe__jw_u64(w, "hold_samples", r->hold_samples);
        strobe__jw_open(w, "threads", '[', true);
        for (size_t k = 0; k < r->nthreads; k++) {
            strobe__jw_open(w, NULL, '{', true);
            strobe__jw_u64(w, "thread", r->threads[k].thread);
            strobe__jw_u64(w, "acquisitions", r->threads[k].acquisitions);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "sites", '[', false);
    for (size_t i = 0; i < m->nsites; i++) {
        const struct strobe_lock_site *s = &m->sites[i];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_str(w, "kind", strobe__sync_kind_name(s->kind));
        json_object(w, s->process, s->name, s->object);
        strobe__jw_str(w, "function", s->function);
        strobe__jw_str(w, "file", s->file);
        strobe__jw_u64(w, "line", s->line);
        strobe__jw_u64(w, "waits", s->waits);
        strobe__jw_u64(w, "wait_ns", s->wait_ns);
        strobe__jw_u64(w, "max_wait_ns", s->max_wait_ns);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "barriers", '[', false);
    for (size_t i = 0; i < m->nbarriers; i++) {
        const struct strobe_barrier_row *b = &m->barriers[i];
        strobe__jw_open(w, NULL, '{', true);
        json_object(w, b->process, b->name, b->object);
        strobe__jw_u64(w, "episodes", b->episodes);
        strobe__jw_u64(w, "waits", b->waits);
        strobe__jw_u64(w, "wait_ns", b->wait_ns);
        strobe__jw_u64(w, "max_wait_ns", b->max_wait_ns);
        strobe__jw_u64(w, "threads", b->nthreads);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_close(w);
}

/* ---- Filter advice (--score) ------------------------------------------- */

/* events, bytes, overhead_ns (null without a measured cost per event) */
static void json_cost(struct strobe__jw *w, const struct strobe__score *s,
                      const struct strobe__score_estimate *e)
{
    strobe__jw_u64(w, "events", e->events);
    strobe__jw_u64(w, "bytes", e->bytes);
    if (s->view.overhead_known)
        strobe__jw_u64(w, "overhead_ns", (uint64_t)llround(e->overhead_ns));
    else
        strobe__jw_null(w, "overhead_ns");
}

static void json_estimate(struct strobe__jw *w, const char *key, const struct strobe__score *s,
                          const struct strobe__score_estimate *e)
{
    strobe__jw_open(w, key, '{', true);
    json_cost(w, s, e);
    strobe__jw_close(w);
}

int strobe__score_json(FILE *out, const struct strobe__score *s)
{
    const struct strobe_experiment *exp = s->view.exp;
    char line[512];
    struct strobe__jw w = {.out = out};
    json_begin(&w, NULL, "strobe-score", exp);
    strobe__jw_open(&w, "target", '{', true);
    if (s->target.kind == STROBE__SCORE_SIZE) {
        strobe__jw_str(&w, "kind", "size");
        strobe__jw_u64(&w, "bytes", s->target.bytes);
    } else {
        strobe__jw_str(&w, "kind", "overhead");
        strobe__jw_double(&w, "percent", s->target.pct);
    }
    strobe__jw_close(&w);
    strobe__jw_u64(&w, "thread_time_ns", s->view.thread_time_ns);
    strobe__jw_u64(&w, "dropped", exp->total_dropped);
    strobe__jw_double(&w, "bytes_per_event", s->bytes_per_event);
    strobe__jw_str(&w, "bytes_per_event_from", s->bytes_measured ? "trace" : "format");
    json_estimate(&w, "full_run", s, &s->full);
    json_estimate(&w, "filtered", s, &s->filtered);
    json_estimate(&w, "regions_total", s, &s->regions);
    json_estimate(&w, "regions_kept", s, &s->kept);
    strobe__jw_u64(&w, "excluded", s->nexcluded);
    if (s->evaluable)
        strobe__jw_bool(&w, "target_met", s->met);
    else
        strobe__jw_null(&w, "target_met");
    strobe__score_outcome(s, line, sizeof line);
    strobe__jw_str(&w, "outcome", line);
    strobe__jw_open(&w, "regions", '[', false);
    for (size_t i = 0; i < s->nrows; i++) {
        const struct strobe__score_row *r = &s->rows[i];
        strobe__jw_open(&w, NULL, '{', true);
        strobe__jw_u64(&w, "region", r->region);
        strobe__jw_str(&w, "name", exp->regions[r->region].name);
        strobe__jw_str(&w, "kind", strobe_region_kind_name(exp->regions[r->region].kind));
        strobe__jw_u64(&w, "visits", r->visits);
        strobe__jw_u64(&w, "incl_ns", r->incl_ns);
        strobe__jw_u64(&w, "excl_ns", r->excl_ns);
        strobe__jw_bool(&w, "timed", r->timed);
        json_cost(&w, s, &r->cost);
        strobe__jw_str(&w, "filter", strobe__score_filter_name(r->filter));
        strobe__jw_close(&w);
    }
    strobe__jw_close(&w);
    strobe__jw_close(&w);
    fputc('\n', out);
    return strobe__report_flush(out);
}

/* ---- Samples (--samples) -------------------------------------------------- */

/* The sampled section (docs/formats/report-json.md). */
static void json_samples(struct strobe__jw *w, const struct strobe_experiment *exp,
                         const struct strobe_profile *prof, const struct strobe_sample_model *m)
{
    strobe__jw_open(w, "samples", '{', false);
    strobe__jw_u64(w, "hz", m->hz);
    strobe__jw_str(w, "source", m->source == STROBE_SAMPLE_PERF ? "perf" : "timer");
    strobe__jw_bool(w, "mixed_rates", m->mixed_rates);
    strobe__jw_u64(w, "records", m->records);
    strobe__jw_u64(w, "samples", m->samples);
    strobe__jw_u64(w, "missed", m->missed);
    strobe__jw_u64(w, "truncated", m->truncated);
    strobe__jw_u64(w, "unstacked", m->unstacked);
    strobe__jw_open(w, "threads", '[', false);
    for (size_t t = 0; t < exp->nthreads; t++) {
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "thread", t);
        strobe__jw_u64(w, "records", m->threads[t].records);
        strobe__jw_u64(w, "samples", m->threads[t].samples);
        strobe__jw_u64(w, "missed", m->threads[t].missed);
        strobe__jw_u64(w, "truncated", m->threads[t].truncated);
        uint64_t cpu_ns;
        bool listed;
        double cover = strobe__sample_cover(exp, m, t, &cpu_ns, &listed);
        strobe__jw_bool(w, "listed", listed);
        if (exp->threads[t].has_rusage)
            strobe__jw_u64(w, "cpu_ns", cpu_ns);
        else
            strobe__jw_null(w, "cpu_ns");
        if (cover >= 0)
            strobe__jw_double(w, "cover", cover);
        else
            strobe__jw_null(w, "cover");
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "functions", '[', false);
    for (size_t i = 0; i < m->nfuncs; i++) {
        const struct strobe_sample_func *f = &m->funcs[i];
        strobe__jw_open(w, NULL, '{', false);
        strobe__jw_str(w, "name", f->name);
        strobe__jw_str(w, "module", f->module);
        strobe__jw_str(w, "file", f->file);
        strobe__jw_u64(w, "line", f->line);
        strobe__jw_u64(w, "self", f->self);
        strobe__jw_u64(w, "total", f->total);
        /* per thread, only the threads it was sampled in: [thread, self, total] */
        strobe__jw_open(w, "threads", '[', true);
        for (size_t t = 0; t < exp->nthreads; t++) {
            if (!f->thread_total[t])
                continue;
            strobe__jw_open(w, NULL, '[', true);
            strobe__jw_u64(w, NULL, t);
            strobe__jw_u64(w, NULL, f->thread_self[t]);
            strobe__jw_u64(w, NULL, f->thread_total[t]);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    /* the call tree: node 0 is the root, parents before children */
    strobe__jw_open(w, "tree", '[', false);
    for (size_t n = 0; n < m->nnodes; n++) {
        const struct strobe_sample_node *x = &m->nodes[n];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "id", n);
        strobe__jw_ref(w, "parent", x->parent);
        strobe__jw_ref(w, "function", x->func);
        strobe__jw_u64(w, "self", x->self);
        strobe__jw_u64(w, "total", x->total);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "paths", '[', false);
    for (size_t i = 0; i < m->npaths; i++) {
        const struct strobe_sample_path *p = &m->paths[i];
        strobe__jw_open(w, NULL, '{', true);
        if (prof)
            json_malloc_path(w, prof, p->node);
        else
            strobe__jw_null(w, "path");
        strobe__jw_u64(w, "samples", p->samples);
        strobe__jw_ref(w, "function", p->top_func);
        strobe__jw_u64(w, "function_samples", p->top_samples);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_close(w);
}

int strobe__report_json_object(struct strobe__jw *w, const char *key, const struct strobe_experiment *exp,
                               const struct strobe_profile *prof, const struct strobe_report_opts *opts)
{
    struct strobe__report_view v;
    int rc = strobe__report_view_build(&v, exp, prof, opts ? opts->sort : STROBE_REPORT_SORT_EXCL);
    if (rc)
        return rc;
    json_begin(w, key, "strobe-report", exp);
    strobe__jw_open(w, "meta", '{', false);
    for (size_t i = 0; i < exp->nmeta; i++)
        if (exp->meta_keys[i])
            strobe__jw_str(w, exp->meta_keys[i], exp->meta_values[i]);
    strobe__jw_close(w);
    json_summary(w, &v);
    json_system(w, &v);
    json_defs(w, exp);
    json_flat(w, &v);
    rc = json_tree(w, &v, opts && opts->tree_columns);
    if (rc == 0 && opts && opts->by != STROBE_REPORT_BY_NONE) {
        struct strobe__report_groups g;
        if ((rc = strobe__report_groups_build(&g, &v, opts->by)) == 0) {
            json_groups(w, &v, &g, opts->by);
            strobe__report_groups_free(&g);
        }
    }
    if (rc == 0 && opts && opts->blocks)
        json_blocks(w, opts->blocks);
    if (rc == 0 && opts && opts->tm)
        json_tm(w, exp, opts->tm);
    if (rc == 0 && opts && opts->malloc)
        json_malloc(w, exp, prof, opts->malloc);
    if (rc == 0 && opts && opts->samples)
        json_samples(w, exp, prof, opts->samples);
    if (rc == 0 && opts && opts->blame)
        strobe__report_blame_json(w, opts->blame);
    if (rc == 0 && opts && opts->locks)
        json_locks(w, opts->locks);
    if (rc == 0 && opts && opts->mpi)
        json_mpi(w, opts->mpi);
    if (rc == 0 && opts && opts->taskgraph)
        strobe__taskgraph_json(w, opts->taskgraph);
    strobe__jw_close(w);
    strobe__report_view_free(&v);
    return rc;
}

int strobe_report_json(FILE *out, const struct strobe_experiment *exp, const struct strobe_profile *prof,
                       const struct strobe_report_opts *opts)
{
    struct strobe__jw w = {.out = out};
    int rc = strobe__report_json_object(&w, NULL, exp, prof, opts);
    if (rc)
        return rc;
    fputc('\n', out);
    return strobe__report_flush(out);
}
