/* SPDX-License-Identifier: MIT */
/*
 * Reader of the `blocks` tables and the t<N>.bb block streams (see
 * blocks.h; the layouts are format.h's "Block tables" and "Block
 * streams", the static facts common/bbtrace.h's).
 */
#define _GNU_SOURCE
#include "analysis/blocks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/decode.h"
#include "common/bbtrace.h"
#include "common/format.h"
#include "strobe/strobe.h"

/* ---- tables ------------------------------------------------------------ */

/* A module as its records arrive: the entries loaded so far. */
struct raw_module {
    struct strobe_bb_block *blocks;
    uint32_t nblocks, nops, nnames; /* loaded */
};

static const char *table_record_name(unsigned type)
{
    switch (type) {
    case STROBE_BT_MODULE:
        return "MODULE record";
    case STROBE_BT_NAMES:
        return "NAMES record";
    case STROBE_BT_BLOCKS:
        return "BLOCKS record";
    case STROBE_BT_OPS:
        return "OPS record";
    default:
        return "record";
    }
}

void strobe__blocks_free(struct strobe__blocks *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->nmodules; i++) {
        for (uint32_t k = 0; k < b->modules[i].nnames; k++)
            free(b->modules[i].names[k]);
        free(b->modules[i].names);
        free(b->modules[i].name);
    }
    free(b->modules);
    free(b->blocks);
    free(b->ops);
    free(b->name);
    free(b);
}

/* A count a record announces, checked against what the file could hold
 * (each entry takes at least `min` bytes), so a damaged count cannot make
 * the reader allocate without bound. */
static int plausible(struct strobe__cursor *c, uint64_t n, size_t min, size_t len, struct strobe_errbuf *eb)
{
    if (n > len / min)
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: offset %zu: %s announces %llu entries, more than the file holds", c->name,
                             (size_t)(c->p - c->buf), c->what, (unsigned long long)n);
    return 0;
}

static int u32(struct strobe__cursor *c, uint32_t *out, struct strobe_errbuf *eb)
{
    uint64_t v;
    size_t off = (size_t)(c->p - c->buf);
    int rc = strobe__get_u(c, &v, eb);
    if (rc == 0 && v > UINT32_MAX)
        rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: %s: value %llu out of range", c->name, off,
                           c->what, (unsigned long long)v);
    *out = (uint32_t)v;
    return rc;
}

static int s64(struct strobe__cursor *c, int64_t *out, struct strobe_errbuf *eb)
{
    uint64_t v;
    int rc = strobe__get_u(c, &v, eb);
    *out = strobe_unzigzag(v);
    return rc;
}

/* The ops of a module go to the process-wide array b->ops. */
static int read_module(struct strobe__cursor *c, struct strobe__blocks *b, struct raw_module **raw,
                       size_t len, uint32_t next_id, struct strobe_errbuf *eb)
{
    struct strobe__bb_module_info m = {0};
    int rc;
    if ((rc = u32(c, &m.first_id, eb)) || (rc = u32(c, &m.nblocks, eb)) || (rc = u32(c, &m.nops, eb)) ||
        (rc = u32(c, &m.nnames, eb)))
        return rc;
    uint32_t level;
    if ((rc = u32(c, &level, eb)))
        return rc;
    size_t off = (size_t)(c->p - c->buf);
    if (m.first_id != next_id || m.nblocks > STROBE_BB_MAX_ID - next_id + 1)
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: offset %zu: MODULE record: blocks %u..%u, expected to start at %u", c->name,
                             off, m.first_id, m.first_id + m.nblocks - 1, next_id);
    if (level != STROBE_BB_LEVEL_BB && level != STROBE_BB_LEVEL_MEM)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: MODULE record: unknown level %u",
                             c->name, off, level);
    if ((rc = plausible(c, m.nblocks, 6, len, eb)) || (rc = plausible(c, m.nops, 6, len, eb)) ||
        (rc = plausible(c, m.nnames, 1, len, eb)))
        return rc;
    m.level = (int)level;
    if ((rc = strobe__get_str(c, &m.name, eb)))
        return rc;
    void *mods = realloc(b->modules, (b->nmodules + 1) * sizeof *b->modules);
    void *raws = mods ? realloc(*raw, (b->nmodules + 1) * sizeof **raw) : NULL;
    if (mods)
        b->modules = mods;
    if (raws)
        *raw = raws;
    m.names = calloc(m.nnames ? m.nnames : 1, sizeof *m.names);
    struct strobe_bb_block *blocks = calloc(m.nblocks ? m.nblocks : 1, sizeof *blocks);
    void *ops = realloc(b->ops, (b->nops + m.nops + 1) * sizeof *b->ops);
    if (ops)
        b->ops = ops;
    if (!mods || !raws || !m.names || !blocks || !ops) {
        free(m.name);
        free(m.names);
        free(blocks);
        return strobe__error(eb, -ENOMEM, "%s: out of memory", c->name);
    }
    b->modules[b->nmodules] = m;
    (*raw)[b->nmodules] = (struct raw_module){.blocks = blocks};
    b->nmodules++;
    return 0;
}

static int read_entries(struct strobe__cursor *c, unsigned type, struct strobe__blocks *b,
                        struct raw_module *r, struct strobe_errbuf *eb)
{
    struct strobe__bb_module_info *m = &b->modules[b->nmodules - 1];
    uint32_t n, *have = type == STROBE_BT_NAMES    ? &r->nnames
                        : type == STROBE_BT_BLOCKS ? &r->nblocks
                                                   : &r->nops;
    uint32_t want = type == STROBE_BT_NAMES ? m->nnames : type == STROBE_BT_BLOCKS ? m->nblocks : m->nops;
    size_t off = (size_t)(c->p - c->buf);
    int rc = u32(c, &n, eb);
    if (rc)
        return rc;
    if (n > want - *have)
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: offset %zu: %s of %u entries: the module has %u, %u loaded", c->name, off,
                             c->what, n, want, *have);
    for (uint32_t i = 0; i < n; i++, (*have)++) {
        if (type == STROBE_BT_NAMES) {
            rc = strobe__get_str(c, &m->names[*have], eb);
        } else if (type == STROBE_BT_BLOCKS) {
            struct strobe_bb_block *k = &r->blocks[*have];
            (void)((rc = u32(c, &k->first_op, eb)) || (rc = u32(c, &k->nops, eb)) ||
                   (rc = u32(c, &k->recorded, eb)) || (rc = u32(c, &k->function, eb)) ||
                   (rc = u32(c, &k->file, eb)) || (rc = u32(c, &k->line, eb)));
        } else {
            struct strobe__op_info *o = &b->ops[b->nops + *have];
            uint32_t kind = 0;
            int64_t base = 0;
            (void)((rc = u32(c, &o->size, eb)) || (rc = u32(c, &o->line, eb)) ||
                   (rc = u32(c, &o->column, eb)) || (rc = u32(c, &kind, eb)) || (rc = s64(c, &base, eb)) ||
                   (rc = s64(c, &o->offset, eb)));
            if (rc == 0 && kind != STROBE_BB_LOAD && kind != STROBE_BB_STORE)
                rc = strobe__error(eb, STROBE_ERR_FORMAT,
                                   "%s: offset %zu: op %u of module %s: unknown kind %u", c->name, off, *have,
                                   m->name, kind);
            if (rc == 0 && (base < STROBE_BB_CONSTANT || base > INT32_MAX))
                rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: op %u of module %s: bad base %lld",
                                   c->name, off, *have, m->name, (long long)base);
            o->kind = (uint8_t)kind;
            o->base = (int32_t)base;
        }
        if (rc)
            return rc;
    }
    if (c->p != c->end)
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: %s has %zu bytes after its entries",
                             c->name, off, c->what, (size_t)(c->end - c->p));
    return 0;
}

/* Turns module `mi`'s raw blocks into b->blocks entries, checking them
 * against its ops and names. Blocks of an incomplete module (the last one,
 * its process killed while writing it) referring to entries that are not
 * there stay undefined. */
static int finish_module(struct strobe__blocks *b, size_t mi, const struct raw_module *r, size_t ops_base,
                         struct strobe_errbuf *eb)
{
    struct strobe__bb_module_info *m = &b->modules[mi];
    m->complete = r->nblocks == m->nblocks && r->nops == m->nops && r->nnames == m->nnames;
    for (uint32_t i = 0; i < r->nblocks; i++) {
        const struct strobe_bb_block *k = &r->blocks[i];
        struct strobe__block_info *bi = &b->blocks[m->first_id - 1 + i];
        uint32_t id = m->first_id + i;
        bool names_ok = k->function < r->nnames && k->file < r->nnames;
        bool ops_ok = k->first_op <= r->nops && k->nops <= r->nops - k->first_op;
        if (!names_ok || !ops_ok) {
            if (m->complete)
                return strobe__error(eb, STROBE_ERR_FORMAT,
                                     "%s: block %u of module %s names %s it does not have", b->name, id,
                                     m->name, names_ok ? "ops" : "names");
            continue;
        }
        *bi = (struct strobe__block_info){.id = id,
                                          .module = (uint32_t)mi,
                                          .function = m->names[k->function],
                                          .file = m->names[k->file],
                                          .line = k->line,
                                          .nops = k->nops,
                                          .first_op = (uint32_t)ops_base + k->first_op,
                                          .ops = b->ops + ops_base + k->first_op};
        uint32_t recorded = 0;
        for (uint32_t j = 0; j < k->nops; j++) {
            const struct strobe__op_info *o = &bi->ops[j];
            if (o->base >= 0 && (uint32_t)o->base >= j)
                return strobe__error(eb, STROBE_ERR_FORMAT,
                                     "%s: block %u of module %s: op %u is based on op %d, not an earlier one",
                                     b->name, id, m->name, j, o->base);
            recorded += o->base == STROBE_BB_RECORDED;
            bi->loads += o->kind == STROBE_BB_LOAD;
            bi->stores += o->kind == STROBE_BB_STORE;
        }
        if (recorded != k->recorded || recorded > STROBE_BB_MAX_SEG_OPS)
            return strobe__error(eb, STROBE_ERR_FORMAT,
                                 "%s: block %u of module %s: %u recorded ops, its entry says %u", b->name, id,
                                 m->name, recorded, k->recorded);
        bi->recorded = recorded;
        if (k->nops > b->max_ops)
            b->max_ops = k->nops;
    }
    return 0;
}

int strobe__blocks_decode(const uint8_t *buf, size_t len, const char *name, struct strobe__blocks **out,
                          struct strobe_errbuf *eb)
{
    *out = NULL;
    struct strobe_file_header h;
    int rc = strobe__header_check(buf, len, STROBE_MAGIC_BLOCK_TABLES, name, &h, eb);
    if (rc)
        return rc;
    struct strobe__blocks *b = calloc(1, sizeof *b);
    struct raw_module *raw = NULL;
    if (!b || !(b->name = strdup(name))) {
        free(b);
        return strobe__error(eb, -ENOMEM, "%s: out of memory", name);
    }
    uint32_t next_id = 1;
    size_t pos = h.header_size;
    while ((rc = strobe__next_record(buf, len, h.chunk_size, &pos, name, eb)) == 1) {
        size_t rec = pos;
        unsigned type = buf[pos];
        size_t end = (pos / h.chunk_size + 1) * h.chunk_size;
        struct strobe__cursor c = {buf, buf + pos + 1, buf + (end < len ? end : len), name,
                                   table_record_name(type)};
        uint64_t plen;
        if ((rc = strobe__get_u(&c, &plen, eb)))
            break;
        if (plen > (uint64_t)(c.end - c.p)) {
            rc = strobe__error(eb, STROBE_ERR_TRUNCATED, "%s: offset %zu: %s of %llu bytes runs past %s",
                               name, rec, c.what, (unsigned long long)plen,
                               c.end == buf + len ? "the end of the file" : "its chunk");
            break;
        }
        c.end = c.p + plen;
        pos = (size_t)(c.end - buf);
        if (type == STROBE_BT_MODULE) {
            if ((rc = read_module(&c, b, &raw, len, next_id, eb)))
                break;
            b->nops += b->modules[b->nmodules - 1].nops;
            next_id += b->modules[b->nmodules - 1].nblocks;
        } else if (type >= STROBE_BT_NAMES && type <= STROBE_BT_OPS) {
            if (!b->nmodules) {
                rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: %s before any MODULE record", name,
                                   rec, c.what);
                break;
            }
            /* the ops of the last module start where its MODULE put them */
            size_t saved = b->nops;
            b->nops -= b->modules[b->nmodules - 1].nops;
            rc = read_entries(&c, type, b, &raw[b->nmodules - 1], eb);
            b->nops = saved;
            if (rc)
                break;
        }
    }
    if (rc == 0) {
        b->nblocks = next_id - 1;
        b->blocks = calloc(b->nblocks ? b->nblocks : 1, sizeof *b->blocks);
        if (!b->blocks)
            rc = strobe__error(eb, -ENOMEM, "%s: out of memory", name);
    }
    size_t ops_base = 0;
    for (size_t i = 0; i < b->nmodules && rc == 0; i++) {
        rc = finish_module(b, i, &raw[i], ops_base, eb);
        if (rc == 0 && !b->modules[i].complete && i + 1 < b->nmodules)
            rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: module %s: its tables are incomplete", name,
                               b->modules[i].name);
        ops_base += b->modules[i].nops;
    }
    for (size_t i = 0; i < b->nmodules; i++)
        free(raw[i].blocks);
    free(raw);
    if (rc) {
        strobe__blocks_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

/* <experiment>/<process dir>/<file>, and the name messages show. */
static int process_file(const struct strobe_experiment *exp, uint32_t process, const char *file, char **path,
                        char **shown)
{
    *path = *shown = NULL;
    if (asprintf(path, "%s/%s/%s", exp->dir, exp->processes[process].dir, file) < 0) {
        *path = NULL;
        return -ENOMEM;
    }
    if (!(*shown = strdup(strobe__shown_path(exp, *path)))) {
        free(*path);
        *path = NULL;
        return -ENOMEM;
    }
    return 0;
}

int strobe__blocks_open(const struct strobe_experiment *exp, uint32_t process, struct strobe__blocks **out,
                        struct strobe_errbuf *eb)
{
    *out = NULL;
    char *path, *shown;
    if (process_file(exp, process, "blocks", &path, &shown))
        return strobe__error(eb, -ENOMEM, "%s: out of memory", exp->dir);
    struct stat st;
    int rc = 0;
    if (stat(path, &st) == 0) {
        const uint8_t *buf;
        size_t len;
        if ((rc = strobe__file_map(path, shown, &buf, &len, eb)) == 0) {
            rc = strobe__blocks_decode(buf, len, shown, out, eb);
            strobe__file_unmap(buf, len);
        }
    }
    free(path);
    free(shown);
    return rc;
}

const struct strobe__block_info *strobe__blocks_info(const struct strobe__blocks *b, uint32_t id)
{
    if (id == 0 || id > b->nblocks || b->blocks[id - 1].id == 0)
        return NULL;
    return &b->blocks[id - 1];
}

/* ---- streams ----------------------------------------------------------- */

struct strobe__bbstream {
    const uint8_t *buf;
    size_t len;
    bool mapped; /* buf is ours to unmap */
    char *name;
    const struct strobe__blocks *b;
    uint32_t cs;
    size_t pos;
    uint64_t bytes;
    /* The delta state: each op's previous address and stride in the
     * current chunk, valid where gen[op] == chunk + 1 (0 otherwise), so
     * that a chunk start resets it without touching every op; the id of
     * the chunk's previous block where last_gen == chunk + 1. */
    uint64_t *prev;
    uint64_t *stride;
    uint64_t *gen;
    uint64_t chunk;
    uint32_t last_id;
    uint64_t last_gen;
    struct strobe__bb_access *acc;
    /* A REPEAT record being expanded: `repeats` more runs of block `rep`,
     * reported at offset rep_offset. */
    uint32_t repeats;
    const struct strobe__block_info *rep;
    uint64_t rep_offset;
};

int strobe__bbstream_begin(const uint8_t *buf, size_t len, const char *name, const struct strobe__blocks *b,
                           struct strobe__bbstream **out, struct strobe_errbuf *eb)
{
    *out = NULL;
    struct strobe_file_header h;
    int rc = strobe__header_check(buf, len, STROBE_MAGIC_BLOCKS, name, &h, eb);
    if (rc)
        return rc;
    struct strobe__bbstream *s = calloc(1, sizeof *s);
    if (s) {
        s->name = strdup(name);
        s->prev = calloc(b->nops ? b->nops : 1, sizeof *s->prev);
        s->stride = calloc(b->nops ? b->nops : 1, sizeof *s->stride);
        s->gen = calloc(b->nops ? b->nops : 1, sizeof *s->gen);
        s->acc = calloc(b->max_ops ? b->max_ops : 1, sizeof *s->acc);
    }
    if (!s || !s->name || !s->prev || !s->stride || !s->gen || !s->acc) {
        strobe__bbstream_close(s);
        return strobe__error(eb, -ENOMEM, "%s: out of memory", name);
    }
    s->buf = buf;
    s->len = len;
    s->b = b;
    s->cs = h.chunk_size;
    s->pos = h.header_size;
    *out = s;
    return 0;
}

int strobe__bbstream_open(const struct strobe_experiment *exp, uint32_t thread,
                          const struct strobe__blocks *b, struct strobe__bbstream **out,
                          struct strobe_errbuf *eb)
{
    *out = NULL;
    const struct strobe_thread_info *t = &exp->threads[thread];
    char file[32], *path, *shown;
    snprintf(file, sizeof file, "t%u.bb", t->index);
    if (process_file(exp, t->process, file, &path, &shown))
        return strobe__error(eb, -ENOMEM, "%s: out of memory", exp->dir);
    struct stat st;
    const uint8_t *buf = NULL;
    size_t len = 0;
    int rc = 0;
    if (stat(path, &st) != 0)
        goto out; /* no stream */
    if (!b) {
        rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: block stream without %s/blocks", shown,
                           exp->processes[t->process].dir);
        goto out;
    }
    if ((rc = strobe__file_map(path, shown, &buf, &len, eb)) != 0)
        goto out;
    if ((rc = strobe__bbstream_begin(buf, len, shown, b, out, eb)) != 0) {
        strobe__file_unmap(buf, len);
        goto out;
    }
    (*out)->mapped = true;
    uint32_t index;
    memcpy(&index, buf + offsetof(struct strobe_file_header, thread_index), sizeof index);
    if (index != t->index) {
        rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset 20: header names thread %u", shown, index);
        strobe__bbstream_close(*out);
        *out = NULL;
    }
out:
    free(path);
    free(shown);
    return rc;
}

static int past_end(const struct strobe__bbstream *s, size_t rec, size_t end, const char *what,
                    struct strobe_errbuf *eb)
{
    return strobe__error(eb, STROBE_ERR_TRUNCATED, "%s: offset %zu: %s runs past %s", s->name, rec, what,
                         end == s->len ? "the end of the file" : "its chunk");
}

/* The accesses of the BLOCK or NEAR record `what` at offset rec whose
 * stride masks start at p (<= end); returns the byte after its address fields, NULL on error. */
static const uint8_t *accesses(struct strobe__bbstream *s, const struct strobe__block_info *k,
                               const uint8_t *p, const uint8_t *end, size_t rec, const char *what,
                               struct strobe_errbuf *eb)
{
    uint64_t valid = s->chunk + 1;
    const uint8_t *mask = p;
    size_t nmask = (k->recorded + 7) / 8;
    if ((size_t)(end - p) < nmask) {
        past_end(s, rec, (size_t)(end - s->buf), what, eb);
        return NULL;
    }
    p += nmask;
    uint32_t r = 0; /* recorded ops so far */
    for (uint32_t i = 0; i < k->nops; i++) {
        const struct strobe__op_info *o = &k->ops[i];
        struct strobe__bb_access *a = &s->acc[i];
        a->size = o->size;
        a->kind = o->kind;
        a->op = i;
        if (o->base == STROBE_BB_RECORDED) {
            uint32_t g = k->first_op + i;
            uint64_t before = 0, stride = 0;
            if (s->gen[g] == valid) {
                before = s->prev[g];
                stride = s->stride[g];
            }
            if (mask[r / 8] >> (r % 8) & 1) {
                a->address = before + stride;
            } else {
                if (end - p < 2) {
                    past_end(s, rec, (size_t)(end - s->buf), what, eb);
                    return NULL;
                }
                uint16_t w = (uint16_t)(p[0] | p[1] << 8);
                if (w == STROBE_BB_ESCAPE) {
                    if (end - p < 8) {
                        past_end(s, rec, (size_t)(end - s->buf), what, eb);
                        return NULL;
                    }
                    uint64_t v = 0;
                    for (int j = 7; j >= 2; j--)
                        v = v << 8 | p[j];
                    a->address = v;
                    p += 8;
                } else {
                    a->address = before + (uint64_t)(int64_t)(int16_t)w;
                    p += 2;
                }
                stride = a->address - before;
            }
            r++;
            s->prev[g] = a->address;
            s->stride[g] = stride;
            s->gen[g] = valid;
            a->how = STROBE__BB_ADDR_RECORDED;
        } else if (o->base == STROBE_BB_CONSTANT) {
            a->address = (uint64_t)o->offset;
            a->how = STROBE__BB_ADDR_CONSTANT;
        } else {
            a->address = s->acc[o->base].address + (uint64_t)o->offset;
            a->how = STROBE__BB_ADDR_ELIDED;
        }
    }
    return p;
}

/* One run of block k whose recorded ops all repeat their stride (a
 * REPEAT record's), as event ev. */
static void repeat_block(struct strobe__bbstream *s, const struct strobe__block_info *k, uint64_t offset,
                         struct strobe__bb_event *ev)
{
    static const uint8_t all_hit[STROBE_BB_MAX_SEG_OPS / 8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    memset(ev, 0, sizeof *ev);
    ev->offset = offset;
    ev->type = STROBE__BB_BLOCK;
    ev->id = s->last_id;
    ev->block = k;
    if (s->b->modules[k->module].level == STROBE_BB_LEVEL_MEM) {
        /* no address field to read: it cannot fail */
        accesses(s, k, all_hit, all_hit + sizeof all_hit, offset, "REPEAT record", NULL);
        ev->naccesses = k->nops;
        ev->accesses = s->acc;
    }
}

int strobe__bbstream_next(struct strobe__bbstream *s, struct strobe__bb_event *ev, struct strobe_errbuf *eb)
{
    if (s->repeats) {
        s->repeats--;
        repeat_block(s, s->rep, s->rep_offset, ev);
        return 1;
    }
    for (;;) {
        size_t pos = s->pos;
        if (pos >= s->len)
            return 0;
        size_t next = (pos / s->cs + 1) * s->cs;
        size_t end = next < s->len ? next : s->len;
        s->chunk = pos / s->cs;
        uint8_t b0 = s->buf[pos];
        if (b0 == 0) {
            /* Padding, or the end: the next chunk is absent or empty. What
             * follows the zero in this chunk then is a record a killed
             * process did not complete (its first byte is stored last). */
            if (next >= s->len || s->buf[next] == 0)
                return 0;
            for (size_t i = pos; i < next; i++)
                if (s->buf[i])
                    return strobe__error(eb, STROBE_ERR_FORMAT,
                                         "%s: offset %zu: non-zero byte in chunk padding", s->name, i);
            s->pos = next;
            continue;
        }
        memset(ev, 0, sizeof *ev);
        ev->offset = pos;
        const uint8_t *p = s->buf + pos, *e = s->buf + end;
        if (b0 & 1 || (b0 & 3) == 2) {
            int64_t id;
            if (b0 & 1) { /* BLOCK */
                if (e - p < 3)
                    return past_end(s, pos, end, "BLOCK record", eb);
                id = (p[0] | p[1] << 8 | p[2] << 16) >> 1;
                p += 3;
            } else { /* NEAR: relative to the chunk's previous block */
                id = (s->last_gen == s->chunk + 1 ? (int64_t)s->last_id : 0) + ((int8_t)b0 >> 2);
                p++;
            }
            const struct strobe__block_info *k =
                id > 0 && id <= STROBE_BB_MAX_ID ? strobe__blocks_info(s->b, (uint32_t)id) : NULL;
            if (!k)
                return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: block id %lld is not in %s",
                                     s->name, pos, (long long)id, s->b->name);
            if (s->b->modules[k->module].level == STROBE_BB_LEVEL_MEM) {
                if (!(p = accesses(s, k, p, e, pos, b0 & 1 ? "BLOCK record" : "NEAR record", eb)))
                    return STROBE_ERR_TRUNCATED;
                ev->naccesses = k->nops;
                ev->accesses = s->acc;
            }
            s->last_id = (uint32_t)id;
            s->last_gen = s->chunk + 1;
            ev->type = STROBE__BB_BLOCK;
            ev->id = (uint32_t)id;
            ev->block = k;
        } else if (b0 == STROBE_BB_MARK) {
            p++;
            if (strobe_uleb_get(&p, e, &ev->ticket) != 0)
                return strobe__error(eb, STROBE_ERR_FORMAT,
                                     "%s: offset %zu: MARK record: bad or truncated ticket", s->name, pos);
            ev->type = STROBE__BB_MARK;
        } else if (b0 == STROBE_BB_REPEAT) {
            if (e - p < 2)
                return past_end(s, pos, end, "REPEAT record", eb);
            uint32_t n = p[1];
            if (n == 0)
                return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: REPEAT record: count 0", s->name,
                                     pos);
            if (s->last_gen != s->chunk + 1)
                return strobe__error(eb, STROBE_ERR_FORMAT,
                                     "%s: offset %zu: REPEAT record without a block record before it in its chunk",
                                     s->name, pos);
            p += 2;
            s->rep = strobe__blocks_info(s->b, s->last_id);
            s->rep_offset = pos;
            s->repeats = n - 1;
            repeat_block(s, s->rep, pos, ev);
        } else {
            return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %zu: reserved record type 0x%02x",
                                 s->name, pos, b0);
        }
        size_t n = (size_t)(p - (s->buf + pos));
        s->bytes += n;
        s->pos = pos + n;
        return 1;
    }
}

uint64_t strobe__bbstream_bytes(const struct strobe__bbstream *s)
{
    return s->bytes;
}

void strobe__bbstream_close(struct strobe__bbstream *s)
{
    if (!s)
        return;
    if (s->mapped)
        strobe__file_unmap(s->buf, s->len);
    free(s->name);
    free(s->prev);
    free(s->stride);
    free(s->gen);
    free(s->acc);
    free(s);
}

/* ---- summary ----------------------------------------------------------- */

int strobe_blocks_summarize(const struct strobe_experiment *exp, struct strobe_blocks_summary *out, bool *has,
                            struct strobe_errbuf *eb)
{
    memset(out, 0, sizeof *out);
    *has = false;
    int rc = 0;
    for (uint32_t p = 0; p < exp->nprocesses && rc == 0; p++) {
        struct strobe__blocks *b;
        if ((rc = strobe__blocks_open(exp, p, &b, eb)) != 0)
            break;
        for (uint32_t t = 0; t < exp->nthreads && rc == 0; t++) {
            struct strobe__bbstream *s;
            if (exp->threads[t].process != p || (rc = strobe__bbstream_open(exp, t, b, &s, eb)) != 0 || !s)
                continue;
            out->streams++;
            struct strobe__bb_event ev;
            while ((rc = strobe__bbstream_next(s, &ev, eb)) == 1) {
                if (ev.type == STROBE__BB_MARK) {
                    out->marks++;
                    continue;
                }
                out->blocks++;
                if (ev.naccesses) {
                    out->reads += ev.block->loads;
                    out->writes += ev.block->stores;
                }
            }
            out->bytes += strobe__bbstream_bytes(s);
            strobe__bbstream_close(s);
        }
        strobe__blocks_free(b);
    }
    *has = out->streams > 0;
    return rc < 0 ? rc : 0;
}
