/* SPDX-License-Identifier: MIT */
/*
 * `strobe taskgraph`: builds the task graph of an experiment
 * (src/analysis/taskgraph.h) and prints its analyses as text, or writes
 * the graph with them as JSON or Graphviz DOT while it is built
 * (src/report/taskgraph.h). A file given with -o is written all or
 * nothing (export/output.h).
 */
#include <errno.h>
#include <string.h>

#include "analysis/experiment.h"
#include "analysis/taskgraph.h"
#include "cli/cli.h"
#include "export/output.h"
#include "report/report.h"
#include "report/taskgraph.h"
#include "strobe/strobe.h"

const char strobe__taskgraph_help[] =
    "usage: strobe taskgraph DIR [--format text|json|dot] [-o FILE] [--top N]\n"
    "\n"
    "Builds the task graph of the experiment in DIR (docs/taskgraph.md): tasks\n"
    "are each thread's work between two synchronization events, edges are\n"
    "program order, thread create and join, unlock -> next lock of the same\n"
    "object, barrier arrivals -> departures and signal -> woken wait, ordered by\n"
    "the tickets `strobe run --taskgraph` records. Prints the analyses: the\n"
    "critical path (its length, tasks and regions), parallelism (work / span and\n"
    "over time), lock contention per object and acquiring call path (with how\n"
    "often on the critical path) and barrier imbalance per episode; for code\n"
    "built with `strobe cc --trace=bb,mem` also the blocks and memory accesses of\n"
    "each task, the bytes each thread read of what another wrote (sharing) and\n"
    "the cache lines two threads wrote at once at different addresses (false\n"
    "sharing, with both source lines).\n"
    "\n"
    "options:\n"
    "  --format FMT        text: the analyses (default); json: the tasks, edges and\n"
    "                      analyses (docs/formats/taskgraph.md); dot: the graph for\n"
    "                      Graphviz (`dot -Tsvg`)\n"
    "  -o, --output FILE   write to FILE instead of standard output (all or nothing)\n"
    "  --top N             text: rows per table and critical-path tasks shown;\n"
    "                      default 20, 0 = all\n"
    "  -h, --help          show this help\n"
    "\n"
    "exit status: 0 success, 1 the experiment cannot be read or FILE not written\n"
    "(a partial FILE is removed), 2 usage error.\n";

enum { OPT_FORMAT = 256, OPT_TOP };

static const struct option options[] = {
    {"format", required_argument, NULL, OPT_FORMAT},
    {"output", required_argument, NULL, 'o'},
    {"top", required_argument, NULL, OPT_TOP},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Builds the graph into OUT in `format` (0: the text analyses). */
static int write_graph(FILE *out, const struct strobe_experiment *exp, int format, size_t top,
                       struct strobe_errbuf *eb)
{
    struct strobe__tg_writer tw;
    struct strobe_tg_sink sink;
    struct strobe_taskgraph *g = NULL;
    int rc = format ? strobe__tg_writer_begin(&tw, out, exp, format, &sink) : 0;
    if (rc)
        return strobe__error(eb, rc, "temporary file: %s", strobe_strerror(rc));
    rc = strobe_taskgraph_build(exp, format ? &sink : NULL, &g, eb);
    if (format) {
        int wrc = strobe__tg_writer_end(&tw, rc ? NULL : g);
        rc = rc ? rc : wrc;
    } else if (rc == 0) {
        rc = strobe_report_taskgraph_text(out, exp, g, top);
    }
    strobe_taskgraph_free(g);
    return rc;
}

int strobe__cmd_taskgraph(int argc, char **argv)
{
    int format = 0;
    size_t top = STROBE_REPORT_TOP_DEFAULT;
    const char *out_path = NULL;
    int c;
    while ((c = strobe__cli_getopt("taskgraph", argc, argv, ":ho:", options)) != -1) {
        switch (c) {
        case OPT_FORMAT:
            if (strcmp(optarg, "text") == 0)
                format = 0;
            else if (strcmp(optarg, "json") == 0)
                format = STROBE_TG_FORMAT_JSON;
            else if (strcmp(optarg, "dot") == 0)
                format = STROBE_TG_FORMAT_DOT;
            else
                return strobe__cli_usage_error("taskgraph",
                                               "--format: unknown format '%s' (text, json or dot)", optarg);
            break;
        case 'o':
            if (!*optarg)
                return strobe__cli_usage_error("taskgraph", "-o: empty file name");
            out_path = optarg;
            break;
        case OPT_TOP:
            if (strobe__cli_parse_size(optarg, &top) != 0)
                return strobe__cli_usage_error("taskgraph", "--top: '%s' is not a count (0 = all)", optarg);
            break;
        case 'h':
            fputs(strobe__taskgraph_help, stdout);
            return 0;
        default:
            return STROBE_EXIT_USAGE;
        }
    }
    if (optind >= argc)
        return strobe__cli_usage_error("taskgraph", "missing experiment directory");
    if (optind + 1 < argc)
        return strobe__cli_usage_error("taskgraph", "unexpected argument '%s'", argv[optind + 1]);
    struct strobe_experiment *exp = strobe__cli_open_experiment("taskgraph", argv[optind]);
    if (!exp)
        return STROBE_EXIT_FAILURE;
    struct strobe_errbuf eb = {""};
    int rc;
    if (out_path) {
        struct strobe__out_file o;
        if ((rc = strobe__out_file_open(&o, out_path, &eb)) == 0) {
            if ((rc = write_graph(o.f, exp, format, top, &eb)) != 0)
                strobe__out_file_abort(&o);
            else
                rc = strobe__out_file_commit(&o, &eb);
        }
    } else {
        rc = write_graph(stdout, exp, format, top, &eb);
    }
    if (rc)
        strobe__cli_say("taskgraph: %s", eb.msg[0] ? eb.msg : strobe_strerror(rc));
    strobe_experiment_close(exp);
    return rc ? STROBE_EXIT_FAILURE : 0;
}
