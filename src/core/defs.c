/* SPDX-License-Identifier: MIT */
/* The defs file writer (see defs.h). */
#define _GNU_SOURCE
#include "core/defs.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "common/format.h"
#include "core/runtime.h"
#include "core/util.h"
#include "strobe/strobe.h"

/* Payloads stay below 2^14 so the length uleb takes at most 2 bytes. */
#define MAX_PAYLOAD (STROBE_CHUNK_SIZE_MIN - sizeof(struct strobe_file_header) - 3)
_Static_assert(2 * (STROBE__DEF_STR_MAX + 2) + 6 * 10 <= MAX_PAYLOAD, "every record fits a chunk");

/* A record being encoded in place: type byte at start, 2 bytes kept for
 * the length, payload from start + 3. */
struct rec {
    uint8_t *start;
    uint8_t *p;
};

static int rec_begin(struct rec *r, size_t max_payload)
{
    uint8_t *pos = strobe__rt.defs_pos;
    if (!pos)
        return -EBADF;
    if ((size_t)(strobe__mfile_end(&strobe__rt.defs) - pos) < 3 + max_payload) {
        int rc = strobe__mfile_next(&strobe__rt.defs, &pos);
        if (rc)
            return rc;
        strobe__rt.defs_pos = pos;
    }
    r->start = pos;
    r->p = pos + 3;
    return 0;
}

/* Closes the record: length, payload moved next to it, and the type byte
 * last, so a reader of a killed process's file sees either the whole
 * record or a zero byte (padding, end of data). */
static void rec_end(struct rec *r, unsigned type)
{
    size_t len = (size_t)(r->p - (r->start + 3));
    uint8_t *next;
    if (len < 0x80) {
        r->start[1] = (uint8_t)len;
        memmove(r->start + 2, r->start + 3, len);
        next = r->start + 2 + len;
        *next = 0; /* the byte the move vacated: readers must see the end of data there */
    } else {
        r->start[1] = (uint8_t)(0x80 | (len & 0x7f));
        r->start[2] = (uint8_t)(len >> 7);
        next = r->p;
    }
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(r->start, (uint8_t)type, __ATOMIC_RELAXED);
    strobe__rt.defs_pos = next;
}

static void put_uleb(struct rec *r, uint64_t v)
{
    r->p = strobe_uleb_put(r->p, v);
}

static void put_str(struct rec *r, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > STROBE__DEF_STR_MAX)
        n = STROBE__DEF_STR_MAX;
    r->p = strobe_uleb_put(r->p, n);
    if (n)
        memcpy(r->p, s, n);
    r->p += n;
}

int strobe__defs_open(void)
{
    return strobe__mfile_create(&strobe__rt.defs, strobe__rt.proc_fd, "defs", STROBE_MAGIC_DEFS,
                                strobe__rt.cfg.chunk_size, 0, 0, 0, &strobe__rt.defs_pos);
}

void strobe__defs_process(uint64_t pid, uint64_t ppid, int clock_kind, uint64_t realtime_ns, const char *exe,
                          const char *parent_dir)
{
    struct rec r;
    if (rec_begin(&r, 4 * 10 + 2 * (STROBE__DEF_STR_MAX + 2)))
        return;
    put_uleb(&r, pid);
    put_uleb(&r, ppid);
    put_uleb(&r, (uint64_t)clock_kind);
    put_uleb(&r, realtime_ns);
    put_str(&r, exe);
    put_str(&r, parent_dir);
    rec_end(&r, STROBE_DEF_PROCESS);
}

void strobe__defs_mpi_rank(uint64_t rank, uint64_t size, const char *source)
{
    struct rec r;
    if (rec_begin(&r, 2 * 10 + STROBE__DEF_STR_MAX + 2))
        return;
    put_uleb(&r, rank);
    put_uleb(&r, size);
    put_str(&r, source);
    rec_end(&r, STROBE_DEF_MPI_RANK);
}

void strobe__defs_clock_sync(uint64_t ticks, uint64_t ns)
{
    struct rec r;
    if (rec_begin(&r, 2 * 10))
        return;
    put_uleb(&r, ticks);
    put_uleb(&r, ns);
    rec_end(&r, STROBE_DEF_CLOCK_SYNC);
}

void strobe__defs_module(const char *path, uint64_t bias, uint64_t lo, uint64_t hi)
{
    struct rec r;
    if (rec_begin(&r, 3 * 10 + STROBE__DEF_STR_MAX + 2))
        return;
    put_str(&r, path);
    put_uleb(&r, bias);
    put_uleb(&r, lo);
    put_uleb(&r, hi);
    rec_end(&r, STROBE_DEF_MODULE);
}

void strobe__defs_region(uint32_t id, int kind, uint64_t addr, const char *name, const char *file,
                         uint64_t line)
{
    struct rec r;
    if (rec_begin(&r, 4 * 10 + 2 * (STROBE__DEF_STR_MAX + 2)))
        return;
    put_uleb(&r, id);
    put_uleb(&r, (uint64_t)kind);
    put_uleb(&r, addr);
    put_str(&r, name);
    put_str(&r, file);
    put_uleb(&r, line);
    rec_end(&r, STROBE_DEF_REGION);
}

void strobe__defs_metric(uint32_t id, const char *name, const char *unit)
{
    struct rec r;
    if (rec_begin(&r, 10 + 2 * (STROBE__DEF_STR_MAX + 2)))
        return;
    put_uleb(&r, id);
    put_str(&r, name);
    put_str(&r, unit);
    rec_end(&r, STROBE_DEF_METRIC);
}

void strobe__defs_overhead(uint64_t ticks)
{
    struct rec r;
    if (rec_begin(&r, 10))
        return;
    put_uleb(&r, ticks);
    rec_end(&r, STROBE_DEF_OVERHEAD);
}

void strobe__defs_malloc(unsigned what, const uint64_t *v, size_t n)
{
    struct rec r;
    if (n > 8 || rec_begin(&r, 9 * 10))
        return;
    put_uleb(&r, what);
    for (size_t i = 0; i < n; i++)
        put_uleb(&r, v[i]);
    rec_end(&r, STROBE_DEF_MALLOC);
}

void strobe__defs_sample(uint64_t hz, unsigned source)
{
    struct rec r;
    if (rec_begin(&r, 2 * 10))
        return;
    put_uleb(&r, hz);
    put_uleb(&r, source);
    rec_end(&r, STROBE_DEF_SAMPLE);
}

void strobe__defs_recording(uint64_t ticks, unsigned what, unsigned cause)
{
    struct rec r;
    if (rec_begin(&r, 3 * 10))
        return;
    put_uleb(&r, ticks);
    put_uleb(&r, what);
    put_uleb(&r, cause);
    rec_end(&r, STROBE_DEF_RECORDING);
}

void strobe__defs_adapter(unsigned type, const uint8_t *payload, size_t len)
{
    struct rec r;
    if (len > STROBE__DEF_ADAPTER_MAX || rec_begin(&r, len))
        return;
    memcpy(r.p, payload, len);
    r.p += len;
    rec_end(&r, type);
}

void strobe__defs_process_end(uint64_t ticks, int64_t status)
{
    struct rec r;
    if (rec_begin(&r, 2 * 10))
        return;
    put_uleb(&r, ticks);
    put_uleb(&r, strobe_zigzag(status));
    rec_end(&r, STROBE_DEF_PROCESS_END);
}

void strobe__defs_thread_summary(const struct strobe__thread_summary *s)
{
    struct rec r;
    if (rec_begin(&r, 20 * 10))
        return;
    put_uleb(&r, s->index);
    put_uleb(&r, s->tid);
    put_uleb(&r, s->parent_plus1);
    put_uleb(&r, s->begin_ticks);
    put_uleb(&r, s->how);
    put_uleb(&r, s->end_ticks);
    put_uleb(&r, s->events);
    put_uleb(&r, s->bytes);
    put_uleb(&r, s->dropped);
    put_uleb(&r, s->limit);
    put_uleb(&r, s->tail_offset);
    put_uleb(&r, s->has_rusage ? 7 : 0);
    for (int i = 0; s->has_rusage && i < 7; i++)
        put_uleb(&r, s->rusage[i]);
    put_uleb(&r, s->depth);
    if (strobe__rt.cfg.max_size)
        put_uleb(&r, s->overwritten);
    rec_end(&r, STROBE_DEF_THREAD_SUMMARY);
}

_Static_assert(3 * 10 + STROBE__OPEN_FRAMES_MAX * 25 <= MAX_PAYLOAD, "OPEN_FRAMES fits a chunk");

void strobe__defs_open_frames(uint32_t index, uint64_t first, const struct strobe__open_frame *f, size_t n)
{
    struct rec r;
    if (rec_begin(&r, 3 * 10 + n * 25))
        return;
    put_uleb(&r, index);
    put_uleb(&r, first);
    put_uleb(&r, n);
    for (size_t i = 0; i < n; i++) {
        put_uleb(&r, f[i].region);
        put_uleb(&r, f[i].start_ticks);
        put_uleb(&r, f[i].slot_plus1);
    }
    rec_end(&r, STROBE_DEF_OPEN_FRAMES);
}

/* Walks the records of a defs image [0, used) and re-appends the ones a
 * fork child inherits. */
static int copy_records(const uint8_t *img, uint64_t used, uint32_t chunk_size)
{
    uint64_t off = sizeof(struct strobe_file_header);
    while (off < used) {
        uint64_t chunk_end = (off / chunk_size + 1) * chunk_size;
        if (chunk_end > used)
            chunk_end = used;
        const uint8_t *p = img + off, *end = img + chunk_end;
        if (*p == 0) { /* padding: the rest of the chunk is empty */
            off = (off / chunk_size + 1) * chunk_size;
            continue;
        }
        unsigned type = *p++;
        uint64_t len;
        if (strobe_uleb_get(&p, end, &len) != 0 || len > (uint64_t)(end - p) || len > MAX_PAYLOAD)
            return STROBE_ERR_FORMAT; /* cannot happen: we wrote it under the lock */
        if (type == STROBE_DEF_CLOCK_SYNC || type == STROBE_DEF_MODULE || type == STROBE_DEF_REGION ||
            type == STROBE_DEF_METRIC || type == STROBE_DEF_MPI_RANK) {
            struct rec r;
            int rc = rec_begin(&r, (size_t)len);
            if (rc)
                return rc;
            memcpy(r.p, p, (size_t)len);
            r.p += len;
            rec_end(&r, type);
        }
        off = (uint64_t)(p + len - img);
    }
    return 0;
}

int strobe__defs_copy_parent(const struct strobe__mfile *parent, uint64_t used)
{
    if (parent->fd < 0 || used <= sizeof(struct strobe_file_header))
        return 0;
    void *img = mmap(NULL, (size_t)used, PROT_READ, MAP_SHARED, parent->fd, 0);
    if (img == MAP_FAILED)
        return -errno;
    int rc = copy_records(img, used, parent->chunk_size);
    munmap(img, (size_t)used);
    return rc;
}
