/* SPDX-License-Identifier: MIT */
/*
 * A sparse shadow of a traced process's address space for the task
 * graph's sharing analysis (taskgraph.c): per 4-byte word, the thread that
 * wrote it last and the threads that have read it since; per 64-byte line,
 * an index the caller keeps its own record under and the last task that
 * touched it. A lookup is two loads
 * (a flat top table over the 47-bit user address space, reserved but not
 * committed, then the region), not a hash probe, so the analysis keeps up
 * with block streams of a billion accesses; memory grows with the memory
 * the program touched (2.19 MiB per MiB touched), not with the trace.
 */
#ifndef STROBE_ANALYSIS_SHADOW_H
#define STROBE_ANALYSIS_SHADOW_H

#include <stddef.h>
#include <stdint.h>

#define STROBE__SHADOW_REGION_BITS 20 /* 1 MiB of the program's memory per region */
#define STROBE__SHADOW_READERS 48     /* threads whose reads a word remembers */

struct strobe__shadow_region {
    /* per 4-byte word: bits 0-15 writer slot + 1 (0: never written), bits
     * 16-63 the slots (< STROBE__SHADOW_READERS) that read it since */
    uint64_t word[1u << (STROBE__SHADOW_REGION_BITS - 2)];
    uint32_t line[1u << (STROBE__SHADOW_REGION_BITS - 6)]; /* the caller's, 0 = none */
    uint64_t task[1u << (STROBE__SHADOW_REGION_BITS - 6)]; /* the caller's, 0 = none */
};

struct strobe__shadow {
    struct strobe__shadow_region **top; /* NULL until the first write */
    uint32_t *used;                     /* top indices of the regions allocated */
    size_t nused, usedcap;
};

#define STROBE__SHADOW_ADDRESS_BITS 47

struct strobe__shadow_region *strobe__shadow_region_slow(struct strobe__shadow *s, uint64_t a, int create,
                                                           int *err);

/* The region of address a, created when `create` (NULL: none yet, an
 * address beyond the user address space, or out of memory when create:
 * *err is then -ENOMEM). Inline for the region that exists: the sharing
 * analysis looks one up per access. */
static inline struct strobe__shadow_region *strobe__shadow_region(struct strobe__shadow *s, uint64_t a, int create,
                                                                  int *err)
{
    struct strobe__shadow_region *r;
    if (s->top && !(a >> STROBE__SHADOW_ADDRESS_BITS) && (r = s->top[a >> STROBE__SHADOW_REGION_BITS]))
        return r;
    return strobe__shadow_region_slow(s, a, create, err);
}

void strobe__shadow_free(struct strobe__shadow *s);

#endif
