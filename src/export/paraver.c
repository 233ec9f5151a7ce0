/* SPDX-License-Identifier: MIT */
/*
 * Paraver exporter for transactional-memory runs (TMbox's view, seed 001):
 * OUT.prv (trace), OUT.pcf (state and event names, colours), OUT.row
 * (resource and thread names).
 *
 * Every thread is one Paraver thread (application 1, task = process,
 * thread = index in the process) on a CPU of its own. Its states over time:
 *   Running        outside transactions, from its first to its last event
 *   Compute        committed attempt, until commit is requested
 *   Compute_Wasted attempt that aborted or was cancelled
 *   Try_Lock       commit requested: commit time and read validation
 *   Commit_Locked  publishing the writes (locks held)
 *   Abort          rollback and back-off, until the next attempt starts
 * The states come from the TM model's walk of the stream
 * (strobe_tm_walk_thread), the same reading as `strobe report --tm`.
 * Events: the end of each attempt (commit / abort / cancel, type
 * 90000001), the abort cause (90000002) and the atomic block entered
 * (90000003, value = region id + 1; 0 when it is left). Each abort with a
 * known culprit is a communication from the culprit, at its last commit
 * (start of Commit_Locked) before the abort, to the victim at the abort:
 * TMbox's yellow lines. Records are sorted by time, as Paraver expects.
 * Only an experiment recorded at TM monitoring level "events" has these
 * events; any other is refused with one line naming the level it has.
 * With a selection (analysis/select.h) only the selected threads are
 * Paraver threads (numbered anew: CPU = rank among them, task = rank of
 * its process among the processes kept, thread = rank in that process),
 * Running is cut to the time window, and an abort arrow needs both ends.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/select.h"
#include "analysis/tm.h"
#include "common/format.h"
#include "export/export.h"
#include "export/names.h"
#include "export/output.h"
#include "strobe/strobe.h"
#include "strobe/tm.h"

/* Paraver states: 0 Idle, 1 Running, then the TMbox states of tm.h in
 * their order (Compute, Compute_Wasted, Try_Lock, Commit_Locked, Abort). */
enum { PV_RUNNING = 1, PV_COMPUTE = 2 };
enum { PV_EV_END = 90000001, PV_EV_CAUSE = 90000002, PV_EV_BLOCK = 90000003 };

struct pv_rec {
    uint64_t t;       /* begin (state), time (event), send time (communication) */
    uint64_t end;     /* state end, or receive time */
    uint32_t thread;  /* the thread, or the sender */
    uint32_t peer;    /* communication: receiver */
    uint8_t kind;     /* 1 state, 2 event, 3 communication */
    uint32_t type;    /* state value or event type */
    uint64_t value;   /* event value */
};

struct pv {
    const struct strobe_experiment *exp;
    struct pv_rec *recs;
    size_t n, cap;
    uint64_t **locked; /* per thread: LOCKED times, ascending */
    size_t *nlocked, *caplocked;
    /* per thread: Paraver CPU, task and thread number (1-based; 0 = not
     * selected); per process: threads selected in it */
    uint32_t *cpu, *task, *thr, *task_threads;
    uint32_t ncpus, ntasks;
};

/* Numbers the selected threads (see the top of the file); the model's
 * threads are in process order, so tasks are numbered in process order. */
static void pv_number(struct pv *p)
{
    const struct strobe_experiment *exp = p->exp;
    for (uint32_t t = 0; t < exp->nthreads; t++) {
        if (!strobe_thread_selected(exp, t))
            continue;
        uint32_t pr = exp->threads[t].process;
        p->ntasks += p->task_threads[pr] == 0;
        p->cpu[t] = ++p->ncpus;
        p->task[t] = p->ntasks;
        p->thr[t] = ++p->task_threads[pr];
    }
}

static int pv_push(struct pv *p, struct pv_rec r, struct strobe_errbuf *eb)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4096;
        struct pv_rec *v = realloc(p->recs, cap * sizeof *v);
        if (!v)
            return strobe__error(eb, -ENOMEM, "paraver: out of memory");
        p->recs = v;
        p->cap = cap;
    }
    p->recs[p->n++] = r;
    return 0;
}

static int pv_state(struct pv *p, uint32_t t, uint64_t b, uint64_t e, uint32_t state, struct strobe_errbuf *eb)
{
    if (e <= b)
        return 0;
    return pv_push(p, (struct pv_rec){.t = b, .end = e, .thread = t, .kind = 1, .type = state}, eb);
}

static int pv_event(struct pv *p, uint32_t t, uint64_t when, uint32_t type, uint64_t value, struct strobe_errbuf *eb)
{
    return pv_push(p, (struct pv_rec){.t = when, .thread = t, .kind = 2, .type = type, .value = value}, eb);
}

/* Pass 1: when each thread published commits (the culprits' send times):
 * the starts of its Commit_Locked states. */
struct locked_walk {
    struct pv *p;
    uint32_t thread;
    struct strobe_errbuf *eb;
};

static int note_locked(void *arg, uint32_t block, int state, uint64_t begin, uint64_t end)
{
    struct locked_walk *lw = arg;
    struct pv *p = lw->p;
    uint32_t t = lw->thread;
    (void)block;
    (void)end;
    if (state != STROBE_TM_STATE_COMMIT_LOCKED)
        return 0;
    if (p->nlocked[t] == p->caplocked[t]) {
        size_t cap = p->caplocked[t] ? p->caplocked[t] * 2 : 256;
        uint64_t *v = realloc(p->locked[t], cap * sizeof *v);
        if (!v)
            return strobe__error(lw->eb, -ENOMEM, "paraver: out of memory");
        p->locked[t] = v;
        p->caplocked[t] = cap;
    }
    p->locked[t][p->nlocked[t]++] = begin;
    return 0;
}

static int collect_locked(struct pv *p, uint32_t t, struct strobe_errbuf *eb)
{
    struct locked_walk lw = {p, t, eb};
    struct strobe_tm_visitor v = {.arg = &lw, .state = note_locked};
    return strobe_tm_walk_thread(p->exp, t, &v, eb);
}

/* The culprit's last commit at or before `when`, else `when` itself. */
static uint64_t send_time(const struct pv *p, uint32_t culprit, uint64_t when)
{
    const uint64_t *v = p->locked[culprit];
    size_t lo = 0, hi = p->nlocked[culprit];
    while (lo < hi) { /* first entry > when */
        size_t mid = (lo + hi) / 2;
        if (v[mid] <= when)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? v[lo - 1] : when;
}

/* Pass 2: one thread's states, events and incoming abort arrows. Running
 * fills the time between the TMbox states. */
struct record_walk {
    struct pv *p;
    uint32_t thread;
    uint64_t mark; /* end of the last state written */
    struct strobe_errbuf *eb;
};

/* The TMbox states of the walk are 0..4; Paraver's are 2..6. */
static int rec_state(void *arg, uint32_t block, int state, uint64_t begin, uint64_t end)
{
    struct record_walk *rw = arg;
    (void)block;
    int rc = pv_state(rw->p, rw->thread, rw->mark, begin, PV_RUNNING, rw->eb);
    if (rc == 0)
        rc = pv_state(rw->p, rw->thread, begin, end, (uint32_t)(PV_COMPUTE + state), rw->eb);
    rw->mark = end;
    return rc;
}

static int rec_block(void *arg, uint32_t region, uint64_t when)
{
    struct record_walk *rw = arg;
    return pv_event(rw->p, rw->thread, when, PV_EV_BLOCK, region == STROBE_NONE ? 0 : (uint64_t)region + 1, rw->eb);
}

static int rec_attempt(void *arg, uint32_t block, int outcome, uint64_t start, uint64_t end)
{
    struct record_walk *rw = arg;
    (void)block;
    (void)start;
    return pv_event(rw->p, rw->thread, end, PV_EV_END, (uint64_t)outcome, rw->eb);
}

static int rec_abort(void *arg, uint32_t block, uint64_t when, int cause, uint32_t culprit)
{
    struct record_walk *rw = arg;
    (void)block;
    int rc = pv_event(rw->p, rw->thread, when, PV_EV_CAUSE, (uint64_t)cause, rw->eb);
    if (rc == 0 && culprit < rw->p->exp->nthreads && strobe_thread_selected(rw->p->exp, culprit))
        rc = pv_push(rw->p,
                     (struct pv_rec){.t = send_time(rw->p, culprit, when),
                                     .end = when,
                                     .thread = culprit,
                                     .peer = rw->thread,
                                     .kind = 3},
                     rw->eb);
    return rc;
}

static int thread_records(struct pv *p, uint32_t t, struct strobe_errbuf *eb)
{
    const struct strobe_experiment *exp = p->exp;
    uint64_t from, to;
    strobe_selection_window(exp, &from, &to);
    const struct strobe_thread_info *th = &exp->threads[t];
    struct record_walk rw = {p, t, th->begin_ns > from ? th->begin_ns : from, eb};
    struct strobe_tm_visitor v = {
        .arg = &rw, .block = rec_block, .state = rec_state, .attempt = rec_attempt, .abort = rec_abort};
    int rc = strobe_tm_walk_thread(exp, t, &v, eb);
    if (rc == 0)
        rc = pv_state(p, t, rw.mark, th->end_ns < to ? th->end_ns : to, PV_RUNNING, eb);
    return rc;
}

static int rec_cmp(const void *a, const void *b)
{
    const struct pv_rec *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* "cpu:appl:task:thread" of a strobe thread. */
static void pv_where(FILE *f, const struct pv *p, uint32_t t)
{
    fprintf(f, "%" PRIu32 ":1:%" PRIu32 ":%" PRIu32, p->cpu[t], p->task[t], p->thr[t]);
}

static void write_prv(FILE *f, const struct pv *p)
{
    const struct strobe_experiment *exp = p->exp;
    time_t start = (time_t)(exp->nprocesses ? exp->processes[0].start_realtime_ns / 1000000000u : 0);
    struct tm tmv;
    gmtime_r(&start, &tmv);
    /* threads per task (process) */
    fprintf(f, "#Paraver (%02d/%02d/%04d at %02d:%02d):%" PRIu64 "_ns:1(%" PRIu32 "):1:%" PRIu32 "(",
            tmv.tm_mday, tmv.tm_mon + 1, tmv.tm_year + 1900, tmv.tm_hour, tmv.tm_min, exp->duration_ns, p->ncpus,
            p->ntasks);
    const char *sep = "";
    for (size_t pr = 0; pr < exp->nprocesses; pr++) {
        if (p->task_threads[pr] == 0)
            continue;
        fprintf(f, "%s%" PRIu32 ":1", sep, p->task_threads[pr]);
        sep = ",";
    }
    fputs(")\n", f);
    for (size_t i = 0; i < p->n; i++) {
        const struct pv_rec *r = &p->recs[i];
        if (r->kind == 1) {
            fputs("1:", f);
            pv_where(f, p, r->thread);
            fprintf(f, ":%" PRIu64 ":%" PRIu64 ":%" PRIu32 "\n", r->t, r->end, r->type);
        } else if (r->kind == 2) {
            fputs("2:", f);
            pv_where(f, p, r->thread);
            fprintf(f, ":%" PRIu64 ":%" PRIu32 ":%" PRIu64 "\n", r->t, r->type, r->value);
        } else {
            /* logical and physical send/receive times are the same */
            fputs("3:", f);
            pv_where(f, p, r->thread);
            fprintf(f, ":%" PRIu64 ":%" PRIu64 ":", r->t, r->t);
            pv_where(f, p, r->peer);
            fprintf(f, ":%" PRIu64 ":%" PRIu64 ":0:0\n", r->end, r->end);
        }
    }
}

static void write_pcf(FILE *f, const struct strobe_experiment *exp)
{
    fputs("DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n"
          "LOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\n"
          "NUM_OF_STATE_COLORS 7\nYMAX_SCALE          37\n\n\nDEFAULT_SEMANTIC\n\nTHREAD_FUNC         State As Is\n\n\n"
          "STATES\n0    Idle\n1    Running\n2    Compute\n3    Compute_Wasted\n4    Try_Lock\n"
          "5    Commit_Locked\n6    Abort\n\n\n"
          "STATES_COLOR\n0    {255,255,255}\n1    {192,192,192}\n2    {0,0,160}\n3    {120,190,255}\n"
          "4    {255,160,0}\n5    {0,140,0}\n6    {220,0,0}\n\n\n",
          f);
    fprintf(f, "EVENT_TYPE\n0    %d    TM attempt end\nVALUES\n1      commit\n2      abort\n3      cancel\n\n\n",
            PV_EV_END);
    fprintf(f, "EVENT_TYPE\n0    %d    TM abort cause\nVALUES\n", PV_EV_CAUSE);
    for (int k = 0; k < STROBE_TM_NCAUSES; k++)
        fprintf(f, "%d      %s\n", k + 1, strobe_tm_abort_name(k));
    fprintf(f, "\n\nEVENT_TYPE\n0    %d    TM atomic block\nVALUES\n0      (none)\n", PV_EV_BLOCK);
    for (size_t r = 0; r < exp->nregions; r++) {
        const struct strobe_region_def *d = &exp->regions[r];
        if (d->kind != STROBE_REGION_TM_ATOMIC)
            continue;
        fprintf(f, "%zu      %s", r + 1, d->name);
        if (d->file && d->file[0])
            fprintf(f, " (%s:%u)", strobe__basename(d->file), d->line);
        fputc('\n', f);
    }
    fputs("\n\n", f);
}

static void write_row(FILE *f, const struct pv *p)
{
    const struct strobe_experiment *exp = p->exp;
    char name[512];
    fprintf(f, "LEVEL CPU SIZE %" PRIu32 "\n", p->ncpus);
    for (uint32_t c = 1; c <= p->ncpus; c++)
        fprintf(f, "CPU %" PRIu32 "\n", c);
    fprintf(f, "\nLEVEL NODE SIZE 1\n%s\n", strobe__host_name(exp));
    fprintf(f, "\nLEVEL TASK SIZE %" PRIu32 "\n", p->ntasks);
    for (size_t pr = 0; pr < exp->nprocesses; pr++) {
        if (p->task_threads[pr] == 0)
            continue;
        strobe__process_name(exp, (uint32_t)pr, name, sizeof name);
        fprintf(f, "%s\n", name);
    }
    fprintf(f, "\nLEVEL THREAD SIZE %" PRIu32 "\n", p->ncpus);
    for (size_t t = 0; t < exp->nthreads; t++) {
        if (!p->cpu[t])
            continue;
        strobe__thread_name(exp, (uint32_t)t, name, sizeof name);
        fprintf(f, "%s\n", name);
    }
}

static void pv_free(struct pv *p)
{
    for (size_t t = 0; p->locked && t < p->exp->nthreads; t++)
        free(p->locked[t]);
    free(p->locked);
    free(p->nlocked);
    free(p->caplocked);
    free(p->recs);
    free(p->cpu);
    free(p->task);
    free(p->thr);
    free(p->task_threads);
}

/* Writes one of the three files through the all-or-nothing output. */
static int write_file(const char *base, const char *ext, const struct pv *p,
                      void (*fn)(FILE *, const struct pv *), struct strobe_errbuf *eb)
{
    char *path;
    if (asprintf(&path, "%s%s", base, ext) < 0)
        return strobe__error(eb, -ENOMEM, "paraver: out of memory");
    struct strobe__out_file o;
    int rc = strobe__out_file_open(&o, path, eb);
    if (rc == 0) {
        fn(o.f, p);
        rc = strobe__out_file_commit(&o, eb);
    }
    free(path);
    return rc;
}

static void prv_file(FILE *f, const struct pv *p)
{
    write_prv(f, p);
}
static void pcf_file(FILE *f, const struct pv *p)
{
    write_pcf(f, p->exp);
}
static void row_file(FILE *f, const struct pv *p)
{
    write_row(f, p);
}

int strobe_export_paraver(const struct strobe_experiment *exp, const char *out,
                          const struct strobe_export_opts *opts, struct strobe_errbuf *eb)
{
    /* Without the per-attempt log every attempt would look committed (or
     * the trace empty): refuse rather than draw what was not recorded. */
    if (!exp->tm)
        return strobe__error(
            eb, STROBE_ERR_UNSUPPORTED,
            "%s was not run on the monitored STM; the Paraver timeline needs per-attempt events: "
            "run it with strobe run --tm-monitor events",
            exp->dir);
    if (exp->tm_level != STROBE_TM_MONITOR_EVENTS)
        return strobe__error(
            eb, STROBE_ERR_UNSUPPORTED,
            "%s was recorded at TM monitoring level '%s'; the Paraver timeline needs per-attempt "
            "events: re-run with --tm-monitor events",
            exp->dir, strobe_tm_level_name(exp->tm_level));
    struct pv p = {.exp = exp};
    size_t nt = exp->nthreads ? exp->nthreads : 1;
    p.locked = calloc(nt, sizeof *p.locked);
    p.nlocked = calloc(nt, sizeof *p.nlocked);
    p.caplocked = calloc(nt, sizeof *p.caplocked);
    p.cpu = calloc(nt, sizeof *p.cpu);
    p.task = calloc(nt, sizeof *p.task);
    p.thr = calloc(nt, sizeof *p.thr);
    p.task_threads = calloc(exp->nprocesses ? exp->nprocesses : 1, sizeof *p.task_threads);
    int rc = 0;
    if (!p.locked || !p.nlocked || !p.caplocked || !p.cpu || !p.task || !p.thr || !p.task_threads)
        rc = strobe__error(eb, -ENOMEM, "paraver: out of memory");
    else
        pv_number(&p);
    uint64_t done = 0;
    strobe__export_progress(opts, 0, 2 * exp->total_bytes);
    for (uint32_t t = 0; t < exp->nthreads && rc == 0; t++)
        if (exp->threads[t].stream_path && p.cpu[t]) {
            rc = collect_locked(&p, t, eb);
            done += exp->threads[t].bytes;
            strobe__export_progress(opts, done, 2 * exp->total_bytes);
        }
    for (uint32_t t = 0; t < exp->nthreads && rc == 0; t++)
        if (exp->threads[t].stream_path && p.cpu[t]) {
            rc = thread_records(&p, t, eb);
            done += exp->threads[t].bytes;
            strobe__export_progress(opts, done, 2 * exp->total_bytes);
        }
    if (rc == 0) {
        qsort(p.recs, p.n, sizeof *p.recs, rec_cmp);
        rc = write_file(out, ".pcf", &p, pcf_file, eb);
        if (rc == 0)
            rc = write_file(out, ".row", &p, row_file, eb);
        if (rc == 0) /* last: a .prv exists only with its .pcf and .row */
            rc = write_file(out, ".prv", &p, prv_file, eb);
    }
    pv_free(&p);
    return rc;
}
