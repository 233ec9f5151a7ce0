/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the runtime of common/bbtrace.h, linked into the
 * fixtures of test_bbpass.c: it keeps one thread's block stream in memory
 * and, at exit, decodes it against the registered modules' tables
 * (format.h, "Block streams") into the file named by BBRT_OUT:
 *   block FUNCTION LINE LOCAL_ID COUNT      per executed segment
 *   mem FUNCTION L|S SIZE ADDRESS LINE R|E|C  per access (BBRT_MEM set)
 *   bytes FUNCTION EVENTS BYTES             memory events and their
 *                                           address bytes (stride masks
 *                                           included), per function
 *   heads NEAR BLOCK                        1-byte and 3-byte heads
 *   repeats N                               REPEAT records (their 2
 *                                           bytes in BYTES, their runs in
 *                                           COUNT and EVENTS)
 * With BBRT_WRAP set (bench/bbpass.sh), a full buffer starts over
 * instead (the modules' reset called, as at a new chunk) and nothing is
 * decoded: the cost of recording without that of keeping.
 * Not instrumented itself (plain clang).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bbtrace.h"
#include "common/format.h"

#define BUF_SIZE (64u << 20)
#define MAX_MODULES 16

__thread struct strobe_bb_cursor strobe_bb_cursor __attribute__((weak, tls_model("initial-exec")));

static uint8_t *buf;
static const struct strobe_bb_module *mods[MAX_MODULES];
static uint32_t firsts[MAX_MODULES], nmods, next_id = 1;

uint8_t *strobe_bb_refill(uint32_t need)
{
    if (need > STROBE_BB_MAX_RECORD) {
        fprintf(stderr, "bbrt: refill(%u) above STROBE_BB_MAX_RECORD\n", need);
        abort();
    }
    if (buf && !getenv("BBRT_WRAP")) { /* one chunk only: the fixtures are small */
        fprintf(stderr, "bbrt: buffer full\n");
        abort();
    }
    if (!buf)
        buf = calloc(1, BUF_SIZE);
    for (uint32_t i = 0; i < nmods; i++)
        if (mods[i]->reset)
            mods[i]->reset();
    strobe_bb_cursor.last_id = 0;
    strobe_bb_cursor.pos = buf;
    strobe_bb_cursor.limit = buf + BUF_SIZE;
    return buf;
}

void strobe_bb_register(const struct strobe_bb_module *m)
{
    if (m->abi != STROBE_BB_ABI || nmods == MAX_MODULES)
        abort();
    firsts[nmods] = next_id;
    *m->base = ((next_id - 1) << 1) | 1;
    next_id += m->nblocks;
    mods[nmods++] = m;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

__attribute__((destructor)) static void decode(void)
{
    const char *path = getenv("BBRT_OUT");
    if (!path || !buf || getenv("BBRT_WRAP"))
        return;
    FILE *out = fopen(path, "w");
    if (!out)
        return;
    bool mem = getenv("BBRT_MEM") != NULL;
    uint64_t *counts[MAX_MODULES], *prev[MAX_MODULES], *stride[MAX_MODULES], *events[MAX_MODULES],
        *bytes[MAX_MODULES], heads[3] = {0, 0, 0};
    static const uint8_t all_hit[STROBE_BB_MAX_SEG_OPS / 8] = {0xff, 0xff, 0xff, 0xff,
                                                               0xff, 0xff, 0xff, 0xff};
    for (uint32_t i = 0; i < nmods; i++) {
        counts[i] = calloc(mods[i]->nblocks + 1, 8);
        prev[i] = calloc(mods[i]->nops + 1, 8);
        stride[i] = calloc(mods[i]->nops + 1, 8);
        events[i] = calloc(mods[i]->nnames + 1, 8);
        bytes[i] = calloc(mods[i]->nnames + 1, 8);
    }
    const uint8_t *p = buf, *end = strobe_bb_cursor.pos;
    uint32_t last = 0;
    while (p < end) {
        uint32_t id, k = 0, runs = 1;
        const uint8_t *mask = NULL; /* the record's masks, or all_hit for a REPEAT */
        if (p[0] == STROBE_BB_REPEAT) {
            id = last;
            runs = p[1];
            mask = all_hit;
            p += 2;
            heads[2]++;
        } else if (p[0] & 1) {
            id = (uint32_t)le(p, 3) >> 1;
            p += 3;
            heads[1]++;
        } else if ((p[0] & 3) == 2) {
            id = last + (uint32_t)((int8_t)p[0] >> 2);
            p++;
            heads[0]++;
        } else {
            fprintf(out, "bad record byte %#x at %td\n", p[0], p - buf);
            break;
        }
        last = id;
        while (k < nmods && !(id >= firsts[k] && id < firsts[k] + mods[k]->nblocks))
            k++;
        if (k == nmods) {
            fprintf(out, "unknown block id %u\n", id);
            break;
        }
        const struct strobe_bb_module *m = mods[k];
        const struct strobe_bb_block *b = &m->blocks[id - firsts[k]];
        counts[k][id - firsts[k]] += runs;
        if (m->level != STROBE_BB_LEVEL_MEM)
            continue;
        uint64_t addr[1024];
        if (!mask) {
            mask = p;
            p += (b->recorded + 7) / 8;
            bytes[k][b->function] += (b->recorded + 7) / 8;
        } else {
            bytes[k][b->function] += 2;
        }
        for (uint32_t run = 0; run < runs; run++)
            for (uint32_t i = 0, r = 0; i < b->nops; i++) {
                const struct strobe_bb_op *op = &m->ops[b->first_op + i];
                char how = 'R';
                if (op->base == STROBE_BB_RECORDED) {
                    uint64_t *pv = &prev[k][b->first_op + i], *ps = &stride[k][b->first_op + i];
                    uint64_t before = *pv;
                    if (mask[r / 8] >> (r % 8) & 1) {
                        *pv += *ps;
                    } else if (le(p, 2) == STROBE_BB_ESCAPE) {
                        *pv = le(p + 2, 6);
                        p += 8;
                        bytes[k][b->function] += 8;
                    } else {
                        *pv += (uint64_t)(int64_t)(int16_t)le(p, 2);
                        p += 2;
                        bytes[k][b->function] += 2;
                    }
                    *ps = *pv - before;
                    r++;
                    addr[i] = *pv;
                } else if (op->base == STROBE_BB_CONSTANT) {
                    addr[i] = (uint64_t)op->offset;
                    how = 'C';
                } else {
                    addr[i] = addr[op->base] + (uint64_t)op->offset;
                    how = 'E';
                }
                events[k][b->function]++;
                if (mem)
                    fprintf(out, "mem %s %c %u %#llx %u %c\n", m->names[b->function],
                            op->kind == STROBE_BB_LOAD ? 'L' : 'S', op->size, (unsigned long long)addr[i],
                            op->line, how);
            }
    }
    if (p != end)
        fprintf(out, "stream ends at %td, cursor at %td\n", p - buf, end - buf);
    if (end[0] != 0)
        fprintf(out, "no zero byte at the end\n");
    for (uint32_t k = 0; k < nmods; k++) {
        for (uint32_t i = 0; i < mods[k]->nblocks; i++)
            if (counts[k][i])
                fprintf(out, "block %s %u %u %llu\n", mods[k]->names[mods[k]->blocks[i].function],
                        mods[k]->blocks[i].line, i + 1, (unsigned long long)counts[k][i]);
        for (uint32_t f = 0; f < mods[k]->nnames; f++)
            if (events[k][f])
                fprintf(out, "bytes %s %llu %llu\n", mods[k]->names[f], (unsigned long long)events[k][f],
                        (unsigned long long)bytes[k][f]);
    }
    fprintf(out, "heads %llu %llu\nrepeats %llu\n", (unsigned long long)heads[0],
            (unsigned long long)heads[1], (unsigned long long)heads[2]);
    fclose(out);
}
