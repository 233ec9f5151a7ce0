/* SPDX-License-Identifier: MIT */
/*
 * A small, strict decoder of the runtime's output files for the core
 * tests, written from src/common/format.h alone (the full reader is
 * src/analysis; the tests must not depend on it). Anything malformed fails
 * the test with the file and offset.
 *
 *   dec_defs_load     defs: process, clock sync points, modules, regions,
 *                     metrics, overhead, process end
 *   dec_stream_load   t<N>.evt: header and every record, with ENTER_SAME
 *                     resolved and timestamps accumulated; checks that
 *                     EXITs never outnumber the open regions
 *   dec_prof_load     t<N>.prof: header and slots
 */
#ifndef STROBE_TESTS_CORE_DECODE_H
#define STROBE_TESTS_CORE_DECODE_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/format.h"
#include "test.h"

/* Whole file into memory (malloc'd); *len its size. */
static inline uint8_t *dec_read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        STROBE_FAIL("%s: cannot open", path);
    struct stat st;
    fstat(fd, &st);
    uint8_t *buf = malloc((size_t)st.st_size + 1);
    size_t n = 0;
    while (n < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
        if (r <= 0)
            STROBE_FAIL("%s: read error", path);
        n += (size_t)r;
    }
    close(fd);
    *len = n;
    return buf;
}

static inline bool dec_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static inline uint64_t dec_uleb(const char *path, const uint8_t *base, const uint8_t **p, const uint8_t *end)
{
    uint64_t v;
    if (strobe_uleb_get(p, end, &v) != 0)
        STROBE_FAIL("%s: offset %zu: bad uleb", path, (size_t)(*p - base));
    return v;
}

static inline void dec_str(const char *path, const uint8_t *base, const uint8_t **p, const uint8_t *end,
                           char *out, size_t cap)
{
    uint64_t n = dec_uleb(path, base, p, end);
    if (n > (uint64_t)(end - *p))
        STROBE_FAIL("%s: offset %zu: string runs past its record", path, (size_t)(*p - base));
    size_t k = n < cap - 1 ? (size_t)n : cap - 1;
    memcpy(out, *p, k);
    out[k] = 0;
    *p += n;
}

/* Calls fn(type, payload, len, arg) for every record of a chunked file
 * whose records are "byte b0, ..." (defs) after checking the header;
 * returns the header. Stream files are decoded by dec_stream_load. */
static inline void dec_check_header(const char *path, const uint8_t *buf, size_t len, const char *magic,
                                    struct strobe_file_header *h)
{
    if (len < sizeof *h)
        STROBE_FAIL("%s: %zu bytes, shorter than a header", path, len);
    memcpy(h, buf, sizeof *h);
    if (memcmp(h->magic, magic, 8) != 0)
        STROBE_FAIL("%s: bad magic", path);
    if (h->version != STROBE_FORMAT_VERSION || h->header_size != 64)
        STROBE_FAIL("%s: version %u header %u", path, h->version, h->header_size);
    if (h->chunk_size < STROBE_CHUNK_SIZE_MIN || h->chunk_size > STROBE_CHUNK_SIZE_MAX ||
        (h->chunk_size & (h->chunk_size - 1)))
        STROBE_FAIL("%s: bad chunk size %u", path, h->chunk_size);
}

/* ---- defs ---- */

struct dec_region {
    uint32_t id;
    int kind;
    uint64_t addr;
    char name[256];
    char file[256];
    uint64_t line;
};

struct dec_metric {
    uint32_t id;
    char name[128];
    char unit[64];
};

struct dec_module {
    char path[1024];
    uint64_t bias, lo, hi;
};

struct dec_defs {
    int nprocess;
    uint64_t pid, ppid, clock_kind, realtime_ns;
    char exe[4096];
    char parent_dir[256];
    int nrank; /* MPI_RANK records */
    uint64_t rank, world_size;
    char rank_source[64];
    int nsync;
    uint64_t sync_ticks[4096], sync_ns[4096];
    int nmodules;
    struct dec_module modules[256];
    int nregions;
    struct dec_region regions[4096];
    int nmetrics;
    struct dec_metric metrics[64];
    int noverhead;
    uint64_t overhead;
    int nend;
    uint64_t end_ticks;
    int64_t end_status;
    /* THREAD_SUMMARY records, by thread index (how == 0: none) */
    struct dec_summary {
        uint64_t tid, parent, begin_ticks, how, end_ticks, events, bytes, dropped, limit, tail_offset, nrusage, depth;
        uint64_t rusage[7];
        uint64_t nopen;           /* frames listed by OPEN_FRAMES */
        uint64_t open_region[16]; /* the first 16, outermost first */
    } summary[2048];
    int nrecording; /* RECORDING records, in order */
    uint64_t recording_ticks[64], recording_what[64], recording_cause[64];
};

static inline void dec_defs_record(const char *path, const uint8_t *base, unsigned type, const uint8_t *p,
                                   const uint8_t *end, struct dec_defs *d)
{
    switch (type) {
    case STROBE_DEF_PROCESS:
        d->nprocess++;
        d->pid = dec_uleb(path, base, &p, end);
        d->ppid = dec_uleb(path, base, &p, end);
        d->clock_kind = dec_uleb(path, base, &p, end);
        d->realtime_ns = dec_uleb(path, base, &p, end);
        dec_str(path, base, &p, end, d->exe, sizeof d->exe);
        dec_str(path, base, &p, end, d->parent_dir, sizeof d->parent_dir);
        break;
    case STROBE_DEF_MPI_RANK:
        d->nrank++;
        d->rank = dec_uleb(path, base, &p, end);
        d->world_size = dec_uleb(path, base, &p, end);
        dec_str(path, base, &p, end, d->rank_source, sizeof d->rank_source);
        break;
    case STROBE_DEF_CLOCK_SYNC:
        if (d->nsync < 4096) {
            d->sync_ticks[d->nsync] = dec_uleb(path, base, &p, end);
            d->sync_ns[d->nsync] = dec_uleb(path, base, &p, end);
        }
        d->nsync++;
        break;
    case STROBE_DEF_MODULE: {
        if (d->nmodules >= 256)
            STROBE_FAIL("%s: too many modules", path);
        struct dec_module *m = &d->modules[d->nmodules++];
        dec_str(path, base, &p, end, m->path, sizeof m->path);
        m->bias = dec_uleb(path, base, &p, end);
        m->lo = dec_uleb(path, base, &p, end);
        m->hi = dec_uleb(path, base, &p, end);
        if (m->lo >= m->hi)
            STROBE_FAIL("%s: module %s with an empty range", path, m->path);
        break;
    }
    case STROBE_DEF_REGION: {
        if (d->nregions >= 4096)
            STROBE_FAIL("%s: too many regions", path);
        struct dec_region *r = &d->regions[d->nregions++];
        r->id = (uint32_t)dec_uleb(path, base, &p, end);
        r->kind = (int)dec_uleb(path, base, &p, end);
        r->addr = dec_uleb(path, base, &p, end);
        dec_str(path, base, &p, end, r->name, sizeof r->name);
        dec_str(path, base, &p, end, r->file, sizeof r->file);
        r->line = dec_uleb(path, base, &p, end);
        break;
    }
    case STROBE_DEF_METRIC: {
        if (d->nmetrics >= 64)
            STROBE_FAIL("%s: too many metrics", path);
        struct dec_metric *m = &d->metrics[d->nmetrics++];
        m->id = (uint32_t)dec_uleb(path, base, &p, end);
        dec_str(path, base, &p, end, m->name, sizeof m->name);
        dec_str(path, base, &p, end, m->unit, sizeof m->unit);
        break;
    }
    case STROBE_DEF_OVERHEAD:
        d->noverhead++;
        d->overhead = dec_uleb(path, base, &p, end);
        break;
    case STROBE_DEF_PROCESS_END:
        d->nend++;
        d->end_ticks = dec_uleb(path, base, &p, end);
        d->end_status = strobe_unzigzag(dec_uleb(path, base, &p, end));
        break;
    case STROBE_DEF_THREAD_SUMMARY: {
        uint64_t index = dec_uleb(path, base, &p, end);
        if (index >= 2048)
            STROBE_FAIL("%s: THREAD_SUMMARY of thread %llu", path, (unsigned long long)index);
        struct dec_summary *s = &d->summary[index];
        if (s->how)
            STROBE_FAIL("%s: second THREAD_SUMMARY of thread %llu", path, (unsigned long long)index);
        s->tid = dec_uleb(path, base, &p, end);
        s->parent = dec_uleb(path, base, &p, end);
        s->begin_ticks = dec_uleb(path, base, &p, end);
        s->how = dec_uleb(path, base, &p, end);
        s->end_ticks = dec_uleb(path, base, &p, end);
        s->events = dec_uleb(path, base, &p, end);
        s->bytes = dec_uleb(path, base, &p, end);
        s->dropped = dec_uleb(path, base, &p, end);
        s->limit = dec_uleb(path, base, &p, end);
        s->tail_offset = dec_uleb(path, base, &p, end);
        s->nrusage = dec_uleb(path, base, &p, end);
        if (s->nrusage != 0 && s->nrusage != 7)
            STROBE_FAIL("%s: THREAD_SUMMARY with %llu rusage fields", path, (unsigned long long)s->nrusage);
        for (uint64_t i = 0; i < s->nrusage; i++)
            s->rusage[i] = dec_uleb(path, base, &p, end);
        s->depth = dec_uleb(path, base, &p, end);
        break;
    }
    case STROBE_DEF_RECORDING: {
        if (d->nrecording == 64)
            STROBE_FAIL("%s: more than 64 RECORDING records", path);
        d->recording_ticks[d->nrecording] = dec_uleb(path, base, &p, end);
        d->recording_what[d->nrecording] = dec_uleb(path, base, &p, end);
        d->recording_cause[d->nrecording] = dec_uleb(path, base, &p, end);
        d->nrecording++;
        break;
    }
    case STROBE_DEF_OPEN_FRAMES: {
        uint64_t index = dec_uleb(path, base, &p, end);
        if (index >= 2048 || !d->summary[index].how)
            STROBE_FAIL("%s: OPEN_FRAMES before the THREAD_SUMMARY of thread %llu", path, (unsigned long long)index);
        struct dec_summary *s = &d->summary[index];
        uint64_t first = dec_uleb(path, base, &p, end), n = dec_uleb(path, base, &p, end);
        if (first != s->nopen || first + n > s->depth)
            STROBE_FAIL("%s: OPEN_FRAMES %llu+%llu of thread %llu out of order", path, (unsigned long long)first,
                        (unsigned long long)n, (unsigned long long)index);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t region = dec_uleb(path, base, &p, end);
            dec_uleb(path, base, &p, end); /* entry ticks */
            dec_uleb(path, base, &p, end); /* profile slot + 1 */
            if (s->nopen < 16)
                s->open_region[s->nopen] = region;
            s->nopen++;
        }
        break;
    }
    default:
        STROBE_FAIL("%s: unknown record type %u", path, type);
    }
    if (p != end)
        STROBE_FAIL("%s: record of type %u has %zu bytes left over", path, type, (size_t)(end - p));
}

static inline void dec_defs_load(const char *path, struct dec_defs *d)
{
    memset(d, 0, sizeof *d);
    size_t len;
    uint8_t *buf = dec_read_file(path, &len);
    struct strobe_file_header h;
    dec_check_header(path, buf, len, STROBE_MAGIC_DEFS, &h);
    size_t off = 64, cs = h.chunk_size;
    while (off < len) {
        size_t chunk_end = (off / cs + 1) * cs;
        if (chunk_end > len)
            chunk_end = len;
        if (buf[off] == 0) {
            off = (off / cs + 1) * cs;
            if (off >= len || buf[off] == 0)
                break;
            continue;
        }
        const uint8_t *p = buf + off, *end = buf + chunk_end;
        unsigned type = *p++;
        uint64_t n = dec_uleb(path, buf, &p, end);
        if (n > (uint64_t)(end - p))
            STROBE_FAIL("%s: offset %zu: record of %llu bytes crosses its chunk", path, off,
                        (unsigned long long)n);
        dec_defs_record(path, buf, type, p, p + n, d);
        off = (size_t)(p + n - buf);
    }
    free(buf);
}

static inline const struct dec_region *dec_region_by_id(const struct dec_defs *d, uint32_t id)
{
    for (int i = 0; i < d->nregions; i++)
        if (d->regions[i].id == id)
            return &d->regions[i];
    return NULL;
}

static inline const struct dec_region *dec_region_by_addr(const struct dec_defs *d, uint64_t addr)
{
    for (int i = 0; i < d->nregions; i++)
        if (d->regions[i].kind == STROBE_REGION_FUNCTION && d->regions[i].addr == addr)
            return &d->regions[i];
    return NULL;
}

static inline const struct dec_region *dec_region_by_name(const struct dec_defs *d, const char *name)
{
    for (int i = 0; i < d->nregions; i++)
        if (strcmp(d->regions[i].name, name) == 0)
            return &d->regions[i];
    return NULL;
}

static inline const struct dec_metric *dec_metric_by_name(const struct dec_defs *d, const char *name)
{
    for (int i = 0; i < d->nmetrics; i++)
        if (strcmp(d->metrics[i].name, name) == 0)
            return &d->metrics[i];
    return NULL;
}

/* ---- event streams ---- */

struct dec_event {
    uint8_t kind;            /* enum strobe_event_kind; ENTER_SAME is reported as ENTER */
    bool same;               /* it was an ENTER_SAME record */
    uint8_t ext;             /* ext type for STROBE_EV_EXT */
    uint8_t npayload;        /* ext payload as ulebs */
    uint32_t region;         /* ENTER / ENTER_SAME / INHERIT; EXIT: the region left */
    uint32_t depth;          /* open regions after the record */
    uint32_t pay;            /* index of the payload in dec_stream.pay */
    uint64_t time;           /* ticks */
    const uint64_t *payload; /* EXT: npayload values (set once the stream is read) */
};

struct dec_stream {
    struct strobe_file_header hdr;
    struct dec_event *ev; /* compact: a killed run can leave millions */
    size_t n, cap;
    uint64_t *pay; /* the payloads of all EXT records */
    size_t npay, paycap;
    size_t data_bytes; /* bytes of records (no header, no padding) */
    size_t file_bytes;
    uint32_t final_depth;
    size_t nchunks; /* CHUNK records (checked and skipped: not in ev) */
};

static inline void dec_stream_push(struct dec_stream *s, const struct dec_event *e)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->ev = realloc(s->ev, s->cap * sizeof *e);
    }
    s->ev[s->n++] = *e;
}

static inline void dec_stream_load(const char *path, struct dec_stream *s)
{
    memset(s, 0, sizeof *s);
    size_t len;
    uint8_t *buf = dec_read_file(path, &len);
    s->file_bytes = len;
    dec_check_header(path, buf, len, STROBE_MAGIC_EVENTS, &s->hdr);
    if (s->hdr.limit_bytes && len > s->hdr.limit_bytes)
        STROBE_FAIL("%s: %zu bytes, over its limit %llu", path, len, (unsigned long long)s->hdr.limit_bytes);
    size_t off = 64, cs = s->hdr.chunk_size;
    uint64_t now = s->hdr.start_ticks;
    uint32_t last_entered = UINT32_MAX;
    static uint32_t stack[1 << 20];
    uint32_t depth = 0;
    while (off < len) {
        size_t chunk_end = (off / cs + 1) * cs;
        if (chunk_end > len)
            chunk_end = len;
        if (buf[off] == 0) {
            off = (off / cs + 1) * cs;
            if (off >= len || buf[off] == 0)
                break;
            continue;
        }
        const uint8_t *p = buf + off, *end = buf + chunk_end;
        uint8_t b0 = *p++;
        if (b0 == STROBE_EXT_CHUNK) {
            /* not an event: checked against what the stream says (outside
             * a ring, read in file order here), then skipped */
            bool ring = s->hdr.flags & STROBE_STREAM_RING;
            if (!(s->hdr.flags & STROBE_STREAM_CHUNKED) || (off != 64 && off % cs != 0))
                STROBE_FAIL("%s: offset %zu: CHUNK record not at a chunk start of a chunked stream", path, off);
            uint64_t delta = dec_uleb(path, buf, &p, end), n = dec_uleb(path, buf, &p, end);
            const uint8_t *qe = p + n;
            uint64_t seq = dec_uleb(path, buf, &p, qe), ticks = dec_uleb(path, buf, &p, qe);
            uint64_t cdepth = dec_uleb(path, buf, &p, qe);
            if (!ring && (delta != 0 || seq != off / cs + 1 || ticks != now || cdepth != depth))
                STROBE_FAIL("%s: offset %zu: CHUNK record %llu at %llu ticks with %llu frames; expected %zu at %llu "
                            "with %u", path, off, (unsigned long long)seq, (unsigned long long)ticks,
                            (unsigned long long)cdepth, off / cs + 1, (unsigned long long)now, depth);
            /* outside a ring, a stack too deep to list gives its depth alone */
            bool unlisted = !ring && cdepth > 0 && p == qe;
            for (uint64_t i = 0; i < cdepth && !unlisted; i++) {
                uint64_t region = dec_uleb(path, buf, &p, qe);
                dec_uleb(path, buf, &p, qe);
                if (!ring && region != stack[i])
                    STROBE_FAIL("%s: offset %zu: CHUNK record frame %llu is region %llu, the stream has %u", path,
                                off, (unsigned long long)i, (unsigned long long)region, stack[i]);
            }
            if (p != qe)
                STROBE_FAIL("%s: offset %zu: CHUNK record of %llu bytes", path, off, (unsigned long long)n);
            s->data_bytes += (size_t)(p - (buf + off));
            s->nchunks++;
            last_entered = UINT32_MAX; /* the chunk's first ENTER must name its region */
            off = (size_t)(p - buf);
            continue;
        }
        struct dec_event e = {0};
        uint64_t payload[8];
        e.kind = b0 >> 6;
        uint64_t delta;
        if (e.kind == STROBE_EV_EXT) {
            e.ext = b0 & 63;
            delta = dec_uleb(path, buf, &p, end);
            uint64_t n = dec_uleb(path, buf, &p, end);
            if (n > (uint64_t)(end - p))
                STROBE_FAIL("%s: offset %zu: ext payload crosses its chunk", path, off);
            const uint8_t *q = p, *qe = p + n;
            while (q < qe && e.npayload < 8)
                payload[e.npayload++] = dec_uleb(path, buf, &q, qe);
            if (q != qe)
                STROBE_FAIL("%s: offset %zu: ext payload is not ulebs", path, off);
            p = qe;
            if (s->npay + 8 > s->paycap) {
                s->paycap = s->paycap ? 2 * s->paycap : 1024;
                s->pay = realloc(s->pay, s->paycap * sizeof *s->pay);
            }
            e.pay = (uint32_t)s->npay;
            memcpy(s->pay + s->npay, payload, e.npayload * sizeof *payload);
            s->npay += e.npayload;
        } else {
            delta = b0 & 31;
            if (b0 & 0x20)
                delta |= dec_uleb(path, buf, &p, end) << 5;
        }
        now += delta;
        e.time = now;
        if (e.kind == STROBE_EV_ENTER) {
            e.region = (uint32_t)dec_uleb(path, buf, &p, end);
            last_entered = e.region;
        } else if (e.kind == STROBE_EV_ENTER_SAME) {
            if (last_entered == UINT32_MAX)
                STROBE_FAIL("%s: offset %zu: ENTER_SAME without a previous ENTER", path, off);
            e.region = last_entered;
            e.kind = STROBE_EV_ENTER;
            e.same = true;
        } else if (e.kind == STROBE_EV_EXT && e.ext == STROBE_EXT_INHERIT) {
            if (e.npayload < 1)
                STROBE_FAIL("%s: offset %zu: INHERIT without a region", path, off);
            e.region = (uint32_t)payload[0];
            last_entered = e.region;
        }
        if (e.kind == STROBE_EV_ENTER || (e.kind == STROBE_EV_EXT && e.ext == STROBE_EXT_INHERIT)) {
            if (depth >= sizeof stack / sizeof stack[0])
                STROBE_FAIL("%s: nesting too deep", path);
            stack[depth++] = e.region;
        } else if (e.kind == STROBE_EV_EXIT) {
            if (depth == 0)
                STROBE_FAIL("%s: offset %zu: EXIT with no open region", path, off);
            e.region = stack[--depth];
        }
        e.depth = depth;
        s->data_bytes += (size_t)(p - (buf + off));
        dec_stream_push(s, &e);
        off = (size_t)(p - buf);
    }
    s->final_depth = depth;
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].kind == STROBE_EV_EXT)
            s->ev[i].payload = s->pay + s->ev[i].pay;
    free(buf);
}

static inline size_t dec_count(const struct dec_stream *s, int kind, uint32_t region)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].kind == kind && (region == UINT32_MAX || s->ev[i].region == region))
            n++;
    return n;
}

static inline size_t dec_count_ext(const struct dec_stream *s, unsigned ext)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].kind == STROBE_EV_EXT && s->ev[i].ext == ext)
            n++;
    return n;
}

static inline const struct dec_event *dec_find_ext(const struct dec_stream *s, unsigned ext, size_t nth)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].kind == STROBE_EV_EXT && s->ev[i].ext == ext && nth-- == 0)
            return &s->ev[i];
    return NULL;
}

static inline void dec_stream_free(struct dec_stream *s)
{
    free(s->ev);
    free(s->pay);
    s->ev = NULL;
    s->pay = NULL;
}

/* ---- profiles ---- */

struct dec_prof {
    struct strobe_prof_header hdr;
    union {
        struct strobe_prof_node node;
        struct strobe_prof_metric metric;
    } * slot;
    uint32_t n;
};

static inline void dec_prof_load(const char *path, struct dec_prof *pr)
{
    size_t len;
    uint8_t *buf = dec_read_file(path, &len);
    if (len < 64)
        STROBE_FAIL("%s: shorter than a header", path);
    memcpy(&pr->hdr, buf, 64);
    if (memcmp(pr->hdr.magic, STROBE_MAGIC_PROFILE, 8) != 0 || pr->hdr.version != STROBE_FORMAT_VERSION ||
        pr->hdr.header_size != 64 || pr->hdr.slot_size != 64)
        STROBE_FAIL("%s: bad header", path);
    pr->n = pr->hdr.slot_count;
    if ((uint64_t)pr->n * 64 + 64 > len)
        STROBE_FAIL("%s: slot_count %u beyond the file (%zu bytes)", path, pr->n, len);
    pr->slot = malloc((size_t)pr->n * 64 + 1);
    memcpy(pr->slot, buf + 64, (size_t)pr->n * 64);
    free(buf);
    if (pr->n == 0 || pr->slot[0].node.tag != STROBE_SLOT_NODE ||
        pr->slot[0].node.region != STROBE_PROF_NO_REGION)
        STROBE_FAIL("%s: slot 0 is not the root", path);
    for (uint32_t i = 1; i < pr->n; i++) {
        uint32_t tag = pr->slot[i].node.tag;
        if (tag == STROBE_SLOT_NODE && pr->slot[i].node.parent >= i)
            STROBE_FAIL("%s: slot %u: parent %u not before it", path, i, pr->slot[i].node.parent);
        if (tag == STROBE_SLOT_METRIC && pr->slot[i].metric.node >= i)
            STROBE_FAIL("%s: slot %u: metric of a later node", path, i);
        /* a SYNC slot (lock counts) shares the metric slot's node field */
        if (tag == STROBE_SLOT_SYNC && pr->slot[i].metric.node >= i)
            STROBE_FAIL("%s: slot %u: sync slot of a later node", path, i);
        if (tag != STROBE_SLOT_NODE && tag != STROBE_SLOT_METRIC && tag != STROBE_SLOT_SYNC)
            STROBE_FAIL("%s: slot %u: tag %u", path, i, tag);
    }
}

/* The node reached from the root by the path of region ids (0-terminated
 * list), or UINT32_MAX. */
static inline uint32_t dec_prof_path(const struct dec_prof *pr, const uint32_t *path)
{
    uint32_t cur = 0;
    for (; *path; path++) {
        uint32_t found = UINT32_MAX;
        for (uint32_t i = 1; i < pr->n; i++)
            if (pr->slot[i].node.tag == STROBE_SLOT_NODE && pr->slot[i].node.parent == cur &&
                pr->slot[i].node.region == *path) {
                if (found != UINT32_MAX)
                    STROBE_FAIL("two nodes for region %u under slot %u", *path, cur);
                found = i;
            }
        if (found == UINT32_MAX)
            return UINT32_MAX;
        cur = found;
    }
    return cur;
}

/* Sum of visits of every node of region id. */
static inline uint64_t dec_prof_visits(const struct dec_prof *pr, uint32_t region)
{
    uint64_t v = 0;
    for (uint32_t i = 1; i < pr->n; i++)
        if (pr->slot[i].node.tag == STROBE_SLOT_NODE && pr->slot[i].node.region == region)
            v += pr->slot[i].node.visits;
    return v;
}

static inline const struct strobe_prof_metric *dec_prof_metric(const struct dec_prof *pr, uint32_t node,
                                                               uint32_t metric)
{
    for (uint32_t i = 1; i < pr->n; i++)
        if (pr->slot[i].metric.tag == STROBE_SLOT_METRIC && pr->slot[i].metric.node == node &&
            pr->slot[i].metric.metric == metric)
            return &pr->slot[i].metric;
    return NULL;
}

static inline void dec_prof_free(struct dec_prof *pr)
{
    free(pr->slot);
    pr->slot = NULL;
}

#endif
