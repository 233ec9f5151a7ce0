/* SPDX-License-Identifier: MIT */
/* Function symbols for the filter, read through a dlopen'ed libdwfl (see
 * symbols.h). */
#define _GNU_SOURCE
#include "core/symbols.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/filter.h"
#include "core/util.h"

/* The libdwfl entry points the runtime uses, resolved with dlsym. */
struct strobe__dw {
    Dwfl *(*begin)(const Dwfl_Callbacks *);
    void (*end)(Dwfl *);
    void (*report_begin)(Dwfl *);
    int (*proc_report)(Dwfl *, pid_t);
    int (*report_end)(Dwfl *, int (*)(Dwfl_Module *, void *, const char *, Dwarf_Addr, void *), void *);
    ptrdiff_t (*getmodules)(Dwfl *, int (*)(Dwfl_Module *, void **, const char *, Dwarf_Addr, void *), void *,
                            ptrdiff_t);
    const char *(*module_info)(Dwfl_Module *, void ***, Dwarf_Addr *, Dwarf_Addr *, Dwarf_Addr *,
                               Dwarf_Addr *, const char **, const char **);
    int (*getsymtab)(Dwfl_Module *);
    const char *(*getsym_info)(Dwfl_Module *, int, GElf_Sym *, GElf_Addr *, GElf_Word *, Elf **,
                               Dwarf_Addr *);
    int (*standard_find_debuginfo)(Dwfl_Module *, void **, const char *, Dwarf_Addr, const char *,
                                   const char *, GElf_Word, char **);
    Dwfl_Callbacks callbacks;
    char *debuginfo_path;
};

/* Separate debug files (/usr/lib/debug) are welcome, but not downloads:
 * with DEBUGINFOD_URLS set, libdwfl's standard lookup would fetch debug
 * info over the network from inside the measured program's start-up. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                          char **debuginfo_file_name)
{
    const char *urls = getenv("DEBUGINFOD_URLS");
    if (urls && *urls)
        return -1;
    return strobe__rt.dw->standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                                  debuglink_crc, debuginfo_file_name);
}

#define RESOLVE(field, name)                                                                                 \
    do {                                                                                                     \
        *(void **)&dw->field = dlsym(h, name);                                                               \
        if (!dw->field)                                                                                      \
            goto fail;                                                                                       \
    } while (0)

static struct strobe__dw *load_libdw(void)
{
    void *h = strobe__real_dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        strobe__say("STROBE_FILTER: cannot load libdw.so.1 (", e ? e : "?",
                    "); the filter applies to annotated regions only", (char *)NULL);
        return NULL;
    }
    struct strobe__dw *dw = strobe__pages_alloc(sizeof *dw);
    if (!dw)
        return NULL;
    RESOLVE(begin, "dwfl_begin");
    RESOLVE(end, "dwfl_end");
    RESOLVE(report_begin, "dwfl_report_begin");
    RESOLVE(proc_report, "dwfl_linux_proc_report");
    RESOLVE(report_end, "dwfl_report_end");
    RESOLVE(getmodules, "dwfl_getmodules");
    RESOLVE(module_info, "dwfl_module_info");
    RESOLVE(getsymtab, "dwfl_module_getsymtab");
    RESOLVE(getsym_info, "dwfl_module_getsym_info");
    RESOLVE(standard_find_debuginfo, "dwfl_standard_find_debuginfo");
    RESOLVE(callbacks.find_elf, "dwfl_linux_proc_find_elf");
    dw->callbacks.find_debuginfo = find_debuginfo;
    dw->callbacks.debuginfo_path = &dw->debuginfo_path;
    /* h stays open for the life of the process: names are copied out, but
     * later dlopen'ed modules will need libdw again. */
    return dw;
fail:
    strobe__say("STROBE_FILTER: libdw.so.1 lacks an expected function; the filter applies to annotated "
                "regions only",
                (char *)NULL);
    strobe__pages_free(dw, sizeof *dw);
    dlclose(h);
    return NULL;
}

void strobe__symbols_prepare(void)
{
    if (strobe__rt.filter && !strobe__rt.dw)
        strobe__rt.dw = load_libdw();
}

/* ---- the table ---- */

static int append_name(const char *name, uint32_t *off)
{
    struct strobe__runtime *rt = &strobe__rt;
    size_t n = strlen(name) + 1;
    if (rt->names_len + n > rt->names_cap) {
        size_t cap = rt->names_cap ? rt->names_cap : 1 << 16;
        while (rt->names_len + n > cap)
            cap *= 2;
        if (cap > UINT32_MAX)
            return -1;
        char *p = strobe__pages_grow(rt->names, rt->names_cap, cap);
        if (!p)
            return -1;
        rt->names = p;
        rt->names_cap = cap;
    }
    memcpy(rt->names + rt->names_len, name, n);
    *off = (uint32_t)rt->names_len;
    rt->names_len += n;
    return 0;
}

static int append_symbol(uint64_t addr, uint32_t name, uint32_t flags)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (rt->nsyms == rt->syms_cap) {
        size_t cap = rt->syms_cap ? 2 * rt->syms_cap : 4096;
        void *p = strobe__pages_grow(rt->syms, rt->syms_cap * sizeof *rt->syms, cap * sizeof *rt->syms);
        if (!p)
            return -1;
        rt->syms = p;
        rt->syms_cap = cap;
    }
    rt->syms[rt->nsyms++] = (struct strobe__symbol){addr, name, flags};
    return 0;
}

/* Binding preference when several symbols share an address (aliases):
 * global, then weak, then local, in bits 1..2 of flags while sorting. */
#define RANK_SHIFT 1
#define RANK_MASK (3u << RANK_SHIFT)

static bool sym_less(const struct strobe__symbol *a, const struct strobe__symbol *b)
{
    if (a->addr != b->addr)
        return a->addr < b->addr;
    return (a->flags & RANK_MASK) < (b->flags & RANK_MASK);
}

/* In-place heapsort: no allocation (qsort may call malloc). */
static void sift_down(struct strobe__symbol *s, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && sym_less(&s[c], &s[c + 1]))
            c++;
        if (!sym_less(&s[i], &s[c]))
            return;
        struct strobe__symbol tmp = s[i];
        s[i] = s[c];
        s[c] = tmp;
        i = c;
    }
}

static void sort_symbols(struct strobe__symbol *s, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(s, i, n);
    for (size_t end = n; end-- > 1;) {
        struct strobe__symbol tmp = s[0];
        s[0] = s[end];
        s[end] = tmp;
        sift_down(s, 0, end);
    }
}

static void load_module(Dwfl_Module *mod, struct strobe__module *m)
{
    struct strobe__runtime *rt = &strobe__rt;
    struct strobe__dw *dw = rt->dw;
    size_t first = rt->nsyms;
    int n = dw->getsymtab(mod);
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        const char *name = dw->getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !*name || (type != STT_FUNC && type != STT_GNU_IFUNC) || shndx == SHN_UNDEF || addr == 0)
            continue;
        int bind = GELF_ST_BIND(sym.st_info);
        uint32_t rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
        uint32_t off;
        if (append_name(name, &off) != 0)
            break;
        uint32_t flags =
            (rank << RANK_SHIFT) | (strobe__filter_match(rt->filter, name) ? STROBE__SYM_MEASURED : 0);
        if (append_symbol(addr, off, flags) != 0)
            break;
    }
    struct strobe__symbol *s = rt->syms + first;
    size_t count = rt->nsyms - first;
    sort_symbols(s, count);
    size_t out = 0;
    for (size_t i = 0; i < count; i++) { /* keep the preferred name per address */
        if (out > 0 && s[out - 1].addr == s[i].addr)
            continue;
        s[out] = s[i];
        s[out].flags &= ~RANK_MASK;
        out++;
    }
    rt->nsyms = first + out;
    m->sym_first = (uint32_t)first;
    m->sym_count = (uint32_t)out;
}

struct scan {
    size_t first;
};

static int module_cb(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
    struct strobe__runtime *rt = &strobe__rt;
    struct scan *sc = arg;
    (void)userdata;
    (void)name;
    Dwarf_Addr lo = 0, hi = 0;
    rt->dw->module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
    for (size_t i = sc->first; i < rt->nmodules; i++) {
        struct strobe__module *m = &rt->modules[i];
        if (m->sym_count == 0 && lo < m->hi && m->lo < hi) {
            load_module(mod, m);
            break;
        }
    }
    return DWARF_CB_OK;
}

void strobe__symbols_load_locked(size_t first)
{
    struct strobe__dw *dw = strobe__rt.dw;
    if (!dw)
        return;
    Dwfl *d = dw->begin(&dw->callbacks);
    if (!d)
        return;
    dw->report_begin(d);
    int rc = dw->proc_report(d, getpid());
    if (dw->report_end(d, NULL, NULL) == 0 && rc == 0) {
        struct scan sc = {first};
        dw->getmodules(d, module_cb, &sc, 0);
    }
    dw->end(d);
}

const struct strobe__symbol *strobe__symbol_at(uintptr_t addr)
{
    struct strobe__runtime *rt = &strobe__rt;
    /* Newest first: a module loaded over the range of an unloaded one wins. */
    for (size_t i = rt->nmodules; i-- > 0;) {
        const struct strobe__module *m = &rt->modules[i];
        if (addr < m->lo || addr >= m->hi)
            continue;
        const struct strobe__symbol *s = rt->syms + m->sym_first;
        size_t lo = 0, hi = m->sym_count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s[mid].addr < addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo < m->sym_count && s[lo].addr == addr ? &s[lo] : NULL;
    }
    return NULL;
}
