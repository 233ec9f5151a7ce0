/* SPDX-License-Identifier: MIT */
/*
 * What `strobe cc --trace=bb,mem` emits, written by hand in C for the
 * block-tracing fixtures (bb_prog.c, bb_lib.c): the weak cursor, the weak
 * runtime entry points, and the inline sequence of one segment
 * (common/bbtrace.h): the room check, the address fields (a 2-byte delta
 * from the op's previous address, or the escape and 6 bytes, stored as one
 * 8-byte word), the block id stored last, the cursor advanced.
 */
#ifndef STROBE_TESTS_ANALYSIS_BB_EMIT_H
#define STROBE_TESTS_ANALYSIS_BB_EMIT_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "common/bbtrace.h"

__attribute__((weak, tls_model("initial-exec"))) __thread struct strobe_bb_cursor strobe_bb_cursor;
extern uint8_t *strobe_bb_refill(uint32_t need) __attribute__((weak));
extern void strobe_bb_register(const struct strobe_bb_module *m) __attribute__((weak));

/* Longest record of a segment with `recorded` address fields. */
#define BB_MAXREC(recorded) (3u + 8u * (recorded) + 8u)

/* The segment's record starts at the returned position. */
static inline uint8_t *bb_begin(uint32_t maxrec)
{
    struct strobe_bb_cursor *c = &strobe_bb_cursor;
    uint8_t *p = c->pos;
    if ((uintptr_t)p + maxrec > (uintptr_t)c->limit)
        p = strobe_bb_refill ? strobe_bb_refill(maxrec) : c->scratch;
    return p;
}

/* One recorded address field at q (prev: the op's previous address). */
static inline uint8_t *bb_addr(uint8_t *q, int64_t *prev, const void *addr)
{
    uint64_t a = (uint64_t)(uintptr_t)addr;
    int64_t d = (int64_t)(a - (uint64_t)*prev);
    *prev = (int64_t)a;
    int small = d >= -32767 && d <= 32767;
    uint64_t v = small ? (uint64_t)(uint16_t)(int16_t)d : (a << 16 | 0x8000u);
    memcpy(q, &v, 8);
    return q + (small ? 2 : 8);
}

/* The id last (a killed process leaves a zero byte), then the cursor. */
static inline void bb_end(uint8_t *p, uint8_t *q, const uint32_t *base, uint32_t local)
{
    atomic_signal_fence(memory_order_seq_cst);
    uint32_t v = *base + (local << 1);
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    atomic_signal_fence(memory_order_seq_cst);
    p[0] = (uint8_t)v;
    strobe_bb_cursor.pos = q;
}

#endif
