/* SPDX-License-Identifier: MIT */
/* Region, metric and module registry (see registry.h). */
#define _GNU_SOURCE
#include "core/publish.h"
#include "core/registry.h"

#include <errno.h>
#include <link.h>
#include <string.h>

#include "common/filter.h"
#include "core/defs.h"
#include "core/runtime.h"
#include "core/symbols.h"
#include "core/util.h"

#define ADDRS_MIN_CAP 1024u

static size_t addr_hash(uintptr_t addr, size_t cap)
{
    /* Fibonacci hashing of the address without its alignment bits. */
    return (size_t)(((uint64_t)(addr >> 4) * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static struct strobe__addr_slot *addr_find(uintptr_t addr)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (!rt->addrs)
        return NULL;
    for (size_t i = addr_hash(addr, rt->addrs_cap);; i = (i + 1) & (rt->addrs_cap - 1)) {
        if (rt->addrs[i].addr == addr)
            return &rt->addrs[i];
        if (rt->addrs[i].addr == 0)
            return NULL;
    }
}

static void addr_put(struct strobe__addr_slot *tab, size_t cap, uintptr_t addr, uint32_t id)
{
    size_t i = addr_hash(addr, cap);
    while (tab[i].addr != 0)
        i = (i + 1) & (cap - 1);
    tab[i].addr = addr;
    tab[i].id = id;
}

static int addr_insert(uintptr_t addr, uint32_t id)
{
    struct strobe__runtime *rt = &strobe__rt;
    if (2 * (rt->addrs_used + 1) > rt->addrs_cap) {
        size_t cap = rt->addrs_cap ? 2 * rt->addrs_cap : ADDRS_MIN_CAP;
        struct strobe__addr_slot *tab = strobe__pages_alloc(cap * sizeof *tab);
        if (!tab)
            return -ENOMEM;
        for (size_t i = 0; i < rt->addrs_cap; i++)
            if (rt->addrs[i].addr)
                addr_put(tab, cap, rt->addrs[i].addr, rt->addrs[i].id);
        strobe__pages_free(rt->addrs, rt->addrs_cap * sizeof *tab);
        rt->addrs = tab;
        rt->addrs_cap = cap;
    }
    addr_put(rt->addrs, rt->addrs_cap, addr, id);
    rt->addrs_used++;
    return 0;
}

static bool module_known(uintptr_t addr)
{
    for (size_t i = 0; i < strobe__rt.nmodules; i++)
        if (addr >= strobe__rt.modules[i].lo && addr < strobe__rt.modules[i].hi)
            return true;
    return false;
}

int strobe__region_of_code(uintptr_t key, unsigned kind, uint32_t *id)
{
    struct strobe__runtime *rt = &strobe__rt;
    uintptr_t addr = key & STROBE__CODE_ADDR_MASK;
    int rc = 0;
    pthread_mutex_lock(&rt->lock);
    struct strobe__addr_slot *s = addr_find(key);
    if (s) {
        *id = s->id;
        goto out;
    }
    /* A function outside every known module comes from an object loaded
     * since the last scan (dlopen): describe it before its first region. */
    if (!module_known(addr))
        strobe__modules_scan_locked();
    const char *name = "";
    bool measured = true;
    if (rt->filter && kind == STROBE_REGION_FUNCTION) {
        const struct strobe__symbol *sym = strobe__symbol_at(addr);
        if (sym) {
            name = rt->names + sym->name;
            measured = sym->flags & STROBE__SYM_MEASURED;
        }
    }
    uint32_t new_id = 0;
    if (measured) {
        if (rt->region_count >= STROBE__REGION_EXCLUDED - 1) {
            rc = -ENOMEM;
            goto out;
        }
        new_id = rt->region_count + 1;
    }
    rc = addr_insert(key, new_id);
    if (rc)
        goto out;
    if (measured) {
        rt->region_count = new_id;
        strobe__defs_region(new_id, kind, addr, name, "", 0);
        strobe__publish_region_locked(new_id, addr, name);
    }
    *id = new_id;
out:
    pthread_mutex_unlock(&rt->lock);
    return rc;
}

int strobe__region_of_handle(strobe_region_t *r, unsigned kind, uint32_t *id)
{
    struct strobe__runtime *rt = &strobe__rt;
    int rc = 0;
    pthread_mutex_lock(&rt->lock);
    uint32_t cur = __atomic_load_n(&r->id, __ATOMIC_ACQUIRE);
    if (cur == 0) {
        const char *name = r->name ? r->name : "";
        if (rt->filter && !strobe__filter_match(rt->filter, name)) {
            cur = STROBE__REGION_EXCLUDED;
        } else if (rt->region_count >= STROBE__REGION_EXCLUDED - 1) {
            rc = -ENOMEM;
        } else {
            cur = ++rt->region_count;
            strobe__defs_region(cur, (int)kind, 0, name, r->file ? r->file : "",
                                r->line > 0 ? (uint64_t)r->line : 0);
            strobe__publish_region_locked(cur, 0, name);
        }
        /* Pairs with the acquire load in strobe_region_enter/exit: a thread
         * that sees the id also sees that it was registered. */
        if (rc == 0)
            __atomic_store_n(&r->id, cur, __ATOMIC_RELEASE);
    }
    *id = cur;
    pthread_mutex_unlock(&rt->lock);
    return rc;
}

int strobe__metric_of_handle(strobe_metric_t *m, uint32_t *id)
{
    struct strobe__runtime *rt = &strobe__rt;
    int rc = 0;
    pthread_mutex_lock(&rt->lock);
    uint32_t cur = __atomic_load_n(&m->id, __ATOMIC_ACQUIRE);
    if (cur == 0) {
        if (rt->metric_count >= UINT32_MAX - 1) {
            rc = -ENOMEM;
        } else {
            cur = ++rt->metric_count;
            strobe__defs_metric(cur, m->name ? m->name : "", m->unit ? m->unit : "");
            __atomic_store_n(&m->id, cur, __ATOMIC_RELEASE); /* pairs as above */
        }
    }
    *id = cur;
    pthread_mutex_unlock(&rt->lock);
    return rc;
}

/* ---- modules ---- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static int module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct strobe__runtime *rt = &strobe__rt;
    (void)size;
    (void)arg;
    const char *path = info->dlpi_name;
    if (!path || !*path)
        path = rt->exe; /* the main program */
    else if (path[0] != '/')
        return 0; /* the vDSO ("linux-vdso.so.1"): no file, no instrumented code */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (lo >= hi)
        return 0;
    uint64_t h = fnv1a(path);
    for (size_t i = 0; i < rt->nmodules; i++)
        if (rt->modules[i].lo == lo && rt->modules[i].hi == hi && rt->modules[i].path_hash == h)
            return 0;
    if (rt->nmodules == rt->modules_cap) {
        size_t cap = rt->modules_cap ? 2 * rt->modules_cap : 64;
        void *p =
            strobe__pages_grow(rt->modules, rt->modules_cap * sizeof *rt->modules, cap * sizeof *rt->modules);
        if (!p)
            return 1; /* stop: out of memory, regions stay unattributed */
        rt->modules = p;
        rt->modules_cap = cap;
    }
    struct strobe__module *m = &rt->modules[rt->nmodules++];
    memset(m, 0, sizeof *m);
    m->lo = lo;
    m->hi = hi;
    m->bias = info->dlpi_addr;
    m->path_hash = h;
    strobe__defs_module(path, info->dlpi_addr, lo, hi);
    return 0;
}

void strobe__modules_scan_locked(void)
{
    size_t first = strobe__rt.nmodules;
    dl_iterate_phdr(module_cb, NULL);
    /* Symbols only after the walk: libdw must not run under the loader's
     * lock that dl_iterate_phdr holds. */
    if (strobe__rt.filter && strobe__rt.nmodules > first)
        strobe__symbols_load_locked(first);
}
