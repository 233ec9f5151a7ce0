/* SPDX-License-Identifier: MIT */
/*
 * Epoch-based reclamation (Fraser) for arena objects: an object unlinked
 * while other threads may still hold a reference is retired and freed two
 * epoch advances later, when every thread that could have seen it has left
 * its critical section. A transaction is one critical section.
 */
#ifndef STROBE_PETRA_EBR_H
#define STROBE_PETRA_EBR_H

#include "petra/context.h"

void strobe__ebr_enter(struct strobe_petra_thread *t);
void strobe__ebr_exit(struct strobe_petra_thread *t);
/* Free obj (size class cls) once no critical section can reference it. */
void strobe__ebr_retire(struct strobe_petra_thread *t, pref obj, unsigned cls);
/* Wait until every critical section running now has ended (call outside
 * one). Used by checkpoints. */
void strobe__ebr_synchronize(struct strobe_petra *h);
/* Free everything t retired; only when no thread is in a critical section. */
void strobe__ebr_drain(struct strobe_petra_thread *t);
void strobe__ebr_free_lists(struct strobe_petra_thread *t);

#endif
