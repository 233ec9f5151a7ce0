/* SPDX-License-Identifier: MIT */
/*
 * The sharing analysis' shadow memory (shadow.h). The top table has one
 * pointer per MiB of the 47-bit user address space (1 GiB of address
 * space, mapped MAP_NORESERVE: only the pages of regions in use are ever
 * touched). Regions are calloc'ed: glibc maps blocks this large from the
 * kernel's zero pages, so the words of a region the program never wrote
 * cost nothing either.
 */
#define _GNU_SOURCE
#include "analysis/shadow.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "analysis/keymap.h"

#define TOP_ENTRIES (1ull << (STROBE__SHADOW_ADDRESS_BITS - STROBE__SHADOW_REGION_BITS))

/* The slow path of strobe__shadow_region: the top table or the region
 * still to create, or an address out of range. */
struct strobe__shadow_region *strobe__shadow_region_slow(struct strobe__shadow *s, uint64_t a, int create,
                                                           int *err)
{
    if (a >> STROBE__SHADOW_ADDRESS_BITS)
        return NULL;
    if (!s->top) {
        if (!create)
            return NULL;
        void *p = mmap(NULL, TOP_ENTRIES * sizeof *s->top, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            *err = -ENOMEM;
            return NULL;
        }
        s->top = p;
    }
    struct strobe__shadow_region **slot = &s->top[a >> STROBE__SHADOW_REGION_BITS];
    if (!*slot && create) {
        if (strobe__grow((void **)&s->used, &s->usedcap, s->nused + 1, sizeof *s->used) ||
            !(*slot = calloc(1, sizeof **slot))) {
            *err = -ENOMEM;
            return NULL;
        }
        s->used[s->nused++] = (uint32_t)(a >> STROBE__SHADOW_REGION_BITS);
    }
    return *slot;
}

void strobe__shadow_free(struct strobe__shadow *s)
{
    if (!s->top)
        return;
    for (size_t i = 0; i < s->nused; i++)
        free(s->top[s->used[i]]);
    free(s->used);
    munmap(s->top, TOP_ENTRIES * sizeof *s->top);
    *s = (struct strobe__shadow){0};
}
