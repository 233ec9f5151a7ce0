/* SPDX-License-Identifier: MIT */
/*
 * What `strobe cc --trace=bb,mem` emits, written by hand in C for the
 * block-tracing fixtures (bb_prog.c, bb_lib.c): the weak cursor, the weak
 * runtime entry points, and the inline sequence of one segment
 * (common/bbtrace.h): the room check, the head (NEAR or BLOCK), the
 * address fields (nothing but a stride-mask bit, a 2-byte delta from the
 * op's previous address, or the escape and 6 bytes, stored as one 8-byte
 * word), the masks, the head's first byte stored last, the cursor
 * advanced.
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
#define BB_MAXREC(recorded) (3u + ((recorded) + 7u) / 8u + 8u * (recorded) + 8u)

/* One segment's record being written. */
struct bb_seg {
    uint8_t *p, *masks, *q;
    uint64_t mask;
    uint32_t nmask, k, id;
    uint8_t b0;
};

/* The segment of local id `local` (module base *base) with `recorded`
 * address fields starts: room, then the head (NEAR when the id is near
 * the chunk's previous one) but for its first byte, stored at the end. */
static inline void bb_begin(struct bb_seg *s, const uint32_t *base, uint32_t local, uint32_t recorded)
{
    struct strobe_bb_cursor *c = &strobe_bb_cursor;
    uint32_t maxrec = BB_MAXREC(recorded);
    uint8_t *p = c->pos;
    if ((uintptr_t)p + maxrec > (uintptr_t)c->limit)
        p = strobe_bb_refill ? strobe_bb_refill(maxrec) : c->scratch;
    uint32_t v = *base + (local << 1);
    s->id = v >> 1;
    int32_t delta = (int32_t)(s->id - strobe_bb_cursor.last_id); /* after a refill: a new chunk has 0 */
    int near = delta >= -32 && delta < 32;
    s->b0 = near ? (uint8_t)((uint32_t)delta << 2 | 2) : (uint8_t)v;
    uint16_t hi = near ? 0 : (uint16_t)(v >> 8); /* NEAR: zeros the masks overwrite */
    memcpy(p + 1, &hi, 2);
    s->p = p;
    s->masks = p + (near ? 1 : 3);
    s->nmask = (recorded + 7) / 8;
    s->q = s->masks + s->nmask;
    s->mask = 0;
    s->k = 0;
}

/* One recorded address (st: the op's previous address and stride): a
 * mask bit when it repeats the stride, else a 2-byte delta or the escape
 * and 6 bytes, stored as one 8-byte word (zeros when elided). */
static inline void bb_addr(struct bb_seg *s, uint64_t st[2], const void *addr)
{
    uint64_t a = (uint64_t)(uintptr_t)addr;
    uint64_t d = a - st[0];
    int hit = d == st[1];
    st[0] = a;
    st[1] = d;
    int small = (int64_t)d >= -32767 && (int64_t)d <= 32767;
    uint64_t v = hit ? 0 : small ? (uint64_t)(uint16_t)d : (a << 16 | 0x8000u);
    memcpy(s->q, &v, 8);
    s->q += hit ? 0 : small ? 2 : 8;
    s->mask |= (uint64_t)hit << s->k++;
}

/* The masks, the head's first byte last (a killed process leaves a zero
 * byte), then the cursor. */
static inline void bb_end(struct bb_seg *s)
{
    memcpy(s->masks, &s->mask, s->nmask); /* little-endian */
    atomic_signal_fence(memory_order_seq_cst);
    s->p[0] = s->b0;
    strobe_bb_cursor.pos = s->q;
    strobe_bb_cursor.last_id = s->id;
}

#endif
