/* SPDX-License-Identifier: MIT */
/* libdwfl-based resolution of code addresses (see symbols.h). */
#define _GNU_SOURCE /* asprintf */
#include "analysis/symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

static const struct strobe__module *module_of(const struct strobe__defs *d, uint64_t addr)
{
    for (size_t i = 0; i < d->nmodules; i++)
        if (addr >= d->modules[i].lo && addr < d->modules[i].hi)
            return &d->modules[i];
    return NULL;
}

/* The compile unit holding ADDR. libdw 0.188 finds it through
 * .debug_aranges, which clang does not emit: then the units are searched
 * by their address ranges. */
static Dwarf_Die *cu_of(Dwfl_Module *mod, uint64_t addr, Dwarf_Addr *bias)
{
    Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);
    if (cu)
        return cu;
    while ((cu = dwfl_module_nextcu(mod, cu, bias)) != NULL)
        if (dwarf_haspc(cu, addr - *bias) > 0)
            return cu;
    return NULL;
}

/* Declaration file:line of the subprogram containing ADDR, from DWARF. */
static void decl_of(Dwfl_Module *mod, uint64_t addr, const char **name, const char **file, int *line)
{
    Dwarf_Addr bias;
    Dwarf_Die *cu = cu_of(mod, addr, &bias);
    if (!cu)
        return;
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes(cu, addr - bias, &scopes);
    for (int i = 0; i < n; i++) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
            continue;
        /* out-of-line copies of inlined or specialised functions point at
         * their abstract origin for name and declaration */
        Dwarf_Attribute attr;
        Dwarf_Die origin, *die = &scopes[i];
        if (dwarf_attr_integrate(die, DW_AT_abstract_origin, &attr) && dwarf_formref_die(&attr, &origin))
            die = &origin;
        /* libdw 0.188 finds no declaration file in clang 14's DWARF 5
         * (the line is there): the caller takes the file from the line
         * table */
        int l = 0;
        if (dwarf_decl_line(die, &l) == 0) {
            *file = dwarf_decl_file(die);
            *line = l;
        }
        const char *dn = dwarf_diename(die);
        if (dn && !*name)
            *name = dn;
        break;
    }
    free(scopes);
}

/* Source file:line of the instruction at ADDR, from the line table. */
static void line_of(Dwfl_Module *mod, uint64_t addr, const char **file, int *line)
{
    Dwarf_Addr bias;
    Dwarf_Die *cu = cu_of(mod, addr, &bias);
    Dwarf_Line *l = cu ? dwarf_getsrc_die(cu, addr - bias) : NULL;
    int ln = 0;
    const char *f = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
    if (f && dwarf_lineno(l, &ln) == 0) {
        *file = f;
        *line = ln;
    }
}

/* A libdwfl session with the modules of D at their load biases; NULL when
 * libdwfl fails (every address then stays unresolved). */
static Dwfl *open_modules(const struct strobe__defs *d)
{
    Dwfl *dwfl = dwfl_begin(&offline_callbacks);
    if (dwfl) {
        dwfl_report_begin(dwfl);
        for (size_t i = 0; i < d->nmodules; i++) {
            const char *base = strrchr(d->modules[i].path, '/');
            dwfl_report_elf(dwfl, base ? base + 1 : d->modules[i].path, d->modules[i].path, -1,
                            d->modules[i].bias, false);
        }
        dwfl_report_end(dwfl, NULL, NULL);
    }
    return dwfl;
}

int strobe__symbols_name_objects(const struct strobe__defs *d, const uint64_t *addrs, size_t n, char **names)
{
    Dwfl *dwfl = open_modules(d);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        names[i] = NULL;
        Dwfl_Module *mod = dwfl && module_of(d, addrs[i]) ? dwfl_addrmodule(dwfl, addrs[i]) : NULL;
        GElf_Off off = 0;
        GElf_Sym sym;
        const char *name = mod ? dwfl_module_addrinfo(mod, addrs[i], &off, &sym, NULL, NULL, NULL) : NULL;
        if (!name || GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
            continue;
        int k = off ? asprintf(&names[i], "%s+%" PRIu64, name, (uint64_t)off) : (names[i] = strdup(name)) ? 0 : -1;
        if (k < 0) {
            names[i] = NULL;
            rc = -ENOMEM;
        }
    }
    if (dwfl)
        dwfl_end(dwfl);
    return rc;
}

int strobe__symbols_resolve(const struct strobe__defs *d, struct strobe__resolved *out)
{
    Dwfl *dwfl = open_modules(d);
    int rc = 0;
    for (size_t i = 0; i < d->nregions && rc == 0; i++) {
        const struct strobe__local_region *r = &d->regions[i];
        bool site = strobe_region_kind_is_site(r->kind);
        if (!strobe_region_kind_is_code((unsigned)r->kind))
            continue;
        /* An atomic block or an OpenMP construct is named by the return
         * address of the runtime call that began it; the call itself is
         * the byte before. */
        uint64_t addr = site ? r->address - 1 : r->address;
        const struct strobe__module *m = module_of(d, addr);
        const char *name = NULL, *file = NULL;
        int line = 0;
        Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, addr) : NULL;
        if (mod) {
            /* the ELF symbol table names static functions and the PLT too;
             * DWARF supplies the declaration, or for a call site the
             * source line of the call */
            name = dwfl_module_addrname(mod, addr);
            if (site)
                line_of(mod, addr, &file, &line);
            else
                decl_of(mod, addr, &name, &file, &line);
            /* no declaration file: the file of the function's entry, and
             * its line when DWARF has no declaration line either */
            if (!file) {
                int entry = 0;
                line_of(mod, addr, &file, &entry);
                if (!line)
                    line = entry;
            }
        }
        struct strobe__resolved *o = &out[i];
        if (r->name && r->name[0])
            name = r->name; /* the runtime already knew it (filtered runs) */
        /* "atomic@main", "omp parallel@main" */
        const char *kind = site ? strobe_region_kind_name(r->kind) : "";
        const char *at = site ? "@" : "";
        int n;
        if (name)
            n = asprintf(&o->name, "%s%s%s", kind, at, name);
        else
            n = asprintf(&o->name, "%s%s0x%" PRIx64, kind, at, m ? r->address - m->bias : r->address);
        if (n < 0)
            o->name = NULL;
        o->file = strdup(file ? file : "");
        o->line = line > 0 ? (unsigned)line : 0;
        o->module = strdup(m ? m->path : "");
        o->rel = m ? r->address - m->bias : r->address;
        if (!o->name || !o->file || !o->module)
            rc = -ENOMEM;
    }
    if (dwfl)
        dwfl_end(dwfl);
    return rc;
}

void strobe__resolved_free(struct strobe__resolved *r)
{
    free(r->name);
    free(r->file);
    free(r->module);
}
