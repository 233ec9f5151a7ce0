/* SPDX-License-Identifier: MIT */
/*
 * Name index over a caller's array (name_index.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/name_index.h"

static size_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (size_t)(h ^ (h >> 29));
}

size_t strobe__name_index_find(const struct strobe__name_index *x, const char *name, strobe__name_at name_at,
                               const void *ctx)
{
    if (!x->cap)
        return STROBE__NAME_NONE;
    size_t mask = x->cap - 1;
    for (size_t h = name_hash(name) & mask; x->slot[h]; h = (h + 1) & mask)
        if (strcmp(name_at(ctx, x->slot[h] - 1), name) == 0)
            return x->slot[h] - 1;
    return STROBE__NAME_NONE;
}

static void put(size_t *slot, size_t mask, size_t pos, const char *name)
{
    size_t h = name_hash(name) & mask;
    while (slot[h])
        h = (h + 1) & mask;
    slot[h] = pos + 1;
}

int strobe__name_index_add(struct strobe__name_index *x, size_t pos, size_t n, strobe__name_at name_at,
                           const void *ctx)
{
    /* at most half full: probe chains stay short */
    if (2 * n > x->cap) {
        size_t cap = x->cap ? x->cap : 64;
        while (2 * n > cap)
            cap *= 2;
        size_t *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return -ENOMEM;
        for (size_t i = 0; i < x->cap; i++)
            if (x->slot[i])
                put(slot, cap - 1, x->slot[i] - 1, name_at(ctx, x->slot[i] - 1));
        free(x->slot);
        x->slot = slot;
        x->cap = cap;
    }
    put(x->slot, x->cap - 1, pos, name_at(ctx, pos));
    return 0;
}

/* The slot that holds position pos, which must be indexed. */
static size_t slot_of(const struct strobe__name_index *x, size_t pos, strobe__name_at name_at,
                      const void *ctx)
{
    size_t h = name_hash(name_at(ctx, pos)) & (x->cap - 1);
    while (x->slot[h] != pos + 1)
        h = (h + 1) & (x->cap - 1);
    return h;
}

void strobe__name_index_remove(struct strobe__name_index *x, size_t pos, size_t last, strobe__name_at name_at,
                               const void *ctx)
{
    size_t mask = x->cap - 1, h = slot_of(x, pos, name_at, ctx);
    /* empty slot h and shift later entries of its probe chain back, so
     * that every chain stays unbroken */
    for (size_t j = (h + 1) & mask; x->slot[j]; j = (j + 1) & mask) {
        size_t home = name_hash(name_at(ctx, x->slot[j] - 1)) & mask;
        if (((j - home) & mask) >= ((j - h) & mask)) {
            x->slot[h] = x->slot[j];
            h = j;
        }
    }
    x->slot[h] = 0;
    if (pos != last)
        x->slot[slot_of(x, last, name_at, ctx)] = pos + 1;
}

void strobe__name_index_free(struct strobe__name_index *x)
{
    free(x->slot);
    *x = (struct strobe__name_index){0};
}
