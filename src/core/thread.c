/* SPDX-License-Identifier: MIT */
/*
 * Thread life cycle (registration, THREAD_BEGIN/END, files) and the slow
 * paths of the event recorder: chunk switches, drops, stack growth, EXT
 * records. See thread.h.
 */
#define _GNU_SOURCE
#include "core/publish.h"
#include "core/thread.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/defs.h"
#include "core/hotpath.h"
#include "core/profile.h"
#include "core/runtime.h"
#include "core/util.h"
#include "strobe/strobe.h"

__thread struct strobe__tls strobe__tls __attribute__((tls_model("initial-exec")));

/* Gap between two CLOCK_SYNC points written at chunk switches and thread
 * ends: enough for a precise line over a long run, few enough records for
 * a program that starts thousands of short threads. */
#define SYNC_GAP_CHUNK_NS (100u * 1000 * 1000)
#define SYNC_GAP_THREAD_NS (10u * 1000 * 1000)

static size_t frames_bytes(uint32_t frames)
{
    return (size_t)frames * sizeof(struct strobe__frame);
}

struct strobe__thread *strobe__thread_alloc(uint32_t index, uint32_t parent_plus1)
{
    struct strobe__thread *t = strobe__pages_alloc(sizeof *t);
    if (!t)
        return NULL;
    t->stack = strobe__pages_alloc(frames_bytes(STROBE__INITIAL_FRAMES));
    if (!t->stack) {
        strobe__pages_free(t, sizeof *t);
        return NULL;
    }
    t->stack_cap = STROBE__INITIAL_FRAMES;
    t->stack[0].key = 0; /* the root sentinel: no function or handle has address 0 */
    t->stack[0].region = STROBE_PROF_NO_REGION;
    t->sp = t->stack + 1;
    t->stack_end = t->stack + t->stack_cap;
    t->index = index;
    t->parent_plus1 = parent_plus1;
    t->mode = strobe__rt.mode;
    t->last_region = 0; /* ids start at 1: the first ENTER is never ENTER_SAME */
    t->evt.fd = -1;
    t->bb.file.fd = -1;
    t->prof.fd = -1;
    t->sampler.fd = -1;
    struct strobe_prof_node *o = &t->overflow_node;
    o->tag = STROBE_SLOT_NODE;
    o->parent = o->first_child = o->next_sibling = o->first_metric = STROBE_PROF_NONE;
    o->region = STROBE_PROF_NO_REGION;
    o->min_ticks = UINT64_MAX;
    return t;
}

void strobe__thread_free(struct strobe__thread *t)
{
    strobe__sync_free(t);
    strobe__pages_free(t->stack, frames_bytes(t->stack_cap));
    strobe__pages_free(t, sizeof *t);
}

/* ---- the thread list (under the lock) ---- */

static void list_add(struct strobe__thread *t)
{
    t->next = strobe__rt.threads;
    if (t->next)
        t->next->prev_next = &t->next;
    t->prev_next = &strobe__rt.threads;
    strobe__rt.threads = t;
}

static void list_remove(struct strobe__thread *t)
{
    if (!t->prev_next)
        return;
    *t->prev_next = t->next;
    if (t->next)
        t->next->prev_next = t->prev_next;
    t->next = NULL;
    t->prev_next = NULL;
}

/* ---- stream ---- */

static void set_limit(struct strobe__thread *t)
{
    t->limit = strobe__mfile_end(&t->evt) - (t->evt.last ? STROBE__TAIL_RESERVE : STROBE_MAX_EVENT_BYTES);
}

void strobe__count_dropped(struct strobe__thread *t, uint64_t n)
{
    if (t->evt.hdr)
        __atomic_fetch_add(&t->evt.hdr->dropped, n, __ATOMIC_RELAXED);
}

/* Bytes of records in the current chunk. */
static uint64_t chunk_bytes(const struct strobe__thread *t)
{
    const uint8_t *base = t->evt.chunk_index == 0 ? (const uint8_t *)(t->evt.hdr + 1) : t->evt.chunk;
    return (uint64_t)(t->pos - base);
}

/* ---- flight recorder: the stream as a ring of chunks ---- */

static bool ring_mode(void)
{
    return strobe__rt.cfg.max_size != 0;
}

/* Takes a chunk from the process's trace budget; false when it is used up. */
static bool ring_take(uint32_t bytes)
{
    int64_t left = atomic_load_explicit(&strobe__rt.ring_left, memory_order_relaxed);
    while (left >= (int64_t)bytes)
        if (atomic_compare_exchange_weak_explicit(&strobe__rt.ring_left, &left, left - (int64_t)bytes,
                                                  memory_order_relaxed, memory_order_relaxed))
            return true;
    return false;
}

static size_t uleb_size(uint64_t v)
{
    uint8_t b[10];
    return (size_t)(strobe_uleb_put(b, v) - b);
}

/* Counts the records of a chunk about to be written again, from p to its
 * first zero byte (the writer zeroes a chunk before writing it). */
static void ring_forget(struct strobe__thread *t, const uint8_t *p, const uint8_t *end)
{
    const uint8_t *start = p;
    uint64_t n = 0, v;
    while (p < end && *p) {
        unsigned b0 = *p++, kind = b0 >> 6;
        if (kind == STROBE_EV_EXT) {
            if (strobe_uleb_get(&p, end, &v) || strobe_uleb_get(&p, end, &v) || v > (uint64_t)(end - p))
                break; /* cannot happen: the runtime wrote it */
            p += v;
            if (b0 == STROBE_EXT_CHUNK)
                continue; /* not an event (chunk_record) */
        } else {
            if ((b0 & 0x20) && strobe_uleb_get(&p, end, &v))
                break;
            if (kind == STROBE_EV_ENTER && strobe_uleb_get(&p, end, &v))
                break;
        }
        n++;
    }
    t->ring_overwritten += n;
    t->done_bytes -= (uint64_t)(p - start);
}

/* Writes the CHUNK record (format.h) at t->pos, the first of every chunk:
 * its sequence number, the time of the record before (so its delta is 0)
 * and the frames open, so that the chunk decodes alone. When the frames do
 * not fit their share of the chunk, a ring's chunk cannot be written
 * (false: it must decode alone); any other stream's record gives only
 * their number, so tracing goes on and that chunk is read with the ones
 * before it. */
static bool chunk_record(struct strobe__thread *t)
{
    uint64_t ticks = t->last_ticks;
    size_t depth = 0, len = uleb_size(t->chunk_seq + 1) + uleb_size(ticks);
    for (const struct strobe__frame *f = t->stack + 1; f < t->sp; f++)
        if (f->key != STROBE__HIDDEN_KEY) {
            depth++;
            len += uleb_size(f->region) + uleb_size(f->start);
        }
    len += uleb_size(depth);
    bool list = len <= strobe__rt.cfg.chunk_size / STROBE__CHUNK_STACK_SHARE;
    if (!list && ring_mode())
        return false;
    if (!list)
        len = uleb_size(t->chunk_seq + 1) + uleb_size(ticks) + uleb_size(depth);
    uint8_t *p = t->pos, *q = strobe_uleb_put(p + 1, 0);
    q = strobe_uleb_put(q, len);
    q = strobe_uleb_put(q, ++t->chunk_seq);
    q = strobe_uleb_put(q, ticks);
    q = strobe_uleb_put(q, depth);
    for (const struct strobe__frame *f = t->stack + 1; list && f < t->sp; f++)
        if (f->key != STROBE__HIDDEN_KEY) {
            q = strobe_uleb_put(q, f->region);
            q = strobe_uleb_put(q, f->start);
        }
    atomic_signal_fence(memory_order_seq_cst);
    *p = (uint8_t)STROBE_EXT_CHUNK; /* b0 last, as for every record */
    t->pos = q; /* not an event: ext_records does not count it */
    /* the chunk's first ENTER names its region: the chunk before may be
     * overwritten (a ring) or not read (a chunk selected alone) */
    t->last_region = 0;
    return true;
}

/* The ring's next chunk: the file's next one, a new one while the budget
 * lasts, else chunk 0 again; a chunk written before is counted as lost and
 * zeroed. Caller holds the lock. */
static int ring_next(struct strobe__thread *t, uint8_t **p)
{
    struct strobe__mfile *f = &t->evt;
    uint64_t next = f->chunk_index + 1;
    int rc;
    if (next < f->nchunks)
        rc = strobe__mfile_goto(f, next, p);
    else if (ring_take(f->chunk_size))
        return strobe__mfile_next(f, p);
    else
        rc = strobe__mfile_goto(f, 0, p);
    if (rc)
        return rc;
    uint8_t *end = strobe__mfile_end(f);
    ring_forget(t, *p, end);
    **p = 0; /* first: a process killed while the rest is cleared leaves an empty chunk */
    atomic_signal_fence(memory_order_seq_cst);
    memset(*p + 1, 0, (size_t)(end - *p - 1));
    return 0;
}

/* Switches to the next chunk (under the lock, so that a fork child sees
 * this thread's mappings consistently). NULL when there is none. Without
 * `wait` (a signal handler, which must not wait for a lock its own thread
 * may hold) NULL with *busy set when the lock is taken: nothing changed. */
static uint8_t *next_chunk(struct strobe__thread *t, bool wait, bool *busy)
{
    uint8_t *p = NULL;
    uint64_t used = chunk_bytes(t);
    if (wait) {
        pthread_mutex_lock(&strobe__rt.lock);
    } else if (pthread_mutex_trylock(&strobe__rt.lock) != 0) {
        *busy = true;
        return NULL;
    }
    int rc = ring_mode() ? ring_next(t, &p) : strobe__mfile_next(&t->evt, &p);
    if (rc == 0)
        strobe__clock_sync_locked(SYNC_GAP_CHUNK_NS);
    pthread_mutex_unlock(&strobe__rt.lock);
    if (rc) {
        /* Limit reached or the disk is full: no more chunks for this
         * stream; every later event lands in strobe__trace_room and is
         * counted as dropped. */
        t->evt.last = true;
        t->limit = t->pos - 1;
        return NULL;
    }
    t->done_bytes += used;
    t->done_events += t->chunk_events;
    t->chunk_events = 0;
    /* Outside the lock: it touches a whole chunk (mfile.h). */
    strobe__mfile_prefault(&t->evt);
    t->pos = p;
    set_limit(t);
    if (!chunk_record(t)) {
        /* a ring's stack too deep to list: no more events for this stream */
        t->evt.last = true;
        t->limit = t->pos - 1;
        return NULL;
    }
    return t->pos;
}

uint8_t *strobe__trace_room(struct strobe__thread *t)
{
    if (t->pos <= t->limit)
        return t->pos;
    uint8_t *p = t->evt.last ? NULL : next_chunk(t, true, NULL);
    if (!p)
        strobe__count_dropped(t, 1);
    return p;
}

static int ext_record(struct strobe__thread *t, unsigned type, uint64_t now, const uint8_t *payload,
                      size_t len, bool wait)
{
    bool busy = false;
    if (!(t->mode & STROBE__MODE_TRACE))
        return 0;
    /* A thread the exiting one has summarized (strobe__threads_summarize_at_exit)
     * writes nothing after its summary; an event it was in the middle of
     * when the process exit began was waited for. */
    if (STROBE_UNLIKELY(atomic_load_explicit(&t->closed, memory_order_acquire)))
        return STROBE_ERR_DISABLED;
    size_t need = 1 + 10 + (len < 0x80 ? 1 : 2) + len;
    uint8_t *p;
    if (type != STROBE_EXT_THREAD_END && need <= STROBE_MAX_EVENT_BYTES && wait) {
        p = strobe__trace_room(t);
    } else if (type != STROBE_EXT_THREAD_END) {
        /* A large record (an adapter's, up to STROBE_MAX_EXT_PAYLOAD): the
         * limit only leaves room for a small one, and the last chunk's
         * tail stays reserved for THREAD_END. */
        size_t keep = t->evt.last ? STROBE__TAIL_RESERVE : 0;
        p = t->pos;
        if ((size_t)(strobe__mfile_end(&t->evt) - p) < need + keep) {
            p = t->evt.last ? NULL : next_chunk(t, wait, &busy);
            if (busy)
                return -EAGAIN;
            if (!p)
                strobe__count_dropped(t, 1);
        }
    } else {
        /* THREAD_END may use the tail reserve of the last chunk (its whole
         * purpose), but never a chunk that does not exist. */
        p = t->pos;
        if ((size_t)(strobe__mfile_end(&t->evt) - p) < need) {
            p = t->evt.last ? NULL : next_chunk(t, wait, &busy);
            if (busy)
                return -EAGAIN;
            if (!p)
                strobe__count_dropped(t, 1);
        }
    }
    if (!p)
        return STROBE_ERR_LIMIT;
    uint64_t d = strobe__take_delta(t, now);
    uint8_t *q = strobe_uleb_put(p + 1, d);
    q = strobe_uleb_put(q, len);
    memcpy(q, payload, len);
    /* b0 last: a killed process leaves either the record or a zero byte. */
    atomic_signal_fence(memory_order_seq_cst);
    *p = (uint8_t)type;
    t->pos = q + len;
    t->ext_records++;
    return 0;
}

int strobe__ext_record(struct strobe__thread *t, unsigned type, uint64_t now, const uint8_t *payload,
                       size_t len)
{
    return ext_record(t, type, now, payload, len, true);
}

int strobe__ext_record_nowait(struct strobe__thread *t, unsigned type, uint64_t now, const uint8_t *payload,
                              size_t len)
{
    return ext_record(t, type, now, payload, len, false);
}

bool strobe__stack_grow(struct strobe__thread *t)
{
    if (t->stack_cap >= STROBE__MAX_FRAMES)
        return false;
    uint32_t cap = 2 * t->stack_cap;
    size_t depth = (size_t)(t->sp - t->stack);
    pthread_mutex_lock(&strobe__rt.lock); /* see next_chunk */
    struct strobe__frame *s = strobe__pages_grow(t->stack, frames_bytes(t->stack_cap), frames_bytes(cap));
    if (s) {
        t->stack = s;
        t->stack_cap = cap;
        t->sp = s + depth;
        t->stack_end = s + cap;
    }
    pthread_mutex_unlock(&strobe__rt.lock);
    return s != NULL;
}

/* ---- begin / end ---- */

static int write_thread_begin(struct strobe__thread *t, uint64_t now)
{
    uint8_t payload[20], *q = payload;
    q = strobe_uleb_put(q, t->tid);
    q = strobe_uleb_put(q, t->parent_plus1);
    return strobe__ext_record(t, STROBE_EXT_THREAD_BEGIN, now, payload, (size_t)(q - payload));
}

/* Creates the thread's files in the current process directory. Called
 * with STROBE__BUSY_IN set; clears mode bits of files it cannot create. */
static void open_files(struct strobe__thread *t, uint64_t now)
{
    char name[40], num[24];
    t->mode = strobe__rt.mode;
    t->begin_ticks = now;
    if (t->mode & STROBE__MODE_TRACE) {
        strobe__concat(name, sizeof name, "t", strobe__fmt_u64(num, t->index), ".evt", (char *)NULL);
        /* a ring's limit is the budget; STROBE_TRACE_LIMIT still bounds the
         * block streams (bb.c), which are not rings */
        int rc = strobe__mfile_create(&t->evt, strobe__rt.proc_fd, name, STROBE_MAGIC_EVENTS,
                                      strobe__rt.cfg.chunk_size, ring_mode() ? 0 : strobe__rt.cfg.trace_limit,
                                      t->index, now, &t->pos);
        if (rc == 0) {
            t->last_ticks = now;
            set_limit(t);
            t->evt.hdr->flags = STROBE_STREAM_CHUNKED;
            if (ring_mode()) {
                /* the first chunk, taken from the budget whatever is left */
                atomic_fetch_sub_explicit(&strobe__rt.ring_left, (int64_t)strobe__rt.cfg.chunk_size,
                                          memory_order_relaxed);
                t->evt.hdr->flags |= STROBE_STREAM_RING;
            }
            chunk_record(t); /* an empty stack always fits */
            write_thread_begin(t, now);
        } else {
            strobe__say(name, ": ", strerror(-rc), "; this thread is not traced", (char *)NULL);
            t->mode &= ~STROBE__MODE_TRACE;
        }
    }
    if (t->mode & STROBE__MODE_PROFILE) {
        int rc = strobe__profile_open(t);
        if (rc) {
            strobe__concat(name, sizeof name, "t", strobe__fmt_u64(num, t->index), ".prof", (char *)NULL);
            strobe__say(name, ": ", strerror(-rc), "; this thread is not profiled", (char *)NULL);
            t->mode &= ~STROBE__MODE_PROFILE;
        }
    }
}

int strobe__thread_attach(struct strobe__thread *t)
{
    struct strobe__tls *tl = &strobe__tls;
    tl->state = STROBE__TLS_STARTING;
    __atomic_store_n(&t->busy, STROBE__BUSY_IN, __ATOMIC_RELAXED);
    t->tid = strobe__gettid();
    open_files(t, strobe__clock_read(strobe__rt.cfg.clock_kind));
    pthread_mutex_lock(&strobe__rt.lock);
    list_add(t);
    pthread_mutex_unlock(&strobe__rt.lock);
    /* The key's destructor ends threads that leave without passing through
     * our pthread_exit or start-routine wrapper (cancellation, threads the
     * runtime did not see created). */
    pthread_setspecific(strobe__rt.thread_key, t);
    tl->t = t;
    atomic_signal_fence(memory_order_seq_cst);
    tl->state = STROBE__TLS_ACTIVE;
    strobe__sample_arm(t);
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return 0;
}

struct strobe__thread *strobe__thread_current(void)
{
    struct strobe__tls *tl = &strobe__tls;
    if (STROBE_LIKELY(tl->t != NULL))
        return tl->t;
    if (tl->state != STROBE__TLS_NONE)
        return NULL;
    int rs = strobe__runtime_ensure();
    if (rs != STROBE__ACTIVE) {
        /* Off for good: later events of this thread stop at the TLS check
         * instead of asking again. (INITIALIZING passes; ask next time.) */
        if (rs == STROBE__OFF || rs == STROBE__FINISHED)
            tl->state = STROBE__TLS_ENDED;
        return NULL;
    }
    if (tl->t) /* start-up registered this thread */
        return tl->t;
    if (tl->state != STROBE__TLS_NONE)
        return NULL;
    if (tl->pending) { /* created through pthread_create (TSan builds) */
        struct strobe__thread *t = tl->pending;
        tl->pending = NULL;
        strobe__thread_attach(t);
        return t;
    }
    tl->state = STROBE__TLS_STARTING;
    /* The process's main thread is always t0, whenever it shows up. */
    uint32_t index = strobe__gettid() == (uint64_t)getpid()
                         ? 0
                         : atomic_fetch_add_explicit(&strobe__rt.next_index, 1, memory_order_relaxed);
    struct strobe__thread *t = strobe__thread_alloc(index, 0);
    if (!t) {
        tl->state = STROBE__TLS_ENDED;
        return NULL;
    }
    strobe__thread_attach(t);
    return t;
}

static uint64_t tv_us(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

/* The THREAD_END resource usage fields of the calling thread. */
static void rusage_self(uint64_t out[7])
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        memset(&ru, 0, sizeof ru);
    uint64_t v[7] = {tv_us(ru.ru_utime),     tv_us(ru.ru_stime),     (uint64_t)ru.ru_maxrss, (uint64_t)ru.ru_minflt,
                     (uint64_t)ru.ru_majflt, (uint64_t)ru.ru_nvcsw, (uint64_t)ru.ru_nivcsw};
    memcpy(out, v, sizeof v);
}

/* Reads a small /proc file into buf (NUL-terminated); false on failure. */
static bool read_proc(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = 0;
    return true;
}

/* The same fields for another thread of this process, which getrusage
 * cannot give: /proc/self/task/<tid>/stat (times, faults) and status
 * (context switches); maxrss is the process's, as RUSAGE_THREAD gives it. */
static bool rusage_other(uint64_t tid, uint64_t out[7])
{
    char path[64], num[24], buf[2048];
    strobe__concat(path, sizeof path, "/proc/self/task/", strobe__fmt_u64(num, tid), "/stat", (char *)NULL);
    if (!read_proc(path, buf, sizeof buf))
        return false;
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    uint64_t field[13] = {0};          /* fields 3 (state) to 15 (stime) */
    for (int i = 0; p && i < 13; i++) {
        while (*p && *p != ' ')
            p++;
        while (*p == ' ')
            p++;
        field[i] = strtoull(p, NULL, 10);
    }
    if (!p)
        return false;
    long hz = sysconf(_SC_CLK_TCK);
    uint64_t us_per_tick = hz > 0 ? 1000000u / (uint64_t)hz : 10000u;
    struct rusage self;
    if (getrusage(RUSAGE_SELF, &self) != 0)
        self.ru_maxrss = 0;
    out[0] = field[11] * us_per_tick;
    out[1] = field[12] * us_per_tick;
    out[2] = (uint64_t)self.ru_maxrss;
    out[3] = field[7];
    out[4] = field[9];
    out[5] = out[6] = 0;
    strobe__concat(path, sizeof path, "/proc/self/task/", num, "/status", (char *)NULL);
    if (read_proc(path, buf, sizeof buf)) {
        const char *v = strstr(buf, "\nvoluntary_ctxt_switches:");
        const char *nv = strstr(buf, "\nnonvoluntary_ctxt_switches:");
        if (v)
            out[5] = strtoull(strchr(v, ':') + 1, NULL, 10);
        if (nv)
            out[6] = strtoull(strchr(nv, ':') + 1, NULL, 10);
    }
    return true;
}

/* Writes t's summary and open frames into defs (format.h,
 * STROBE_DEF_THREAD_SUMMARY and OPEN_FRAMES). Caller holds the lock; t
 * records nothing any more. */
static void summarize_locked(struct strobe__thread *t, unsigned how, uint64_t end, const uint64_t *rusage)
{
    struct strobe__thread_summary s = {.index = t->index,
                                       .tid = t->tid,
                                       .parent_plus1 = t->parent_plus1,
                                       .begin_ticks = t->begin_ticks,
                                       .how = how,
                                       .end_ticks = end,
                                       .tail_offset = t->tail_offset,
                                       .has_rusage = rusage != NULL};
    /* the recorded frames: not those standing for frames entered while
     * paused, which have no ENTER and no visit (pause.h) */
    size_t depth = 0;
    for (const struct strobe__frame *f = t->stack + 1; f < t->sp; f++)
        depth += f->key != STROBE__HIDDEN_KEY;
    bool prof = (t->mode & STROBE__MODE_PROFILE) && t->slots;
    /* enter and exit events measured: from the visits (each counted at
     * its enter; the open ones have not exited), else counted */
    uint64_t enter_exit = t->done_events + t->chunk_events;
    if (prof) {
        uint64_t visits = t->overflow_node.visits;
        for (uint32_t i = 1; i < t->prof.hdr->slot_count; i++)
            if (t->slots[i].tag == STROBE_SLOT_NODE)
                visits += t->slots[i].visits;
        enter_exit = 2 * visits - depth;
    }
    if ((t->mode & STROBE__MODE_TRACE) && t->evt.hdr) {
        /* the stream's records: a ring's overwritten ones are not */
        s.events = enter_exit - (prof ? t->lost_enter_exit : 0) + t->ext_records - t->ring_overwritten;
        s.overwritten = t->ring_overwritten;
        s.bytes = t->done_bytes + chunk_bytes(t);
        s.dropped = __atomic_load_n(&t->evt.hdr->dropped, __ATOMIC_RELAXED);
        s.limit = t->evt.hdr->limit_bytes;
    } else {
        s.events = enter_exit; /* no stream */
    }
    if (rusage)
        memcpy(s.rusage, rusage, sizeof s.rusage);
    s.depth = depth;
    strobe__defs_thread_summary(&s);
    struct strobe__open_frame batch[STROBE__OPEN_FRAMES_MAX];
    const struct strobe__frame *f = t->stack + 1;
    for (size_t first = 0; first < depth; first += STROBE__OPEN_FRAMES_MAX) {
        size_t n = depth - first < STROBE__OPEN_FRAMES_MAX ? depth - first : STROBE__OPEN_FRAMES_MAX;
        for (size_t i = 0; i < n; i++, f++) {
            while (f->key == STROBE__HIDDEN_KEY)
                f++;
            bool slot = prof && f->node != &t->overflow_node;
            batch[i] = (struct strobe__open_frame){
                f->region, slot ? (uint32_t)(f->node - t->slots) + 1 : 0, f->start};
        }
        strobe__defs_open_frames(t->index, first, batch, n);
    }
}

void strobe__thread_exit_hooks(struct strobe__thread *t)
{
    bool traced = (t->mode & STROBE__MODE_TRACE) && t->evt.hdr;
    uint64_t records = t->ext_records, offset = traced ? strobe__mfile_offset(&t->evt, t->pos) : 0;
    strobe__run_thread_end_hooks(1);
    if (traced && t->ext_records != records)
        t->tail_offset = offset;
}

/* Waits until t is outside the runtime or `deadline` (CLOCK_MONOTONIC ns)
 * passes: at process exit, a thread that was in the middle of an event
 * when the state changed finishes it; later events are not recorded
 * (state FINISHED). A thread stuck inside the runtime (waiting for the
 * lock the caller holds) is summarized as it stands. */
static void wait_idle(struct strobe__thread *t, uint64_t deadline)
{
    while ((__atomic_load_n(&t->busy, __ATOMIC_ACQUIRE) & STROBE__BUSY_IN) && strobe__mono_ns() < deadline)
        sched_yield();
}

/* What process exit may spend waiting for threads to leave the runtime. */
#define EXIT_WAIT_NS (10u * 1000 * 1000)

void strobe__threads_summarize_at_exit(uint64_t end_ticks)
{
    uint64_t deadline = strobe__mono_ns() + EXIT_WAIT_NS;
    for (struct strobe__thread *t = strobe__rt.threads; t; t = t->next) {
        uint64_t ru[7];
        atomic_store_explicit(&t->closed, true, memory_order_release);
        wait_idle(t, deadline);
        summarize_locked(t, STROBE_THREAD_AT_EXIT, end_ticks, rusage_other(t->tid, ru) ? ru : NULL);
    }
}

void strobe__thread_end(struct strobe__thread *t)
{
    struct strobe__tls *tl = &strobe__tls;
    /* the adapters' last word, while the thread is still measured */
    if (tl->t == t && strobe__active() && !(__atomic_load_n(&t->busy, __ATOMIC_RELAXED) & STROBE__BUSY_IN))
        strobe__run_thread_end_hooks(0);
    if (tl->t == t)
        strobe__sample_disarm(t);
    strobe__busy_set(t, STROBE__BUSY_IN);
    /* From here on this thread's events are ignored, including those of a
     * signal handler interrupting what follows. */
    if (tl->t == t) {
        tl->t = NULL;
        atomic_signal_fence(memory_order_seq_cst);
        tl->state = STROBE__TLS_ENDED;
        pthread_setspecific(strobe__rt.thread_key, NULL);
    }
    /* no signal writes any more: tl->t is NULL */
    strobe__sample_flush(t);
    uint64_t now = strobe__now(t);
    uint64_t ru[7];
    rusage_self(ru);
    if (t->mode & STROBE__MODE_TRACE) {
        uint8_t payload[70], *q = payload;
        for (int i = 0; i < 7; i++)
            q = strobe_uleb_put(q, ru[i]);
        strobe__ext_record(t, STROBE_EXT_THREAD_END, now, payload, (size_t)(q - payload));
    }
    /* Under the lock, like every change to a thread's mappings, so that a
     * fork() in another thread sees either all of them or none. */
    pthread_mutex_lock(&strobe__rt.lock);
    strobe__clock_sync_locked(SYNC_GAP_THREAD_NS);
    summarize_locked(t, STROBE_THREAD_ENDED, now, ru);
    list_remove(t);
    strobe__publish_retire_locked(t);
    strobe__mfile_close(&t->evt, t->pos);
    strobe__bb_close(t);
    strobe__profile_close(t);
    pthread_mutex_unlock(&strobe__rt.lock);
    strobe__thread_free(t);
}

/* ---- fork ---- */

void strobe__threads_abandon_after_fork(struct strobe__thread *keep)
{
    struct strobe__thread *t = strobe__rt.threads;
    while (t) {
        struct strobe__thread *next = t->next;
        strobe__mfile_abandon(&t->evt);
        strobe__bb_abandon(t);
        strobe__profile_abandon(t);
        strobe__sample_abandon(t);
        t->next = NULL;
        t->prev_next = NULL;
        if (t != keep)
            strobe__thread_free(t); /* that thread does not exist here */
        t = next;
    }
    strobe__rt.threads = NULL;
    strobe__pages_free(strobe__rt.joins, strobe__rt.joins_cap * sizeof *strobe__rt.joins);
    strobe__rt.joins = NULL;
    strobe__rt.joins_cap = strobe__rt.joins_used = 0;
}

int strobe__thread_rebirth_after_fork(struct strobe__thread *t, uint64_t now)
{
    t->index = 0;
    t->parent_plus1 = 0;
    t->tid = strobe__gettid();
    t->last_region = 0;
    t->chunk_events = 0;
    strobe__sync_free(t);
    t->done_events = t->done_bytes = t->tail_offset = t->ext_records = t->lost_enter_exit = 0;
    t->chunk_seq = t->ring_overwritten = 0;
    /* The child is a process of its own: its call stack starts empty.
     * The exits of the frames it inherited find nothing to leave and are
     * ignored, so the parent's visits are neither counted twice nor cut. */
    t->sp = t->stack + 1;
    t->lost_depth = 0;
    t->hidden = 0;
    __atomic_store_n(&t->busy,
                     __atomic_load_n(&t->busy, __ATOMIC_RELAXED) & ~(STROBE__BUSY_DEEP | STROBE__BUSY_HIDDEN),
                     __ATOMIC_RELAXED);
    open_files(t, now);
    list_add(t);
    strobe__sample_arm(t);
    return 0;
}

/* ---- pthread_t -> index ---- */

static size_t join_hash(pthread_t th, size_t cap)
{
    return (size_t)(((uint64_t)th * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

void strobe__join_map_put(pthread_t thread, uint32_t index)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (2 * (rt->joins_used + 1) > rt->joins_cap) {
        size_t cap = rt->joins_cap ? 2 * rt->joins_cap : 256;
        struct strobe__join_slot *tab = strobe__pages_alloc(cap * sizeof *tab);
        if (!tab)
            return; /* out of memory: this thread's join will not be recorded */
        for (size_t i = 0; i < rt->joins_cap; i++) {
            if (!rt->joins[i].index_plus1)
                continue;
            size_t j = join_hash(rt->joins[i].thread, cap);
            while (tab[j].index_plus1)
                j = (j + 1) & (cap - 1);
            tab[j] = rt->joins[i];
        }
        strobe__pages_free(rt->joins, rt->joins_cap * sizeof *tab);
        rt->joins = tab;
        rt->joins_cap = cap;
    }
    size_t i = join_hash(thread, rt->joins_cap);
    while (rt->joins[i].index_plus1 && !pthread_equal(rt->joins[i].thread, thread))
        i = (i + 1) & (rt->joins_cap - 1);
    /* An existing entry for the same pthread_t belonged to a detached
     * thread that ended without a join: its handle was reused. */
    if (!rt->joins[i].index_plus1)
        rt->joins_used++;
    rt->joins[i].thread = thread;
    rt->joins[i].index_plus1 = index + 1;
}

bool strobe__join_map_take(pthread_t thread, uint32_t *index)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (!rt->joins_cap)
        return false;
    size_t mask = rt->joins_cap - 1;
    size_t i = join_hash(thread, rt->joins_cap);
    while (rt->joins[i].index_plus1 && !pthread_equal(rt->joins[i].thread, thread))
        i = (i + 1) & mask;
    if (!rt->joins[i].index_plus1)
        return false;
    *index = rt->joins[i].index_plus1 - 1;
    /* Backward-shift deletion keeps every probe chain unbroken. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; rt->joins[j].index_plus1; j = (j + 1) & mask) {
        size_t home = join_hash(rt->joins[j].thread, rt->joins_cap);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            rt->joins[hole] = rt->joins[j];
            hole = j;
        }
    }
    rt->joins[hole].index_plus1 = 0;
    rt->joins_used--;
    return true;
}
