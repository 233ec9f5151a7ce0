/* SPDX-License-Identifier: MIT */
/*
 * Reader of basic-block and memory traces (`strobe cc --trace=bb[,mem]`):
 * a process's `blocks` file (the static tables of its traced modules,
 * format.h "Block tables") and its threads' block streams t<N>.bb
 * (format.h "Block streams"), decoded into events: BLOCK (a segment ran,
 * with every memory access it made, addresses reconstructed) and MARK (a
 * synchronization event of the thread's event stream happened here).
 *
 * Errors follow experiment.h: 0 or a negative code, and one line naming
 * the file and byte offset in the caller's errbuf. A stream cut short by
 * a killed process (a record never completed, then zeros) just ends.
 */
#ifndef STROBE_ANALYSIS_BLOCKS_H
#define STROBE_ANALYSIS_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/experiment.h"

/* Static facts of one memory operation (common/bbtrace.h, struct
 * strobe_bb_op). */
struct strobe__op_info {
    uint32_t size;   /* bytes accessed */
    uint32_t line;   /* 0 unknown */
    uint32_t column; /* 0 unknown */
    uint8_t kind;    /* STROBE_BB_LOAD / STROBE_BB_STORE */
    int32_t base;    /* STROBE_BB_RECORDED, STROBE_BB_CONSTANT or an earlier op of the block */
    int64_t offset;  /* from base's address; a CONSTANT's address */
};

struct strobe__bb_module_info {
    char *name; /* the module's main source file as compiled */
    int level;  /* STROBE_BB_LEVEL_BB / STROBE_BB_LEVEL_MEM */
    uint32_t first_id, nblocks;
    uint32_t nops, nnames;
    char **names;  /* function and file names */
    bool complete; /* every entry its MODULE record announced is present */
};

/* One instrumented segment. */
struct strobe__block_info {
    uint32_t id;                 /* process-wide id; 0 = not defined (torn tables) */
    uint32_t module;             /* index into strobe__blocks.modules */
    const char *function, *file; /* never NULL ("" unknown) */
    uint32_t line;               /* the segment's first source line, 0 unknown */
    uint32_t nops;               /* memory operations, program order */
    uint32_t recorded;           /* of them with an address in the stream (level MEM) */
    uint32_t loads, stores;
    uint32_t first_op; /* index of ops[0] in strobe__blocks.ops */
    const struct strobe__op_info *ops;
};

struct strobe__blocks {
    char *name; /* "<process dir>/blocks", for messages */
    struct strobe__bb_module_info *modules;
    size_t nmodules;
    struct strobe__block_info *blocks; /* blocks[id - 1], id 1..nblocks */
    size_t nblocks;
    struct strobe__op_info *ops;
    size_t nops;
    uint32_t max_ops; /* most ops of one block */
};

/* Loads the `blocks` file of process `process`. Returns 0 with *out NULL
 * when the process has none (nothing traced by blocks), 0 with *out (free
 * with strobe__blocks_free), or an error. */
int strobe__blocks_open(const struct strobe_experiment *exp, uint32_t process, struct strobe__blocks **out,
                        struct strobe_errbuf *eb);
/* The same on a file's bytes (what the loader and the fuzz target use). */
int strobe__blocks_decode(const uint8_t *buf, size_t len, const char *name, struct strobe__blocks **out,
                          struct strobe_errbuf *eb);
void strobe__blocks_free(struct strobe__blocks *b);

/* The block with process-wide id `id`, NULL when the tables have none. */
const struct strobe__block_info *strobe__blocks_info(const struct strobe__blocks *b, uint32_t id);

/* ---- block streams ---- */

enum {
    STROBE__BB_BLOCK = 1,
    STROBE__BB_MARK = 2,
};

/* How an access's address is known. */
enum {
    STROBE__BB_ADDR_RECORDED = 1, /* in the stream */
    STROBE__BB_ADDR_ELIDED = 2,   /* a static offset of a recorded access of the block */
    STROBE__BB_ADDR_CONSTANT = 3, /* a global's (the tables) */
};

struct strobe__bb_access {
    uint64_t address;
    uint32_t size;
    uint8_t kind; /* STROBE_BB_LOAD / STROBE_BB_STORE */
    uint8_t how;  /* STROBE__BB_ADDR_* */
    uint32_t op;  /* index in the block's ops: its line and column */
};

struct strobe__bb_event {
    int type;        /* STROBE__BB_BLOCK / STROBE__BB_MARK */
    uint64_t offset; /* of the record in the file */
    /* BLOCK */
    uint32_t id;
    const struct strobe__block_info *block;
    uint32_t naccesses;                       /* 0 at level BB */
    const struct strobe__bb_access *accesses; /* valid until the next call */
    /* MARK */
    uint64_t ticket;
};

struct strobe__bbstream;

/* Opens the block stream of global thread `thread` against its process's
 * tables `b` (which must outlive it). Returns 0 with *out NULL when the
 * thread has no block stream, 0 with *out, or an error. */
int strobe__bbstream_open(const struct strobe_experiment *exp, uint32_t thread,
                          const struct strobe__blocks *b, struct strobe__bbstream **out,
                          struct strobe_errbuf *eb);
/* The same on a file's bytes (kept by the caller; name for messages). */
int strobe__bbstream_begin(const uint8_t *buf, size_t len, const char *name, const struct strobe__blocks *b,
                           struct strobe__bbstream **out, struct strobe_errbuf *eb);
/* 1 = *ev filled, 0 = end of the stream, < 0 = error. */
int strobe__bbstream_next(struct strobe__bbstream *s, struct strobe__bb_event *ev, struct strobe_errbuf *eb);
/* Bytes of the records decoded so far (headers and padding excluded). */
uint64_t strobe__bbstream_bytes(const struct strobe__bbstream *s);
void strobe__bbstream_close(struct strobe__bbstream *s);

/* ---- the report's summary ---- */

struct strobe_blocks_summary {
    uint64_t streams;       /* threads with a block stream */
    uint64_t blocks;        /* BLOCK records: segments executed */
    uint64_t reads, writes; /* memory accesses (recorded, elided and constant) */
    uint64_t marks;
    uint64_t bytes; /* of the records of every block stream */
};

/* Decodes every block stream of EXP. Returns 0 with *has false when the
 * experiment has none. */
int strobe_blocks_summarize(const struct strobe_experiment *exp, struct strobe_blocks_summary *out, bool *has,
                            struct strobe_errbuf *eb);

#endif
