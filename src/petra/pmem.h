/* SPDX-License-Identifier: MIT */
/*
 * Persistence primitives: write a cache line back (clwb, else clflushopt,
 * else clflush, chosen at run time from cpuid) and order write-backs with
 * sfence. In the power-failure simulation the heap is mapped private and
 * these primitives are the only path to the file: a flush captures the
 * line as it is now, the next fence by the same thread writes the captured
 * lines to the file. Anything not flushed and fenced is lost at a crash,
 * as on persistent memory without eADR.
 */
#ifndef STROBE_PETRA_PMEM_H
#define STROBE_PETRA_PMEM_H

#include <stddef.h>

#include "petra/context.h"

enum { PETRA_FLUSH_CLFLUSH = 0, PETRA_FLUSH_CLFLUSHOPT = 1, PETRA_FLUSH_CLWB = 2 };

/* The best flush instruction of this CPU. */
int strobe__pmem_detect(void);
const char *strobe__pmem_name(int kind);

/* Write back the line holding p; returns 1 (one flush issued). */
unsigned strobe__pmem_flush(struct strobe_petra *h, struct strobe_petra_thread *t, const void *p);
/* Write back every line of [p, p+len); returns the number of flushes. */
unsigned strobe__pmem_flush_range(struct strobe_petra *h, struct strobe_petra_thread *t,
                                  const void *p, size_t len);
/* Order the flushes issued so far by this thread before any later store.
 * Simulation: write the captured lines to the file (0 or -errno). */
int strobe__pmem_fence(struct strobe_petra *h, struct strobe_petra_thread *t);
void strobe__pmem_pending_free(struct strobe_petra_thread *t);

#endif
