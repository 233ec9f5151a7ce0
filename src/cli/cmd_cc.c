/* SPDX-License-Identifier: MIT */
/*
 * `strobe cc` and `strobe c++`: the compiler wrapper. Runs the real
 * compiler (clang / clang++, or the one named by STROBE_CC / STROBE_CXX)
 * with the user's arguments plus what `strobe run` needs to measure the
 * result with no other step: function entry/exit hooks and debug info.
 * It is a drop-in for CC/CXX in existing makefiles, so it takes no options
 * of its own: every argument goes to the compiler unchanged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "strobe/strobe.h"

const char strobe__cc_help[] = "usage: strobe cc [COMPILER ARGS...]\n"
                               "       strobe c++ [COMPILER ARGS...]\n"
                               "\n"
                               "Compiles with clang (strobe cc) or clang++ (strobe c++), or with the\n"
                               "compiler named by STROBE_CC (STROBE_CXX for c++; words separated by\n"
                               "blanks, e.g. STROBE_CC='ccache gcc'), adding what `strobe run` needs to\n"
                               "measure the program: function entry/exit hooks and debug info. Use it as\n"
                               "CC=\"strobe cc\" CXX=\"strobe c++\" in existing makefiles; every argument\n"
                               "goes to the compiler unchanged (`strobe help cc` shows this text).\n"
                               "\n"
                               "added flags:\n"
                               "  clang, clang++   -finstrument-functions-after-inlining -g\n"
                               "  other compilers  -finstrument-functions\n"
                               "                   -finstrument-functions-exclude-file-list=/usr/include -g\n"
                               "  (-g only when no -g option other than -g0 is given)\n"
                               "\n"
                               "exit status: the compiler's; 126 the compiler cannot be executed, 127 it\n"
                               "was not found, 2 STROBE_CC names strobe itself.\n";

/* Set in the compiler's environment: a STROBE_CC that runs `strobe cc`
 * again would otherwise exec itself forever. */
#define ACTIVE_VAR "STROBE_CC_ACTIVE"

/* True when the compiler's name (its last path component) says clang. */
static bool is_clang(const char *compiler)
{
    const char *base = strrchr(compiler, '/');
    return strstr(base ? base + 1 : compiler, "clang") != NULL;
}

/* True when the user already asks for debug info (-g, -g3, -ggdb, ...). */
static bool has_debug(int argc, char **argv)
{
    bool on = false;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "-g", 2) == 0)
            on = strcmp(argv[i], "-g0") != 0;
    return on;
}

int strobe__cmd_cc(int argc, char **argv)
{
    bool cxx = strcmp(argv[0], "c++") == 0;
    const char *cmd = cxx ? "c++" : "cc";
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(strobe__cc_help, stdout);
        return 0;
    }
    const char *var = cxx ? "STROBE_CXX" : "STROBE_CC";
    const char *named = getenv(var);
    if (getenv(ACTIVE_VAR)) {
        strobe__cli_say("%s: %s runs strobe %s again (name the real compiler in %s)", cmd, var, cmd, var);
        return STROBE_EXIT_USAGE;
    }
    /* the compiler's words, then the user's arguments, then ours */
    char *words = strdup(named && *named ? named : cxx ? "clang++" : "clang");
    char **args = calloc((size_t)argc + strlen(words) / 2 + 8, sizeof *args);
    if (!words || !args) {
        free(words);
        free(args);
        strobe__cli_say("%s: out of memory", cmd);
        return STROBE_EXIT_FAILURE;
    }
    size_t n = 0;
    for (char *save = NULL, *w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
        args[n++] = w;
    if (n == 0) {
        free(words);
        free(args);
        strobe__cli_say("%s: %s is blank (name the compiler, e.g. %s=gcc)", cmd, var, var);
        return STROBE_EXIT_USAGE;
    }
    const char *compiler = args[n - 1]; /* "ccache gcc": gcc decides the flags */
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    if (is_clang(compiler)) {
        /* after inlining: the calls that remain in the code, so an inlined
         * accessor of a C++ header costs nothing, as in the program the
         * user measures without strobe */
        args[n++] = "-finstrument-functions-after-inlining";
    } else {
        /* GCC instruments inlined bodies too: leave the system headers'
         * inline functions (libstdc++'s templates) alone */
        args[n++] = "-finstrument-functions";
        args[n++] = "-finstrument-functions-exclude-file-list=/usr/include";
    }
    if (!has_debug(argc, argv))
        args[n++] = "-g";
    args[n] = NULL;
    setenv(ACTIVE_VAR, "1", 1);
    execvp(args[0], args);
    int err = errno;
    if (err == ENOENT && !(named && *named))
        strobe__cli_say("%s: %s: not found (install it, or name the compiler in %s)", cmd, args[0], var);
    else
        strobe__cli_say("%s: %s: %s", cmd, args[0], err == ENOENT ? "not found" : strerror(err));
    free(words);
    free(args);
    return err == ENOENT ? STROBE_EXIT_NOT_FOUND : STROBE_EXIT_CANNOT_EXEC;
}
