/* SPDX-License-Identifier: MIT */
/*
 * An index by name over an array the caller owns (the daemon's set
 * registry, a client's mirror): open addressing with linear probing, each
 * slot holding 1 + a position in the array. The index keeps no names; it
 * reads them through name_at(ctx, pos), so it stays valid when the caller
 * reallocates the array. Removal patches the probe chain (no tombstones,
 * no rebuild), so adding and removing n names costs O(n) in all.
 */
#ifndef STROBE_COMMON_NAME_INDEX_H
#define STROBE_COMMON_NAME_INDEX_H

#include <stddef.h>

typedef const char *(*strobe__name_at)(const void *ctx, size_t pos);

struct strobe__name_index {
    size_t *slot; /* 1 + position, 0 = empty */
    size_t cap;   /* a power of two, or 0 */
};

#define STROBE__NAME_NONE ((size_t)-1)

/* The position of name, or STROBE__NAME_NONE. */
size_t strobe__name_index_find(const struct strobe__name_index *x, const char *name, strobe__name_at name_at,
                               const void *ctx);
/* Indexes array position pos (its name readable through name_at); n is
 * the number of positions in use after this one, 0 .. n-1, all indexed
 * but pos. 0 or -ENOMEM (the index is then unchanged). */
int strobe__name_index_add(struct strobe__name_index *x, size_t pos, size_t n, strobe__name_at name_at,
                           const void *ctx);
/* Unindexes position pos; when pos != last, the entry of position last is
 * renumbered to pos: the caller then moves the element at last to pos
 * (both names must still be readable during the call). */
void strobe__name_index_remove(struct strobe__name_index *x, size_t pos, size_t last, strobe__name_at name_at,
                               const void *ctx);
void strobe__name_index_free(struct strobe__name_index *x);

#endif
