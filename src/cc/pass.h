/* SPDX-License-Identifier: MIT */
/*
 * strobe's basic-block and memory tracing pass (pass.c): rewrites one LLVM
 * module so that it records its executed segments and, at level MEM, the
 * addresses of its loads and stores, as common/bbtrace.h and the "Block
 * streams" section of common/format.h specify. Called by the plugin
 * (plugin.cpp) at the end of clang's optimization pipeline.
 */
#ifndef STROBE_CC_PASS_H
#define STROBE_CC_PASS_H

#include <llvm-c/Core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The level STROBE_CC_TRACE names: STROBE_BB_LEVEL_BB for "bb",
 * STROBE_BB_LEVEL_MEM for "bb,mem", 0 (do nothing) for NULL or anything
 * else. */
unsigned strobe__cc_level(const char *trace);

/* Instruments module m at level (STROBE_BB_LEVEL_*). Returns 1 when it
 * changed the module, 0 when it left it alone (no function bodies, or the
 * module is instrumented already). */
int strobe__cc_instrument(LLVMModuleRef m, unsigned level);

#ifdef __cplusplus
}
#endif

#endif
