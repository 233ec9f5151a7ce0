/* SPDX-License-Identifier: MIT */
/*
 * IBM XL's transactional and speculative directives for `strobe instrument`
 * (docs/instrument.md), onto GCC's transactional memory (-fgnu-tm), which
 * strobe's TM runtime implements with its statistics per atomic block:
 *   #pragma tm_atomic            a transaction that may serialize on an
 *                                irrevocable action (__transaction_relaxed)
 *   #pragma tm_atomic safe_mode  one the compiler checks has none
 *                                (__transaction_atomic)
 *   #pragma speculative for      the loop's iterations as speculative
 *                                chunks committed in order (strobe_spec_for)
 *   #pragma speculative sections / section   the same for sections
 *                                (strobe_spec_sections)
 */
#ifndef STROBE_INSTRUMENT_SPEC_H
#define STROBE_INSTRUMENT_SPEC_H

#include <stdbool.h>

#include "instrument/source.h"

/* Plans the edits of the file's tm_atomic and speculative directives; tm:
 * the file is compiled with -fgnu-tm (without it they are refused: they
 * have no meaning without transactional memory). Returns 0 or s->rc. */
int strobe__inst_plan_spec(struct strobe__inst_src *s, bool tm);

#endif
