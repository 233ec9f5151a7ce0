/* SPDX-License-Identifier: MIT */
/*
 * Offline symbol resolution of function regions with elfutils libdwfl:
 * run-time address -> function name, declaration file:line, module path
 * and module-relative address, using the MODULE records (path + load bias)
 * the runtime wrote. Works for PIE executables and shared libraries.
 */
#ifndef STROBE_ANALYSIS_SYMBOLS_H
#define STROBE_ANALYSIS_SYMBOLS_H

#include <stdbool.h>

#include "analysis/decode.h"

struct strobe__resolved {
    char *name;    /* malloc'd; "0x<addr>" when nothing is known */
    char *file;    /* malloc'd; "" when unknown */
    unsigned line; /* 0 when unknown */
    char *module;  /* malloc'd; "" when the address is in no module */
    uint64_t rel;  /* address minus the module's load bias */
};

/* Resolves every STROBE_REGION_FUNCTION region of D into out[i] (same
 * order as d->regions; entries of other kinds are left zeroed). A module
 * file that cannot be opened (deleted, moved) is not an error: its regions
 * keep a hexadecimal name. Returns 0 or -ENOMEM. */
int strobe__symbols_resolve(const struct strobe__defs *d, struct strobe__resolved *out);

void strobe__resolved_free(struct strobe__resolved *r);

/* NAME as people write it: an Itanium C++ ABI name demangled
 * ("geo::Square::area() const", not _ZNK3geo6Square4areaEv), anything else
 * copied. Returns a malloc'd string, NULL when out of memory. */
char *strobe__readable_name(const char *name);

/* One function at a code address: the address's own function, or one
 * that DWARF says was inlined there. */
struct strobe__code_frame {
    char *name;    /* malloc'd; the module+0xoffset form when no symbol covers the address */
    char *file;    /* malloc'd; "" when unknown */
    unsigned line; /* the address's line in it (for an outer frame of an inline
                      chain: the line of the inlined call); 0 when unknown */
    unsigned col;  /* its column likewise (the inlined call's DW_AT_call_column);
                      0 when unknown */
};

/* What a sampled code address is: its inline chain, innermost first (the
 * function that contains the address in the ELF symbol table last). */
struct strobe__code_loc {
    struct strobe__code_frame *frames; /* malloc'd, nframes >= 1 */
    size_t nframes;
    char *module; /* malloc'd path; "" when the address is in no module */
    uint64_t rel; /* address minus the module's load bias */
};

/* Resolves the code addresses addrs[0..n) of D's process into out[i]. An
 * address is looked up as given: callers pass a return address minus one
 * (the call instruction). A function is named by the ELF symbol whose
 * extent contains the address (never the nearest one before it: stripped
 * code gets "module+0xoffset"), inlined functions by DWARF. Returns 0 or
 * -ENOMEM. */
int strobe__symbols_code(const struct strobe__defs *d, const uint64_t *addrs, size_t n,
                         struct strobe__code_loc *out);
void strobe__code_loc_free(struct strobe__code_loc *l);

/* Whether a module path is the runtime itself (libstrobe.so): its frames
 * between the program's (the wrappers of main, of thread starts, of the
 * calls it interposes) are not the program's code. */
bool strobe__is_runtime_module(const char *path);

/* Names the data objects at run-time addresses addrs[0..n) of D's process
 * by the ELF symbol that contains them ("name", or "name+offset" inside
 * it): names[i] is malloc'd, or NULL when no object symbol covers the
 * address (heap and stack objects, stripped modules). Returns 0 or
 * -ENOMEM. */
int strobe__symbols_name_objects(const struct strobe__defs *d, const uint64_t *addrs, size_t n, char **names);

#endif
