/* SPDX-License-Identifier: MIT */
/*
 * The blame tables of a module: the text units of its ELF section
 * .strobe_blame (docs/formats/blame-table.md), checked and merged into one
 * in-memory table. IDs of the units are renumbered into the table's own
 * (files become distinct paths), and locs and calls are sorted over all
 * units so a location is found by binary search; several units may hold
 * the same key (an inline function of a header), a lookup then gives the
 * union. Used by the attribution (blame.h).
 */
#ifndef STROBE_ANALYSIS_BLAME_TABLE_H
#define STROBE_ANALYSIS_BLAME_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/experiment.h"
#include "analysis/keymap.h"

/* The format's major version this reader understands. */
#define STROBE__BLAME_MAJOR 1

/* A variable's KIND. */
enum strobe__blame_kind {
    STROBE__BLAME_LOCAL,
    STROBE__BLAME_PARAM,
    STROBE__BLAME_GLOBAL,
    STROBE__BLAME_HEAP,
    STROBE__BLAME_POINTEE,
    STROBE__BLAME_FIELD,
    STROBE__BLAME_ELEMENT,
    STROBE__BLAME_RETURN,
};

/* A variable's EXIT (or a bind's): K >= 0 is parameter K's pointee (pK),
 * STROBE__BLAME_EXIT_THROUGH(K) what a pointer stored there points to
 * (pK*). */
#define STROBE__BLAME_EXIT_NONE (-1)
#define STROBE__BLAME_EXIT_RET (-2)
#define STROBE__BLAME_EXIT_GLOBAL (-3)
#define STROBE__BLAME_EXIT_THROUGH(k) (-4 - (int32_t)(k))
/* K of a pK* exit, -1 for any other */
#define STROBE__BLAME_EXIT_THROUGH_K(e) ((e) <= -4 ? -4 - (e) : -1)

#define STROBE__BLAME_NKINDS 8

/* "local", "param", ... (inline: the report has no code of the analysis) */
static inline const char *strobe__blame_kind_name(int kind)
{
    static const char *const names[STROBE__BLAME_NKINDS] = {"local",   "param", "global",  "heap",
                                                            "pointee", "field", "element", "return"};
    return kind >= 0 && kind < STROBE__BLAME_NKINDS ? names[kind] : "?";
}

/* Strings are offsets into the table's strtab. */
struct strobe__blame_func {
    uint32_t name, path; /* path: index into paths */
    unsigned line;
};

struct strobe__blame_var {
    uint32_t func;   /* STROBE_NONE: a global */
    int kind;        /* enum strobe__blame_kind */
    int32_t exit;    /* STROBE__BLAME_EXIT_* or K */
    uint32_t parent; /* display parent, STROBE_NONE */
    uint32_t name, type;
    uint32_t path; /* STROBE_NONE when unknown */
    unsigned line;
};

/* A var set: count vars in the table's sets pool from `set` on, ascending. */
struct strobe__blame_loc {
    uint32_t path;
    unsigned line, col;
    uint32_t set, nset;
};

struct strobe__blame_call {
    uint32_t path;
    unsigned line, col;
    uint32_t func;
    uint32_t callee; /* STROBE_NONE: indirect */
    bool spawn;
    uint32_t first_bind, nbind;
};

struct strobe__blame_bind {
    int32_t exit; /* STROBE__BLAME_EXIT_RET or K */
    uint32_t set, nset;
};

struct strobe__blame_table {
    char *strtab; /* NUL-terminated strings */
    size_t strtab_len, strtab_cap;
    uint32_t *paths; /* distinct source paths (strtab offsets) */
    size_t npaths, paths_cap;
    struct strobe__keymap path_ids; /* path -> index into paths */
    struct strobe__blame_func *funcs;
    size_t nfuncs, funcs_cap;
    struct strobe__blame_var *vars;
    size_t nvars, vars_cap;
    uint32_t *sets;
    size_t nsets, sets_cap;
    struct strobe__blame_loc *locs; /* by (path, line, col), then unit order */
    size_t nlocs, locs_cap;
    struct strobe__blame_call *calls; /* likewise */
    size_t ncalls, calls_cap;
    struct strobe__blame_bind *binds;
    size_t nbinds, binds_cap;
    size_t nunits;   /* units in use */
    char **warnings; /* units skipped for their major version, one line each */
    size_t nwarnings, warnings_cap;
};

static inline const char *strobe__blame_str(const struct strobe__blame_table *t, uint32_t off)
{
    return t->strtab + off;
}

/* Parses the section bytes[0..n) of MODULE (as messages name it). Returns
 * 0, -ENOMEM, or STROBE_ERR_FORMAT when a unit breaks a check of the
 * format (eb: "MODULE: .strobe_blame offset N: RECORD: FIELD ..."): *out
 * then holds the units before it, which stay in use. *out is NULL only on
 * -ENOMEM. */
int strobe__blame_table_parse(const void *bytes, size_t n, const char *module,
                              struct strobe__blame_table **out, struct strobe_errbuf *eb);

/* Reads the section of the ELF file PATH (libelf) and parses it. *out is
 * NULL, and 0 returned, when the file cannot be read as ELF or has no
 * section: no table. Otherwise as strobe__blame_table_parse. */
int strobe__blame_table_read(const char *path, struct strobe__blame_table **out, struct strobe_errbuf *eb);

void strobe__blame_table_free(struct strobe__blame_table *t);

/* The index of source PATH in t->paths, or STROBE_NONE. */
uint32_t strobe__blame_table_path(const struct strobe__blame_table *t, const char *path);

/* The entries of (path, line): *first is the first index into t->locs
 * (t->calls), the count is returned (0: none). */
size_t strobe__blame_table_line_locs(const struct strobe__blame_table *t, uint32_t path, unsigned line,
                                     size_t *first);
size_t strobe__blame_table_line_calls(const struct strobe__blame_table *t, uint32_t path, unsigned line,
                                      size_t *first);

/* The variables at (path, line, col): the union of the sets of the entries
 * with that column, or of all the line's entries when col is 0 or no entry
 * has it; into *set (a growable array of *cap, ascending), *n its length.
 * Returns 0 or -ENOMEM. */
int strobe__blame_table_find_loc(const struct strobe__blame_table *t, uint32_t path, unsigned line,
                                 unsigned col, uint32_t **set, size_t *n, size_t *cap);

/* The calls at (path, line, col) to CALLEE (indirect calls never match):
 * those with that column, or all of the line's when col is 0 or none has
 * it. Returns the index into t->calls of the first one after `after`
 * (SIZE_MAX: from the start), SIZE_MAX when there is none. */
size_t strobe__blame_table_next_call(const struct strobe__blame_table *t, uint32_t path, unsigned line,
                                     unsigned col, const char *callee, size_t after);

/* Merges the ascending set b[0..nb) into the ascending *set (length *n,
 * capacity *cap). Returns 0 or -ENOMEM. */
int strobe__u32set_union(uint32_t **set, size_t *n, size_t *cap, const uint32_t *b, size_t nb);

/* The function of t whose definition in PATH is the last at or before
 * LINE, STROBE_NONE when none. */
uint32_t strobe__blame_table_func_at(const struct strobe__blame_table *t, uint32_t path, unsigned line);

#endif
