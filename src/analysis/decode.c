/* SPDX-License-Identifier: MIT */
/*
 * Buffer decoders for the defs file, event streams, profile files and the
 * meta file (see decode.h). Every read is bounds-checked against the
 * record's chunk; any inconsistency becomes a one-line error naming the
 * file and byte offset. These functions are the fuzzing surface.
 */
#include "analysis/decode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strobe/strobe.h"

/* Region and metric ids index direct maps in the loader; no writer comes
 * near this many, so a larger id means corruption. */
#define MAX_LOCAL_ID (1u << 24)
#define MAX_DEPTH    (1u << 20)

int strobe__error(struct strobe_errbuf *eb, int code, const char *fmt, ...)
{
    if (eb) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(eb->msg, sizeof eb->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int strobe__header_check(const uint8_t *buf, size_t len, const char *magic, const char *name,
                         struct strobe_file_header *out, struct strobe_errbuf *eb)
{
    struct strobe_file_header h;
    if (len < sizeof h)
        return strobe__error(eb, STROBE_ERR_TRUNCATED, "%s: file is %zu bytes, shorter than its %zu-byte header",
                             name, len, sizeof h);
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, magic, 8) != 0)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset 0: bad magic (not a strobe %s file)", name,
                             strcmp(magic, STROBE_MAGIC_DEFS) == 0     ? "definitions"
                             : strcmp(magic, STROBE_MAGIC_BLOCKS) == 0 ? "block stream"
                             : strcmp(magic, STROBE_MAGIC_BLOCK_TABLES) == 0 ? "block tables"
                                                                             : "event stream");
    if (h.version != STROBE_FORMAT_VERSION)
        return strobe__error(eb, STROBE_ERR_VERSION, "%s: offset 8: format version %u, this strobe reads %u",
                             name, h.version, STROBE_FORMAT_VERSION);
    if (h.header_size != sizeof h)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset 12: header size %u, expected %zu", name,
                             h.header_size, sizeof h);
    if (h.chunk_size < STROBE_CHUNK_SIZE_MIN || h.chunk_size > STROBE_CHUNK_SIZE_MAX ||
        (h.chunk_size & (h.chunk_size - 1)))
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: offset 16: chunk size %u is not a power of two in [%u, %u]", name,
                             h.chunk_size, STROBE_CHUNK_SIZE_MIN, STROBE_CHUNK_SIZE_MAX);
    *out = h;
    return 0;
}

/* Moves *pos over chunk padding to the next record. Returns 1 when a record
 * starts at *pos, 0 at the end of the data, < 0 on corrupt padding. */
static int next_record(const uint8_t *buf, size_t len, uint32_t cs, size_t *pos, const char *name,
                       struct strobe_errbuf *eb)
{
    for (;;) {
        size_t start = *pos;
        if (start >= len)
            return 0;
        if (buf[start] != 0)
            return 1;
        if (start % cs == 0) /* a chunk that starts empty: nothing was written past here */
            return 0;
        size_t next = (start / cs + 1) * cs;
        size_t stop = next < len ? next : len;
        for (size_t i = start; i < stop; i++)
            if (buf[i])
                return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: non-zero byte in chunk padding",
                                     name, i);
        *pos = next;
    }
}

static size_t chunk_end(size_t pos, uint32_t cs, size_t len)
{
    size_t e = (pos / cs + 1) * cs;
    return e < len ? e : len;
}


static size_t cur_off(const struct strobe__cursor *c)
{
    return (size_t)(c->p - c->buf);
}

static int get_u(struct strobe__cursor *c, uint64_t *v, struct strobe_errbuf *eb)
{
    size_t off = cur_off(c);
    if (strobe_uleb_get(&c->p, c->end, v) == 0)
        return 0;
    const uint8_t *q = c->p;
    while (q < c->end && (*q & 0x80) && q - c->p < 10)
        q++;
    if (q >= c->end)
        return strobe__error(eb, STROBE_ERR_TRUNCATED, "%s: offset %zu: %s truncated", c->name, off, c->what);
    return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: %s has an integer longer than 64 bits", c->name,
                         off, c->what);
}

static int get_str(struct strobe__cursor *c, char **s, struct strobe_errbuf *eb)
{
    uint64_t n;
    int rc = get_u(c, &n, eb);
    if (rc)
        return rc;
    if (n > (uint64_t)(c->end - c->p))
        return strobe__error(eb, STROBE_ERR_TRUNCATED, "%s: offset %zu: %s string of %llu bytes runs past the record",
                             c->name, cur_off(c), c->what, (unsigned long long)n);
    if (memchr(c->p, 0, (size_t)n))
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: %s string contains a NUL byte", c->name,
                             cur_off(c), c->what);
    *s = strndup((const char *)c->p, (size_t)n);
    if (!*s)
        return strobe__error(eb, -ENOMEM, "%s: out of memory", c->name);
    c->p += n;
    return 0;
}

int strobe__next_record(const uint8_t *buf, size_t len, uint32_t cs, size_t *pos, const char *name,
                        struct strobe_errbuf *eb)
{
    return next_record(buf, len, cs, pos, name, eb);
}

int strobe__get_u(struct strobe__cursor *c, uint64_t *v, struct strobe_errbuf *eb)
{
    return get_u(c, v, eb);
}

int strobe__get_str(struct strobe__cursor *c, char **s, struct strobe_errbuf *eb)
{
    return get_str(c, s, eb);
}

/* Arrays grow by doubling; the capacity is implied by the count (4, then
 * powers of two), so callers keep only a count. */
static int grow(void **arr, size_t n, size_t elem, const char *name, struct strobe_errbuf *eb)
{
    if (n != 0 && (n < 4 || (n & (n - 1))))
        return 0;
    size_t cap = n ? n * 2 : 4;
    void *p = realloc(*arr, cap * elem);
    if (!p)
        return strobe__error(eb, -ENOMEM, "%s: out of memory", name);
    *arr = p;
    return 0;
}

#define APPEND(arr, n, name, eb) grow((void **)&(arr), (n), sizeof *(arr), (name), (eb))

/* ---- defs -------------------------------------------------------------- */

static const char *def_name(unsigned type)
{
    switch (type) {
    case STROBE_DEF_PROCESS: return "PROCESS record";
    case STROBE_DEF_MPI_RANK: return "MPI_RANK record";
    case STROBE_DEF_CLOCK_SYNC: return "CLOCK_SYNC record";
    case STROBE_DEF_MODULE: return "MODULE record";
    case STROBE_DEF_REGION: return "REGION record";
    case STROBE_DEF_METRIC: return "METRIC record";
    case STROBE_DEF_OVERHEAD: return "OVERHEAD record";
    case STROBE_DEF_PROCESS_END: return "PROCESS_END record";
    case STROBE_DEF_THREAD_SUMMARY: return "THREAD_SUMMARY record";
    case STROBE_DEF_OPEN_FRAMES: return "OPEN_FRAMES record";
    case STROBE_DEF_MALLOC: return "MALLOC record";
    case STROBE_DEF_SAMPLE:
        return "SAMPLE record";
    case STROBE_DEF_RECORDING:
        return "RECORDING record";
    case STROBE_DEF_MPI_COMM: return "MPI_COMM record";
    case STROBE_DEF_CLOCK_OFFSET: return "CLOCK_OFFSET record";
    default: return "record";
    }
}

/* STROBE_DEF_MPI_COMM (format.h): the runs of members expanded. */
static int mpi_comm_record(struct strobe__defs *d, struct strobe__cursor *c, size_t rec_off, struct strobe_errbuf *eb)
{
    struct strobe__mpi_comm m = {0};
    uint64_t nruns;
    int rc;
    if ((rc = get_u(c, &m.id, eb)) || (rc = get_u(c, &m.flags, eb)) || (rc = get_u(c, &m.size, eb)) ||
        (rc = get_u(c, &nruns, eb)))
        return rc;
    if (m.flags > 3 || m.size == 0 || m.size > INT32_MAX || nruns > m.size)
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: offset %zu: MPI_COMM record: flags %llu, size %llu, %llu runs out of range",
                             c->name, rec_off, (unsigned long long)m.flags, (unsigned long long)m.size,
                             (unsigned long long)nruns);
    for (size_t i = 0; i < d->nmpi_comms; i++)
        if (d->mpi_comms[i].id == m.id)
            return strobe__error(eb, STROBE_ERR_FORMAT,
                                 "%s: offset %zu: MPI_COMM record: communicator %llu defined twice", c->name,
                                 rec_off, (unsigned long long)m.id);
    if ((rc = APPEND(d->mpi_comms, d->nmpi_comms, c->name, eb)))
        return rc;
    for (uint64_t r = 0; r < nruns; r++) {
        uint64_t first, n;
        if ((rc = get_u(c, &first, eb)) || (rc = get_u(c, &n, eb)))
            goto bad;
        if (n == 0 || n > m.size - m.nmembers || first > INT32_MAX || n > (uint64_t)INT32_MAX + 1 - first) {
            rc = strobe__error(eb, STROBE_ERR_FORMAT,
                               "%s: offset %zu: MPI_COMM record: run %llu+%llu out of range", c->name,
                               rec_off, (unsigned long long)first, (unsigned long long)n);
            goto bad;
        }
        uint32_t *grown = realloc(m.members, (m.nmembers + n) * sizeof *m.members);
        if (!grown) {
            rc = -ENOMEM;
            goto bad;
        }
        m.members = grown;
        for (uint64_t k = 0; k < n; k++)
            m.members[m.nmembers++] = (uint32_t)(first + k);
    }
    if (!(m.flags & 2) && m.nmembers != m.size) {
        rc =
            strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: MPI_COMM record: %u members listed of %llu",
                          c->name, rec_off, m.nmembers, (unsigned long long)m.size);
        goto bad;
    }
    d->mpi_comms[d->nmpi_comms++] = m;
    return 0;
bad:
    free(m.members);
    return rc;
}

/* STROBE_DEF_MALLOC (format.h): CONFIG, SUMMARY or a LIVE path. */
static int malloc_record(struct strobe__defs *d, struct strobe__cursor *c, size_t rec_off, struct strobe_errbuf *eb)
{
    uint64_t what;
    int rc = get_u(c, &what, eb);
    if (rc)
        return rc;
    switch (what) {
    case STROBE_MALLOC_CONFIG:
        d->malloc_on = true;
        return get_u(c, &d->malloc_large, eb);
    case STROBE_MALLOC_SUMMARY: {
        uint64_t *f[] = {&d->malloc_peak, &d->malloc_peak_ticks, &d->malloc_live_bytes, &d->malloc_live_blocks,
                         &d->malloc_untracked};
        for (size_t i = 0; i < sizeof f / sizeof f[0] && rc == 0; i++)
            rc = get_u(c, f[i], eb);
        if (rc == 0 && d->malloc_summary)
            rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: second MALLOC SUMMARY record", c->name, rec_off);
        d->malloc_summary = rc == 0;
        return rc;
    }
    case STROBE_MALLOC_LIVE: {
        struct strobe__malloc_live l;
        if ((rc = get_u(c, &l.thread, eb)) || (rc = get_u(c, &l.slot_plus1, eb)) || (rc = get_u(c, &l.blocks, eb)) ||
            (rc = get_u(c, &l.bytes, eb)))
            return rc;
        if (!d->malloc_summary)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: MALLOC LIVE record before the SUMMARY",
                                 c->name, rec_off);
        if (l.thread > UINT32_MAX - 1 || l.slot_plus1 > UINT32_MAX || l.blocks == 0)
            return strobe__error(eb, STROBE_ERR_FORMAT,
                                 "%s: offset %zu: MALLOC LIVE record: thread %llu, slot %llu, %llu blocks out of range",
                                 c->name, rec_off, (unsigned long long)l.thread, (unsigned long long)l.slot_plus1,
                                 (unsigned long long)l.blocks);
        if ((rc = APPEND(d->malloc_live, d->nmalloc_live, c->name, eb)))
            return rc;
        d->malloc_live[d->nmalloc_live++] = l;
        return 0;
    }
    default:
        return 0; /* newer kind: skipped */
    }
}

/* STROBE_DEF_CLOCK_OFFSET (format.h): one per `when`; the reference's own
 * has no round trip and one time, every other rank's at least one trip. */
static int clock_offset_record(struct strobe__defs *d, struct strobe__cursor *c, size_t rec_off,
                               struct strobe_errbuf *eb)
{
    struct strobe__clock_offset o;
    uint64_t when;
    int rc;
    if ((rc = get_u(c, &when, eb)) || (rc = get_u(c, &o.rank, eb)) || (rc = get_u(c, &o.reference, eb)) ||
        (rc = get_u(c, &o.trips, eb)) || (rc = get_u(c, &o.send, eb)) || (rc = get_u(c, &o.rtt, eb)) ||
        (rc = get_u(c, &o.reply, eb)))
        return rc;
    if (when < STROBE_CLOCK_OFFSET_INIT || when > STROBE_CLOCK_OFFSET_FINALIZE)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: CLOCK_OFFSET record: unknown when %llu",
                             c->name, rec_off, (unsigned long long)when);
    if (d->have_offset[when - 1])
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: second CLOCK_OFFSET record of its kind",
                             c->name, rec_off);
    bool self = o.rank == o.reference;
    if (o.rank > INT32_MAX || o.reference > INT32_MAX || o.trips > UINT32_MAX || o.send == 0 ||
        (self ? o.trips || o.rtt || o.reply != o.send : !o.trips || !o.reply || o.rtt > INT64_MAX))
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: offset %zu: CLOCK_OFFSET record: rank %llu, reference %llu, %llu round trips, "
                             "round trip %llu ticks out of range",
                             c->name, rec_off, (unsigned long long)o.rank, (unsigned long long)o.reference,
                             (unsigned long long)o.trips, (unsigned long long)o.rtt);
    if (d->have_offset[2 - when] && d->offsets[2 - when].rank != o.rank)
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: offset %zu: CLOCK_OFFSET records of two ranks (%llu and %llu)", c->name, rec_off,
                             (unsigned long long)d->offsets[2 - when].rank, (unsigned long long)o.rank);
    d->have_offset[when - 1] = true;
    d->offsets[when - 1] = o;
    return 0;
}

static int def_record(struct strobe__defs *d, unsigned type, struct strobe__cursor *c, size_t rec_off,
                      struct strobe_errbuf *eb)
{
    int rc = 0;
    uint64_t v;
    switch (type) {
    case STROBE_DEF_PROCESS:
        if (d->have_process)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: second PROCESS record", c->name, rec_off);
        if ((rc = get_u(c, &d->pid, eb)) || (rc = get_u(c, &d->ppid, eb)) || (rc = get_u(c, &d->clock_kind, eb)) ||
            (rc = get_u(c, &d->realtime_ns, eb)) || (rc = get_str(c, &d->exe, eb)) ||
            (rc = get_str(c, &d->parent_dir, eb)))
            return rc;
        if (d->clock_kind != STROBE_CLOCK_TSC && d->clock_kind != STROBE_CLOCK_MONOTONIC)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: unknown clock kind %llu", c->name,
                                 rec_off, (unsigned long long)d->clock_kind);
        d->have_process = true;
        return 0;
    case STROBE_DEF_MPI_RANK: {
        char *source = NULL;
        if (d->have_rank)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: second MPI_RANK record", c->name,
                                 rec_off);
        if ((rc = get_u(c, &d->rank, eb)) || (rc = get_u(c, &d->world_size, eb)) ||
            (rc = get_str(c, &source, eb)))
            return rc;
        free(source); /* where the rank came from matters to the writer's documentation only */
        if (d->rank > INT32_MAX || d->world_size > INT32_MAX || (d->world_size && d->rank >= d->world_size))
            return strobe__error(eb, STROBE_ERR_FORMAT,
                                 "%s: offset %zu: MPI rank %llu out of range (world size %llu)", c->name, rec_off,
                                 (unsigned long long)d->rank, (unsigned long long)d->world_size);
        d->have_rank = true;
        return 0;
    }
    case STROBE_DEF_CLOCK_SYNC: {
        struct strobe__sync s;
        if ((rc = get_u(c, &s.ticks, eb)) || (rc = get_u(c, &s.ns, eb)))
            return rc;
        if ((rc = APPEND(d->syncs, d->nsyncs, c->name, eb)))
            return rc;
        d->syncs[d->nsyncs++] = s;
        return 0;
    }
    case STROBE_DEF_MODULE: {
        struct strobe__module m = { 0 };
        if ((rc = get_str(c, &m.path, eb)) || (rc = get_u(c, &m.bias, eb)) || (rc = get_u(c, &m.lo, eb)) ||
            (rc = get_u(c, &m.hi, eb)) || (rc = APPEND(d->modules, d->nmodules, c->name, eb))) {
            free(m.path);
            return rc;
        }
        if (m.hi < m.lo) {
            free(m.path);
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: MODULE address range is inverted",
                                 c->name, rec_off);
        }
        d->modules[d->nmodules++] = m;
        return 0;
    }
    case STROBE_DEF_REGION: {
        struct strobe__local_region r = { 0 };
        uint64_t kind = 0, line = 0;
        if ((rc = get_u(c, &r.id, eb)) || (rc = get_u(c, &kind, eb)) || (rc = get_u(c, &r.address, eb)) ||
            (rc = get_str(c, &r.name, eb)) || (rc = get_str(c, &r.file, eb)) || (rc = get_u(c, &line, eb)))
            goto bad_region;
        if (r.id >= MAX_LOCAL_ID) {
            rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: region id %llu out of range", c->name,
                               rec_off, (unsigned long long)r.id);
            goto bad_region;
        }
        if (kind > STROBE_REGION_KIND_MAX) {
            rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: unknown region kind %llu", c->name,
                               rec_off, (unsigned long long)kind);
            goto bad_region;
        }
        for (size_t i = 0; i < d->nregions; i++)
            if (d->regions[i].id == r.id) {
                rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: region id %llu defined twice", c->name,
                                   rec_off, (unsigned long long)r.id);
                goto bad_region;
            }
        if ((rc = APPEND(d->regions, d->nregions, c->name, eb)))
            goto bad_region;
        r.kind = (int)kind;
        r.line = line > UINT32_MAX ? 0 : (unsigned)line;
        d->regions[d->nregions++] = r;
        return 0;
    bad_region:
        free(r.name);
        free(r.file);
        return rc;
    }
    case STROBE_DEF_METRIC: {
        struct strobe__local_metric m = { 0 };
        if ((rc = get_u(c, &m.id, eb)) || (rc = get_str(c, &m.name, eb)) || (rc = get_str(c, &m.unit, eb)))
            goto bad_metric;
        if (m.id >= MAX_LOCAL_ID) {
            rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: metric id %llu out of range", c->name,
                               rec_off, (unsigned long long)m.id);
            goto bad_metric;
        }
        for (size_t i = 0; i < d->nmetrics; i++)
            if (d->metrics[i].id == m.id) {
                rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: metric id %llu defined twice", c->name,
                                   rec_off, (unsigned long long)m.id);
                goto bad_metric;
            }
        if ((rc = APPEND(d->metrics, d->nmetrics, c->name, eb)))
            goto bad_metric;
        d->metrics[d->nmetrics++] = m;
        return 0;
    bad_metric:
        free(m.name);
        free(m.unit);
        return rc;
    }
    case STROBE_DEF_OVERHEAD:
        return get_u(c, &d->overhead_ticks, eb);
    case STROBE_DEF_PROCESS_END:
        if ((rc = get_u(c, &d->end_ticks, eb)) || (rc = get_u(c, &v, eb)))
            return rc;
        d->exit_status = strobe_unzigzag(v);
        d->have_end = true;
        return 0;
    case STROBE_DEF_THREAD_SUMMARY: {
        struct strobe__thread_summary t = { 0 };
        uint64_t n, *ru[7] = { &t.rusage.utime_us, &t.rusage.stime_us, &t.rusage.maxrss_kb, &t.rusage.minflt,
                               &t.rusage.majflt,   &t.rusage.nvcsw,    &t.rusage.nivcsw };
        if ((rc = get_u(c, &t.index, eb)) || (rc = get_u(c, &t.tid, eb)) || (rc = get_u(c, &t.parent, eb)) ||
            (rc = get_u(c, &t.begin_ticks, eb)) || (rc = get_u(c, &t.how, eb)) || (rc = get_u(c, &t.end_ticks, eb)) ||
            (rc = get_u(c, &t.events, eb)) || (rc = get_u(c, &t.bytes, eb)) || (rc = get_u(c, &t.dropped, eb)) ||
            (rc = get_u(c, &t.limit, eb)) || (rc = get_u(c, &t.tail_offset, eb)) || (rc = get_u(c, &n, eb)))
            return rc;
        if (t.how != STROBE_THREAD_ENDED && t.how != STROBE_THREAD_AT_EXIT)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: THREAD_SUMMARY: unknown end %llu", c->name,
                                 rec_off, (unsigned long long)t.how);
        if (n != 0 && n != 7)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: THREAD_SUMMARY: %llu rusage fields, not 0 or 7",
                                 c->name, rec_off, (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++)
            if ((rc = get_u(c, ru[i], eb)))
                return rc;
        t.has_rusage = n == 7;
        if ((rc = get_u(c, &t.depth, eb)))
            return rc;
        if (c->p < c->end) { /* a ring stream's */
            t.ring = true;
            if ((rc = get_u(c, &t.overwritten, eb)))
                return rc;
        }
        for (size_t i = 0; i < d->nsummaries; i++)
            if (d->summaries[i].index == t.index)
                return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: second THREAD_SUMMARY of thread t%llu",
                                     c->name, rec_off, (unsigned long long)t.index);
        if ((rc = APPEND(d->summaries, d->nsummaries, c->name, eb)))
            return rc;
        d->summaries[d->nsummaries++] = t;
        return 0;
    }
    case STROBE_DEF_OPEN_FRAMES: {
        uint64_t thread, first, n;
        if ((rc = get_u(c, &thread, eb)) || (rc = get_u(c, &first, eb)) || (rc = get_u(c, &n, eb)))
            return rc;
        const struct strobe__thread_summary *sum = NULL;
        for (size_t i = 0; i < d->nsummaries; i++)
            if (d->summaries[i].index == thread)
                sum = &d->summaries[i];
        if (!sum || first > sum->depth || n > sum->depth - first)
            return strobe__error(eb, STROBE_ERR_FORMAT,
                                 "%s: offset %zu: OPEN_FRAMES of thread t%llu (frames %llu+%llu) without a THREAD_SUMMARY "
                                 "of that depth before it",
                                 c->name, rec_off, (unsigned long long)thread, (unsigned long long)first,
                                 (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++) {
            struct strobe__open_frame f = { .thread = thread, .depth = first + i };
            if ((rc = get_u(c, &f.region, eb)) || (rc = get_u(c, &f.start_ticks, eb)) ||
                (rc = get_u(c, &f.slot_plus1, eb)) || (rc = APPEND(d->open, d->nopen, c->name, eb)))
                return rc;
            d->open[d->nopen++] = f;
        }
        return 0;
    }
    case STROBE_DEF_MALLOC:
        return malloc_record(d, c, rec_off, eb);
    case STROBE_DEF_RECORDING: {
        uint64_t ticks, what, cause;
        if ((rc = get_u(c, &ticks, eb)) || (rc = get_u(c, &what, eb)) || (rc = get_u(c, &cause, eb)))
            return rc;
        if (what > STROBE_RECORDING_RESUME || cause < STROBE_RECORDING_API || cause > STROBE_RECORDING_TIMER)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: RECORDING record: what %llu, cause %llu out of range",
                                 c->name, rec_off, (unsigned long long)what, (unsigned long long)cause);
        /* stop, resume, stop, ...: each changes the state */
        if ((what == STROBE_RECORDING_RESUME) != (d->nrecording % 2 == 1))
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: RECORDING record: %s while %s", c->name,
                                 rec_off, what ? "resume" : "stop", d->nrecording % 2 ? "paused" : "recording");
        if (d->nrecording && ticks < d->recording[d->nrecording - 1].ticks)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: RECORDING record earlier than the one before",
                                 c->name, rec_off);
        if ((rc = APPEND(d->recording, d->nrecording, c->name, eb)))
            return rc;
        d->recording[d->nrecording++] = (struct strobe_recording_change){ticks, 0, what == STROBE_RECORDING_RESUME, (int)cause};
        return 0;
    }
    case STROBE_DEF_SAMPLE: {
        uint64_t hz, source;
        if ((rc = get_u(c, &hz, eb)) || (rc = get_u(c, &source, eb)))
            return rc;
        if (d->sample_hz)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: second SAMPLE record", c->name,
                                 rec_off);
        if (hz < STROBE_SAMPLE_HZ_MIN || hz > STROBE_SAMPLE_HZ_MAX || source < STROBE_SAMPLE_PERF ||
            source > STROBE_SAMPLE_TIMER)
            return strobe__error(eb, STROBE_ERR_FORMAT,
                                 "%s: offset %zu: SAMPLE record: rate %llu Hz, source %llu out of range",
                                 c->name, rec_off, (unsigned long long)hz, (unsigned long long)source);
        d->sample_hz = (uint32_t)hz;
        d->sample_source = (int)source;
        return 0;
    }
    case STROBE_DEF_MPI_COMM:
        return mpi_comm_record(d, c, rec_off, eb);
    case STROBE_DEF_CLOCK_OFFSET:
        return clock_offset_record(d, c, rec_off, eb);
    default:
        return 0; /* newer record type: skipped by design */
    }
}

int strobe__defs_decode(const uint8_t *buf, size_t len, const char *name, struct strobe__defs *d,
                        struct strobe_errbuf *eb)
{
    memset(d, 0, sizeof *d);
    struct strobe_file_header h;
    int rc = strobe__header_check(buf, len, STROBE_MAGIC_DEFS, name, &h, eb);
    if (rc)
        return rc;
    size_t pos = h.header_size;
    while ((rc = next_record(buf, len, h.chunk_size, &pos, name, eb)) == 1) {
        size_t rec_off = pos;
        unsigned type = buf[pos];
        struct strobe__cursor c = { buf, buf + pos + 1, buf + chunk_end(pos, h.chunk_size, len), name, def_name(type) };
        uint64_t plen;
        if ((rc = get_u(&c, &plen, eb)))
            break;
        if (plen > (uint64_t)(c.end - c.p)) {
            rc = strobe__error(eb, STROBE_ERR_TRUNCATED, "%s: offset %zu: %s of %llu bytes runs past %s", name,
                               rec_off, def_name(type), (unsigned long long)plen,
                               c.end == buf + len ? "the end of the file" : "its chunk");
            break;
        }
        c.end = c.p + plen;
        if ((rc = def_record(d, type, &c, rec_off, eb)))
            break;
        pos = (size_t)(c.end - buf);
    }
    if (rc == 0 && !d->have_process)
        rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: no PROCESS record", name);
    if (rc < 0)
        strobe__defs_free(d);
    return rc < 0 ? rc : 0;
}

void strobe__defs_free(struct strobe__defs *d)
{
    free(d->exe);
    free(d->parent_dir);
    free(d->syncs);
    for (size_t i = 0; i < d->nmodules; i++)
        free(d->modules[i].path);
    free(d->modules);
    for (size_t i = 0; i < d->nregions; i++) {
        free(d->regions[i].name);
        free(d->regions[i].file);
    }
    free(d->regions);
    for (size_t i = 0; i < d->nmetrics; i++) {
        free(d->metrics[i].name);
        free(d->metrics[i].unit);
    }
    free(d->metrics);
    free(d->summaries);
    free(d->open);
    free(d->malloc_live);
    free(d->recording);
    for (size_t i = 0; i < d->nmpi_comms; i++)
        free(d->mpi_comms[i].members);
    free(d->mpi_comms);
    memset(d, 0, sizeof *d);
}

/* ---- event streams ------------------------------------------------------ */

/* The sequence number of the CHUNK record that must begin the ring chunk
 * at `start` (format.h). */
static int ring_chunk_seq(struct strobe__stream_decoder *d, size_t start, uint64_t *seq, uint64_t *ticks,
                          struct strobe_errbuf *eb)
{
    struct strobe__cursor c = {d->buf, d->buf + start + 1, d->buf + chunk_end(start, d->hdr.chunk_size, d->len),
                               d->name, "CHUNK record"};
    uint64_t delta, plen;
    int rc;
    if (d->buf[start] != STROBE_EXT_CHUNK)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: chunk of a ring stream without a CHUNK record",
                             d->name, start);
    if ((rc = get_u(&c, &delta, eb)) || (rc = get_u(&c, &plen, eb)) || (rc = get_u(&c, seq, eb)) ||
        (rc = get_u(&c, ticks, eb)))
        return rc;
    if (*seq == 0)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: CHUNK record: sequence number 0", d->name,
                             start);
    return 0;
}

static int cmp_seq(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* A ring stream's chunks in sequence order: every chunk that is not empty
 * begins with a CHUNK record, their numbers follow each other. */
static int ring_order(struct strobe__stream_decoder *d, struct strobe_errbuf *eb)
{
    uint32_t cs = d->hdr.chunk_size;
    size_t nch = (d->len + cs - 1) / cs;
    uint64_t *pairs = malloc(2 * nch * sizeof *pairs);
    d->order = malloc(nch * sizeof *d->order);
    if (!pairs || !d->order) {
        free(pairs);
        return strobe__error(eb, -ENOMEM, "%s: out of memory", d->name);
    }
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < nch && rc == 0; i++) {
        size_t start = i ? i * cs : d->hdr.header_size;
        if (start >= d->len || d->buf[start] == 0)
            continue; /* empty: never written, or being cleared when the process died */
        uint64_t ticks;
        pairs[2 * n] = 0;
        pairs[2 * n + 1] = start;
        rc = ring_chunk_seq(d, start, &pairs[2 * n], &ticks, eb);
        if (rc == 0 && (n == 0 || pairs[2 * n] < d->ring_first_seq)) {
            d->ring_first_seq = pairs[2 * n];
            d->ring_first_ticks = ticks;
        }
        n++;
    }
    if (rc == 0)
        qsort(pairs, n, 2 * sizeof *pairs, cmp_seq);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (i && pairs[2 * i] != pairs[2 * i - 2] + 1)
            rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: CHUNK record: sequence %llu follows %llu",
                               d->name, (unsigned long long)pairs[2 * i + 1], (unsigned long long)pairs[2 * i],
                               (unsigned long long)pairs[2 * i - 2]);
        d->order[i] = (size_t)pairs[2 * i + 1];
    }
    d->norder = n;
    free(pairs);
    if (rc == 0)
        d->pos = n ? d->order[0] : d->len;
    return rc;
}

int strobe__stream_begin(struct strobe__stream_decoder *d, const uint8_t *buf, size_t len, const char *name,
                         struct strobe_errbuf *eb)
{
    memset(d, 0, sizeof *d);
    int rc = strobe__header_check(buf, len, STROBE_MAGIC_EVENTS, name, &d->hdr, eb);
    if (rc)
        return rc;
    d->buf = buf;
    d->len = len;
    d->name = name;
    d->pos = d->hdr.header_size;
    d->ticks = d->hdr.start_ticks;
    if (d->hdr.flags & ~(uint64_t)(STROBE_STREAM_RING | STROBE_STREAM_CHUNKED))
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset 48: unknown stream flags 0x%llx", name,
                             (unsigned long long)d->hdr.flags);
    d->ring = d->hdr.flags & STROBE_STREAM_RING;
    d->chunked = d->hdr.flags & (STROBE_STREAM_RING | STROBE_STREAM_CHUNKED); /* older rings: RING alone */
    d->next_chunk = d->pos;
    d->first_chunk = SIZE_MAX;
    if (d->ring && (rc = ring_order(d, eb)) != 0) {
        strobe__stream_end(d);
        return rc;
    }
    return 0;
}

uint64_t strobe__stream_nchunks(const struct strobe__stream_decoder *d)
{
    if (d->ring || !d->chunked)
        return d->ring ? d->norder : 0;
    uint32_t cs = d->hdr.chunk_size;
    uint64_t n = 0;
    for (size_t start = d->hdr.header_size; start < d->len && d->buf[start]; start = (size_t)++n * cs)
        ;
    return n;
}

int strobe__stream_chunks(struct strobe__stream_decoder *d, uint64_t first, uint64_t count,
                          struct strobe_errbuf *eb)
{
    uint32_t cs = d->hdr.chunk_size;
    if (!d->chunked)
        return strobe__error(eb, -ENOTSUP, "%s: not written in self-contained chunks (header flags 0x%llx: recorded "
                             "by a strobe older than the chunked format)", d->name, (unsigned long long)d->hdr.flags);
    if (d->ring) {
        if (first >= d->norder) {
            d->norder = 0;
            return 0;
        }
        uint64_t ticks;
        int rc = ring_chunk_seq(d, d->order[first], &d->ring_first_seq, &ticks, eb);
        if (rc)
            return rc;
        d->ring_first_ticks = ticks;
        d->ring_i = (size_t)first;
        d->pos = d->order[first];
        if (count < d->norder - first)
            d->norder = (size_t)(first + count);
        return 0;
    }
    if (first >= (d->len + cs - 1) / cs) {
        d->pos = d->len;
        return 0;
    }
    if (first > 0)
        d->pos = d->next_chunk = d->first_chunk = (size_t)first * cs;
    if (count < (d->len - 1) / cs + 1 - first)
        d->len = (size_t)(first + count) * cs; /* records never cross a chunk's end */
    return 0;
}

/* Moves d->pos over padding to the next record of a ring stream, on to
 * the next chunk in sequence order at the end of one: 1, 0 at the end of
 * the data, < 0 on corrupt padding. */
static int ring_next_record(struct strobe__stream_decoder *d, struct strobe_errbuf *eb)
{
    for (;;) {
        if (d->ring_i >= d->norder)
            return 0;
        size_t end = chunk_end(d->order[d->ring_i], d->hdr.chunk_size, d->len);
        if (d->pos < end && d->buf[d->pos] != 0)
            return 1;
        for (size_t i = d->pos; i < end; i++)
            if (d->buf[i])
                return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: non-zero byte in chunk padding",
                                     d->name, i);
        if (++d->ring_i < d->norder)
            d->pos = d->order[d->ring_i];
    }
}

int strobe__stream_seek(struct strobe__stream_decoder *d, uint64_t offset, struct strobe_errbuf *eb)
{
    if (offset < d->hdr.header_size || offset > d->len)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu, where its THREAD_SUMMARY says records follow, "
                             "lies outside the stream (%zu bytes)", d->name, (unsigned long long)offset, d->len);
    /* a ring's exit records are in its newest chunk: read on from there */
    for (d->ring_i = 0; d->ring && d->ring_i + 1 < d->norder &&
                        offset / d->hdr.chunk_size != d->order[d->ring_i] / d->hdr.chunk_size;)
        d->ring_i++;
    d->ipending = d->npending = 0;
    d->pos = (size_t)offset;
    d->depth = 0;
    d->have_last = false;
    d->seeked = true;
    d->next_chunk = (size_t)(offset / d->hdr.chunk_size + 1) * d->hdr.chunk_size;
    return 0;
}

void strobe__stream_end(struct strobe__stream_decoder *d)
{
    free(d->stack);
    free(d->order);
    free(d->pending);
    d->stack = NULL;
    d->order = NULL;
    d->pending = NULL;
}

static int push(struct strobe__stream_decoder *d, uint64_t region, size_t off, struct strobe_errbuf *eb);

/* A CHUNK record (format.h): the first chunk read, when the ones before
 * it are not (a ring's oldest kept one, a chunk selected alone), sets the
 * open frames, which the decoder then returns as synthetic ENTERs at their
 * entry times; any other one must list the frames the stream has open. */
static int chunk_payload(struct strobe__stream_decoder *d, struct strobe__cursor *c, struct strobe__raw_event *ev,
                         struct strobe_errbuf *eb)
{
    uint64_t seq, ticks, depth;
    uint32_t cs = d->hdr.chunk_size;
    int rc;
    if (!d->chunked)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: CHUNK record in a stream that is not chunked "
                             "(header flags 0x%llx)", d->name, (unsigned long long)ev->offset,
                             (unsigned long long)d->hdr.flags);
    if (!d->ring && ev->offset != d->next_chunk)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: CHUNK record in the middle of a chunk", d->name,
                             (unsigned long long)ev->offset);
    if ((rc = get_u(c, &seq, eb)) || (rc = get_u(c, &ticks, eb)) || (rc = get_u(c, &depth, eb)))
        return rc;
    if (!d->ring && seq != ev->offset / cs + 1)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: CHUNK record: sequence %llu in chunk %llu "
                             "(expected %llu)", d->name, (unsigned long long)ev->offset, (unsigned long long)seq,
                             (unsigned long long)(ev->offset / cs), (unsigned long long)(ev->offset / cs + 1));
    if (!d->ring)
        d->next_chunk = (size_t)(ev->offset / cs + 1) * cs;
    /* outside a ring, a stack too deep to list gives its depth alone:
     * such a chunk is read with the ones before it */
    bool unlisted = !d->ring && depth > 0 && c->p == c->end;
    if (unlisted && ev->offset == d->first_chunk)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: chunk %llu cannot be read alone: its %llu open "
                             "frames were too deep to list in its CHUNK record; read it with the chunks before it",
                             d->name, (unsigned long long)ev->offset, (unsigned long long)(ev->offset / cs),
                             (unsigned long long)depth);
    if (d->seeked) { /* the stack is not known: nothing to compare */
        d->have_last = false;
        d->ticks = ticks;
        ev->kind = 0;
        return 0;
    }
    bool first = d->ring ? seq == d->ring_first_seq : ev->offset == d->first_chunk;
    if ((d->ring && ev->offset != d->order[d->ring_i]) || (!unlisted && depth > (uint64_t)(c->end - c->p) / 2) ||
        (!first && (depth != d->depth || ticks < d->ticks)))
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: offset %llu: CHUNK record: %llu open frames at %llu ticks do not continue the "
                             "stream (%zu open at %llu)", d->name, (unsigned long long)ev->offset,
                             (unsigned long long)depth, (unsigned long long)ticks, d->depth,
                             (unsigned long long)d->ticks);
    if (first) {
        free(d->pending);
        if (!(d->pending = malloc((depth ? depth : 1) * 2 * sizeof *d->pending)))
            return strobe__error(eb, -ENOMEM, "%s: out of memory", d->name);
        d->depth = 0;
        d->ring_first_ticks = ticks;
    }
    for (uint64_t i = 0; i < depth && !unlisted; i++) {
        uint64_t region, entry;
        if ((rc = get_u(c, &region, eb)) || (rc = get_u(c, &entry, eb)))
            return rc;
        if (!first && region != d->stack[i])
            return strobe__error(eb, STROBE_ERR_FORMAT,
                                 "%s: offset %llu: CHUNK record: open frame %llu is region %llu, the stream has %llu",
                                 d->name, (unsigned long long)ev->offset, (unsigned long long)i,
                                 (unsigned long long)region, (unsigned long long)d->stack[i]);
        if (first) {
            if (entry > ticks || (i && entry < d->pending[2 * i - 1]))
                return strobe__error(eb, STROBE_ERR_FORMAT,
                                     "%s: offset %llu: CHUNK record: open frame %llu entered at %llu ticks, out of order",
                                     d->name, (unsigned long long)ev->offset, (unsigned long long)i,
                                     (unsigned long long)entry);
            d->pending[2 * i] = region;
            d->pending[2 * i + 1] = entry;
            if ((rc = push(d, region, (size_t)ev->offset, eb)))
                return rc;
        }
    }
    if (first) {
        d->npending = (size_t)depth;
        d->ipending = 0;
    }
    d->have_last = false; /* the writer starts every chunk with a full ENTER */
    d->ticks = ticks;
    ev->kind = 0; /* not an event */
    return 0;
}

static int push(struct strobe__stream_decoder *d, uint64_t region, size_t off, struct strobe_errbuf *eb)
{
    if (d->depth == d->cap) {
        if (d->cap >= MAX_DEPTH)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: regions nested deeper than %u", d->name,
                                 off, MAX_DEPTH);
        size_t cap = d->cap ? d->cap * 2 : 64;
        uint64_t *s = realloc(d->stack, cap * sizeof *s);
        if (!s)
            return strobe__error(eb, -ENOMEM, "%s: out of memory", d->name);
        d->stack = s;
        d->cap = cap;
    }
    d->stack[d->depth++] = region;
    d->last_region = region;
    d->have_last = true;
    return 0;
}

/* Abort causes a COUNTS record may carry: more means corruption. */
#define MAX_COUNTS_CAUSES 64

/* A TM COUNTS record (format.h): thread, site, the counts and n abort
 * counts by cause; causes beyond those the reader knows are skipped. */
static int tm_counts_payload(struct strobe__stream_decoder *d, struct strobe__cursor *c, struct strobe__raw_event *ev,
                             struct strobe_errbuf *eb)
{
    struct strobe__tm_counts *k = &d->counts;
    memset(k, 0, sizeof *k);
    c->what = "TM COUNTS record";
    ev->kind = STROBE__RAW_TM_COUNTS;
    uint64_t *fixed[] = {&k->thread,        &k->site,          &k->transactions,  &k->rollbacks,
                         &k->serialized[0], &k->serialized[1], &k->serialized[2], &k->cancels};
    uint64_t n, skip;
    int rc = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] && rc == 0; i++)
        rc = get_u(c, fixed[i], eb);
    if (rc || (rc = get_u(c, &n, eb)))
        return rc;
    if (k->thread > UINT32_MAX - 1)
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: offset %llu: TM COUNTS record: thread index %llu out of range", d->name,
                             (unsigned long long)ev->offset, (unsigned long long)k->thread);
    if (n > MAX_COUNTS_CAUSES)
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: offset %llu: TM COUNTS record: %llu abort causes (at most %d)", d->name,
                             (unsigned long long)ev->offset, (unsigned long long)n, MAX_COUNTS_CAUSES);
    for (uint64_t i = 0; i < n && rc == 0; i++)
        rc = get_u(c, i < STROBE_TM_NCAUSES ? &k->aborts[i] : &skip, eb);
    return rc;
}

/* STROBE_EXT_TM (format.h): the event and its arguments, each checked
 * against the values the runtime writes. */
static int tm_payload(struct strobe__stream_decoder *d, struct strobe__cursor *c, struct strobe__raw_event *ev,
                      struct strobe_errbuf *eb)
{
    /* largest argument per event: START attempt, LOCKED ticks, ABORT
     * cause, SERIAL cause, CANCEL flag, LOGGING level (3 = events; 2 was
     * events before the "counters" level existed) */
    static const uint64_t max_arg[] = {0, UINT64_MAX, UINT64_MAX, 6, 3, 1, 3};
    int rc;
    ev->kind = STROBE__RAW_TM;
    ev->value = 0;
    ev->parent = 0;
    if ((rc = get_u(c, &ev->id, eb)))
        return rc;
    if (ev->id == STROBE_TM_COUNTS)
        return tm_counts_payload(d, c, ev, eb);
    if (ev->id == 0 || ev->id >= sizeof max_arg / sizeof max_arg[0])
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: unknown TM event %llu", d->name,
                             (unsigned long long)ev->offset, (unsigned long long)ev->id);
    uint64_t arg;
    if ((rc = get_u(c, &arg, eb)))
        return rc;
    bool positive = ev->id == STROBE_TM_ABORT || ev->id == STROBE_TM_SERIAL || ev->id == STROBE_TM_START ||
                    ev->id == STROBE_TM_LOGGING;
    if (arg > max_arg[ev->id] || (positive && arg == 0))
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: TM event %llu: argument %llu out of range",
                             d->name, (unsigned long long)ev->offset, (unsigned long long)ev->id,
                             (unsigned long long)arg);
    ev->value = (int64_t)arg;
    if (ev->id == STROBE_TM_ABORT) /* culprit thread index + 1 */
        return get_u(c, &ev->parent, eb);
    return 0;
}

/* STROBE_EXT_SYNC (format.h): the op, the object, the op's arguments. */
static int sync_payload(struct strobe__stream_decoder *d, struct strobe__cursor *c, struct strobe__raw_event *ev,
                        struct strobe_errbuf *eb)
{
    /* arguments per op; flags (COND_WAIT's timeout, BARRIER's serial) are 0 or 1, ARRIVE's wait 0 */
    static const uint8_t nargs[] = {0, 3, 3, 3, 3, 3, 1, 5, 1, 1, 3, 1, 2, 1, 2};
    uint64_t obj;
    int rc;
    ev->kind = STROBE__RAW_SYNC;
    if ((rc = get_u(c, &ev->id, eb)) || (rc = get_u(c, &obj, eb)))
        return rc;
    if (ev->id == 0 || ev->id >= sizeof nargs)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: unknown SYNC op %llu", d->name,
                             (unsigned long long)ev->offset, (unsigned long long)ev->id);
    ev->value = (int64_t)obj;
    for (unsigned i = 0; i < nargs[ev->id] && rc == 0; i++)
        rc = get_u(c, &ev->sync_args[i], eb);
    if (rc == 0 && ((ev->id == STROBE_SYNC_COND_WAIT && ev->sync_args[4] > 1) ||
                    (ev->id == STROBE_SYNC_BARRIER && (ev->sync_args[1] == 0 || ev->sync_args[2] > 1)) ||
                    (ev->id == STROBE_SYNC_ARRIVE && ev->sync_args[0] != 0)))
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: SYNC op %llu: argument out of range",
                             d->name, (unsigned long long)ev->offset, (unsigned long long)ev->id);
    /* a wait's frames, then the ticket, in records that have them */
    ev->nframes = 0;
    uint64_t n, a;
    if (rc || c->p == c->end)
        return rc;
    if (ev->id == STROBE_SYNC_RELEASE || ev->id == STROBE_SYNC_SIGNAL || ev->id == STROBE_SYNC_BROADCAST)
        return get_u(c, &ev->ticket, eb);
    if ((rc = get_u(c, &n, eb)))
        return rc;
    if (n > STROBE_SYNC_MAX_FRAMES)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: SYNC record: %llu frames (at most %u)",
                             d->name, (unsigned long long)ev->offset, (unsigned long long)n,
                             STROBE_SYNC_MAX_FRAMES);
    for (uint64_t i = 0; i < n; i++) {
        if ((rc = get_u(c, &a, eb)))
            return rc;
        if (a == 0 || a >= (1ull << 57))
            return strobe__error(eb, STROBE_ERR_FORMAT,
                                 "%s: offset %llu: SYNC record: frame %llu address %#llx out of range", d->name,
                                 (unsigned long long)ev->offset, (unsigned long long)i, (unsigned long long)a);
        d->frames[i] = a;
    }
    ev->nframes = (uint32_t)n;
    return c->p == c->end ? 0 : get_u(c, &ev->ticket, eb);
}

/* STROBE_EXT_SAMPLE (format.h): missed, flags, the frames into d->frames. */
static int sample_payload(struct strobe__stream_decoder *d, struct strobe__cursor *c, struct strobe__raw_event *ev,
                          struct strobe_errbuf *eb)
{
    uint64_t weight, missed, flags, n, v;
    int rc;
    ev->kind = STROBE__RAW_SAMPLE;
    if ((rc = get_u(c, &weight, eb)) || (rc = get_u(c, &missed, eb)) || (rc = get_u(c, &flags, eb)) ||
        (rc = get_u(c, &n, eb)))
        return rc;
    /* weights and misses are periods of a thread's CPU time: even at
     * 10 kHz, 2^40 of them are three years */
    if (weight == 0 || weight > (1ull << 40) || missed > (1ull << 40) || flags > STROBE_SAMPLE_TRUNCATED ||
        n == 0 || n > STROBE_SAMPLE_MAX_FRAMES)
        return strobe__error(
            eb, STROBE_ERR_FORMAT,
            "%s: offset %llu: SAMPLE record: weight %llu, missed %llu, flags %llu, %llu frames "
            "out of range (1 to %u)",
            d->name, (unsigned long long)ev->offset, (unsigned long long)weight, (unsigned long long)missed,
            (unsigned long long)flags, (unsigned long long)n, STROBE_SAMPLE_MAX_FRAMES);
    for (uint64_t i = 0; i < n; i++) {
        if ((rc = get_u(c, &v, eb)))
            return rc;
        uint64_t a = i == 0 ? v : d->frames[i - 1] + (uint64_t)strobe_unzigzag(v);
        if (a == 0 || a >= (1ull << 57)) /* user-space addresses (5-level paging at most) */
            return strobe__error(eb, STROBE_ERR_FORMAT,
                                 "%s: offset %llu: SAMPLE record: frame %llu address %#llx out of range",
                                 d->name, (unsigned long long)ev->offset, (unsigned long long)i,
                                 (unsigned long long)a);
        d->frames[i] = a;
    }
    ev->value = (int64_t)missed;
    ev->id = flags;
    ev->parent = weight;
    ev->nframes = (uint32_t)n;
    return 0;
}

/* STROBE_EXT_MPI (format.h): the op and its parameters. */
static int mpi_payload(struct strobe__stream_decoder *d, struct strobe__cursor *c, struct strobe__raw_event *ev,
                       struct strobe_errbuf *eb)
{
    struct strobe_mpi_args *a = &ev->mpi;
    uint64_t op, peer = 0, tag = 0, root;
    int rc;
    ev->kind = STROBE__RAW_MPI;
    if ((rc = get_u(c, &op, eb)))
        return rc;
    a->op = (uint32_t)op;
    a->peer = STROBE_NONE;
    switch (op) {
    case STROBE_MPI_ISEND:
    case STROBE_MPI_ISEND_COMPLETE:
    case STROBE_MPI_IRECV_REQUEST:
    case STROBE_MPI_IRECV:
        if ((rc = get_u(c, &a->request, eb)))
            return rc;
        if (op == STROBE_MPI_ISEND_COMPLETE || op == STROBE_MPI_IRECV_REQUEST)
            return 0;
        /* fall through - the message */
    case STROBE_MPI_SEND:
    case STROBE_MPI_RECV:
        if ((rc = get_u(c, &peer, eb)) || (rc = get_u(c, &tag, eb)) || (rc = get_u(c, &a->comm, eb)) ||
            (rc = get_u(c, &a->bytes, eb)))
            return rc;
        a->tag = strobe_unzigzag(tag);
        break;
    case STROBE_MPI_COLL_BEGIN:
    case STROBE_MPI_FINALIZE:
        return 0;
    case STROBE_MPI_COLL_END: {
        uint64_t coll;
        if ((rc = get_u(c, &coll, eb)) || (rc = get_u(c, &a->comm, eb)) || (rc = get_u(c, &root, eb)) ||
            (rc = get_u(c, &a->bytes, eb)) || (rc = get_u(c, &a->received, eb)))
            return rc;
        if (coll == 0 || coll >= STROBE_MPI_NCOLLS || root > (uint64_t)INT32_MAX + 1)
            return strobe__error(
                eb, STROBE_ERR_FORMAT,
                "%s: offset %llu: MPI COLL_END record: collective %llu, root %llu out of range", d->name,
                (unsigned long long)ev->offset, (unsigned long long)coll, (unsigned long long)root);
        a->coll = (uint32_t)coll;
        a->peer = root ? (uint32_t)(root - 1) : STROBE_NONE;
        return 0;
    }
    case STROBE_MPI_INIT:
        if ((rc = get_u(c, &peer, eb)) || (rc = get_u(c, &a->bytes, eb)))
            return rc;
        break;
    default:
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: unknown MPI op %llu", d->name,
                             (unsigned long long)ev->offset, (unsigned long long)op);
    }
    if (peer > INT32_MAX)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: MPI op %llu: rank %llu out of range",
                             d->name, (unsigned long long)ev->offset, (unsigned long long)op,
                             (unsigned long long)peer);
    a->peer = (uint32_t)peer;
    return 0;
}

static int ext_payload(struct strobe__stream_decoder *d, unsigned type, struct strobe__cursor *c,
                       struct strobe__raw_event *ev, struct strobe_errbuf *eb)
{
    int rc = 0;
    uint64_t v;
    switch (type) {
    case STROBE_EXT_THREAD_BEGIN:
        ev->kind = STROBE__RAW_THREAD_BEGIN;
        return (rc = get_u(c, &ev->tid, eb)) ? rc : get_u(c, &ev->parent, eb);
    case STROBE_EXT_THREAD_END: {
        ev->kind = STROBE__RAW_THREAD_END;
        uint64_t *f[] = { &ev->rusage.utime_us, &ev->rusage.stime_us, &ev->rusage.maxrss_kb, &ev->rusage.minflt,
                          &ev->rusage.majflt,   &ev->rusage.nvcsw,    &ev->rusage.nivcsw };
        for (size_t i = 0; i < sizeof f / sizeof f[0] && rc == 0; i++)
            rc = get_u(c, f[i], eb);
        return rc;
    }
    case STROBE_EXT_METRIC:
        ev->kind = STROBE__RAW_METRIC;
        if ((rc = get_u(c, &ev->id, eb)) || (rc = get_u(c, &v, eb)))
            return rc;
        ev->value = strobe_unzigzag(v);
        return 0;
    case STROBE_EXT_THREAD_CREATE:
    case STROBE_EXT_THREAD_JOIN:
        ev->kind = type == STROBE_EXT_THREAD_CREATE ? STROBE__RAW_THREAD_CREATE : STROBE__RAW_THREAD_JOIN;
        if ((rc = get_u(c, &ev->id, eb)))
            return rc;
        return c->p == c->end ? 0 : get_u(c, &ev->ticket, eb); /* older records have none */
    case STROBE_EXT_FORK:
        ev->kind = STROBE__RAW_FORK;
        if ((rc = get_u(c, &v, eb)))
            return rc;
        ev->value = (int64_t)v;
        return 0;
    case STROBE_EXT_INHERIT:
        ev->kind = STROBE__RAW_INHERIT;
        if ((rc = get_u(c, &ev->region, eb)))
            return rc;
        return push(d, ev->region, (size_t)ev->offset, eb);
    case STROBE_EXT_TM:
        return tm_payload(d, c, ev, eb);
    case STROBE_EXT_SYNC:
        return sync_payload(d, c, ev, eb);
    case STROBE_EXT_SAMPLE:
        return sample_payload(d, c, ev, eb);
    case STROBE_EXT_MPI:
        return mpi_payload(d, c, ev, eb);
    case STROBE_EXT_CHUNK:
        return chunk_payload(d, c, ev, eb);
    case STROBE_EXT_ALLOC:
        ev->kind = STROBE__RAW_ALLOC;
        if ((rc = get_u(c, &ev->id, eb)) || (rc = get_u(c, &ev->parent, eb)) || (rc = get_u(c, &ev->address, eb)) ||
            (rc = get_u(c, &v, eb)))
            return rc;
        if (ev->id < STROBE_ALLOC_ALLOC || ev->id > STROBE_ALLOC_FREE || ev->parent == 0 ||
            ev->parent >= STROBE_ALLOC_NCALLS)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: ALLOC record: operation %llu, call %llu unknown",
                                 d->name, (unsigned long long)ev->offset, (unsigned long long)ev->id,
                                 (unsigned long long)ev->parent);
        if (v > INT64_MAX)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %llu: ALLOC record: size %llu out of range",
                                 d->name, (unsigned long long)ev->offset, (unsigned long long)v);
        ev->value = (int64_t)v;
        return 0;
    default:
        ev->kind = 0; /* newer record type: skipped */
        return 0;
    }
}

static const char *ext_name(unsigned type)
{
    static const char *const names[] = {"EXT record",    "THREAD_BEGIN record",  "THREAD_END record",
                                        "METRIC record", "THREAD_CREATE record", "THREAD_JOIN record",
                                        "FORK record",   "INHERIT record",       "TM record",
                                        "SAMPLE record", "SYNC record",          "ALLOC record",
                                        "MPI record",    "CHUNK record"};
    return type < sizeof names / sizeof names[0] ? names[type] : "EXT record";
}

int strobe__stream_decode(struct strobe__stream_decoder *d, struct strobe__raw_event *ev,
                          struct strobe_errbuf *eb)
{
    for (;;) {
        if (d->ipending < d->npending) { /* a frame open before the kept window */
            memset(ev, 0, sizeof *ev);
            ev->kind = STROBE__RAW_ENTER;
            ev->synthetic = true;
            ev->offset = d->pos;
            ev->region = d->pending[2 * d->ipending];
            ev->ticks = d->pending[2 * d->ipending + 1];
            ev->depth = (uint32_t)++d->ipending;
            return 1;
        }
        int rc = d->ring ? ring_next_record(d, eb) : next_record(d->buf, d->len, d->hdr.chunk_size, &d->pos, d->name, eb);
        if (rc <= 0)
            return rc;
        size_t off = d->pos;
        uint8_t b0 = d->buf[off];
        unsigned kind = b0 >> 6;
        if (d->chunked && !d->ring && off == d->next_chunk && b0 != STROBE_EXT_CHUNK)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: chunk %zu of a chunked stream does not begin "
                                 "with a CHUNK record", d->name, off, off / d->hdr.chunk_size);
        struct strobe__cursor c = { d->buf, d->buf + off + 1, d->buf + chunk_end(off, d->hdr.chunk_size, d->len), d->name,
                            "record" };
        memset(ev, 0, sizeof *ev);
        ev->offset = off;
        uint64_t delta;
        unsigned ext_type = 0;
        if (kind == STROBE_EV_EXT) {
            ext_type = b0 & 63;
            c.what = ext_name(ext_type);
            if ((rc = get_u(&c, &delta, eb)))
                return rc;
        } else {
            c.what = kind == STROBE_EV_ENTER ? "ENTER record" : kind == STROBE_EV_EXIT ? "EXIT record" : "ENTER_SAME record";
            delta = b0 & 31;
            if (b0 & 0x20) {
                uint64_t more;
                if ((rc = get_u(&c, &more, eb)))
                    return rc;
                if (more > (UINT64_MAX >> 5))
                    return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: time delta overflows 64 bits",
                                         d->name, off);
                delta |= more << 5;
            }
        }
        if (delta > UINT64_MAX - d->ticks)
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: timestamp overflows 64 bits", d->name, off);
        switch (kind) {
        case STROBE_EV_ENTER:
            ev->kind = STROBE__RAW_ENTER;
            if ((rc = get_u(&c, &ev->region, eb)) || (rc = push(d, ev->region, off, eb)))
                return rc;
            break;
        case STROBE_EV_ENTER_SAME:
            if (!d->have_last)
                return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: ENTER_SAME with no earlier ENTER",
                                     d->name, off);
            ev->kind = STROBE__RAW_ENTER;
            ev->region = d->last_region;
            if ((rc = push(d, ev->region, off, eb)))
                return rc;
            break;
        case STROBE_EV_EXIT:
            if (d->depth == 0)
                return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: EXIT with no open region", d->name, off);
            ev->kind = STROBE__RAW_EXIT;
            ev->region = d->stack[--d->depth];
            break;
        default: {
            uint64_t plen;
            if ((rc = get_u(&c, &plen, eb)))
                return rc;
            if (plen > (uint64_t)(c.end - c.p))
                return strobe__error(eb, STROBE_ERR_TRUNCATED, "%s: offset %zu: %s of %llu bytes runs past %s",
                                     d->name, off, c.what, (unsigned long long)plen,
                                     c.end == d->buf + d->len ? "the end of the file" : "its chunk");
            c.end = c.p + plen;
            if ((rc = ext_payload(d, ext_type, &c, ev, eb)))
                return rc;
            c.p = c.end; /* newer fields inside a known record are skipped */
            break;
        }
        }
        d->ticks += delta;
        d->pos = (size_t)(c.p - d->buf);
        if (ev->kind == 0)
            continue;
        ev->ticks = d->ticks;
        ev->depth = (uint32_t)d->depth;
        return 1;
    }
}

/* ---- profile files ------------------------------------------------------ */

/* Whether `node` is a node slot before slot i (64-byte slots). */
static bool earlier_node(const uint8_t *slots, uint32_t i, uint32_t node)
{
    uint32_t tag = 0;
    if (node < i)
        memcpy(&tag, slots + (size_t)node * 64, 4);
    return node < i && tag == STROBE_SLOT_NODE;
}

int strobe__prof_check(const uint8_t *buf, size_t len, const char *name, struct strobe__prof_view *out,
                       struct strobe_errbuf *eb)
{
    struct strobe_prof_header h;
    if (len < sizeof h)
        return strobe__error(eb, STROBE_ERR_TRUNCATED, "%s: file is %zu bytes, shorter than its %zu-byte header",
                             name, len, sizeof h);
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, STROBE_MAGIC_PROFILE, 8) != 0)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset 0: bad magic (not a strobe profile file)", name);
    if (h.version != STROBE_FORMAT_VERSION)
        return strobe__error(eb, STROBE_ERR_VERSION, "%s: offset 8: format version %u, this strobe reads %u",
                             name, h.version, STROBE_FORMAT_VERSION);
    if (h.header_size != sizeof h || h.slot_size != sizeof(struct strobe_prof_node))
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset 12: header size %u / slot size %u, expected 64/64",
                             name, h.header_size, h.slot_size);
    if (h.slot_count == 0 || h.slot_count > (len - sizeof h) / h.slot_size)
        return strobe__error(eb, h.slot_count ? STROBE_ERR_TRUNCATED : STROBE_ERR_FORMAT,
                             "%s: offset 24: slot count %u does not fit the file's %zu bytes", name, h.slot_count,
                             len);
    const uint8_t *slots = buf + sizeof h;
    for (uint32_t i = 0; i < h.slot_count; i++) {
        size_t off = sizeof h + (size_t)i * h.slot_size;
        uint32_t tag;
        memcpy(&tag, slots + (size_t)i * h.slot_size, 4);
        if (tag == STROBE_SLOT_NODE) {
            struct strobe_prof_node n;
            memcpy(&n, slots + (size_t)i * h.slot_size, sizeof n);
            if (i == 0) {
                if (n.parent != STROBE_PROF_NONE || n.region != STROBE_PROF_NO_REGION)
                    return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: slot 0 is not the call-tree root",
                                         name, off);
                continue;
            }
            uint32_t ptag = 0;
            if (n.parent < i)
                memcpy(&ptag, slots + (size_t)n.parent * h.slot_size, 4);
            if (n.parent >= i || ptag != STROBE_SLOT_NODE)
                return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: slot %u has invalid parent %u", name, off,
                                     i, n.parent);
            if (n.min_ticks != UINT64_MAX && (n.min_ticks > n.max_ticks || n.max_ticks > n.incl_ticks))
                return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: slot %u has min/max outside its total",
                                     name, off, i);
        } else if (tag == STROBE_SLOT_METRIC && i > 0) {
            struct strobe_prof_metric m;
            memcpy(&m, slots + (size_t)i * h.slot_size, sizeof m);
            if (!earlier_node(slots, i, m.node))
                return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: metric slot %u has invalid node %u",
                                     name, off, i, m.node);
        } else if (tag == STROBE_SLOT_SYNC && i > 0) {
            struct strobe_prof_sync s;
            memcpy(&s, slots + (size_t)i * h.slot_size, sizeof s);
            if (!earlier_node(slots, i, s.node))
                return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: sync slot %u has invalid node %u",
                                     name, off, i, s.node);
            if (s.kind < STROBE_SYNC_MUTEX || s.kind > STROBE_SYNC_BARRIER_OBJ || s.contended > s.acquisitions ||
                s.max_wait_ticks > s.wait_ticks || s.hold_samples > s.acquisitions)
                return strobe__error(eb, STROBE_ERR_FORMAT,
                                     "%s: offset %zu: sync slot %u has an unknown kind or inconsistent counts",
                                     name, off, i);
        } else {
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: slot %u has unknown tag %u", name, off, i,
                                 tag);
        }
    }
    out->hdr = h;
    out->slots = slots;
    return 0;
}

/* ---- meta ------------------------------------------------------------- */

int strobe__meta_parse(const char *text, size_t len, const char *name, char ***keys, char ***values, size_t *n,
                       struct strobe_errbuf *eb)
{
    const char *p = text, *end = text + len;
    unsigned lineno = 0;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        lineno++;
        const char *line = p;
        size_t llen = (size_t)(eol - p);
        p = eol + 1;
        if (llen == 0)
            continue;
        if (memchr(line, 0, llen))
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s:%u: NUL byte", name, lineno);
        const char *colon = memchr(line, ':', llen);
        if (!colon || colon == line || colon + 1 >= eol || colon[1] != ' ')
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s:%u: expected 'key: value'", name, lineno);
        int rc;
        if ((rc = APPEND(*keys, *n, name, eb)) || (rc = APPEND(*values, *n, name, eb)))
            return rc;
        char *k = strndup(line, (size_t)(colon - line));
        char *v = strndup(colon + 2, (size_t)(eol - colon - 2));
        if (!k || !v) {
            free(k);
            free(v);
            return strobe__error(eb, -ENOMEM, "%s: out of memory", name);
        }
        (*keys)[*n] = k;
        (*values)[*n] = v;
        (*n)++;
    }
    return 0;
}
