/* SPDX-License-Identifier: MIT */
/*
 * Writer of the process's `defs` file (format.h, "Definition records"):
 * one record per process fact, clock calibration point, module, region and
 * metric, appended through the chunked mapping of mfile.h.
 *
 * Every function requires strobe__rt.lock (or the single-threaded fork
 * child) and is async-signal-safe: records are encoded straight into the
 * mapped chunk, with no buffer on the heap or a large one on the stack.
 * Strings longer than STROBE__DEF_STR_MAX bytes are cut there, so that any
 * record fits in the smallest chunk.
 */
#ifndef STROBE_CORE_DEFS_H
#define STROBE_CORE_DEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mfile.h"

#define STROBE__DEF_STR_MAX 1900u

/* Creates `defs` in the process directory. */
int strobe__defs_open(void);

void strobe__defs_process(uint64_t pid, uint64_t ppid, int clock_kind, uint64_t realtime_ns, const char *exe,
                          const char *parent_dir);
/* MPI_RANK; strobe__defs_copy_parent copies it too, so a fork child stays
 * in its parent's rank. */
void strobe__defs_mpi_rank(uint64_t rank, uint64_t size, const char *source);
void strobe__defs_clock_sync(uint64_t ticks, uint64_t ns);
void strobe__defs_module(const char *path, uint64_t bias, uint64_t lo, uint64_t hi);
void strobe__defs_region(uint32_t id, int kind, uint64_t addr, const char *name, const char *file,
                         uint64_t line);
void strobe__defs_metric(uint32_t id, const char *name, const char *unit);
void strobe__defs_overhead(uint64_t ticks);
void strobe__defs_process_end(uint64_t ticks, int64_t status);
/* STROBE_DEF_MALLOC: `what` then n (<= 8) ulebs. */
void strobe__defs_malloc(unsigned what, const uint64_t *v, size_t n);
/* STROBE_DEF_SAMPLE: the sampling rate and source. */
void strobe__defs_sample(uint64_t hz, unsigned source);
/* A RECORDING record (enum strobe_recording_what, _cause). */
void strobe__defs_recording(uint64_t ticks, unsigned what, unsigned cause);

/* A record of an adapter (strobe_adapter_define): the payload as given,
 * len <= STROBE__DEF_ADAPTER_MAX. */
#define STROBE__DEF_ADAPTER_MAX 2048u
void strobe__defs_adapter(unsigned type, const uint8_t *payload, size_t len);

/* STROBE_DEF_THREAD_SUMMARY (format.h). */
struct strobe__thread_summary {
    uint32_t index;
    uint32_t parent_plus1; /* creator's index + 1, 0 = none */
    uint64_t tid, begin_ticks;
    unsigned how; /* enum strobe_thread_end_how */
    uint64_t end_ticks, events, bytes, dropped, limit, tail_offset;
    bool has_rusage;
    uint64_t rusage[7]; /* the THREAD_END fields */
    uint64_t depth;     /* frames open at the end */
    uint64_t overwritten; /* a ring stream's records written over (flight recorder) */
};
void strobe__defs_thread_summary(const struct strobe__thread_summary *s);

/* One STROBE_DEF_OPEN_FRAMES record; n <= STROBE__OPEN_FRAMES_MAX. */
struct strobe__open_frame {
    uint32_t region;
    uint32_t slot_plus1;
    uint64_t start_ticks;
};
#define STROBE__OPEN_FRAMES_MAX 128u
void strobe__defs_open_frames(uint32_t index, uint64_t first, const struct strobe__open_frame *f, size_t n);

/* Fork child: copies the CLOCK_SYNC, MODULE, REGION and METRIC records the
 * parent had written at fork time (bytes [0, used) of its open defs
 * file, still referenced by strobe__rt.defs) into the child's new defs, so
 * every id the child inherited keeps its meaning. */
int strobe__defs_copy_parent(const struct strobe__mfile *parent, uint64_t used);

#endif
