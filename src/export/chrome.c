/* SPDX-License-Identifier: MIT */
/*
 * Chrome Trace Event Format exporter (the JSON "object format" read by
 * Perfetto UI, chrome://tracing and speedscope). The document is streamed:
 * metadata first, then every thread's events in stream order, one thread
 * after the other (the format does not require global time order), so
 * memory use does not depend on the trace size.
 *
 * Mapping (docs/formats/exports.md has the user-facing version):
 *   process            pid = OS pid, "process_name" metadata (exe basename:
 *                      viewers show the pid next to it themselves)
 *   thread             tid = global thread index, "thread_name" metadata
 *   ENTER / INHERIT    "B" with file/line args (INHERIT: category "...,inherited")
 *   EXIT               "E" with the same name, category and args
 *   METRIC             "C" counter named after the metric, one series per thread
 *   THREAD_CREATE      instant "thread create" + flow start (id = child thread)
 *   THREAD_BEGIN       flow end on the child, bound to its first slice
 *   THREAD_JOIN, FORK  instant events
 *   task-graph edges   (experiments of `strobe run --taskgraph`, after the
 *                      threads' events) a flow per edge between threads
 *                      (analysis/taskgraph.h): "s" at the end of the task it
 *                      leaves, "f" bound to the enclosing slice at the start
 *                      of the task it enters; category "taskgraph", named
 *                      after the edge kind
 * Timestamps are microseconds with three decimals, i.e. exact nanoseconds.
 * With a selection (analysis/select.h) only the selected threads and their
 * processes have metadata; the iterator has already filtered the events.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "analysis/select.h"
#include "common/format.h"
#include "export/escape.h"
#include "export/export.h"
#include "export/flows.h"
#include "export/names.h"
#include "export/output.h"
#include "export/parts.h"
#include "strobe/strobe.h"

struct chrome {
    FILE *f;
    const struct strobe_experiment *exp;
    struct strobe__parts parts; /* the file (or files: --chunk-size) being written */
    bool first; /* no event written yet (controls the "," separator) */
    uint64_t flows; /* task-graph flows written (their ids) */
};

static void begin_event(struct chrome *c, const char *ph, const char *name, const char *cat)
{
    fputs(c->first ? "\n{\"ph\":\"" : ",\n{\"ph\":\"", c->f);
    c->first = false;
    fputs(ph, c->f);
    fputs("\",\"name\":", c->f);
    strobe__json_string(c->f, name);
    if (cat) {
        fputs(",\"cat\":", c->f);
        strobe__json_string(c->f, cat);
    }
}

/* ",\"ts\":1234.567,\"pid\":P,\"tid\":T" */
static void put_when_where(struct chrome *c, uint64_t time_ns, uint32_t thread)
{
    const struct strobe_thread_info *t = &c->exp->threads[thread];
    fprintf(c->f, ",\"ts\":%" PRIu64 ".%03u,\"pid\":%" PRIu64 ",\"tid\":%" PRIu32, time_ns / 1000,
            (unsigned)(time_ns % 1000), c->exp->processes[t->process].pid, thread);
}

static void write_metadata(struct chrome *c)
{
    const struct strobe_experiment *exp = c->exp;
    char name[512];
    for (size_t p = 0; p < exp->nprocesses; p++) {
        if (!strobe_process_selected(exp, (uint32_t)p))
            continue;
        const char *exe = exp->processes[p].exe ? strobe__basename(exp->processes[p].exe) : "";
        if (*exe)
            snprintf(name, sizeof name, "%s", exe);
        else
            strobe__process_name(exp, (uint32_t)p, name, sizeof name);
        begin_event(c, "M", "process_name", NULL);
        fprintf(c->f, ",\"pid\":%" PRIu64 ",\"tid\":0,\"args\":{\"name\":", exp->processes[p].pid);
        strobe__json_string(c->f, name);
        fputs("}}", c->f);
        begin_event(c, "M", "process_sort_index", NULL);
        fprintf(c->f, ",\"pid\":%" PRIu64 ",\"tid\":0,\"args\":{\"sort_index\":%zu}}", exp->processes[p].pid,
                p);
    }
    for (size_t t = 0; t < exp->nthreads; t++) {
        if (!strobe_thread_selected(exp, (uint32_t)t))
            continue;
        uint64_t pid = exp->processes[exp->threads[t].process].pid;
        strobe__thread_name(exp, (uint32_t)t, name, sizeof name);
        begin_event(c, "M", "thread_name", NULL);
        fprintf(c->f, ",\"pid\":%" PRIu64 ",\"tid\":%zu,\"args\":{\"name\":", pid, t);
        strobe__json_string(c->f, name);
        fputs("}}", c->f);
        begin_event(c, "M", "thread_sort_index", NULL);
        fprintf(c->f, ",\"pid\":%" PRIu64 ",\"tid\":%zu,\"args\":{\"sort_index\":%zu}}", pid, t, t);
    }
}

static const char *region_category(const struct strobe_region_def *r)
{
    return strobe_region_kind_name(r->kind);
}

/* A strobe__event_fn: returns 0, or STROBE_ERR_FORMAT for an id the model
 * does not define. */
static int write_event(void *arg, uint32_t thread, const struct strobe_event *ev, struct strobe_errbuf *eb)
{
    struct chrome *c = arg;
    const struct strobe_experiment *exp = c->exp;
    FILE *f = c->f;
    char label[512];
    int rc = strobe__check_event_ids(exp, thread, ev, eb);
    if (rc < 0)
        return rc;
    switch (ev->type) {
    case STROBE_EVENT_ENTER:
    case STROBE_EVENT_INHERIT:
    case STROBE_EVENT_EXIT: {
        const struct strobe_region_def *r = &exp->regions[ev->region];
        bool inherited = ev->type == STROBE_EVENT_INHERIT;
        /* An inherited region is tagged through the category list: viewers
         * (speedscope) identify a frame by name + args, so B and E must
         * carry identical args. */
        const char *cat = region_category(r);
        if (inherited)
            cat = r->kind == STROBE_REGION_USER ? "user,inherited" : "function,inherited";
        begin_event(c, ev->type == STROBE_EVENT_EXIT ? "E" : "B", r->name, cat);
        put_when_where(c, ev->time_ns, thread);
        /* a frame re-entered at the start of a part (parts.h) says so,
         * on its B and E alike */
        bool continued = strobe__parts_continued(&c->parts);
        if ((r->file && *r->file) || continued) {
            fputs(",\"args\":{", f);
            if (r->file && *r->file) {
                fputs("\"file\":", f);
                strobe__json_string(f, r->file);
                fprintf(f, ",\"line\":%u%s", r->line, continued ? "," : "");
            }
            fputs(continued ? "\"continued\":true}" : "}", f);
        }
        putc('}', f);
        break;
    }
    case STROBE_EVENT_METRIC: {
        /* Counters belong to a process in the trace format; one series per
         * thread keeps values of different threads apart. */
        begin_event(c, "C", exp->metrics[ev->metric].name, "metric");
        put_when_where(c, ev->time_ns, thread);
        snprintf(label, sizeof label, "thread %" PRIu32, thread);
        fputs(",\"args\":{", f);
        strobe__json_string(f, label);
        fprintf(f, ":%" PRId64 "}}", ev->value);
        break;
    }
    case STROBE_EVENT_THREAD_CREATE:
        if (ev->other_thread == STROBE_NONE || ev->other_thread >= exp->nthreads)
            break;
        strobe__thread_name(exp, ev->other_thread, label, sizeof label);
        begin_event(c, "i", "thread create", "thread");
        put_when_where(c, ev->time_ns, thread);
        fprintf(f, ",\"s\":\"t\",\"args\":{\"thread\":%" PRIu32 ",\"name\":", ev->other_thread);
        strobe__json_string(f, label);
        fputs("}}", f);
        if (!strobe_thread_selected(exp, ev->other_thread))
            break; /* no lane to draw the flow to */
        begin_event(c, "s", "thread create", "thread");
        put_when_where(c, ev->time_ns, thread);
        fprintf(f, ",\"id\":%" PRIu32 "}", ev->other_thread);
        break;
    case STROBE_EVENT_THREAD_BEGIN:
        if (exp->threads[thread].parent == STROBE_NONE || !strobe_thread_selected(exp, exp->threads[thread].parent))
            break;
        /* No "bp":"e": the flow binds to the next slice of the new thread,
         * its start routine. */
        begin_event(c, "f", "thread create", "thread");
        put_when_where(c, ev->time_ns, thread);
        fprintf(f, ",\"id\":%" PRIu32 "}", thread);
        break;
    case STROBE_EVENT_THREAD_JOIN:
        if (ev->other_thread == STROBE_NONE || ev->other_thread >= exp->nthreads)
            break;
        strobe__thread_name(exp, ev->other_thread, label, sizeof label);
        begin_event(c, "i", "thread join", "thread");
        put_when_where(c, ev->time_ns, thread);
        fprintf(f, ",\"s\":\"t\",\"args\":{\"thread\":%" PRIu32 ",\"name\":", ev->other_thread);
        strobe__json_string(f, label);
        fputs("}}", f);
        break;
    case STROBE_EVENT_FORK:
        begin_event(c, "i", "fork", "process");
        put_when_where(c, ev->time_ns, thread);
        fprintf(f, ",\"s\":\"t\",\"args\":{\"child_pid\":%" PRId64 "}}", ev->value);
        break;
    default: /* THREAD_END and future types have no Chrome equivalent */
        break;
    }
    return 0;
}

/* A flow callback (flows.h): the arrow of one task-graph edge. */
static int write_flow(void *arg, const struct strobe_tg_edge *e)
{
    struct chrome *c = arg;
    const char *kind = strobe_tg_edge_kind_name(e->kind);
    c->flows++;
    begin_event(c, "s", kind, "taskgraph");
    put_when_where(c, e->from_ns, e->from_thread);
    fprintf(c->f, ",\"id\":%" PRIu64 "}", c->flows);
    begin_event(c, "f", kind, "taskgraph");
    put_when_where(c, e->to_ns, e->to_thread);
    fprintf(c->f, ",\"bp\":\"e\",\"id\":%" PRIu64 "}", c->flows);
    return ferror(c->f) ? -EIO : 0;
}

static void write_other_data(struct chrome *c)
{
    const struct strobe_experiment *exp = c->exp;
    FILE *f = c->f;
    fputs("\"otherData\":{\"producer\":\"strobe " STROBE_VERSION_STRING "\"", f);
    for (size_t i = 0; i < exp->nmeta; i++) {
        const char *key = exp->meta_keys[i];
        if (!key || strcmp(key, "producer") == 0)
            continue;
        bool seen = false; /* JSON objects should not repeat a key: keep the first */
        for (size_t j = 0; j < i && !seen; j++)
            seen = exp->meta_keys[j] && strcmp(exp->meta_keys[j], key) == 0;
        if (seen)
            continue;
        putc(',', f);
        strobe__json_string(f, key);
        putc(':', f);
        strobe__json_string(f, exp->meta_values[i]);
    }
    fprintf(f, ",\"dropped_events\":%" PRIu64 "}", exp->total_dropped);
}

/* The start of a file (parts.h): the array of events, and the metadata. */
static int begin_part(void *arg, FILE *f, uint32_t thread, struct strobe_errbuf *eb)
{
    struct chrome *c = arg;
    (void)thread, (void)eb;
    c->f = f;
    c->first = true;
    fputs("{\"traceEvents\":[", c->f);
    write_metadata(c);
    return 0;
}

static int end_part(void *arg, struct strobe_errbuf *eb)
{
    struct chrome *c = arg;
    (void)eb;
    fputs("\n],\n\"displayTimeUnit\":\"ns\",\n", c->f);
    write_other_data(c);
    fputs("\n}\n", c->f);
    return 0;
}

int strobe_export_chrome(const struct strobe_experiment *exp, const char *out,
                         const struct strobe_export_opts *opts, struct strobe_errbuf *eb)
{
    struct chrome c = {.exp = exp, .first = true};
    c.parts = (struct strobe__parts){.begin = begin_part, .end = end_part, .event = write_event, .arg = &c};
    int rc = strobe__parts_open(&c.parts, out, opts ? opts->part_bytes : 0, eb);
    if (rc < 0) {
        strobe__parts_abort(&c.parts);
        return rc;
    }

    uint64_t done = 0;
    strobe__export_progress(opts, 0, exp->total_bytes);
    for (uint32_t t = 0; t < exp->nthreads; t++) {
        if (!exp->threads[t].stream_path || !strobe_thread_selected(exp, t))
            continue;
        if ((rc = strobe__export_thread_events(exp, t, opts, &done, strobe__parts_event, &c.parts, eb)) < 0)
            goto fail;
        if (ferror(c.f))
            break; /* reported by commit */
    }
    if ((rc = strobe__export_flows(exp, write_flow, &c, eb)) < 0)
        goto fail;
    return strobe__parts_commit(&c.parts, opts ? opts->nparts : NULL, eb);

fail:
    strobe__parts_abort(&c.parts);
    return rc;
}
