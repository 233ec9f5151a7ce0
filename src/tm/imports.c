/* SPDX-License-Identifier: MIT */
/*
 * The start-up check that the program runs on this TM runtime alone.
 *
 * A `gcc -fgnu-tm` program links libitm, so libitm is loaded next to
 * libstrobe-tm. Every ABI entry point libstrobe-tm defines binds to it
 * (it comes first: preloaded, or linked before libitm); one it lacked
 * would silently bind to libitm, and a transaction run half by each
 * runtime corrupts memory without a word. So before main, every TM ABI
 * symbol that a loaded object imports is looked up as the dynamic linker
 * would, and the program stops with one line naming the first that does
 * not resolve to libstrobe-tm. Objects loaded later (dlopen) are not
 * checked.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ABI's names: the _ITM_ calls and the transactional clones of the
 * global operators new and delete. Other `_ZGTt` symbols are clones of
 * program or library functions (libstdc++ defines some), not the runtime. */
static bool tm_is_abi_name(const char *name)
{
    static const char *const prefixes[] = {"_ITM_", "_ZGTtnw", "_ZGTtna", "_ZGTtdl", "_ZGTtda"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

static const char *tm_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* True if libstrobe-tm itself defines name. */
static bool tm_defines(const Dl_info *self, const char *name)
{
    void *h = dlopen(self->dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL)
        return false;
    Dl_info def;
    void *addr = dlsym(h, name);
    bool ours = addr != NULL && dladdr(addr, &def) != 0 && def.dli_fbase == self->dli_fbase;
    dlclose(h);
    return ours;
}

/* 0 if the import `name` is no TM ABI symbol or binds to libstrobe-tm (or,
 * weak, to nothing); otherwise -1 with the line to print in why. */
static int tm_check_import(const char *name, bool weak, char *why, size_t cap)
{
    if (!tm_is_abi_name(name))
        return 0;
    void *addr = dlsym(RTLD_DEFAULT, name);
    if (addr == NULL) {
        if (weak)
            return 0; /* the importer tests it for NULL */
        snprintf(why, cap, "strobe-tm: %s is not provided by strobe's TM runtime, nor by anything loaded",
                 name);
        return -1;
    }
    Dl_info self, def;
    if (dladdr((void *)tm_check_import, &self) == 0 || dladdr(addr, &def) == 0)
        return 0; /* cannot tell: do not stop a program on a guess */
    if (def.dli_fbase == self.dli_fbase)
        return 0;
    /* An operator clone from elsewhere is the program's own replacement of
     * operator new or delete, unless it comes from libitm. */
    const char *from = def.dli_fname[0] != '\0' ? tm_basename(def.dli_fname) : "the program";
    if (strncmp(name, "_ITM_", 5) != 0 && strncmp(from, "libitm.", 7) != 0)
        return 0;
    if (tm_defines(&self, name))
        snprintf(why, cap,
                 "strobe-tm: %s binds to %s, which is loaded before strobe's TM runtime; preload "
                 "libstrobe-tm.so or link it before libitm",
                 name, from);
    else
        snprintf(why, cap,
                 "strobe-tm: %s is not provided by strobe's TM runtime; the program would mix it with %s",
                 name, from);
    return -1;
}

/* The dynamic section's addresses: relocated in place by the dynamic
 * linker for most objects, offsets from the load address for some (the
 * vDSO). */
static const void *tm_dyn_ptr(ElfW(Addr) base, ElfW(Addr) ptr)
{
    return (const void *)(ptr < base ? base + ptr : ptr);
}

struct tm_import_scan {
    char why[256];
    int failed;
};

/* Checks the symbols that the relocations of one object refer to and that
 * it does not define: its imports. */
static void tm_scan_relocs(const ElfW(Rela) * rel, size_t bytes, const ElfW(Sym) * symtab, const char *strtab,
                           struct tm_import_scan *scan)
{
    for (size_t i = 0; i < bytes / sizeof *rel && !scan->failed; i++) {
        size_t k = ELF64_R_SYM(rel[i].r_info);
        if (k == 0 || symtab[k].st_shndx != SHN_UNDEF)
            continue;
        bool weak = ELF64_ST_BIND(symtab[k].st_info) == STB_WEAK;
        if (tm_check_import(strtab + symtab[k].st_name, weak, scan->why, sizeof scan->why) != 0)
            scan->failed = 1;
    }
}

static int tm_scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct tm_import_scan *scan = arg;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (dyn == NULL || strncmp(tm_basename(info->dlpi_name), "linux-vdso", 10) == 0)
        return 0;
    ElfW(Addr) d[DT_NUM] = {0}; /* the entries this check reads, by tag */
    for (; dyn->d_tag != DT_NULL; dyn++)
        if (dyn->d_tag >= 0 && dyn->d_tag < DT_NUM)
            d[dyn->d_tag] = dyn->d_un.d_val;
    const ElfW(Sym) *symtab = tm_dyn_ptr(info->dlpi_addr, d[DT_SYMTAB]);
    const char *strtab = tm_dyn_ptr(info->dlpi_addr, d[DT_STRTAB]);
    if (d[DT_SYMTAB] == 0 || d[DT_STRTAB] == 0)
        return 0;
    if (d[DT_RELA] != 0)
        tm_scan_relocs(tm_dyn_ptr(info->dlpi_addr, d[DT_RELA]), d[DT_RELASZ], symtab, strtab, scan);
    if (d[DT_JMPREL] != 0 && d[DT_PLTREL] == DT_RELA)
        tm_scan_relocs(tm_dyn_ptr(info->dlpi_addr, d[DT_JMPREL]), d[DT_PLTRELSZ], symtab, strtab, scan);
    return scan->failed;
}

__attribute__((constructor)) static void tm_check_imports(void)
{
    struct tm_import_scan scan = {.failed = 0};
    dl_iterate_phdr(tm_scan_object, &scan);
    if (scan.failed) {
        fprintf(stderr, "%s\n", scan.why);
        exit(127); /* as the dynamic linker exits for a missing symbol */
    }
}
