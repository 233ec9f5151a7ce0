/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing hash map from byte strings to uint32_t, used by the
 * analysis to unify definitions across processes (key = name/file/line)
 * and to find call-tree children (key = parent node + region). Keys are
 * copied; not thread-safe. Also the analysis's growable arrays.
 */
#ifndef STROBE_ANALYSIS_KEYMAP_H
#define STROBE_ANALYSIS_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

struct strobe__keymap {
    struct strobe__keymap_slot *slots;
    size_t cap, count;
};

/* Looks KEY up; when absent, inserts it with value *val. Either way *val
 * holds the mapped value afterwards. Returns 1 when found, 0 when
 * inserted, -ENOMEM. */
int strobe__keymap_get_or_put(struct strobe__keymap *m, const void *key, size_t len, uint32_t *val);
/* Looks KEY up without inserting: 1 (*val set) when found, else 0. */
int strobe__keymap_get(const struct strobe__keymap *m, const void *key, size_t len, uint32_t *val);
void strobe__keymap_free(struct strobe__keymap *m);

/* Makes *p (an array of *cap elements of `size` bytes) hold at least
 * `need`, doubling; 0 or -ENOMEM (*p unchanged). */
int strobe__grow(void **p, size_t *cap, size_t need, size_t size);

#endif
