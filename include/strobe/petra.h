/* SPDX-License-Identifier: MIT */
/*
 * PETRA: durable, transactional, lock-free linked data structures in a
 * persistent heap (docs/petra.md; seed 002, chapter 5, on top of LFTT,
 * section 2.4.2.1.1).
 *
 * A heap is one file mapped into memory. It holds any number of named
 * structures (a set on a linked list, a set on a skiplist, a hash map) and
 * the transaction descriptors that make them durable. A transaction is a
 * list of 1..STROBE_PETRA_MAX_OPS operations on one or several structures
 * of the same heap; it commits only if every operation's precondition holds
 * (INSERT: key absent; DELETE, UPDATE, FIND: key present; PUT: always). When
 * strobe_petra_execute returns 0 the transaction is committed and durable:
 * it survives a process kill and, on persistent memory (or in the
 * power-failure simulation), a power failure. Opening a heap recovers it.
 *
 * Keys are 64-bit, 1 .. UINT64_MAX - 1 (0 and UINT64_MAX are the
 * sentinels). Values are 64-bit; sets carry them too, maps use them.
 *
 * Threads: each thread that runs transactions attaches to the heap once
 * (strobe_petra_thread_attach) and passes its handle; a handle is used by
 * one thread at a time. Everything else is thread-safe.
 *
 * Link with -lstrobe-petra (pkg-config strobe-petra).
 */
#ifndef STROBE_PETRA_H
#define STROBE_PETRA_H

#include <stddef.h>
#include <stdint.h>

#include "strobe/strobe.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strobe_petra strobe_petra;
typedef struct strobe_petra_thread strobe_petra_thread;

#define STROBE_PETRA_MAX_OPS 16        /* operations per transaction */
#define STROBE_PETRA_MAX_STRUCTURES 64 /* structures per heap */
#define STROBE_PETRA_NAME_MAX 47       /* structure name length */
#define STROBE_PETRA_KEY_MIN 1u
#define STROBE_PETRA_KEY_MAX (UINT64_MAX - 1)

enum strobe_petra_kind {
    STROBE_PETRA_LIST = 1,     /* sorted set on a lock-free linked list */
    STROBE_PETRA_SKIPLIST = 2, /* sorted set on a lock-free skiplist */
    STROBE_PETRA_MAP = 3,      /* hash map: fixed bucket array of linked lists */
};

enum strobe_petra_op_type {
    STROBE_PETRA_FIND = 1,   /* key present; returns its value */
    STROBE_PETRA_INSERT = 2, /* key absent; adds key with value */
    STROBE_PETRA_DELETE = 3, /* key present; removes it */
    STROBE_PETRA_UPDATE = 4, /* key present; replaces its value */
    STROBE_PETRA_PUT = 5,    /* insert or update: never fails */
};

struct strobe_petra_op {
    uint8_t type;      /* enum strobe_petra_op_type */
    uint8_t structure; /* from strobe_petra_structure_create/_find */
    uint64_t key;
    uint64_t value; /* in: INSERT/UPDATE/PUT value; out: FIND's value */
};

struct strobe_petra_options {
    uint64_t size;         /* create: file size in bytes (default 256 MiB) */
    unsigned max_threads;  /* create: thread slots (default 16, max 255) */
    uint64_t log_bytes;    /* create: descriptor log per thread slot (default 4 MiB) */
    int powerfail;         /* open/create: simulate power failure (below) */
    int salvage;           /* open: a damaged descriptor log keeps the consistent prefix (below) */
};

/* Power-failure simulation (crash testing): the file is mapped private, and
 * only cache lines that were explicitly flushed and then fenced are written
 * to it, with the contents they had when flushed. A process killed at any
 * instant leaves the file exactly as persistent memory would be after a
 * power failure; a missing flush shows up as lost data on recovery. */

/* Salvage: a descriptor in the middle of a log whose checksum fails (or
 * that is missing) is damage, not a torn write, and open refuses the file
 * with STROBE_ERR_FORMAT naming the log, offset and TXID. With salvage
 * set, open instead recovers every transaction before the damaged one
 * and drops it and all later ones (of every log), then checkpoints: the
 * file then holds that consistent prefix. */

/* Statistics since open (all threads; counters are approximate while
 * transactions run). */
struct strobe_petra_stats {
    uint64_t committed, aborted;  /* transactions */
    uint64_t ops_committed;       /* operations of committed transactions */
    uint64_t tx_flushes, tx_fences; /* issued by PersistTransaction */
    uint64_t ckpt_flushes, ckpt_fences; /* issued by checkpoints */
    uint64_t checkpoints;
    uint64_t recovered_descriptors; /* replayed by the last open */
    uint64_t recovery_ns;           /* time the last open spent recovering */
    uint64_t live_descriptor_bytes; /* descriptor log in use now */
};

/* Create a new heap file (fails with -EEXIST if it exists). opt may be NULL
 * for defaults. On error, `why` (if not NULL) receives a one-line reason. */
STROBE_API int strobe_petra_create(const char *path, const struct strobe_petra_options *opt,
                                   strobe_petra **out, char *why, size_t why_len);
/* Open an existing heap and recover it: rebuild every structure from the
 * last checkpoint and the persisted descriptors after it (Figure 5.4).
 * Only opt->powerfail and opt->salvage are used. Another handle (of any
 * process) holding the heap gives -EBUSY. A truncated or corrupt file gives
 * STROBE_ERR_TRUNCATED / STROBE_ERR_FORMAT / STROBE_ERR_VERSION and a
 * reason naming the field; the file is not modified then (but for the
 * owner record, outside every checksum, written once the superblock is
 * valid: docs/formats/petra-heap.md). */
STROBE_API int strobe_petra_open(const char *path, const struct strobe_petra_options *opt,
                                 strobe_petra **out, char *why, size_t why_len);
/* Checkpoint and unmap. No thread may be attached or running. */
STROBE_API int strobe_petra_close(strobe_petra *h);

/* Create a structure (durable when this returns). buckets: hash map bucket
 * count (0 = 65536); ignored otherwise. Returns the id (>= 0), -EEXIST if
 * the name exists, STROBE_ERR_LIMIT if the heap has no free slot. */
STROBE_API int strobe_petra_structure_create(strobe_petra *h, const char *name,
                                             enum strobe_petra_kind kind, uint32_t buckets);
/* Id of a structure by name, or -ENOENT. */
STROBE_API int strobe_petra_structure_find(const strobe_petra *h, const char *name);
/* Name and kind of structure id; -ENOENT if none. */
STROBE_API int strobe_petra_structure_info(const strobe_petra *h, int id, const char **name,
                                           enum strobe_petra_kind *kind);

/* Per-thread handle; -EBUSY when all max_threads slots are attached. */
STROBE_API int strobe_petra_thread_attach(strobe_petra *h, strobe_petra_thread **out);
STROBE_API void strobe_petra_thread_detach(strobe_petra_thread *t);

/* Run one transaction of n operations. Returns 0 when committed (and
 * durable), STROBE_ERR_ABORTED when an operation's precondition failed
 * (nothing of it is visible, now or after any crash), -EINVAL for a bad
 * operation, -ENOSPC when the heap is full. FIND ops get their value. */
STROBE_API int strobe_petra_execute(strobe_petra_thread *t, struct strobe_petra_op *ops,
                                    unsigned n);

/* Read the committed, durable value of one key without a transaction
 * (linearizable; never blocks writers). 0 or -ENOENT. */
STROBE_API int strobe_petra_get(strobe_petra_thread *t, int structure, uint64_t key,
                                uint64_t *value);
/* Call fn for each present key in key order (map: bucket order), with the
 * committed durable value. Weakly consistent: keys changed concurrently may
 * or may not be seen. Stops early and returns fn's value if it returns
 * non-zero. */
STROBE_API int strobe_petra_foreach(strobe_petra_thread *t, int structure,
                                    int (*fn)(void *arg, uint64_t key, uint64_t value),
                                    void *arg);

/* Take a checkpoint now (normally automatic when a descriptor log fills):
 * retires the descriptors it covers so recovery time and file use stay
 * bounded. Thread-safe; concurrent transactions keep running. */
STROBE_API int strobe_petra_checkpoint(strobe_petra_thread *t);

/* Check every structure and the heap: keys sorted and unique, every node
 * reachable and every allocated block accounted for (no leak). No thread
 * may run transactions meanwhile. 0, or STROBE_ERR_FORMAT with the first
 * violation in `why`. */
STROBE_API int strobe_petra_verify(strobe_petra *h, char *why, size_t why_len);

STROBE_API void strobe_petra_stats_get(const strobe_petra *h, struct strobe_petra_stats *out);

/* Which flush instruction this CPU uses: "clwb", "clflushopt" or "clflush". */
STROBE_API const char *strobe_petra_flush_instruction(void);

#ifdef __cplusplus
}
#endif

#endif
