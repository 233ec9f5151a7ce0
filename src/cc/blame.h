/* SPDX-License-Identifier: MIT */
/*
 * strobe's blame analysis (blame.cpp): for every statement of a module,
 * the program variables whose value it contributes to (docs/blame.md),
 * written into the module as the `.strobe_blame` section that
 * docs/formats/blame-table.md specifies. Run by the plugin (plugin.cpp)
 * at the start of clang's pipeline, on the IR as clang emitted it.
 */
#ifndef STROBE_CC_BLAME_H
#define STROBE_CC_BLAME_H

#include <llvm-c/Core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable that switches the analysis on: "1" writes the
 * section; "1:PATH" also appends the unit to PATH, and "lines:PATH"
 * appends a readable listing instead (strobe blame-prep). */
#define STROBE_CC_BLAME_VAR "STROBE_CC_BLAME"

/* Analyses module m and appends its unit to it as module assembly; with
 * a path (see above), writes it there too. Returns 0, or -errno when the
 * path could not be written. */
int strobe__cc_blame(LLVMModuleRef m, const char *setting);

#ifdef __cplusplus
}
#endif

#endif
