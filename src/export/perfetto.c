/* SPDX-License-Identifier: MIT */
/*
 * Perfetto protobuf trace exporter (the binary format of ui.perfetto.dev
 * and trace_processor), encoded with protobuf-c from the schema subset in
 * perfetto_trace.proto. A trace file is a concatenation of Trace.packet
 * fields (tag 0x0a, varint length, TracePacket), so each packet is packed
 * and written as soon as it is known: memory use does not depend on the
 * trace size, as in the Chrome exporter, and threads are written one after
 * the other (Perfetto sorts by time itself).
 *
 * Compactness (13 bytes per event on the tightest traces, against ~148 in
 * Chrome JSON and 11 in OTF2) comes from three per-sequence mechanisms of
 * the format; each thread is its own packet sequence so they stay valid
 * within it:
 *   - names are interned: the first packet that uses a name carries
 *     InternedData {iid, name}, later ones only name_iid;
 *   - timestamps are deltas on clock SEQ_CLOCK (sequence-scoped,
 *     is_incremental), tied to CLOCK_MONOTONIC by a ClockSnapshot at the
 *     start of the sequence;
 *   - TracePacketDefaults give every packet that clock and the thread's
 *     track, so a slice end is only {sequence, flags, delta, type}.
 * The task graph's edges (experiments of `strobe run --taskgraph`) are
 * flows between instants on a last sequence of their own (export/flows.h).
 * The mapping of each event type is in docs/formats/exports.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/select.h"
#include "export/escape.h"
#include "export/export.h"
#include "export/flows.h"
#include "export/names.h"
#include "export/output.h"
#include "export/parts.h"
#include "export/perfetto_trace.pb-c.h"
#include "strobe/strobe.h"

/* First user-defined clock id (64..127 are sequence-scoped). */
#define SEQ_CLOCK 64u
/* Packet sequence of the process and thread descriptors; thread t writes
 * its events on sequence THREAD_SEQ0 + t, the task-graph flows are on
 * sequence THREAD_SEQ0 + nthreads. */
#define DESCRIPTOR_SEQ 1u
#define THREAD_SEQ0 2u

/* Names interned besides the regions': slots nregions + FIXED_*, then the
 * task-graph edge kinds' at nregions + NFIXED + kind. */
enum { FIXED_THREAD_CREATE, FIXED_THREAD_JOIN, FIXED_FORK, NFIXED };
static const char *const fixed_names[NFIXED] = {"thread create", "thread join", "fork"};
#define NNAMES(exp) ((exp)->nregions + NFIXED + STROBE_TG_NKINDS)
/* The one category a sequence uses: "inherited" on a thread's, "taskgraph"
 * on the flows'. */
#define CATEGORY_IID 1u

struct perfetto {
    FILE *f;
    const char *out; /* for messages */
    struct strobe_errbuf *eb;
    const struct strobe_experiment *exp;
    uint64_t origin_ns; /* CLOCK_MONOTONIC time of experiment time 0 */
    uint8_t *buf;       /* packing buffer */
    size_t cap;
    char *owned[2]; /* UTF-8-valid copies used by the packet being built */
    size_t nowned;
    /* State of the current sequence, reset by reset_sequence(). */
    uint32_t thread, seq;
    uint64_t last_ns;   /* experiment time of the last timestamped packet */
    uint64_t *name_iid; /* [NNAMES], 0 = not yet interned */
    uint64_t next_name_iid;
    bool *counter_described;    /* [nmetrics] */
    bool category_interned;     /* CATEGORY_IID */
    uint64_t pending_flow;      /* flow to end at the next slice begin, 0 = none */
    uint64_t flows;             /* task-graph flows written */
    struct strobe__parts parts; /* the file (or files: --chunk-size) being written */
};

/* Track uuids: unique in the trace, never 0 (the trace-global track). */
static uint64_t process_uuid(uint32_t process)
{
    return 1 + (uint64_t)process;
}

static uint64_t thread_uuid(const struct strobe_experiment *exp, uint32_t thread)
{
    return 1 + exp->nprocesses + (uint64_t)thread;
}

static uint64_t counter_uuid(const struct strobe_experiment *exp, uint32_t thread, uint32_t metric)
{
    return 1 + exp->nprocesses + exp->nthreads + (uint64_t)thread * exp->nmetrics + metric;
}

/* Packs pkt after its Trace.packet tag and length. Write errors are sticky
 * in the stream and reported by strobe__out_file_commit(). */
static int write_packet(struct perfetto *p, const Perfetto__Protos__TracePacket *pkt)
{
    size_t len = perfetto__protos__trace_packet__get_packed_size(pkt);
    if (len + 11 > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (cap < len + 11)
            cap *= 2;
        uint8_t *buf = realloc(p->buf, cap);
        if (!buf)
            return strobe__error(p->eb, -ENOMEM, "%s: out of memory", p->out);
        p->buf = buf;
        p->cap = cap;
    }
    size_t n = 0;
    p->buf[n++] = 0x0a; /* field 1 (packet), wire type 2 (length-delimited) */
    for (size_t v = len;; v >>= 7) {
        p->buf[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        if (v <= 0x7f)
            break;
    }
    n += perfetto__protos__trace_packet__pack(pkt, p->buf + n);
    fwrite(p->buf, 1, n, p->f);
    return 0;
}

/* s with invalid UTF-8 replaced (protobuf strings are UTF-8), owned by p
 * until release_strings(); NULL with a message when out of memory. */
static char *utf8(struct perfetto *p, const char *s)
{
    char *v = p->nowned < sizeof p->owned / sizeof p->owned[0] ? strobe__utf8_valid(s) : NULL;
    if (!v) {
        strobe__error(p->eb, -ENOMEM, "%s: out of memory", p->out);
        return NULL;
    }
    return p->owned[p->nowned++] = v;
}

static void release_strings(struct perfetto *p)
{
    while (p->nowned > 0)
        free(p->owned[--p->nowned]);
}

static void set_sequence(Perfetto__Protos__TracePacket *pkt, uint32_t seq)
{
    pkt->optional_trusted_packet_sequence_id_case =
        PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
    pkt->trusted_packet_sequence_id = seq;
}

static int write_descriptor(struct perfetto *p, uint32_t seq, Perfetto__Protos__TrackDescriptor *td)
{
    Perfetto__Protos__TracePacket pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    set_sequence(&pkt, seq);
    pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
    pkt.track_descriptor = td;
    int rc = write_packet(p, &pkt);
    release_strings(p);
    return rc;
}

/* One process track per process and one thread track per thread, with the
 * pids, tids and names of the common naming (names.h). */
static int write_descriptors(struct perfetto *p)
{
    const struct strobe_experiment *exp = p->exp;
    char name[512];
    int rc = 0;
    for (size_t i = 0; i < exp->nprocesses && rc == 0; i++) {
        if (!strobe_process_selected(exp, (uint32_t)i))
            continue;
        const struct strobe_process_info *proc = &exp->processes[i];
        /* The exe basename only, as in Chrome JSON: viewers add the pid. */
        const char *exe = proc->exe ? strobe__basename(proc->exe) : "";
        if (*exe)
            snprintf(name, sizeof name, "%s", exe);
        else
            strobe__process_name(exp, (uint32_t)i, name, sizeof name);
        Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
        pd.has_pid = 1;
        pd.pid = (int32_t)proc->pid;
        if (!(pd.process_name = utf8(p, name)))
            return -ENOMEM;
        Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
        td.has_uuid = 1;
        td.uuid = process_uuid((uint32_t)i);
        td.process = &pd;
        rc = write_descriptor(p, DESCRIPTOR_SEQ, &td);
    }
    for (size_t t = 0; t < exp->nthreads && rc == 0; t++) {
        if (!strobe_thread_selected(exp, (uint32_t)t))
            continue;
        const struct strobe_thread_info *th = &exp->threads[t];
        strobe__thread_name(exp, (uint32_t)t, name, sizeof name);
        Perfetto__Protos__ThreadDescriptor thd = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
        thd.has_pid = thd.has_tid = 1;
        thd.pid = (int32_t)exp->processes[th->process].pid;
        thd.tid = (int64_t)th->tid;
        thd.thread_name = name;
        Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
        td.has_uuid = td.has_parent_uuid = 1;
        td.uuid = thread_uuid(exp, (uint32_t)t);
        td.parent_uuid = process_uuid(th->process);
        td.thread = &thd;
        rc = write_descriptor(p, DESCRIPTOR_SEQ, &td);
    }
    return rc;
}

/* Forgets the interning of the previous sequence before starting seq. */
static void reset_sequence(struct perfetto *p, uint32_t seq)
{
    const struct strobe_experiment *exp = p->exp;
    p->seq = seq;
    p->last_ns = 0;
    memset(p->name_iid, 0, NNAMES(exp) * sizeof *p->name_iid);
    memset(p->counter_described, 0, exp->nmetrics * sizeof *p->counter_described);
    p->next_name_iid = 1;
    p->category_interned = false;
    p->pending_flow = 0;
}

/* The first packet of the current sequence: clears the incremental state,
 * sets its defaults and, unless NULL, carries snap. */
static int write_first_packet(struct perfetto *p, Perfetto__Protos__TracePacketDefaults *defaults,
                              Perfetto__Protos__ClockSnapshot *snap)
{
    Perfetto__Protos__TracePacket pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    set_sequence(&pkt, p->seq);
    pkt.has_sequence_flags = 1;
    pkt.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
    pkt.trace_packet_defaults = defaults;
    if (snap) {
        pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
        pkt.clock_snapshot = snap;
    }
    return write_packet(p, &pkt);
}

/* Starts thread t's sequence: clears the incremental state, sets the
 * defaults (clock SEQ_CLOCK, the thread's track) and ties SEQ_CLOCK to
 * CLOCK_MONOTONIC at experiment time 0. */
static int begin_sequence(struct perfetto *p, uint32_t t);

/* The start of a file (parts.h): the tracks, and when a thread's events
 * continue from the part before, its sequence again (a new file knows
 * nothing of the interning and clock of another). */
static int begin_part(void *arg, FILE *f, uint32_t thread, struct strobe_errbuf *eb)
{
    struct perfetto *p = arg;
    (void)eb;
    p->f = f;
    int rc = write_descriptors(p);
    return rc < 0 || thread == STROBE_NONE ? rc : begin_sequence(p, thread);
}

static int end_part(void *arg, struct strobe_errbuf *eb)
{
    (void)arg, (void)eb;
    return 0;
}

static int begin_sequence(struct perfetto *p, uint32_t t)
{
    const struct strobe_experiment *exp = p->exp;
    p->thread = t;
    reset_sequence(p, THREAD_SEQ0 + t);

    Perfetto__Protos__TrackEventDefaults ted = PERFETTO__PROTOS__TRACK_EVENT_DEFAULTS__INIT;
    ted.has_track_uuid = 1;
    ted.track_uuid = thread_uuid(exp, t);
    Perfetto__Protos__TracePacketDefaults defaults = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
    defaults.has_timestamp_clock_id = 1;
    defaults.timestamp_clock_id = SEQ_CLOCK;
    defaults.track_event_defaults = &ted;

    Perfetto__Protos__ClockSnapshot__Clock seq_clock = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
    seq_clock.has_clock_id = seq_clock.has_timestamp = seq_clock.has_is_incremental = 1;
    seq_clock.clock_id = SEQ_CLOCK;
    seq_clock.timestamp = p->origin_ns;
    seq_clock.is_incremental = 1;
    Perfetto__Protos__ClockSnapshot__Clock mono = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
    mono.has_clock_id = mono.has_timestamp = 1;
    mono.clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC;
    mono.timestamp = p->origin_ns;
    Perfetto__Protos__ClockSnapshot__Clock *clocks[] = {&seq_clock, &mono};
    Perfetto__Protos__ClockSnapshot snap = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
    snap.n_clocks = 2;
    snap.clocks = clocks;
    /* Without it, readers convert to CLOCK_BOOTTIME, which no snapshot
     * relates to SEQ_CLOCK. */
    snap.has_primary_trace_clock = 1;
    snap.primary_trace_clock = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC;

    return write_first_packet(p, &defaults, &snap);
}

/* What one event adds to its packet besides the TrackEvent. */
struct interning {
    Perfetto__Protos__InternedData data;
    Perfetto__Protos__EventName name, *names[1];
    Perfetto__Protos__EventCategory category, *categories[1];
    bool used;
};

static void interning_init(struct interning *in)
{
    *in = (struct interning){.data = PERFETTO__PROTOS__INTERNED_DATA__INIT,
                             .name = PERFETTO__PROTOS__EVENT_NAME__INIT,
                             .category = PERFETTO__PROTOS__EVENT_CATEGORY__INIT};
}

/* Sets te's name to slot's iid, interning name on first use. Returns 0 or
 * -ENOMEM. */
static int set_name(struct perfetto *p, struct interning *in, Perfetto__Protos__TrackEvent *te, size_t slot,
                    const char *name)
{
    if (!p->name_iid[slot]) {
        in->name.has_iid = 1;
        in->name.iid = p->next_name_iid;
        if (!(in->name.name = utf8(p, name)))
            return -ENOMEM;
        p->name_iid[slot] = p->next_name_iid++;
        in->names[0] = &in->name;
        in->data.n_event_names = 1;
        in->data.event_names = in->names;
        in->used = true;
    }
    te->name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
    te->name_iid = p->name_iid[slot];
    return 0;
}

/* Gives te the sequence's category (name), interning it on first use. */
static void set_category(struct perfetto *p, struct interning *in, Perfetto__Protos__TrackEvent *te,
                         uint64_t *iid, const char *name)
{
    if (!p->category_interned) {
        p->category_interned = true;
        in->category.has_iid = 1;
        in->category.iid = CATEGORY_IID;
        in->category.name = (char *)name;
        in->categories[0] = &in->category;
        in->data.n_event_categories = 1;
        in->data.event_categories = in->categories;
        in->used = true;
    }
    *iid = CATEGORY_IID;
    te->n_category_iids = 1;
    te->category_iids = iid;
}

/* A counter track per (thread, metric), described on first use; it is
 * shown with the thread's tracks (parent = the thread track). */
static int describe_counter(struct perfetto *p, uint32_t metric)
{
    const struct strobe_experiment *exp = p->exp;
    if (p->counter_described[metric])
        return 0;
    p->counter_described[metric] = true;
    Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
    const char *unit = exp->metrics[metric].unit;
    if (unit && *unit && !(cd.unit_name = utf8(p, unit)))
        return -ENOMEM;
    Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    td.has_uuid = td.has_parent_uuid = 1;
    td.uuid = counter_uuid(exp, p->thread, metric);
    td.parent_uuid = thread_uuid(exp, p->thread);
    td.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
    if (!(td.name = utf8(p, exp->metrics[metric].name))) {
        release_strings(p);
        return -ENOMEM;
    }
    td.counter = &cd;
    return write_descriptor(p, p->seq, &td);
}

/* The packet of te on the current sequence, at timestamp (in the
 * sequence's clock), with what te interned. */
static int write_track_event(struct perfetto *p, uint64_t timestamp, struct interning *in,
                             Perfetto__Protos__TrackEvent *te)
{
    Perfetto__Protos__TracePacket pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    set_sequence(&pkt, p->seq);
    pkt.has_sequence_flags = 1;
    pkt.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
    pkt.has_timestamp = 1;
    pkt.timestamp = timestamp;
    if (in->used)
        pkt.interned_data = &in->data;
    pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
    pkt.track_event = te;
    int rc = write_packet(p, &pkt);
    release_strings(p);
    return rc;
}

/* Returns 0, or STROBE_ERR_FORMAT for an id the model does not define or
 * -ENOMEM, with a message in eb. */
static int write_event(void *arg, uint32_t t, const struct strobe_event *ev, struct strobe_errbuf *eb)
{
    struct perfetto *p = arg;
    const struct strobe_experiment *exp = p->exp;
    int rc = strobe__check_event_ids(exp, t, ev, eb);
    if (rc < 0)
        return rc;
    /* The reader's times only grow within a thread (unsigned tick deltas);
     * an incremental clock cannot go back. */
    if (ev->time_ns < p->last_ns)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %" PRIu64 ": time goes backwards",
                             exp->threads[t].stream_path, ev->offset);

    Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    te.has_type = 1;
    struct interning in;
    interning_init(&in);
    uint64_t category, flow;
    Perfetto__Protos__DebugAnnotation args[2] = {PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT,
                                                 PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT};
    Perfetto__Protos__DebugAnnotation *argv[2] = {&args[0], &args[1]};
    char label[512];
    int fixed;

    switch (ev->type) {
    case STROBE_EVENT_ENTER:
    case STROBE_EVENT_INHERIT:
        te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
        if ((rc = set_name(p, &in, &te, ev->region, exp->regions[ev->region].name)) < 0)
            return rc;
        if (ev->type == STROBE_EVENT_INHERIT)
            set_category(p, &in, &te, &category, "inherited");
        if (strobe__parts_continued(&p->parts)) { /* re-entered at the start of a part (parts.h) */
            args[0].name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
            args[0].name = "continued";
            args[0].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
            args[0].uint_value = 1;
            te.n_debug_annotations = 1;
            te.debug_annotations = argv;
        }
        if (p->pending_flow) {
            flow = p->pending_flow;
            p->pending_flow = 0;
            te.n_terminating_flow_ids = 1;
            te.terminating_flow_ids = &flow;
        }
        break;
    case STROBE_EVENT_EXIT:
        te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
        break;
    case STROBE_EVENT_METRIC:
        if ((rc = describe_counter(p, ev->metric)) < 0)
            return rc;
        te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
        te.has_track_uuid = 1;
        te.track_uuid = counter_uuid(exp, t, ev->metric);
        te.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE;
        te.counter_value = ev->value;
        break;
    case STROBE_EVENT_THREAD_CREATE:
    case STROBE_EVENT_THREAD_JOIN:
        if (ev->other_thread == STROBE_NONE || ev->other_thread >= exp->nthreads)
            return 0;
        te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
        fixed = ev->type == STROBE_EVENT_THREAD_CREATE ? FIXED_THREAD_CREATE : FIXED_THREAD_JOIN;
        if ((rc = set_name(p, &in, &te, exp->nregions + fixed, fixed_names[fixed])) < 0)
            return rc;
        strobe__thread_name(exp, ev->other_thread, label, sizeof label);
        args[0].name_field_case = args[1].name_field_case =
            PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
        args[0].name = "thread";
        args[0].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
        args[0].uint_value = ev->other_thread;
        args[1].name = "name";
        args[1].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
        args[1].string_value = label;
        te.n_debug_annotations = 2;
        te.debug_annotations = argv;
        if (ev->type == STROBE_EVENT_THREAD_CREATE && strobe_thread_selected(exp, ev->other_thread)) {
            /* The arrow to the child's first slice (its start routine). */
            flow = 1 + (uint64_t)ev->other_thread;
            te.n_flow_ids = 1;
            te.flow_ids = &flow;
        }
        break;
    case STROBE_EVENT_THREAD_BEGIN:
        if (exp->threads[t].parent != STROBE_NONE && strobe_thread_selected(exp, exp->threads[t].parent))
            p->pending_flow = 1 + (uint64_t)t;
        return 0;
    case STROBE_EVENT_FORK:
        te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
        if ((rc = set_name(p, &in, &te, exp->nregions + FIXED_FORK, fixed_names[FIXED_FORK])) < 0)
            return rc;
        args[0].name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
        args[0].name = "child_pid";
        args[0].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE;
        args[0].int_value = ev->value;
        te.n_debug_annotations = 1;
        te.debug_annotations = argv;
        break;
    default: /* THREAD_END, TM and future types: as in Chrome JSON, none */
        return 0;
    }

    uint64_t delta = ev->time_ns - p->last_ns;
    p->last_ns = ev->time_ns;
    return write_track_event(p, delta, &in, &te);
}

/* One end of a task-graph flow: an instant named after the edge kind, in
 * category "taskgraph", on thread's track at experiment time ns. */
static int write_flow_end(struct perfetto *p, const struct strobe_tg_edge *e, uint32_t thread, uint64_t ns,
                          bool terminating)
{
    Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    te.has_type = 1;
    te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
    te.has_track_uuid = 1;
    te.track_uuid = thread_uuid(p->exp, thread);
    struct interning in;
    interning_init(&in);
    uint64_t category, flow = 1 + p->exp->nthreads + p->flows; /* after the thread-create flows */
    int rc = set_name(p, &in, &te, p->exp->nregions + NFIXED + e->kind, strobe_tg_edge_kind_name(e->kind));
    if (rc < 0)
        return rc;
    set_category(p, &in, &te, &category, "taskgraph");
    if (terminating) {
        te.n_terminating_flow_ids = 1;
        te.terminating_flow_ids = &flow;
    } else {
        te.n_flow_ids = 1;
        te.flow_ids = &flow;
    }
    return write_track_event(p, p->origin_ns + ns, &in, &te);
}

/* A flow callback (flows.h): the arrow of one task-graph edge, from the
 * end of the task it leaves to the start of the task it enters. The flows'
 * sequence starts with the first: the graph is built after the threads'
 * events and its times are not ordered, so its packets carry absolute
 * CLOCK_MONOTONIC times (the sequence's defaults). */
static int write_flow(void *arg, const struct strobe_tg_edge *e)
{
    struct perfetto *p = arg;
    int rc = 0;
    if (p->flows == 0) {
        Perfetto__Protos__TracePacketDefaults defaults = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
        defaults.has_timestamp_clock_id = 1;
        defaults.timestamp_clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC;
        rc = write_first_packet(p, &defaults, NULL);
    }
    if (rc == 0)
        rc = write_flow_end(p, e, e->from_thread, e->from_ns, false);
    if (rc == 0)
        rc = write_flow_end(p, e, e->to_thread, e->to_ns, true);
    p->flows++;
    return rc < 0 ? rc : ferror(p->f) ? -EIO : 0;
}

/* The task graph's edges as flows, on their own sequence. */
static int write_flows(struct perfetto *p)
{
    reset_sequence(p, THREAD_SEQ0 + p->exp->nthreads);
    return strobe__export_flows(p->exp, write_flow, p, p->eb);
}

int strobe_export_perfetto(const struct strobe_experiment *exp, const char *out,
                           const struct strobe_export_opts *opts, struct strobe_errbuf *eb)
{
    struct perfetto p = {.out = out, .eb = eb, .exp = exp};
    /* Absolute CLOCK_MONOTONIC times, as in the OTF2 export. */
    p.origin_ns = exp->origin_ns > 0 && exp->origin_ns < 9.2e18 ? (uint64_t)llround(exp->origin_ns) : 0;
    p.name_iid = calloc(NNAMES(exp), sizeof *p.name_iid);
    p.counter_described = calloc(exp->nmetrics + 1, sizeof *p.counter_described);
    p.parts = (struct strobe__parts){.begin = begin_part, .end = end_part, .event = write_event, .arg = &p};
    int rc = 0;
    if (!p.name_iid || !p.counter_described) {
        rc = strobe__error(eb, -ENOMEM, "%s: out of memory", out);
        goto done;
    }
    if ((rc = strobe__parts_open(&p.parts, out, opts ? opts->part_bytes : 0, eb)) < 0)
        goto fail;

    uint64_t done = 0;
    strobe__export_progress(opts, 0, exp->total_bytes);
    for (uint32_t t = 0; t < exp->nthreads; t++) {
        if (!exp->threads[t].stream_path || !strobe_thread_selected(exp, t))
            continue;
        if ((rc = begin_sequence(&p, t)) < 0)
            goto fail;
        if ((rc = strobe__export_thread_events(exp, t, opts, &done, strobe__parts_event, &p.parts, eb)) < 0)
            goto fail;
        if (ferror(p.f))
            break; /* reported by commit */
    }
    if (!ferror(p.f) && (rc = write_flows(&p)) < 0)
        goto fail;
    rc = strobe__parts_commit(&p.parts, opts ? opts->nparts : NULL, eb);
    goto done;

fail:
    strobe__parts_abort(&p.parts);
done:
    release_strings(&p);
    free(p.buf);
    free(p.name_iid);
    free(p.counter_described);
    return rc;
}
