/* SPDX-License-Identifier: MIT */
/*
 * Decoders of the raw strobe files (src/common/format.h) working on memory
 * buffers: the defs file, one event stream, one profile file. They validate
 * every byte they use and report problems as one line naming the file and
 * offset. They know nothing about other processes or global ids; the
 * experiment loader (experiment.c) builds the model on top of them, and the
 * fuzz targets (tests/fuzz) drive them directly.
 */
#ifndef STROBE_ANALYSIS_DECODE_H
#define STROBE_ANALYSIS_DECODE_H

#include "analysis/experiment.h"
#include "common/format.h"

/* ---- files (experiment.c) ---------------------------------------------- */

/* Maps the regular file `path` read-only (buf NULL for an empty file);
 * errors name it as `shown`. Undo with strobe__file_unmap. */
int strobe__file_map(const char *path, const char *shown, const uint8_t **buf, size_t *len,
                     struct strobe_errbuf *eb);
void strobe__file_unmap(const uint8_t *buf, size_t len);

/* ---- chunked files ---------------------------------------------------- */

/* Validates the 64-byte header shared by defs and event streams. */
int strobe__header_check(const uint8_t *buf, size_t len, const char *magic, const char *name,
                         struct strobe_file_header *out, struct strobe_errbuf *eb);

/* Moves *pos over chunk padding to the next record of a framed file (defs,
 * blocks). Returns 1 when a record starts at *pos, 0 at the end of the
 * data, < 0 on corrupt padding. */
int strobe__next_record(const uint8_t *buf, size_t len, uint32_t cs, size_t *pos, const char *name,
                        struct strobe_errbuf *eb);

/* Cursor over one record's bytes [p, end); buf is the start of the file
 * (offsets in messages are from it). */
struct strobe__cursor {
    const uint8_t *buf, *p, *end;
    const char *name;
    const char *what; /* record name for messages */
};
/* A uleb, or a string (malloc'd), of the record; errors name the offset. */
int strobe__get_u(struct strobe__cursor *c, uint64_t *v, struct strobe_errbuf *eb);
int strobe__get_str(struct strobe__cursor *c, char **s, struct strobe_errbuf *eb);

/* ---- defs -------------------------------------------------------------- */
struct strobe__sync {
    uint64_t ticks, ns;
};

struct strobe__module {
    char *path;
    uint64_t bias, lo, hi;
};

struct strobe__local_region {
    uint64_t id;
    int kind;
    uint64_t address; /* run-time address */
    char *name, *file;
    unsigned line;
};

struct strobe__local_metric {
    uint64_t id;
    char *name, *unit;
};

/* A THREAD_SUMMARY record (format.h). */
struct strobe__thread_summary {
    uint64_t index, tid, parent, begin_ticks; /* parent: index + 1, 0 = none */
    uint64_t how, end_ticks, events, bytes, dropped, limit, tail_offset, depth;
    bool ring;            /* a ring stream (flight recorder): overwritten follows depth */
    uint64_t overwritten; /* its records written over */
    bool has_rusage;
    struct strobe_rusage rusage;
};

/* One frame of an OPEN_FRAMES record. */
struct strobe__open_frame {
    uint64_t thread, depth; /* thread index, position from the outermost (0) */
    uint64_t region;        /* local region id */
    uint64_t start_ticks;
    uint64_t slot_plus1; /* profile slot + 1, 0 = none */
};

/* The MALLOC records (format.h, STROBE_DEF_MALLOC). */
struct strobe__malloc_live {
    uint64_t thread, slot_plus1, blocks, bytes;
};

/* An MPI_COMM record: members expanded from its runs. */
struct strobe__mpi_comm {
    uint64_t id, flags, size;
    uint32_t *members;
    uint32_t nmembers;
};

/* A CLOCK_OFFSET record (format.h): ticks of this process (send, rtt)
 * and of the reference's (reply). */
struct strobe__clock_offset {
    uint64_t rank, reference, trips, send, rtt, reply;
};

struct strobe__defs {
    bool have_process;
    uint64_t pid, ppid, clock_kind, realtime_ns;
    char *exe, *parent_dir;
    bool have_rank; /* an MPI_RANK record */
    uint64_t rank, world_size;
    struct strobe__sync *syncs; size_t nsyncs;
    struct strobe__module *modules; size_t nmodules;
    struct strobe__local_region *regions; size_t nregions;
    struct strobe__local_metric *metrics; size_t nmetrics;
    uint64_t overhead_ticks;
    bool have_end;
    uint64_t end_ticks;
    int64_t exit_status;
    struct strobe__thread_summary *summaries; size_t nsummaries;
    struct strobe__open_frame *open; size_t nopen;
    bool malloc_on; /* a MALLOC CONFIG record */
    uint64_t malloc_large;
    bool malloc_summary; /* a MALLOC SUMMARY record */
    uint64_t malloc_peak, malloc_peak_ticks, malloc_live_bytes, malloc_live_blocks, malloc_untracked;
    struct strobe__malloc_live *malloc_live; size_t nmalloc_live;
    uint32_t sample_hz; /* a SAMPLE record: its rate, 0 = the process did not sample */
    int sample_source;  /* enum strobe_sample_source */
    struct strobe__mpi_comm *mpi_comms;
    size_t nmpi_comms;
    struct strobe_recording_change *recording; /* RECORDING records */
    size_t nrecording;
    /* CLOCK_OFFSET records by when - 1 (INIT, FINALIZE) */
    bool have_offset[2];
    struct strobe__clock_offset offsets[2];
};

int strobe__defs_decode(const uint8_t *buf, size_t len, const char *name, struct strobe__defs *out,
                        struct strobe_errbuf *eb);
void strobe__defs_free(struct strobe__defs *d);

struct strobe_experiment;
/* Reads and decodes the defs of process p of EXP (errors name
 * "<process dir>/defs"); free with strobe__defs_free. (experiment.c) */
int strobe__process_defs(const struct strobe_experiment *exp, uint32_t p, struct strobe__defs *d,
                         struct strobe_errbuf *eb);
/* A file of EXP as messages name it: its path from the experiment
 * directory (the path itself when it is elsewhere). (experiment.c) */
const char *strobe__shown_path(const struct strobe_experiment *exp, const char *path);

/* ---- event streams ------------------------------------------------------ */
enum strobe__raw_kind {
    STROBE__RAW_ENTER = 1,         /* region (local id) */
    STROBE__RAW_EXIT = 2,          /* region = the innermost open one */
    STROBE__RAW_INHERIT = 3,       /* region */
    STROBE__RAW_METRIC = 4,        /* id, value */
    STROBE__RAW_THREAD_BEGIN = 5,  /* tid, parent (index + 1, 0 = none) */
    STROBE__RAW_THREAD_END = 6,    /* rusage */
    STROBE__RAW_THREAD_CREATE = 7, /* id = child thread index, ticket */
    STROBE__RAW_THREAD_JOIN = 8,   /* id = joined thread index, ticket */
    STROBE__RAW_FORK = 9,          /* value = child pid */
    STROBE__RAW_TM = 10,        /* id = TM event, value = its argument, parent = culprit thread index + 1 */
    STROBE__RAW_TM_COUNTS = 11, /* a TM COUNTS record: the decoder's `counts` */
    STROBE__RAW_SYNC = 12,      /* id = op (enum strobe_sync_op), value = object address,
                                   sync_args = the op's arguments (format.h); a wait's
                                   frames in the decoder's frames[0..nframes); ticket */
    STROBE__RAW_ALLOC = 13,     /* id = op (enum strobe_alloc_op), parent = call, value = size, address */
    STROBE__RAW_SAMPLE = 14,    /* parent = weight, value = periods missed before it, id = flags,
                                   the decoder's frames[0..nframes) */
    STROBE__RAW_MPI = 15,       /* mpi */
};

/* The payload of a TM COUNTS record (format.h, STROBE_TM_COUNTS). */
struct strobe__tm_counts {
    uint64_t thread; /* t<N> of the process that ran the transactions */
    uint64_t site;   /* run-time address of the atomic block's call */
    uint64_t transactions, rollbacks, cancels;
    uint64_t serialized[STROBE_TM_NSERIAL];
    uint64_t aborts[STROBE_TM_NCAUSES]; /* further causes are not kept */
};

struct strobe__raw_event {
    int kind;
    uint64_t ticks;
    uint64_t offset;
    uint64_t region; /* local region id */
    uint64_t id;
    int64_t value;
    uint64_t tid, parent;
    struct strobe_rusage rusage;
    uint64_t sync_args[5];
    uint64_t ticket; /* SYNC, THREAD_CREATE, THREAD_JOIN: ordering ticket, 0 = none (format.h) */
    uint32_t depth; /* open regions after the event */
    uint64_t address; /* ALLOC */
    uint32_t nframes; /* SAMPLE, SYNC waits: the decoder's frames[0..nframes) */
    struct strobe_mpi_args mpi;
    bool synthetic; /* an ENTER of a frame open when the chunks read begin (a ring's
                       kept window, a chunk selected alone) */
};

struct strobe__stream_decoder {
    const uint8_t *buf;
    size_t len;
    const char *name;
    struct strobe_file_header hdr;
    size_t pos;
    uint64_t ticks;
    uint64_t last_region;
    bool have_last;
    uint64_t *stack; /* open local region ids */
    size_t depth, cap;
    /* chunked streams (STROBE_STREAM_CHUNKED or _RING): every chunk begins
     * with a CHUNK record. Outside a ring, where the next one must be, and
     * the first chunk read when it is not chunk 0 (strobe__stream_chunks:
     * its open frames become synthetic ENTERs), else SIZE_MAX; after a
     * strobe__stream_seek the frames of CHUNK records are not compared */
    bool chunked, seeked;
    size_t next_chunk, first_chunk;
    /* ring streams (STROBE_STREAM_RING): the chunks' offsets in sequence
     * order, the one being read, the first one's CHUNK ticks (where the
     * kept window begins), the open frames it lists (region, entry ticks)
     * still to be returned as synthetic ENTERs */
    bool ring;
    size_t *order, norder, ring_i;
    uint64_t ring_first_seq, ring_first_ticks;
    uint64_t *pending;
    size_t npending, ipending;
    /* the last COUNTS record, valid after a STROBE__RAW_TM_COUNTS event
     * until the next call (kept here, not in every event) */
    struct strobe__tm_counts counts;
    /* the frames of the last SAMPLE or SYNC record (innermost first), likewise */
    uint64_t frames[STROBE_SAMPLE_MAX_FRAMES];
};

/* Checks the header and positions the decoder on the first record. The
 * decoder keeps pointers to buf and name. */
int strobe__stream_begin(struct strobe__stream_decoder *d, const uint8_t *buf, size_t len, const char *name,
                         struct strobe_errbuf *eb);
/* The chunks a chunked stream has (a ring's non-empty ones; outside a
 * ring, those before the first empty one), 0 for a stream that is not
 * chunked. */
uint64_t strobe__stream_nchunks(const struct strobe__stream_decoder *d);
/* Right after strobe__stream_begin: decodes only chunks [first, first +
 * count) in sequence order (the file's order outside a ring), starting at
 * chunk `first` without reading the ones before: the frames its CHUNK
 * record lists open come first, as synthetic ENTERs at their entry times.
 * A first beyond the last chunk leaves nothing to decode. -ENOTSUP with a
 * message when the stream is not chunked (written by an older strobe). */
int strobe__stream_chunks(struct strobe__stream_decoder *d, uint64_t first, uint64_t count,
                          struct strobe_errbuf *eb);
/* 1 = *ev filled, 0 = end of data, < 0 = error. */
int strobe__stream_decode(struct strobe__stream_decoder *d, struct strobe__raw_event *ev,
                          struct strobe_errbuf *eb);
/* Continues decoding at a record boundary `offset` (a THREAD_SUMMARY's
 * tail offset) with an empty stack; times from there on are meaningless. */
int strobe__stream_seek(struct strobe__stream_decoder *d, uint64_t offset, struct strobe_errbuf *eb);
void strobe__stream_end(struct strobe__stream_decoder *d);

/* ---- profile files ------------------------------------------------------ */
struct strobe__prof_view {
    struct strobe_prof_header hdr;
    const uint8_t *slots; /* hdr.slot_count slots of 64 bytes */
};

/* Validates header and every slot: tags, parent links pointing backwards to
 * node slots, metric chains to node slots. */
int strobe__prof_check(const uint8_t *buf, size_t len, const char *name, struct strobe__prof_view *out,
                       struct strobe_errbuf *eb);

/* ---- meta ------------------------------------------------------------- */
/* Parses `key: value` lines; appends to keys/values (malloc'd). */
int strobe__meta_parse(const char *text, size_t len, const char *name, char ***keys, char ***values,
                       size_t *n, struct strobe_errbuf *eb);

#endif
