/* SPDX-License-Identifier: MIT */
/*
 * Decodes a Perfetto trace for the export tests (see perfetto_decode.h).
 */
#include "perfetto_decode.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/perfetto_trace.pb-c.h"

#define MAX_SEQ 4096
#define MAX_IID 4096

/* What a consumer keeps per packet sequence. */
struct seq_state {
    bool cleared;   /* a packet with SEQ_INCREMENTAL_STATE_CLEARED was seen */
    bool has_clock; /* a snapshot defined the default clock */
    uint32_t default_clock;
    uint64_t clock_value; /* the incremental clock's current value */
    uint64_t default_track;
    char *names[MAX_IID];
    char *categories[MAX_IID];
};

struct decoder {
    struct pf_trace *t;
    struct seq_state **seqs; /* [MAX_SEQ], each allocated at its first packet */
    char *err;
    size_t errsize;
    size_t packet;       /* index, for messages */
    size_t packet_bytes; /* of the current Trace.packet field */
};

static int fail(struct decoder *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct decoder *d, const char *fmt, ...)
{
    int n = snprintf(d->err, d->errsize, "packet %zu: ", d->packet);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err + n, d->errsize - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Appends a zeroed element of size bytes to the array whose pointer is at
 * array_ptr (*n elements); memcpy moves the pointer, whatever its type.
 * The capacity is the next power of two: it doubles when *n reaches one. */
static void *append(struct decoder *d, void *array_ptr, size_t *n, size_t size)
{
    char *grown;
    memcpy(&grown, array_ptr, sizeof grown);
    if ((*n & (*n - 1)) == 0) {
        grown = realloc(grown, (*n ? 2 * *n : 1) * size);
        if (!grown) {
            fail(d, "out of memory");
            return NULL;
        }
    }
    memcpy(array_ptr, &grown, sizeof grown);
    memset(grown + *n * size, 0, size);
    return grown + (*n)++ * size;
}

static void reset_seq(struct seq_state *s)
{
    for (size_t i = 0; i < MAX_IID; i++) {
        free(s->names[i]);
        free(s->categories[i]);
    }
    memset(s, 0, sizeof *s);
}

static int intern(struct decoder *d, char **table, uint64_t iid, const char *name)
{
    if (iid == 0 || iid >= MAX_IID || !name)
        return fail(d, "bad interned entry %" PRIu64, iid);
    free(table[iid]);
    table[iid] = strdup(name);
    return 0;
}

static char *lookup(struct decoder *d, char **table, uint64_t iid)
{
    if (iid == 0 || iid >= MAX_IID || !table[iid]) {
        fail(d, "interned id %" PRIu64 " used before it was defined on its sequence", iid);
        return NULL;
    }
    return table[iid];
}

static int add_track(struct decoder *d, const Perfetto__Protos__TrackDescriptor *td)
{
    struct pf_trace *t = d->t;
    if (!td->has_uuid || td->uuid == 0)
        return fail(d, "track descriptor without uuid");
    if (pf_find_track(t, td->uuid))
        return fail(d, "track %" PRIu64 " described twice", td->uuid);
    struct pf_track *k = append(d, &t->tracks, &t->ntracks, sizeof *k);
    if (!k)
        return -1;
    k->uuid = td->uuid;
    k->parent = td->has_parent_uuid ? td->parent_uuid : 0;
    if (td->process) {
        k->kind = PF_TRACK_PROCESS;
        k->pid = td->process->pid;
        k->name = strdup(td->process->process_name ? td->process->process_name : "");
    } else if (td->thread) {
        k->kind = PF_TRACK_THREAD;
        k->pid = td->thread->pid;
        k->tid = td->thread->tid;
        k->name = strdup(td->thread->thread_name ? td->thread->thread_name : "");
    } else if (td->counter) {
        k->kind = PF_TRACK_COUNTER;
        k->name = strdup(td->name ? td->name : "");
        k->unit = td->counter->unit_name ? strdup(td->counter->unit_name) : NULL;
    } else {
        return fail(d, "track %" PRIu64 " is neither process, thread nor counter", td->uuid);
    }
    return 0;
}

static void append_arg(char *args, size_t size, const Perfetto__Protos__DebugAnnotation *a)
{
    size_t n = strlen(args);
    const char *name =
        a->name_field_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME ? a->name : "?";
    switch (a->value_case) {
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE:
        snprintf(args + n, size - n, "%s=%" PRIu64 ";", name, a->uint_value);
        break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE:
        snprintf(args + n, size - n, "%s=%" PRId64 ";", name, a->int_value);
        break;
    case PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE:
        snprintf(args + n, size - n, "%s=%s;", name, a->string_value);
        break;
    default:
        snprintf(args + n, size - n, "%s=?;", name);
        break;
    }
}

static int add_event(struct decoder *d, struct seq_state *s, uint32_t seq,
                     const Perfetto__Protos__TracePacket *p)
{
    const Perfetto__Protos__TrackEvent *te = p->track_event;
    if (!(p->has_sequence_flags &&
          (p->sequence_flags & PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE)))
        return fail(d, "track event without SEQ_NEEDS_INCREMENTAL_STATE");
    if (!s->cleared)
        return fail(d, "track event on sequence %" PRIu32 " before its incremental state was cleared", seq);
    if (!p->has_timestamp || !s->has_clock || p->has_timestamp_clock_id)
        return fail(d, "track event without a timestamp on the sequence's default clock");
    if (!te->has_type)
        return fail(d, "track event without type");
    struct pf_event *e = append(d, &d->t->events, &d->t->nevents, sizeof *e);
    if (!e)
        return -1;
    e->seq = seq;
    e->bytes = d->packet_bytes;
    s->clock_value += p->timestamp; /* the clock is incremental */
    e->ts = s->clock_value;
    e->type = te->type;
    e->track = te->has_track_uuid ? te->track_uuid : s->default_track;
    const char *name = NULL, *category = NULL;
    if (te->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID &&
        !(name = lookup(d, s->names, te->name_iid)))
        return -1;
    if (te->n_category_iids > 1)
        return fail(d, "more than one category");
    if (te->n_category_iids == 1 && !(category = lookup(d, s->categories, te->category_iids[0])))
        return -1;
    e->name = name ? strdup(name) : NULL;
    e->category = category ? strdup(category) : NULL;
    if (te->counter_value_field_case == PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE)
        e->value = te->counter_value;
    if (te->n_flow_ids > 1 || te->n_terminating_flow_ids > 1)
        return fail(d, "more than one flow per event");
    e->flow = te->n_flow_ids ? te->flow_ids[0] : 0;
    e->terminating_flow = te->n_terminating_flow_ids ? te->terminating_flow_ids[0] : 0;
    for (size_t i = 0; i < te->n_debug_annotations; i++)
        append_arg(e->args, sizeof e->args, te->debug_annotations[i]);
    return 0;
}

static int packet(struct decoder *d, const Perfetto__Protos__TracePacket *p)
{
    if (p->optional_trusted_packet_sequence_id_case !=
            PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID ||
        p->trusted_packet_sequence_id == 0 || p->trusted_packet_sequence_id >= MAX_SEQ)
        return fail(d, "no valid trusted_packet_sequence_id");
    uint32_t seq = p->trusted_packet_sequence_id;
    if (!d->seqs[seq] && !(d->seqs[seq] = calloc(1, sizeof **d->seqs)))
        return fail(d, "out of memory");
    struct seq_state *s = d->seqs[seq];
    if (p->has_sequence_flags &&
        (p->sequence_flags & PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED)) {
        reset_seq(s);
        s->cleared = true;
    }
    if (p->trace_packet_defaults) {
        const Perfetto__Protos__TracePacketDefaults *df = p->trace_packet_defaults;
        if (!s->cleared)
            return fail(d, "defaults before the incremental state was cleared");
        s->default_clock = df->has_timestamp_clock_id ? df->timestamp_clock_id : 0;
        s->default_track = df->track_event_defaults && df->track_event_defaults->has_track_uuid
                               ? df->track_event_defaults->track_uuid
                               : 0;
    }
    if (p->interned_data) {
        const Perfetto__Protos__InternedData *in = p->interned_data;
        for (size_t i = 0; i < in->n_event_names; i++)
            if (intern(d, s->names, in->event_names[i]->iid, in->event_names[i]->name) < 0)
                return -1;
        d->t->interned_names += in->n_event_names;
        for (size_t i = 0; i < in->n_event_categories; i++)
            if (intern(d, s->categories, in->event_categories[i]->iid, in->event_categories[i]->name) < 0)
                return -1;
    }
    switch (p->data_case) {
    case PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT: {
        /* strobe ties the sequence's incremental clock to CLOCK_MONOTONIC
         * at the same instant: both readings must be equal. */
        const Perfetto__Protos__ClockSnapshot *cs = p->clock_snapshot;
        if (cs->n_clocks != 2 || cs->clocks[0]->clock_id != s->default_clock ||
            cs->clocks[0]->clock_id < 64 || !cs->clocks[0]->is_incremental ||
            cs->clocks[1]->clock_id != PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC ||
            cs->clocks[1]->timestamp != cs->clocks[0]->timestamp || !cs->has_primary_trace_clock ||
            cs->primary_trace_clock != PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC)
            return fail(d, "unexpected clock snapshot");
        s->has_clock = true;
        s->clock_value = cs->clocks[0]->timestamp;
        return 0;
    }
    case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR:
        return add_track(d, p->track_descriptor);
    case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT:
        return add_event(d, s, seq, p);
    default:
        return fail(d, "packet without data");
    }
}

int pf_decode(const char *path, struct pf_trace *out, char *err, size_t errsize)
{
    memset(out, 0, sizeof *out);
    struct decoder d = {.t = out, .err = err, .errsize = errsize};
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsize, "%s: cannot open", path);
        return -1;
    }
    d.seqs = calloc(MAX_SEQ, sizeof *d.seqs);
    uint8_t *buf = NULL;
    int rc = d.seqs ? 0 : fail(&d, "out of memory");
    int c;
    while (rc == 0 && (c = getc(f)) != EOF) {
        if (c != 0x0a) {
            rc = fail(&d, "tag 0x%02x, want 0x0a (Trace.packet)", c);
            break;
        }
        uint64_t len = 0;
        d.packet_bytes = 1;
        for (int shift = 0;; shift += 7) {
            c = getc(f);
            if (c == EOF || shift > 63) {
                rc = fail(&d, "truncated length");
                break;
            }
            len |= (uint64_t)(c & 0x7f) << shift;
            d.packet_bytes++;
            if (!(c & 0x80))
                break;
        }
        if (rc)
            break;
        uint8_t *nb = len > (1u << 20) ? NULL : realloc(buf, len ? len : 1);
        if (!nb) {
            rc = fail(&d, "packet of %" PRIu64 " bytes", len);
            break;
        }
        buf = nb;
        if (fread(buf, 1, len, f) != len) {
            rc = fail(&d, "truncated packet");
            break;
        }
        d.packet_bytes += len;
        Perfetto__Protos__TracePacket *p = perfetto__protos__trace_packet__unpack(NULL, len, buf);
        if (!p) {
            rc = fail(&d, "TracePacket does not unpack");
            break;
        }
        rc = packet(&d, p);
        perfetto__protos__trace_packet__free_unpacked(p, NULL);
        d.packet++;
    }
    out->packets = d.packet;
    fclose(f);
    free(buf);
    for (size_t i = 0; d.seqs && i < MAX_SEQ; i++)
        if (d.seqs[i]) {
            reset_seq(d.seqs[i]);
            free(d.seqs[i]);
        }
    free(d.seqs);
    if (rc)
        pf_free(out);
    return rc;
}

void pf_free(struct pf_trace *t)
{
    for (size_t i = 0; i < t->ntracks; i++) {
        free(t->tracks[i].name);
        free(t->tracks[i].unit);
    }
    for (size_t i = 0; i < t->nevents; i++) {
        free(t->events[i].name);
        free(t->events[i].category);
    }
    free(t->tracks);
    free(t->events);
    memset(t, 0, sizeof *t);
}

const struct pf_track *pf_find_track(const struct pf_trace *t, uint64_t uuid)
{
    for (size_t i = 0; i < t->ntracks; i++)
        if (t->tracks[i].uuid == uuid)
            return &t->tracks[i];
    return NULL;
}
