/* SPDX-License-Identifier: MIT */
/*
 * Small helpers of the runtime that must work where the C library may not
 * be called freely: in a signal handler that interrupted the program, in
 * the child of a multithreaded fork(), on the exit path. Everything here is
 * async-signal-safe (system calls and plain memory only, no malloc, no
 * stdio) unless its comment says otherwise.
 */
#ifndef STROBE_CORE_UTIL_H
#define STROBE_CORE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STROBE_LIKELY(x) __builtin_expect(!!(x), 1)
#define STROBE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define STROBE_NOINLINE __attribute__((noinline))
#define STROBE_COLD __attribute__((cold, noinline))
/* For the per-event path: GCC otherwise keeps a multiply-used inline
 * function out of line and the event pays a call. */
#define STROBE_HOT_INLINE static inline __attribute__((always_inline))

/* STROBE_TSAN: this runtime is built with ThreadSanitizer (GCC or clang),
 * which changes how it may interpose and handle signals. */
#if defined(__SANITIZE_THREAD__)
#define STROBE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STROBE_TSAN 1
#endif
#endif

/* Prints "strobe: " followed by the NULL-terminated list of strings and a
 * newline on stderr with a single write(2), so lines of concurrent
 * processes do not interleave. Async-signal-safe. */
void strobe__say(const char *first, ...) __attribute__((sentinel));

/* Decimal representation of v into buf (NUL-terminated); returns buf.
 * Async-signal-safe. */
char *strobe__fmt_u64(char buf[24], uint64_t v);

/* Copies the concatenation of the NULL-terminated list of strings into
 * out[cap]. Returns 0 or -ENAMETOOLONG (out then holds a truncated,
 * terminated prefix). Async-signal-safe. */
int strobe__concat(char *out, size_t cap, const char *first, ...) __attribute__((sentinel));

/* Parses an on/off switch: 1/yes/on/true or 0/no/off/false. Returns 0 or
 * STROBE_ERR_SYNTAX. */
int strobe__parse_bool(const char *s, bool *out);

/* Anonymous private zero-filled memory (mmap), rounded up to pages; NULL on
 * failure. Used instead of malloc everywhere the runtime may run inside a
 * signal handler or the program's own malloc. Async-signal-safe. */
void *strobe__pages_alloc(size_t bytes);
void strobe__pages_free(void *p, size_t bytes);

/* Grows a strobe__pages_alloc block from old_bytes to new_bytes, keeping
 * its contents; the block may move. Returns the new address or NULL (the
 * old block is then untouched). */
void *strobe__pages_grow(void *p, size_t old_bytes, size_t new_bytes);

/* Kernel thread id of the caller. */
uint64_t strobe__gettid(void);

#endif
