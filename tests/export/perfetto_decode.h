/* SPDX-License-Identifier: MIT */
/*
 * Test-only reader of a Perfetto trace written by strobe_export_perfetto:
 * unpacks every TracePacket with the protobuf-c code generated from
 * src/export/perfetto_trace.proto and resolves what a Perfetto consumer
 * resolves per packet sequence (interned names and categories, the
 * incremental clock, the default track), checking the sequence rules on
 * the way: the first packet of a sequence clears the incremental state,
 * every track event needs it, interned ids and clocks are defined before
 * use.
 */
#ifndef STROBE_TESTS_EXPORT_PERFETTO_DECODE_H
#define STROBE_TESTS_EXPORT_PERFETTO_DECODE_H

#include <stddef.h>
#include <stdint.h>

enum pf_track_kind { PF_TRACK_PROCESS, PF_TRACK_THREAD, PF_TRACK_COUNTER };

struct pf_track {
    uint64_t uuid, parent; /* parent 0 = none */
    int kind;              /* enum pf_track_kind */
    int32_t pid;           /* process and thread tracks */
    int64_t tid;           /* thread tracks */
    char *name;            /* process_name, thread_name or the counter's name */
    char *unit;            /* counters: unit_name or NULL */
};

struct pf_event {
    uint32_t seq;
    uint64_t track;                  /* resolved track uuid */
    int type;                        /* TrackEvent.Type */
    uint64_t ts;                     /* absolute CLOCK_MONOTONIC ns */
    char *name;                      /* resolved interned name, NULL for slice ends and counters */
    char *category;                  /* resolved interned category or NULL */
    int64_t value;                   /* counters */
    uint64_t flow, terminating_flow; /* 0 = none */
    char args[256];                  /* debug annotations as "name=value;..." */
    size_t bytes;                    /* of its Trace.packet field: tag, length and packet */
};

struct pf_trace {
    struct pf_track *tracks;
    size_t ntracks;
    struct pf_event *events; /* in file order */
    size_t nevents;
    size_t packets;
    size_t interned_names; /* EventName entries over all sequences */
};

/* Returns 0, or -1 with a one-line reason in err. */
int pf_decode(const char *path, struct pf_trace *out, char *err, size_t errsize);
void pf_free(struct pf_trace *t);
const struct pf_track *pf_find_track(const struct pf_trace *t, uint64_t uuid);

#endif
