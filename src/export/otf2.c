/* SPDX-License-Identifier: MIT */
/*
 * OTF2 exporter, written with the reference library (libotf2) in serial
 * mode: one archive OUT/traces.otf2 + OUT/traces/<location>.{evt,def} +
 * OUT/traces.def, readable by otf2-print, Vampir and every OTF2 consumer.
 *
 * Order of work (OTF2 wants the number of events of every location in the
 * global definitions, so events come first):
 *   1. per thread: stream its events through the model's iterator into that
 *      location's event writer, then close the writer (one open at a time,
 *      so memory does not grow with the number of threads); libotf2 calls
 *      the flush callbacks whenever a chunk is full, so events go to disk
 *      as they are produced;
 *   2. global definitions: clock, strings, regions, system tree, location
 *      groups, locations (with their event counts), pthread contingents,
 *      metrics;
 *   3. one empty local definition file per location (identity mappings:
 *      events already use the global ids).
 *
 * Mapping: thread = Location (ref = global thread index), MPI rank (all
 * its processes) or other process = LocationGroup (dense refs, ranks first
 * in rank order, named "MPI Rank R" like Score-P's), host =
 * SystemTreeNode 0, region id =
 * Region ref, metric id = MetricMember/MetricClass ref. Times are 1 ns
 * ticks: timestamp = experiment ns + global offset, the offset being the
 * experiment origin on the monotonic clock. Pthread create/join use OTF2's
 * create-wait model with one contingent (Comm) per process and the child's
 * global thread index as sequence number.
 *
 * With a selection (analysis/select.h) only the selected threads are
 * locations (refs keep their global thread index) and only their processes
 * location groups and contingents; the iterator has filtered the events.
 *
 * Not thread-safe: libotf2's error handler is process-global and is
 * redirected into the error message while an export runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "analysis/keymap.h" /* strobe__grow */
#include "analysis/select.h"
#include "common/format.h"
#include "export/export.h"
#include "export/names.h"
#include "export/output.h"
#include "strobe/strobe.h"

#define ARCHIVE_NAME "traces"
#define EVENT_CHUNK_SIZE (1u << 20)
#define DEF_CHUNK_SIZE (4u << 20)

/* Interned strings: OTF2 wants each String definition once per ref; the
 * same source file or name is shared by many regions. Open addressing,
 * kept at most half full. */
struct string_table {
    char **keys;
    OTF2_StringRef *refs;
    size_t cap, len;
};

struct otf2_export {
    const struct strobe_experiment *exp;
    const char *out;
    struct strobe_errbuf *eb;
    OTF2_Archive *archive;
    OTF2_GlobalDefWriter *defs;
    uint64_t offset;  /* added to every experiment time */
    uint64_t *events; /* [nthreads] events written per location */
    uint32_t *comm;   /* [nprocesses] Comm (thread contingent) of each selected
                         process: dense refs, as OTF2 wants them */
    struct string_table strings;
    char otf2_msg[256]; /* last message from libotf2's error handler */
    /* MPI (mpi_setup): the location of each rank, which carries its MPI
     * records; MPI communicators are Comms from mpi_comm_base on, in the
     * order of exp->mpi_comms, and comm_rank[c][world rank] is the rank in
     * communicator c (STROBE_NONE: not a member). */
    uint32_t nranks; /* 0: no MPI records written */
    uint64_t *rank_location;
    uint32_t **comm_rank;
    uint32_t ncomms_threads; /* Comms of the thread contingents */
    uint32_t ngroups_threads;
    /* OpenMP critical sections as OTF2 locks (locks_setup): the lock of
     * each region (UINT32_MAX: not a critical section), and every
     * acquisition sorted by lock, time and thread, whose rank among its
     * lock's is the acquisition order */
    uint32_t *lock_of;
    struct acquisition *acq;
    size_t nacq;
    uint64_t *held; /* [lock] the order of the current thread's last acquisition */
};

struct acquisition {
    uint32_t lock, thread;
    uint64_t time;
};

static OTF2_ErrorCode capture_otf2_error(void *user, const char *file, uint64_t line, const char *function,
                                         OTF2_ErrorCode code, const char *fmt, va_list va)
{
    (void)file, (void)line, (void)function;
    struct otf2_export *x = user;
    vsnprintf(x->otf2_msg, sizeof x->otf2_msg, fmt, va);
    return code;
}

static int otf2_failed(struct otf2_export *x, OTF2_ErrorCode code, const char *what)
{
    const char *detail = x->otf2_msg[0] ? x->otf2_msg : OTF2_Error_GetDescription(code);
    return strobe__error(x->eb, -EIO, "%s: libotf2: %s: %s (%s)", x->out, what, detail,
                         OTF2_Error_GetName(code));
}

#define OTF2_TRY(x, call, what)                                                                              \
    do {                                                                                                     \
        OTF2_ErrorCode e_ = (call);                                                                          \
        if (e_ != OTF2_SUCCESS)                                                                              \
            return otf2_failed((x), e_, (what));                                                             \
    } while (0)

/* ---- strings ---------------------------------------------------------- */

static uint64_t hash_string(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static int strings_grow(struct string_table *t)
{
    size_t cap = t->cap ? t->cap * 2 : 256;
    char **keys = calloc(cap, sizeof *keys);
    OTF2_StringRef *refs = calloc(cap, sizeof *refs);
    if (!keys || !refs) {
        free(keys);
        free(refs);
        return -ENOMEM;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->keys[i])
            continue;
        size_t j = hash_string(t->keys[i]) & (cap - 1);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = t->keys[i];
        refs[j] = t->refs[i];
    }
    free(t->keys);
    free(t->refs);
    t->keys = keys;
    t->refs = refs;
    t->cap = cap;
    return 0;
}

static void strings_free(struct string_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->keys[i]);
    free(t->keys);
    free(t->refs);
    memset(t, 0, sizeof *t);
}

/* The ref of s, writing its String definition the first time. */
static int intern(struct otf2_export *x, const char *s, OTF2_StringRef *ref)
{
    struct string_table *t = &x->strings;
    if (!s)
        s = "";
    if ((t->len + 1) * 2 > t->cap && strings_grow(t) < 0)
        return strobe__error(x->eb, -ENOMEM, "%s: out of memory", x->out);
    size_t i = hash_string(s) & (t->cap - 1);
    for (; t->keys[i]; i = (i + 1) & (t->cap - 1)) {
        if (strcmp(t->keys[i], s) == 0) {
            *ref = t->refs[i];
            return 0;
        }
    }
    char *copy = strdup(s);
    if (!copy)
        return strobe__error(x->eb, -ENOMEM, "%s: out of memory", x->out);
    OTF2_StringRef r = (OTF2_StringRef)t->len;
    OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteString(x->defs, r, s);
    if (e != OTF2_SUCCESS) {
        free(copy);
        return otf2_failed(x, e, "string definition");
    }
    t->keys[i] = copy;
    t->refs[i] = r;
    t->len++;
    *ref = r;
    return 0;
}

#define INTERN(x, s, ref)                                                                                    \
    do {                                                                                                     \
        int rc_ = intern((x), (s), (ref));                                                                   \
        if (rc_ < 0)                                                                                         \
            return rc_;                                                                                      \
    } while (0)

/* ---- events ----------------------------------------------------------- */

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef location, void *caller,
                                bool final)
{
    (void)user, (void)type, (void)location, (void)caller, (void) final;
    return OTF2_FLUSH; /* always write full chunks to disk */
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef location)
{
    (void)user, (void)type, (void)location;
    return 0; /* no BufferFlush events are recorded: flushing is not measured time */
}

static const OTF2_FlushCallbacks flush_callbacks = {pre_flush, post_flush};

/* ---- MPI -------------------------------------------------------------- */

/* The rank of each MPI process's location (the main thread of the first
 * process of the rank), and each communicator's ranks. MPI records are
 * written when every rank 0..n-1 has a selected location: OTF2 names
 * message peers by their rank in the communicator, which must map to a
 * location. */
static int mpi_setup(struct otf2_export *x)
{
    const struct strobe_experiment *exp = x->exp;
    uint32_t n = 0;
    for (size_t p = 0; p < exp->nprocesses; p++)
        if (exp->processes[p].has_rank && exp->processes[p].rank >= n)
            n = exp->processes[p].rank + 1;
    if (n == 0 || exp->nmpi_comms == 0)
        return 0;
    x->rank_location = malloc(n * sizeof *x->rank_location);
    x->comm_rank = calloc(exp->nmpi_comms, sizeof *x->comm_rank);
    if (!x->rank_location || !x->comm_rank)
        return strobe__error(x->eb, -ENOMEM, "%s: out of memory", x->out);
    for (uint32_t r = 0; r < n; r++)
        x->rank_location[r] = OTF2_UNDEFINED_LOCATION;
    for (uint32_t t = 0; t < exp->nthreads; t++) {
        const struct strobe_process_info *p = &exp->processes[exp->threads[t].process];
        if (p->has_rank && exp->threads[t].index == 0 &&
            x->rank_location[p->rank] == OTF2_UNDEFINED_LOCATION && strobe_thread_selected(exp, t))
            x->rank_location[p->rank] = t;
    }
    for (uint32_t r = 0; r < n; r++)
        if (x->rank_location[r] == OTF2_UNDEFINED_LOCATION)
            return 0; /* a rank not measured or not selected */
    for (size_t c = 0; c < exp->nmpi_comms; c++) {
        const struct strobe_mpi_comm *mc = &exp->mpi_comms[c];
        if (!(x->comm_rank[c] = malloc(n * sizeof **x->comm_rank)))
            return strobe__error(x->eb, -ENOMEM, "%s: out of memory", x->out);
        for (uint32_t r = 0; r < n; r++)
            x->comm_rank[c][r] = STROBE_NONE;
        for (uint32_t k = 0; k < mc->nmembers; k++)
            if (mc->members[k] < n)
                x->comm_rank[c][mc->members[k]] = k;
    }
    x->nranks = n;
    return 0;
}

static void mpi_free(struct otf2_export *x)
{
    for (size_t c = 0; x->comm_rank && c < x->exp->nmpi_comms; c++)
        free(x->comm_rank[c]);
    free(x->comm_rank);
    free(x->rank_location);
}

/* The index of communicator id in exp->mpi_comms, STROBE_NONE if unknown
 * or not usable (an intercommunicator, a cut member list). */
static uint32_t mpi_comm_index(const struct otf2_export *x, uint64_t id)
{
    const struct strobe_experiment *exp = x->exp;
    for (size_t c = 0; c < exp->nmpi_comms; c++)
        if (exp->mpi_comms[c].id == id)
            return exp->mpi_comms[c].inter || exp->mpi_comms[c].nmembers != exp->mpi_comms[c].size
                       ? STROBE_NONE
                       : (uint32_t)c;
    return STROBE_NONE;
}

/* An MPI record of the rank's location as OTF2's MPI events; records OTF2
 * cannot express (an unknown communicator or peer, another thread of the
 * rank) are left out. */
static int write_mpi_event(struct otf2_export *x, OTF2_EvtWriter *w, uint32_t thread, OTF2_TimeStamp ts,
                           const struct strobe_mpi_args *a)
{
    const struct strobe_experiment *exp = x->exp;
    const struct strobe_process_info *p = &exp->processes[exp->threads[thread].process];
    if (!x->nranks || !p->has_rank || x->rank_location[p->rank] != thread)
        return 0;
    if (a->op == STROBE_MPI_ISEND_COMPLETE) {
        OTF2_TRY(x, OTF2_EvtWriter_MpiIsendComplete(w, NULL, ts, a->request), "MPI isend complete event");
        return 0;
    }
    if (a->op == STROBE_MPI_IRECV_REQUEST) {
        OTF2_TRY(x, OTF2_EvtWriter_MpiIrecvRequest(w, NULL, ts, a->request), "MPI irecv request event");
        return 0;
    }
    if (a->op == STROBE_MPI_COLL_BEGIN) {
        OTF2_TRY(x, OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, ts), "MPI collective begin event");
        return 0;
    }
    uint32_t c =
        a->op == STROBE_MPI_INIT || a->op == STROBE_MPI_FINALIZE ? STROBE_NONE : mpi_comm_index(x, a->comm);
    if (c == STROBE_NONE) {
        /* a collective begun must end: on MPI_COMM_WORLD's ref, as an
         * unknown operation would not be shown at all */
        if (a->op == STROBE_MPI_COLL_END)
            OTF2_TRY(x,
                     OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, ts, (OTF2_CollectiveOp)(a->coll - 1),
                                                     OTF2_UNDEFINED_COMM, OTF2_UNDEFINED_UINT32, a->bytes,
                                                     a->received),
                     "MPI collective end event");
        return 0;
    }
    OTF2_CommRef comm = x->ncomms_threads + c;
    uint32_t peer = a->peer < x->nranks ? x->comm_rank[c][a->peer] : STROBE_NONE;
    uint32_t tag = (uint32_t)a->tag;
    switch (a->op) {
    case STROBE_MPI_COLL_END:
        /* enum strobe_mpi_coll is OTF2_CollectiveOp + 1 */
        OTF2_TRY(x,
                 OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, ts, (OTF2_CollectiveOp)(a->coll - 1), comm,
                                                 peer == STROBE_NONE ? OTF2_UNDEFINED_UINT32 : peer, a->bytes,
                                                 a->received),
                 "MPI collective end event");
        return 0;
    case STROBE_MPI_SEND:
        if (peer != STROBE_NONE)
            OTF2_TRY(x, OTF2_EvtWriter_MpiSend(w, NULL, ts, peer, comm, tag, a->bytes), "MPI send event");
        return 0;
    case STROBE_MPI_RECV:
        if (peer != STROBE_NONE)
            OTF2_TRY(x, OTF2_EvtWriter_MpiRecv(w, NULL, ts, peer, comm, tag, a->bytes), "MPI receive event");
        return 0;
    case STROBE_MPI_ISEND:
        if (peer != STROBE_NONE)
            OTF2_TRY(x, OTF2_EvtWriter_MpiIsend(w, NULL, ts, peer, comm, tag, a->bytes, a->request),
                     "MPI isend event");
        return 0;
    case STROBE_MPI_IRECV:
        if (peer != STROBE_NONE)
            OTF2_TRY(x, OTF2_EvtWriter_MpiIrecv(w, NULL, ts, peer, comm, tag, a->bytes, a->request),
                     "MPI irecv event");
        return 0;
    default: /* INIT, FINALIZE: the regions say it */
        return 0;
    }
}

/* The MPI paradigm, a COMM_LOCATIONS group of the ranks' locations in rank
 * order, and per communicator a COMM_GROUP of its members (world ranks,
 * in its rank order) and a Comm. */
static int write_mpi_comms(struct otf2_export *x)
{
    const struct strobe_experiment *exp = x->exp;
    if (!x->nranks)
        return 0;
    OTF2_StringRef name;
    char buf[64];
    INTERN(x, "MPI", &name);
    OTF2_TRY(
        x, OTF2_GlobalDefWriter_WriteParadigm(x->defs, OTF2_PARADIGM_MPI, name, OTF2_PARADIGM_CLASS_PROCESS),
        "MPI paradigm definition");
    INTERN(x, "MPI ranks", &name);
    OTF2_GroupRef locations = x->ngroups_threads;
    OTF2_TRY(x,
             OTF2_GlobalDefWriter_WriteGroup(x->defs, locations, name, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                             OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, x->nranks,
                                             x->rank_location),
             "MPI locations definition");
    uint64_t *members = malloc(x->nranks * sizeof *members);
    if (!members)
        return strobe__error(x->eb, -ENOMEM, "%s: out of memory", x->out);
    int rc = 0;
    for (size_t c = 0; c < exp->nmpi_comms && rc == 0; c++) {
        const struct strobe_mpi_comm *mc = &exp->mpi_comms[c];
        uint32_t n = 0;
        for (uint32_t k = 0; k < mc->nmembers && k < x->nranks; k++)
            members[n++] = mc->members[k];
        if (mc->id == 0)
            snprintf(buf, sizeof buf, "MPI_COMM_WORLD");
        else if ((mc->id & 0xffffffffu) == 1)
            snprintf(buf, sizeof buf, "MPI_COMM_SELF of rank %" PRIu64, mc->id >> 32);
        else
            snprintf(buf, sizeof buf, "MPI communicator %" PRIu64 ".%" PRIu64, mc->id >> 32,
                     mc->id & 0xffffffffu);
        OTF2_ErrorCode e = OTF2_SUCCESS;
        OTF2_GroupRef group = locations + 1 + (OTF2_GroupRef)c;
        if ((rc = intern(x, buf, &name)) >= 0)
            e = OTF2_GlobalDefWriter_WriteGroup(x->defs, group, name, OTF2_GROUP_TYPE_COMM_GROUP,
                                                OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, members);
        if (e == OTF2_SUCCESS && rc >= 0)
            e = OTF2_GlobalDefWriter_WriteComm(x->defs, x->ncomms_threads + (OTF2_CommRef)c, name, group,
                                               OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
        if (e != OTF2_SUCCESS)
            rc = otf2_failed(x, e, "MPI communicator definition");
        rc = rc < 0 ? rc : 0;
    }
    free(members);
    return rc;
}

/* ---- OpenMP locks -------------------------------------------------------- */

static int cmp_acquisition(const void *a, const void *b)
{
    const struct acquisition *x = a, *y = b;
    if (x->lock != y->lock)
        return x->lock < y->lock ? -1 : 1;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return (x->thread > y->thread) - (x->thread < y->thread);
}

/* A critical section is a lock of OpenMP's: one per name (all unnamed
 * ones share one), so the lock is the region's name up to its '@'
 * ("omp critical(update)"). OTF2 wants each acquisition's order among
 * the lock's, over all threads: a pass over the selected streams collects
 * them first (only when the experiment has critical sections). */
static int locks_setup(struct otf2_export *x)
{
    const struct strobe_experiment *exp = x->exp;
    uint32_t nlocks = 0;
    for (size_t r = 0; r < exp->nregions; r++) {
        if (exp->regions[r].kind != STROBE_REGION_OMP_CRITICAL)
            continue;
        if (!x->lock_of) {
            x->lock_of = malloc(exp->nregions * sizeof *x->lock_of);
            if (!x->lock_of)
                return strobe__error(x->eb, -ENOMEM, "%s: out of memory", x->out);
            memset(x->lock_of, 0xff, exp->nregions * sizeof *x->lock_of);
        }
        const char *name = exp->regions[r].name;
        size_t len = strcspn(name, "@");
        for (size_t q = 0; q < r && x->lock_of[r] == UINT32_MAX; q++)
            if (x->lock_of[q] != UINT32_MAX && strncmp(exp->regions[q].name, name, len) == 0 &&
                exp->regions[q].name[len] == name[len])
                x->lock_of[r] = x->lock_of[q];
        if (x->lock_of[r] == UINT32_MAX)
            x->lock_of[r] = nlocks++;
    }
    if (!nlocks)
        return 0;
    x->held = calloc(nlocks, sizeof *x->held);
    if (!x->held)
        return strobe__error(x->eb, -ENOMEM, "%s: out of memory", x->out);
    size_t cap = 0;
    int rc = 0;
    for (uint32_t t = 0; t < exp->nthreads && rc == 0; t++) {
        if (!strobe_thread_selected(exp, t) || !exp->threads[t].stream_path)
            continue;
        struct strobe_stream_iter *it;
        if ((rc = strobe_stream_open(exp, t, &it, x->eb)) < 0)
            break;
        struct strobe_event ev;
        while ((rc = strobe_stream_next(it, &ev, x->eb)) > 0) {
            if (ev.type != STROBE_EVENT_ENTER || ev.region >= exp->nregions || x->lock_of[ev.region] == UINT32_MAX)
                continue;
            if (strobe__grow((void **)&x->acq, &cap, x->nacq + 1, sizeof *x->acq)) {
                rc = strobe__error(x->eb, -ENOMEM, "%s: out of memory", x->out);
                break;
            }
            x->acq[x->nacq++] = (struct acquisition){x->lock_of[ev.region], t, ev.time_ns};
        }
        strobe_stream_close(it);
    }
    if (rc < 0)
        return rc;
    if (x->nacq)
        qsort(x->acq, x->nacq, sizeof *x->acq, cmp_acquisition);
    return 0;
}

/* The acquisition order (from 1) of the thread's entry into critical
 * region `region` at `time`. */
static uint64_t acquisition_order(const struct otf2_export *x, uint32_t region, uint32_t thread, uint64_t time)
{
    struct acquisition key = {x->lock_of[region], thread, time};
    size_t lo = 0, hi = x->nacq;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_acquisition(&x->acq[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t first = lo;
    while (first > 0 && x->acq[first - 1].lock == key.lock)
        first--;
    return lo - first + 1;
}

static int write_event(struct otf2_export *x, OTF2_EvtWriter *w, uint32_t thread,
                       const struct strobe_event *ev)
{
    const struct strobe_experiment *exp = x->exp;
    const struct strobe_thread_info *ti = &exp->threads[thread];
    OTF2_TimeStamp ts = x->offset + ev->time_ns;
    OTF2_CommRef contingent = x->comm[ti->process];
    switch (ev->type) {
    case STROBE_EVENT_ENTER:
    case STROBE_EVENT_INHERIT: /* entered before fork(): nests like an enter */
    case STROBE_EVENT_EXIT:
        if (ev->region >= exp->nregions)
            break;
        bool lock = x->lock_of && x->lock_of[ev->region] != UINT32_MAX;
        if (ev->type == STROBE_EVENT_EXIT) {
            if (lock)
                OTF2_TRY(x, OTF2_EvtWriter_ThreadReleaseLock(w, NULL, ts, OTF2_PARADIGM_OPENMP, x->lock_of[ev->region],
                                                          x->held[x->lock_of[ev->region]]),
                         "OpenMP release");
            OTF2_TRY(x, OTF2_EvtWriter_Leave(w, NULL, ts, ev->region), "leave event");
        } else {
            OTF2_TRY(x, OTF2_EvtWriter_Enter(w, NULL, ts, ev->region), "enter event");
            if (lock && ev->type == STROBE_EVENT_ENTER) {
                uint32_t l = x->lock_of[ev->region];
                x->held[l] = acquisition_order(x, ev->region, thread, ev->time_ns);
                OTF2_TRY(x, OTF2_EvtWriter_ThreadAcquireLock(w, NULL, ts, OTF2_PARADIGM_OPENMP, l, x->held[l]),
                         "OpenMP acquire");
            }
        }
        /* the fork is written with the team size, just after the enter */
        if (ev->type == STROBE_EVENT_EXIT && exp->regions[ev->region].kind == STROBE_REGION_OMP_PARALLEL)
            OTF2_TRY(x, OTF2_EvtWriter_ThreadJoin(w, NULL, ts, OTF2_PARADIGM_OPENMP), "OpenMP join event");
        return 0;
    case STROBE_EVENT_METRIC: {
        if (ev->metric >= exp->nmetrics)
            break;
        if (strcmp(exp->metrics[ev->metric].name, STROBE_OMP_TEAM_SIZE_METRIC) == 0 && ev->value > 0)
            OTF2_TRY(x, OTF2_EvtWriter_ThreadFork(w, NULL, ts, OTF2_PARADIGM_OPENMP, (uint32_t)ev->value),
                     "OpenMP fork event");
        OTF2_Type type = OTF2_TYPE_INT64;
        OTF2_MetricValue value = {.signed_int = ev->value};
        OTF2_TRY(x, OTF2_EvtWriter_Metric(w, NULL, ts, ev->metric, 1, &type, &value), "metric event");
        return 0;
    }
    case STROBE_EVENT_THREAD_BEGIN:
        if (ti->parent != STROBE_NONE)
            OTF2_TRY(x, OTF2_EvtWriter_ThreadBegin(w, NULL, ts, contingent, thread), "thread begin event");
        return 0;
    case STROBE_EVENT_THREAD_END:
        if (ti->parent != STROBE_NONE)
            OTF2_TRY(x, OTF2_EvtWriter_ThreadEnd(w, NULL, ts, contingent, thread), "thread end event");
        return 0;
    case STROBE_EVENT_THREAD_CREATE:
        if (ev->other_thread < exp->nthreads && strobe_thread_selected(exp, ev->other_thread))
            OTF2_TRY(x, OTF2_EvtWriter_ThreadCreate(w, NULL, ts, contingent, ev->other_thread),
                     "thread create event");
        return 0;
    case STROBE_EVENT_THREAD_JOIN:
        if (ev->other_thread < exp->nthreads && strobe_thread_selected(exp, ev->other_thread))
            OTF2_TRY(x, OTF2_EvtWriter_ThreadWait(w, NULL, ts, contingent, ev->other_thread),
                     "thread wait event");
        return 0;
    case STROBE_EVENT_MPI:
        return write_mpi_event(x, w, thread, ts, &ev->mpi);
    default: /* FORK has no OTF2 event; future types are skipped */
        return 0;
    }
    return strobe__error(x->eb, STROBE_ERR_FORMAT, "%s: offset %" PRIu64 ": undefined region or metric id",
                         ti->stream_path, ev->offset);
}

static int write_location_events(struct otf2_export *x, uint32_t thread,
                                 const struct strobe_export_opts *opts, uint64_t *done)
{
    const struct strobe_experiment *exp = x->exp;
    OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(x->archive, thread);
    if (!w)
        return otf2_failed(x, OTF2_ERROR_MEM_ALLOC_FAILED, "event writer");
    int rc = 0;
    if (exp->threads[thread].stream_path) {
        struct strobe_stream_iter *it;
        rc = strobe_stream_open(exp, thread, &it, x->eb);
        if (rc == 0) {
            struct strobe_event ev;
            uint64_t n = 0;
            while ((rc = strobe_stream_next(it, &ev, x->eb)) > 0) {
                if ((rc = write_event(x, w, thread, &ev)) < 0)
                    break;
                if ((++n & 0xffff) == 0)
                    strobe__export_progress(opts, *done + ev.offset, exp->total_bytes);
            }
            strobe_stream_close(it);
        }
        *done += exp->threads[thread].bytes;
        strobe__export_progress(opts, *done, exp->total_bytes);
    }
    uint64_t count = 0;
    OTF2_ErrorCode e = OTF2_EvtWriter_GetNumberOfEvents(w, &count);
    x->events[thread] = count;
    OTF2_ErrorCode ce = OTF2_Archive_CloseEvtWriter(x->archive, w);
    if (rc < 0)
        return rc;
    if (e != OTF2_SUCCESS)
        return otf2_failed(x, e, "event count");
    if (ce != OTF2_SUCCESS)
        return otf2_failed(x, ce, "closing event writer");
    return 0;
}

/* ---- definitions ------------------------------------------------------ */

/* OTF2's role and paradigm of a region of the given kind */
static void region_role(unsigned kind, OTF2_RegionRole *role, OTF2_Paradigm *paradigm)
{
    static const OTF2_RegionRole omp_roles[] = {
        [STROBE_REGION_OMP_PARALLEL] = OTF2_REGION_ROLE_PARALLEL,
        [STROBE_REGION_OMP_IMPLICIT_TASK] = OTF2_REGION_ROLE_TASK,
        [STROBE_REGION_OMP_LOOP] = OTF2_REGION_ROLE_LOOP,
        [STROBE_REGION_OMP_SECTIONS] = OTF2_REGION_ROLE_SECTIONS,
        [STROBE_REGION_OMP_SINGLE] = OTF2_REGION_ROLE_SINGLE,
        [STROBE_REGION_OMP_BARRIER] = OTF2_REGION_ROLE_BARRIER,
        [STROBE_REGION_OMP_CRITICAL] = OTF2_REGION_ROLE_CRITICAL,
        [STROBE_REGION_OMP_WAIT] = OTF2_REGION_ROLE_WRAPPER,
        [STROBE_REGION_OMP_TASK] = OTF2_REGION_ROLE_TASK,
        [STROBE_REGION_OMP_SECTION] = OTF2_REGION_ROLE_SECTION,
        [STROBE_REGION_OMP_MASTER] = OTF2_REGION_ROLE_MASTER,
        [STROBE_REGION_OMP_ATOMIC] = OTF2_REGION_ROLE_ATOMIC,
        [STROBE_REGION_OMP_ORDERED] = OTF2_REGION_ROLE_ORDERED,
        [STROBE_REGION_OMP_FLUSH] = OTF2_REGION_ROLE_FLUSH,
        [STROBE_REGION_OMP_TASKGROUP] = OTF2_REGION_ROLE_TASK_WAIT,
    };
    if (kind == STROBE_REGION_MPI) {
        /* a point-to-point role would need the function's class; WRAPPER
         * is what Score-P gives the MPI calls it does not classify */
        *role = OTF2_REGION_ROLE_WRAPPER;
        *paradigm = OTF2_PARADIGM_MPI;
    } else if (kind >= STROBE_REGION_OMP_PARALLEL && kind <= STROBE_REGION_OMP_TASKGROUP) {
        *role = omp_roles[kind];
        *paradigm = OTF2_PARADIGM_OPENMP;
    } else if (kind == STROBE_REGION_USER) {
        *role = OTF2_REGION_ROLE_CODE;
        *paradigm = OTF2_PARADIGM_USER;
    } else {
        *role = OTF2_REGION_ROLE_FUNCTION;
        *paradigm = OTF2_PARADIGM_COMPILER;
    }
}

static int write_regions(struct otf2_export *x)
{
    const struct strobe_experiment *exp = x->exp;
    OTF2_StringRef empty;
    INTERN(x, "", &empty);
    for (size_t r = 0; r < exp->nregions; r++) {
        const struct strobe_region_def *def = &exp->regions[r];
        OTF2_StringRef name, file;
        INTERN(x, def->name, &name);
        INTERN(x, def->file, &file);
        OTF2_RegionRole role;
        OTF2_Paradigm paradigm;
        region_role((unsigned)def->kind, &role, &paradigm);
        OTF2_TRY(x,
                 OTF2_GlobalDefWriter_WriteRegion(x->defs, (OTF2_RegionRef)r, name, name, empty, role,
                                                  paradigm, OTF2_REGION_FLAG_NONE, file, def->line, 0),
                 "region definition");
    }
    return 0;
}

/* Location groups: one per MPI rank (its processes' threads together),
 * one per other process; a process without threads has none, so no group
 * is empty. Refs are dense, in the model's order (ranks by rank first). */
static int write_system_tree(struct otf2_export *x)
{
    const struct strobe_experiment *exp = x->exp;
    char buf[512];
    OTF2_StringRef host, machine;
    INTERN(x, strobe__host_name(exp), &host);
    INTERN(x, "machine", &machine);
    OTF2_TRY(
        x,
        OTF2_GlobalDefWriter_WriteSystemTreeNode(x->defs, 0, host, machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE),
        "system tree definition");
    uint32_t *group = malloc((exp->nprocesses ? exp->nprocesses : 1) * sizeof *group);
    if (!group)
        return strobe__error(x->eb, -ENOMEM, "%s: out of memory", x->out);
    for (size_t p = 0; p < exp->nprocesses; p++)
        group[p] = OTF2_UNDEFINED_LOCATION_GROUP;
    for (size_t t = 0; t < exp->nthreads; t++) /* mark the leaders of groups with selected threads */
        if (strobe_thread_selected(exp, (uint32_t)t))
            group[strobe__group_leader(exp, exp->threads[t].process)] = 0;
    uint32_t ngroups = 0;
    int rc = 0;
    for (size_t p = 0; p < exp->nprocesses && rc == 0; p++) {
        uint32_t leader = strobe__group_leader(exp, (uint32_t)p);
        if (leader != p) {
            group[p] = group[leader];
            continue;
        }
        if (group[p] == OTF2_UNDEFINED_LOCATION_GROUP)
            continue;
        group[p] = ngroups++;
        OTF2_StringRef name;
        strobe__group_name(exp, (uint32_t)p, buf, sizeof buf);
        /* the fork parent's group, when defined already (a measured
         * launcher comes after the ranks it started) */
        uint32_t parent = exp->processes[p].parent;
        parent = parent < p ? group[strobe__group_leader(exp, parent)] : OTF2_UNDEFINED_LOCATION_GROUP;
        OTF2_ErrorCode e = OTF2_SUCCESS;
        if ((rc = intern(x, buf, &name)) >= 0)
            e = OTF2_GlobalDefWriter_WriteLocationGroup(x->defs, group[p], name,
                                                        OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, parent);
        if (e != OTF2_SUCCESS)
            rc = otf2_failed(x, e, "location group definition");
    }
    for (size_t t = 0; t < exp->nthreads && rc >= 0; t++) {
        if (!strobe_thread_selected(exp, (uint32_t)t))
            continue;
        OTF2_StringRef name;
        strobe__thread_name(exp, (uint32_t)t, buf, sizeof buf);
        OTF2_ErrorCode e = OTF2_SUCCESS;
        if ((rc = intern(x, buf, &name)) >= 0)
            e = OTF2_GlobalDefWriter_WriteLocation(x->defs, t, name, OTF2_LOCATION_TYPE_CPU_THREAD,
                                                   x->events[t], group[exp->threads[t].process]);
        if (e != OTF2_SUCCESS)
            rc = otf2_failed(x, e, "location definition");
    }
    free(group);
    return rc < 0 ? rc : 0;
}

/* One pthread contingent per selected process: a COMM_LOCATIONS group of
 * all locations, a COMM_GROUP per process listing its threads (by their
 * rank in the first group), and a Comm per process (x->comm) over that
 * group. */
static int write_thread_contingents(struct otf2_export *x)
{
    const struct strobe_experiment *exp = x->exp;
    if (exp->nthreads == 0)
        return 0;
    uint64_t *members = malloc(exp->nthreads * sizeof *members);
    uint64_t *rank = malloc(exp->nthreads * sizeof *rank);
    if (!members || !rank) {
        free(members);
        free(rank);
        return strobe__error(x->eb, -ENOMEM, "%s: out of memory", x->out);
    }
    int rc = 0;
    OTF2_StringRef pthread_name, all_name, name;
    char buf[600], pname[512];
    OTF2_ErrorCode e;
    if ((rc = intern(x, "POSIX threads", &pthread_name)) < 0 ||
        (rc = intern(x, "all threads", &all_name)) < 0)
        goto out;
    e = OTF2_GlobalDefWriter_WriteParadigm(x->defs, OTF2_PARADIGM_PTHREAD, pthread_name,
                                           OTF2_PARADIGM_CLASS_THREAD_CREATE_WAIT);
    if (e != OTF2_SUCCESS) {
        rc = otf2_failed(x, e, "paradigm definition");
        goto out;
    }
    uint32_t nall = 0;
    for (size_t t = 0; t < exp->nthreads; t++)
        if (strobe_thread_selected(exp, (uint32_t)t)) {
            rank[t] = nall;
            members[nall++] = t;
        }
    e = OTF2_GlobalDefWriter_WriteGroup(x->defs, 0, all_name, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                        OTF2_PARADIGM_PTHREAD, OTF2_GROUP_FLAG_NONE, nall, members);
    if (e != OTF2_SUCCESS) {
        rc = otf2_failed(x, e, "group definition");
        goto out;
    }
    for (size_t p = 0; p < exp->nprocesses; p++) {
        if (!strobe_process_selected(exp, (uint32_t)p))
            continue;
        uint32_t n = 0;
        for (size_t t = 0; t < exp->nthreads; t++)
            if (exp->threads[t].process == p && strobe_thread_selected(exp, (uint32_t)t))
                members[n++] = rank[t];
        strobe__process_name(exp, (uint32_t)p, pname, sizeof pname);
        snprintf(buf, sizeof buf, "threads of %s", pname);
        if ((rc = intern(x, buf, &name)) < 0)
            goto out;
        OTF2_CommRef comm = x->comm[p];
        e = OTF2_GlobalDefWriter_WriteGroup(x->defs, (OTF2_GroupRef)(comm + 1), name,
                                            OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_PTHREAD,
                                            OTF2_GROUP_FLAG_NONE, n, members);
        if (e == OTF2_SUCCESS)
            e = OTF2_GlobalDefWriter_WriteComm(x->defs, comm, name, (OTF2_GroupRef)(comm + 1),
                                               OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
        if (e != OTF2_SUCCESS) {
            rc = otf2_failed(x, e, "thread contingent definition");
            goto out;
        }
    }
out:
    free(members);
    free(rank);
    return rc;
}

static int write_metrics(struct otf2_export *x)
{
    const struct strobe_experiment *exp = x->exp;
    OTF2_StringRef empty;
    INTERN(x, "", &empty);
    for (size_t m = 0; m < exp->nmetrics; m++) {
        OTF2_StringRef name, unit;
        INTERN(x, exp->metrics[m].name, &name);
        INTERN(x, exp->metrics[m].unit, &unit);
        /* A sample is a value reported by the program at one point in time. */
        OTF2_TRY(x,
                 OTF2_GlobalDefWriter_WriteMetricMember(x->defs, (OTF2_MetricMemberRef)m, name, empty,
                                                        OTF2_METRIC_TYPE_USER, OTF2_METRIC_ABSOLUTE_POINT,
                                                        OTF2_TYPE_INT64, OTF2_BASE_DECIMAL, 0, unit),
                 "metric member definition");
        OTF2_MetricMemberRef member = (OTF2_MetricMemberRef)m;
        OTF2_TRY(x,
                 OTF2_GlobalDefWriter_WriteMetricClass(x->defs, (OTF2_MetricRef)m, 1, &member,
                                                       OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_CPU),
                 "metric class definition");
    }
    return 0;
}

static int write_global_defs(struct otf2_export *x)
{
    const struct strobe_experiment *exp = x->exp;
    x->defs = OTF2_Archive_GetGlobalDefWriter(x->archive);
    if (!x->defs)
        return otf2_failed(x, OTF2_ERROR_MEM_ALLOC_FAILED, "global definition writer");
    /* 1 tick = 1 ns; the trace spans [offset, offset + duration]. The wall
     * clock time of the offset is not known exactly, so it is left undefined. */
    OTF2_TRY(x,
             OTF2_GlobalDefWriter_WriteClockProperties(x->defs, 1000000000u, x->offset, exp->duration_ns + 1,
                                                       OTF2_UNDEFINED_TIMESTAMP),
             "clock properties");
    int rc;
    if ((rc = write_regions(x)) < 0 || (rc = write_system_tree(x)) < 0 ||
        (rc = write_thread_contingents(x)) < 0 || (rc = write_mpi_comms(x)) < 0 ||
        (rc = write_metrics(x)) < 0)
        return rc;
    OTF2_TRY(x, OTF2_Archive_CloseGlobalDefWriter(x->archive, x->defs), "closing global definitions");
    x->defs = NULL;
    return 0;
}

static int write_local_defs(struct otf2_export *x)
{
    OTF2_TRY(x, OTF2_Archive_OpenDefFiles(x->archive), "opening local definitions");
    for (size_t t = 0; t < x->exp->nthreads; t++) {
        if (!strobe_thread_selected(x->exp, (uint32_t)t))
            continue;
        OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(x->archive, t);
        if (!d)
            return otf2_failed(x, OTF2_ERROR_MEM_ALLOC_FAILED, "local definition writer");
        OTF2_TRY(x, OTF2_Archive_CloseDefWriter(x->archive, d), "closing local definitions");
    }
    OTF2_TRY(x, OTF2_Archive_CloseDefFiles(x->archive), "closing local definitions");
    return 0;
}

static int write_archive(struct otf2_export *x, const char *dir, const struct strobe_export_opts *opts)
{
    const struct strobe_experiment *exp = x->exp;
    x->archive = OTF2_Archive_Open(dir, ARCHIVE_NAME, OTF2_FILEMODE_WRITE, EVENT_CHUNK_SIZE, DEF_CHUNK_SIZE,
                                   OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!x->archive)
        return otf2_failed(x, OTF2_ERROR_FILE_INTERACTION, "creating the archive");
    OTF2_TRY(x, OTF2_Archive_SetFlushCallbacks(x->archive, &flush_callbacks, NULL), "flush callbacks");
    OTF2_TRY(x, OTF2_Archive_SetSerialCollectiveCallbacks(x->archive), "collective callbacks");
    OTF2_TRY(x, OTF2_Archive_SetCreator(x->archive, "strobe " STROBE_VERSION_STRING), "creator");
    const char *command = strobe_experiment_meta(exp, "command");
    if (command)
        OTF2_TRY(x, OTF2_Archive_SetDescription(x->archive, command), "description");
    OTF2_TRY(x, OTF2_Archive_SetMachineName(x->archive, strobe__host_name(exp)), "machine name");

    OTF2_TRY(x, OTF2_Archive_OpenEvtFiles(x->archive), "opening event files");
    uint64_t done = 0;
    strobe__export_progress(opts, 0, exp->total_bytes);
    for (uint32_t t = 0; t < exp->nthreads; t++) {
        if (!strobe_thread_selected(exp, t))
            continue;
        int rc = write_location_events(x, t, opts, &done);
        if (rc < 0)
            return rc;
    }
    OTF2_TRY(x, OTF2_Archive_CloseEvtFiles(x->archive), "closing event files");

    int rc = write_global_defs(x);
    if (rc < 0)
        return rc;
    rc = write_local_defs(x);
    if (rc < 0)
        return rc;
    OTF2_ErrorCode e = OTF2_Archive_Close(x->archive);
    x->archive = NULL;
    if (e != OTF2_SUCCESS)
        return otf2_failed(x, e, "closing the archive");
    return 0;
}

int strobe_export_otf2(const struct strobe_experiment *exp, const char *out,
                       const struct strobe_export_opts *opts, struct strobe_errbuf *eb)
{
    struct strobe__out_dir dir;
    int rc = strobe__out_dir_open(&dir, out, eb);
    if (rc < 0)
        return rc;
    struct otf2_export x = {.exp = exp, .out = out, .eb = eb};
    /* OTF2 timestamps are unsigned: anchor them at the experiment origin on
     * the monotonic clock so they keep their absolute meaning. */
    if (exp->origin_ns >= 0 && exp->origin_ns < 9.2e18)
        x.offset = (uint64_t)llround(exp->origin_ns);
    x.events = calloc(exp->nthreads ? exp->nthreads : 1, sizeof *x.events);
    x.comm = calloc(exp->nprocesses ? exp->nprocesses : 1, sizeof *x.comm);
    if (!x.events || !x.comm) {
        free(x.events);
        free(x.comm);
        strobe__out_dir_abort(&dir);
        return strobe__error(eb, -ENOMEM, "%s: out of memory", out);
    }
    for (uint32_t p = 0; p < exp->nprocesses; p++)
        x.comm[p] = strobe_process_selected(exp, p) ? x.ncomms_threads++ : OTF2_UNDEFINED_COMM;
    /* group 0: all locations; 1 + comm: each contingent's */
    x.ngroups_threads = exp->nthreads ? x.ncomms_threads + 1 : 0;
    /* libotf2 does not return the previous handler's user data; every user
     * of libotf2 in strobe uses the default handler (NULL, NULL). */
    OTF2_ErrorCallback old = OTF2_Error_RegisterCallback(capture_otf2_error, &x);
    rc = mpi_setup(&x);
    if (rc == 0)
        rc = locks_setup(&x);
    if (rc == 0)
        rc = write_archive(&x, dir.tmp, opts);
    if (x.defs)
        OTF2_Archive_CloseGlobalDefWriter(x.archive, x.defs);
    if (x.archive)
        OTF2_Archive_Close(x.archive);
    OTF2_Error_RegisterCallback(old, NULL);
    strings_free(&x.strings);
    mpi_free(&x);
    free(x.lock_of);
    free(x.acq);
    free(x.held);
    free(x.events);
    free(x.comm);
    if (rc < 0) {
        strobe__out_dir_abort(&dir);
        return rc;
    }
    return strobe__out_dir_commit(&dir, eb);
}
