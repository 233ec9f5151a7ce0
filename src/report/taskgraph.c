/* SPDX-License-Identifier: MIT */
/* The task graph's text, JSON and DOT outputs (see taskgraph.h). */
#include "report/taskgraph.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "report/locks.h"
#include "report/units.h"

static const char *region_name(const struct strobe_experiment *exp, uint32_t region)
{
    return region == STROBE_NONE || region >= exp->nregions ? "(outside measured regions)"
                                                            : exp->regions[region].name;
}

/* work / span with two decimals, "-" without a span */
static void fmt_ratio(char *buf, size_t len, uint64_t work, uint64_t span)
{
    if (span == 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2f", (double)work / (double)span);
}

static void text_process(FILE *out, const struct strobe_experiment *exp, const struct strobe_tg_process *pr,
                         size_t top)
{
    char a[STROBE_UNITS_LEN], b[STROBE_UNITS_LEN], c[STROBE_UNITS_LEN], r[32];
    fprintf(out, "\nTask graph of process %" PRIu64 "%s\n", exp->processes[pr->process].pid,
            pr->ticketed ? "" : " (merged by time: no tickets, recorded without --taskgraph; approximate)");
    fprintf(out, "  %" PRIu64 " tasks; edges:", pr->tasks);
    for (uint32_t k = 0; k < STROBE_TG_NKINDS; k++)
        fprintf(out, " %s %" PRIu64, strobe_tg_edge_kind_name(k), pr->edges[k]);
    fmt_ratio(r, sizeof r, pr->work_ns, pr->span_ns);
    fprintf(out, "\n  work %s, span (critical path) %s, parallelism (work / span) %s\n",
            strobe__fmt_time(a, pr->work_ns), strobe__fmt_time(b, pr->span_ns), r);
    if (pr->blocks) {
        fmt_ratio(r, sizeof r, pr->block_count, pr->path_blocks);
        fprintf(out,
                "  blocks %" PRIu64 ", on the critical path %" PRIu64
                " (parallelism in work %s); reads %" PRIu64 " (%s), writes %" PRIu64 " (",
                pr->block_count, pr->path_blocks, r, pr->reads, strobe__fmt_bytes(a, pr->read_bytes),
                pr->writes);
        fprintf(out, "%s)\n", strobe__fmt_bytes(b, pr->write_bytes));
    }

    fprintf(out, "\nCritical path: %s over %" PRIu64 " tasks\n", strobe__fmt_time(a, pr->span_ns),
            pr->path_tasks);
    if (pr->nregions)
        fprintf(out, "  %10s %6s %8s  %s\n", "time", "share", "tasks", "region (at the task's start)");
    size_t shown = top && top < pr->nregions ? top : pr->nregions;
    for (size_t i = 0; i < shown; i++) {
        const struct strobe_tg_region_time *x = &pr->regions[i];
        fputs("  ", out);
        strobe__cell(out, strobe__fmt_time(a, x->ns), 10);
        fprintf(out, " %5.1f%% %8" PRIu64 "  %s\n",
                pr->span_ns ? 100.0 * (double)x->ns / (double)pr->span_ns : 0.0, x->tasks,
                region_name(exp, x->region));
    }
    if (shown < pr->nregions)
        fprintf(out, "  ... %zu more regions (--top 0 shows all)\n", pr->nregions - shown);
    if (pr->npath) {
        fprintf(out, "  %8s %-8s %10s %10s %10s  %-8s %s\n", "task", "thread", "start", "end", "duration",
                "via", "region");
        shown = top && top < pr->npath ? top : pr->npath;
        for (size_t i = 0; i < shown; i++) {
            const struct strobe_tg_step *s = &pr->path[i];
            fprintf(out, "  %8" PRIu64 " ", s->id);
            char t[32];
            snprintf(t, sizeof t, "t%u", exp->threads[s->thread].index);
            fprintf(out, "%-8s ", t);
            strobe__cell(out, strobe__fmt_time(a, s->start_ns), 10);
            fputc(' ', out);
            strobe__cell(out, strobe__fmt_time(b, s->end_ns), 10);
            fputc(' ', out);
            strobe__cell(out, strobe__fmt_time(c, s->end_ns - s->start_ns), 10);
            fprintf(out, "  %-8s %s\n", strobe_tg_edge_kind_name(s->via), region_name(exp, s->region));
        }
        if (shown < pr->path_tasks)
            fprintf(out, "  ... %" PRIu64 " more tasks%s\n", pr->path_tasks - shown,
                    shown < pr->npath ? " (--top 0 shows all)"
                                      : " (the report keeps the first " STROBE_TG_PATH_KEEP_TEXT ")");
    }
    if (pr->nbins) {
        fprintf(out, "\nParallelism over time (busy threads per %s from %s)\n ",
                strobe__fmt_time(a, pr->bin_ns), strobe__fmt_time(b, pr->begin_ns));
        for (size_t i = 0; i < pr->nbins; i++) {
            uint64_t width = i + 1 == pr->nbins ? pr->last_bin_ns : pr->bin_ns;
            fprintf(out, " %.2f", width ? (double)pr->busy[i] / (double)width : 0.0);
            if (i % 10 == 9 && i + 1 < pr->nbins)
                fputs("\n ", out);
        }
        fputc('\n', out);
    }
}

/* The sharing tables (block streams with memory accesses). */
static void text_sharing(FILE *out, const struct strobe_experiment *exp, const struct strobe_taskgraph *g,
                         size_t top)
{
    char a[STROBE_UNITS_LEN];
    fprintf(out, "\nSharing (bytes written by one thread and read later by another)\n");
    if (g->nshares == 0)
        fprintf(out, "  none\n");
    else
        fprintf(out, "  %12s  %-12s %s\n", "bytes", "writer", "reader");
    size_t shown = top && top < g->nshares ? top : g->nshares;
    for (size_t i = 0; i < shown; i++) {
        const struct strobe_tg_share *x = &g->shares[i];
        fprintf(out, "  %12" PRIu64 "  ", x->bytes);
        char w[32];
        snprintf(w, sizeof w, "t%u", exp->threads[x->writer].index);
        fprintf(out, "%-12s ", w);
        strobe__thread_label(out, exp, x->reader);
        fprintf(out, " (%s)\n", strobe__fmt_bytes(a, x->bytes));
    }
    if (shown < g->nshares)
        fprintf(out, "  ... %zu more (--top 0 shows all)\n", g->nshares - shown);
    fprintf(out, "\nFalse-sharing candidates (64-byte lines written by two threads at different addresses in "
                 "overlapping tasks)\n");
    if (g->nfalse_shares == 0)
        fprintf(out, "  none\n");
    else
        fprintf(out, "  %10s  %-18s %s\n", "conflicts", "line", "threads: address (source)");
    shown = top && top < g->nfalse_shares ? top : g->nfalse_shares;
    for (size_t i = 0; i < shown; i++) {
        const struct strobe_tg_false_share *f = &g->false_shares[i];
        fprintf(out, "  %10" PRIu64 "  0x%-16" PRIx64, f->conflicts, f->line);
        for (int k = 0; k < 2; k++) {
            fputs(k ? ";  " : " ", out);
            strobe__thread_label(out, exp, f->thread[k]);
            fprintf(out, ": 0x%" PRIx64 " (%s:%u)", f->address[k], *f->file[k] ? f->file[k] : "?",
                    f->source_line[k]);
        }
        fputc('\n', out);
    }
    if (shown < g->nfalse_shares)
        fprintf(out, "  ... %zu more (--top 0 shows all)\n", g->nfalse_shares - shown);
}

int strobe_report_taskgraph_text(FILE *out, const struct strobe_experiment *exp,
                                 const struct strobe_taskgraph *g, size_t top)
{
    char a[STROBE_UNITS_LEN], b[STROBE_UNITS_LEN], c[STROBE_UNITS_LEN];
    if (g->nprocesses == 0)
        fprintf(out, "\nTask graph: none (no event streams: the run was not traced)\n");
    for (size_t i = 0; i < g->nprocesses; i++)
        text_process(out, exp, &g->processes[i], top);

    fprintf(out, "\nLock contention (per object and acquiring call path, by total wait)\n");
    if (g->nlocks == 0)
        fprintf(out, "  none recorded\n");
    else
        fprintf(out, "  %10s %10s %10s %10s %8s  %-7s %s\n", "wait", "max wait", "hold", "acquired",
                "on path", "kind", "object / call path");
    size_t shown = top && top < g->nlocks ? top : g->nlocks;
    for (size_t i = 0; i < shown; i++) {
        const struct strobe_tg_lock *l = &g->locks[i];
        fputs("  ", out);
        strobe__cell(out, strobe__fmt_time(a, l->wait_ns), 10);
        fputc(' ', out);
        strobe__cell(out, strobe__fmt_time(b, l->max_wait_ns), 10);
        fputc(' ', out);
        strobe__cell(out, strobe__fmt_time(c, l->hold_ns), 10);
        fprintf(out, " %10" PRIu64 " %8" PRIu64 "  %-7s ", l->acquisitions, l->on_path,
                strobe__sync_kind_name(l->kind));
        strobe__object_label(out, exp, l->process, l->name, l->object);
        fprintf(out, "\n  %*s path: ", 64, "");
        if (l->depth == 0)
            fprintf(out, "(outside measured regions)");
        for (uint32_t k = 0; k < l->depth; k++)
            fprintf(out, "%s%s", k ? " > " : "", region_name(exp, l->path[k]));
        fputc('\n', out);
    }
    if (shown < g->nlocks)
        fprintf(out, "  ... %zu more (--top 0 shows all)\n", g->nlocks - shown);

    fprintf(out, "\nBarrier imbalance (per episode, by the wait the last arriver caused)\n");
    if (g->nepisodes == 0)
        fprintf(out, "  none recorded\n");
    else
        fprintf(out, "  %10s %10s %8s %-12s  %s\n", "wait", "last at", "threads", "last", "barrier #episode");
    shown = top && top < g->nepisodes ? top : g->nepisodes;
    for (size_t i = 0; i < shown; i++) {
        const struct strobe_tg_episode *e = &g->episodes[i];
        fputs("  ", out);
        strobe__cell(out, strobe__fmt_time(a, e->wait_ns), 10);
        fputc(' ', out);
        strobe__cell(out, strobe__fmt_time(b, e->last_ns), 10);
        fprintf(out, " %8u ", e->threads);
        char t[32];
        snprintf(t, sizeof t, "t%u", exp->threads[e->last].index);
        fprintf(out, "%-12s  ", t);
        strobe__object_label(out, exp, e->process, e->name, e->object);
        fprintf(out, " #%" PRIu64 "%s\n", e->episode, e->complete ? "" : " (incomplete)");
    }
    if (shown < g->nepisodes)
        fprintf(out, "  ... %zu more (--top 0 shows all)\n", g->nepisodes - shown);
    if (g->has_blocks)
        text_sharing(out, exp, g, top);
    return ferror(out) ? -EIO : 0;
}

static void json_name(struct strobe__jw *w, const char *name)
{
    if (name)
        strobe__jw_str(w, "name", name);
    else
        strobe__jw_null(w, "name");
}

void strobe__taskgraph_json(struct strobe__jw *w, const struct strobe_taskgraph *g)
{
    strobe__jw_open(w, "taskgraph", '{', false);
    strobe__jw_u64(w, "events", g->events);
    strobe__jw_u64(w, "tasks", g->tasks);
    strobe__jw_u64(w, "peak_live_tasks", g->peak_live);
    strobe__jw_open(w, "edges", '{', true);
    for (uint32_t k = 0; k < STROBE_TG_NKINDS; k++)
        strobe__jw_u64(w, strobe_tg_edge_kind_name(k), g->edges[k]);
    strobe__jw_close(w);
    strobe__jw_open(w, "processes", '[', false);
    for (size_t i = 0; i < g->nprocesses; i++) {
        const struct strobe_tg_process *pr = &g->processes[i];
        strobe__jw_open(w, NULL, '{', false);
        strobe__jw_u64(w, "process", pr->process);
        strobe__jw_bool(w, "ticketed", pr->ticketed);
        strobe__jw_u64(w, "tasks", pr->tasks);
        strobe__jw_open(w, "edges", '{', true);
        for (uint32_t k = 0; k < STROBE_TG_NKINDS; k++)
            strobe__jw_u64(w, strobe_tg_edge_kind_name(k), pr->edges[k]);
        strobe__jw_close(w);
        strobe__jw_bool(w, "blocks", pr->blocks);
        strobe__jw_u64(w, "block_count", pr->block_count);
        strobe__jw_u64(w, "reads", pr->reads);
        strobe__jw_u64(w, "writes", pr->writes);
        strobe__jw_u64(w, "read_bytes", pr->read_bytes);
        strobe__jw_u64(w, "write_bytes", pr->write_bytes);
        strobe__jw_u64(w, "critical_path_blocks", pr->path_blocks);
        strobe__jw_u64(w, "work_ns", pr->work_ns);
        strobe__jw_u64(w, "span_ns", pr->span_ns);
        if (pr->span_ns)
            strobe__jw_double(w, "parallelism", (double)pr->work_ns / (double)pr->span_ns);
        else
            strobe__jw_null(w, "parallelism");
        strobe__jw_u64(w, "critical_path_tasks", pr->path_tasks);
        strobe__jw_open(w, "critical_path", '[', false);
        for (size_t k = 0; k < pr->npath; k++) {
            const struct strobe_tg_step *s = &pr->path[k];
            strobe__jw_open(w, NULL, '{', true);
            strobe__jw_u64(w, "task", s->id);
            strobe__jw_u64(w, "thread", s->thread);
            strobe__jw_u64(w, "start_ns", s->start_ns);
            strobe__jw_u64(w, "end_ns", s->end_ns);
            strobe__jw_ref(w, "region", s->region);
            strobe__jw_str(w, "via", strobe_tg_edge_kind_name(s->via));
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
        strobe__jw_open(w, "critical_regions", '[', false);
        for (size_t k = 0; k < pr->nregions; k++) {
            strobe__jw_open(w, NULL, '{', true);
            strobe__jw_ref(w, "region", pr->regions[k].region);
            strobe__jw_u64(w, "ns", pr->regions[k].ns);
            strobe__jw_u64(w, "tasks", pr->regions[k].tasks);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
        strobe__jw_open(w, "parallelism_over_time", '{', false);
        strobe__jw_u64(w, "begin_ns", pr->begin_ns);
        strobe__jw_u64(w, "bin_ns", pr->bin_ns);
        strobe__jw_u64(w, "last_bin_ns", pr->last_bin_ns);
        strobe__jw_open(w, "busy_ns", '[', true);
        for (size_t k = 0; k < pr->nbins; k++)
            strobe__jw_u64(w, NULL, pr->busy[k]);
        strobe__jw_close(w);
        strobe__jw_close(w);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "locks", '[', false);
    for (size_t i = 0; i < g->nlocks; i++) {
        const struct strobe_tg_lock *l = &g->locks[i];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_str(w, "kind", strobe__sync_kind_name(l->kind));
        strobe__jw_u64(w, "process", l->process);
        json_name(w, l->name);
        strobe__jw_u64(w, "address", l->object);
        strobe__jw_open(w, "path", '[', true);
        for (uint32_t k = 0; k < l->depth; k++)
            strobe__jw_ref(w, NULL, l->path[k]);
        strobe__jw_close(w);
        strobe__jw_u64(w, "acquisitions", l->acquisitions);
        strobe__jw_u64(w, "wait_ns", l->wait_ns);
        strobe__jw_u64(w, "max_wait_ns", l->max_wait_ns);
        strobe__jw_u64(w, "hold_ns", l->hold_ns);
        strobe__jw_u64(w, "on_critical_path", l->on_path);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "barrier_episodes", '[', false);
    for (size_t i = 0; i < g->nepisodes; i++) {
        const struct strobe_tg_episode *e = &g->episodes[i];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "process", e->process);
        json_name(w, e->name);
        strobe__jw_u64(w, "address", e->object);
        strobe__jw_u64(w, "episode", e->episode);
        strobe__jw_u64(w, "threads", e->threads);
        strobe__jw_u64(w, "last_thread", e->last);
        strobe__jw_u64(w, "first_arrival_ns", e->first_ns);
        strobe__jw_u64(w, "last_arrival_ns", e->last_ns);
        strobe__jw_u64(w, "wait_ns", e->wait_ns);
        strobe__jw_bool(w, "complete", e->complete);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_bool(w, "memory_accesses", g->has_blocks);
    strobe__jw_open(w, "sharing", '[', false);
    for (size_t i = 0; i < g->nshares; i++) {
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "process", g->shares[i].process);
        strobe__jw_u64(w, "writer", g->shares[i].writer);
        strobe__jw_u64(w, "reader", g->shares[i].reader);
        strobe__jw_u64(w, "bytes", g->shares[i].bytes);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_open(w, "false_sharing", '[', false);
    for (size_t i = 0; i < g->nfalse_shares; i++) {
        const struct strobe_tg_false_share *f = &g->false_shares[i];
        strobe__jw_open(w, NULL, '{', true);
        strobe__jw_u64(w, "process", f->process);
        strobe__jw_u64(w, "line", f->line);
        strobe__jw_u64(w, "conflicts", f->conflicts);
        strobe__jw_open(w, "writes", '[', true);
        for (int k = 0; k < 2; k++) {
            strobe__jw_open(w, NULL, '{', true);
            strobe__jw_u64(w, "thread", f->thread[k]);
            strobe__jw_u64(w, "address", f->address[k]);
            strobe__jw_str(w, "file", f->file[k]);
            strobe__jw_u64(w, "source_line", f->source_line[k]);
            strobe__jw_close(w);
        }
        strobe__jw_close(w);
        strobe__jw_close(w);
    }
    strobe__jw_close(w);
    strobe__jw_close(w);
}

/* ---- the graph itself ---- */

static int json_task(void *arg, const struct strobe_tg_task *t)
{
    struct strobe__tg_writer *tw = arg;
    struct strobe__jw *w = &tw->w;
    strobe__jw_open(w, NULL, '{', true);
    strobe__jw_u64(w, "id", t->id);
    strobe__jw_u64(w, "thread", t->thread);
    strobe__jw_u64(w, "start_ns", t->start_ns);
    strobe__jw_u64(w, "end_ns", t->end_ns);
    strobe__jw_ref(w, "region", t->region);
    strobe__jw_u64(w, "blocks", t->blocks);
    strobe__jw_u64(w, "reads", t->reads);
    strobe__jw_u64(w, "writes", t->writes);
    strobe__jw_u64(w, "read_bytes", t->read_bytes);
    strobe__jw_u64(w, "write_bytes", t->write_bytes);
    strobe__jw_u64(w, "lines", t->lines);
    strobe__jw_close(w);
    return ferror(w->out) ? -EIO : 0;
}

static int json_edge(void *arg, const struct strobe_tg_edge *e)
{
    struct strobe__tg_writer *tw = arg;
    struct strobe__jw *w = &tw->ew;
    strobe__jw_open(w, NULL, '{', true);
    strobe__jw_u64(w, "from", e->from);
    strobe__jw_u64(w, "to", e->to);
    strobe__jw_str(w, "kind", strobe_tg_edge_kind_name(e->kind));
    strobe__jw_close(w);
    return ferror(w->out) ? -EIO : 0;
}

/* DOT: a node per task labelled thread, region and duration; edges
 * coloured by kind (program order solid grey). */
static int dot_task(void *arg, const struct strobe_tg_task *t)
{
    struct strobe__tg_writer *tw = arg;
    const struct strobe_experiment *exp = tw->exp;
    char d[STROBE_UNITS_LEN];
    fprintf(tw->out, "  n%" PRIu64 " [label=\"t%u #%" PRIu64 "\\n", t->id, exp->threads[t->thread].index,
            t->id);
    for (const char *p = region_name(exp, t->region); *p; p++) {
        if (*p == '"' || *p == '\\')
            fputc('\\', tw->out);
        fputc(*p, tw->out);
    }
    fprintf(tw->out, "\\n%s\"];\n", strobe__fmt_time(d, t->end_ns - t->start_ns));
    return ferror(tw->out) ? -EIO : 0;
}

static int dot_edge(void *arg, const struct strobe_tg_edge *e)
{
    /* by enum strobe_tg_edge_kind: fork like create */
    static const char *const colors[STROBE_TG_NKINDS] = {"gray50", "darkgreen", "darkgreen", "red",
                                                         "blue",   "orange",    "darkgreen"};
    struct strobe__tg_writer *tw = arg;
    fprintf(tw->out, "  n%" PRIu64 " -> n%" PRIu64 " [color=%s", e->from, e->to, colors[e->kind]);
    if (e->kind != STROBE_TG_PROGRAM)
        fprintf(tw->out, ", label=%s", strobe_tg_edge_kind_name(e->kind));
    fputs("];\n", tw->out);
    return ferror(tw->out) ? -EIO : 0;
}

int strobe__tg_writer_begin(struct strobe__tg_writer *tw, FILE *out, const struct strobe_experiment *exp,
                            int format, struct strobe_tg_sink *sink)
{
    *tw = (struct strobe__tg_writer){.exp = exp, .format = format, .out = out};
    if (format == STROBE_TG_FORMAT_DOT) {
        *sink = (struct strobe_tg_sink){tw, dot_task, dot_edge};
        fprintf(out, "digraph taskgraph {\n  node [shape=box, fontsize=10];\n");
        return 0;
    }
    if (!(tw->edges = tmpfile()))
        return -errno;
    *sink = (struct strobe_tg_sink){tw, json_task, json_edge};
    tw->w = (struct strobe__jw){.out = out};
    strobe__jw_open(&tw->w, NULL, '{', false);
    strobe__jw_u64(&tw->w, "version", STROBE_TASKGRAPH_JSON_VERSION);
    strobe__jw_str(&tw->w, "experiment", exp->dir);
    strobe__jw_open(&tw->w, "threads", '[', false);
    for (size_t i = 0; i < exp->nthreads; i++) {
        const struct strobe_thread_info *t = &exp->threads[i];
        strobe__jw_open(&tw->w, NULL, '{', true);
        strobe__jw_u64(&tw->w, "thread", i);
        strobe__jw_u64(&tw->w, "process", t->process);
        strobe__jw_u64(&tw->w, "pid", exp->processes[t->process].pid);
        strobe__jw_u64(&tw->w, "index", t->index);
        strobe__jw_close(&tw->w);
    }
    strobe__jw_close(&tw->w);
    strobe__jw_open(&tw->w, "regions", '[', false);
    for (size_t r = 0; r < exp->nregions; r++) {
        strobe__jw_open(&tw->w, NULL, '{', true);
        strobe__jw_u64(&tw->w, "id", r);
        strobe__jw_str(&tw->w, "name", exp->regions[r].name);
        strobe__jw_str(&tw->w, "file", exp->regions[r].file);
        strobe__jw_u64(&tw->w, "line", exp->regions[r].line);
        strobe__jw_close(&tw->w);
    }
    strobe__jw_close(&tw->w);
    strobe__jw_open(&tw->w, "tasks", '[', false);
    /* the edges array's writer, as the document's will be when it opens "edges" */
    tw->ew = (struct strobe__jw){.out = tw->edges, .depth = 2};
    tw->ew.first[2] = true;
    tw->ew.close[2] = ']';
    return 0;
}

static int copy(FILE *from, FILE *to)
{
    char buf[65536];
    size_t n;
    if (fflush(from) != 0 || fseek(from, 0, SEEK_SET) != 0)
        return -EIO;
    while ((n = fread(buf, 1, sizeof buf, from)) > 0)
        if (fwrite(buf, 1, n, to) != n)
            return -EIO;
    return ferror(from) ? -EIO : 0;
}

int strobe__tg_writer_end(struct strobe__tg_writer *tw, const struct strobe_taskgraph *g)
{
    int rc = 0;
    if (g && tw->format == STROBE_TG_FORMAT_DOT) {
        fputs("}\n", tw->out);
    } else if (g) {
        struct strobe__jw *w = &tw->w;
        strobe__jw_close(w);
        strobe__jw_open(w, "edges", '[', false);
        rc = copy(tw->edges, tw->out);
        w->first[w->depth] = tw->ew.first[2];
        strobe__jw_close(w);
        strobe__taskgraph_json(w, g);
        strobe__jw_close(w);
        fputc('\n', tw->out);
    }
    if (tw->edges)
        fclose(tw->edges);
    tw->edges = NULL;
    return rc ? rc : ferror(tw->out) ? -EIO : 0;
}
