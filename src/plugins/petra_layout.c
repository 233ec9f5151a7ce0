/* SPDX-License-Identifier: MIT */
/*
 * The key layout of a `petra` store heap: opening a heap as a store,
 * descriptors, name hashing and probing, value formatting (see
 * petra_layout.h and docs/petra-store.md, "Key layout").
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/petra_layout.h"

static const char *const structure_names[STROBE__PST_NSTRUCTURES] = {
    "store.info", "store.names", "store.strings", "store.latest", "store.ring.ts", "store.ring.value",
};

/* Buckets of each map (0 = petra's default, 65536): info holds two keys. */
static const uint32_t structure_buckets[STROBE__PST_NSTRUCTURES] = {16, 0, 0, 0, 0, 0};

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

/* Check the magic and version, or write them (create) when absent. */
static int check_info(struct strobe__pst *s, int create, char *why, size_t why_len)
{
    uint64_t magic = 0, version = 0;
    int rc = strobe_petra_get(s->t, s->sid[STROBE__PST_INFO], STROBE__PST_INFO_MAGIC, &magic);
    if (rc == -ENOENT && create) {
        struct strobe_petra_op ops[2] = {
            {.type = STROBE_PETRA_INSERT, .structure = (uint8_t)s->sid[STROBE__PST_INFO],
             .key = STROBE__PST_INFO_MAGIC, .value = STROBE__PST_MAGIC},
            {.type = STROBE_PETRA_INSERT, .structure = (uint8_t)s->sid[STROBE__PST_INFO],
             .key = STROBE__PST_INFO_VERSION, .value = STROBE__PST_VERSION},
        };
        if ((rc = strobe_petra_execute(s->t, ops, 2)) < 0) {
            snprintf(why, why_len, "cannot write the store's magic: %s", strobe_strerror(rc));
            return rc;
        }
        return 0;
    }
    if (rc == 0)
        rc = strobe_petra_get(s->t, s->sid[STROBE__PST_INFO], STROBE__PST_INFO_VERSION, &version);
    if (rc < 0 || magic != STROBE__PST_MAGIC) {
        snprintf(why, why_len, "not a petra store heap (no store magic)");
        return STROBE_ERR_FORMAT;
    }
    if (version != STROBE__PST_VERSION) {
        snprintf(why, why_len, "petra store layout version %" PRIu64 " (this strobe reads %u)", version,
                 STROBE__PST_VERSION);
        return STROBE_ERR_VERSION;
    }
    return 0;
}

int strobe__pst_open(const char *path, int create, uint64_t size, struct strobe__pst *out,
                     char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    char pwhy[256] = "";
    int rc = strobe_petra_open(path, NULL, &out->heap, pwhy, sizeof pwhy);
    if (rc == -ENOENT && create) {
        struct strobe_petra_options opt = {.size = size};
        rc = strobe_petra_create(path, &opt, &out->heap, pwhy, sizeof pwhy);
    }
    if (rc < 0) {
        snprintf(why, why_len, "%s", pwhy[0] ? pwhy : strobe_strerror(rc));
        out->heap = NULL;
        return rc;
    }
    /* a heap of someone else's (structures, none of ours) is not taken
     * over; an empty one is a store whose creation was cut short */
    if (create && strobe_petra_structure_find(out->heap, structure_names[STROBE__PST_INFO]) < 0) {
        for (int id = 0; id < STROBE_PETRA_MAX_STRUCTURES; id++) {
            const char *name;
            enum strobe_petra_kind kind;
            if (strobe_petra_structure_info(out->heap, id, &name, &kind) == 0 &&
                strncmp(name, "store.", 6) != 0) {
                snprintf(why, why_len, "not a petra store heap (it holds '%s')", name);
                strobe__pst_close(out);
                return STROBE_ERR_FORMAT;
            }
        }
    }
    for (int i = 0; i < STROBE__PST_NSTRUCTURES; i++) {
        int id = strobe_petra_structure_find(out->heap, structure_names[i]);
        if (id == -ENOENT && create)
            id = strobe_petra_structure_create(out->heap, structure_names[i], STROBE_PETRA_MAP,
                                               structure_buckets[i]);
        enum strobe_petra_kind kind;
        const char *name;
        if (id >= 0 && (strobe_petra_structure_info(out->heap, id, &name, &kind) < 0 ||
                        kind != STROBE_PETRA_MAP))
            id = STROBE_ERR_FORMAT;
        if (id < 0) {
            if (id == -ENOENT || id == STROBE_ERR_FORMAT)
                snprintf(why, why_len, "not a petra store heap (no hash map '%s')", structure_names[i]);
            else
                snprintf(why, why_len, "cannot create '%s': %s", structure_names[i], strobe_strerror(id));
            strobe__pst_close(out);
            return id == -ENOENT ? STROBE_ERR_FORMAT : id;
        }
        out->sid[i] = id;
    }
    if ((rc = strobe_petra_thread_attach(out->heap, &out->t)) < 0) {
        snprintf(why, why_len, "cannot attach a thread: %s", strobe_strerror(rc));
        out->t = NULL;
        strobe__pst_close(out);
        return rc;
    }
    if ((rc = check_info(out, create, why, why_len)) < 0) {
        strobe__pst_close(out);
        return rc;
    }
    return 0;
}

int strobe__pst_read_name(struct strobe__pst *s, uint64_t id, const struct strobe__pst_desc *d,
                          char *buf, size_t cap)
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
