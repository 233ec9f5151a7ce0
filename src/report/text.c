/* SPDX-License-Identifier: MIT */
/*
 * Text rendering of the report: summary, flat profile, call tree and (with
 * opts.threads) the per-thread distribution. Columns are right-aligned by
 * display width so "µs" and UTF-8 names do not shift them; every number is
 * printed through units.c so equal models print identical lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/align.h"
#include "common/format.h"
#include "report/report.h"
#include "report/malloc.h"
#include "report/samples.h"
#include "report/mpi.h"
#include "report/score.h"
#include "report/units.h"
#include "report/verdict.h"
#include "report/view.h"
#include "strobe/strobe.h"
#include "strobe/tm.h"

/* At most this many region columns in the thread x region table: with
 * 13-column cells that is about 120 columns. JSON has every region. */
#define MATRIX_MAX_REGIONS 8

void strobe_report_opts_init(struct strobe_report_opts *opts)
{
    *opts = (struct strobe_report_opts){.sort = STROBE_REPORT_SORT_EXCL,
                                        .top = STROBE_REPORT_TOP_DEFAULT,
                                        .by = STROBE_REPORT_BY_NONE};
}

int strobe_report_sort_parse(const char *s)
{
    if (strcmp(s, "excl") == 0)
        return STROBE_REPORT_SORT_EXCL;
    if (strcmp(s, "incl") == 0)
        return STROBE_REPORT_SORT_INCL;
    if (strcmp(s, "visits") == 0)
        return STROBE_REPORT_SORT_VISITS;
    return -1;
}

const char *strobe_report_sort_name(int sort)
{
    switch (sort) {
    case STROBE_REPORT_SORT_INCL:
        return "incl";
    case STROBE_REPORT_SORT_VISITS:
        return "visits";
    default:
        return "excl";
    }
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* "name (file.c:12)", "name (file.c)", "name [libfoo.so]" or "name". */
static void region_label(FILE *out, const struct strobe_experiment *exp, uint32_t r)
{
    const struct strobe_region_def *d = &exp->regions[r];
    fputs(d->name, out);
    if (d->file && d->file[0]) {
        fprintf(out, " (%s", base_name(d->file));
        if (d->line)
            fprintf(out, ":%u", d->line);
        fputc(')', out);
    } else if (d->module && d->module[0]) {
        fprintf(out, " [%s]", base_name(d->module));
    }
}

static char *fmt_u64(char buf[STROBE_UNITS_LEN], uint64_t v)
{
    snprintf(buf, STROBE_UNITS_LEN, "%" PRIu64, v);
    return buf;
}

/* Time, or "-" when the statistic does not exist (no completed visit). */
static char *fmt_time_or_dash(char buf[STROBE_UNITS_LEN], uint64_t ns, bool valid)
{
    if (!valid) {
        strcpy(buf, "-");
        return buf;
    }
    return strobe__fmt_time(buf, ns);
}

static char *fmt_pct(char buf[STROBE_UNITS_LEN], double part, double whole)
{
    snprintf(buf, STROBE_UNITS_LEN, "%.2f%%", whole > 0 ? 100.0 * part / whole : 0.0);
    return buf;
}

/* Marks a row whose visits include some still open when measurement
 * ended (the summary explains it). */
static void open_note(FILE *out, uint64_t open_at_end)
{
    if (open_at_end)
        fprintf(out, " [open at end: %" PRIu64 "]", open_at_end);
}

/* ---- Summary ----------------------------------------------------------- */

static void summary_line(FILE *out, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void summary_line(FILE *out, const char *label, const char *fmt, ...)
{
    va_list ap;
    fprintf(out, "  %-16s ", label);
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
}

/* Which threads dropped events, and the per-stream size limit that would
 * have kept them (events of the thread x its bytes per event, rounded up
 * to a whole MiB). */
static void text_drops(FILE *out, const struct strobe_experiment *exp)
{
    char a[STROBE_UNITS_LEN], b[STROBE_UNITS_LEN];
    fprintf(out,
            "WARNING: %" PRIu64 " events were dropped: the trace and anything rebuilt from it are incomplete\n",
            exp->total_dropped);
    uint64_t need = 0;
    for (size_t i = 0; i < exp->nthreads; i++) {
        const struct strobe_thread_info *t = &exp->threads[i];
        if (!t->dropped)
            continue;
        fprintf(out, "  thread %zu (%s t%u): %" PRIu64 " dropped of %" PRIu64, i, exp->processes[t->process].dir,
                t->index, t->dropped, t->dropped + t->events);
        /* at the limit: its records fill it, but for headers and chunk padding */
        if (t->limit_bytes && t->events && t->bytes + t->limit_bytes / 64 + 4096 >= t->limit_bytes) {
            long double bytes = (long double)t->bytes * (long double)(t->events + t->dropped) / (long double)t->events;
            uint64_t mib = (uint64_t)(bytes / (1u << 20)) + 1;
            if (mib << 20 > need)
                need = mib << 20;
            fprintf(out, " at the size limit of %s per stream\n", strobe__fmt_bytes(a, t->limit_bytes));
        } else {
            fputs(" (events from signal handlers that interrupted the runtime)\n", out);
        }
    }
    if (need)
        fprintf(out, "  to keep them: strobe run with STROBE_TRACE_LIMIT=%" PRIu64 "M (%s per thread), or fewer events "
                     "(strobe report --score writes a --filter)\n",
                need >> 20, strobe__fmt_bytes(b, need));
}

/* The intervals in which a process did not record (RECORDING records):
 * one line per process that paused. */
static void text_paused(FILE *out, const struct strobe_experiment *exp)
{
    static const char *const cause[] = {"", "strobe_pause", "toggle signal", "--delay/--duration"};
    for (size_t p = 0; p < exp->nprocesses; p++) {
        const struct strobe_process_info *pi = &exp->processes[p];
        if (!pi->nrecording)
            continue;
        fprintf(out, "  %-16s ", "paused");
        if (exp->nprocesses > 1)
            fprintf(out, "%s: ", pi->dir);
        for (size_t i = 0; i < pi->nrecording; i += 2) {
            char a[STROBE_UNITS_LEN], b[STROBE_UNITS_LEN];
            const struct strobe_recording_change *c = &pi->recording[i];
            strobe__fmt_time(a, c->ns);
            if (i + 1 < pi->nrecording)
                strobe__fmt_time(b, pi->recording[i + 1].ns);
            fprintf(out, "%s%s to %s (%s)", i ? ", " : "", a, i + 1 < pi->nrecording ? b : "the end",
                    cause[c->cause]);
        }
        fputc('\n', out);
    }
}

/* Flight recorder: the span each ring stream kept and what it lost, one
 * line per thread (the first 16). */
static void text_rings(FILE *out, const struct strobe_experiment *exp)
{
    size_t shown = 0, rings = 0;
    for (size_t i = 0; i < exp->nthreads; i++) {
        const struct strobe_thread_info *t = &exp->threads[i];
        if (!t->ring)
            continue;
        if (rings++ == 0)
            fprintf(out, "  %-16s the newest events of each thread (strobe run --max-size):\n", "trace window");
        if (shown++ == 16)
            continue;
        char a[STROBE_UNITS_LEN], b[STROBE_UNITS_LEN];
        fprintf(out, "  %-16s %s t%u: %s to %s, ", "", exp->processes[t->process].dir, t->index,
                strobe__fmt_time(a, t->window_ns), strobe__fmt_time(b, t->end_ns));
        if (t->summarized)
            fprintf(out, "%" PRIu64 " older events overwritten\n", t->overwritten);
        else /* killed: nobody counted them */
            fprintf(out, "%" PRIu64 " older chunks overwritten (events not counted: the process did not exit)\n",
                    t->overwritten_chunks);
    }
    if (shown > 16)
        fprintf(out, "  %-16s ... and %zu more threads\n", "", shown - 16);
}

static void text_summary(FILE *out, const struct strobe__report_view *v)
{
    const struct strobe_experiment *exp = v->exp;
    char a[STROBE_UNITS_LEN], b[STROBE_UNITS_LEN], c[STROBE_UNITS_LEN], lo[STROBE_UNITS_LEN], hi[STROBE_UNITS_LEN];

    fprintf(out, "strobe report: %s\n", exp->dir ? exp->dir : "");
    if (exp->total_dropped)
        text_drops(out, exp);
    fputs("\nSummary\n", out);
    static const struct {
        const char *key, *label;
    } meta_rows[] = {{"command", "command"}, {"host", "host"}, {"start_time", "started"}};
    for (size_t i = 0; i < sizeof meta_rows / sizeof meta_rows[0]; i++) {
        const char *val = strobe__report_meta(exp, meta_rows[i].key);
        if (val)
            summary_line(out, meta_rows[i].label, "%s", val);
    }
    summary_line(out, "duration", "%s", strobe__fmt_time(a, exp->duration_ns));
    const char *status = strobe__report_meta(exp, "exit_status");
    const char *sig = strobe__report_meta(exp, "signal");
    const char *after = strobe__report_meta(exp, "after_signal");
    if (sig)
        summary_line(out, "exit", "killed by signal %s", sig);
    else if (status && after)
        summary_line(out, "exit", "status %s after signal %s", status, after);
    else if (status)
        summary_line(out, "exit", "status %s", status);
    summary_line(out, "processes", "%zu", exp->nprocesses);
    summary_line(out, "threads", "%zu", exp->nthreads);
    if (exp->total_events) {
        uint64_t hundredths = (uint64_t)(((unsigned __int128)exp->total_bytes * 100 + exp->total_events / 2) /
                                         exp->total_events);
        summary_line(out, "events", "%" PRIu64, exp->total_events);
        summary_line(out, "trace", "%s (%" PRIu64 ".%02u bytes/event)",
                     strobe__fmt_bytes(a, exp->total_bytes), hundredths / 100, (unsigned)(hundredths % 100));
    } else {
        summary_line(out, "events", "0 (no trace)");
    }
    summary_line(out, "dropped", "%" PRIu64 "%s", exp->total_dropped,
                 exp->total_dropped ? " (WARNING: incomplete trace)" : "");
    text_paused(out, exp);
    text_rings(out, exp);
    if (v->overhead_known)
        summary_line(out, "overhead (est.)", "%s, likely %s to %s (%s of %s thread time%s)",
                     strobe__fmt_time(a, (uint64_t)(v->overhead_ns + 0.5)),
                     strobe__fmt_time(lo, (uint64_t)(v->overhead_ns * STROBE__OVERHEAD_LOW + 0.5)),
                     strobe__fmt_time(hi, (uint64_t)(v->overhead_ns * STROBE__OVERHEAD_HIGH + 0.5)),
                     fmt_pct(b, v->overhead_ns, (double)v->thread_time_ns),
                     strobe__fmt_time(c, v->thread_time_ns),
                     v->events_estimated ? "; events estimated as 2 x visits" : "");
    else
        summary_line(out, "overhead (est.)", "unknown (no cost per event was measured)");
    if (v->prof->source == STROBE_PROFILE_MIXED)
        summary_line(out, "profile source", "profile files (t<N>.prof); event trace for %zu thread%s that ended "
                     "without the runtime (killed, exec, _exit)", v->prof->traced, v->prof->traced == 1 ? "" : "s");
    else
        summary_line(out, "profile source", "%s",
                     v->prof->source == STROBE_PROFILE_FILES   ? "profile files (t<N>.prof)"
                     : v->prof->source == STROBE_PROFILE_TRACE ? "event trace (rebuilt from t<N>.evt)"
                                                               : "unknown");
    if (v->exp->chunk_count) {
        char range[64];
        snprintf(range, sizeof range, v->exp->chunk_count == 1 ? "chunk %" PRIu64 : "chunks %" PRIu64 " to %" PRIu64,
                 v->exp->chunk_first, v->exp->chunk_first + v->exp->chunk_count - 1);
        summary_line(out, "selection", "%s of every thread's event stream, read alone: frames open at its start "
                     "begin at their entry times and are not counted as visits", range);
    }
    if (v->open_at_end)
        summary_line(out, "open at end", "%" PRIu64 " visit%s still open when measurement ended (exit() below them, "
                     "a thread running at exit, a kill%s) end there: marked [open at end: N]",
                     v->open_at_end, v->open_at_end == 1 ? " was" : "s were",
                     v->exp->chunk_count ? ", the end of the chunks read" : "");
    if (v->prof->incomplete)
        fputs("WARNING: some threads were killed and have no trace: the time of the frames they had open is "
              "missing from the profile files\n", out);
    if (exp->tm)
        summary_line(out, "TM monitoring", "%s — %s%s", strobe_tm_level_name(exp->tm_level),
                     strobe_tm_level_recorded(exp->tm_level),
                     exp->tm_level_inferred ? " (level inferred from the records)" : "");
}

/* A signed time: "-50.000 ms", "+1.200 µs". */
static const char *fmt_signed_time(char *buf, double ns)
{
    char t[STROBE_UNITS_LEN];
    snprintf(buf, STROBE_UNITS_LEN + 1, "%c%s", ns < 0 ? '-' : '+', strobe__fmt_time(t, (uint64_t)fabs(ns) + 0.5));
    return buf;
}

/* How the processes' clocks were put on one timebase (align.h), when
 * they did not all share the reference's clock. */
static void text_clocks(FILE *out, const struct strobe_experiment *exp)
{
    bool moved = false;
    for (size_t p = 0; p < exp->nprocesses; p++)
        moved |= exp->processes[p].align != STROBE_ALIGN_REFERENCE;
    if (!moved)
        return;
    const struct strobe_process_info *ref = &exp->processes[exp->align_reference];
    fprintf(out, "\nClocks (timebase: the clock of %s", ref->dir);
    if (ref->has_rank)
        fprintf(out, ", rank %u", ref->rank);
    fprintf(out, ")\n  %-20s %6s %-10s %14s %12s %12s  from\n", "process", "rank", "method", "offset", "drift",
            "bound");
    for (size_t p = 0; p < exp->nprocesses; p++) {
        const struct strobe_process_info *pi = &exp->processes[p];
        char rank[16] = "-", off[STROBE_UNITS_LEN + 1], bound[STROBE_UNITS_LEN + 2] = "-";
        if (pi->has_rank)
            snprintf(rank, sizeof rank, "%u", pi->rank);
        if (pi->align == STROBE_ALIGN_MPI) {
            char t[STROBE_UNITS_LEN];
            snprintf(bound, sizeof bound, "±%s", strobe__fmt_time(t, pi->align_bound_ns));
        }
        fprintf(out, "  %-20s %6s %-10s %14s %9.2f ppm %12s  %s\n", pi->dir, rank,
                strobe_align_method_name(pi->align), fmt_signed_time(off, pi->align_offset_ns),
                pi->align_drift * 1e6, bound,
                pi->align_source != STROBE_NONE ? exp->processes[pi->align_source].dir : "-");
    }
}

/* The block streams of `strobe cc --trace=bb[,mem]` code, as summary lines. */
static void text_blocks(FILE *out, const struct strobe_blocks_summary *b)
{
    char a[STROBE_UNITS_LEN];
    uint64_t mem = b->reads + b->writes;
    summary_line(out, "blocks", "%" PRIu64 " executed (%" PRIu64 " block stream%s)", b->blocks, b->streams,
                 b->streams == 1 ? "" : "s");
    summary_line(out, "memory events", "%" PRIu64 " reads, %" PRIu64 " writes", b->reads, b->writes);
    if (mem) {
        uint64_t hundredths = (uint64_t)(((unsigned __int128)b->bytes * 100 + mem / 2) / mem);
        summary_line(out, "block trace", "%s (%" PRIu64 ".%02u bytes/memory event)", strobe__fmt_bytes(a, b->bytes),
                     hundredths / 100, (unsigned)(hundredths % 100));
    } else {
        summary_line(out, "block trace", "%s", strobe__fmt_bytes(a, b->bytes));
    }
}

/* ---- Flat profile ------------------------------------------------------ */

static void text_flat(FILE *out, const struct strobe__report_view *v, size_t top)
{
    char s[8][STROBE_UNITS_LEN];
    size_t rows = top && top < v->nflat ? top : v->nflat;
    fprintf(out, "\nFlat profile (sorted by %s; ", strobe_report_sort_name(v->sort));
    if (rows < v->nflat)
        fprintf(out, "top %zu of %zu regions)\n", rows, v->nflat);
    else
        fprintf(out, "%zu regions)\n", v->nflat);
    static const char *const head[] = {"excl%", "excl", "incl", "visits", "min", "avg", "max", "stddev"};
    static const int width[] = {7, 11, 11, 10, 11, 11, 11, 11};
    for (int i = 0; i < 8; i++) {
        fputs("  ", out);
        strobe__cell(out, head[i], width[i]);
    }
    fputs("  region\n", out);
    for (size_t i = 0; i < rows; i++) {
        const struct strobe__flat_row *r = &v->flat[i];
        bool timed = r->min_ns != UINT64_MAX;
        fmt_pct(s[0], (double)r->excl_ns, (double)v->total_excl_ns);
        strobe__fmt_time(s[1], r->excl_ns);
        strobe__fmt_time(s[2], r->incl_ns);
        fmt_u64(s[3], r->visits);
        fmt_time_or_dash(s[4], r->min_ns, timed);
        fmt_time_or_dash(s[5], strobe__div_round(r->sum_incl_ns, r->visits), timed && r->visits);
        fmt_time_or_dash(s[6], r->max_ns, timed);
        fmt_time_or_dash(s[7], (uint64_t)(strobe__stddev(r->visits, r->sum_incl_ns, r->sumsq_ns) + 0.5),
                         timed && r->visits >= 2);
        for (int k = 0; k < 8; k++) {
            fputs("  ", out);
            strobe__cell(out, s[k], width[k]);
        }
        fputs("  ", out);
        region_label(out, v->exp, r->region);
        open_note(out, r->open_at_end);
        fputc('\n', out);
    }
}

/* ---- Call tree --------------------------------------------------------- */

#define TREE_COLS 6
static const int tree_width[TREE_COLS] = {11, 11, 10, 11, 11, 11};

/* Indentation stops growing at this depth and deeper nodes are prefixed
 * with "[depth N] ": a deeply recursive program would otherwise make the
 * text quadratic in its recursion depth. */
#define TREE_MAX_INDENT 32

/* The numeric cells, then the indentation of a node at depth (0 = a child
 * of the root); note lines under a node (metrics) pass note = true and are
 * indented one more level, without a depth marker. */
static void tree_cells(FILE *out, char s[TREE_COLS][STROBE_UNITS_LEN], uint32_t depth, bool note)
{
    for (int k = 0; k < TREE_COLS; k++) {
        fputs("  ", out);
        strobe__cell(out, s[k], tree_width[k]);
    }
    fputs("  ", out);
    for (uint32_t d = 0; d < depth && d < TREE_MAX_INDENT; d++)
        fputs("  ", out);
    if (note)
        fputs("  ", out);
    else if (depth >= TREE_MAX_INDENT) /* the model's depth: root = 0 */
        fprintf(out, "[depth %" PRIu32 "] ", depth + 1);
}

static void tree_node(FILE *out, const struct strobe__report_view *v, uint32_t n, uint32_t depth)
{
    const struct strobe_cnode *node = &v->prof->nodes[n];
    const struct strobe_stats *t = &node->total;
    const struct strobe_experiment *exp = v->exp;
    char s[TREE_COLS][STROBE_UNITS_LEN];
    bool timed = t->min_ns != UINT64_MAX;
    strobe__fmt_time(s[0], t->incl_ns);
    strobe__fmt_time(s[1], t->excl_ns);
    fmt_u64(s[2], t->visits);
    fmt_time_or_dash(s[3], t->min_ns, timed);
    fmt_time_or_dash(s[4], strobe__div_round(t->incl_ns, t->visits), timed && t->visits);
    fmt_time_or_dash(s[5], t->max_ns, timed);
    tree_cells(out, s, depth, false);
    region_label(out, exp, node->region);
    open_note(out, t->open_at_end);
    fputc('\n', out);
    if (!node->metrics)
        return;
    char blank[TREE_COLS][STROBE_UNITS_LEN] = {""};
    for (size_t m = 0; m < exp->nmetrics; m++) {
        const struct strobe_metric_stats *ms = &node->metrics[m];
        if (!ms->count)
            continue;
        tree_cells(out, blank, depth, true);
        const struct strobe_metric_def *md = &exp->metrics[m];
        fputs(md->name, out);
        if (md->unit && md->unit[0])
            fprintf(out, " [%s]", md->unit);
        fprintf(out, ": count %" PRIu64 ", sum %" PRId64 ", min %" PRId64 ", max %" PRId64 ", avg %.2f\n",
                ms->count, ms->sum, ms->min, ms->max, (double)ms->sum / (double)ms->count);
    }
}

/* Children beyond `top` are summarised in one "(N more)" line with their
 * summed incl, excl and visits, so the totals of a level still add up. */
static void tree_more(FILE *out, const struct strobe__report_view *v, uint32_t parent, size_t from,
                      uint32_t depth)
{
    uint64_t incl = 0, excl = 0, visits = 0;
    size_t end = v->kids_start[parent + 1];
    for (size_t i = from; i < end; i++) {
        const struct strobe_stats *t = &v->prof->nodes[v->kids[i]].total;
        incl += t->incl_ns;
        excl += t->excl_ns;
        visits += t->visits;
    }
    char s[TREE_COLS][STROBE_UNITS_LEN] = {""};
    strobe__fmt_time(s[0], incl);
    strobe__fmt_time(s[1], excl);
    fmt_u64(s[2], visits);
    tree_cells(out, s, depth, false);
    fprintf(out, "(%zu more)\n", end - from);
}

static int text_tree(FILE *out, const struct strobe__report_view *v, size_t top)
{
    size_t n = v->prof->nnodes;
    fprintf(out, "\nCall tree (children sorted by %s", strobe_report_sort_name(v->sort));
    if (top)
        fprintf(out, "; at most %zu children per node)\n", top);
    else
        fputs(")\n", out);
    static const char *const head[TREE_COLS] = {"incl", "excl", "visits", "min", "avg", "max"};
    for (int k = 0; k < TREE_COLS; k++) {
        fputs("  ", out);
        strobe__cell(out, head[k], tree_width[k]);
    }
    fputs("  call path\n", out);

    /* explicit stack: call paths can be as deep as the program's recursion */
    uint32_t *stack = malloc(n * sizeof *stack);
    size_t *pos = malloc(n * sizeof *pos);
    if (!stack || !pos) {
        free(stack);
        free(pos);
        return -ENOMEM;
    }
    size_t sp = 0;
    stack[sp] = 0;
    pos[sp++] = v->kids_start[0];
    while (sp > 0) {
        uint32_t top_node = stack[sp - 1];
        size_t first = v->kids_start[top_node], end = v->kids_start[top_node + 1];
        size_t shown_end = top && end - first > top ? first + top : end;
        uint32_t depth = (uint32_t)(sp - 1);
        if (pos[sp - 1] == shown_end) {
            if (shown_end < end)
                tree_more(out, v, top_node, shown_end, depth);
            sp--;
            continue;
        }
        uint32_t c = v->kids[pos[sp - 1]++];
        tree_node(out, v, c, depth);
        stack[sp] = c;
        pos[sp++] = v->kids_start[c];
    }
    free(stack);
    free(pos);
    return 0;
}

/* ---- Threads ----------------------------------------------------------- */

/* The process column: its directory, and its MPI rank when it has one. */
static const char *process_label(const struct strobe_experiment *exp, uint32_t p, char *buf, size_t size)
{
    const struct strobe_process_info *pi = &exp->processes[p];
    if (pi->has_rank)
        snprintf(buf, size, "%s (rank %" PRIu32 ")", pi->dir ? pi->dir : "?", pi->rank);
    else
        snprintf(buf, size, "%s", pi->dir ? pi->dir : "?");
    return buf;
}

static void text_threads(FILE *out, const struct strobe__report_view *v)
{
    const struct strobe_experiment *exp = v->exp;
    char s[12][STROBE_UNITS_LEN];
    int pw = 7; /* "process" */
    char pname[400];
    for (size_t p = 0; p < exp->nprocesses; p++) {
        size_t w = strobe__display_width(process_label(exp, (uint32_t)p, pname, sizeof pname));
        if ((int)w > pw)
            pw = (int)w;
    }
    fputs("\nThreads (incl = inclusive time of the thread's top-level regions)\n", out);
    static const char *const head[] = {"thread", "process", "t",     "tid",   "parent", "incl",
                                       "visits", "events",  "utime", "stime", "maxrss", "csw vol/invol"};
    const int width[] = {6, -pw, 4, 10, 6, 11, 10, 10, 11, 11, 10, 0};
    for (int k = 0; k < 12; k++) {
        fputs("  ", out);
        strobe__cell(out, head[k], width[k]);
    }
    fputc('\n', out);
    for (size_t t = 0; t < exp->nthreads; t++) {
        const struct strobe_thread_info *th = &exp->threads[t];
        const char *pdir = th->process < exp->nprocesses ? process_label(exp, th->process, pname, sizeof pname)
                                                           : "?";
        fmt_u64(s[0], t);
        snprintf(s[1], sizeof s[1], "%s", pdir);
        fmt_u64(s[2], th->index);
        fmt_u64(s[3], th->tid);
        if (th->parent == STROBE_NONE)
            strcpy(s[4], "-");
        else
            fmt_u64(s[4], th->parent);
        strobe__fmt_time(s[5], v->thread_incl_ns[t]);
        fmt_u64(s[6], v->thread_visits[t]);
        fmt_u64(s[7], v->thread_events[t]);
        if (v->exp->threads[t].stream_path == NULL)
            strcat(s[7], "*");
        if (th->has_rusage) {
            const struct strobe_rusage *ru = &th->rusage;
            strobe__fmt_time(s[8], ru->utime_us * 1000);
            strobe__fmt_time(s[9], ru->stime_us * 1000);
            strobe__fmt_bytes(s[10], ru->maxrss_kb * 1024);
            snprintf(s[11], sizeof s[11], "%" PRIu64 "/%" PRIu64, ru->nvcsw, ru->nivcsw);
        } else {
            for (int k = 8; k < 12; k++)
                strcpy(s[k], "-");
        }
        for (int k = 0; k < 12; k++) {
            fputs("  ", out);
            /* process names can exceed STROBE_UNITS_LEN: print the original */
            strobe__cell(out, k == 1 ? pdir : s[k], width[k]);
        }
        fputc('\n', out);
    }
    if (v->events_estimated)
        fputs("  (* no trace: events estimated as 2 x visits)\n", out);
}

static int text_matrix(FILE *out, const struct strobe__report_view *v, size_t top)
{
    const struct strobe_experiment *exp = v->exp;
    size_t nt = exp->nthreads;
    size_t k = top && top < v->nflat ? top : v->nflat;
    if (k > MATRIX_MAX_REGIONS)
        k = MATRIX_MAX_REGIONS;
    if (k == 0)
        return 0;
    uint32_t regs[MATRIX_MAX_REGIONS];
    for (size_t i = 0; i < k; i++)
        regs[i] = v->flat[i].region;
    uint64_t *incl, *visits;
    int rc = strobe__report_region_threads(v, regs, k, &incl, &visits);
    if (rc)
        return rc;
    fprintf(out,
            "\nThread x region (inclusive time per thread of the top %zu regions by %s; "
            "- = never entered; min/avg/max over the threads that entered)\n",
            k, strobe_report_sort_name(v->sort));
    for (size_t i = 0; i < k; i++) {
        fprintf(out, "  [%zu] ", i + 1);
        region_label(out, exp, regs[i]);
        fputc('\n', out);
    }
    char s[STROBE_UNITS_LEN];
    fputs("  ", out);
    strobe__cell(out, "thread", 7);
    for (size_t i = 0; i < k; i++) {
        snprintf(s, sizeof s, "[%zu]", i + 1);
        fputs("  ", out);
        strobe__cell(out, s, 11);
    }
    fputc('\n', out);
    for (size_t t = 0; t < nt; t++) {
        fputs("  ", out);
        strobe__cell(out, fmt_u64(s, t), 7);
        for (size_t i = 0; i < k; i++) {
            fputs("  ", out);
            strobe__cell(out, fmt_time_or_dash(s, incl[i * nt + t], visits[i * nt + t] > 0), 11);
        }
        fputc('\n', out);
    }
    static const char *const label[] = {"min", "avg", "max", "max/avg"};
    for (int row = 0; row < 4; row++) {
        fputs("  ", out);
        strobe__cell(out, label[row], 7);
        for (size_t i = 0; i < k; i++) {
            uint64_t mn = UINT64_MAX, mx = 0, sum = 0, cnt = 0;
            for (size_t t = 0; t < nt; t++) {
                if (!visits[i * nt + t])
                    continue;
                uint64_t x = incl[i * nt + t];
                mn = x < mn ? x : mn;
                mx = x > mx ? x : mx;
                sum += x;
                cnt++;
            }
            uint64_t avg = strobe__div_round(sum, cnt);
            if (!cnt)
                strcpy(s, "-");
            else if (row == 0)
                strobe__fmt_time(s, mn);
            else if (row == 1)
                strobe__fmt_time(s, avg);
            else if (row == 2)
                strobe__fmt_time(s, mx);
            else if (avg)
                snprintf(s, sizeof s, "%.2f", (double)mx / ((double)sum / (double)cnt));
            else
                strcpy(s, "-");
            fputs("  ", out);
            strobe__cell(out, s, 11);
        }
        fputc('\n', out);
    }
    free(incl);
    free(visits);
    return 0;
}

/* ---- Ranks or processes (--by) ----------------------------------------- */

static void group_label(char *buf, size_t size, const struct strobe_experiment *exp,
                        const struct strobe__report_groups *g, size_t k, int by)
{
    const struct strobe_process_info *p = &exp->processes[g->leader[k]];
    if (by == STROBE_REPORT_BY_RANK)
        snprintf(buf, size, "%" PRIu32, p->rank);
    else
        snprintf(buf, size, "%s", p->dir ? p->dir : "?");
}

/* Per group: processes, threads, visits, inclusive time, events; per call
 * path: min/avg/max of the per-group sums (Cube's system-tree view); the
 * visits of the first call paths per group. */
static void text_groups(FILE *out, const struct strobe__report_view *v, const struct strobe__report_groups *g,
                        int by, size_t top)
{
    const struct strobe_experiment *exp = v->exp;
    const char *what = by == STROBE_REPORT_BY_RANK ? "rank" : "process";
    char s[TREE_COLS][STROBE_UNITS_LEN], label[600];
    int lw = (int)strlen(what);
    for (size_t k = 0; k < g->n; k++) {
        group_label(label, sizeof label, exp, g, k, by);
        if ((int)strobe__display_width(label) > lw)
            lw = (int)strobe__display_width(label);
    }
    fprintf(out, "\n%s (%zu; incl = inclusive time of the top-level regions of their threads",
            by == STROBE_REPORT_BY_RANK ? "Ranks" : "Processes", g->n);
    if (g->left_out)
        fprintf(out, "; %zu process%s without an MPI rank left out", g->left_out,
                g->left_out == 1 ? "" : "es");
    fputs(")\n", out);
    static const char *const head[] = {"processes", "threads", "incl", "visits", "events"};
    static const int width[] = {9, 7, 11, 10, 10};
    fputs("  ", out);
    strobe__cell(out, what, -lw);
    for (int c = 0; c < 5; c++) {
        fputs("  ", out);
        strobe__cell(out, head[c], width[c]);
    }
    fputc('\n', out);
    for (size_t k = 0; k < g->n; k++) {
        group_label(label, sizeof label, exp, g, k, by);
        fputs("  ", out);
        strobe__cell(out, label, -lw);
        fmt_u64(s[0], g->nprocesses[k]);
        fmt_u64(s[1], g->nthreads[k]);
        strobe__fmt_time(s[2], g->incl_ns[k]);
        fmt_u64(s[3], g->visits[k]);
        fmt_u64(s[4], g->events[k]);
        for (int c = 0; c < 5; c++) {
            fputs("  ", out);
            strobe__cell(out, s[c], width[c]);
        }
        fputc('\n', out);
    }

    size_t rows = top && top < g->npaths ? top : g->npaths;
    fprintf(out, "\nCall paths over %ss (min/avg/max over the %zu %ss of their sums; pre-order", what, g->n,
            what);
    if (rows < g->npaths)
        fprintf(out, ", first %zu of %zu call paths", rows, g->npaths);
    fputs(")\n", out);
    static const char *const phead[TREE_COLS] = {"visits min", "avg", "max", "incl min", "avg", "max"};
    for (int c = 0; c < TREE_COLS; c++) {
        fputs("  ", out);
        strobe__cell(out, phead[c], tree_width[c]);
    }
    fputs("  call path\n", out);
    for (size_t i = 0; i < rows; i++) {
        uint64_t vmin = UINT64_MAX, vmax = 0, vsum = 0, tmin = UINT64_MAX, tmax = 0, tsum = 0;
        for (size_t k = 0; k < g->n; k++) {
            uint64_t vis = g->path_visits[i * g->n + k], t = g->path_incl_ns[i * g->n + k];
            vmin = vis < vmin ? vis : vmin;
            vmax = vis > vmax ? vis : vmax;
            vsum += vis;
            tmin = t < tmin ? t : tmin;
            tmax = t > tmax ? t : tmax;
            tsum += t;
        }
        fmt_u64(s[0], vmin);
        snprintf(s[1], sizeof s[1], "%.2f", (double)vsum / (double)g->n);
        fmt_u64(s[2], vmax);
        strobe__fmt_time(s[3], tmin);
        strobe__fmt_time(s[4], strobe__div_round(tsum, g->n));
        strobe__fmt_time(s[5], tmax);
        tree_cells(out, s, g->path_depth[i] - 1, false);
        region_label(out, exp, v->prof->nodes[g->paths[i]].region);
        fputc('\n', out);
    }

    size_t cols = rows < MATRIX_MAX_REGIONS ? rows : MATRIX_MAX_REGIONS;
    if (cols == 0)
        return;
    fprintf(out, "\n%s x call path (visits of the first %zu call paths above)\n",
            by == STROBE_REPORT_BY_RANK ? "Rank" : "Process", cols);
    for (size_t i = 0; i < cols; i++) {
        fprintf(out, "  [%zu] ", i + 1);
        for (uint32_t d = 1; d < g->path_depth[i] && d < TREE_MAX_INDENT; d++)
            fputs("  ", out);
        region_label(out, exp, v->prof->nodes[g->paths[i]].region);
        fputc('\n', out);
    }
    fputs("  ", out);
    strobe__cell(out, what, -lw);
    for (size_t i = 0; i < cols; i++) {
        snprintf(s[0], sizeof s[0], "[%zu]", i + 1);
        fputs("  ", out);
        strobe__cell(out, s[0], 10);
    }
    fputc('\n', out);
    for (size_t k = 0; k < g->n; k++) {
        group_label(label, sizeof label, exp, g, k, by);
        fputs("  ", out);
        strobe__cell(out, label, -lw);
        for (size_t i = 0; i < cols; i++) {
            fputs("  ", out);
            strobe__cell(out, fmt_u64(s[0], g->path_visits[i * g->n + k]), 10);
        }
        fputc('\n', out);
    }
}

/* ---- Transactional memory ---------------------------------------------- */

/* "12.34%", "<0.01%" for a share too small to show as such, "0%". */
static char *fmt_share(char buf[STROBE_UNITS_LEN], double x)
{
    if (x <= 0)
        strcpy(buf, "0%");
    else if (x < 0.00005)
        strcpy(buf, "<0.01%");
    else
        snprintf(buf, STROBE_UNITS_LEN, "%.2f%%", 100 * x);
    return buf;
}

/* part / whole as fmt_share, or "-" when the whole is 0. */
static char *fmt_ratio(char buf[STROBE_UNITS_LEN], uint64_t part, uint64_t whole)
{
    if (whole == 0) {
        strcpy(buf, "-");
        return buf;
    }
    return fmt_share(buf, (double)part / (double)whole);
}

/* The atomic block's label into buf ("atomic@main (app.c:12)"). */
static void block_label(char *buf, size_t size, const struct strobe_experiment *exp, uint32_t region)
{
    buf[0] = 0;
    FILE *f = fmemopen(buf, size, "w");
    if (f) {
        region_label(f, exp, region);
        fclose(f);
    }
}

#define TM_COUNT_COLS 10
static const char *const tm_head[TM_COUNT_COLS] = {"transactions", "rollbacks", "rb rate", "ser.irrev",
                                                   "ser.maxrb",    "ser.other", "cancels", "committed",
                                                   "aborted",      "wasted"};
static const int tm_width[TM_COUNT_COLS] = {12, 10, 8, 9, 9, 9, 8, 11, 11, 8};
static const int cause_width[STROBE_TM_NCAUSES] = {13, 14, 10, 8, 11, 8, 11, 11};

/* The cells of one row: the counts (and times, when measured) or the abort
 * causes. Returns the number of cells. */
static int tm_cells(char s[][STROBE_UNITS_LEN], const struct strobe_tm_cell *c, int causes, bool times)
{
    if (causes) {
        for (int k = 0; k < causes; k++)
            fmt_u64(s[k], c->aborts[k]);
        return causes;
    }
    fmt_u64(s[0], c->transactions);
    fmt_u64(s[1], c->rollbacks);
    /* rollbacks per attempt: the share of attempts that were wasted */
    fmt_ratio(s[2], c->rollbacks, c->rollbacks + c->transactions);
    for (int k = 0; k < STROBE_TM_NSERIAL; k++)
        fmt_u64(s[3 + k], c->serialized[k]);
    fmt_u64(s[6], c->cancels);
    if (!times)
        return 7;
    strobe__fmt_time(s[7], c->committed_ns);
    strobe__fmt_time(s[8], c->aborted_ns);
    fmt_ratio(s[9], c->aborted_ns, c->aborted_ns + c->committed_ns);
    return TM_COUNT_COLS;
}

/* The abort causes worth a column: the hardware's only when some
 * transaction ran in hardware and aborted. */
static int tm_cause_columns(const struct strobe_tm_model *m)
{
    for (size_t i = 0; i < m->nblocks * m->nthreads; i++)
        for (int k = STROBE_TM_ABORT_HW_CONFLICT - 1; k < STROBE_TM_NCAUSES; k++)
            if (m->cells[i].aborts[k] != 0)
                return STROBE_TM_NCAUSES;
    return STROBE_TM_ABORT_HW_CONFLICT - 1;
}

/* One table over the atomic blocks: a row per block (summed over threads)
 * and one per thread that ran it; the counts, or the abort causes. */
static void tm_table(FILE *out, const struct strobe_experiment *exp, const struct strobe_tm_model *m,
                     bool by_cause)
{
    int causes = by_cause ? tm_cause_columns(m) : 0;
    char label[512], s[TM_COUNT_COLS][STROBE_UNITS_LEN];
    int lw = 14; /* "block / thread" */
    for (size_t b = 0; b < m->nblocks; b++) {
        block_label(label, sizeof label, exp, m->blocks[b]);
        int w = (int)strobe__display_width(label);
        lw = w > lw ? w : lw;
    }
    fputs("  ", out);
    strobe__cell(out, "block / thread", -lw);
    int ncols = causes ? causes : m->has_events ? TM_COUNT_COLS : 7;
    for (int k = 0; k < ncols; k++) {
        fputs("  ", out);
        strobe__cell(out, causes ? strobe_tm_abort_name(k) : tm_head[k], causes ? cause_width[k] : tm_width[k]);
    }
    fputc('\n', out);
    for (size_t b = 0; b < m->nblocks; b++) {
        struct strobe_tm_cell sum;
        strobe_tm_block_total(m, b, &sum);
        for (size_t t = 0; t <= m->nthreads; t++) {
            /* row 0: the block; then its threads */
            const struct strobe_tm_cell *c = t ? &m->cells[b * m->nthreads + t - 1] : &sum;
            if (t && c->transactions == 0 && c->rollbacks == 0)
                continue;
            if (t)
                snprintf(label, sizeof label, "  thread %zu", t - 1);
            else
                block_label(label, sizeof label, exp, m->blocks[b]);
            int n = tm_cells(s, c, causes, m->has_events);
            fputs("  ", out);
            strobe__cell(out, label, -lw);
            for (int k = 0; k < n; k++) {
                fputs("  ", out);
                strobe__cell(out, s[k], causes ? cause_width[k] : tm_width[k]);
            }
            fputc('\n', out);
        }
    }
}

/* What the numbers say about one atomic block (verdict.h), with the
 * figures the grade rests on. */
static void tm_verdict_line(FILE *out, const struct strobe_experiment *exp, uint32_t region,
                            const struct strobe_tm_cell *c, bool times)
{
    struct strobe__tm_verdict v;
    char a[STROBE_UNITS_LEN], b[STROBE_UNITS_LEN];
    strobe__tm_verdict(c, times, &v);
    uint64_t ser = c->serialized[0] + c->serialized[1] + c->serialized[2];
    fputs("  ", out);
    region_label(out, exp, region);
    fprintf(out,
            ": %s\n    rollback rate %s (%" PRIu64 " of %" PRIu64 " attempts), serialized %s (%" PRIu64
            " of %" PRIu64 " transactions), ",
            v.summary, fmt_share(a, v.rollback_rate), c->rollbacks, c->transactions + c->rollbacks,
            fmt_share(b, v.serialized), ser, c->transactions);
    if (times)
        fprintf(out, "wasted %s of attempt time in rolled-back attempts\n", fmt_share(a, v.wasted));
    else
        fprintf(out, "wasted time not measured at level '%s': the verdict rests on the counts only\n",
                strobe_tm_level_name(exp->tm_level));
    fprintf(out, "    %s.\n", v.advice);
}

/* Why an experiment has no atomic block to show. */
static const char *tm_no_blocks(const struct strobe_experiment *exp)
{
    if (!exp->tm)
        return "not run on the monitored STM (run the program with `strobe run --tm`)";
    switch (exp->tm_level) {
    case STROBE_TM_MONITOR_OFF:
        return "the STM recorded nothing at level 'off' (re-run with --tm-monitor counters or higher)";
    case STROBE_TM_MONITOR_COUNTERS:
        return "no TM counts: no atomic block ran, or the program did not exit normally (the counts are "
               "written at exit) or ran with --no-trace";
    default:
        return "no atomic block ran";
    }
}

static void text_tm(FILE *out, const struct strobe__report_view *v, const struct strobe_tm_model *m)
{
    const struct strobe_experiment *exp = v->exp;
    char label[512];
    fputs("\nTransactional memory\n", out);
    if (exp->tm)
        fprintf(out, "  TM monitoring: %s — %s%s\n", strobe_tm_level_name(exp->tm_level),
                strobe_tm_level_recorded(exp->tm_level),
                exp->tm_level_inferred ? " (level inferred from the records)" : "");
    if (m->nblocks == 0) {
        fprintf(out, "  no atomic blocks: %s\n", tm_no_blocks(exp));
        return;
    }
    fprintf(out, "\nAtomic blocks (rb rate = rollbacks / (transactions + rollbacks)%s)\n",
            m->has_events ? "; wasted = aborted / (committed + aborted) attempt time" : "");
    tm_table(out, exp, m, false);
    if (m->has_aborts) {
        fputs("\nAbort causes (aborted attempts per cause)\n", out);
        tm_table(out, exp, m, true);
    }
    if (!m->has_events)
        fprintf(out,
                "\n  %s, TMbox states and culprits are not recorded at level '%s': re-run with "
                "--tm-monitor events\n",
                m->has_aborts ? "Times" : "Abort causes, times", strobe_tm_level_name(exp->tm_level));
    if (m->has_events) {
        /* TMbox histogram (seed 001, Figure 5): state time per thread and
         * the statistics over threads */
        fputs("\nTime per TMbox state (threads with transactions)\n  ", out);
        strobe__cell(out, "thread", -8);
        for (int k = 0; k < STROBE_TM_STATE_COUNT; k++) {
            fputs("  ", out);
            strobe__cell(out, strobe_tm_state_name(k), 14);
        }
        fputc('\n', out);
        double sum[STROBE_TM_STATE_COUNT] = {0}, sumsq[STROBE_TM_STATE_COUNT] = {0};
        uint64_t mx[STROBE_TM_STATE_COUNT] = {0}, mn[STROBE_TM_STATE_COUNT];
        size_t n = 0;
        char s[STROBE_UNITS_LEN];
        for (int k = 0; k < STROBE_TM_STATE_COUNT; k++)
            mn[k] = UINT64_MAX;
        for (size_t t = 0; t < m->nthreads; t++) {
            const uint64_t *st = &m->states[t * STROBE_TM_STATE_COUNT];
            uint64_t any = 0;
            for (int k = 0; k < STROBE_TM_STATE_COUNT; k++)
                any |= st[k];
            if (!any)
                continue;
            n++;
            snprintf(label, sizeof label, "%zu", t);
            fputs("  ", out);
            strobe__cell(out, label, -8);
            for (int k = 0; k < STROBE_TM_STATE_COUNT; k++) {
                fputs("  ", out);
                strobe__cell(out, strobe__fmt_time(s, st[k]), 14);
                sum[k] += (double)st[k];
                sumsq[k] += (double)st[k] * (double)st[k];
                mx[k] = st[k] > mx[k] ? st[k] : mx[k];
                mn[k] = st[k] < mn[k] ? st[k] : mn[k];
            }
            fputc('\n', out);
        }
        static const char *const rows[] = {"Total", "Average", "Maximum", "Minimum", "StDev", "Avg/Max"};
        for (int r = 0; r < 6 && n > 0; r++) {
            fputs("  ", out);
            strobe__cell(out, rows[r], -8);
            for (int k = 0; k < STROBE_TM_STATE_COUNT; k++) {
                double avg = sum[k] / (double)n;
                double var = sumsq[k] / (double)n - avg * avg;
                double val[] = {sum[k], avg, (double)mx[k], (double)mn[k], var > 0 ? sqrt(var) : 0};
                if (r < 5)
                    strobe__fmt_time(s, (uint64_t)(val[r] + 0.5));
                else if (mx[k] == 0)
                    strcpy(s, "-");
                else
                    snprintf(s, sizeof s, "%.2f", avg / (double)mx[k]);
                fputs("  ", out);
                strobe__cell(out, s, 14);
            }
            fputc('\n', out);
        }
        /* who aborted whom: rows culprits, columns victims */
        fputs("\nWho aborted whom (rows: culprit thread, columns: aborted thread)\n  ", out);
        strobe__cell(out, "culprit", -8);
        for (size_t t = 0; t < m->nthreads; t++) {
            snprintf(label, sizeof label, "%zu", t);
            fputs("  ", out);
            strobe__cell(out, label, 8);
        }
        fputc('\n', out);
        for (size_t c = 0; c <= m->nthreads; c++) {
            uint64_t row = 0;
            for (size_t t = 0; t < m->nthreads; t++)
                row += m->aborted_by[c * m->nthreads + t];
            if (row == 0)
                continue;
            if (c == m->nthreads)
                snprintf(label, sizeof label, "unknown");
            else
                snprintf(label, sizeof label, "%zu", c);
            fputs("  ", out);
            strobe__cell(out, label, -8);
            for (size_t t = 0; t < m->nthreads; t++) {
                fputs("  ", out);
                strobe__cell(out, fmt_u64(s, m->aborted_by[c * m->nthreads + t]), 8);
            }
            fputc('\n', out);
        }
    }
    fputs("\nVerdict (thresholds: docs/tm.md, \"Verdict\")\n", out);
    for (size_t b = 0; b < m->nblocks; b++) {
        struct strobe_tm_cell sum;
        strobe_tm_block_total(m, b, &sum);
        tm_verdict_line(out, exp, m->blocks[b], &sum, m->has_events);
    }
}

/* ---- Filter advice (--score) ------------------------------------------- */

#define SCORE_COLS 9
static const int score_width[SCORE_COLS] = {12, 8, 10, 10, 11, 11, 11, 7, -12};

static void score_line(FILE *out, char s[SCORE_COLS][STROBE_UNITS_LEN], const char *label)
{
    for (int k = 0; k < SCORE_COLS; k++) {
        fputs("  ", out);
        strobe__cell(out, s[k], score_width[k]);
    }
    fprintf(out, "  %s\n", label);
}

/* The cells of a row, or of a sum of rows (no time per visit, no filter). */
static void score_cells(char s[SCORE_COLS][STROBE_UNITS_LEN], const struct strobe__score *sc,
                        const struct strobe__score_estimate *e, uint64_t visits,
                        const struct strobe__score_row *r)
{
    fmt_u64(s[0], e->events);
    fmt_pct(s[1], (double)e->events, (double)sc->full.events);
    strobe__fmt_bytes(s[2], e->bytes);
    fmt_u64(s[3], visits);
    fmt_time_or_dash(s[4], r ? strobe__div_round(r->incl_ns, r->visits) : 0, r && r->timed && r->visits);
    fmt_time_or_dash(s[5], r ? strobe__div_round(r->excl_ns, r->visits) : 0, r && r->timed && r->visits);
    fmt_time_or_dash(s[6], (uint64_t)llround(e->overhead_ns), sc->view.overhead_known);
    if (sc->view.overhead_known)
        fmt_pct(s[7], e->overhead_ns, (double)sc->view.thread_time_ns);
    else
        strcpy(s[7], "-");
    snprintf(s[8], STROBE_UNITS_LEN, "%s", r ? strobe__score_filter_name(r->filter) : "");
}

int strobe__score_text(FILE *out, const struct strobe__score *sc, size_t top)
{
    const struct strobe__report_view *v = &sc->view;
    const struct strobe_experiment *exp = v->exp;
    char line[512], a[STROBE_UNITS_LEN], b[STROBE_UNITS_LEN];
    fprintf(out, "strobe report --score: %s\n", exp->dir ? exp->dir : "");
    fputs("\nEstimate for a full run (recorded events and those the size limit dropped)\n", out);
    summary_line(out, "events", "%" PRIu64 " (%" PRIu64 " dropped)", sc->full.events, exp->total_dropped);
    summary_line(out, "trace", "%s (%.2f bytes/event, %s)", strobe__fmt_bytes(a, sc->full.bytes),
                 sc->bytes_per_event,
                 sc->bytes_measured ? "measured in the trace" : "no trace: from the record format");
    if (v->overhead_known)
        summary_line(out, "overhead", "%s (%s of %s thread time)",
                     strobe__fmt_time(a, (uint64_t)llround(sc->full.overhead_ns)),
                     fmt_pct(b, sc->full.overhead_ns, (double)v->thread_time_ns),
                     strobe__fmt_time(line, v->thread_time_ns));
    else
        summary_line(out, "overhead", "unknown (no cost per event was measured)");
    strobe__score_target_describe(&sc->target, line, sizeof line);
    summary_line(out, "target", "%s", line);
    strobe__score_estimate_str(sc, &sc->filtered, line, sizeof line);
    summary_line(out, "with the filter", "%s", line);
    strobe__score_outcome(sc, line, sizeof line);
    summary_line(out, "outcome", "%s", line);

    size_t rows = top && top < sc->nrows ? top : sc->nrows;
    fputs("\nRegions by events (", out);
    if (rows < sc->nrows)
        fprintf(out, "top %zu of %zu", rows, sc->nrows);
    else
        fprintf(out, "%zu region%s", sc->nrows, sc->nrows == 1 ? "" : "s");
    fputs("; filter: exclude = in the filter, keep = not needed for the target, "
          "never:... = never excluded)\n",
          out);
    static const char *const head[SCORE_COLS] = {"events",     "events%",  "bytes", "visits", "incl/visit",
                                                 "excl/visit", "overhead", "ovh%",  "filter"};
    char s[SCORE_COLS][STROBE_UNITS_LEN];
    for (int k = 0; k < SCORE_COLS; k++)
        snprintf(s[k], STROBE_UNITS_LEN, "%s", head[k]);
    score_line(out, s, "region");
    for (size_t i = 0; i < rows; i++) {
        const struct strobe__score_row *r = &sc->rows[i];
        score_cells(s, sc, &r->cost, r->visits, r);
        for (int k = 0; k < SCORE_COLS; k++) {
            fputs("  ", out);
            strobe__cell(out, s[k], score_width[k]);
        }
        fputs("  ", out);
        region_label(out, exp, r->region);
        fputc('\n', out);
    }
    if (rows < sc->nrows) {
        struct strobe__score_estimate rest = {0, 0, 0};
        uint64_t visits = 0;
        for (size_t i = rows; i < sc->nrows; i++) {
            strobe__score_add(&rest, &sc->rows[i].cost);
            visits += sc->rows[i].visits;
        }
        score_cells(s, sc, &rest, visits, NULL);
        snprintf(line, sizeof line, "(%zu more)", sc->nrows - rows);
        score_line(out, s, line);
    }
    uint64_t visits = 0, kept_visits = 0;
    for (size_t i = 0; i < sc->nrows; i++) {
        visits += sc->rows[i].visits;
        if (sc->rows[i].filter != STROBE__SCORE_EXCLUDE)
            kept_visits += sc->rows[i].visits;
    }
    score_cells(s, sc, &sc->regions, visits, NULL);
    score_line(out, s, "total (all regions)");
    score_cells(s, sc, &sc->kept, kept_visits, NULL);
    score_line(out, s, "kept (all regions but the excluded)");
    return strobe__report_flush(out);
}

int strobe_report_text(FILE *out, const struct strobe_experiment *exp, const struct strobe_profile *prof,
                       const struct strobe_report_opts *opts)
{
    struct strobe_report_opts defaults;
    if (!opts) {
        strobe_report_opts_init(&defaults);
        opts = &defaults;
    }
    struct strobe__report_view v;
    int rc = strobe__report_view_build(&v, exp, prof, opts->sort);
    if (rc)
        return rc;
    text_summary(out, &v);
    text_clocks(out, exp);
    if (opts->blocks)
        text_blocks(out, opts->blocks);
    text_flat(out, &v, opts->top);
    rc = text_tree(out, &v, opts->top);
    if (rc == 0 && opts->threads) {
        text_threads(out, &v);
        rc = text_matrix(out, &v, opts->top);
    }
    if (rc == 0 && opts->by != STROBE_REPORT_BY_NONE) {
        struct strobe__report_groups g;
        if ((rc = strobe__report_groups_build(&g, &v, opts->by)) == 0) {
            text_groups(out, &v, &g, opts->by, opts->top);
            strobe__report_groups_free(&g);
        }
    }
    if (rc == 0 && opts->tm)
        text_tm(out, &v, opts->tm);
    if (rc == 0 && opts->malloc)
        strobe__report_malloc_text(out, exp, prof, opts->malloc, opts->top);
    if (rc == 0 && opts->samples)
        strobe__report_samples_text(out, exp, prof, opts->samples, opts->top);
    if (rc == 0 && opts->mpi)
        strobe__report_mpi_text(out, exp, opts->mpi, opts->top);
    strobe__report_view_free(&v);
    return rc ? rc : strobe__report_flush(out);
}
