/* SPDX-License-Identifier: MIT */
/*
 * Source location of an atomic block, for the STM's fatal error messages
 * (site.h). Used only on the way to abort(), so it may be slow: the line
 * comes from the program's DWARF through libdwfl, which is loaded with
 * dlopen only then, so that libstrobe-tm does not depend on elfutils.
 */
#define _GNU_SOURCE
#include "tm/site.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* file:line of addr through libdw.so.1; false if anything is missing. */
static bool tm_site_line(uintptr_t addr, char *buf, size_t size)
{
    void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return false;
    Dwfl *(*begin)(const Dwfl_Callbacks *) = (Dwfl * (*)(const Dwfl_Callbacks *)) dlsym(h, "dwfl_begin");
    int (*report)(Dwfl *, pid_t) = (int (*)(Dwfl *, pid_t))dlsym(h, "dwfl_linux_proc_report");
    int (*report_end)(Dwfl *, void *, void *) = (int (*)(Dwfl *, void *, void *))dlsym(h, "dwfl_report_end");
    Dwfl_Module *(*addrmodule)(Dwfl *, Dwarf_Addr) =
        (Dwfl_Module * (*)(Dwfl *, Dwarf_Addr)) dlsym(h, "dwfl_addrmodule");
    Dwfl_Line *(*getsrc)(Dwfl_Module *, Dwarf_Addr) =
        (Dwfl_Line * (*)(Dwfl_Module *, Dwarf_Addr)) dlsym(h, "dwfl_module_getsrc");
    const char *(*lineinfo)(Dwfl_Line *, Dwarf_Addr *, int *, int *, Dwarf_Word *, Dwarf_Word *) =
        (const char *(*)(Dwfl_Line *, Dwarf_Addr *, int *, int *, Dwarf_Word *, Dwarf_Word *))dlsym(
            h, "dwfl_lineinfo");
    void (*end)(Dwfl *) = (void (*)(Dwfl *))dlsym(h, "dwfl_end");
    Dwfl_Callbacks cb = {0};
    *(void **)&cb.find_elf = dlsym(h, "dwfl_linux_proc_find_elf");
    *(void **)&cb.find_debuginfo = dlsym(h, "dwfl_standard_find_debuginfo");
    bool found = false;
    if (begin && report && report_end && addrmodule && getsrc && lineinfo && end && cb.find_elf &&
        cb.find_debuginfo) {
        Dwfl *d = begin(&cb);
        if (d != NULL && report(d, getpid()) == 0 && report_end(d, NULL, NULL) == 0) {
            Dwfl_Module *m = addrmodule(d, addr);
            Dwfl_Line *l = m ? getsrc(m, addr) : NULL;
            int line = 0;
            const char *file = l ? lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
            if (file != NULL && line > 0) {
                snprintf(buf, size, "%s:%d", file, line);
                found = true;
            }
        }
        if (d != NULL)
            end(d);
    }
    dlclose(h);
    return found;
}

void strobe__tm_describe_site(uintptr_t ret, char *buf, size_t size)
{
    /* the call instruction itself, not the one after it */
    uintptr_t addr = ret - 1;
    Dl_info info;
    bool have_sym = dladdr((void *)addr, &info) != 0;
    size_t n = 0;
    if (tm_site_line(addr, buf, size)) {
        n = strlen(buf);
        if (have_sym && info.dli_sname != NULL)
            snprintf(buf + n, size - n, " (%s)", info.dli_sname);
    } else if (have_sym && info.dli_sname != NULL) {
        snprintf(buf, size, "%s+0x%lx in %s (no line information: compile with -g)", info.dli_sname,
                 (unsigned long)(addr - (uintptr_t)info.dli_saddr), info.dli_fname);
    } else if (have_sym) {
        snprintf(buf, size, "%s+0x%lx (no line information: compile with -g)", info.dli_fname,
                 (unsigned long)(addr - (uintptr_t)info.dli_fbase));
    } else {
        snprintf(buf, size, "address %#lx", (unsigned long)addr);
    }
}
