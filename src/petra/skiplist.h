/* SPDX-License-Identifier: MIT */
/*
 * The physical linked structure under every PETRA structure: a lock-free
 * skiplist after Herlihy and Shavit (Harris-style marked next pointers at
 * each level). A linked list is the height-1 case and a hash-map bucket is
 * a linked list, so the three structures share this one implementation.
 * Logical state (who holds a key) is LFTT's business (tx.c); this module
 * only links, finds and unlinks nodes. Callers are inside an EBR critical
 * section.
 */
#ifndef STROBE_PETRA_SKIPLIST_H
#define STROBE_PETRA_SKIPLIST_H

#include "petra/context.h"

/* Find the node holding key whose level-0 link is not marked; 0 if none.
 * preds/succs (height entries) receive, per level, the last node with a
 * smaller key and its successor. With snip_equal, every marked node with
 * this key is unlinked on the way at every level, wherever it sits among
 * equal keys. */
pref strobe__sl_find(struct strobe_petra *h, pref head, unsigned height, uint64_t key, pref *preds,
                     pref *succs, bool snip_equal);
/* Link private node n (key, height and info set), starting from preds and
 * succs of a strobe__sl_find that did not find its key (they are updated).
 * Returns 0 once linked, or the node already holding the key (n
 * untouched, still private). */
pref strobe__sl_link(struct strobe_petra *h, pref head, unsigned height, pref n, pref *preds,
                     pref *succs);
/* Unlink n at every level (its info must be marked). True for the one
 * caller that marked its level-0 link: that caller retires n. */
bool strobe__sl_remove(struct strobe_petra *h, pref head, unsigned height, pref n);

static inline _Atomic pref *petra_next(const struct strobe_petra *h, pref n, unsigned lvl)
{
    return &petra_node(h, n)->next[lvl];
}

#endif
