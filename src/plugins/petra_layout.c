/* SPDX-License-Identifier: MIT */
/*
 * The key layout of a `petra` store heap: opening a heap as a store,
 * descriptors, name hashing and probing, value formatting (see
 * petra_layout.h and docs/petra-store.md, "Key layout").
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugins/petra_layout.h"

static const char *const structure_names[STROBE__PST_NSTRUCTURES] = {
    "store.info", "store.names", "store.strings", "store.latest", "store.ring.ts", "store.ring.value",
};

/* Buckets of map i for a heap of `size` bytes (fixed at creation). The
 * bucket arrays live in the heap (a checkpoint builds new ones next to
 * the old), so they scale with it: the ring maps get one bucket per 2 KiB
 * of heap (256 MiB: 131072, about 2 keys per bucket when the heap is
 * full), the per-metric maps an eighth of that; info holds two keys. */
static uint32_t structure_buckets(int i, uint64_t size)
{
    if (i == STROBE__PST_INFO)
        return 16;
    uint64_t b = 256;
    while (b < (1u << 20) && b * 2 <= size / 2048)
        b *= 2;
    return (uint32_t)(i == STROBE__PST_RING_TS || i == STROBE__PST_RING_VALUE ? b : b / 8);
}

uint64_t strobe__pst_desc_pack(const struct strobe__pst_desc *d)
{
    return (uint64_t)d->type | (uint64_t)(d->name_len - 1) << 8 | (uint64_t)(d->history - 1) << 24 |
           1ull << 40;
}

int strobe__pst_desc_unpack(uint64_t word, struct strobe__pst_desc *d)
{
    unsigned type = (unsigned)(word & 0xff);
    if (!(word >> 40 & 1) || word >> 41 || type < STROBE_MT_U8 || type >= STROBE_MT_CHAR)
        return STROBE_ERR_FORMAT;
    d->type = (enum strobe_metric_type)type;
    d->name_len = (uint32_t)(word >> 8 & 0xffff) + 1;
    d->history = (uint32_t)(word >> 24 & 0xffff) + 1;
    return d->name_len > STROBE__PST_NAME_MAX ? STROBE_ERR_FORMAT : 0;
}

uint64_t strobe__pst_hash(const char *name, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)name[i];
        h *= 0x100000001b3ull;
    }
    /* splitmix64's finaliser: FNV's low bits alone are poorly mixed */
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h % STROBE__PST_ID_MAX + 1;
}

int strobe__pst_close(struct strobe__pst *s)
{
    if (s->t)
        strobe_petra_thread_detach(s->t);
    s->t = NULL;
    int rc = s->heap ? strobe_petra_close(s->heap) : 0;
    s->heap = NULL;
    return rc;
}

/* Copy petra's reason into why without the "PATH: " it may start with
 * (callers name the file themselves). */
static void reason(char *why, size_t why_len, const char *path, const char *pwhy, int rc)
{
    size_t n = strlen(path);
    if (strncmp(pwhy, path, n) == 0 && pwhy[n] == ':' && pwhy[n + 1] == ' ')
        pwhy += n + 2;
    snprintf(why, why_len, "%s", pwhy[0] ? pwhy : strobe_strerror(rc));
}

/* Open an existing heap as a store: every structure, the magic and the
 * version must be there. Writes nothing but what recovery writes. */
static int open_existing(const char *path, int salvage, struct strobe__pst *out, char *why, size_t why_len)
{
    char pwhy[512] = "";
    struct strobe_petra_options opt = {.salvage = salvage};
    int rc = strobe_petra_open(path, &opt, &out->heap, pwhy, sizeof pwhy);
    if (rc < 0) {
        reason(why, why_len, path, pwhy, rc);
        out->heap = NULL;
        return rc;
    }
    for (int i = 0; i < STROBE__PST_NSTRUCTURES; i++) {
        int id = strobe_petra_structure_find(out->heap, structure_names[i]);
        enum strobe_petra_kind kind;
        const char *name;
        if (id < 0 || strobe_petra_structure_info(out->heap, id, &name, &kind) < 0 ||
            kind != STROBE_PETRA_MAP) {
            snprintf(why, why_len, "not a petra store heap (no hash map '%s')", structure_names[i]);
            strobe__pst_close(out);
            return STROBE_ERR_FORMAT;
        }
        out->sid[i] = id;
    }
    if ((rc = strobe_petra_thread_attach(out->heap, &out->t)) < 0) {
        snprintf(why, why_len, "cannot attach a thread: %s", strobe_strerror(rc));
        out->t = NULL;
        strobe__pst_close(out);
        return rc;
    }
    uint64_t magic = 0, version = 0;
    rc = strobe_petra_get(out->t, out->sid[STROBE__PST_INFO], STROBE__PST_INFO_MAGIC, &magic);
    if (rc == 0)
        rc = strobe_petra_get(out->t, out->sid[STROBE__PST_INFO], STROBE__PST_INFO_VERSION, &version);
    if (rc < 0 || magic != STROBE__PST_MAGIC) {
        snprintf(why, why_len, "not a petra store heap (no store magic)");
        rc = STROBE_ERR_FORMAT;
    } else if (version != STROBE__PST_VERSION) {
        snprintf(why, why_len, "petra store layout version %" PRIu64 " (this strobe reads %u)", version,
                 STROBE__PST_VERSION);
        rc = STROBE_ERR_VERSION;
    }
    if (rc < 0)
        strobe__pst_close(out);
    return rc;
}

/* Make a complete store heap at path, atomically: it is built as
 * PATH.new-PID (structures, magic), closed, then linked into place, so
 * PATH is never a half-made store, whenever the process dies. A killed
 * creation leaves PATH.new-PID behind (safe to delete). -EEXIST when
 * PATH appeared meanwhile. */
static int create_new(const char *path, uint64_t size, char *why, size_t why_len)
{
    char tmp[4200], pwhy[512] = "";
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.new-%ld", path, (long)getpid()) >= sizeof tmp) {
        snprintf(why, why_len, "path too long");
        return -ENAMETOOLONG;
    }
    unlink(tmp); /* left by a killed creation of a process with our pid */
    struct strobe__pst s = {0};
    /* one writer thread (the store), plus one slot to spare; the
     * descriptor logs take max_threads * log_bytes of the file */
    struct strobe_petra_options opt = {.size = size, .max_threads = 2};
    int rc = strobe_petra_create(tmp, &opt, &s.heap, pwhy, sizeof pwhy);
    if (rc < 0) {
        reason(why, why_len, tmp, pwhy, rc);
        return rc;
    }
    for (int i = 0; rc == 0 && i < STROBE__PST_NSTRUCTURES; i++) {
        int id = strobe_petra_structure_create(s.heap, structure_names[i], STROBE_PETRA_MAP,
                                               structure_buckets(i, size ? size : 256ull << 20));
        if (id < 0) {
            snprintf(why, why_len, "cannot create '%s': %s", structure_names[i], strobe_strerror(id));
            rc = id;
        }
        s.sid[i] = id;
    }
    if (rc == 0 && (rc = strobe_petra_thread_attach(s.heap, &s.t)) < 0) {
        s.t = NULL;
        snprintf(why, why_len, "cannot attach a thread: %s", strobe_strerror(rc));
    }
    if (rc == 0) {
        struct strobe_petra_op ops[2] = {
            {.type = STROBE_PETRA_INSERT,
             .structure = (uint8_t)s.sid[STROBE__PST_INFO],
             .key = STROBE__PST_INFO_MAGIC,
             .value = STROBE__PST_MAGIC},
            {.type = STROBE_PETRA_INSERT,
             .structure = (uint8_t)s.sid[STROBE__PST_INFO],
             .key = STROBE__PST_INFO_VERSION,
             .value = STROBE__PST_VERSION},
        };
        if ((rc = strobe_petra_execute(s.t, ops, 2)) < 0)
            snprintf(why, why_len, "cannot write the store's magic: %s", strobe_strerror(rc));
    }
    int crc = strobe__pst_close(&s);
    if (rc == 0 && crc < 0) {
        snprintf(why, why_len, "close: %s", strobe_strerror(crc));
        rc = crc;
    }
    /* link, unlike rename, never replaces a file that appeared meanwhile */
    if (rc == 0 && link(tmp, path) < 0) {
        rc = -errno;
        if (rc != -EEXIST)
            snprintf(why, why_len, "%s", strerror(errno));
    }
    unlink(tmp);
    if (rc == 0) {
        /* the new name durable too (on a power failure) */
        char dir[4200];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *(slash == dir ? slash + 1 : slash) = 0;
        int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
            fsync(fd);
            close(fd);
        }
    }
    return rc;
}

int strobe__pst_open(const char *path, int create, uint64_t size, int salvage, struct strobe__pst *out,
                     char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    int rc = open_existing(path, salvage, out, why, why_len);
    if (rc == -ENOENT && create) {
        rc = create_new(path, size, why, why_len);
        if (rc == 0 || rc == -EEXIST)
            rc = open_existing(path, salvage, out, why, why_len);
    }
    return rc;
}

int strobe__pst_read_name(struct strobe__pst *s, uint64_t id, const struct strobe__pst_desc *d, char *buf,
                          size_t cap)
{
    if (cap <= d->name_len)
        return -ENOSPC;
    for (uint32_t c = 0; c * 8 < d->name_len; c++) {
        uint64_t w;
        int rc = strobe_petra_get(s->t, s->sid[STROBE__PST_STRINGS], strobe__pst_key(id, c), &w);
        if (rc < 0)
            return rc == -ENOENT ? STROBE_ERR_FORMAT : rc;
        for (uint32_t b = 0; b < 8 && c * 8 + b < d->name_len; b++)
            buf[c * 8 + b] = (char)(w >> (8 * b) & 0xff);
    }
    buf[d->name_len] = 0;
    return strlen(buf) == d->name_len ? 0 : STROBE_ERR_FORMAT;
}

int strobe__pst_lookup(struct strobe__pst *s, const char *name, size_t len, uint64_t *id,
                       struct strobe__pst_desc *d)
{
    char buf[STROBE__PST_NAME_MAX + 1];
    uint64_t at = *id ? *id : strobe__pst_hash(name, len);
    /* ids are never deleted, so a probe sequence has no holes: the first
     * free id ends it. The bound only guards against a corrupt heap. */
    for (unsigned n = 0; n < (1u << 20); n++, at = strobe__pst_probe_next(at)) {
        uint64_t word;
        int rc = strobe_petra_get(s->t, s->sid[STROBE__PST_NAMES], at, &word);
        if (rc == -ENOENT) {
            *id = at;
            return -ENOENT;
        }
        if (rc < 0)
            return rc;
        if ((rc = strobe__pst_desc_unpack(word, d)) < 0)
            return rc;
        if (d->name_len != len)
            continue;
        if ((rc = strobe__pst_read_name(s, at, d, buf, sizeof buf)) < 0)
            return rc;
        if (memcmp(buf, name, len) == 0) {
            *id = at;
            return 0;
        }
    }
    return STROBE_ERR_FORMAT;
}

int strobe__pst_format_value(enum strobe_metric_type type, uint64_t bits, char *buf, size_t cap)
{
    int n;
    switch (type) {
    case STROBE_MT_F32:
    case STROBE_MT_D64: {
        double v;
        memcpy(&v, &bits, sizeof v);
        n = snprintf(buf, cap, "%.15g", v);
        if (n > 0 && (size_t)n < cap && strtod(buf, NULL) != v && !isnan(v))
            n = snprintf(buf, cap, "%.17g", v);
        break;
    }
    case STROBE_MT_S8:
    case STROBE_MT_S16:
    case STROBE_MT_S32:
    case STROBE_MT_S64:
        n = snprintf(buf, cap, "%" PRId64, (int64_t)bits);
        break;
    default:
        n = snprintf(buf, cap, "%" PRIu64, bits);
        break;
    }
    return n < 0 || (size_t)n >= cap ? -ENOSPC : 0;
}
