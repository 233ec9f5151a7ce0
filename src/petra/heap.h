/* SPDX-License-Identifier: MIT */
/*
 * The heap file: layout, validation, and the allocators on top of it.
 *
 *   0        superblock: magic, version, geometry, checksum
 *   2048     owner record: pid of the process holding the lock (advisory)
 *   4096     structure table: 64 entries of 64 bytes, each with a checksum
 *   8192     two checkpoint records (64 bytes each; the valid one with the
 *            higher sequence number is current)
 *   65536    descriptor logs: max_threads x log_bytes
 *   data_off data region in 1 MiB chunks: checkpoint snapshots, and the
 *            arena of nodes and infos
 * (docs/petra.md, "File format".) Only the superblock, the table entries,
 * the checkpoint records, snapshots and descriptors are ever flushed; the
 * arena is rebuilt by recovery, so allocating in it needs no logging and
 * cannot leak across a crash.
 */
#ifndef STROBE_PETRA_HEAP_H
#define STROBE_PETRA_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "petra/context.h"

#define PETRA_FILE_MAGIC "STRBPETR"
#define PETRA_FILE_VERSION 1u
#define PETRA_OWNER_OFF 2048u
#define PETRA_OWNER_MAGIC "PETROWNR"
#define PETRA_TABLE_OFF 4096u
#define PETRA_CKPT_OFF 8192u
#define PETRA_LOG_OFF 65536u

struct petra_super {
    char magic[8];
    uint32_t version;
    uint32_t max_threads;
    uint64_t file_size;
    uint64_t log_bytes;
    uint64_t log_off;
    uint64_t data_off;
    uint64_t nchunks;
    uint64_t check;
};

/* Written (not flushed, not checksummed) by the process that holds the
 * heap's lock, so that another opener can say who has it. */
struct petra_owner {
    char magic[8];
    uint64_t pid;
};

struct petra_table_entry {
    char name[STROBE_PETRA_NAME_MAX + 1];
    uint8_t kind;
    uint8_t used;
    uint16_t pad;
    uint32_t buckets;
    uint64_t check;
};
_Static_assert(sizeof(struct petra_table_entry) == 64, "one line per table entry");

struct petra_ckpt_record {
    uint64_t seq;           /* 0: never written */
    uint64_t retired_below; /* S: descriptors with txid < S are in the snapshot */
    uint64_t snap_off, snap_bytes, snap_check;
    uint64_t pad[2];
    uint64_t check;
};
_Static_assert(sizeof(struct petra_ckpt_record) == 64, "one line per record");

/* A 64-bit hash of n bytes (n a multiple of 8) for torn-write detection;
 * not cryptographic. */
uint64_t strobe__petra_hash(const void *p, size_t n, uint64_t seed);

/* Create the file and map it; h->path set. 0 or -errno / STROBE_ERR_*. */
int strobe__heap_create(struct strobe_petra *h, const struct strobe_petra_options *opt, char *why,
                        size_t why_len);
/* Map an existing file and check superblock and structure table; fills
 * h->structs (kind, name, buckets; heads are built by recovery). */
int strobe__heap_open(struct strobe_petra *h, char *why, size_t why_len);
void strobe__heap_unmap(struct strobe_petra *h);

/* Persist a new structure table entry. */
int strobe__heap_table_write(struct strobe_petra *h, struct strobe_petra_thread *t, int id);

/* Data-region chunks (caller holds h->lock): first fit of n contiguous
 * free chunks; returns the offset or 0 when full. */
pref strobe__heap_chunks_alloc(struct strobe_petra *h, uint64_t n, uint8_t use);
void strobe__heap_chunks_free(struct strobe_petra *h, pref off, uint64_t n);

/* Arena objects of a size class (16-byte units, class = size/16 - 1). */
static inline unsigned petra_class(size_t bytes) { return (unsigned)((bytes + 15) / 16) - 1; }
pref strobe__arena_alloc(struct strobe_petra_thread *t, unsigned cls);
/* Immediate free: only for objects no other thread can have seen. */
void strobe__arena_free(struct strobe_petra_thread *t, pref obj, unsigned cls);

/* Descriptor log: space for a descriptor of `bytes` in t's log, waiting for
 * a checkpoint when the log is full; -ENOSPC if a single descriptor could
 * never fit. */
int strobe__log_alloc(struct strobe_petra_thread *t, uint64_t bytes, struct petra_desc **out);
/* Give back space of descriptors retired by checkpoints. */
void strobe__log_reclaim(struct strobe_petra_thread *t);
static inline char *petra_log_base(const struct strobe_petra *h, unsigned slot)
{
    return h->base + h->log_off + (uint64_t)slot * h->log_bytes;
}

#endif
