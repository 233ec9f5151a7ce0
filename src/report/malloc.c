/* SPDX-License-Identifier: MIT */
/* The memory section of the text report (see malloc.h). */
#include "report/malloc.h"

#include <inttypes.h>

#include "common/format.h"
#include "report/units.h"

const char *strobe__malloc_call_name(uint32_t call)
{
    static const char *const names[STROBE_ALLOC_NCALLS] = {"?",        "malloc", "calloc", "realloc",
                                                           "memalign", "mmap",   "free",   "munmap"};
    return call < STROBE_ALLOC_NCALLS ? names[call] : "?";
}

void strobe__malloc_path(FILE *out, const struct strobe_experiment *exp, const struct strobe_profile *prof,
                         uint32_t node)
{
    if (node == STROBE_NONE) {
        fputs("(unknown call path)", out);
        return;
    }
    if (node == 0) {
        fputs("(thread root)", out);
        return;
    }
    if (prof->nodes[node].parent != 0) {
        strobe__malloc_path(out, exp, prof, prof->nodes[node].parent);
        fputs(" > ", out);
    }
    fputs(exp->regions[prof->nodes[node].region].name, out);
}

static size_t shown(size_t n, size_t top)
{
    return top && top < n ? top : n;
}

static void more(FILE *out, size_t n, size_t top)
{
    if (top && n > top)
        fprintf(out, "  (%zu more; --top 0 shows all)\n", n - top);
}

void strobe__report_malloc_text(FILE *out, const struct strobe_experiment *exp,
                                const struct strobe_profile *prof, const struct strobe_malloc_model *m,
                                size_t top)
{
    char t[STROBE_UNITS_LEN];
    fputs("\nMemory (strobe run --malloc; bytes as asked for)\n", out);
    for (size_t p = 0; p < exp->nprocesses; p++) {
        const struct strobe_process_info *pi = &exp->processes[p];
        const struct strobe_malloc_info *mi = &pi->malloc;
        if (!mi->on)
            continue;
        fprintf(out, "  %s: ", pi->dir);
        if (!mi->summarized) {
            fputs("no summary (the process did not exit normally): peak and blocks live at exit unknown\n",
                  out);
            continue;
        }
        fprintf(out, "peak %" PRIu64 " bytes live", mi->peak_bytes);
        if (mi->peak_bytes)
            fprintf(out, " at %s", strobe__fmt_time(t, mi->peak_ns));
        fprintf(out, "; at exit %" PRIu64 " bytes in %" PRIu64 " blocks live", mi->live_bytes,
                mi->live_blocks);
        if (mi->untracked)
            fprintf(out, "; %" PRIu64 " blocks not tracked (out of memory)", mi->untracked);
        fputc('\n', out);
    }
    fprintf(out,
            "  total: %" PRIu64 " allocations of %" PRIu64 " bytes, %" PRIu64 " frees of %" PRIu64 " bytes\n",
            m->allocs, m->alloc_bytes, m->frees, m->freed_bytes);
    if (prof->traced)
        fprintf(out,
                "  (the counts per call path are in the profile files: the %zu thread(s) rebuilt from their "
                "trace have none; --source profile reads them)\n",
                prof->traced);

    fputs("\nAllocations per call path (by bytes allocated; frees counted where they were made)\n", out);
    fprintf(out, "  %10s %14s %10s %14s %11s %14s  %s\n", "allocs", "bytes", "frees", "freed", "live blocks",
            "live bytes", "call path");
    for (size_t i = 0; i < shown(m->npaths, top); i++) {
        const struct strobe_malloc_path *p = &m->paths[i];
        fprintf(out,
                "  %10" PRIu64 " %14" PRIu64 " %10" PRIu64 " %14" PRIu64 " %11" PRIu64 " %14" PRIu64 "  ",
                p->allocs, p->alloc_bytes, p->frees, p->freed_bytes, p->live_blocks, p->live_bytes);
        strobe__malloc_path(out, exp, prof, p->node);
        fputc('\n', out);
    }
    more(out, m->npaths, top);

    fprintf(out, "\nLive at exit (leaks): %" PRIu64 " bytes in %" PRIu64 " blocks\n", m->live_bytes,
            m->live_blocks);
    if (m->nleaks)
        fprintf(out, "  %10s %14s %8s  %s\n", "blocks", "bytes", "thread", "allocated on");
    for (size_t i = 0; i < shown(m->nleaks, top); i++) {
        const struct strobe_malloc_leak *l = &m->leaks[i];
        fprintf(out, "  %10" PRIu64 " %14" PRIu64 " %8" PRIu32 "  ", l->blocks, l->bytes, l->thread);
        strobe__malloc_path(out, exp, prof, l->node);
        fputc('\n', out);
    }
    more(out, m->nleaks, top);

    uint64_t large = UINT64_MAX;
    for (size_t p = 0; p < exp->nprocesses; p++)
        if (exp->processes[p].malloc.on && exp->processes[p].malloc.large < large)
            large = exp->processes[p].malloc.large;
    fprintf(out, "\nLarge blocks (%" PRIu64 " bytes and more): %zu events\n", large, m->nlarge);
    if (m->nlarge)
        fprintf(out, "  %12s %8s %-6s %-9s %18s %14s  %s\n", "time", "thread", "event", "call", "address",
                "bytes", "call path");
    for (size_t i = 0; i < shown(m->nlarge, top); i++) {
        const struct strobe_malloc_large *l = &m->large[i];
        fprintf(out, "  %12s %8" PRIu32 " %-6s %-9s %#18" PRIx64 " %14" PRIu64 "  ",
                strobe__fmt_time(t, l->time_ns), l->thread, l->op == STROBE_ALLOC_ALLOC ? "alloc" : "free",
                strobe__malloc_call_name(l->call), l->address, l->size);
        strobe__malloc_path(out, exp, prof, l->node);
        fputc('\n', out);
    }
    more(out, m->nlarge, top);
}
