/* SPDX-License-Identifier: MIT */
/*
 * Lock-free skiplist links (see skiplist.h).
 *
 * Invariants:
 *  - every level is sorted by key; a node appears at most once per level;
 *  - a node is retired only by the thread that marked its level-0 link,
 *    after a snip_equal search has unlinked it at every level;
 *  - whoever makes a node reachable at a level (an inserter linking n, or
 *    linking n in front of succ) re-checks afterwards that the node it
 *    exposed is not marked, and snips it if it is. Without this, a remover
 *    whose search ran between the inserter's read and its CAS could retire
 *    a node that the CAS then made reachable again.
 * All CASes are seq_cst: the re-check argument needs a single order of
 * "mark" and "link" operations.
 */
#include "petra/skiplist.h"

pref strobe__sl_find(struct strobe_petra *h, pref head, unsigned height, uint64_t key, pref *preds,
                     pref *succs, bool snip_equal)
{
retry:;
    pref pred = head;
    for (int lvl = (int)height - 1; lvl >= 0; lvl--) {
        pref curr = petra_unmark(atomic_load(petra_next(h, pred, (unsigned)lvl)));
        while (curr) {
            pref succ = atomic_load(petra_next(h, curr, (unsigned)lvl));
            while (petra_marked(succ)) {
                pref exp = curr;
                if (!atomic_compare_exchange_strong(petra_next(h, pred, (unsigned)lvl), &exp,
                                                    petra_unmark(succ)))
                    goto retry;
                curr = petra_unmark(succ);
                if (!curr)
                    break;
                succ = atomic_load(petra_next(h, curr, (unsigned)lvl));
            }
            if (!curr)
                break;
            if (petra_node(h, curr)->key >= key)
                break;
            pred = curr;
            curr = petra_unmark(succ);
        }
        if (snip_equal) {
            pref p2 = pred, c = curr;
            while (c && petra_node(h, c)->key == key) {
                pref s = atomic_load(petra_next(h, c, (unsigned)lvl));
                if (petra_marked(s)) {
                    pref exp = c;
                    if (!atomic_compare_exchange_strong(petra_next(h, p2, (unsigned)lvl), &exp,
                                                        petra_unmark(s)))
                        goto retry;
                } else {
                    p2 = c;
                }
                c = petra_unmark(s);
            }
        }
        preds[lvl] = pred;
        succs[lvl] = curr;
    }
    pref c = succs[0];
    return c && petra_node(h, c)->key == key ? c : 0;
}

/* After making `exposed` reachable at lvl: snip it if it was marked. */
static void recheck(struct strobe_petra *h, pref head, unsigned height, pref exposed, unsigned lvl)
{
    if (exposed && petra_marked(atomic_load(petra_next(h, exposed, lvl)))) {
        pref preds[PETRA_MAX_LEVEL], succs[PETRA_MAX_LEVEL];
        strobe__sl_find(h, head, height, petra_node(h, exposed)->key, preds, succs, true);
    }
}

pref strobe__sl_link(struct strobe_petra *h, pref head, unsigned height, pref n, pref *preds,
                     pref *succs)
{
    struct petra_node *N = petra_node(h, n);
    for (int first = 1;; first = 0) {
        if (!first) {
            pref f = strobe__sl_find(h, head, height, N->key, preds, succs, false);
            if (f)
                return f;
        }
        for (unsigned l = 0; l < N->height; l++)
            atomic_store_explicit(&N->next[l], succs[l], memory_order_relaxed);
        pref exp = succs[0];
        if (atomic_compare_exchange_strong(petra_next(h, preds[0], 0), &exp, n))
            break;
    }
    recheck(h, head, height, succs[0], 0);
    for (unsigned l = 1; l < N->height; l++) {
        for (;;) {
            pref nx = atomic_load(&N->next[l]);
            if (petra_marked(nx))
                return 0; /* being removed: stop building the tower */
            if (nx != succs[l] && !atomic_compare_exchange_strong(&N->next[l], &nx, succs[l]))
                return 0; /* marked meanwhile */
            pref exp = succs[l];
            if (atomic_compare_exchange_strong(petra_next(h, preds[l], l), &exp, n)) {
                recheck(h, head, height, n, l);
                recheck(h, head, height, succs[l], l);
                break;
            }
            if (strobe__sl_find(h, head, height, N->key, preds, succs, false) != n)
                return 0; /* n itself was removed */
        }
    }
    return 0;
}

bool strobe__sl_remove(struct strobe_petra *h, pref head, unsigned height, pref n)
{
    struct petra_node *N = petra_node(h, n);
    for (int l = (int)N->height - 1; l >= 1; l--) {
        pref nx = atomic_load(&N->next[l]);
        while (!petra_marked(nx) &&
               !atomic_compare_exchange_strong(&N->next[l], &nx, nx | PETRA_MARK))
            ;
    }
    pref nx = atomic_load(&N->next[0]);
    for (;;) {
        if (petra_marked(nx))
            return false;
        if (atomic_compare_exchange_strong(&N->next[0], &nx, nx | PETRA_MARK))
            break;
    }
    pref preds[PETRA_MAX_LEVEL], succs[PETRA_MAX_LEVEL];
    strobe__sl_find(h, head, height, N->key, preds, succs, true);
    return true;
}
