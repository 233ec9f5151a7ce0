/* SPDX-License-Identifier: MIT */
/*
 * Basic-block and memory tracing, runtime side (see bb.h): the cursor,
 * strobe_bb_refill, strobe_bb_register, MARK records, and the `blocks`
 * file.
 *
 * Invariants of a thread's struct strobe__bb_stream s:
 *   - s->file.fd < 0: no stream (not yet created, or stopped before one
 *     could be); the cursor is NULL or on its scratch area.
 *   - stream open, s->pos == NULL: the cursor writes into the current
 *     chunk; the data ends at cursor.pos.
 *   - stream open, s->pos != NULL: the cursor is on scratch (the stream
 *     stopped, or a signal handler's segments were diverted while the
 *     runtime worked for the thread); the data ends at s->pos. Segments
 *     written to scratch changed the modules' delta state, so the stream
 *     resumes only at a new chunk, never where it stopped.
 */
#define _GNU_SOURCE
#include "core/bb.h"

#include <string.h>

#include "core/hotpath.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "core/util.h"
#include "strobe/strobe.h"

/* The definition the instrumented modules' weak ones stand for when the
 * executable has none. Default visibility, and referenced here through the
 * GOT (initial-exec), so that an instrumented executable's definition
 * interposes and this library writes MARKs at the same cursor as the
 * executable's code. Nothing in the build may bind it locally
 * (-Bsymbolic, protected visibility): tests/analysis/test_blocks would
 * see the runtime write into a cursor the fixture never reads. */
STROBE_API __thread struct strobe_bb_cursor strobe_bb_cursor __attribute__((tls_model("initial-exec")));

/* Largest payload of one `blocks` record: well inside the smallest chunk. */
#define TABLE_RECORD_MAX 2048u

static uint8_t *scratch(struct strobe_bb_cursor *c)
{
    c->pos = c->scratch;
    c->limit = c->scratch + sizeof c->scratch;
    return c->pos;
}

/* Diverts the cursor to scratch, remembering where t's stream data ends. */
static uint8_t *park(struct strobe__thread *t, struct strobe_bb_cursor *c)
{
    struct strobe__bb_stream *s = &t->bb;
    if (s->file.fd >= 0 && !s->pos && s->cursor == c)
        s->pos = c->pos;
    return scratch(c);
}

/* The delta state of every registered module starts again (a new chunk). */
static void reset_modules(void)
{
    uint32_t n =
        atomic_load_explicit(&strobe__rt.bb.nmodules, memory_order_acquire); /* pairs with register */
    for (uint32_t i = 0; i < n; i++)
        if (strobe__rt.bb.modules[i]->reset)
            strobe__rt.bb.modules[i]->reset();
}

/* A stream that cannot go on: the cursor stays on scratch for good. */
static uint8_t *stop(struct strobe__thread *t, struct strobe_bb_cursor *c, uint8_t *end)
{
    t->bb.stopped = true;
    if (t->bb.file.fd >= 0)
        t->bb.pos = end;
    return scratch(c);
}

/* Room for `need` bytes in t's stream at the cursor c (t's own): its
 * position, after creating the stream or moving to a new chunk as needed;
 * or the scratch area when the thread's blocks are not recorded. Called
 * with STROBE__BUSY_IN set. */
static uint8_t *room(struct strobe__thread *t, struct strobe_bb_cursor *c, uint32_t need)
{
    struct strobe__bb_stream *s = &t->bb;
    struct strobe__runtime *rt = &strobe__rt;
    if (s->stopped)
        return scratch(c);
    s->cursor = c;
    uint8_t *end = s->file.fd >= 0 ? (s->pos ? s->pos : c->pos) : NULL;
    if (end && !s->pos && !__atomic_load_n(&rt->bb.off, __ATOMIC_RELAXED) &&
        (size_t)(strobe__mfile_end(&s->file) - end) >= need) {
        c->limit = strobe__mfile_end(&s->file);
        return end;
    }
    uint8_t *p = NULL;
    int rc;
    /* Under the lock, like every change of a thread's mappings, so that a
     * fork() in another thread sees all of them or none (thread.c). */
    pthread_mutex_lock(&rt->lock);
    if (rt->bb.off) {
        rc = STROBE_ERR_DISABLED;
    } else if (s->file.fd < 0) {
        char name[40], num[24];
        strobe__concat(name, sizeof name, "t", strobe__fmt_u64(num, t->index), ".bb", (char *)NULL);
        rc = strobe__mfile_create(&s->file, rt->proc_fd, name, STROBE_MAGIC_BLOCKS, rt->cfg.chunk_size,
                                  rt->cfg.trace_limit, t->index, 0, &p);
        if (rc && rc != STROBE_ERR_LIMIT)
            strobe__say(rt->proc_name, "/", name, ": ", strerror(-rc),
                        "; the blocks of this thread are not recorded", (char *)NULL);
    } else {
        rc = strobe__mfile_next(&s->file, &p);
    }
    if (rc == 0) {
        s->pos = NULL;
        c->pos = p;
        c->limit = strobe__mfile_end(&s->file);
    }
    pthread_mutex_unlock(&rt->lock);
    if (rc)
        return stop(t, c, end);
    /* Outside the lock: it touches a whole chunk (mfile.h). */
    if (s->file.chunk_index)
        strobe__mfile_prefault(&s->file);
    /* the chunk decodes alone: no previous block id, no previous addresses */
    c->last_id = 0;
    reset_modules();
    return p;
}

/* Block recording ends for the whole process (said once): every thread's
 * next segment asks for room and gets scratch, including the segments of
 * modules that could not be registered, whose ids would be wrong. */
static void all_off_locked(const char *module, const char *why)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (!rt->bb.off)
        strobe__say(module && *module ? module : "a module", ": ", why,
                    "; blocks are no longer recorded in this process", (char *)NULL);
    __atomic_store_n(&rt->bb.off, true, __ATOMIC_RELAXED);
    /* limit NULL: the next segment of every thread calls refill, which
     * sees `off` under the lock (room); pos stays, the data ends there. */
    for (struct strobe__thread *t = rt->threads; t; t = t->next)
        if (t->bb.cursor && t->bb.file.fd >= 0 && !t->bb.pos)
            __atomic_store_n(&t->bb.cursor->limit, NULL, __ATOMIC_RELAXED);
}

STROBE_API uint8_t *strobe_bb_refill(uint32_t need)
{
    struct strobe_bb_cursor *c = &strobe_bb_cursor;
    struct strobe__tls *tl = &strobe__tls;
    struct strobe__thread *t = tl->t;
    if (!t && tl->state == STROBE__TLS_NONE)
        t = strobe__thread_current();
    if (!t)
        return scratch(c);
    /* Busy: a signal handler's segments interrupting the runtime (perhaps
     * this very function) on this thread. */
    if (STROBE_UNLIKELY(__atomic_load_n(&t->busy, __ATOMIC_RELAXED) & STROBE__BUSY_IN))
        return park(t, c);
    if (!strobe__active() || atomic_load_explicit(&t->closed, memory_order_acquire) ||
        need > STROBE_BB_MAX_RECORD)
        return park(t, c);
    strobe__busy_set(t, STROBE__BUSY_IN);
    /* Room at the cursor this library sees, yet the caller asks for some:
     * the caller's cursor is another one (an executable that does not
     * export its strobe_bb_cursor binds its code to its own definition,
     * which no reference here reaches). Its records would land nowhere. */
    struct strobe__bb_stream *s = &t->bb;
    if (STROBE_UNLIKELY(s->file.fd >= 0 && !s->pos && c->limit &&
                        (uintptr_t)c->pos + need <= (uintptr_t)c->limit)) {
        pthread_mutex_lock(&strobe__rt.lock);
        all_off_locked("the program",
                       "its strobe_bb_cursor is not the runtime's (an executable must export it: "
                       "-Wl,--export-dynamic-symbol=strobe_bb_cursor, as `strobe cc` links)");
        pthread_mutex_unlock(&strobe__rt.lock);
    }
    uint8_t *p = room(t, c, need);
    strobe__busy_clear(t, STROBE__BUSY_IN);
    return p;
}

void strobe__bb_mark(struct strobe__thread *t, uint64_t ticket)
{
    /* Nothing traced by blocks in this process (yet): no stream to mark. */
    if (atomic_load_explicit(&strobe__rt.bb.nmodules, memory_order_relaxed) == 0)
        return;
    struct strobe_bb_cursor *c = &strobe_bb_cursor;
    uint8_t *p = room(t, c, 1 + 10);
    if (t->bb.pos || t->bb.file.fd < 0)
        return; /* on scratch: not recorded */
    uint8_t *q = strobe_uleb_put(p + 1, ticket);
    /* b0 last: a killed process leaves either the record or a zero byte. */
    atomic_signal_fence(memory_order_seq_cst);
    *p = STROBE_BB_MARK;
    c->pos = q;
}

void strobe__bb_close(struct strobe__thread *t)
{
    struct strobe__bb_stream *s = &t->bb;
    struct strobe_bb_cursor *c = s->cursor;
    uint8_t *end = s->pos ? s->pos : c ? c->pos : NULL;
    /* Before the unmapping: the thread's later segments go to scratch. */
    if (c == &strobe_bb_cursor)
        c->pos = c->limit = NULL;
    if (s->file.fd >= 0)
        strobe__mfile_close(&s->file, end);
    s->stopped = true;
    s->pos = NULL;
}

void strobe__bb_abandon(struct strobe__thread *t)
{
    strobe__mfile_abandon(&t->bb.file);
    t->bb.pos = NULL;
    t->bb.stopped = false;
    t->bb.cursor = NULL;
}

void strobe__bb_atfork_child_cursor(void)
{
    strobe_bb_cursor.pos = strobe_bb_cursor.limit = NULL;
}

/* ---- the `blocks` file (format.h, "Block tables"); under the lock ---- */

/* Appends one record; 0 or a negative code (disk full). */
static int table_record(unsigned type, const uint8_t *payload, size_t len)
{
    struct strobe__bb *bb = &strobe__rt.bb;
    size_t need = 1 + 2 + len;
    if ((size_t)(strobe__mfile_end(&bb->tables) - bb->tables_pos) < need) {
        int rc = strobe__mfile_next(&bb->tables, &bb->tables_pos);
        if (rc)
            return rc;
    }
    uint8_t *p = bb->tables_pos;
    uint8_t *q = strobe_uleb_put(p + 1, len);
    memcpy(q, payload, len);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(p, (uint8_t)type, __ATOMIC_RELAXED);
    bb->tables_pos = q + len;
    return 0;
}

/* Record batches: entries are appended to buf until the next one might
 * not fit, then the record goes out with its count in front. */
struct batch {
    unsigned type;
    uint32_t n;
    size_t len;
    uint8_t buf[TABLE_RECORD_MAX];
};

static int batch_flush(struct batch *b)
{
    if (b->n == 0)
        return 0;
    uint8_t rec[TABLE_RECORD_MAX + 10];
    uint8_t *q = strobe_uleb_put(rec, b->n);
    memcpy(q, b->buf, b->len);
    int rc = table_record(b->type, rec, (size_t)(q - rec) + b->len);
    b->n = 0;
    b->len = 0;
    return rc;
}

/* Room for an entry of at most `max` bytes: flushes when needed. */
static int batch_room(struct batch *b, size_t max)
{
    return b->len + max > sizeof b->buf ? batch_flush(b) : 0;
}

/* One entry of n ulebs. */
static int batch_put(struct batch *b, const uint64_t *v, size_t n)
{
    int rc = batch_room(b, 10 * n);
    if (rc)
        return rc;
    uint8_t *p = b->buf + b->len;
    for (size_t i = 0; i < n; i++)
        p = strobe_uleb_put(p, v[i]);
    b->len = (size_t)(p - b->buf);
    b->n++;
    return 0;
}

static int write_module(const struct strobe_bb_module *m, uint32_t first)
{
    uint8_t head[5 * 10 + 10 + STROBE_BT_NAME_MAX], *q = head;
    q = strobe_uleb_put(q, first);
    q = strobe_uleb_put(q, m->nblocks);
    q = strobe_uleb_put(q, m->nops);
    q = strobe_uleb_put(q, m->nnames);
    q = strobe_uleb_put(q, m->level);
    size_t n = m->name ? strnlen(m->name, STROBE_BT_NAME_MAX) : 0;
    q = strobe_uleb_put(q, n);
    memcpy(q, m->name ? m->name : "", n);
    int rc = table_record(STROBE_BT_MODULE, head, (size_t)(q - head) + n);
    struct batch b = {.type = STROBE_BT_NAMES};
    for (uint32_t i = 0; rc == 0 && i < m->nnames; i++) {
        const char *s = m->names[i] ? m->names[i] : "";
        size_t len = strnlen(s, STROBE_BT_NAME_MAX);
        if ((rc = batch_room(&b, len + 2)) != 0)
            break;
        uint8_t *p = strobe_uleb_put(b.buf + b.len, len);
        memcpy(p, s, len);
        b.len = (size_t)(p - b.buf) + len;
        b.n++;
    }
    if (rc == 0)
        rc = batch_flush(&b);
    b.type = STROBE_BT_BLOCKS;
    for (uint32_t i = 0; rc == 0 && i < m->nblocks; i++) {
        const struct strobe_bb_block *k = &m->blocks[i];
        const uint64_t v[] = {k->first_op, k->nops, k->recorded, k->function, k->file, k->line};
        rc = batch_put(&b, v, 6);
    }
    if (rc == 0)
        rc = batch_flush(&b);
    b.type = STROBE_BT_OPS;
    for (uint32_t i = 0; rc == 0 && i < m->nops; i++) {
        const struct strobe_bb_op *o = &m->ops[i];
        const uint64_t v[] = {
            o->size, o->line, o->column, o->kind, strobe_zigzag(o->base), strobe_zigzag(o->offset)};
        rc = batch_put(&b, v, 6);
    }
    if (rc == 0)
        rc = batch_flush(&b);
    return rc;
}

static int tables_open(void)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (rt->bb.tables.fd >= 0)
        return 0;
    return strobe__mfile_create(&rt->bb.tables, rt->proc_fd, "blocks", STROBE_MAGIC_BLOCK_TABLES,
                                rt->cfg.chunk_size, 0, 0, 0, &rt->bb.tables_pos);
}

STROBE_API void strobe_bb_register(const struct strobe_bb_module *m)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (!m || strobe__runtime_ensure() != STROBE__ACTIVE)
        return;
    pthread_mutex_lock(&rt->lock);
    struct strobe__bb *bb = &rt->bb;
    uint32_t n = atomic_load_explicit(&bb->nmodules, memory_order_relaxed);
    int rc;
    if (bb->off) {
        /* said already */
    } else if (m->abi != STROBE_BB_ABI ||
               (m->level != STROBE_BB_LEVEL_BB && m->level != STROBE_BB_LEVEL_MEM)) {
        all_off_locked(m->abi == STROBE_BB_ABI ? m->name : NULL,
                       "compiled by another version of `strobe cc` (block-tracing ABI)");
    } else if (n == STROBE__BB_MAX_MODULES || m->nblocks > STROBE_BB_MAX_ID - bb->next_id) {
        all_off_locked(m->name, "more blocks than 23-bit ids (8388607) or more than 4096 traced modules");
    } else if ((rc = tables_open()) != 0 || (rc = write_module(m, bb->next_id + 1)) != 0) {
        all_off_locked("blocks", strerror(-rc));
    } else {
        *m->base = bb->next_id << 1 | 1;
        bb->modules[n] = m;
        bb->first_id[n] = bb->next_id + 1;
        bb->next_id += m->nblocks;
        atomic_store_explicit(&bb->nmodules, n + 1, memory_order_release); /* pairs with reset_modules */
        /* the task graph needs every synchronization call (sync.c) */
        if (rt->cfg.locks)
            atomic_store_explicit(&rt->sync_all, true, memory_order_relaxed);
    }
    pthread_mutex_unlock(&rt->lock);
}

void strobe__bb_finish_locked(void)
{
    strobe__mfile_close(&strobe__rt.bb.tables, strobe__rt.bb.tables_pos);
    strobe__rt.bb.tables_pos = NULL;
}

int strobe__bb_atfork_child_tables(void)
{
    struct strobe__bb *bb = &strobe__rt.bb;
    strobe__mfile_abandon(&bb->tables);
    bb->tables_pos = NULL;
    uint32_t n = atomic_load_explicit(&bb->nmodules, memory_order_relaxed);
    int rc = n ? tables_open() : 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        rc = write_module(bb->modules[i], bb->first_id[i]);
    return rc;
}
