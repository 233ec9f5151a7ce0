/* SPDX-License-Identifier: MIT */
/*
 * The task graph of an experiment (`strobe taskgraph`, `strobe report
 * --taskgraph`; docs/taskgraph.md) and the analyses built on it, after
 * Contech's middle layer: the event streams of all threads of a process
 * are merged by the tickets of their synchronization records (format.h,
 * STROBE_EXT_SYNC, THREAD_CREATE/JOIN) into tasks, a thread's work between
 * two synchronization events, and edges between them: program order,
 * create -> the child's first task, the child's last task -> join, unlock
 * -> the next lock of the same object, every barrier arrival -> every
 * other thread's departure of the episode, signal -> the woken wait.
 *
 * The builder streams: tasks are handed to a sink as they end and edges as
 * they appear (a task's incoming edges all appear when it starts, since
 * the tickets order every synchronization event after the ones it depends
 * on), and the analyses are kept incrementally, so memory is bounded by
 * the live tasks (one per thread, the last release of each object, the
 * arrivals of the open barrier episodes) and the critical path found so
 * far, not by the length of the trace:
 *   - critical path: a longest-path DP over the topologically ordered
 *     stream, each task weighted by its duration (the waits between tasks
 *     are not work); each finished task keeps a reference-counted link to
 *     its longest predecessor, so only the chains still reachable live,
 *     and the prefix all of them share is retired into the result as the
 *     chains grow;
 *   - parallelism: total work / span, and the busy threads per time bin;
 *   - locks: per object and acquiring call path (the regions open at the
 *     acquisition), waits, holds and how many of its critical sections lie
 *     on the critical path;
 *   - barriers: per episode, the last arriver and the wait it caused.
 * When a thread has a block stream (analysis/blocks.h), its blocks and
 * memory accesses are split between its tasks at the MARK records that
 * carry the tickets of its synchronization records, and with memory
 * accesses two more analyses run on them (memory: the addresses written
 * and the lines recently written, like a shadow memory):
 *   - sharing: per thread pair, bytes one wrote and the other read later;
 *   - false sharing: 64-byte lines written by two threads at different
 *     addresses in tasks that overlap in time, with both source lines.
 *
 * Processes are built one after the other (tickets order the events of
 * one process). A process whose records carry no tickets (recorded
 * without task-graph recording, STROBE_LOCKS=all) is merged by time
 * instead, from the waits that were recorded: an approximation, flagged
 * in the result (strobe_tg_process.ticketed).
 */
#ifndef STROBE_ANALYSIS_TASKGRAPH_H
#define STROBE_ANALYSIS_TASKGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/experiment.h"

enum strobe_tg_edge_kind {
    STROBE_TG_PROGRAM = 0, /* the previous task of the same thread */
    STROBE_TG_CREATE = 1,  /* the creator's task ending at pthread_create -> the child's first */
    STROBE_TG_JOIN = 2,    /* the child's last task -> the joiner's task after the join */
    STROBE_TG_LOCK = 3,    /* the task ending at a release -> the one after the next acquisition */
    STROBE_TG_BARRIER = 4, /* a task ending at a barrier arrival -> another thread's task after it */
    STROBE_TG_COND = 5,    /* the task ending at a signal/broadcast -> the woken waiter's next task */
    STROBE_TG_FORK = 6,    /* the task ending at a team's fork (OpenMP parallel) -> each team
                              thread's task after its begin */
    STROBE_TG_NKINDS = 7,
};

/* "program", "create", "join", "lock", "barrier", "cond", "fork". Inline: the
 * report names the kinds without linking the analysis. */
static inline const char *strobe_tg_edge_kind_name(uint32_t kind)
{
    static const char *const names[] = {"program", "create", "join", "lock", "barrier", "cond", "fork"};
    return kind < STROBE_TG_NKINDS ? names[kind] : "?";
}

/* One task, as handed to the sink when it ends. */
struct strobe_tg_task {
    uint64_t id;      /* unique in the experiment, in order of start */
    uint32_t process; /* index into experiment.processes */
    uint32_t thread;  /* global thread index */
    uint64_t start_ns, end_ns;
    uint32_t region; /* global region id open at its start (else the first one it
                        entered), STROBE_NONE: none */
    /* from the thread's block stream (`strobe cc --trace=bb[,mem]`; all 0
     * without one, see strobe_tg_process.blocks) */
    uint64_t blocks;        /* segments executed */
    uint64_t reads, writes; /* memory accesses */
    uint64_t read_bytes, write_bytes;
    uint64_t lines; /* distinct 64-byte cache lines touched */
};

struct strobe_tg_edge {
    uint64_t from, to; /* task ids */
    uint32_t kind;     /* enum strobe_tg_edge_kind */
    /* where it is drawn: the end of `from`, the start of `to` */
    uint32_t from_thread, to_thread; /* global thread indices */
    uint64_t from_ns, to_ns;
};

/* Optional consumer of the graph itself (exports). A callback returning
 * non-zero stops the build with that code. */
struct strobe_tg_sink {
    void *arg;
    int (*task)(void *arg, const struct strobe_tg_task *t);
    int (*edge)(void *arg, const struct strobe_tg_edge *e);
};

/* A task on the critical path. */
struct strobe_tg_step {
    uint64_t id;
    uint32_t thread, region;
    uint64_t start_ns, end_ns;
    uint32_t via; /* the edge kind that leads to it on the path (PROGRAM for the first) */
};

/* Critical-path time of one region. */
struct strobe_tg_region_time {
    uint32_t region; /* STROBE_NONE: outside every measured region */
    uint64_t ns, tasks;
};

#define STROBE_TG_BINS 100
/* Critical-path tasks kept in the model (the rest are counted). */
#define STROBE_TG_PATH_KEEP 10000
#define STROBE_TG_PATH_KEEP_TEXT "10000"

struct strobe_tg_process {
    uint32_t process;
    bool ticketed; /* merged by tickets (else by time: approximate) */
    bool blocks;   /* some thread has a block stream: tasks count blocks and accesses */
    uint64_t block_count, reads, writes, read_bytes, write_bytes; /* over its tasks */
    uint64_t tasks;
    uint64_t edges[STROBE_TG_NKINDS];
    uint64_t work_ns;            /* sum of the tasks' durations */
    uint64_t span_ns;            /* the critical path's length */
    uint64_t begin_ns, end_ns;   /* first task start, last task end */
    struct strobe_tg_step *path; /* the critical path, first task first: its
                                    first STROBE_TG_PATH_KEEP tasks */
    size_t npath;
    uint64_t path_tasks;                   /* tasks on the critical path */
    uint64_t path_blocks;                  /* its length in work: the blocks its tasks executed */
    struct strobe_tg_region_time *regions; /* its time per region, longest first */
    size_t nregions;
    /* busy thread-ns per bin of bin_ns from begin_ns: the parallelism in a
     * bin is busy[i] / bin_ns (the last bin may be shorter: last_bin_ns) */
    uint64_t bin_ns, last_bin_ns;
    uint64_t busy[STROBE_TG_BINS];
    size_t nbins;
};

/* Acquisitions of one lock object from one call path. */
struct strobe_tg_lock {
    uint32_t process;
    uint32_t kind; /* enum strobe_sync_kind (format.h) */
    uint64_t object;
    char *name;     /* symbol of a global object, NULL otherwise */
    uint32_t *path; /* global region ids, outermost first */
    uint32_t depth;
    uint64_t acquisitions, wait_ns, max_wait_ns;
    uint64_t hold_ns; /* acquisition to release (of the holds that ended) */
    uint64_t on_path; /* tasks on the critical path run while holding it (innermost) */
};

/* One barrier episode. */
struct strobe_tg_episode {
    uint32_t process;
    uint64_t object;
    char *name;                 /* symbol of a global barrier, NULL otherwise */
    uint64_t episode;           /* its n-th episode, from 1 */
    uint32_t threads;           /* arrivals */
    uint32_t last;              /* global thread index of the last arriver */
    uint64_t first_ns, last_ns; /* first and last arrival */
    uint64_t wait_ns;           /* caused by the last arriver: sum over the others of
                                   last_ns - their arrival */
    bool complete;              /* every arriver departed (not so when killed inside) */
};

/* Bytes thread `writer` wrote and thread `reader` read afterwards
 * (matched by address: the reader's first read of each write). */
struct strobe_tg_share {
    uint32_t process;
    uint32_t writer, reader; /* global thread indices */
    uint64_t bytes;
};

/* A false-sharing candidate: a 64-byte line two threads wrote at
 * different addresses in tasks that overlapped in time. */
struct strobe_tg_false_share {
    uint32_t process;
    uint64_t line;       /* its address */
    uint32_t thread[2];  /* global thread indices, thread[0] < thread[1] */
    uint64_t address[2]; /* the last such write of each */
    char *file[2];       /* and its source file ("" unknown) */
    uint32_t source_line[2];
    uint64_t conflicts; /* writes that met an overlapping write of the other */
};

struct strobe_taskgraph {
    struct strobe_tg_process *processes; /* the processes with tasks */
    size_t nprocesses;
    struct strobe_tg_lock *locks; /* by total wait, longest first */
    size_t nlocks;
    struct strobe_tg_episode *episodes; /* by wait caused, longest first */
    size_t nepisodes;
    struct strobe_tg_share *shares; /* by bytes, most first */
    size_t nshares;
    struct strobe_tg_false_share *false_shares; /* by conflicts, most first */
    size_t nfalse_shares;
    bool has_blocks;                         /* some process had block streams with memory accesses */
    uint64_t events;                         /* records read */
    uint64_t tasks, edges[STROBE_TG_NKINDS]; /* over all processes */
    size_t peak_live;                        /* most task nodes alive at once (memory bound) */
};

/* Builds the graph of every process of EXP with an event stream, handing
 * tasks and edges to SINK (NULL: none) as they are found. Returns 0 and
 * *out (free with strobe_taskgraph_free) or a negative code with a
 * one-line message in eb (a damaged stream names its file and offset). */
int strobe_taskgraph_build(const struct strobe_experiment *exp, const struct strobe_tg_sink *sink,
                           struct strobe_taskgraph **out, struct strobe_errbuf *eb);
void strobe_taskgraph_free(struct strobe_taskgraph *g);

/* 1 when some process of EXP was recorded with task-graph recording (its
 * synchronization records carry tickets), 0 when none was, < 0 on a
 * damaged stream (message in eb). Reads each process's streams only up
 * to their first synchronization record. */
int strobe_taskgraph_recorded(const struct strobe_experiment *exp, struct strobe_errbuf *eb);

#endif
