/* SPDX-License-Identifier: MIT */
/*
 * `strobe report` and `strobe export`: open an experiment through the one
 * reader (src/analysis), then hand the model to the report (src/report) or
 * to an exporter (src/export). Reading and exporting large traces shows a
 * progress line on a terminal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/experiment.h"
#include "cli/cli.h"
#include "export/export.h"
#include "report/report.h"
#include "report/score.h"
#include "strobe/strobe.h"

const char strobe__report_help[] =
    "usage: strobe report DIR [--format text|json] [--threads] [--by rank|process] [--tm]\n"
    "                         [--sort incl|excl|visits] [--top N] [--source auto|profile|trace]\n"
    "       strobe report DIR --score [--target T] [-o FILTER] [--format text|json]\n"
    "                         [--top N] [--source auto|profile|trace]\n"
    "\n"
    "Prints the report of the experiment in DIR: summary (command, duration,\n"
    "threads, events, drops, estimated measurement overhead), flat profile,\n"
    "call tree with user metrics, and with --threads the per-thread distribution.\n"
    "With --score, prints filter advice instead: per region its visits, events,\n"
    "trace bytes, time per visit and measurement overhead, the estimate for a\n"
    "full run, and which tiny, hot functions to exclude to meet the target.\n"
    "\n"
    "options:\n"
    "  --format text|json  text for people (default) or JSON for programs\n"
    "                      (schema: docs/formats/report-json.md; always complete)\n"
    "  --threads           add the per-thread table and the thread x region table\n"
    "  --by rank|process   add a row per MPI rank (the processes the MPI launcher\n"
    "                      started, by rank) or per process, and per call path the\n"
    "                      min/avg/max over them of visits and inclusive time;\n"
    "                      rank fails when no process has an MPI rank\n"
    "  --tm                add the transactional-memory section (`strobe run --tm`):\n"
    "                      the monitoring level and what it recorded; per atomic\n"
    "                      block and thread, transactions, rollbacks, serializations\n"
    "                      and aborts by cause; with --tm-monitor events also\n"
    "                      committed vs aborted time, the time per TMbox state and\n"
    "                      who aborted whom; a verdict per block with its figures\n"
    "  --sort KEY          order of the flat profile and of call-tree children:\n"
    "                      excl (exclusive time, default), incl or visits\n"
    "  --top N             text: rows of the flat profile and children shown per\n"
    "                      call-tree node (the rest summed in one line); default 20,\n"
    "                      0 = all\n"
    "  --source SRC        build the call-path profile from the profile files\n"
    "                      (profile), from the event trace (trace), or from the\n"
    "                      profile files when every thread has one (auto, default)\n"
    "  --score             filter advice (docs/cli.md, \"Filter advice\"): regions by\n"
    "                      events; functions are excluded shortest time per visit\n"
    "                      first until the estimate meets the target, never main,\n"
    "                      annotated regions or TM atomic blocks\n"
    "  --target T          with --score: estimated overhead at most T% of the thread\n"
    "                      time (\"5%\", the default) or trace size at most T\n"
    "                      (\"500MB\"; k, M, G, T are binary multiples). A target that\n"
    "                      cannot be met prints what was reached on stderr (exit 0)\n"
    "  -o, --output FILTER with --score: write the advice as a filter file for\n"
    "                      `strobe run --filter FILTER`\n"
    "  -h, --help          show this help\n"
    "\n"
    "exit status: 0 success, 1 the experiment cannot be read or the report (or\n"
    "FILTER) not written, 2 usage error.\n";

const char strobe__export_help[] =
    "usage: strobe export DIR --format otf2|chrome|perfetto|cubex|paraver -o OUT\n"
    "\n"
    "Writes the experiment in DIR in a foreign format:\n"
    "  otf2    OTF2 archive: OUT is a directory, OUT/traces.otf2 its anchor file\n"
    "          (otf2-print, Vampir, Scalasca)\n"
    "  chrome  Chrome Trace Event JSON file (Perfetto UI, speedscope)\n"
    "  perfetto Perfetto protobuf trace file, ~11x smaller than chrome\n"
    "          (ui.perfetto.dev, trace_processor)\n"
    "  cubex   Cube4 file (CubeGUI, cube_dump)\n"
    "  paraver Paraver trace OUT.prv, OUT.pcf, OUT.row of a `strobe run\n"
    "          --tm-monitor events` experiment: TMbox states per thread, abort\n"
    "          causes, culprit -> victim abort arrows (wxparaver)\n"
    "\n"
    "options:\n"
    "  --format FMT        otf2, chrome, perfetto, cubex or paraver (required)\n"
    "  -o, --output OUT    output file or directory (required)\n"
    "  -h, --help          show this help\n"
    "\n"
    "exit status: 0 success, 1 the experiment cannot be read or OUT not written\n"
    "(a partial OUT is removed), 2 usage error.\n";

/* Opens DIR with a progress line; prints the error and returns NULL. */
static struct strobe_experiment *open_experiment(const char *cmd, const char *dir)
{
    struct strobe__progress prog;
    char what[512];
    snprintf(what, sizeof what, "reading %s", dir);
    strobe__progress_init(&prog, what);
    struct strobe_experiment *exp = NULL;
    struct strobe_errbuf eb = {""};
    int rc = strobe_experiment_open(dir, &exp, strobe__progress_cb, &prog, &eb);
    strobe__progress_end(&prog);
    if (rc) {
        strobe__cli_say("%s: %s", cmd, eb.msg[0] ? eb.msg : strobe_strerror(rc));
        return NULL;
    }
    return exp;
}

/* ---- report ------------------------------------------------------------ */

enum { OPT_FORMAT = 256, OPT_THREADS, OPT_SORT, OPT_TOP, OPT_SOURCE, OPT_TM, OPT_SCORE, OPT_TARGET, OPT_BY };

static const struct option report_options[] = {
    {"format", required_argument, NULL, OPT_FORMAT},
    {"threads", no_argument, NULL, OPT_THREADS},
    {"by", required_argument, NULL, OPT_BY},
    {"tm", no_argument, NULL, OPT_TM},
    {"sort", required_argument, NULL, OPT_SORT},
    {"top", required_argument, NULL, OPT_TOP},
    {"source", required_argument, NULL, OPT_SOURCE},
    {"score", no_argument, NULL, OPT_SCORE},
    {"target", required_argument, NULL, OPT_TARGET},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* `--score`: the advice, printed and with -o written as a filter file
 * (first, so an unwritable FILTER fails before anything is printed). */
static int report_score(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                        const struct strobe__score_target *target, const char *filter_path, bool json,
                        size_t top)
{
    struct strobe__score sc;
    int rc = strobe__score_build(&sc, exp, prof, target);
    if (rc) {
        strobe__cli_say("report: %s: %s", exp->dir,
                        rc == STROBE_ERR_FORMAT ? "inconsistent call-path profile" : strobe_strerror(rc));
        return STROBE_EXIT_FAILURE;
    }
    char outcome[512];
    strobe__score_outcome(&sc, outcome, sizeof outcome);
    if (filter_path && !sc.evaluable) {
        strobe__cli_say("report: %s", outcome);
        strobe__score_free(&sc);
        return STROBE_EXIT_FAILURE;
    }
    if (filter_path) {
        FILE *f = fopen(filter_path, "w");
        rc = f ? strobe__score_write_filter(f, &sc) : -errno;
        if (f && fclose(f) != 0 && rc == 0)
            rc = -errno;
        if (rc) {
            strobe__cli_say("report: -o %s: %s", filter_path, strobe_strerror(rc));
            if (f)
                unlink(filter_path);
            strobe__score_free(&sc);
            return STROBE_EXIT_FAILURE;
        }
    }
    rc = json ? strobe__score_json(stdout, &sc) : strobe__score_text(stdout, &sc, top);
    if (rc == 0 && sc.evaluable && !sc.met)
        strobe__cli_say("report: %s", outcome);
    strobe__score_free(&sc);
    if (rc) {
        strobe__cli_say("report: writing the report: %s", strobe_strerror(rc));
        return STROBE_EXIT_FAILURE;
    }
    return 0;
}

int strobe__cmd_report(int argc, char **argv)
{
    struct strobe_report_opts opts;
    strobe_report_opts_init(&opts);
    bool json = false, tm = false, score = false, sorted = false;
    int source = STROBE_PROFILE_AUTO;
    struct strobe__score_target target;
    strobe__score_target_parse(STROBE__SCORE_TARGET_DEFAULT, &target);
    const char *target_arg = NULL, *filter_path = NULL;
    int c;
    while ((c = strobe__cli_getopt("report", argc, argv, ":ho:", report_options)) != -1) {
        switch (c) {
        case OPT_FORMAT:
            if (strcmp(optarg, "text") == 0)
                json = false;
            else if (strcmp(optarg, "json") == 0)
                json = true;
            else
                return strobe__cli_usage_error("report", "--format: unknown format '%s' (text or json)",
                                               optarg);
            break;
        case OPT_THREADS:
            opts.threads = true;
            break;
        case OPT_BY:
            if (strcmp(optarg, "rank") == 0)
                opts.by = STROBE_REPORT_BY_RANK;
            else if (strcmp(optarg, "process") == 0)
                opts.by = STROBE_REPORT_BY_PROCESS;
            else
                return strobe__cli_usage_error("report", "--by: unknown grouping '%s' (rank or process)",
                                               optarg);
            break;
        case OPT_TM:
            tm = true;
            break;
        case OPT_SORT:
            if ((opts.sort = strobe_report_sort_parse(optarg)) < 0)
                return strobe__cli_usage_error("report", "--sort: unknown key '%s' (incl, excl or visits)",
                                               optarg);
            sorted = true;
            break;
        case OPT_SCORE:
            score = true;
            break;
        case OPT_TARGET:
            if (strobe__score_target_parse(optarg, &target) != 0)
                return strobe__cli_usage_error(
                    "report", "--target: '%s' is neither a share of the thread time (5%%) nor a size (500MB)",
                    optarg);
            target_arg = optarg;
            break;
        case 'o':
            filter_path = optarg;
            break;
        case OPT_TOP:
            if (strobe__cli_parse_size(optarg, &opts.top) != 0)
                return strobe__cli_usage_error("report", "--top: '%s' is not a count (0 = all)", optarg);
            break;
        case OPT_SOURCE:
            if (strcmp(optarg, "auto") == 0)
                source = STROBE_PROFILE_AUTO;
            else if (strcmp(optarg, "profile") == 0)
                source = STROBE_PROFILE_FILES;
            else if (strcmp(optarg, "trace") == 0)
                source = STROBE_PROFILE_TRACE;
            else
                return strobe__cli_usage_error(
                    "report", "--source: unknown source '%s' (auto, profile or trace)", optarg);
            break;
        case 'h':
            fputs(strobe__report_help, stdout);
            return 0;
        default:
            return STROBE_EXIT_USAGE;
        }
    }
    if (optind >= argc)
        return strobe__cli_usage_error("report", "missing experiment directory");
    if (optind + 1 < argc)
        return strobe__cli_usage_error("report", "unexpected argument '%s'", argv[optind + 1]);
    const char *dir = argv[optind];
    if (!score && (target_arg || filter_path))
        return strobe__cli_usage_error("report", "'%s' needs --score", target_arg ? "--target" : "-o");
    if (score && (tm || opts.threads || sorted))
        return strobe__cli_usage_error("report", "'--score' and '%s' exclude each other",
                                       tm ? "--tm" : opts.threads ? "--threads" : "--sort");
    if (filter_path && !*filter_path)
        return strobe__cli_usage_error("report", "-o: empty file name");

    struct strobe_experiment *exp = open_experiment("report", dir);
    if (!exp)
        return STROBE_EXIT_FAILURE;
    bool ranked = false;
    for (size_t p = 0; p < exp->nprocesses; p++)
        ranked = ranked || exp->processes[p].has_rank;
    if (opts.by == STROBE_REPORT_BY_RANK && !ranked) {
        /* a usage error: the experiment is fine, the question does not fit it */
        strobe__cli_say("report: %s: --by rank: no process has an MPI rank (not started by an MPI launcher); "
                        "use --by process",
                        dir);
        strobe_experiment_close(exp);
        return STROBE_EXIT_USAGE;
    }
    struct strobe_profile *prof = NULL;
    struct strobe_errbuf eb = {""};
    int rc = strobe_profile_build(exp, source, &prof, &eb);
    if (rc) {
        strobe__cli_say("report: %s", eb.msg[0] ? eb.msg : strobe_strerror(rc));
        strobe_experiment_close(exp);
        return STROBE_EXIT_FAILURE;
    }
    if (score) {
        rc = report_score(exp, prof, &target, filter_path, json, opts.top);
        strobe_profile_free(prof);
        strobe_experiment_close(exp);
        return rc;
    }
    struct strobe_tm_model *tm_model = NULL;
    if (tm && (rc = strobe_tm_model_build(exp, prof, &tm_model, &eb)) != 0) {
        strobe__cli_say("report: %s", eb.msg[0] ? eb.msg : strobe_strerror(rc));
        strobe_profile_free(prof);
        strobe_experiment_close(exp);
        return STROBE_EXIT_FAILURE;
    }
    opts.tm = tm_model;
    rc = json ? strobe_report_json(stdout, exp, prof, &opts) : strobe_report_text(stdout, exp, prof, &opts);
    strobe_tm_model_free(tm_model);
    strobe_profile_free(prof);
    strobe_experiment_close(exp);
    if (rc) {
        if (rc == STROBE_ERR_FORMAT)
            strobe__cli_say("report: %s: inconsistent call-path profile", dir);
        else
            strobe__cli_say("report: writing the report: %s", strobe_strerror(rc));
        return STROBE_EXIT_FAILURE;
    }
    return 0;
}

/* ---- export ------------------------------------------------------------ */

static const struct option export_options[] = {
    {"format", required_argument, NULL, OPT_FORMAT},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef int (*exporter_fn)(const struct strobe_experiment *, const char *, const struct strobe_export_opts *,
                           struct strobe_errbuf *);

int strobe__cmd_export(int argc, char **argv)
{
    static const struct {
        const char *name;
        exporter_fn fn;
    } formats[] = {
        {"otf2", strobe_export_otf2},
        {"chrome", strobe_export_chrome},
        {"perfetto", strobe_export_perfetto},
        {"cubex", strobe_export_cubex},
        {"paraver", strobe_export_paraver},
    };
    exporter_fn fn = NULL;
    const char *out = NULL;
    int c;
    while ((c = strobe__cli_getopt("export", argc, argv, ":ho:", export_options)) != -1) {
        switch (c) {
        case OPT_FORMAT:
            fn = NULL;
            for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
                if (strcmp(optarg, formats[i].name) == 0)
                    fn = formats[i].fn;
            if (!fn)
                return strobe__cli_usage_error(
                    "export", "--format: unknown format '%s' (otf2, chrome, perfetto, cubex or paraver)",
                    optarg);
            break;
        case 'o':
            out = optarg;
            break;
        case 'h':
            fputs(strobe__export_help, stdout);
            return 0;
        default:
            return STROBE_EXIT_USAGE;
        }
    }
    if (optind >= argc)
        return strobe__cli_usage_error("export", "missing experiment directory");
    if (optind + 1 < argc)
        return strobe__cli_usage_error("export", "unexpected argument '%s'", argv[optind + 1]);
    if (!fn)
        return strobe__cli_usage_error("export",
                                       "missing --format (otf2, chrome, perfetto, cubex or paraver)");
    if (!out || !*out)
        return strobe__cli_usage_error("export", "missing -o OUT");
    const char *dir = argv[optind];

    struct strobe_experiment *exp = open_experiment("export", dir);
    if (!exp)
        return STROBE_EXIT_FAILURE;
    struct strobe__progress prog;
    char what[512];
    snprintf(what, sizeof what, "writing %s", out);
    strobe__progress_init(&prog, what);
    struct strobe_export_opts eo = {strobe__progress_cb, &prog};
    struct strobe_errbuf eb = {""};
    int rc = fn(exp, out, &eo, &eb);
    strobe__progress_end(&prog);
    strobe_experiment_close(exp);
    if (rc) {
        strobe__cli_say("export: %s", eb.msg[0] ? eb.msg : strobe_strerror(rc));
        return STROBE_EXIT_FAILURE;
    }
    return 0;
}
