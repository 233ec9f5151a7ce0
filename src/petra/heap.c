/* SPDX-License-Identifier: MIT */
/* The heap file and its allocators (layout in heap.h, docs/petra.md). */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "petra/heap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "petra/checkpoint.h"
#include "petra/pmem.h"

#define DEFAULT_SIZE (256ull << 20)
#define DEFAULT_THREADS 16u
#define DEFAULT_LOG (4ull << 20)
#define MIN_LOG (64ull << 10)

void strobe__petra_why(char *why, size_t len, const char *fmt, ...)
{
    if (!why || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

uint64_t strobe__petra_hash(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *b = p;
    uint64_t h = seed ^ (n * 0x9E3779B97F4A7C15ull);
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h ^= w;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static uint64_t super_check(const struct petra_super *s)
{
    return strobe__petra_hash(s, offsetof(struct petra_super, check), 0x5045545241ull);
}

static uint64_t entry_check(const struct petra_table_entry *e)
{
    return strobe__petra_hash(e, offsetof(struct petra_table_entry, check), 0x7461626c65ull);
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* One process per heap: recovery at open and the checkpoint at close write
 * the file, and two live mappings would each rebuild the arena under the
 * other. An exclusive OFD lock on byte 0 of h->fd; it belongs to this open
 * file description, so it dies with the process (even SIGKILLed) and
 * another descriptor of the same process conflicts with it too. OFD locks
 * report no owner (F_OFD_GETLK gives l_pid = -1), so the holder writes its
 * pid into the owner record (write_owner) once it has the lock and knows
 * the file is a heap; a refused opener names that pid if the process
 * still exists. -EBUSY when another holds it. */
static int lock_file(struct strobe_petra *h, char *why, size_t why_len)
{
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    struct petra_owner o;
    if (fcntl(h->fd, F_OFD_SETLK, &fl) == 0)
        return 0;
    if (errno != EAGAIN && errno != EACCES) {
        int rc = -errno;
        strobe__petra_why(why, why_len, "%s: lock: %s", h->path, strerror(errno));
        return rc;
    }
    /* the holder may not have written its pid yet, or the record may be a
     * dead owner's: name only a process that exists */
    if (pread(h->fd, &o, sizeof o, PETRA_OWNER_OFF) == (ssize_t)sizeof o &&
        !memcmp(o.magic, PETRA_OWNER_MAGIC, 8) && o.pid > 0 && o.pid < INT32_MAX &&
        (kill((pid_t)o.pid, 0) == 0 || errno == EPERM))
        strobe__petra_why(why, why_len, "%s: in use by process %llu (it holds the heap's lock)",
                          h->path, (unsigned long long)o.pid);
    else
        strobe__petra_why(why, why_len, "%s: in use by another process (it holds the heap's lock)",
                          h->path);
    return -EBUSY;
}

/* Advisory and outside every checksum: a failed write only loses the
 * holder's pid from another opener's message. */
static void write_owner(struct strobe_petra *h)
{
    struct petra_owner o = { .pid = (uint64_t)getpid() };
    memcpy(o.magic, PETRA_OWNER_MAGIC, 8);
    (void)!pwrite(h->fd, &o, sizeof o, PETRA_OWNER_OFF);
}

static int map_file(struct strobe_petra *h, uint64_t size)
{
    /* Simulation: a private mapping, so only pmem.c's fences reach the file. */
    int flags = h->powerfail ? MAP_PRIVATE : MAP_SHARED;
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, h->fd, 0);
    if (m == MAP_FAILED)
        return -errno;
    h->base = m;
    h->size = size;
    return 0;
}

static void set_geometry(struct strobe_petra *h, const struct petra_super *s)
{
    h->max_threads = s->max_threads;
    h->log_bytes = s->log_bytes;
    h->log_off = s->log_off;
    h->data_off = s->data_off;
    h->nchunks = s->nchunks;
    h->table_off = PETRA_TABLE_OFF;
    h->ckpt_off = PETRA_CKPT_OFF;
}

int strobe__heap_create(struct strobe_petra *h, const struct strobe_petra_options *opt, char *why,
                        size_t why_len)
{
    uint64_t size = opt && opt->size ? opt->size : DEFAULT_SIZE;
    unsigned threads = opt && opt->max_threads ? opt->max_threads : DEFAULT_THREADS;
    uint64_t log = opt && opt->log_bytes ? opt->log_bytes : DEFAULT_LOG;
    if (threads > 255 || log < MIN_LOG || log % PETRA_LINE || log > (1ull << 40)) {
        strobe__petra_why(why, why_len, "bad options: max_threads 1..255, log_bytes a multiple of 64 >= 65536");
        return -EINVAL;
    }
    struct petra_super s = { .version = PETRA_FILE_VERSION, .max_threads = threads,
                             .log_bytes = log, .log_off = PETRA_LOG_OFF };
    memcpy(s.magic, PETRA_FILE_MAGIC, 8);
    s.data_off = align_up(PETRA_LOG_OFF + (uint64_t)threads * log, PETRA_CHUNK);
    if (size < s.data_off + 2ull * PETRA_CHUNK) {
        strobe__petra_why(why, why_len,
                          "size %llu too small: the descriptor logs need %llu bytes plus 2 MiB of data",
                          (unsigned long long)size, (unsigned long long)s.data_off);
        return -EINVAL;
    }
    s.nchunks = (size - s.data_off) / PETRA_CHUNK;
    s.file_size = s.data_off + s.nchunks * PETRA_CHUNK;
    s.check = super_check(&s);

    h->fd = open(h->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (h->fd < 0) {
        int rc = -errno;
        strobe__petra_why(why, why_len, "%s: %s", h->path, strerror(errno));
        return rc;
    }
    int rc = lock_file(h, why, why_len);
    if (!rc)
        rc = ftruncate(h->fd, (off_t)s.file_size) ? -errno : 0;
    if (!rc)
        rc = map_file(h, s.file_size);
    if (rc) {
        if (rc != -EBUSY)
            strobe__petra_why(why, why_len, "%s: %s", h->path, strerror(-rc));
        close(h->fd);
        unlink(h->path);
        h->fd = -1;
        return rc;
    }
    set_geometry(h, &s);
    write_owner(h);
    struct strobe_petra_thread *t = &h->threads[h->max_threads];
    memcpy(h->base, &s, sizeof s);
    strobe__pmem_flush_range(h, t, h->base, sizeof s);
    return strobe__pmem_fence(h, t);
}

int strobe__heap_open(struct strobe_petra *h, char *why, size_t why_len)
{
    h->fd = open(h->path, O_RDWR | O_CLOEXEC);
    if (h->fd < 0) {
        int rc = -errno;
        strobe__petra_why(why, why_len, "%s: %s", h->path, strerror(errno));
        return rc;
    }
    struct stat st;
    struct petra_super s;
    int rc = lock_file(h, why, why_len);
    if (rc)
        goto fail;
    if (fstat(h->fd, &st)) {
        rc = -errno;
        strobe__petra_why(why, why_len, "%s: %s", h->path, strerror(errno));
        goto fail;
    }
    if ((uint64_t)st.st_size < sizeof s ||
        pread(h->fd, &s, sizeof s, 0) != (ssize_t)sizeof s) {
        rc = STROBE_ERR_TRUNCATED;
        strobe__petra_why(why, why_len, "%s: file too short for a petra superblock (%lld bytes)",
                          h->path, (long long)st.st_size);
        goto fail;
    }
    if (memcmp(s.magic, PETRA_FILE_MAGIC, 8)) {
        rc = STROBE_ERR_FORMAT;
        strobe__petra_why(why, why_len, "%s: not a petra heap (bad magic)", h->path);
        goto fail;
    }
    if (s.version != PETRA_FILE_VERSION) {
        rc = STROBE_ERR_VERSION;
        strobe__petra_why(why, why_len, "%s: format version %u, this build reads %u", h->path,
                          s.version, PETRA_FILE_VERSION);
        goto fail;
    }
    if (s.check != super_check(&s)) {
        rc = STROBE_ERR_FORMAT;
        strobe__petra_why(why, why_len, "%s: superblock checksum mismatch", h->path);
        goto fail;
    }
    if (s.max_threads < 1 || s.max_threads > 255 || s.log_bytes < MIN_LOG || s.log_bytes % PETRA_LINE ||
        s.log_bytes > (1ull << 40) || s.log_off != PETRA_LOG_OFF ||
        s.data_off != align_up(PETRA_LOG_OFF + (uint64_t)s.max_threads * s.log_bytes, PETRA_CHUNK) ||
        s.nchunks < 2 || s.nchunks > (1ull << 32) ||
        s.file_size != s.data_off + s.nchunks * PETRA_CHUNK) {
        rc = STROBE_ERR_FORMAT;
        strobe__petra_why(why, why_len, "%s: superblock geometry is inconsistent", h->path);
        goto fail;
    }
    if ((uint64_t)st.st_size < s.file_size) {
        rc = STROBE_ERR_TRUNCATED;
        strobe__petra_why(why, why_len, "%s: truncated: %lld bytes, the superblock says %llu",
                          h->path, (long long)st.st_size, (unsigned long long)s.file_size);
        goto fail;
    }
    rc = map_file(h, s.file_size);
    if (rc) {
        strobe__petra_why(why, why_len, "%s: mmap: %s", h->path, strerror(-rc));
        goto fail;
    }
    set_geometry(h, &s);
    write_owner(h);
    for (int i = 0; i < STROBE_PETRA_MAX_STRUCTURES; i++) {
        const struct petra_table_entry *e =
            (const void *)(h->base + PETRA_TABLE_OFF + (uint64_t)i * sizeof *e);
        if (!e->used && e->check == 0)
            continue;
        if (e->check != entry_check(e) || !e->used) {
            /* A torn entry of a creation that never returned: nothing can
             * refer to it (transactions use a structure only after its
             * creation returned), so it is simply not there. */
            continue;
        }
        if (e->kind < STROBE_PETRA_LIST || e->kind > STROBE_PETRA_MAP ||
            memchr(e->name, 0, sizeof e->name) == NULL || !e->name[0] ||
            (e->kind == STROBE_PETRA_MAP && (e->buckets == 0 || e->buckets > (1u << 24) ||
                                             (e->buckets & (e->buckets - 1))))) {
            rc = STROBE_ERR_FORMAT;
            strobe__petra_why(why, why_len, "%s: structure table entry %d is invalid", h->path, i);
            goto fail_unmap;
        }
        struct petra_struct *ps = &h->structs[i];
        ps->used = 1;
        ps->kind = e->kind;
        ps->buckets = e->kind == STROBE_PETRA_MAP ? e->buckets : 1;
        ps->height = e->kind == STROBE_PETRA_SKIPLIST ? PETRA_MAX_LEVEL : 1;
        memcpy(ps->name, e->name, sizeof ps->name);
    }
    return 0;
fail_unmap:
    strobe__heap_unmap(h);
    return rc;
fail:
    close(h->fd);
    h->fd = -1;
    return rc;
}

void strobe__heap_unmap(struct strobe_petra *h)
{
    if (h->base)
        munmap(h->base, h->size);
    h->base = NULL;
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
}

int strobe__heap_table_write(struct strobe_petra *h, struct strobe_petra_thread *t, int id)
{
    const struct petra_struct *ps = &h->structs[id];
    struct petra_table_entry e = { .kind = (uint8_t)ps->kind, .used = 1,
                                   .buckets = ps->kind == STROBE_PETRA_MAP ? ps->buckets : 0 };
    memcpy(e.name, ps->name, sizeof e.name);
    e.check = entry_check(&e);
    void *dst = h->base + PETRA_TABLE_OFF + (uint64_t)id * sizeof e;
    memcpy(dst, &e, sizeof e);
    strobe__pmem_flush(h, t, dst);
    return strobe__pmem_fence(h, t);
}

pref strobe__heap_chunks_alloc(struct strobe_petra *h, uint64_t n, uint8_t use)
{
    uint64_t run = 0;
    for (uint64_t i = 0; i < h->nchunks; i++) {
        run = h->chunk_use[i] ? 0 : run + 1;
        if (run == n) {
            uint64_t first = i + 1 - n;
            memset(h->chunk_use + first, use, n);
            return h->data_off + first * PETRA_CHUNK;
        }
    }
    return 0;
}

void strobe__heap_chunks_free(struct strobe_petra *h, pref off, uint64_t n)
{
    memset(h->chunk_use + (off - h->data_off) / PETRA_CHUNK, 0, n);
}

/* ---- Arena -------------------------------------------------------------- */
pref strobe__arena_alloc(struct strobe_petra_thread *t, unsigned cls)
{
    struct strobe_petra *h = t->h;
    pref r = t->freelist[cls];
    if (r) {
        memcpy(&t->freelist[cls], h->base + r, sizeof(pref));
        return r;
    }
    uint64_t bytes = (uint64_t)(cls + 1) * PETRA_GRAIN;
    if (t->bump + bytes > t->bump_end) {
        /* Keep the chunk's tail as one free object so nothing is lost. */
        if (t->bump < t->bump_end)
            strobe__arena_free(t, t->bump, (unsigned)((t->bump_end - t->bump) / PETRA_GRAIN) - 1);
        pthread_mutex_lock(&h->lock);
        pref c = strobe__heap_chunks_alloc(h, 1, 1);
        pthread_mutex_unlock(&h->lock);
        if (!c) {
            t->bump = t->bump_end = 0;
            return 0;
        }
        t->bump = c;
        t->bump_end = c + PETRA_CHUNK;
    }
    r = t->bump;
    t->bump += bytes;
    return r;
}

void strobe__arena_free(struct strobe_petra_thread *t, pref obj, unsigned cls)
{
    memcpy(t->h->base + obj, &t->freelist[cls], sizeof(pref));
    t->freelist[cls] = obj;
}

/* ---- Descriptor logs ----------------------------------------------------
 * Each thread slot owns a ring; only the attached thread touches its
 * bookkeeping. Descriptors are appended in TXID order (a thread persists
 * one before it starts the next), so checkpoints retire a prefix. */
#define NO_WRAP UINT64_MAX

void strobe__log_reclaim(struct strobe_petra_thread *t)
{
    struct strobe_petra *h = t->h;
    uint64_t below = atomic_load_explicit(&h->retired_below, memory_order_acquire);
    char *base = petra_log_base(h, t->slot);
    while (t->log_used) {
        if (t->log_wrap != NO_WRAP && t->log_head == t->log_wrap) {
            t->log_used -= h->log_bytes - t->log_wrap;
            t->log_head = 0;
            t->log_wrap = NO_WRAP;
            continue;
        }
        struct petra_desc *d = (struct petra_desc *)(base + t->log_head);
        uint64_t txid = atomic_load_explicit(&d->txid, memory_order_relaxed);
        if (txid == 0 || txid >= below)
            break;
        uint64_t sz = petra_desc_size(d->nops);
        t->log_head += sz;
        t->log_used -= sz;
    }
    if (!t->log_used)
        t->log_head = t->log_tail = 0, t->log_wrap = NO_WRAP;
    atomic_store_explicit(&t->log_used_pub, t->log_used, memory_order_relaxed);
}

static int log_fit(struct strobe_petra_thread *t, uint64_t sz, uint64_t *at)
{
    uint64_t L = t->h->log_bytes;
    if (t->log_wrap == NO_WRAP) {
        if (L - t->log_tail >= sz) {
            *at = t->log_tail;
            t->log_tail += sz;
            t->log_used += sz;
            return 1;
        }
        if (t->log_head >= sz) {
            /* the gap [tail, L) counts as used until the head passes it */
            t->log_used += L - t->log_tail + sz;
            t->log_wrap = t->log_tail;
            *at = 0;
            t->log_tail = sz;
            return 1;
        }
        return 0;
    }
    if (t->log_head - t->log_tail >= sz) {
        *at = t->log_tail;
        t->log_tail += sz;
        t->log_used += sz;
        return 1;
    }
    return 0;
}

int strobe__log_alloc(struct strobe_petra_thread *t, uint64_t bytes, struct petra_desc **out)
{
    struct strobe_petra *h = t->h;
    if (bytes > h->log_bytes / 2)
        return -ENOSPC;
    for (;;) {
        strobe__log_reclaim(t);
        uint64_t at;
        if (log_fit(t, bytes, &at)) {
            atomic_store_explicit(&t->log_used_pub, t->log_used, memory_order_relaxed);
            if (t->log_used > h->log_bytes / 2)
                strobe__ckpt_request(h);
            *out = (struct petra_desc *)(petra_log_base(h, t->slot) + at);
            return 0;
        }
        int rc = strobe__ckpt_wait(h, atomic_load(&h->retired_below));
        if (rc)
            return rc;
    }
}
