/* SPDX-License-Identifier: MIT */
/*
 * What the ABI module offers the rest of libstrobe-tm.
 */
#ifndef STROBE_TM_ABI_H
#define STROBE_TM_ABI_H

#include "tm/tx.h"

/* The transactional clone of fn from the registered clone tables, or NULL.
 * Thread-safe. */
TM_HIDDEN void *strobe__tm_clone_of(const void *fn);

#endif /* STROBE_TM_ABI_H */
