/* SPDX-License-Identifier: MIT */
/*
 * Checkpoints and recovery: the bounded-space extension of PETRA (the
 * seed's section 5.4 future work) and its recovery procedure (section
 * 5.1.5, Figure 5.4). A checkpoint writes a snapshot of every structure's
 * durable state; descriptors with a TXID below the snapshot's S are then
 * retired, so the logs, the file and recovery time stay bounded.
 */
#ifndef STROBE_PETRA_CHECKPOINT_H
#define STROBE_PETRA_CHECKPOINT_H

#include "petra/context.h"

/* Take a checkpoint now (serialised with other checkpoints); t is the
 * calling thread's handle (outside any EBR critical section). */
int strobe__ckpt_run(struct strobe_petra *h, struct strobe_petra_thread *t);
/* Note the final states st[k] of the keys of operations idx[k] of committed
 * transaction d (persisted, so its TXID is set); its owner calls this inside
 * its critical section. The next checkpoint writes them to its delta. */
struct petra_kstate;
void strobe__ckpt_note(struct strobe_petra_thread *t, const struct petra_desc *d, const unsigned *idx,
                       const struct petra_kstate *st, unsigned n);
/* Ask the background checkpointer for a checkpoint (no wait). */
void strobe__ckpt_request(struct strobe_petra *h);
/* Request one and wait until retired_below moves past `seen`; 0, or the
 * error of a checkpoint that failed (-ENOSPC: no room for the snapshot). */
int strobe__ckpt_wait(struct strobe_petra *h, uint64_t seen);
int strobe__ckpt_start(struct strobe_petra *h);
void strobe__ckpt_stop(struct strobe_petra *h);

/* Allocate and initialise the head node(s) of structure ps in the arena. */
int strobe__ckpt_build_heads(struct strobe_petra_thread *t, struct petra_struct *ps);

/* Recovery: rebuild all structures from the current checkpoint and the
 * persisted descriptors after it, then checkpoint so the logs start empty.
 * The file is not modified if it is found corrupt. */
int strobe__recover(struct strobe_petra *h, char *why, size_t why_len);
/* For strobe_petra_verify on a quiescent heap: every descriptor after the
 * checkpoint is intact and has its predecessor. 0 or STROBE_ERR_FORMAT. */
int strobe__ckpt_check_logs(struct strobe_petra *h, char *why, size_t why_len);

#endif
