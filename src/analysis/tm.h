/* SPDX-License-Identifier: MIT */
/*
 * The transactional-memory view of an experiment recorded with
 * `strobe run --tm` (docs/tm.md): per atomic block and thread, the counts
 * of the Blue Gene/Q-style statistics; from the TMbox-style event log, the
 * time split between committed and aborted attempts, the per-thread time in
 * each TMbox state and who aborted whom.
 *
 * Counts (transactions, rollbacks, serializations, cancels, abort causes)
 * come from the COUNTS records the STM writes at exit (levels "counters"
 * and up, exp->tm_counts). A block and thread without such a record (an
 * experiment of an older strobe, a killed process) takes them from the
 * call-path profile instead (visits of the atomic-block region and the
 * tm.* metrics on it, levels "stats" and "events"; no abort causes there);
 * the two are never added. Times, states and culprits need the event log
 * (level "events", has_events); without COUNTS, abort causes come from it
 * too.
 */
#ifndef STROBE_ANALYSIS_TM_H
#define STROBE_ANALYSIS_TM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "analysis/experiment.h"

/* TMbox states (seed 001, Figure 5). */
enum strobe_tm_state {
    STROBE_TM_STATE_COMPUTE = 0,       /* start -> commit request (or end) of committed attempts */
    STROBE_TM_STATE_WASTED = 1,        /* start -> ABORT or outermost CANCEL */
    STROBE_TM_STATE_TRY_LOCK = 2,      /* commit request -> LOCKED */
    STROBE_TM_STATE_COMMIT_LOCKED = 3, /* LOCKED -> end of the block */
    STROBE_TM_STATE_ABORT = 4,         /* ABORT -> next START: rollback and back-off */
    STROBE_TM_STATE_COUNT = 5,
};

/* One atomic block on one thread: struct strobe_tm_cell (experiment.h).
 * Counts and aborts by cause come from the COUNTS records, else counts from
 * the profile and aborts by cause from the event log; times from the event
 * log. */

struct strobe_tm_model {
    size_t nblocks;          /* atomic blocks, in region id order */
    uint32_t *blocks;        /* global region ids */
    size_t nthreads;         /* = exp->nthreads */
    struct strobe_tm_cell *cells; /* [block * nthreads + thread] */
    bool has_events;         /* some thread logged TM events */
    bool has_counts;         /* the experiment has COUNTS records */
    bool has_aborts;         /* abort causes are known: has_counts || has_events */
    uint64_t *states;        /* [thread * STROBE_TM_STATE_COUNT + state], ns */
    uint64_t *aborted_by;    /* [culprit * nthreads + victim]; culprit row
                                nthreads = unknown culprit */
};

/* The TMbox reading of one thread's event stream, shared by the model and
 * the Paraver export: every callback may be NULL; a non-zero return stops
 * the walk with that value. `block` is the global region id of the atomic
 * block. Times are experiment ns. */
struct strobe_tm_visitor {
    void *arg;
    /* the thread logs TM events (monitoring level "events") */
    int (*logging)(void *arg);
    /* entering (region) or leaving (STROBE_NONE) an atomic block */
    int (*block)(void *arg, uint32_t region, uint64_t when);
    /* a TMbox state interval, enum strobe_tm_state, begin < end */
    int (*state)(void *arg, uint32_t block, int state, uint64_t begin, uint64_t end);
    /* an attempt ended: outcome 1 commit, 2 abort, 3 cancel */
    int (*attempt)(void *arg, uint32_t block, int outcome, uint64_t start, uint64_t end);
    /* an abort: cause (enum strobe_tm_abort_cause), culprit thread or
     * STROBE_NONE */
    int (*abort)(void *arg, uint32_t block, uint64_t when, int cause, uint32_t culprit);
};
int strobe_tm_walk_thread(const struct strobe_experiment *exp, uint32_t thread, const struct strobe_tm_visitor *v,
                          struct strobe_errbuf *eb);

/* Builds the model from EXP and its profile PROF (the event streams are
 * read when any thread has a trace). Returns 0 and *out (free with
 * strobe_tm_model_free), -ENOMEM, or a reader error (message in eb). An
 * experiment without atomic blocks gives nblocks == 0. */
int strobe_tm_model_build(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                          struct strobe_tm_model **out, struct strobe_errbuf *eb);
void strobe_tm_model_free(struct strobe_tm_model *m);

/* The helpers below are inline so that the report (which reads models
 * only, src/report/CMakeLists.txt) needs no code from the reader. */

/* Adds C into *sum. */
static inline void strobe_tm_cell_add(struct strobe_tm_cell *sum, const struct strobe_tm_cell *c)
{
    sum->transactions += c->transactions;
    sum->rollbacks += c->rollbacks;
    sum->cancels += c->cancels;
    sum->committed_ns += c->committed_ns;
    sum->aborted_ns += c->aborted_ns;
    sum->cancelled_ns += c->cancelled_ns;
    for (int k = 0; k < STROBE_TM_NSERIAL; k++)
        sum->serialized[k] += c->serialized[k];
    for (int k = 0; k < STROBE_TM_NCAUSES; k++)
        sum->aborts[k] += c->aborts[k];
}

/* Sum of one block's cells over all threads into *sum. */
static inline void strobe_tm_block_total(const struct strobe_tm_model *m, size_t block, struct strobe_tm_cell *sum)
{
    memset(sum, 0, sizeof *sum);
    for (size_t t = 0; t < m->nthreads; t++)
        strobe_tm_cell_add(sum, &m->cells[block * m->nthreads + t]);
}

/* "off", "counters", "stats", "events" (enum strobe_tm_monitor). */
static inline const char *strobe_tm_level_name(int level)
{
    static const char *const names[] = {"off", "counters", "stats", "events"};
    return level >= 0 && level < 4 ? names[level] : "?";
}

/* What a monitoring level records, for the reports: one phrase that says
 * what is missing and how to get it (docs/tm.md, "Monitoring"). */
static inline const char *strobe_tm_level_recorded(int level)
{
    static const char *const what[] = {
        "nothing recorded by the STM (use --tm-monitor counters or higher)",
        "per block counts at exit; no times or culprits (use --tm-monitor events)",
        "atomic blocks in the profile, counts per call path; no times or culprits (use --tm-monitor events)",
        "every transaction attempt: counts, times, TMbox states, abort causes and culprits"};
    return level >= 0 && level < 4 ? what[level] : "unknown level";
}

/* "Compute", "Compute_Wasted", "Try_Lock", "Commit_Locked", "Abort". */
static inline const char *strobe_tm_state_name(int state)
{
    static const char *const names[] = {"Compute", "Compute_Wasted", "Try_Lock", "Commit_Locked", "Abort"};
    return state >= 0 && state < STROBE_TM_STATE_COUNT ? names[state] : "?";
}

/* "irrevocable", "max_rollbacks", "other" (index = cause - 1). */
static inline const char *strobe_tm_serial_name(int index)
{
    static const char *const names[] = {"irrevocable", "max_rollbacks", "other"};
    return index >= 0 && index < STROBE_TM_NSERIAL ? names[index] : "?";
}

/* "read_conflict", "write_conflict", "validation", "explicit",
 * "irrevocable", "other", and for hardware transactions "hw_conflict",
 * "hw_capacity" (index = cause - 1). */
static inline const char *strobe_tm_abort_name(int index)
{
    static const char *const names[] = {"read_conflict", "write_conflict", "validation",  "explicit",
                                        "irrevocable",   "other",          "hw_conflict", "hw_capacity"};
    return index >= 0 && index < STROBE_TM_NCAUSES ? names[index] : "?";
}

#endif
