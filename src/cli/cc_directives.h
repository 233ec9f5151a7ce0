/* SPDX-License-Identifier: MIT */
/*
 * The directive step of `strobe cc` (cmd_cc.c): every C source of the
 * command line that holds a directive is rewritten by the directive
 * instrumenter (src/instrument, docs/instrument.md) into a private
 * temporary folder, and the compiler is given the copy instead.
 */
#ifndef STROBE_CLI_CC_DIRECTIVES_H
#define STROBE_CLI_CC_DIRECTIVES_H

#include <stddef.h>

/* The copies made for one compiler command. */
struct strobe__cc_copies {
    char *dir; /* the temporary folder (NULL: none made) */
    struct strobe__cc_copy {
        char *orig, *copy;
    } * files;
    size_t n;
    char **deps; /* dependency files the compiler will write (-MD, -MMD, -MF) */
    size_t ndeps;
    char **owned; /* argument strings made here */
    size_t nowned;
};

/* Arguments one call may add to the command line at most, per source. */
#define STROBE__CC_ARGS_PER_SOURCE 2
#define STROBE__CC_ARGS_EXTRA 2

/* Replaces each C source among args[first..*n) that holds a directive by
 * its instrumented copy, and adds what the copies need (the original's
 * folder for quoted includes, strobe's include folder); args has room for
 * STROBE__CC_ARGS_PER_SOURCE per argument and STROBE__CC_ARGS_EXTRA more.
 * Returns 0, or an exit status after saying what is wrong in one line
 * (a malformed directive: FILE:LINE: why). */
int strobe__cc_directives(const char *cmd, char **args, size_t *n, size_t first, struct strobe__cc_copies *c);

/* After the compiler: dependency files name the originals instead of the
 * copies; the folder is removed. */
void strobe__cc_directives_done(struct strobe__cc_copies *c);

#endif
