/* SPDX-License-Identifier: MIT */
/*
 * The C file `strobe instrument` rewrites, as libclang sees it: its bytes,
 * its tokens, the directives in it, the extents of its statements and
 * functions; and what the rewrite does to it: edits at byte offsets (none
 * of which adds a line) and the region descriptors the prologue declares.
 * The directive families (instrument.c: strobe's own, omp.c: OpenMP,
 * spec.c: tm_atomic and speculative) plan edits through this interface;
 * source.c writes the result.
 */
#ifndef STROBE_INSTRUMENT_SOURCE_H
#define STROBE_INSTRUMENT_SOURCE_H

#include <clang-c/Index.h>
#include <stdbool.h>
#include <stddef.h>

#include "analysis/experiment.h" /* struct strobe_errbuf */

#define STROBE__INST_TEXT_MAX 1024

enum strobe__inst_family {
    STROBE__INST_STROBE,      /* #pragma strobe ... */
    STROBE__INST_OMP,         /* #pragma omp ... (instrumented with -fopenmp) */
    STROBE__INST_TM,          /* #pragma tm_atomic [safe_mode] */
    STROBE__INST_SPECULATIVE, /* #pragma speculative for|sections|section */
};

/* A directive of the file: its bytes [off, end) (a `#pragma` line with its
 * continuations, or a `_Pragma("...")`), and its words after the family's
 * name ("parallel for num_threads ( 4 )"; tokens joined by one space). */
struct strobe__inst_pragma {
    unsigned off, end, line;
    enum strobe__inst_family family;
    char text[STROBE__INST_TEXT_MAX];
};

/* [start, end) of a statement or a function, in bytes of the file. */
struct strobe__inst_span {
    unsigned start, end;
};

/* A call of a function of s->watch: its extent and which name. */
struct strobe__inst_call {
    unsigned start, end, line;
    size_t name;
};

struct strobe__inst_edit;
struct strobe__inst_desc;
struct strobe__inst_func;

struct strobe__inst_src {
    const char *path;
    CXTranslationUnit tu;
    CXFile file;
    const char *buf;
    size_t len;
    CXToken *toks;
    unsigned ntoks;
    struct strobe__inst_pragma *pragmas;
    size_t npragmas, pcap;
    struct strobe__inst_span *stmts; /* by start, then longest first */
    size_t nstmts, scap;
    struct strobe__inst_func *funcs; /* function definitions, in file order */
    size_t nfuncs, fcap;
    const char *const *watch;        /* names of functions whose calls are wanted (NULL-terminated), */
    struct strobe__inst_call *calls; /* ... and those calls, in file order */
    size_t ncalls, ccap;
    struct strobe__inst_edit *edits;
    size_t nedits, ecap;
    struct strobe__inst_desc *descs; /* the region descriptors, numbered from 1 */
    size_t ndescs, dcap;
    bool omp;  /* parsed for -fopenmp: the prologue includes <omp.h> */
    bool spec; /* the prologue declares the speculative helpers */
    struct strobe_errbuf *eb;
    int rc; /* the first error (sticky) */
};

/* Parses `path` with the compiler arguments (after the family's options
 * are taken out of them by the caller) and collects its tokens, directives,
 * statements, functions and the calls of s->watch (set before). Returns 0
 * or a negative code (*eb says why). */
int strobe__inst_src_open(struct strobe__inst_src *s, CXIndex idx, const char *path, const char *const *args,
                          int nargs, struct strobe_errbuf *eb);
void strobe__inst_src_close(struct strobe__inst_src *s);

/* Records the first error, "FILE:LINE: what" (a malformed directive: exit
 * status 2), and returns it. */
int strobe__inst_fail(struct strobe__inst_src *s, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The statement that begins first at or after byte `off` and is not inside
 * another one that also does (the whole `for`, not its init), with its end
 * past a closing `;`. NULL when the function's block ends first. */
const struct strobe__inst_span *strobe__inst_stmt_after(struct strobe__inst_src *s, unsigned off,
                                                        struct strobe__inst_span *out);

/* Whether byte `off` lies between `#pragma strobe off` and `on` (the
 * directives and calls there are not instrumented). */
bool strobe__inst_excluded(const struct strobe__inst_src *s, unsigned off);

/* The token `)` that closes the header of the for loop whose `for` is
 * token t; 0 when t does not begin a for loop. */
unsigned strobe__inst_for_header(struct strobe__inst_src *s, unsigned t);

/* The name of the function whose body holds byte `off` ("" outside), and
 * the byte where its definition begins (0 outside). */
const char *strobe__inst_function_at(const struct strobe__inst_src *s, unsigned off);
unsigned strobe__inst_function_start(const struct strobe__inst_src *s, unsigned off);

/* Tokens: the index of the first token at or after byte `off` (ntoks when
 * none), a token's bytes [start, end), and whether it is `word`. */
unsigned strobe__inst_token_at(struct strobe__inst_src *s, unsigned off);
unsigned strobe__inst_token_start(struct strobe__inst_src *s, unsigned i);
unsigned strobe__inst_token_end(struct strobe__inst_src *s, unsigned i);
bool strobe__inst_token_is(struct strobe__inst_src *s, unsigned i, const char *word);

/* A new region descriptor, named `name`, at line `line` of the file,
 * which the code reaches as `strobe__inst_r<N>()`; returns N (0 on
 * error). */
unsigned strobe__inst_region(struct strobe__inst_src *s, const char *name, unsigned line);

/* Edits. Text at byte `at`, replacing [at, at + skip). At one offset,
 * closing text (the end of a construct) comes before opening text, inner
 * constructs close first and outer ones open first: `depth` is the byte
 * offset of the directive the text belongs to. */
enum strobe__inst_side { STROBE__INST_CLOSE, STROBE__INST_OPEN };
int strobe__inst_edit(struct strobe__inst_src *s, unsigned at, unsigned skip, enum strobe__inst_side side,
                      unsigned depth, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Replaces directive p by `code` and the newlines p spanned, so that no
 * line moves. */
int strobe__inst_replace(struct strobe__inst_src *s, const struct strobe__inst_pragma *p, const char *code);

/* Appends `str` as the contents of a C string literal (escaped) to
 * buf[0..len), which stays terminated; false when it does not fit. */
bool strobe__inst_quote(char *buf, size_t len, const char *str);

/* Writes the instrumented file to `out` (all or nothing). */
int strobe__inst_write(struct strobe__inst_src *s, const char *out);

#endif
