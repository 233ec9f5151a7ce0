/* SPDX-License-Identifier: MIT */
/* Cache-line write-back and fence, real or simulated (see pmem.h). */
#include "petra/pmem.h"

#include <cpuid.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct petra_pending {
    size_t n, cap;
    struct pending_line {
        uint64_t off;
        unsigned char bytes[PETRA_LINE];
    } *v;
};

int strobe__pmem_detect(void)
{
    unsigned a, b, c, d;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        if (b & (1u << 24))
            return PETRA_FLUSH_CLWB;
        if (b & (1u << 23))
            return PETRA_FLUSH_CLFLUSHOPT;
    }
    return PETRA_FLUSH_CLFLUSH;
}

const char *strobe__pmem_name(int kind)
{
    return kind == PETRA_FLUSH_CLWB ? "clwb" : kind == PETRA_FLUSH_CLFLUSHOPT ? "clflushopt" : "clflush";
}

static void capture(struct strobe_petra *h, struct strobe_petra_thread *t, uintptr_t line)
{
    struct petra_pending *p = t->pending;
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p)
            abort(); /* a simulation that cannot record would report false durability */
        t->pending = p;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        void *v = realloc(p->v, cap * sizeof *p->v);
        if (!v)
            abort();
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n].off = (uint64_t)(line - (uintptr_t)h->base);
    memcpy(p->v[p->n].bytes, (const void *)line, PETRA_LINE);
    p->n++;
}

unsigned strobe__pmem_flush(struct strobe_petra *h, struct strobe_petra_thread *t, const void *p)
{
    uintptr_t line = (uintptr_t)p & ~(uintptr_t)(PETRA_LINE - 1);
    if (h->powerfail) {
        capture(h, t, line);
        return 1;
    }
    switch (h->flush_kind) {
    case PETRA_FLUSH_CLWB: __asm__ volatile("clwb (%0)" ::"r"(line) : "memory"); break;
    case PETRA_FLUSH_CLFLUSHOPT: __asm__ volatile("clflushopt (%0)" ::"r"(line) : "memory"); break;
    default: __asm__ volatile("clflush (%0)" ::"r"(line) : "memory"); break;
    }
    return 1;
}

unsigned strobe__pmem_flush_range(struct strobe_petra *h, struct strobe_petra_thread *t,
                                  const void *p, size_t len)
{
    if (!len)
        return 0;
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(PETRA_LINE - 1);
    uintptr_t end = (uintptr_t)p + len;
    unsigned n = 0;
    for (; a < end; a += PETRA_LINE)
        n += strobe__pmem_flush(h, t, (const void *)a);
    return n;
}

int strobe__pmem_fence(struct strobe_petra *h, struct strobe_petra_thread *t)
{
    if (!h->powerfail) {
        __asm__ volatile("sfence" ::: "memory");
        return 0;
    }
    struct petra_pending *p = t->pending;
    int rc = 0;
    for (size_t i = 0; p && i < p->n; i++) {
        ssize_t w = pwrite(h->fd, p->v[i].bytes, PETRA_LINE, (off_t)p->v[i].off);
        if (w != (ssize_t)PETRA_LINE && !rc)
            rc = w < 0 ? -errno : -EIO;
    }
    if (p)
        p->n = 0;
    return rc;
}

void strobe__pmem_pending_free(struct strobe_petra_thread *t)
{
    if (t->pending) {
        free(t->pending->v);
        free(t->pending);
        t->pending = NULL;
    }
}
