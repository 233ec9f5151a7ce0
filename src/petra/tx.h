/* SPDX-License-Identifier: MIT */
/*
 * PETRA transactions on top of LFTT (seed 002, section 5.1; LFTT section
 * 2.4.2.1.1): descriptors, node infos, logical status, helping, and the
 * persistence of descriptors.
 */
#ifndef STROBE_PETRA_TX_H
#define STROBE_PETRA_TX_H

#include "petra/context.h"

struct petra_kstate {
    int present;
    uint64_t value;
};

/* Logical state of a node whose (unmarked) info is `info`, as seen by the
 * transaction `viewer` (NULL: by a reader outside any transaction).
 * Algorithm 5.2 generalised to values. */
struct petra_kstate strobe__tx_node_state(struct strobe_petra *h, pref info,
                                          const struct petra_desc *viewer);
/* The head node of the list holding key in structure ps. */
pref strobe__tx_head(const struct strobe_petra *h, const struct petra_struct *ps, uint64_t key);
unsigned strobe__tx_node_class(unsigned height);
/* Tower height of a new node: 1 for lists and maps, geometric (p = 1/2,
 * at most PETRA_MAX_LEVEL) for skiplists; t's own generator. */
unsigned strobe__tx_random_height(struct strobe_petra_thread *t, const struct petra_struct *ps);
void strobe__tx_retire_node(struct strobe_petra_thread *t, pref n, pref info);
/* Mark node n (whose info is `info`) deleted and unlink it; retires it if
 * this caller completed the removal. False if the info changed. */
bool strobe__tx_delete_node(struct strobe_petra_thread *t, const struct petra_struct *ps, pref head,
                            pref n, pref info);
/* Descriptor checksum over everything recovery relies on. */
uint64_t strobe__tx_desc_check(const struct petra_desc *d);

/* Call fn for each node of structure ps that is linked at level 0 and not
 * being deleted, in list order (maps: bucket by bucket), with its info and
 * its state as a reader outside any transaction sees it. The caller is in
 * an EBR critical section. Stops early and returns fn's value if it
 * returns non-zero. */
int strobe__tx_visit(struct strobe_petra *h, const struct petra_struct *ps,
                     int (*fn)(void *arg, struct petra_node *n, pref info, struct petra_kstate st),
                     void *arg);

int strobe__tx_execute(struct strobe_petra_thread *t, struct strobe_petra_op *ops, unsigned n);
int strobe__tx_get(struct strobe_petra_thread *t, int structure, uint64_t key, uint64_t *value);
int strobe__tx_foreach(struct strobe_petra_thread *t, int structure,
                       int (*fn)(void *arg, uint64_t key, uint64_t value), void *arg);

#endif
