/* SPDX-License-Identifier: MIT */
/*
 * The key layout of a `petra` store heap (docs/petra-store.md, "Key
 * layout"), shared by the store plugin (petra_store.c), which writes it,
 * and `strobe petra` (src/cli/cmd_petra.c), which reads it. Everything a
 * reader needs to find a metric by name, read its latest value and walk
 * its history is here, so the two sides cannot disagree.
 *
 * A metric ("instance/metric", "instance/metric[i]" for array elements)
 * has a 48-bit id: a hash of its name, linearly probed on collision. Every
 * per-metric key is (id << 16 | sub), so keys of different metrics never
 * meet and no key is 0 or UINT64_MAX. The layout is part of the file
 * format: changing the hash or a key changes STROBE__PST_VERSION.
 *
 * Not thread-safe: one struct strobe__pst is used by one thread at a time.
 */
#ifndef STROBE_PLUGINS_PETRA_LAYOUT_H
#define STROBE_PLUGINS_PETRA_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/metric_set.h"
#include "strobe/petra.h"

#define STROBE__PST_MAGIC 0x3174737062727473ull /* "strbpst1", info key 1 */
#define STROBE__PST_VERSION 1u                  /* info key 2 */
#define STROBE__PST_ID_MAX ((1ull << 48) - 2)   /* ids are 1 .. this */
#define STROBE__PST_HISTORY_MAX 65536u          /* ring slots per metric */
#define STROBE__PST_NAME_MAX 4096u              /* bytes of "instance/metric[i]" */
#define STROBE__PST_CHUNKS_MAX (STROBE__PST_NAME_MAX / 8)

/* info map keys */
#define STROBE__PST_INFO_MAGIC 1u
#define STROBE__PST_INFO_VERSION 2u

/* latest map: sub-keys of a metric */
#define STROBE__PST_LATEST_VALUE 0u
#define STROBE__PST_LATEST_TS 1u
#define STROBE__PST_LATEST_SEQ 2u /* samples stored since the metric appeared */

enum strobe__pst_structure {
    STROBE__PST_INFO,       /* magic, version */
    STROBE__PST_NAMES,      /* id -> descriptor (type, name length, ring size) */
    STROBE__PST_STRINGS,    /* id<<16 | chunk -> 8 bytes of the name */
    STROBE__PST_LATEST,     /* id<<16 | 0,1,2 -> value, timestamp, seq */
    STROBE__PST_RING_TS,    /* id<<16 | slot -> timestamp (ns) */
    STROBE__PST_RING_VALUE, /* id<<16 | slot -> value */
    STROBE__PST_NSTRUCTURES
};

/* An open store heap: the heap, one attached thread handle, and the ids of
 * the six structures. */
struct strobe__pst {
    strobe_petra *heap;
    strobe_petra_thread *t;
    int sid[STROBE__PST_NSTRUCTURES];
};

/* What names[id] holds, unpacked. */
struct strobe__pst_desc {
    enum strobe_metric_type type; /* never STROBE_MT_CHAR */
    uint32_t name_len;            /* bytes, 1 .. STROBE__PST_NAME_MAX */
    uint32_t history;             /* ring slots, 1 .. STROBE__PST_HISTORY_MAX */
};

static inline uint64_t strobe__pst_key(uint64_t id, uint32_t sub)
{
    return id << 16 | sub;
}

/* Descriptor word: bits 0-7 type, 8-23 name length - 1, 24-39 history - 1,
 * bit 40 set (so it is never 0). */
uint64_t strobe__pst_desc_pack(const struct strobe__pst_desc *d);
/* 0, or STROBE_ERR_FORMAT when the word is not a descriptor. */
int strobe__pst_desc_unpack(uint64_t word, struct strobe__pst_desc *d);

/* First id of name's probe sequence, 1 .. STROBE__PST_ID_MAX (FNV-1a 64
 * then the splitmix64 finaliser; part of the format). */
uint64_t strobe__pst_hash(const char *name, size_t len);
/* The id after `id` in a probe sequence (wraps to 1). */
static inline uint64_t strobe__pst_probe_next(uint64_t id)
{
    return id % STROBE__PST_ID_MAX + 1;
}

/* Open the store heap at path, attach a thread and find the structures;
 * with create = 1 a missing file is made first (`size` bytes, 0 = petra's
 * default), complete and atomically (built under another name, then
 * linked into place). A heap without every structure, the magic and the
 * version gives STROBE_ERR_FORMAT / STROBE_ERR_VERSION and "not a petra
 * store heap ..."; nothing is added to it. salvage: open a heap whose
 * descriptor log is damaged with the transactions before the damage
 * (strobe_petra_options.salvage). On error `why` gets one line that does
 * not name the file (the caller does). */
int strobe__pst_open(const char *path, int create, uint64_t size, int salvage, struct strobe__pst *out,
                     char *why, size_t why_len);
/* Detach and close (checkpoint). Returns strobe_petra_close's code. */
int strobe__pst_close(struct strobe__pst *s);

/* The name of metric id with descriptor d into buf (NUL-terminated; cap
 * must exceed d->name_len). 0, STROBE_ERR_FORMAT when a chunk is missing
 * or the name holds a NUL, -ENOSPC when cap is too small. */
int strobe__pst_read_name(struct strobe__pst *s, uint64_t id, const struct strobe__pst_desc *d, char *buf,
                          size_t cap);

/* Find name (len bytes) by walking its probe sequence from *id (0: from
 * its start, strobe__pst_hash). 0 with *id and *d when present; -ENOENT
 * with *id = the first free id from there on (where a writer inserts it);
 * other negative codes on read errors. */
int strobe__pst_lookup(struct strobe__pst *s, const char *name, size_t len, uint64_t *id,
                       struct strobe__pst_desc *d);

/* The value of a stored sample as text, as `strobe ls` prints it: integers
 * in decimal (signed types with a sign), reals shortest of %.15g / %.17g
 * that reads back exactly. bits: the stored 64-bit pattern. */
int strobe__pst_format_value(enum strobe_metric_type type, uint64_t bits, char *buf, size_t cap);

#endif
