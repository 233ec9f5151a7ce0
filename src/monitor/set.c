/* SPDX-License-Identifier: MIT */
/*
 * Metric sets: schema building, the two-section layout, typed access,
 * transactions and consistent snapshots (include/strobe/metric_set.h,
 * docs/formats/metric-set.md).
 *
 * Concurrency: one writer, any number of readers, possibly in other
 * processes. The data section works like a seqlock whose sequence is the
 * pair (consistent, data_gn): begin clears `consistent`, end bumps data_gn
 * and sets it again. Values are stored and copied with relaxed atomic
 * accesses so readers never see torn elements; the fences say what orders
 * the flags against them.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "monitor/set.h"

struct schema_metric {
    char *name;
    char *unit;
    uint8_t type;
    uint8_t flags;
    uint32_t count;
};

struct strobe_schema {
    char *name;
    struct schema_metric *m;
    uint32_t n, cap;
};

struct strobe_set {
    uint8_t *meta;
    uint8_t *data;
    size_t meta_len, data_len;
    int owns; /* meta and data were malloc'ed here */
};

static const char *const type_names[] = {
    [STROBE_MT_U8] = "u8",   [STROBE_MT_S8] = "s8",   [STROBE_MT_U16] = "u16",
    [STROBE_MT_S16] = "s16", [STROBE_MT_U32] = "u32", [STROBE_MT_S32] = "s32",
    [STROBE_MT_U64] = "u64", [STROBE_MT_S64] = "s64", [STROBE_MT_F32] = "f32",
    [STROBE_MT_D64] = "d64", [STROBE_MT_CHAR] = "char",
};

STROBE_API const char *strobe_metric_type_name(enum strobe_metric_type t)
{
    return t >= STROBE_MT_U8 && t <= STROBE_MT_LAST ? type_names[t] : NULL;
}

STROBE_API int strobe_metric_type_parse(const char *name, enum strobe_metric_type *out)
{
    for (int t = STROBE_MT_U8; t <= STROBE_MT_LAST; t++)
        if (strcmp(name, type_names[t]) == 0) {
            *out = (enum strobe_metric_type)t;
            return 0;
        }
    return STROBE_ERR_SYNTAX;
}

STROBE_API size_t strobe_metric_type_size(enum strobe_metric_type t)
{
    switch (t) {
    case STROBE_MT_U8: case STROBE_MT_S8: case STROBE_MT_CHAR: return 1;
    case STROBE_MT_U16: case STROBE_MT_S16: return 2;
    case STROBE_MT_U32: case STROBE_MT_S32: case STROBE_MT_F32: return 4;
    case STROBE_MT_U64: case STROBE_MT_S64: case STROBE_MT_D64: return 8;
    }
    return 0;
}

/* ---- schemas ------------------------------------------------------------ */

static int name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > STROBE_SET_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 0;
    return 1;
}

STROBE_API int strobe_schema_new(const char *name, strobe_schema **out)
{
    if (!name_ok(name) || strchr(name, '/'))
        return -EINVAL;
    strobe_schema *s = calloc(1, sizeof *s);
    if (!s || !(s->name = strdup(name))) {
        free(s);
        return -ENOMEM;
    }
    *out = s;
    return 0;
}

STROBE_API void strobe_schema_free(strobe_schema *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n; i++) {
        free(s->m[i].name);
        free(s->m[i].unit);
    }
    free(s->m);
    free(s->name);
    free(s);
}

STROBE_API int strobe_schema_add(strobe_schema *s, const char *name, const char *unit,
                                 enum strobe_metric_type type, uint32_t count, unsigned flags)
{
    if (!name_ok(name) || (unit && unit[0] && !name_ok(unit)) || !strobe_metric_type_name(type) ||
        count == 0 || count > STROBE_SET_MAX_BYTES / 8 ||
        (flags & ~(STROBE_METRIC_META | STROBE_METRIC_ARRAY | STROBE_METRIC_COUNTER)))
        return -EINVAL;
    if (s->n >= STROBE_SET_MAX_METRICS)
        return STROBE_ERR_LIMIT;
    for (uint32_t i = 0; i < s->n; i++)
        if (strcmp(s->m[i].name, name) == 0)
            return -EEXIST;
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 16;
        struct schema_metric *m = realloc(s->m, cap * sizeof *m);
        if (!m)
            return -ENOMEM;
        s->m = m;
        s->cap = cap;
    }
    struct schema_metric *m = &s->m[s->n];
    m->name = strdup(name);
    m->unit = strdup(unit ? unit : "");
    if (!m->name || !m->unit) {
        free(m->name);
        free(m->unit);
        return -ENOMEM;
    }
    m->type = (uint8_t)type;
    m->count = count;
    m->flags = (uint8_t)(flags | (count > 1 && type != STROBE_MT_CHAR ? STROBE_METRIC_ARRAY : 0));
    return (int)s->n++;
}

STROBE_API uint32_t strobe_schema_card(const strobe_schema *s) { return s->n; }
STROBE_API const char *strobe_schema_name(const strobe_schema *s) { return s->name; }

/* ---- layout -------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* The schema checksum covers everything that fixes the layout and the
 * meaning of values: schema name and, per metric, name, unit, type, count
 * and flags. The index uses it to tell a reused label from a new schema. */
static uint64_t schema_sum(const char *schema, uint32_t card, const char *(*name)(const void *, uint32_t),
                           const char *(*unit)(const void *, uint32_t),
                           void (*shape)(const void *, uint32_t, uint8_t *, uint8_t *, uint32_t *),
                           const void *src)
{
    uint64_t h = fnv(0xcbf29ce484222325ull, schema, strlen(schema) + 1);
    for (uint32_t i = 0; i < card; i++) {
        uint8_t type, flags;
        uint32_t count;
        shape(src, i, &type, &flags, &count);
        h = fnv(h, name(src, i), strlen(name(src, i)) + 1);
        h = fnv(h, unit(src, i), strlen(unit(src, i)) + 1);
        h = fnv(h, &type, 1);
        h = fnv(h, &flags, 1);
        h = fnv(h, &count, 4);
    }
    return h;
}

static const char *schema_m_name(const void *s, uint32_t i) { return ((const strobe_schema *)s)->m[i].name; }
static const char *schema_m_unit(const void *s, uint32_t i) { return ((const strobe_schema *)s)->m[i].unit; }
static void schema_m_shape(const void *s, uint32_t i, uint8_t *t, uint8_t *f, uint32_t *c)
{
    const struct schema_metric *m = &((const strobe_schema *)s)->m[i];
    *t = m->type;
    *f = m->flags;
    *c = m->count;
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

struct layout {
    size_t strings_start, strings_end, meta_size, data_size;
};

static int compute_layout(const strobe_schema *s, const char *producer, const char *instance,
                          struct layout *l)
{
    size_t strings = strlen(instance) + 1 + strlen(producer) + 1 + strlen(s->name) + 1;
    for (uint32_t i = 0; i < s->n; i++)
        strings += strlen(s->m[i].name) + 1 + strlen(s->m[i].unit) + 1;
    l->strings_start = sizeof(struct strobe__set_meta_hdr) + (size_t)s->n * sizeof(struct strobe__set_desc);
    l->strings_end = l->strings_start + strings;
    size_t meta = align_up(l->strings_end, 8);
    size_t data = sizeof(struct strobe__set_data_hdr) + strobe__set_bitmap_bytes(s->n);
    for (uint32_t i = 0; i < s->n; i++) {
        size_t esz = strobe_metric_type_size(s->m[i].type);
        size_t bytes = esz * s->m[i].count;
        if (s->m[i].flags & STROBE_METRIC_META)
            meta = align_up(meta, esz) + bytes;
        else
            data = align_up(data, esz) + bytes;
        if (meta > STROBE_SET_MAX_BYTES || data > STROBE_SET_MAX_BYTES)
            return STROBE_ERR_LIMIT;
    }
    l->meta_size = align_up(meta, 8);
    l->data_size = align_up(data, 8);
    if (l->meta_size > STROBE_SET_MAX_BYTES || l->data_size > STROBE_SET_MAX_BYTES)
        return STROBE_ERR_LIMIT;
    return 0;
}

static int check_names(const strobe_schema *s, const char *producer, const char **instance,
                       char *buf, size_t cap)
{
    if (!name_ok(producer) || strchr(producer, '/'))
        return -EINVAL;
    if (!*instance) {
        if ((size_t)snprintf(buf, cap, "%s/%s", producer, s->name) >= cap)
            return -EINVAL;
        *instance = buf;
    }
    return name_ok(*instance) ? 0 : -EINVAL;
}

STROBE_API int strobe_set_layout_size(const strobe_schema *schema, const char *producer,
                                      const char *instance, size_t *meta_size, size_t *data_size)
{
    char buf[2 * STROBE_SET_NAME_MAX + 2];
    struct layout l;
    int rc = check_names(schema, producer, &instance, buf, sizeof buf);
    if (rc == 0)
        rc = compute_layout(schema, producer, instance, &l);
    if (rc == 0) {
        *meta_size = l.meta_size;
        *data_size = l.data_size;
    }
    return rc;
}

static uint32_t put_str(uint8_t *meta, size_t *at, const char *s)
{
    size_t n = strlen(s) + 1;
    uint32_t off = (uint32_t)*at;
    memcpy(meta + *at, s, n);
    *at += n;
    return off;
}

static void build(const strobe_schema *s, const char *producer, const char *instance,
                  const struct layout *l, uint8_t *meta, uint8_t *data)
{
    memset(meta, 0, l->meta_size);
    memset(data, 0, l->data_size);
    struct strobe__set_meta_hdr *mh = (void *)meta;
    memcpy(mh->magic, STROBE__SET_META_MAGIC, 4);
    mh->version = STROBE__SET_VERSION;
    mh->hdr_size = sizeof *mh;
    mh->meta_size = (uint32_t)l->meta_size;
    mh->data_size = (uint32_t)l->data_size;
    mh->meta_gn = 1;
    mh->card = s->n;
    mh->desc_off = sizeof *mh;
    size_t at = l->strings_start;
    mh->instance_off = put_str(meta, &at, instance);
    mh->producer_off = put_str(meta, &at, producer);
    mh->schema_off = put_str(meta, &at, s->name);
    struct strobe__set_desc *d = (void *)(meta + mh->desc_off);
    size_t mv = align_up(l->strings_end, 8);
    size_t dv = sizeof(struct strobe__set_data_hdr) + strobe__set_bitmap_bytes(s->n);
    for (uint32_t i = 0; i < s->n; i++) {
        const struct schema_metric *m = &s->m[i];
        size_t esz = strobe_metric_type_size(m->type);
        d[i].name_off = put_str(meta, &at, m->name);
        d[i].unit_off = put_str(meta, &at, m->unit);
        d[i].type = m->type;
        d[i].flags = m->flags;
        d[i].count = m->count;
        size_t *cur = (m->flags & STROBE_METRIC_META) ? &mv : &dv;
        *cur = align_up(*cur, esz);
        d[i].value_off = (uint32_t)*cur;
        *cur += esz * m->count;
    }
    mh->strings_end = (uint32_t)at;
    mh->schema_sum = schema_sum(s->name, s->n, schema_m_name, schema_m_unit, schema_m_shape, s);
    struct strobe__set_data_hdr *dh = (void *)data;
    memcpy(dh->magic, STROBE__SET_DATA_MAGIC, 4);
    dh->data_size = (uint32_t)l->data_size;
    dh->meta_gn = mh->meta_gn;
    dh->card = s->n;
}

static int set_alloc(strobe_set **out, uint8_t *meta, size_t ml, uint8_t *data, size_t dl, int owns)
{
    strobe_set *set = calloc(1, sizeof *set);
    if (!set)
        return -ENOMEM;
    set->meta = meta;
    set->meta_len = ml;
    set->data = data;
    set->data_len = dl;
    set->owns = owns;
    *out = set;
    return 0;
}

STROBE_API int strobe_set_new_in(const strobe_schema *schema, const char *producer,
                                 const char *instance, void *meta, void *data, strobe_set **out)
{
    char buf[2 * STROBE_SET_NAME_MAX + 2];
    struct layout l;
    int rc = check_names(schema, producer, &instance, buf, sizeof buf);
    if (rc == 0)
        rc = compute_layout(schema, producer, instance, &l);
    if (rc < 0)
        return rc;
    if ((rc = set_alloc(out, meta, l.meta_size, data, l.data_size, 0)) < 0)
        return rc;
    build(schema, producer, instance, &l, meta, data);
    return 0;
}

STROBE_API int strobe_set_new(const strobe_schema *schema, const char *producer,
                              const char *instance, strobe_set **out)
{
    size_t ml, dl;
    int rc = strobe_set_layout_size(schema, producer, instance, &ml, &dl);
    if (rc < 0)
        return rc;
    /* 8-byte alignment for the values; aligned_alloc wants a multiple */
    uint8_t *meta = aligned_alloc(8, ml), *data = aligned_alloc(8, dl);
    if (!meta || !data || (rc = strobe_set_new_in(schema, producer, instance, meta, data, out)) < 0) {
        free(meta);
        free(data);
        return rc < 0 ? rc : -ENOMEM;
    }
    (*out)->owns = 1;
    return 0;
}

/* ---- validation of received sections ------------------------------------ */

static int str_at(const uint8_t *meta, uint32_t start, uint32_t end, uint32_t off, int may_be_empty)
{
    if (off < start || off >= end)
        return 0;
    const uint8_t *nul = memchr(meta + off, 0, end - off);
    if (!nul)
        return 0;
    size_t n = (size_t)(nul - (meta + off));
    if (n == 0)
        return may_be_empty;
    return name_ok((const char *)meta + off);
}

static const char *desc_name(const void *meta, uint32_t i)
{
    const struct strobe__set_meta_hdr *mh = meta;
    const struct strobe__set_desc *d = (const void *)((const uint8_t *)meta + mh->desc_off);
    return (const char *)meta + d[i].name_off;
}
static const char *desc_unit(const void *meta, uint32_t i)
{
    const struct strobe__set_meta_hdr *mh = meta;
    const struct strobe__set_desc *d = (const void *)((const uint8_t *)meta + mh->desc_off);
    return (const char *)meta + d[i].unit_off;
}
static void desc_shape(const void *meta, uint32_t i, uint8_t *t, uint8_t *f, uint32_t *c)
{
    const struct strobe__set_meta_hdr *mh = meta;
    const struct strobe__set_desc *d = (const void *)((const uint8_t *)meta + mh->desc_off);
    *t = d[i].type;
    *f = d[i].flags;
    *c = d[i].count;
}

int strobe__set_meta_check(const void *meta_v, size_t len)
{
    const uint8_t *meta = meta_v;
    const struct strobe__set_meta_hdr *mh = meta_v;
    if (len < sizeof *mh || len % 8 || ((uintptr_t)meta_v & 7) ||
        memcmp(mh->magic, STROBE__SET_META_MAGIC, 4) || mh->version != STROBE__SET_VERSION ||
        mh->hdr_size != sizeof *mh || mh->meta_size != len || len > STROBE_SET_MAX_BYTES ||
        mh->data_size > STROBE_SET_MAX_BYTES || mh->data_size % 8 ||
        mh->card > STROBE_SET_MAX_METRICS || mh->desc_off != sizeof *mh)
        return STROBE_ERR_FORMAT;
    size_t strings_start = mh->desc_off + (size_t)mh->card * sizeof(struct strobe__set_desc);
    if (strings_start > mh->strings_end || mh->strings_end > len ||
        mh->data_size < sizeof(struct strobe__set_data_hdr) + strobe__set_bitmap_bytes(mh->card))
        return STROBE_ERR_FORMAT;
    uint32_t ss = (uint32_t)strings_start, se = mh->strings_end;
    if (!str_at(meta, ss, se, mh->instance_off, 0) || !str_at(meta, ss, se, mh->producer_off, 0) ||
        !str_at(meta, ss, se, mh->schema_off, 0))
        return STROBE_ERR_FORMAT;
    const struct strobe__set_desc *d = (const void *)(meta + mh->desc_off);
    /* values lie after the strings (meta) or the bitmap (data), in metric
     * order, without overlap: one pass checks all of it */
    size_t mnext = se, dnext = sizeof(struct strobe__set_data_hdr) + strobe__set_bitmap_bytes(mh->card);
    for (uint32_t i = 0; i < mh->card; i++) {
        size_t esz = strobe_metric_type_size((enum strobe_metric_type)d[i].type);
        int is_meta = d[i].flags & STROBE_METRIC_META;
        if (!esz || d[i].count == 0 || (d[i].flags & ~(STROBE_METRIC_META | STROBE_METRIC_ARRAY | STROBE_METRIC_COUNTER)) ||
            d[i].reserved || d[i].reserved2 || !str_at(meta, ss, se, d[i].name_off, 0) ||
            !str_at(meta, ss, se, d[i].unit_off, 1) || d[i].value_off % esz)
            return STROBE_ERR_FORMAT;
        size_t *next = is_meta ? &mnext : &dnext;
        size_t end = (size_t)d[i].value_off + esz * (size_t)d[i].count;
        if (d[i].value_off < *next || end > (is_meta ? len : mh->data_size))
            return STROBE_ERR_FORMAT;
        *next = end;
    }
    int sum_ok = mh->schema_sum == schema_sum((const char *)meta + mh->schema_off, mh->card,
                                              desc_name, desc_unit, desc_shape, meta);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    /* fuzz builds compute the sum but accept any: a mutated section would
     * otherwise never get past it to the code behind */
    sum_ok = 1;
#endif
    return sum_ok ? 0 : STROBE_ERR_FORMAT;
}

int strobe__set_data_check(const void *meta, const void *data, size_t len)
{
    const struct strobe__set_meta_hdr *mh = meta;
    const struct strobe__set_data_hdr *dh = data;
    if (len != mh->data_size || len < sizeof *dh || ((uintptr_t)data & 7) ||
        memcmp(dh->magic, STROBE__SET_DATA_MAGIC, 4) || dh->data_size != len ||
        dh->card != mh->card || dh->consistent > 1)
        return STROBE_ERR_FORMAT;
    return 0;
}

STROBE_API int strobe_set_from_meta(const void *meta, size_t len, strobe_set **out)
{
    uint8_t *m = NULL, *d = NULL;
    int rc = -ENOMEM;
    /* copy first: the check must see the bytes we keep (and aligned ones) */
    if (len < sizeof(struct strobe__set_meta_hdr) || len > STROBE_SET_MAX_BYTES || len % 8)
        return STROBE_ERR_FORMAT;
    if (!(m = aligned_alloc(8, len)))
        goto fail;
    memcpy(m, meta, len);
    if ((rc = strobe__set_meta_check(m, len)) < 0)
        goto fail;
    const struct strobe__set_meta_hdr *mh = (void *)m;
    rc = -ENOMEM;
    if (!(d = aligned_alloc(8, mh->data_size)))
        goto fail;
    memset(d, 0, mh->data_size);
    struct strobe__set_data_hdr *dh = (void *)d;
    memcpy(dh->magic, STROBE__SET_DATA_MAGIC, 4);
    dh->data_size = mh->data_size;
    dh->meta_gn = mh->meta_gn;
    dh->card = mh->card;
    if ((rc = set_alloc(out, m, len, d, mh->data_size, 1)) == 0)
        return 0;
fail:
    free(m);
    free(d);
    return rc;
}

STROBE_API int strobe_set_attach(const void *meta, size_t meta_len, void *data, size_t data_len,
                                 strobe_set **out)
{
    int rc = strobe__set_meta_check(meta, meta_len);
    if (rc == 0 && ((const struct strobe__set_meta_hdr *)meta)->data_size != data_len)
        rc = STROBE_ERR_FORMAT;
    if (rc == 0)
        rc = set_alloc(out, (uint8_t *)meta, meta_len, data, data_len, 0);
    return rc;
}

STROBE_API void strobe_set_free(strobe_set *set)
{
    if (!set)
        return;
    if (set->owns) {
        free(set->meta);
        free(set->data);
    }
    free(set);
}

/* ---- accessors ----------------------------------------------------------- */

#define MH(set) ((struct strobe__set_meta_hdr *)(set)->meta)
#define DH(set) ((struct strobe__set_data_hdr *)(set)->data)

static const struct strobe__set_desc *desc(const strobe_set *set, uint32_t i)
{
    if (i >= MH(set)->card)
        return NULL;
    return (const struct strobe__set_desc *)(set->meta + MH(set)->desc_off) + i;
}

STROBE_API const char *strobe_set_instance(const strobe_set *set) { return (const char *)set->meta + MH(set)->instance_off; }
STROBE_API const char *strobe_set_producer(const strobe_set *set) { return (const char *)set->meta + MH(set)->producer_off; }
STROBE_API const char *strobe_set_schema_name(const strobe_set *set) { return (const char *)set->meta + MH(set)->schema_off; }
STROBE_API uint64_t strobe_set_schema_sum(const strobe_set *set) { return MH(set)->schema_sum; }
STROBE_API uint32_t strobe_set_card(const strobe_set *set) { return MH(set)->card; }
STROBE_API uint64_t strobe_set_meta_gn(const strobe_set *set) { return __atomic_load_n(&MH(set)->meta_gn, __ATOMIC_ACQUIRE); }
STROBE_API uint64_t strobe_set_data_gn(const strobe_set *set) { return __atomic_load_n(&DH(set)->data_gn, __ATOMIC_ACQUIRE); }
STROBE_API uint64_t strobe_set_timestamp(const strobe_set *set) { return __atomic_load_n(&DH(set)->timestamp_ns, __ATOMIC_RELAXED); }
STROBE_API uint64_t strobe_set_duration(const strobe_set *set) { return __atomic_load_n(&DH(set)->duration_ns, __ATOMIC_RELAXED); }
STROBE_API int strobe_set_is_consistent(const strobe_set *set) { return __atomic_load_n(&DH(set)->consistent, __ATOMIC_ACQUIRE) == 1; }

STROBE_API const void *strobe_set_meta(const strobe_set *set, size_t *len)
{
    if (len)
        *len = set->meta_len;
    return set->meta;
}

STROBE_API const void *strobe_set_data(const strobe_set *set, size_t *len)
{
    if (len)
        *len = set->data_len;
    return set->data;
}

STROBE_API int strobe_set_metric_index(const strobe_set *set, const char *name)
{
    for (uint32_t i = 0; i < MH(set)->card; i++)
        if (strcmp((const char *)set->meta + desc(set, i)->name_off, name) == 0)
            return (int)i;
    return -ENOENT;
}

STROBE_API const char *strobe_set_metric_name(const strobe_set *set, uint32_t i)
{
    const struct strobe__set_desc *d = desc(set, i);
    return d ? (const char *)set->meta + d->name_off : NULL;
}

STROBE_API const char *strobe_set_metric_unit(const strobe_set *set, uint32_t i)
{
    const struct strobe__set_desc *d = desc(set, i);
    return d ? (const char *)set->meta + d->unit_off : NULL;
}

STROBE_API enum strobe_metric_type strobe_set_metric_type(const strobe_set *set, uint32_t i)
{
    const struct strobe__set_desc *d = desc(set, i);
    return d ? (enum strobe_metric_type)d->type : 0;
}

STROBE_API uint32_t strobe_set_metric_count(const strobe_set *set, uint32_t i)
{
    const struct strobe__set_desc *d = desc(set, i);
    return d ? d->count : 0;
}

STROBE_API unsigned strobe_set_metric_flags(const strobe_set *set, uint32_t i)
{
    const struct strobe__set_desc *d = desc(set, i);
    return d ? d->flags : 0;
}

/* Address of element j of metric i, or NULL when out of range. */
static uint8_t *elem(const strobe_set *set, uint32_t i, uint32_t j, const struct strobe__set_desc **dp)
{
    const struct strobe__set_desc *d = desc(set, i);
    if (!d || j >= d->count)
        return NULL;
    *dp = d;
    uint8_t *base = (d->flags & STROBE_METRIC_META) ? set->meta : set->data;
    return base + d->value_off + (size_t)j * strobe_metric_type_size((enum strobe_metric_type)d->type);
}

/* ---- transactions -------------------------------------------------------- */

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

STROBE_API void strobe_set_begin(strobe_set *set)
{
    struct strobe__set_data_hdr *dh = DH(set);
    /* atomic: readers copy the whole section while we write */
    __atomic_store_n(&dh->begin_ns, now_ns(CLOCK_MONOTONIC), __ATOMIC_RELAXED);
    __atomic_store_n(&dh->consistent, 0, __ATOMIC_RELAXED);
    /* orders the flag before the value stores that follow; pairs with the
     * reader's fence after its copy */
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

STROBE_API void strobe_set_end_at(strobe_set *set, uint64_t timestamp_ns, uint64_t duration_ns)
{
    struct strobe__set_data_hdr *dh = DH(set);
    __atomic_store_n(&dh->timestamp_ns, timestamp_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&dh->duration_ns, duration_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&dh->data_gn, dh->data_gn + 1, __ATOMIC_RELEASE);
    /* release: values and data_gn are visible before consistent reads 1 */
    __atomic_store_n(&dh->consistent, 1, __ATOMIC_RELEASE);
}

STROBE_API void strobe_set_end(strobe_set *set)
{
    uint64_t end = now_ns(CLOCK_MONOTONIC);
    uint64_t begin = DH(set)->begin_ns;
    strobe_set_end_at(set, now_ns(CLOCK_REALTIME), begin && end > begin ? end - begin : 0);
}

static void mark(strobe_set *set, uint32_t i, int invalid)
{
    uint64_t *bits = (uint64_t *)(set->data + sizeof(struct strobe__set_data_hdr));
    uint64_t w = __atomic_load_n(&bits[i / 64], __ATOMIC_RELAXED);
    uint64_t bit = 1ull << (i % 64);
    __atomic_store_n(&bits[i / 64], invalid ? w | bit : w & ~bit, __ATOMIC_RELAXED);
}

STROBE_API void strobe_set_valid(strobe_set *set, uint32_t i, int valid)
{
    if (i < MH(set)->card)
        mark(set, i, !valid);
}

STROBE_API int strobe_set_is_valid(const strobe_set *set, uint32_t i)
{
    if (i >= MH(set)->card)
        return 0;
    const uint64_t *bits = (const uint64_t *)(set->data + sizeof(struct strobe__set_data_hdr));
    return !(__atomic_load_n(&bits[i / 64], __ATOMIC_RELAXED) >> (i % 64) & 1);
}

static void meta_changed(strobe_set *set, const struct strobe__set_desc *d)
{
    if (d->flags & STROBE_METRIC_META) {
        uint64_t gn = MH(set)->meta_gn + 1;
        __atomic_store_n(&MH(set)->meta_gn, gn, __ATOMIC_RELEASE);
        __atomic_store_n(&DH(set)->meta_gn, gn, __ATOMIC_RELEASE);
    }
}

/* Stores one integer element given as a sign and magnitude pair; out of
 * range saturates and flags the metric. */
static void store_int(strobe_set *set, uint32_t i, uint8_t *p, const struct strobe__set_desc *d,
                      int neg, uint64_t mag)
{
    int64_t lo = 0;
    uint64_t hi = 0;
    switch (d->type) {
    case STROBE_MT_U8: hi = UINT8_MAX; break;
    case STROBE_MT_U16: hi = UINT16_MAX; break;
    case STROBE_MT_U32: hi = UINT32_MAX; break;
    case STROBE_MT_U64: hi = UINT64_MAX; break;
    case STROBE_MT_S8: lo = INT8_MIN; hi = INT8_MAX; break;
    case STROBE_MT_S16: lo = INT16_MIN; hi = INT16_MAX; break;
    case STROBE_MT_S32: lo = INT32_MIN; hi = INT32_MAX; break;
    case STROBE_MT_S64: lo = INT64_MIN; hi = INT64_MAX; break;
    default: return;
    }
    uint64_t bits; /* two's complement of the clamped value */
    if (neg && mag > (uint64_t)0 - (uint64_t)lo) {
        bits = (uint64_t)lo;
        mark(set, i, 1);
    } else if (neg) {
        bits = (uint64_t)0 - mag;
    } else if (mag > hi) {
        bits = hi;
        mark(set, i, 1);
    } else {
        bits = mag;
    }
    switch (strobe_metric_type_size((enum strobe_metric_type)d->type)) {
    case 1: __atomic_store_n(p, (uint8_t)bits, __ATOMIC_RELAXED); break;
    case 2: __atomic_store_n((uint16_t *)p, (uint16_t)bits, __ATOMIC_RELAXED); break;
    case 4: __atomic_store_n((uint32_t *)p, (uint32_t)bits, __ATOMIC_RELAXED); break;
    default: __atomic_store_n((uint64_t *)p, bits, __ATOMIC_RELAXED); break;
    }
}

static void store_real(uint8_t *p, const struct strobe__set_desc *d, double v)
{
    if (d->type == STROBE_MT_D64) {
        uint64_t b;
        memcpy(&b, &v, 8);
        __atomic_store_n((uint64_t *)p, b, __ATOMIC_RELAXED);
    } else {
        float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, 4);
        __atomic_store_n((uint32_t *)p, b, __ATOMIC_RELAXED);
    }
}

static int is_real(const struct strobe__set_desc *d)
{
    return d->type == STROBE_MT_D64 || d->type == STROBE_MT_F32;
}

STROBE_API void strobe_set_u64(strobe_set *set, uint32_t i, uint32_t j, uint64_t v)
{
    const struct strobe__set_desc *d;
    uint8_t *p = elem(set, i, j, &d);
    if (!p || d->type == STROBE_MT_CHAR)
        return;
    if (is_real(d))
        store_real(p, d, (double)v);
    else
        store_int(set, i, p, d, 0, v);
    meta_changed(set, d);
}

STROBE_API void strobe_set_s64(strobe_set *set, uint32_t i, uint32_t j, int64_t v)
{
    const struct strobe__set_desc *d;
    uint8_t *p = elem(set, i, j, &d);
    if (!p || d->type == STROBE_MT_CHAR)
        return;
    if (is_real(d))
        store_real(p, d, (double)v);
    else
        store_int(set, i, p, d, v < 0, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
    meta_changed(set, d);
}

STROBE_API void strobe_set_d64(strobe_set *set, uint32_t i, uint32_t j, double v)
{
    const struct strobe__set_desc *d;
    uint8_t *p = elem(set, i, j, &d);
    if (!p || d->type == STROBE_MT_CHAR)
        return;
    if (is_real(d)) {
        store_real(p, d, v);
    } else if (isnan(v)) {
        store_int(set, i, p, d, 0, 0);
        mark(set, i, 1);
    } else if (v < 0) {
        /* -2^64 and below saturate like any other out-of-range value */
        store_int(set, i, p, d, 1, v <= -18446744073709551616.0 ? UINT64_MAX : (uint64_t)-v);
    } else {
        store_int(set, i, p, d, 0, v >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)v);
        if (v >= 18446744073709551616.0)
            mark(set, i, 1);
    }
    meta_changed(set, d);
}

STROBE_API void strobe_set_add_u64(strobe_set *set, uint32_t i, uint32_t j, uint64_t delta)
{
    const struct strobe__set_desc *d;
    uint8_t *p = elem(set, i, j, &d);
    if (!p || is_real(d) || d->type == STROBE_MT_CHAR)
        return;
    switch (strobe_metric_type_size((enum strobe_metric_type)d->type)) {
    case 1: __atomic_fetch_add(p, (uint8_t)delta, __ATOMIC_RELAXED); break;
    case 2: __atomic_fetch_add((uint16_t *)p, (uint16_t)delta, __ATOMIC_RELAXED); break;
    case 4: __atomic_fetch_add((uint32_t *)p, (uint32_t)delta, __ATOMIC_RELAXED); break;
    default: __atomic_fetch_add((uint64_t *)p, delta, __ATOMIC_RELAXED); break;
    }
    meta_changed(set, d);
}

STROBE_API void strobe_set_str(strobe_set *set, uint32_t i, const char *s)
{
    const struct strobe__set_desc *d;
    uint8_t *p = elem(set, i, 0, &d);
    if (!p || d->type != STROBE_MT_CHAR)
        return;
    size_t n = strnlen(s, d->count - 1);
    for (uint32_t k = 0; k < d->count; k++)
        __atomic_store_n(p + k, k < n ? (uint8_t)s[k] : 0, __ATOMIC_RELAXED);
    meta_changed(set, d);
}

STROBE_API uint64_t strobe_set_get_u64(const strobe_set *set, uint32_t i, uint32_t j)
{
    const struct strobe__set_desc *d;
    const uint8_t *p = elem(set, i, j, &d);
    if (!p)
        return 0;
    switch (d->type) {
    case STROBE_MT_U8: return __atomic_load_n(p, __ATOMIC_RELAXED);
    case STROBE_MT_U16: return __atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED);
    case STROBE_MT_U32: return __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
    case STROBE_MT_U64: return __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
    case STROBE_MT_S8: case STROBE_MT_S16: case STROBE_MT_S32: case STROBE_MT_S64: {
        int64_t v = strobe_set_get_s64(set, i, j);
        return v < 0 ? 0 : (uint64_t)v;
    }
    case STROBE_MT_F32: case STROBE_MT_D64: {
        double v = strobe_set_get_d64(set, i, j);
        return v > 0 && v < 18446744073709551616.0 ? (uint64_t)v : (v > 0 ? UINT64_MAX : 0);
    }
    }
    return 0;
}

STROBE_API int64_t strobe_set_get_s64(const strobe_set *set, uint32_t i, uint32_t j)
{
    const struct strobe__set_desc *d;
    const uint8_t *p = elem(set, i, j, &d);
    if (!p)
        return 0;
    switch (d->type) {
    case STROBE_MT_S8: return (int8_t)__atomic_load_n(p, __ATOMIC_RELAXED);
    case STROBE_MT_S16: return (int16_t)__atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED);
    case STROBE_MT_S32: return (int32_t)__atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
    case STROBE_MT_S64: return (int64_t)__atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
    case STROBE_MT_U8: case STROBE_MT_U16: case STROBE_MT_U32: case STROBE_MT_U64: {
        uint64_t v = strobe_set_get_u64(set, i, j);
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    case STROBE_MT_F32: case STROBE_MT_D64: {
        double v = strobe_set_get_d64(set, i, j);
        if (isnan(v))
            return 0;
        return v >= 9223372036854775808.0 ? INT64_MAX : v < -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
    }
    }
    return 0;
}

STROBE_API double strobe_set_get_d64(const strobe_set *set, uint32_t i, uint32_t j)
{
    const struct strobe__set_desc *d;
    const uint8_t *p = elem(set, i, j, &d);
    if (!p)
        return 0;
    switch (d->type) {
    case STROBE_MT_D64: {
        uint64_t b = __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
        double v;
        memcpy(&v, &b, 8);
        return v;
    }
    case STROBE_MT_F32: {
        uint32_t b = __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
        float v;
        memcpy(&v, &b, 4);
        return v;
    }
    case STROBE_MT_S8: case STROBE_MT_S16: case STROBE_MT_S32: case STROBE_MT_S64:
        return (double)strobe_set_get_s64(set, i, j);
    case STROBE_MT_CHAR:
        return 0;
    default:
        return (double)strobe_set_get_u64(set, i, j);
    }
}

STROBE_API const char *strobe_set_get_str(const strobe_set *set, uint32_t i)
{
    const struct strobe__set_desc *d;
    const uint8_t *p = elem(set, i, 0, &d);
    /* the writer NUL-pads; a received section is not trusted to: the last
     * byte is the terminator whatever it holds */
    if (!p || d->type != STROBE_MT_CHAR || p[d->count - 1] != 0)
        return "";
    return (const char *)p;
}

STROBE_API int strobe_set_format_value(const strobe_set *set, uint32_t i, uint32_t j, char *buf,
                                       size_t cap)
{
    const struct strobe__set_desc *d = desc(set, i);
    if (!d || (j >= d->count && d->type != STROBE_MT_CHAR))
        return -EINVAL;
    int n;
    switch (d->type) {
    case STROBE_MT_CHAR:
        n = snprintf(buf, cap, "%s", strobe_set_get_str(set, i));
        break;
    case STROBE_MT_F32: case STROBE_MT_D64: {
        double v = strobe_set_get_d64(set, i, j);
        /* shortest of %.15g/%.17g that reads back as the same double */
        n = snprintf(buf, cap, "%.15g", v);
        if (n > 0 && (size_t)n < cap && strtod(buf, NULL) != v && !isnan(v))
            n = snprintf(buf, cap, "%.17g", v);
        break;
    }
    case STROBE_MT_S8: case STROBE_MT_S16: case STROBE_MT_S32: case STROBE_MT_S64:
        n = snprintf(buf, cap, "%" PRId64, strobe_set_get_s64(set, i, j));
        break;
    default:
        n = snprintf(buf, cap, "%" PRIu64, strobe_set_get_u64(set, i, j));
        break;
    }
    return n < 0 || (size_t)n >= cap ? -ENOSPC : 0;
}

/* ---- snapshots and received sections ------------------------------------- */

static void copy_words(uint64_t *dst, const uint64_t *src, size_t words)
{
    for (size_t k = 0; k < words; k++)
        dst[k] = __atomic_load_n(&src[k], __ATOMIC_RELAXED);
}

STROBE_API int strobe_set_snapshot_data(const strobe_set *set, void *buf, size_t cap)
{
    if (cap < set->data_len)
        return -ENOSPC;
    const struct strobe__set_data_hdr *dh = DH(set);
    for (int attempt = 0; attempt < 64; attempt++) {
        uint32_t c1 = __atomic_load_n(&dh->consistent, __ATOMIC_ACQUIRE);
        uint64_t g1 = __atomic_load_n(&dh->data_gn, __ATOMIC_ACQUIRE);
        copy_words(buf, (const uint64_t *)set->data, set->data_len / 8);
        /* the copy happens before the second look at the flags */
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        uint64_t g2 = __atomic_load_n(&dh->data_gn, __ATOMIC_RELAXED);
        uint32_t c2 = __atomic_load_n(&dh->consistent, __ATOMIC_RELAXED);
        if (c1 == 1 && c2 == 1 && g1 == g2)
            return 0;
        if (c1 == 0 && c2 == 0 && g1 == g2 && g1 == 0)
            return -EAGAIN; /* never written: nothing consistent to wait for */
        struct timespec ts = { 0, attempt < 8 ? 1000 : 100000 };
        nanosleep(&ts, NULL);
    }
    ((struct strobe__set_data_hdr *)buf)->consistent = 0;
    return -EAGAIN;
}

STROBE_API int strobe_set_apply_data(strobe_set *set, const void *data, size_t len)
{
    int rc = strobe__set_data_check(set->meta, data, len);
    if (rc < 0)
        return rc;
    if (((const struct strobe__set_data_hdr *)data)->meta_gn != MH(set)->meta_gn)
        return -ESTALE;
    memcpy(set->data, data, len);
    return 0;
}

STROBE_API int strobe_set_apply_meta(strobe_set *set, const void *meta, size_t len)
{
    const struct strobe__set_meta_hdr *nh = meta;
    if (len != set->meta_len || ((uintptr_t)meta & 7) || strobe__set_meta_check(meta, len) < 0 ||
        nh->schema_sum != MH(set)->schema_sum || nh->data_size != MH(set)->data_size ||
        memcmp((const uint8_t *)meta + nh->desc_off, set->meta + MH(set)->desc_off,
               (size_t)nh->card * sizeof(struct strobe__set_desc)) ||
        strcmp((const char *)meta + nh->instance_off, strobe_set_instance(set)))
        return STROBE_ERR_FORMAT;
    memcpy(set->meta, meta, len);
    return 0;
}
