/* SPDX-License-Identifier: MIT */
/*
 * The one reader and in-memory model of an experiment directory. Every
 * report and exporter works from this model: definitions, threads and
 * call-path profiles are loaded in memory; events are streamed per thread
 * through an iterator so traces larger than memory can be processed.
 *
 * Identifiers in the model are global to the experiment: region and metric
 * ids of different processes (fork/exec) are unified by identity (name,
 * file, line / name, unit), threads of all processes are numbered 0..n-1.
 * Processes with an MPI rank come first, by rank, then the others by start
 * time; threads follow the order of their processes.
 * Times are nanoseconds since the experiment's earliest process start.
 *
 * Errors: functions return 0 or a negative strobe/errno code and, on
 * failure, write a one-line message naming the file and byte offset into
 * the caller's struct strobe_errbuf.
 */
#ifndef STROBE_ANALYSIS_EXPERIMENT_H
#define STROBE_ANALYSIS_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strobe_errbuf {
    char msg[512];
};

/* Formats into eb->msg (printf-style) and returns code; for one-liners like
 * `return strobe__error(eb, STROBE_ERR_TRUNCATED, "%s: offset %zu: ...", ...)`. */
int strobe__error(struct strobe_errbuf *eb, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define STROBE_NONE UINT32_MAX

struct strobe_region_def {
    char *name;      /* resolved function name or annotation name; never NULL */
    char *file;      /* source file or "" */
    unsigned line;   /* 0 when unknown */
    char *module;    /* shared object / executable path or "" */
    uint64_t address;/* function regions: address in the module (pre-bias) */
    int kind;        /* enum strobe_region_kind */
};

struct strobe_metric_def {
    char *name;
    char *unit;
};

struct strobe_rusage {
    uint64_t utime_us, stime_us, maxrss_kb, minflt, majflt, nvcsw, nivcsw;
};

/* A frame still open when a thread's measurement ended (it is charged the
 * time up to the thread's end_ns, in both profile sources). */
struct strobe_open_frame {
    uint32_t region;   /* global region id */
    uint32_t slot;     /* its node's slot in t<N>.prof, STROBE_NONE when not there */
    uint64_t start_ns; /* entry */
};

struct strobe_thread_info {
    uint32_t process;       /* index into experiment.processes */
    uint32_t index;         /* thread index within its process (t<N>) */
    uint32_t parent;        /* global thread index of the creator or STROBE_NONE */
    uint64_t tid;           /* kernel thread id */
    char *stream_path;      /* t<N>.evt or NULL when tracing was off */
    char *profile_path;     /* t<N>.prof or NULL when profiling was off */
    uint64_t begin_ns, end_ns; /* first/last event (end = last seen if killed) */
    uint64_t events;        /* records in the stream */
    uint64_t bytes;         /* bytes of encoded records */
    uint64_t dropped;       /* events lost to the size limit */
    uint64_t limit_bytes;   /* the stream's size limit (STROBE_TRACE_LIMIT), 0 = none */
    bool ended;             /* the thread ended before its process (THREAD_END) */
    bool has_rusage;
    struct strobe_rusage rusage;
    /* summarized: the runtime wrote how the thread ended (format.h,
     * THREAD_SUMMARY), so its counts and end come from defs without
     * decoding the stream, and `open` lists the frames open at its end
     * (outermost first). Not summarized: killed (or exec'd) before it
     * could; the stream was decoded and end_ns is its last event. */
    bool summarized;
    bool at_exit; /* still running when its process ended */
    /* flight recorder (`strobe run --max-size`): the stream is a ring that
     * keeps its newest events from window_ns on (origin applied); the
     * overwritten records are not in `events` */
    bool ring;
    uint64_t window_ns;
    uint64_t overwritten;       /* records; known when summarized */
    uint64_t overwritten_chunks; /* chunks the window's first one follows */
    struct strobe_open_frame *open;
    size_t nopen;
};

/* A change of a process's recording state (format.h, STROBE_DEF_RECORDING):
 * paused from a stop to the next resume (or the end). */
struct strobe_recording_change {
    uint64_t ticks;
    uint64_t ns; /* the same time as strobe_ticks_to_ns() gives it */
    bool resume; /* false: recording stops here */
    int cause;   /* enum strobe_recording_cause */
};

/* Allocation tracking of one process (`strobe run --malloc`, format.h
 * STROBE_DEF_MALLOC). */
struct strobe_malloc_info {
    bool on;           /* the process tracked allocations */
    uint64_t large;    /* blocks from this size on have ALLOC events */
    bool summarized;   /* it exited normally: the fields below are known */
    uint64_t peak_bytes; /* largest sum of live blocks */
    uint64_t peak_ns;    /* when (experiment ns; 0 and peak_bytes 0: nothing allocated) */
    uint64_t live_bytes, live_blocks; /* at exit */
    uint64_t untracked;  /* blocks the runtime had no room to track */
};

/* Blocks live at exit allocated on one call path of one thread. */
struct strobe_malloc_live {
    uint32_t thread; /* global thread index */
    uint32_t slot;   /* the call path's slot in the thread's t<N>.prof, STROBE_NONE = unknown */
    uint64_t blocks, bytes;
};

/* An MPI communicator (format.h, STROBE_DEF_MPI_COMM), unified over the
 * processes by its id, which is global to the job. */
struct strobe_mpi_comm {
    uint64_t id;
    uint32_t size;     /* ranks in its (local) group */
    bool inter;        /* an intercommunicator: members are its local group */
    uint32_t *members; /* world ranks in group order; nmembers < size when the
                          list was cut */
    uint32_t nmembers;
};

/* The parameters of an MPI record (format.h, STROBE_EXT_MPI). */
struct strobe_mpi_args {
    uint32_t op;      /* enum strobe_mpi_op */
    uint32_t coll;    /* COLL_END: enum strobe_mpi_coll */
    uint64_t request; /* ISEND, ISEND_COMPLETE, IRECV_REQUEST, IRECV */
    uint32_t peer;    /* world rank: SEND/ISEND destination, RECV/IRECV source,
                         COLL_END root (STROBE_NONE: none), INIT own rank */
    int64_t tag;
    uint64_t comm;     /* communicator id */
    uint64_t bytes;    /* message bytes; COLL_END: sent; INIT: world size */
    uint64_t received; /* COLL_END: bytes received */
};

struct strobe_process_info {
    char *dir;              /* proc-<pid>[-<n>] */
    uint64_t pid, ppid;
    char *exe;
    uint32_t parent;        /* process index of the fork parent or STROBE_NONE */
    int clock_kind;         /* enum strobe_clock_kind */
    uint64_t start_realtime_ns;
    /* ns = base_ns + (ticks - base_ticks) * ns_per_tick, minus the
     * experiment's origin; see strobe_ticks_to_ns(). */
    uint64_t base_ticks;
    double base_ns;
    double ns_per_tick;
    double overhead_ns_per_event; /* self-measured by the runtime, 0 if unknown */
    /* How its clock was put on the experiment's timebase (align.h): the
     * line above already includes it. align_offset_ns is what was added
     * at aligned time align_at_ns (MPI: where the first offset was
     * measured; realtime: everywhere), align_drift the change of that per
     * ns (ns/ns), align_bound_ns half the longest round trip of the
     * offsets used (MPI; 0 otherwise), align_source the process whose
     * offsets or realtime anchor were used (STROBE_NONE: none). */
    int align; /* enum strobe_align_method */
    uint32_t align_domain; /* strobe_align_domain(): the input of `strobe merge`, 0 = not merged */
    uint32_t align_source;
    double align_offset_ns, align_at_ns, align_drift;
    uint64_t align_bound_ns;
    bool exited;            /* PROCESS_END seen */
    int64_t exit_status;
    /* MPI rank from the launcher's environment (format.h, MPI_RANK); a fork
     * child shares its parent's. Several processes share a rank when the
     * rank's process forks or exec()s measured programs. */
    bool has_rank;
    uint32_t rank;          /* meaningful when has_rank */
    uint32_t world_size;    /* 0 when unknown */
    /* local id -> global id maps (STROBE_NONE for ids never defined) */
    uint32_t *region_map; size_t region_map_len;
    uint32_t *metric_map; size_t metric_map_len;
    struct strobe_malloc_info malloc;
    /* recording paused and resumed (pause.h), in time order: stop, resume,
     * stop, ...; none when it never paused */
    struct strobe_recording_change *recording;
    size_t nrecording;
};

/* Serialization causes (enum strobe_tm_serial_cause 1..3) and abort causes
 * (enum strobe_tm_abort_cause 1..6) the reader knows; arrays below are
 * indexed by cause - 1. */
#define STROBE_TM_NSERIAL 3
#define STROBE_TM_NCAUSES 8

/* What one thread did in one atomic block (the report's cell, tm.h):
 * counts, aborts by cause and, from the event log, times. */
struct strobe_tm_cell {
    uint64_t transactions; /* completed (committed or cancelled) */
    uint64_t rollbacks;
    uint64_t cancels;
    uint64_t serialized[STROBE_TM_NSERIAL];
    uint64_t aborts[STROBE_TM_NCAUSES];
    uint64_t committed_ns; /* time in attempts that committed */
    uint64_t aborted_ns;   /* time in attempts that aborted or were cancelled */
    uint64_t cancelled_ns; /* the part of aborted_ns in cancelled attempts */
};

/* One TM COUNTS record (src/common/format.h, STROBE_TM_COUNTS): what one
 * thread did in one atomic block, as the STM counted it; written at process
 * exit at monitoring level "counters" and up. Abort causes the reader does
 * not know are dropped; the times are 0 (the record has none). */
struct strobe_tm_counts {
    uint32_t thread; /* global thread index */
    uint32_t block;  /* global region id of the atomic block (kind STROBE_REGION_TM_ATOMIC) */
    struct strobe_tm_cell counts;
};

struct strobe_experiment {
    char *dir;
    /* meta file as key/value pairs in file order (command, host, ...) */
    size_t nmeta;
    char **meta_keys, **meta_values;
    struct strobe_process_info *processes; size_t nprocesses;
    struct strobe_thread_info *threads;    size_t nthreads;
    struct strobe_region_def *regions;     size_t nregions;
    struct strobe_metric_def *metrics;     size_t nmetrics;
    double origin_ns;       /* subtracted so the earliest event is near 0 */
    uint64_t duration_ns;   /* last end_ns over all threads */
    uint64_t total_events, total_bytes, total_dropped;
    /* Transactional memory (docs/tm.md, "Monitoring"). tm: the run used
     * the monitored STM, by meta (`tm: 1`, written by `strobe run --tm`)
     * or, for experiments without that key, because TM records exist.
     * tm_level: enum strobe_tm_monitor it recorded at (meta `tm_monitor`;
     * else inferred: LOGGING records -> events, atomic-block regions ->
     * stats, COUNTS records -> counters). Meaningless when !tm. */
    bool tm;
    bool tm_level_inferred; /* no usable `tm_monitor` in meta */
    int tm_level;
    bool tm_logging; /* some thread wrote a TM LOGGING record (known only when the
                        streams were decoded: see tm_level for level events) */
    struct strobe_tm_counts *tm_counts;
    size_t ntm_counts; /* in stream order */
    /* blocks live at exit per allocating call path, every process's */
    struct strobe_malloc_live *malloc_live;
    size_t nmalloc_live;
    /* the process whose clock is the timebase (align.h) */
    uint32_t align_reference;
    /* MPI communicators defined by the processes (`--mpi`), by id */
    struct strobe_mpi_comm *mpi_comms;
    size_t nmpi_comms;
    /* The view set by strobe_experiment_select() (select.h), applied by the
     * event iterator; NULL = every thread and event. */
    struct strobe_selection *selection;
    /* Chunks of every event stream the iterator reads, set by
     * strobe_experiment_chunks(): [chunk_first, chunk_first + chunk_count)
     * of each; chunk_count 0 = the whole streams. */
    uint64_t chunk_first, chunk_count;
};

/* Opens and validates DIR: meta, defs, stream headers, profile headers;
 * scans every stream once to fill per-thread counts and begin/end; resolves
 * function addresses to names and file:line with libdw. progress, when not
 * NULL, is called with (bytes done, bytes total) while scanning.
 * Returns 0 and *out (free with strobe_experiment_close) or an error. */
int strobe_experiment_open(const char *dir, struct strobe_experiment **out,
                           void (*progress)(uint64_t done, uint64_t total, void *arg),
                           void *progress_arg, struct strobe_errbuf *eb);
void strobe_experiment_close(struct strobe_experiment *exp);

const char *strobe_experiment_meta(const struct strobe_experiment *exp, const char *key);

/* Converts process-local ticks to experiment ns. */
uint64_t strobe_ticks_to_ns(const struct strobe_experiment *exp, uint32_t process, uint64_t ticks);

/* Makes the event iterator read only chunks [first, first + count) of
 * every stream (docs/cli.md, `--chunk`): each is decoded without the
 * chunks before it, the frames open at its start come first as synthetic
 * ENTERs at their entry times, those open at its end are closed by
 * synthetic EXITs at its last event. *nchunks gets the chunks of the
 * longest stream. Returns 0, or -ENOTSUP naming a stream written without
 * chunks (an older strobe), or a reader error; message in eb. */
int strobe_experiment_chunks(struct strobe_experiment *exp, uint64_t first, uint64_t count, uint64_t *nchunks,
                             struct strobe_errbuf *eb);

/* ---- Event streams --------------------------------------------------- */
enum strobe_event_type {
    STROBE_EVENT_ENTER = 1,  /* region */
    STROBE_EVENT_EXIT = 2,   /* region (the one being left) */
    STROBE_EVENT_METRIC = 3, /* metric, value */
    STROBE_EVENT_THREAD_BEGIN = 4,
    STROBE_EVENT_THREAD_END = 5,
    STROBE_EVENT_THREAD_CREATE = 6, /* other_thread = child */
    STROBE_EVENT_THREAD_JOIN = 7,   /* other_thread = joined */
    STROBE_EVENT_FORK = 8,          /* value = child pid */
    STROBE_EVENT_INHERIT = 9,       /* region entered before fork(); not a visit */
    STROBE_EVENT_ALLOC = 11,        /* a large block (`--malloc`): alloc_op and alloc_call
                                       (format.h), address, value = size in bytes */
    STROBE_EVENT_MPI = 12,          /* an MPI record (`--mpi`): mpi */
    STROBE_EVENT_TM = 10,           /* tm_event (enum strobe_tm_event), value = its argument
                                       (attempt number, cause; for LOCKED the ns since the
                                       commit was requested), other_thread = culprit of an
                                       ABORT (STROBE_NONE: unknown) */
};

struct strobe_event {
    int type;
    uint64_t time_ns;
    uint32_t region;       /* global region id (ENTER/EXIT/INHERIT) */
    uint32_t metric;       /* global metric id (METRIC) */
    uint32_t other_thread; /* global thread index (CREATE/JOIN) or STROBE_NONE */
    uint32_t depth;        /* nesting depth after the event */
    uint32_t tm_event;     /* TM */
    int64_t value;
    uint64_t offset;       /* byte offset of the record in the stream file */
    uint32_t alloc_op, alloc_call; /* ALLOC: enum strobe_alloc_op, strobe_alloc_call */
    uint64_t address;      /* ALLOC: the block */
    struct strobe_mpi_args mpi; /* MPI */
    bool synthetic;        /* added by the reader: an EXIT at the end for a region left
                              open, an ENTER of a frame open where the chunks read
                              begin (not a visit), or an ENTER/INHERIT/EXIT clipping a
                              frame to the selection's time window (select.h) */
};

struct strobe_stream_iter;

int strobe_stream_open(const struct strobe_experiment *exp, uint32_t thread,
                       struct strobe_stream_iter **out, struct strobe_errbuf *eb);
/* 1 = *ev filled, 0 = end of stream, < 0 = error (message in eb). An EXIT
 * without a matching ENTER is an error. Regions still open at the end of a
 * stream are closed by synthetic EXIT events at the thread's end_ns so
 * consumers always see balanced nesting. With a selection attached
 * (select.h) only its events come out, still balanced; a thread it does
 * not select has none. */
int strobe_stream_next(struct strobe_stream_iter *it, struct strobe_event *ev,
                       struct strobe_errbuf *eb);
void strobe_stream_close(struct strobe_stream_iter *it);

/* ---- Call-path profile ------------------------------------------------
 * One call tree merged over all threads (paths identified by global region
 * ids); each node keeps per-thread statistics so reports can show the
 * metric x call path x thread cube. */
struct strobe_stats {
    uint64_t visits;
    uint64_t incl_ns;   /* sum of inclusive time */
    uint64_t excl_ns;   /* incl_ns minus children's incl_ns */
    uint64_t min_ns;    /* over completed visits; UINT64_MAX when none */
    uint64_t max_ns;
    double sumsq_ns;    /* sum of squared inclusive durations, ns^2 */
    uint64_t open_at_end; /* visits still open when measurement ended: their
                             time runs to the thread's end (in incl_ns) */
};

struct strobe_metric_stats {
    uint64_t count;
    int64_t sum, min, max;
};

struct strobe_cnode {
    uint32_t region;       /* STROBE_NONE for the root */
    uint32_t parent;       /* node index, STROBE_NONE for the root */
    uint32_t first_child;  /* node index or STROBE_NONE */
    uint32_t next_sibling;
    uint32_t depth;        /* root = 0 */
    struct strobe_stats total;           /* summed over threads */
    struct strobe_stats *per_thread;     /* [exp->nthreads] */
    struct strobe_metric_stats *metrics; /* [exp->nmetrics], summed over threads;
                                            NULL when the node has none */
    struct strobe_metric_stats *thread_metrics; /* [nthreads * nmetrics] or NULL */
};

enum strobe_profile_source {
    STROBE_PROFILE_AUTO = 0,  /* per thread: its profile file when it has one and
                                 a summary (not killed), else its trace if any */
    STROBE_PROFILE_FILES = 1, /* t<N>.prof only */
    STROBE_PROFILE_TRACE = 2, /* rebuilt from the event streams */
    STROBE_PROFILE_MIXED = 3, /* (result of AUTO only) some threads each way */
};

struct strobe_profile {
    struct strobe_cnode *nodes; size_t nnodes; /* node 0 is the root */
    int source;                                /* what it was built from */
    size_t traced;                             /* threads rebuilt from their trace */
    /* Built from profile files of which some belong to a killed thread:
     * the time of its frames open at the kill is missing (only the event
     * stream has it). */
    bool incomplete;
};

int strobe_profile_build(const struct strobe_experiment *exp, int source,
                         struct strobe_profile **out, struct strobe_errbuf *eb);
void strobe_profile_free(struct strobe_profile *p);

#endif
