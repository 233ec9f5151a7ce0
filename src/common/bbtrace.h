/* SPDX-License-Identifier: MIT */
/*
 * The interface between code compiled by `strobe cc --trace=bb[,mem]` and
 * the runtime (libstrobe.so): the names and layouts the compiler pass
 * (src/cc) emits references to and the runtime (core/bb.c) defines. It is
 * an ABI: object files built with one version are run with another, so any
 * change to a layout bumps STROBE_BB_ABI.
 *
 * The hot path is inline in the instrumented code (Contech's "inlined
 * instrumentation"): at the start of each instrumented segment (a basic
 * block, cut before every call and after 64 recorded memory operations)
 * one compare of the cursor's position with its limit (the function's
 * copies, in registers; the cursor itself is loaded at the function's
 * start and after calls, and stored before them); then plain stores of
 * the segment's record (format.h, "Block streams") as the segment runs;
 * at its end the block id is stored (last, so a process killed in the
 * middle leaves a zero byte, the end of data) and the position advanced. Only a cursor without room for the segment's longest record
 * calls the runtime (strobe_bb_refill).
 *
 * Without the runtime (the program run outside `strobe run`) the weak
 * references to strobe_bb_refill and strobe_bb_register are null: the
 * module's constructor registers nothing and the segments write into the
 * cursor's scratch area, which is never read.
 */
#ifndef STROBE_COMMON_BBTRACE_H
#define STROBE_COMMON_BBTRACE_H

#include <stdint.h>

#define STROBE_BB_ABI 2u

/* Memory operations one segment records at most; the pass starts a new
 * segment after this many. */
#define STROBE_BB_MAX_SEG_OPS 64u
/* Longest record of one segment, including the slack of the overlapping
 * 8-byte stores: 3-byte head, one stride-mask bit per recorded address,
 * then at most 8 bytes per address, then up to 8 bytes written (as zeros)
 * past the end. */
#define STROBE_BB_MAX_RECORD (3u + STROBE_BB_MAX_SEG_OPS / 8u + 8u * STROBE_BB_MAX_SEG_OPS + 8u)
#define STROBE_BB_SCRATCH 1024u

/* The thread's cursor: thread-local, named strobe_bb_cursor, defined weak
 * in every instrumented module and in libstrobe.so (default visibility, so
 * every reference in the process resolves to one definition: the
 * executable's when it is instrumented). pos == limit == NULL until the
 * first segment of the thread calls strobe_bb_refill. */
struct strobe_bb_cursor {
    uint8_t *pos;   /* where the next record goes */
    uint8_t *limit; /* a segment whose longest record ends beyond: refill */
    /* The id of the previous segment recorded in this chunk (0 at a chunk
     * start: the runtime resets it with the modules' delta state), which
     * one-byte NEAR records are relative to. */
    uint32_t last_id;
    uint32_t unused;
    uint8_t scratch[STROBE_BB_SCRATCH - 2 * sizeof(uint8_t *) - 2 * sizeof(uint32_t)];
};

/* Static facts of one memory operation (load or store), kept once per
 * module (Contech's statefile), never in the stream. */
struct strobe_bb_op {
    uint32_t size;   /* bytes accessed */
    uint32_t line;   /* source line, 0 unknown */
    uint16_t column; /* source column, 0 unknown */
    uint8_t kind;    /* STROBE_BB_LOAD / STROBE_BB_STORE */
    uint8_t unused;
    /* STROBE_BB_RECORDED: the address is in the stream;
     * STROBE_BB_CONSTANT: the address is `offset` itself (a global: the
     *   table's initializer is relocated at load time);
     * >= 0: the address is that of the block's op number `base` (an
     *   earlier op of the same segment, recorded) plus `offset`. */
    int32_t base;
    int64_t offset;
};

enum {
    STROBE_BB_LOAD = 1,
    STROBE_BB_STORE = 2,
};
#define STROBE_BB_RECORDED (-1)
#define STROBE_BB_CONSTANT (-2)

/* One instrumented segment. Its ops are ops[first_op .. first_op + nops),
 * in program order; `recorded` of them have an address in the stream. */
struct strobe_bb_block {
    uint32_t first_op;
    uint32_t nops;
    uint32_t recorded;
    uint32_t function; /* index into names: the function's (mangled) name */
    uint32_t file;     /* index into names: the source file, as in the debug info */
    uint32_t line;     /* the segment's first source line, 0 unknown */
};

/* One instrumented module (object file), emitted by the pass as constant
 * data and handed to strobe_bb_register by the module's constructor. */
struct strobe_bb_module {
    uint32_t abi;     /* STROBE_BB_ABI */
    uint32_t level;   /* STROBE_BB_LEVEL_* */
    uint32_t nblocks; /* local block ids are 1..nblocks: blocks[id - 1] */
    uint32_t nops;
    uint32_t nnames;
    uint32_t unused;
    const char *name; /* the module: its main source file as compiled */
    const struct strobe_bb_block *blocks;
    const struct strobe_bb_op *ops;
    const char *const *names;
    /* Written by strobe_bb_register: (first process-wide id - 1) << 1 | 1,
     * so that a segment's record starts with *base + (local id << 1). */
    uint32_t *base;
    /* Zeroes this module's per-op previous addresses and strides of the
     * calling thread (the delta encoding's state); the runtime calls it
     * whenever the thread starts a chunk of its block stream (and zeroes
     * cursor.last_id then). NULL at level BB. */
    void (*reset)(void);
};

enum {
    STROBE_BB_LEVEL_BB = 1,  /* block ids only */
    STROBE_BB_LEVEL_MEM = 2, /* block ids and memory addresses */
};

/* Defined by libstrobe.so; weak references in instrumented modules. */
extern __thread struct strobe_bb_cursor strobe_bb_cursor;
/* Called with the cursor lacking `need` bytes (<= STROBE_BB_MAX_RECORD):
 * makes room (a new chunk of the thread's block stream, or the scratch
 * area when the thread's blocks are not recorded) and returns the new
 * cursor position. Never NULL. */
uint8_t *strobe_bb_refill(uint32_t need);
/* Called once per module by its constructor: assigns its block ids and
 * keeps its tables for the experiment. */
void strobe_bb_register(const struct strobe_bb_module *m);

#endif
