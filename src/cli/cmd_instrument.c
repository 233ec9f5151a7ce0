/* SPDX-License-Identifier: MIT */
/*
 * `strobe instrument`: the directive instrumenter (src/instrument) on one
 * file, with the compiler arguments after `--` for libclang's parse.
 */
#include <string.h>

#include "cli/cli.h"
#include "strobe/strobe.h"
#ifdef STROBE_HAVE_INSTRUMENT
#include "instrument/instrument.h"
#endif

const char strobe__instrument_help[] =
    "usage: strobe instrument FILE.c -o OUT.c [-- COMPILER-ARGS...]\n"
    "\n"
    "Rewrites FILE.c into OUT.c with its directives turned into measured regions\n"
    "(docs/instrument.md):\n"
    "  #pragma strobe region begin(NAME) ... #pragma strobe region end(NAME)\n"
    "  #pragma strobe region(NAME)   the next statement, however it is left\n"
    "  #pragma strobe off / on       the directives in between are not measured\n"
    "  #pragma omp ...               with -fopenmp: every OpenMP construct, POMP2-like\n"
    "                                (for GCC's libgomp, which has no OMPT)\n"
    "  #pragma tm_atomic [safe_mode] with -fgnu-tm (gcc): a transaction on strobe's STM\n"
    "  #pragma speculative for|sections|section\n"
    "                                with -fgnu-tm: strobe's speculative execution\n"
    "and the same as _Pragma(\"...\") or from a macro. The file is parsed by libclang\n"
    "with COMPILER-ARGS (include paths, definitions) for exact statement extents.\n"
    "Every line of OUT.c keeps its number and OUT.c says it is FILE.c (#line), so\n"
    "diagnostics, debuggers and strobe's reports name the original. OUT.c includes\n"
    "<strobe/strobe.h> and runs without strobe's runtime as FILE.c does; a\n"
    "quoted #include of FILE.c's folder needs -I that folder when OUT.c is\n"
    "elsewhere.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT.c  the file written (all or nothing)\n"
    "  -h, --help          show this help\n"
    "\n"
    "exit status: 0 success, 1 FILE.c cannot be read or parsed or OUT.c not\n"
    "written, 2 usage error or a malformed or refused directive (FILE:LINE: why).\n";

static const struct option options[] = {
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int strobe__cmd_instrument(int argc, char **argv)
{
    /* strobe's own arguments end at `--`: what follows is the compiler's,
     * options included, and getopt never sees it */
    int dd = 1;
    while (dd < argc && strcmp(argv[dd], "--") != 0)
        dd++;
    const char *out = NULL;
    int c;
    while ((c = strobe__cli_getopt("instrument", dd, argv, ":ho:", options)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg)
                return strobe__cli_usage_error("instrument", "-o: empty file name");
            out = optarg;
            break;
        case 'h':
            fputs(strobe__instrument_help, stdout);
            return 0;
        default:
            return STROBE_EXIT_USAGE;
        }
    }
    if (optind >= dd)
        return strobe__cli_usage_error("instrument", "missing FILE.c");
    const char *in = argv[optind];
    if (optind + 1 < dd)
        return strobe__cli_usage_error(
            "instrument", "unexpected argument '%s' (compiler arguments go after --)", argv[optind + 1]);
    if (!out)
        return strobe__cli_usage_error("instrument", "missing -o OUT.c");
#ifdef STROBE_HAVE_INSTRUMENT
    int nargs = dd < argc ? argc - dd - 1 : 0;
    struct strobe_errbuf eb = {""};
    int rc = strobe__instrument_file(in, out, (const char *const *)argv + dd + 1, nargs, &eb);
    if (rc) {
        strobe__cli_say("instrument: %s", eb.msg[0] ? eb.msg : strobe_strerror(rc));
        return rc == STROBE_ERR_SYNTAX ? STROBE_EXIT_USAGE : STROBE_EXIT_FAILURE;
    }
    return 0;
#else
    strobe__cli_say(
        "instrument: not available: strobe was built without libclang 14 (Debian libclang-14-dev)");
    return STROBE_EXIT_FAILURE;
#endif
}
