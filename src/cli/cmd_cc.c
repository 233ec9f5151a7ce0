/* SPDX-License-Identifier: MIT */
/*
 * `strobe cc` and `strobe c++`: the compiler wrapper. Runs the real
 * compiler (clang / clang++, or the one named by STROBE_CC / STROBE_CXX)
 * with the user's arguments plus what `strobe run` needs to measure the
 * result with no other step: function entry/exit hooks and debug info,
 * and with clang the basic-block and memory tracing pass (src/cc,
 * docs/bbtrace.md), and for C sources the directive instrumenter
 * (cc_directives.c, docs/instrument.md). It is a drop-in for CC/CXX in
 * existing makefiles, so its own options are ones no compiler has
 * (--trace, --no-directives): every other argument goes to the compiler
 * unchanged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cc_directives.h"
#include "cli/cli.h"
#include "strobe/strobe.h"

const char strobe__cc_help[] = "usage: strobe cc [--trace=bb|bb,mem|func] [--no-blame] [--no-directives] [COMPILER ARGS...]\n"
                               "       strobe c++ [--trace=bb|bb,mem|func] [--no-blame] [COMPILER ARGS...]\n"
                               "\n"
                               "Compiles with clang (strobe cc) or clang++ (strobe c++), else clang-14\n"
                               "(clang++-14) when only that is installed, or with the\n"
                               "compiler named by STROBE_CC (STROBE_CXX for c++; words separated by\n"
                               "blanks, e.g. STROBE_CC='ccache gcc'), adding what `strobe run` needs to\n"
                               "measure the program: function entry/exit hooks and debug info. Use it as\n"
                               "CC=\"strobe cc\" CXX=\"strobe c++\" in existing makefiles; every argument\n"
                               "goes to the compiler unchanged (`strobe help cc` shows this text),\n"
                               "but strobe's own options:\n"
                               "  --trace=bb       record each executed basic block (clang 14 only)\n"
                               "  --trace=bb,mem   and the address of each load and store (the default\n"
                               "                   with clang)\n"
                               "  --trace=func     function entry and exit only (the default, and the only\n"
                               "                   level, with other compilers)\n"
                               "  --no-blame       no blame analysis (see blame)\n"
                               "  --no-directives  compile C sources as they are (see directives)\n"
                               "\n"
                               "directives (strobe cc): a C source whose text mentions a pragma (or, with\n"
                               "-fopenmp, an OpenMP lock call) is first rewritten by `strobe instrument`\n"
                               "into a temporary copy, compiled instead: strobe's region pragmas, OpenMP's\n"
                               "with -fopenmp, tm_atomic and speculative with -fgnu-tm (gcc) become\n"
                               "measured regions (docs/instrument.md). Diagnostics, debug info and\n"
                               "dependency files (-MD) name the original; a malformed directive stops\n"
                               "the compile (FILE:LINE: why, exit status 2).\n"
                               "\n"
                               "blame (clang 14): every source is also analysed for `strobe report --blame`\n"
                               "(docs/blame.md): which variables each statement contributes to, stored in\n"
                               "the object's section .strobe_blame, which is never loaded at run time.\n"
                               "\n"
                               "added flags:\n"
                               "  clang, clang++   -finstrument-functions-after-inlining -g\n"
                               "  other compilers  -finstrument-functions\n"
                               "                   -finstrument-functions-exclude-file-list=/usr/include -g\n"
                               "  (-g only when no -g option other than -g0 is given)\n"
                               "  clang 14         -fpass-plugin=<libdir>/strobe/libstrobe-cc.so (blame, --trace=bb)\n"
                               "  --trace=bb[,mem] when linking, -Wl,--export-dynamic-symbol=strobe_bb_cursor\n"
                               "\n"
                               "exit status: the compiler's; 126 the compiler cannot be executed, 127 it\n"
                               "was not found, 2 STROBE_CC names strobe itself.\n";

/* Set in the compiler's environment: a STROBE_CC that runs `strobe cc`
 * again would otherwise exec itself forever. */
#define ACTIVE_VAR "STROBE_CC_ACTIVE"
/* Tells the pass plugin the level: clang rejects -mllvm options of a pass
 * plugin (they are parsed before the plugin is loaded). */
#define TRACE_VAR "STROBE_CC_TRACE"
/* Switches the plugin's blame analysis on (src/cc/blame.h). */
#define BLAME_VAR "STROBE_CC_BLAME"

/* The LLVM version the plugin is built against; only that clang loads it. */
#ifndef STROBE_CC_LLVM_MAJOR
#define STROBE_CC_LLVM_MAJOR 14
#endif

#define STR_(x) #x
#define STR(x) STR_(x)

/* The compiler when STROBE_CC (STROBE_CXX) names none: clang (clang++),
 * else the clang the plugin is built for, which Debian's clang-14 package
 * installs without the unversioned name. */
static const char *default_compiler(bool cxx)
{
    const char *plain = cxx ? "clang++" : "clang";
    const char *versioned = cxx ? "clang++-" STR(STROBE_CC_LLVM_MAJOR) : "clang-" STR(STROBE_CC_LLVM_MAJOR);
    char *found = NULL;
    const char *pick = strobe__find_program(plain, &found) != 0 && strobe__find_program(versioned, &found) == 0
                           ? versioned
                           : plain;
    free(found);
    return pick;
}

/* True when the compiler's name (its last path component) says clang. */
static bool is_clang(const char *compiler)
{
    const char *base = strrchr(compiler, '/');
    return strstr(base ? base + 1 : compiler, "clang") != NULL;
}

/* True when a versioned clang (clang-15, clang++-16) is not the version
 * the plugin was built for. */
static bool other_clang(const char *compiler)
{
    const char *base = strrchr(compiler, '/');
    const char *v = strstr(base ? base + 1 : compiler, "clang");
    v = v ? strchr(v, '-') : NULL;
    return v && v[1] >= '0' && v[1] <= '9' && atoi(v + 1) != STROBE_CC_LLVM_MAJOR;
}

/* True when the compiler will link (no -c, -S, -E): the executable must
 * then export the cursor, so that libstrobe.so uses the executable's copy
 * (bbtrace.h). */
static bool links(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "-S") == 0 || strcmp(argv[i], "-E") == 0)
            return false;
    return true;
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

enum trace { TRACE_FUNC, TRACE_BB, TRACE_MEM };

/* Takes strobe's options out of argv: --trace (the last one counts),
 * --no-blame and --no-directives. Returns the new argc, or -1 after saying
 * what is wrong. */
static int take_options(const char *cmd, int argc, char **argv, enum trace *level, bool *given,
                        bool *directives, bool *blame)
{
    int n = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-directives") == 0) {
            *directives = false;
            continue;
        }
        if (strcmp(argv[i], "--no-blame") == 0) {
            *blame = false;
            continue;
        }
        if (strncmp(argv[i], "--trace=", 8) != 0) {
            argv[n++] = argv[i];
            continue;
        }
        const char *v = argv[i] + 8;
        if (strcmp(v, "func") == 0)
            *level = TRACE_FUNC;
        else if (strcmp(v, "bb") == 0)
            *level = TRACE_BB;
        else if (strcmp(v, "bb,mem") == 0)
            *level = TRACE_MEM;
        else {
            strobe__cli_say("%s: --trace=%s: not a level (bb, bb,mem or func)", cmd, v);
            return -1;
        }
        *given = true;
    }
    argv[n] = NULL;
    return n;
}

int strobe__run_compiler(char **args, int *err)
{
    static const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD};
    sigset_t stop, old;
    sigemptyset(&stop);
    for (size_t i = 0; i < sizeof stops / sizeof *stops; i++)
        sigaddset(&stop, stops[i]);
    int fail[2];
    if (pipe2(fail, O_CLOEXEC) != 0) {
        *err = errno;
        return -1;
    }
    sigprocmask(SIG_BLOCK, &stop, &old);
    pid_t pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(fail[0]);
        execvp(args[0], args);
        int e = errno;
        if (write(fail[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    close(fail[1]);
    if (pid < 0) {
        *err = errno;
        close(fail[0]);
        return -1;
    }
    /* the exec's errno comes through the pipe, which an exec closes */
    ssize_t got = read(fail[0], err, sizeof *err);
    close(fail[0]);
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            return STROBE_EXIT_FAILURE; /* SIGCHLD ignored: the status is lost */
        /* the compiler's end is a SIGCHLD too, pending while blocked */
        int sig = sigwaitinfo(&stop, NULL);
        if (sig > 0 && sig != SIGCHLD)
            kill(pid, sig);
    }
    if (got == (ssize_t)sizeof *err)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
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
    enum trace level = TRACE_MEM;
    bool given = false, directives = !cxx, blame = true;
    argc = take_options(cmd, argc, argv, &level, &given, &directives, &blame);
    if (argc < 0)
        return STROBE_EXIT_USAGE;
    /* the compiler's words, then the user's arguments (instrumented
     * sources replaced by their copies, and what those need), then ours */
    char *words = strdup(named && *named ? named : default_compiler(cxx));
    char **args = calloc((size_t)argc * (1 + STROBE__CC_ARGS_PER_SOURCE) + STROBE__CC_ARGS_EXTRA +
                             (words ? strlen(words) / 2 : 0) + 10,
                         sizeof *args);
    char *plugin = NULL, *plugin_arg = NULL;
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
    size_t first = n;
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    struct strobe__cc_copies copies = {0};
    int rc = directives ? strobe__cc_directives(cmd, args, &n, first, &copies) : 0;
    if (rc) {
        strobe__cc_directives_done(&copies);
        free(words);
        free(args);
        return rc;
    }
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
    /* the plugin (blame analysis, block tracing) runs in clang 14 only;
     * without it blame is off quietly: other compilers are a choice */
    if (level != TRACE_FUNC || blame) {
        char err[PATH_MAX + 256];
        if (!is_clang(compiler) || other_clang(compiler)) {
            if (given && level != TRACE_FUNC)
                strobe__cli_say("%s: --trace=bb needs clang %d (the compiler is %s): function level only",
                                cmd, STROBE_CC_LLVM_MAJOR, compiler);
            level = TRACE_FUNC;
            blame = false;
        } else if (strobe__find_cc_plugin(&plugin, err, sizeof err) != 0) {
            if (given && level != TRACE_FUNC)
                strobe__cli_say("%s: --trace=bb: %s; function level only", cmd, err);
            level = TRACE_FUNC;
            blame = false;
        } else if (asprintf(&plugin_arg, "-fpass-plugin=%s", plugin) < 0) {
            plugin_arg = NULL;
            level = TRACE_FUNC;
            blame = false;
        } else {
            args[n++] = plugin_arg;
            if (level != TRACE_FUNC && links(argc, argv))
                args[n++] = "-Wl,--export-dynamic-symbol=strobe_bb_cursor";
        }
    }
    args[n] = NULL;
    setenv(ACTIVE_VAR, "1", 1);
    if (level == TRACE_FUNC)
        unsetenv(TRACE_VAR);
    else
        setenv(TRACE_VAR, level == TRACE_BB ? "bb" : "bb,mem", 1);
    if (blame)
        setenv(BLAME_VAR, "1", 1);
    else
        unsetenv(BLAME_VAR);
    int err;
    if (copies.dir) {
        /* the folder outlives the compiler: run it, then remove the folder */
        rc = strobe__run_compiler(args, &err);
        strobe__cc_directives_done(&copies);
        if (rc >= 0) {
            free(plugin_arg);
            free(plugin);
            free(words);
            free(args);
            return rc;
        }
    } else {
        execvp(args[0], args);
        err = errno;
    }
    if (err == ENOENT && !(named && *named))
        strobe__cli_say("%s: %s: not found (install it, or name the compiler in %s)", cmd, args[0], var);
    else
        strobe__cli_say("%s: %s: %s", cmd, args[0], err == ENOENT ? "not found" : strerror(err));
    free(plugin_arg);
    free(plugin);
    free(words);
    free(args);
    return err == ENOENT ? STROBE_EXIT_NOT_FOUND : STROBE_EXIT_CANNOT_EXEC;
}
