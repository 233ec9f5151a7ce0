/* SPDX-License-Identifier: MIT */
/*
 * `make bench` (bench/bb_refill.sh): what the runtime side of block tracing
 * (src/core/bb.c) adds to the inline records of `strobe cc --trace=bb,mem`
 * code: chunk switches of the thread's block stream (strobe_bb_refill:
 * mapping and prefaulting the next chunk, every module's reset) and the
 * stores into the stream's shared file pages, measured against the same
 * segments written into a private 1 MiB buffer (warm in the cache) that
 * starts over when full, in the same process. Each segment is what the
 * pass emits for a block with two recorded 8-byte accesses (a 2-byte
 * delta each): 7 bytes.
 *
 * Rounds alternate batches of SEGMENTS segments to the private buffer (the
 * anchor) and to the thread's cursor; it prints the medians over the rounds
 * of the ns per segment of each and of their ratio, and the refills of the
 * cursor with the mean time of one (timed around each call):
 *   anchor_ns <a> cursor_ns <c> ratio <c/a> refills <n> refill_us <t>
 * Without the runtime the cursor's segments go to its scratch area.
 * Usage: strobe-bench-bb-refill [SEGMENTS [ROUNDS]] (default 4000000, 11).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bbtrace.h"

__attribute__((weak, tls_model("initial-exec"))) __thread struct strobe_bb_cursor strobe_bb_cursor;
extern uint8_t *strobe_bb_refill(uint32_t need) __attribute__((weak));
extern void strobe_bb_register(const struct strobe_bb_module *m) __attribute__((weak));

static uint32_t base;
static __thread int64_t prev[2];
static void reset(void)
{
    memset(prev, 0, sizeof prev);
}
static const struct strobe_bb_block blocks[] = {{0, 2, 2, 0, 1, 1}};
static const struct strobe_bb_op ops[] = {{8, 1, 1, STROBE_BB_LOAD, 0, STROBE_BB_RECORDED, 0},
                                          {8, 1, 1, STROBE_BB_STORE, 0, STROBE_BB_RECORDED, 0}};
static const char *const names[] = {"loop", "bb_refill.c"};
static const struct strobe_bb_module module = {
    STROBE_BB_ABI, STROBE_BB_LEVEL_MEM, 1, 2, 2, 0, "bb_refill.c", blocks, ops, names, &base, reset};

#define MAXREC (3u + 2 * 8u + 8u)

static inline uint8_t *field(uint8_t *q, int64_t *pv, uint64_t a)
{
    int64_t d = (int64_t)(a - (uint64_t)*pv);
    *pv = (int64_t)a;
    int small = d >= -32767 && d <= 32767;
    uint64_t v = small ? (uint64_t)(uint16_t)(int16_t)d : (a << 16 | 0x8000u);
    memcpy(q, &v, 8);
    return q + (small ? 2 : 8);
}

/* n segments through cursor c (refill: what to call when it is full). */
static inline void segments(struct strobe_bb_cursor *c, uint8_t *(*refill)(uint32_t), const int64_t *data,
                            int64_t *out, long n)
{
    for (long i = 0; i < n; i++) {
        uint8_t *p = c->pos;
        if (__builtin_expect((uintptr_t)p + MAXREC > (uintptr_t)c->limit, 0))
            p = refill ? refill(MAXREC) : c->scratch;
        uint8_t *q = field(p + 3, &prev[0], (uint64_t)(uintptr_t)&data[i & 1023]);
        q = field(q, &prev[1], (uint64_t)(uintptr_t)&out[i & 1023]);
        out[i & 1023] = data[i & 1023] + 1;
        atomic_signal_fence(memory_order_seq_cst);
        uint32_t v = base + 2;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)(v >> 16);
        p[0] = (uint8_t)v;
        c->pos = q;
    }
}

static struct strobe_bb_cursor anchor;
static uint8_t *anchor_buf;
static size_t anchor_len;

/* The anchor never runs out: it starts over at the buffer's start. */
static uint8_t *anchor_refill(uint32_t need)
{
    (void)need;
    anchor.pos = anchor_buf;
    anchor.limit = anchor_buf + anchor_len;
    return anchor.pos;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long refills;
static double refill_ns;

static uint8_t *timed_refill(uint32_t need)
{
    double t0 = now_ns();
    uint8_t *p = strobe_bb_refill(need);
    refill_ns += now_ns() - t0;
    refills++;
    return p;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 4000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 11;
    if (n < 1 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "usage: strobe-bench-bb-refill [SEGMENTS [ROUNDS]]\n");
        return 2;
    }
    if (strobe_bb_register)
        strobe_bb_register(&module);
    anchor_len = 1u << 20;
    anchor_buf = calloc(1, anchor_len);
    int64_t *data = calloc(1024, sizeof *data), *out = calloc(1024, sizeof *out);
    double *a = malloc(sizeof *a * (size_t)rounds), *c = malloc(sizeof *c * (size_t)rounds);
    double *d = malloc(sizeof *d * (size_t)rounds);
    if (!anchor_buf || !data || !out || !a || !c || !d)
        return 1;
    anchor_refill(0);
    for (int r = 0; r < rounds; r++) {
        double t0 = now_ns();
        segments(&anchor, anchor_refill, data, out, n);
        double t1 = now_ns();
        segments(&strobe_bb_cursor, strobe_bb_refill ? timed_refill : NULL, data, out, n);
        double t2 = now_ns();
        a[r] = (t1 - t0) / (double)n;
        c[r] = (t2 - t1) / (double)n;
        d[r] = c[r] / a[r];
    }
    qsort(a, (size_t)rounds, sizeof *a, cmp);
    qsort(c, (size_t)rounds, sizeof *c, cmp);
    qsort(d, (size_t)rounds, sizeof *d, cmp);
    printf("anchor_ns %.3f cursor_ns %.3f ratio %.2f refills %ld refill_us %.2f\n", a[rounds / 2],
           c[rounds / 2], d[rounds / 2], refills, refills ? refill_ns / (double)refills / 1000.0 : 0.0);
    return 0;
}
