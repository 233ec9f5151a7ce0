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

/* The C++ ABI's demangler, from libstdc++ (declared here: it has no C
 * header). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *strobe__readable_name(const char *name)
{
    if (strncmp(name, "_Z", 2) == 0) {
        int status = -1;
        char *plain = __cxa_demangle(name, NULL, NULL, &status);
        if (plain && status == 0)
            return plain;
        free(plain);
    }
    return strdup(name);
}

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

/* Source file:line of the instruction at ADDR, from the line table, and
 * its column into *col when COL is not NULL (left alone when the line table
 * has none). */
static void line_of(Dwfl_Module *mod, uint64_t addr, const char **file, int *line, int *col)
{
    Dwarf_Addr bias;
    Dwarf_Die *cu = cu_of(mod, addr, &bias);
    Dwarf_Line *l = cu ? dwarf_getsrc_die(cu, addr - bias) : NULL;
    int ln = 0, c = 0;
    const char *f = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
    if (f && dwarf_lineno(l, &ln) == 0) {
        *file = f;
        *line = ln;
        if (col && dwarf_linecol(l, &c) == 0)
            *col = c;
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
        char *plain = strobe__readable_name(name);
        int k = plain ? 0 : -1;
        if (plain && off) {
            k = asprintf(&names[i], "%s+%" PRIu64, plain, (uint64_t)off);
            free(plain);
        } else if (plain) {
            names[i] = plain;
        }
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
        if (!strobe_region_kind_is_code((unsigned)r->kind) || !r->address)
            continue; /* named by the runtime (a descriptor of the instrumenter) */
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
                line_of(mod, addr, &file, &line, NULL);
            else
                decl_of(mod, addr, &name, &file, &line);
            /* no declaration file: the file of the function's entry, and
             * its line when DWARF has no declaration line either */
            if (!file) {
                int entry = 0;
                line_of(mod, addr, &file, &entry, NULL);
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
        char *plain = name ? strobe__readable_name(name) : NULL;
        int n;
        if (plain)
            n = asprintf(&o->name, "%s%s%s", kind, at, plain);
        else if (!name)
            n = asprintf(&o->name, "%s%s0x%" PRIx64, kind, at, m ? r->address - m->bias : r->address);
        else
            n = -1;
        free(plain);
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

/* The name of a subprogram or inlined-subroutine DIE, through its
 * abstract origin or specification. */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    Dwarf_Die origin;
    const char *n = dwarf_diename(die);
    if (!n && dwarf_attr_integrate(die, DW_AT_abstract_origin, &attr) && dwarf_formref_die(&attr, &origin))
        n = dwarf_diename(&origin);
    return n;
}

static int frame_set(struct strobe__code_frame *f, const char *name, const char *file, int line, int col)
{
    f->name = strobe__readable_name(name);
    f->file = strdup(file ? file : "");
    f->line = line > 0 ? (unsigned)line : 0;
    f->col = col > 0 ? (unsigned)col : 0;
    return f->name && f->file ? 0 : -ENOMEM;
}

/* The inline chain of ADDR in MOD below the ELF symbol `outer`: every
 * DW_TAG_inlined_subroutine scope, innermost first, then `outer` itself,
 * each with its line and column (the address's, then each inlined call's). */
static int inline_chain(Dwfl_Module *mod, uint64_t addr, const char *outer, struct strobe__code_loc *o)
{
    const char *file = NULL;
    int line = 0, col = 0;
    line_of(mod, addr, &file, &line, &col);
    Dwarf_Addr bias;
    Dwarf_Die *cu = cu_of(mod, addr, &bias);
    Dwarf_Die *scopes = NULL;
    int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
    Dwarf_Files *files = NULL;
    if (cu)
        dwarf_getsrcfiles(cu, &files, NULL);
    int inl = 0;
    for (int i = 0; i < n; i++)
        inl += dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine;
    o->frames = calloc((size_t)inl + 1, sizeof *o->frames);
    int rc = o->frames ? 0 : -ENOMEM;
    for (int i = 0; i < n && rc == 0; i++) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        const char *nm = die_name(&scopes[i]);
        rc = frame_set(&o->frames[o->nframes++], nm ? nm : "(inlined)", file, line, col);
        /* the next frame out is at the call of this one */
        Dwarf_Attribute attr;
        Dwarf_Word cf = 0, cl = 0, cc = 0;
        file = NULL;
        line = col = 0;
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &cf) == 0 && files)
            file = dwarf_filesrc(files, cf, NULL, NULL);
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &cl) == 0)
            line = (int)cl;
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_column, &attr), &cc) == 0)
            col = (int)cc;
    }
    if (rc == 0)
        rc = frame_set(&o->frames[o->nframes++], outer, file, line, col);
    free(scopes);
    return rc;
}

/* The run-time start address of the .eh_frame/.debug_frame entry (one
 * per function, as compilers emit them) covering ADDR; 0 when none. */
static uint64_t cfi_start(Dwfl_Module *mod, uint64_t addr)
{
    Dwarf_Addr bias;
    Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
    Dwarf_Frame *frame = NULL;
    if (!cfi || dwarf_cfi_addrframe(cfi, addr - bias, &frame) != 0) {
        cfi = dwfl_module_dwarf_cfi(mod, &bias);
        if (!cfi || dwarf_cfi_addrframe(cfi, addr - bias, &frame) != 0)
            return 0;
    }
    Dwarf_Addr start = 0, end = 0;
    int ok = dwarf_frame_info(frame, &start, &end, NULL) >= 0;
    free(frame);
    return ok ? start + bias : 0;
}

int strobe__symbols_code(const struct strobe__defs *d, const uint64_t *addrs, size_t n,
                         struct strobe__code_loc *out)
{
    Dwfl *dwfl = open_modules(d);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct strobe__code_loc *o = &out[i];
        memset(o, 0, sizeof *o);
        uint64_t a = addrs[i];
        const struct strobe__module *m = module_of(d, a);
        Dwfl_Module *mod = dwfl && m ? dwfl_addrmodule(dwfl, a) : NULL;
        GElf_Off off = 0;
        GElf_Sym sym;
        const char *name = mod ? dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL) : NULL;
        /* only a symbol whose extent holds the address names it: the
         * nearest one before it would be a wrong name in stripped code */
        if (name && (GELF_ST_TYPE(sym.st_info) != STT_FUNC || off >= sym.st_size))
            name = NULL;
        o->module = strdup(m ? m->path : "");
        o->rel = m ? a - m->bias : a;
        if (!o->module) {
            rc = -ENOMEM;
            break;
        }
        if (name) {
            rc = inline_chain(mod, a, name, o);
            continue;
        }
        char *anon = NULL;
        const char *base = m ? strrchr(m->path, '/') : NULL;
        /* the start of the function, from the unwind tables even a stripped
         * object keeps: all its addresses then count as one function */
        uint64_t start = mod ? cfi_start(mod, a) : 0;
        int k =
            m ? asprintf(&anon, "%s+0x%" PRIx64, base ? base + 1 : m->path, start ? start - m->bias : o->rel)
              : asprintf(&anon, "0x%" PRIx64, a); /* no module: the vDSO, generated code */
        if (k < 0)
            anon = NULL;
        o->frames = calloc(1, sizeof *o->frames);
        rc = anon && o->frames ? frame_set(&o->frames[0], anon, NULL, 0, 0) : -ENOMEM;
        o->nframes = o->frames ? 1 : 0;
        free(anon);
    }
    if (dwfl)
        dwfl_end(dwfl);
    return rc;
}

bool strobe__is_runtime_module(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libstrobe.so", 12) == 0 && (base[12] == 0 || base[12] == '.');
}

void strobe__code_loc_free(struct strobe__code_loc *l)
{
    for (size_t i = 0; i < l->nframes; i++) {
        free(l->frames[i].name);
        free(l->frames[i].file);
    }
    free(l->frames);
    free(l->module);
}
