/* SPDX-License-Identifier: MIT */
/*
 * The runtime context of one open PETRA heap (struct strobe_petra) and of
 * one attached thread (struct strobe_petra_thread), and the in-heap object
 * layouts every module of src/petra shares. Nothing here is global: each
 * heap carries its own state.
 *
 * References inside the heap are byte offsets from the start of the
 * mapping ("pref"), so a heap maps at any address. Offsets of heap objects
 * are multiples of 16; bit 0 of a node's next[] offset marks the node
 * removed at that level (Harris), bit 0 of a node's info offset marks it
 * logically deleted (LFTT's MarkDelete).
 */
#ifndef STROBE_PETRA_CONTEXT_H
#define STROBE_PETRA_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "strobe/petra.h"

typedef uint64_t pref; /* heap offset; 0 is null */

#define PETRA_LINE 64u
#define PETRA_CHUNK (1u << 20)     /* unit of the data region */
#define PETRA_MAX_LEVEL 20         /* skiplist towers: enough for 2^20 keys */
#define PETRA_GRAIN 16u            /* object alignment and size unit */
#define PETRA_NCLASS 12            /* size classes 16, 32, ..., 192 bytes */
#define PETRA_MARK 1u
#define PETRA_HELP_MAX 256
#define PETRA_CHAIN_MAX 32       /* snapshot blocks: a base and its deltas */

static inline pref petra_unmark(pref r) { return r & ~(pref)PETRA_MARK; }
static inline bool petra_marked(pref r) { return (r & PETRA_MARK) != 0; }

/* ---- In-heap objects (not persisted individually; rebuilt on recovery) */

/* NodeInfo (Algorithm 5.1), extended with two states of the node's key:
 * `old`, before the transaction `desc` (what everybody else sees until that
 * transaction is Committed and Persisted, and forever if it aborts), and
 * `cur`, after this operation (what the transaction's own later operations
 * see, and everybody once it is visible). Algorithm 5.2 infers the old
 * state from the operation type; maps need the old value, PUT has no fixed
 * precondition, and a transaction touching a key twice must keep the state
 * from before its first touch. desc == 0: a "resolved" info, state `old`,
 * installed when a transaction ends and by recovery, so that no node keeps
 * referring to a finished descriptor. `node` is the node the info was made
 * for. Immutable once published. */
#define PETRA_OLD_PRESENT 1u
#define PETRA_CUR_PRESENT 2u
#define PETRA_INFO_CLASS 2u /* 48 bytes */
struct petra_info {
    pref desc;
    uint32_t opid;
    uint32_t flags;
    uint64_t old_value;
    uint64_t cur_value;
    pref node;
    uint64_t pad;
};
_Static_assert(sizeof(struct petra_info) == 48, "info size class");

struct petra_node {
    uint64_t key;
    _Atomic pref info;
    uint32_t height;
    uint32_t pad;
    _Atomic pref next[]; /* height entries */
};

/* ---- Transaction descriptors (persisted; in the per-thread logs) -------- */
enum { PETRA_ACTIVE = 0, PETRA_COMMITTED = 1, PETRA_ABORTED = 2 };     /* TxStatus */
enum { PETRA_MAYBE = 0, PETRA_INPROGRESS = 1, PETRA_PERSISTED = 2 };   /* PersStatus */
#define PETRA_DESC_MAGIC 0x44585450u /* "PTXD" */

struct petra_dop {
    uint8_t type;      /* enum strobe_petra_op_type */
    uint8_t structure;
    uint16_t pad16;
    uint32_t pad32;
    uint64_t key;
    uint64_t value;
    /* The info that performed this operation, set once (0 -> info) by the
     * executor that performed it or by the first thread that saw it done;
     * no executor moves past an operation before it is set. A node whose
     * info is not its operation's result is a duplicate insertion by a
     * late helper and does not count. Not part of the checksum. */
    _Atomic pref result;
};

struct petra_desc {
    uint32_t magic;
    uint8_t nops;
    _Atomic uint8_t status;
    _Atomic uint8_t pstatus;
    uint8_t slot; /* owner's thread slot */
    _Atomic uint64_t txid;
    _Atomic uint64_t check; /* hash of magic..ops with the final status */
    /* TXID of the committed descriptor before this one in the same log
     * (0: none since the heap was opened). A committed descriptor with
     * prev >= S whose predecessor is not in the log shows that a
     * descriptor in the middle of the log was damaged: a torn write can
     * only be the last one of a log (checkpoint.c, scan_logs). */
    uint64_t prev;
    uint64_t pad[4];
    struct petra_dop ops[];
};
_Static_assert(sizeof(struct petra_desc) == 64, "descriptor header is one line");
_Static_assert(sizeof(struct petra_dop) == 32, "two operations per line");

static inline uint64_t petra_desc_size(unsigned nops)
{
    return (64u + 32u * nops + 63u) & ~63ull;
}

/* ---- Runtime (DRAM) ------------------------------------------------------ */
struct petra_limbo {
    pref *obj;
    uint8_t *cls;
    size_t n, cap;
};

/* Where a structure lives now (rebuilt at each open). */
struct petra_struct {
    _Atomic int used; /* set (release) once heads and table entry exist */
    enum strobe_petra_kind kind;
    uint32_t buckets;  /* map: power of two; list/skiplist: 1 */
    uint32_t height;   /* tower height of the head(s) */
    pref heads;        /* first head node; map heads are consecutive */
    uint32_t head_size;
    char name[STROBE_PETRA_NAME_MAX + 1];
};

struct strobe_petra_thread {
    struct strobe_petra *h;
    unsigned slot;
    int attached;
    /* EBR (ebr.c): 0 when outside, (epoch << 1) | 1 inside. */
    _Alignas(64) _Atomic uint64_t ebr_state;
    struct petra_limbo limbo[3];
    uint64_t limbo_epoch[3];
    /* arena allocator (heap.c) */
    pref freelist[PETRA_NCLASS];
    pref bump, bump_end;
    /* descriptor log (heap.c): [head, tail) in use, wrapping at wrap. */
    uint64_t log_head, log_tail, log_wrap, log_used;
    _Atomic uint64_t log_used_pub; /* log_used, for statistics */
    /* help stack (tx.c) */
    struct petra_desc *help[PETRA_HELP_MAX];
    unsigned help_depth;
    uint64_t rng;
    uint64_t last_committed; /* TXID of this slot's last commit (petra_desc.prev) */
    /* final states of the keys this thread's committed transactions
     * changed since the last checkpoint took them, in TXID order
     * (checkpoint.c drains them into delta snapshots) */
    pthread_mutex_t dirty_lock;
    struct petra_dirty {
        uint64_t txid, key, value;
        uint32_t sid, present;
    } *dirty;
    size_t ndirty, dirty_cap;
    /* power-failure simulation: lines flushed since the last fence */
    struct petra_pending *pending;
    /* statistics (relaxed atomics: read by strobe_petra_stats_get) */
    _Atomic uint64_t committed, aborted, ops_committed;
    _Atomic uint64_t tx_flushes, tx_fences, ckpt_flushes, ckpt_fences;
};

struct strobe_petra {
    char *base;       /* the mapping */
    uint64_t size;
    int fd;
    int powerfail;
    int salvage; /* open: keep the consistent prefix of a damaged log (strobe_petra_options) */
    int flush_kind; /* pmem.c */
    char path[4096];
    unsigned max_threads;
    uint64_t log_bytes, log_off, data_off, nchunks;
    uint64_t table_off, ckpt_off;
    struct petra_struct structs[STROBE_PETRA_MAX_STRUCTURES];
    pthread_mutex_t lock;  /* structures, chunk map, attach */
    uint8_t *chunk_use;    /* per chunk: 0 free, 1 arena, 2 snapshot, 3 heads */
    pref heads_next, heads_end; /* bump allocator of structure heads */
    _Atomic uint64_t next_txid;
    _Atomic uint64_t epoch; /* EBR global epoch */
    /* checkpoints (checkpoint.c) */
    pthread_mutex_t ckpt_lock;
    pthread_mutex_t ckpt_wait_lock;
    pthread_cond_t ckpt_cond;  /* checkpointer wake-up and "logs retired" */
    pthread_t ckpt_thread;
    int ckpt_running, ckpt_stop;
    _Atomic int ckpt_requested;
    _Atomic int ckpt_error; /* why the last checkpoint failed, 0 if it did not */
    _Atomic uint64_t retired_below; /* descriptors with txid below are retired */
    uint64_t ckpt_seq;
    /* the snapshot chain of the current checkpoint, oldest (a base) first */
    struct petra_block {
        pref off;
        uint64_t bytes, chunks, check;
    } chain[PETRA_CHAIN_MAX];
    unsigned chain_len;
    _Atomic int ckpt_force_full; /* a dirty list could not grow: walk everything */
    _Atomic uint64_t checkpoints;
    uint64_t recovered_descriptors, recovery_ns;
    /* threads: max_threads slots, then the checkpointer's */
    struct strobe_petra_thread *threads;
};

static inline void *petra_ptr(const struct strobe_petra *h, pref r) { return h->base + r; }
static inline struct petra_node *petra_node(const struct strobe_petra *h, pref r)
{
    return (struct petra_node *)(h->base + petra_unmark(r));
}
static inline struct petra_info *petra_info(const struct strobe_petra *h, pref r)
{
    return (struct petra_info *)(h->base + petra_unmark(r));
}
static inline struct petra_desc *petra_desc(const struct strobe_petra *h, pref r)
{
    return (struct petra_desc *)(h->base + r);
}
static inline pref petra_ref(const struct strobe_petra *h, const void *p)
{
    return (pref)((const char *)p - h->base);
}

/* why-buffer helper shared by the modules that parse the file */
void strobe__petra_why(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
