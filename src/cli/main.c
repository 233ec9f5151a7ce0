/* SPDX-License-Identifier: MIT */
/*
 * The `strobe` command: dispatches to its subcommands (cc, c++, instrument, run,
 * record, report, export, taskgraph, merge, ls, ctl, petra) and answers --help, --version and `strobe help CMD`. See
 * docs/cli.md for the user documentation.
 */
#include <string.h>

#include "cli/cli.h"
#include "common/format.h"
#include "strobe/strobe.h"

static const char main_help[] =
    "usage: strobe [--help | --version] COMMAND [ARGS...]\n"
    "\n"
    "Measures parallel programs and analyses what was recorded.\n"
    "\n"
    "commands:\n"
    "  cc, c++  compile with clang (or $STROBE_CC, $STROBE_CXX) ready to be measured\n"
    "  instrument  rewrite a C file's strobe directives (#pragma strobe region) into\n"
    "           measured regions\n"
    "  blame-prep  show the variables the blame analysis charges for each line of a\n"
    "           source file (strobe cc runs it; strobe report --blame uses it)\n"
    "  run      run a program under the strobe runtime, write an experiment directory\n"
    "  record   sample a running process (--pid), write an experiment directory\n"
    "  report   print the report of an experiment (text, JSON or a self-contained HTML page)\n"
    "  export   write an experiment as OTF2, Chrome, Perfetto, Cube4, pprof or Paraver\n"
    "  taskgraph  the task graph of an experiment: critical path, parallelism,\n"
    "           lock contention, barrier imbalance; JSON or Graphviz DOT\n"
    "  merge    put experiments of several hosts or runs into one, clocks aligned\n"
    "  ls       list the metric sets a strobed serves, with values\n"
    "  ctl      control a running strobed: add and remove samplers, stores, producers\n"
    "  petra    read the heap of strobed's petra store: latest values and history\n"
    "  help     show the help of a command: strobe help COMMAND\n"
    "\n"
    "Run 'strobe COMMAND --help' for the options of a command.\n";

static const struct command {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"run", strobe__cmd_run, strobe__run_help},
    {"record", strobe__cmd_record, strobe__record_help},
    {"report", strobe__cmd_report, strobe__report_help},
    {"export", strobe__cmd_export, strobe__export_help},
    {"ls", strobe__cmd_ls, strobe__ls_help},
    {"petra", strobe__cmd_petra, strobe__petra_help},
    {"ctl", strobe__cmd_ctl, strobe__ctl_help},
    {"taskgraph", strobe__cmd_taskgraph, strobe__taskgraph_help},
    {"instrument", strobe__cmd_instrument, strobe__instrument_help},
    {"blame-prep", strobe__cmd_blame_prep, strobe__blame_prep_help},
    {"merge", strobe__cmd_merge, strobe__merge_help},
    {"cc", strobe__cmd_cc, strobe__cc_help},
    {"c++", strobe__cmd_cc, strobe__cc_help},
};

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int help(int argc, char **argv)
{
    if (argc < 2) {
        fputs(main_help, stdout);
        return 0;
    }
    if (argc > 2) {
        strobe__cli_say("help: unexpected argument '%s' (see 'strobe --help')", argv[2]);
        return STROBE_EXIT_USAGE;
    }
    const struct command *c = find_command(argv[1]);
    if (!c) {
        strobe__cli_say("help: unknown command '%s' (see 'strobe --help')", argv[1]);
        return STROBE_EXIT_USAGE;
    }
    fputs(c->help, stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(main_help, stderr);
        return STROBE_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return help(1, argv + 1);
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("strobe %s (experiment format %u)\n", STROBE_VERSION_STRING, STROBE_FORMAT_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0)
        return help(argc - 1, argv + 1);
    const struct command *c = find_command(cmd);
    if (!c) {
        if (cmd[0] == '-')
            strobe__cli_say("unknown option '%s' (see 'strobe --help')", cmd);
        else
            strobe__cli_say("unknown command '%s' (see 'strobe --help')", cmd);
        return STROBE_EXIT_USAGE;
    }
    /* subcommands parse argv[1..]: their argv[0] is the command name */
    int rc = c->fn(argc - 1, argv + 1);
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        strobe__cli_say("%s: write error on standard output", cmd);
        return STROBE_EXIT_FAILURE;
    }
    return rc;
}
