/* SPDX-License-Identifier: MIT */
/*
 * Exporters: each writes the experiment model (src/analysis/experiment.h)
 * to one foreign format. They only format the model: every number comes
 * from the reader and strobe_profile_build(), never from their own parsing.
 * Each returns 0 or a negative code with a one-line message in eb, and
 * removes a partially written OUT on failure.
 */
#ifndef STROBE_EXPORT_EXPORT_H
#define STROBE_EXPORT_EXPORT_H

#include "analysis/experiment.h"

struct strobe_export_opts {
    /* called with (bytes of event streams done, total) when not NULL */
    void (*progress)(uint64_t done, uint64_t total, void *arg);
    void *progress_arg;
    /* chrome and perfetto: split the export into parts OUT-000.ext, ... of
     * about this many bytes (export/parts.h); 0 = one file OUT */
    uint64_t part_bytes;
    uint32_t *nparts; /* when not NULL: gets the number of parts written */
};

/* Output bytes per event of the trace (stream records the selection
 * passes), for the size estimate of `strobe export` (docs/cli.md). Measured
 * with the exporters on a 2-thread -finstrument-functions program of 1.2 M
 * events (Chrome: 129 B with a 6-character source path, longer paths cost
 * more; OTF2: 12.0 B) and on `strobe-bench-tm bank 2 200000` at
 * --tm-monitor events (Paraver: 70.4 B per record of the trace). */
#define STROBE_EXPORT_CHROME_BYTES_PER_EVENT 130u
#define STROBE_EXPORT_OTF2_BYTES_PER_EVENT 12u
#define STROBE_EXPORT_PARAVER_BYTES_PER_EVENT 70u
/* Perfetto: 12 bytes a slice end, 14 a begin (docs/formats/exports.md) */
#define STROBE_EXPORT_PERFETTO_BYTES_PER_EVENT 13u

/* Chrome Trace Event Format JSON (B/E events, thread names, metric counters):
 * loads in Perfetto UI and speedscope. OUT is a file. */
int strobe_export_chrome(const struct strobe_experiment *exp, const char *out,
                         const struct strobe_export_opts *opts, struct strobe_errbuf *eb);

/* OTF2 archive written with libotf2: OUT is the archive directory; the
 * anchor file is OUT/traces.otf2 (readable by otf2-print). */
int strobe_export_otf2(const struct strobe_experiment *exp, const char *out,
                       const struct strobe_export_opts *opts, struct strobe_errbuf *eb);

/* Cube4 .cubex (tar of anchor.xml + per-metric index/data files): metric
 * tree (time, visits, min/max, user metrics), call tree, system tree
 * (machine > process > thread). OUT is the .cubex file. */
int strobe_export_cubex(const struct strobe_experiment *exp, const char *out,
                        const struct strobe_export_opts *opts, struct strobe_errbuf *eb);

/* Paraver trace of a transactional-memory run: OUT.prv, OUT.pcf, OUT.row
 * with per-thread TMbox states, attempt and abort-cause events, and
 * culprit -> victim abort communications (paraver.c has the mapping). */
int strobe_export_paraver(const struct strobe_experiment *exp, const char *out,
                          const struct strobe_export_opts *opts, struct strobe_errbuf *eb);

/* Perfetto protobuf trace (ui.perfetto.dev, trace_processor): process and
 * thread tracks, slices with interned names, counter tracks, instants;
 * one packet sequence per thread with delta timestamps (perfetto.c has the
 * encoding). OUT is a file. */
int strobe_export_perfetto(const struct strobe_experiment *exp, const char *out,
                           const struct strobe_export_opts *opts, struct strobe_errbuf *eb);

/* pprof profile (gzip'd perftools.profiles.Profile of profile.proto) for
 * go tool pprof, speedscope and Pyroscope: sample types visits, incl_time,
 * excl_time (the default) and, when sampled, samples and cpu; one sample per
 * call path and thread (pprof.c has the mapping). OUT is the .pb.gz file. */
int strobe_export_pprof(const struct strobe_experiment *exp, const char *out,
                        const struct strobe_export_opts *opts, struct strobe_errbuf *eb);

#endif
