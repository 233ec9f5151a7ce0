/* SPDX-License-Identifier: MIT */
/*
 * Unwinding another process's user stacks from copies (`strobe record
 * --pid`): a perf sample carries the thread's user registers and the top
 * of its stack (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER); elfutils
 * libdwfl walks them with the DWARF CFI (.eh_frame, .debug_frame) of the
 * process's modules, read from their files as /proc/PID/maps names them,
 * and falls back to frame pointers where a module has no CFI. So code
 * built without frame pointers (gcc -O2) unwinds too, which the kernel's
 * own call chains (frame pointers only) cannot do. x86-64 only.
 */
#ifndef STROBE_CLI_UNWIND_H
#define STROBE_CLI_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The user registers a sample must carry (perf_event_attr.sample_regs_user,
 * bits of enum perf_event_x86_regs), and their count: AX BX CX DX SI DI BP
 * SP IP, then R8..R15, in this order in the sample. */
#define STROBE__UNWIND_REGS_MASK 0xff01ffull
#define STROBE__UNWIND_NREGS 17u
/* Where the stack pointer and the instruction pointer are among them. */
#define STROBE__UNWIND_SP 7u
#define STROBE__UNWIND_IP 8u

/* A file-backed module of the process, as a MODULE definition describes
 * it (docs/formats/trace.md): its file, load bias and address range. */
struct strobe__attach_module {
    char *path;
    uint64_t bias, lo, hi;
};

struct strobe__unwinder;

/* An unwinder for process PID with the modules its maps list now, read
 * through TID, a running thread of it (/proc/PID/task/TID/maps: the
 * process's own is empty once its main thread ended). Returns 0, or
 * -errno (-ESRCH: no such thread, -EACCES: its maps may not be read) or
 * -ENOMEM. */
int strobe__unwinder_open(pid_t pid, pid_t tid, struct strobe__unwinder **out);

/* Reads the maps again, through TID, when they changed (modules loaded or
 * unloaded since). Returns 0 or -errno; the previous modules stay on
 * failure. */
int strobe__unwinder_refresh(struct strobe__unwinder *u, pid_t tid);

/* The stack of thread TID from one sample: regs (STROBE__UNWIND_NREGS
 * values in the sample's order) and stack[0..len), the copy of its memory
 * from the stack pointer up. ips[0] is the interrupted instruction, then
 * return addresses, innermost first; at most max, each a user-space
 * address (above 0, below 2^57: what a SAMPLE record may hold). Returns
 * the number of frames (0 when not even the first is known); *truncated is
 * set when the walk ended early: max frames, an address that cannot be
 * one, or the copy ended before the stack did. */
unsigned strobe__unwind(struct strobe__unwinder *u, pid_t tid, const uint64_t *regs, const uint8_t *stack,
                        size_t len, uint64_t *ips, unsigned max, bool *truncated);

/* Every module seen since the unwinder was opened (those unloaded since
 * included), in the order first seen. */
const struct strobe__attach_module *strobe__unwinder_modules(const struct strobe__unwinder *u, size_t *n);

void strobe__unwinder_close(struct strobe__unwinder *u);

#endif
