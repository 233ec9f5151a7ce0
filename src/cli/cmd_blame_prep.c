/* SPDX-License-Identifier: MIT */
/*
 * `strobe blame-prep`: shows what the blame analysis of `strobe cc`
 * (src/cc/blame.cpp, docs/blame.md) finds in one source file, without
 * building anything: clang compiles it to /dev/null with strobe's plugin,
 * which writes the listing (or the raw unit) to a temporary file this
 * command prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "strobe/strobe.h"

const char strobe__blame_prep_help[] =
    "usage: strobe blame-prep [--raw] FILE [COMPILER-ARGS...]\n"
    "\n"
    "Runs strobe's blame analysis (docs/blame.md) on one C or C++ source file\n"
    "and prints, per variable, the source lines its blame holds, then, per\n"
    "line, the variables charged for a sample taken there:\n"
    "  var   FUNCTION:NAME  TYPE  KIND  FILE:LINE,LINE,...\n"
    "  line  FILE:LINE      FUNCTION:NAME ...\n"
    "(TAB-separated; globals have no FUNCTION:). The file is compiled by clang 14\n"
    "(clang++ for .cc, .cpp, .cxx, .C) with COMPILER-ARGS (include paths,\n"
    "definitions, -fopenmp) and -g, into nothing. `strobe cc` runs the same\n"
    "analysis on every file it compiles with clang and stores the result in the\n"
    "object (section .strobe_blame, docs/formats/blame-table.md).\n"
    "\n"
    "options:\n"
    "  --raw       print the unit as stored in the object instead\n"
    "  -h, --help  show this help\n"
    "\n"
    "exit status: 0 success, 1 the compiler failed or the analysis could not run,\n"
    "2 usage error.\n";

/* C++ by its suffix, as clang decides. */
static bool is_cxx(const char *file)
{
    const char *dot = strrchr(file, '.');
    return dot && (strcmp(dot, ".cc") == 0 || strcmp(dot, ".cpp") == 0 || strcmp(dot, ".cxx") == 0 ||
                   strcmp(dot, ".C") == 0 || strcmp(dot, ".c++") == 0);
}

/* Copies file f to stdout; false when nothing was in it. */
static bool print_file(FILE *f)
{
    char buf[8192];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        fwrite(buf, 1, n, stdout);
        total += n;
    }
    return total > 0;
}

int strobe__cmd_blame_prep(int argc, char **argv)
{
    /* --raw may come anywhere: no compiler has it */
    bool raw = false;
    int n_args = 1;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "-h") == 0 || strcmp(argv[k], "--help") == 0) {
            fputs(strobe__blame_prep_help, stdout);
            return 0;
        }
        if (strcmp(argv[k], "--raw") == 0)
            raw = true;
        else
            argv[n_args++] = argv[k];
    }
    argc = n_args;
    int i = 1;
    if (i < argc && argv[i][0] == '-')
        return strobe__cli_usage_error("blame-prep", "%s: FILE must come first", argv[i]);
    if (i >= argc)
        return strobe__cli_usage_error("blame-prep", "FILE: missing");
    const char *file = argv[i++];
    for (int k = i; k < argc; k++)
        if (strcmp(argv[k], "-g0") == 0)
            return strobe__cli_usage_error("blame-prep", "-g0: the analysis needs debug information");
    if (access(file, R_OK) != 0) {
        strobe__cli_say("blame-prep: %s: %s", file, strerror(errno));
        return STROBE_EXIT_FAILURE;
    }
    char err[4096], *plugin = NULL, *plugin_arg = NULL, *setting = NULL;
    if (strobe__find_cc_plugin(&plugin, err, sizeof err) != 0) {
        strobe__cli_say("blame-prep: %s", err);
        return STROBE_EXIT_FAILURE;
    }
    const char *tmpdir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/strobe-blame-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemp(path);
    char **args = calloc((size_t)argc + 8, sizeof *args);
    int rc = STROBE_EXIT_FAILURE;
    if (fd < 0 || !args || asprintf(&plugin_arg, "-fpass-plugin=%s", plugin) < 0 ||
        asprintf(&setting, "%s:%s", raw ? "1" : "lines", path) < 0) {
        strobe__cli_say("blame-prep: %s", fd < 0 ? strerror(errno) : "out of memory");
        goto out;
    }
    size_t n = 0;
    args[n++] = is_cxx(file) ? "clang++-14" : "clang-14";
    args[n++] = "-c";
    args[n++] = (char *)file;
    args[n++] = "-o";
    args[n++] = "/dev/null";
    for (int k = i; k < argc; k++)
        args[n++] = argv[k];
    args[n++] = "-g";
    args[n++] = plugin_arg;
    setenv("STROBE_CC_BLAME", setting, 1);
    int why;
    int st = strobe__run_compiler(args, &why);
    if (st < 0) {
        strobe__cli_say("blame-prep: %s: %s", args[0], strerror(why));
        goto out;
    }
    if (st != 0) {
        strobe__cli_say("blame-prep: %s: %s exited with status %d", file, args[0], st);
        goto out;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        strobe__cli_say("blame-prep: %s", strerror(errno));
        goto out;
    }
    fd = -1;
    if (!print_file(f) && !raw)
        printf("# %s: no variable is written in a function with debug information\n", file);
    fclose(f);
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    unlink(path);
    free(setting);
    free(plugin_arg);
    free(plugin);
    free(args);
    return rc;
}
