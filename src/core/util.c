/* SPDX-License-Identifier: MIT */
/* Async-signal-safe helpers of the runtime (see util.h). */
#define _GNU_SOURCE
#include "core/util.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/malloc.h"
#include "strobe/strobe.h"

void strobe__say(const char *first, ...)
{
    char buf[1024];
    size_t n = 0;
    static const char prefix[] = "strobe: ";
    memcpy(buf, prefix, sizeof prefix - 1);
    n = sizeof prefix - 1;
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *)) {
        size_t len = strlen(s);
        if (len > sizeof buf - 1 - n)
            len = sizeof buf - 1 - n;
        memcpy(buf + n, s, len);
        n += len;
    }
    va_end(ap);
    buf[n++] = '\n';
    /* Best effort: there is nobody to report a failed report to. */
    ssize_t w = write(STDERR_FILENO, buf, n);
    (void)w;
}

char *strobe__fmt_u64(char buf[24], uint64_t v)
{
    char tmp[24];
    int i = 0;
    do {
        tmp[i++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int j = 0; j < i; j++)
        buf[j] = tmp[i - 1 - j];
    buf[i] = 0;
    return buf;
}

int strobe__concat(char *out, size_t cap, const char *first, ...)
{
    size_t n = 0;
    int rc = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *)) {
        size_t len = strlen(s);
        if (len >= cap - n) {
            len = cap - n - 1;
            rc = -ENAMETOOLONG;
        }
        memcpy(out + n, s, len);
        n += len;
    }
    va_end(ap);
    out[n] = 0;
    return rc;
}

int strobe__parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "yes", "on", "true"};
    static const char *const no[] = {"0", "no", "off", "false"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return STROBE_ERR_SYNTAX;
}

static size_t page_round(size_t bytes)
{
    size_t page = 4096;
    return (bytes + page - 1) & ~(page - 1);
}

/* The runtime's pages are not the program's allocations (malloc.h). */
void *strobe__pages_alloc(size_t bytes)
{
    strobe__mem_quiet++;
    void *p = mmap(NULL, page_round(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    strobe__mem_quiet--;
    return p == MAP_FAILED ? NULL : p;
}

void strobe__pages_free(void *p, size_t bytes)
{
    strobe__mem_quiet++;
    if (p)
        munmap(p, page_round(bytes));
    strobe__mem_quiet--;
}

void *strobe__pages_grow(void *p, size_t old_bytes, size_t new_bytes)
{
    if (!p)
        return strobe__pages_alloc(new_bytes);
    void *q = mremap(p, page_round(old_bytes), page_round(new_bytes), MREMAP_MAYMOVE);
    return q == MAP_FAILED ? NULL : q;
}

uint64_t strobe__gettid(void)
{
    return (uint64_t)syscall(SYS_gettid);
}
