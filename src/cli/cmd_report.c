/* SPDX-License-Identifier: MIT */
/*
 * `strobe report` and `strobe export`: open an experiment through the one
 * reader (src/analysis), then hand the model to the report (src/report) or
 * to an exporter (src/export). Reading and exporting large traces shows a
 * progress line on a terminal.
 */
#include <errno.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/blame.h"
#include "analysis/experiment.h"
#include "analysis/select.h"
#include "analysis/timeline.h"
#include "cli/cli.h"
#include "common/build_config.h"
#include "common/size.h"
#include "export/export.h"
#include "export/output.h"
#include "export/parts.h"
#include "report/blame.h"
#include "report/html.h"
#include "report/report.h"
#include "report/score.h"
#include "report/locks.h"
#include "report/taskgraph.h"
#include "report/units.h"
#include "strobe/strobe.h"
#include "strobed/config.h"

const char strobe__report_help[] =
    "usage: strobe report DIR [--format text|json] [--threads] [--by rank|process] [--tm] [--locks]\n"
    "                         [--malloc] [--samples] [--mpi] [--taskgraph]\n"
    "                         [--blame [--blame-point=FUNC]... [--sample-list FILE]]\n"
    "                         [--sort incl|excl|visits] [--top N] [--source auto|profile|trace]\n"
    "                         [--chunk N[-M]]\n"
    "       strobe report DIR --format html -o FILE [--by rank|process] [--sort incl|excl|visits]\n"
    "                         [--source auto|profile|trace]\n"
    "       strobe report DIR --score [--target T] [-o FILTER] [--format text|json]\n"
    "                         [--top N] [--source auto|profile|trace]\n"
    "       strobe report --diff A B [--format text|json|html [-o FILE]] [--sort incl|excl|visits]\n"
    "                         [--top N] [--fail-above PCT [--min-time T]] [--tm] [--mpi] [--samples]\n"
    "                         [--source auto|profile|trace]\n"
    "\n"
    "Prints the report of the experiment in DIR: summary (command, duration,\n"
    "threads, events, drops, estimated measurement overhead), flat profile,\n"
    "call tree with user metrics, and with --threads the per-thread distribution.\n"
    "With --score, prints filter advice instead: per region its visits, events,\n"
    "trace bytes, time per visit and measurement overhead, the estimate for a\n"
    "full run, and which tiny, hot functions to exclude to meet the target.\n"
    "\n"
    "options:\n"
    "  --format FMT        text for people (default), json for programs\n"
    "                      (schema: docs/formats/report-json.md; always complete)\n"
    "                      or html: one self-contained page (-o FILE, required)\n"
    "                      with every view the experiment has data for: summary,\n"
    "                      flame graph, tables, timeline, TM, samples, locks,\n"
    "                      memory, MPI (docs/report-html.md); the section options\n"
    "                      are implied\n"
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
    "  --locks             add the synchronization section: per lock object\n"
    "                      (its symbol if global, else its address) and acquiring\n"
    "                      call path, acquisitions, contended ones, total and max\n"
    "                      wait, hold time, threads; per barrier episodes, total\n"
    "                      and max wait; longest wait first (`strobe run` records\n"
    "                      them unless --no-locks)\n"
    "  --malloc            add the memory section (`strobe run --malloc`): per\n"
    "                      process the peak live bytes and when, the blocks live at\n"
    "                      exit; per call path allocations, bytes, frees and blocks\n"
    "                      live at exit (leaks, per allocating thread and path);\n"
    "                      the large blocks allocated and freed, in time order\n"
    "  --samples           add the sampled section (`strobe run --sample`): flat\n"
    "                      profile of functions by self and total samples with\n"
    "                      their hottest file:line, sampled call tree, samples per\n"
    "                      thread and per instrumented call path\n"
    "  --blame             add the data-centric blame section (`strobe run --sample`\n"
    "                      of code built by `strobe cc`, docs/blame.md): variables\n"
    "                      by the share of samples whose statements contribute to\n"
    "                      them, unknown data with its reasons, functions with\n"
    "                      their top variable, and per blame point its call path,\n"
    "                      variables and callees\n"
    "  --blame-point=FUNC  with --blame: a function for the hybrid view (repeat\n"
    "                      for more; default main)\n"
    "  --sample-list FILE  with --blame: attribute the samples of FILE instead of\n"
    "                      the run's (\"WEIGHT FRAME [< FRAME]...\", docs/blame.md,\n"
    "                      \"Replaying a sample list\"); DIR provides the modules\n"
    "  --mpi               add the MPI section (`strobe run --mpi`; shown without\n"
    "                      the option whenever the experiment has MPI calls): per\n"
    "                      rank the time in MPI and the messages sent and received,\n"
    "                      per MPI function its time on each rank, the message\n"
    "                      size histogram, the rank x rank bytes matrix and the\n"
    "                      collectives; fails when no MPI call was recorded\n"
    "  --taskgraph         add the task-graph section (`strobe run --taskgraph`;\n"
    "                      docs/taskgraph.md): critical path, parallelism, lock\n"
    "                      contention with critical-path counts, barrier imbalance\n"
    "                      per episode (as `strobe taskgraph DIR`)\n"
    "  --sort KEY          order of the flat profile and of call-tree children:\n"
    "                      excl (exclusive time, default), incl or visits\n"
    "  --top N             text: rows of the flat profile and children shown per\n"
    "                      call-tree node (the rest summed in one line); default 20,\n"
    "                      0 = all\n"
    "  --source SRC        build the call-path profile from the profile files\n"
    "                      (profile), from the event trace (trace), or from the\n"
    "                      profile files when every thread has one (auto, default)\n"
    "  --chunk N[-M]       the profile of chunk N (to M) of every thread's event\n"
    "                      stream alone (0 = the first; docs/cli.md, \"Reading\n"
    "                      chunks alone\"), read without the chunks before it:\n"
    "                      frames open at its start are re-entered, not visited;\n"
    "                      implies --source trace; text and json only\n"
    "  --score             filter advice (docs/cli.md, \"Filter advice\"): regions by\n"
    "                      events; functions are excluded shortest time per visit\n"
    "                      first until the estimate meets the target, never main,\n"
    "                      annotated regions or TM atomic blocks\n"
    "  --target T          with --score: estimated overhead at most T% of the thread\n"
    "                      time (\"5%\", the default) or trace size at most T\n"
    "                      (\"500MB\"; k, M, G, T are binary multiples). A target that\n"
    "                      cannot be met prints what was reached on stderr (exit 0)\n"
    "  --diff A B          compare experiment B with A (docs/cli.md, \"Comparing\n"
    "                      experiments\"): per call path of either (matched by\n"
    "                      function and file) visits, inclusive and exclusive time,\n"
    "                      samples and metrics of both and their change, largest\n"
    "                      change of --sort's key first (default incl); paths only\n"
    "                      in one marked; TM statistics and MPI summaries when both\n"
    "                      have them (--tm, --mpi, --samples: fail when a run does\n"
    "                      not); A1,A2,... B1,B2,...: repeated runs, their mean\n"
    "                      and range; html: B's page with a differential flame graph\n"
    "  --fail-above PCT    with --diff: exit 3 when a call path's inclusive time\n"
    "                      grew more than PCT percent (and, with repeated runs,\n"
    "                      beyond the ranges: B's fastest run slower than A's\n"
    "                      slowest); a path new in B counts as grown\n"
    "  --min-time T        with --fail-above: ignore paths whose inclusive time is\n"
    "                      below T on both sides (default 1ms; 0 = none)\n"
    "  -o, --output FILE   with --format html: the page to write; with --score:\n"
    "                      write the advice as a filter file for\n"
    "                      `strobe run --filter FILE`\n"
    "  -h, --help          show this help\n"
    "\n"
    "exit status: 0 success, 1 the experiment cannot be read or the report (or\n"
    "FILE) not written, 2 usage error, 3 --fail-above: a call path grew.\n";

const char strobe__export_help[] =
    "usage: strobe export DIR --format otf2|chrome|perfetto|cubex|pprof|paraver -o OUT\n"
    "                         [--from T] [--to T] [--threads LIST] [--processes LIST]\n"
    "                         [--ranks LIST]\n"
    "                         [--min-duration D] [--chunk N[-M]] [--chunk-size SIZE]\n"
    "\n"
    "Writes the experiment in DIR in a foreign format:\n"
    "  otf2    OTF2 archive: OUT is a directory, OUT/traces.otf2 its anchor file\n"
    "          (otf2-print, Vampir, Scalasca)\n"
    "  chrome  Chrome Trace Event JSON file (Perfetto UI, speedscope)\n"
    "  perfetto Perfetto protobuf trace file, ~11x smaller than chrome\n"
    "          (ui.perfetto.dev, trace_processor)\n"
    "  cubex   Cube4 file (CubeGUI, cube_dump)\n"
    "  pprof   gzip'd pprof profile: visits, inclusive and exclusive time (and\n"
    "          samples) per call path and thread (go tool pprof, speedscope,\n"
    "          Pyroscope)\n"
    "  paraver Paraver trace OUT.prv, OUT.pcf, OUT.row of a `strobe run\n"
    "          --tm-monitor events` experiment: TMbox states per thread, abort\n"
    "          causes, culprit -> victim abort arrows (wxparaver)\n"
    "\n"
    "options:\n"
    "  --format FMT        otf2, chrome, perfetto, cubex, pprof or paraver (required)\n"
    "  -o, --output OUT    output file or directory (required)\n"
    "  -h, --help          show this help\n"
    "\n"
    "selection (trace exports otf2, chrome, perfetto and paraver; not the\n"
    "profiles cubex and pprof):\n"
    "  --from T, --to T    only the time window [T1, T2] (times since the start of\n"
    "                      the experiment: 1.5s, 200ms, 10us, 123ns; a plain number\n"
    "                      is seconds); frames crossing its edges are cut to it\n"
    "  --threads LIST      only these threads, by global index as `strobe report\n"
    "                      --threads` numbers them: 0,2-3\n"
    "  --processes LIST    only the threads of these processes, by pid: 4242,4250-4260\n"
    "  --ranks LIST        only the threads of these MPI ranks: 0,2-3\n"
    "  --min-duration D    drop frames shorter than D (and everything inside them);\n"
    "                      prints how many on stderr\n"
    "  --chunk N[-M]       only chunk N (to M) of every thread's event stream, read\n"
    "                      without the chunks before it; frames open at its start\n"
    "                      begin there at their entry times\n"
    "\n"
    "  --chunk-size SIZE   chrome and perfetto: write parts OUT-000.ext, OUT-001.ext,\n"
    "                      ... of about SIZE each (64M, 1G, 500k) instead of OUT;\n"
    "                      frames open at a part's end are closed there and\n"
    "                      re-entered at the next part's start (arg continued), so\n"
    "                      each part loads alone\n"
    "\n"
    "An export estimated above 1 GB prints a warning naming these options.\n"
    "\n"
    "exit status: 0 success, 1 the experiment cannot be read or OUT not written\n"
    "(a partial OUT is removed), 2 usage error.\n";

struct strobe_experiment *strobe__cli_open_experiment(const char *cmd, const char *dir)
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

/* ---- chunks (--chunk, shared by report and export) ----------------------- */

/* Parses `--chunk N` or `--chunk N-M` into *first and *count; prints the
 * usage error. */
static int chunk_option(const char *cmd, const char *arg, uint64_t *first, uint64_t *count)
{
    struct strobe__cli_range *r = NULL;
    size_t n = 0;
    int rc = strobe__cli_parse_ranges(arg, &r, &n);
    if (rc == 0 && n == 1) {
        *first = r[0].lo;
        *count = r[0].hi - r[0].lo + 1;
    }
    free(r);
    if (rc == -ENOMEM) {
        strobe__cli_say("%s: out of memory", cmd);
        return STROBE_EXIT_FAILURE;
    }
    if (rc < 0 || n != 1 || *count == 0)
        return strobe__cli_usage_error(cmd, "--chunk: '%s' is not a chunk number or range (3 or 2-5)", arg);
    return 0;
}

/* Restricts the event streams of EXP to the chunks asked for; returns 0
 * or the exit code after printing one line. */
static int apply_chunks(const char *cmd, struct strobe_experiment *exp, const char *arg, uint64_t first,
                        uint64_t count)
{
    struct strobe_errbuf eb = {""};
    uint64_t n;
    int rc = strobe_experiment_chunks(exp, first, count, &n, &eb);
    if (rc) {
        strobe__cli_say("%s: --chunk %s: %s", cmd, arg, eb.msg[0] ? eb.msg : strobe_strerror(rc));
        return STROBE_EXIT_FAILURE;
    }
    if (first >= n) {
        if (n == 0)
            return strobe__cli_usage_error(cmd, "--chunk %s: %s has no event stream with records", arg, exp->dir);
        return strobe__cli_usage_error(cmd, "--chunk %s: the longest stream of %s has %llu chunks (0-%llu)", arg,
                                       exp->dir, (unsigned long long)n, (unsigned long long)(n - 1));
    }
    return 0;
}

/* ---- report ------------------------------------------------------------ */

enum {
    OPT_FORMAT = 256,
    OPT_THREADS,
    OPT_SORT,
    OPT_TOP,
    OPT_SOURCE,
    OPT_TM,
    OPT_SCORE,
    OPT_TARGET,
    OPT_BY,
    OPT_LOCKS,
    OPT_MALLOC,
    OPT_SAMPLES,
    OPT_MPI,
    OPT_TASKGRAPH,
    OPT_BLAME,
    OPT_BLAME_POINT,
    OPT_SAMPLE_LIST,
    OPT_DIFF,
    OPT_FAIL_ABOVE,
    OPT_MIN_TIME,
    OPT_CHUNK
};

static const struct option report_options[] = {
    {"format", required_argument, NULL, OPT_FORMAT},
    {"threads", no_argument, NULL, OPT_THREADS},
    {"by", required_argument, NULL, OPT_BY},
    {"tm", no_argument, NULL, OPT_TM},
    {"locks", no_argument, NULL, OPT_LOCKS},
    {"malloc", no_argument, NULL, OPT_MALLOC},
    {"samples", no_argument, NULL, OPT_SAMPLES},
    {"mpi", no_argument, NULL, OPT_MPI},
    {"taskgraph", no_argument, NULL, OPT_TASKGRAPH},
    {"blame", no_argument, NULL, OPT_BLAME},
    {"blame-point", required_argument, NULL, OPT_BLAME_POINT},
    {"sample-list", required_argument, NULL, OPT_SAMPLE_LIST},
    {"sort", required_argument, NULL, OPT_SORT},
    {"top", required_argument, NULL, OPT_TOP},
    {"source", required_argument, NULL, OPT_SOURCE},
    {"score", no_argument, NULL, OPT_SCORE},
    {"target", required_argument, NULL, OPT_TARGET},
    {"diff", no_argument, NULL, OPT_DIFF},
    {"fail-above", required_argument, NULL, OPT_FAIL_ABOVE},
    {"min-time", required_argument, NULL, OPT_MIN_TIME},
    {"chunk", required_argument, NULL, OPT_CHUNK},
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

/* The models of the HTML page's optional views. A model whose data is
 * missing leaves its view out; one whose data is damaged is named at the
 * top of the page (problem) instead of failing the report: the rest of
 * the experiment is still worth seeing. */
struct html_models {
    struct strobe_tm_model *tm;
    struct strobe_lock_model *locks;
    struct strobe_malloc_model *mem;
    struct strobe_sample_model *samples;
    struct strobe_blame_model *blame;
    struct strobe_mpi_model *mpi;
    struct strobe_taskgraph *taskgraph;
    struct strobe_timeline *timeline, *tm_timeline;
    char problems[8][sizeof(struct strobe_errbuf) + 64];
    const char *lines[8];
    size_t nproblems;
};

/* Records that WHAT could not be read (rc, message in eb), and what that
 * means for the page; rc -ENOENT means the run did not record it and is
 * no problem. */
static void html_problem(struct html_models *m, const char *what, int rc, const struct strobe_errbuf *eb,
                         const char *consequence)
{
    if (rc == 0 || rc == -ENOENT)
        return;
    size_t i = m->nproblems++;
    snprintf(m->problems[i], sizeof m->problems[i], "%s: %s (%s)", what,
             eb->msg[0] ? eb->msg : strobe_strerror(rc), consequence);
    m->lines[i] = m->problems[i];
}

#define LEFT_OUT "left out of the page"

/* What --blame-point and --sample-list ask of the blame view. */
struct blame_request {
    const char *const *points;
    size_t npoints;
    const char *list; /* NULL: the run's samples */
};

static void html_models_build(struct html_models *m, const struct strobe_experiment *exp,
                              const struct strobe_profile *prof, const struct blame_request *br)
{
    struct strobe_errbuf eb = {""};
    int rc = strobe_tm_model_build(exp, prof, &m->tm, &eb);
    html_problem(m, "transactional memory", rc, &eb, LEFT_OUT);
    if (rc == 0 && m->tm->nblocks == 0) {
        strobe_tm_model_free(m->tm);
        m->tm = NULL;
    }
    eb.msg[0] = 0;
    rc = strobe_lock_model_build(exp, &m->locks, &eb);
    html_problem(m, "locks", rc, &eb, LEFT_OUT);
    if (rc == 0 && m->locks->nrows == 0 && m->locks->nbarriers == 0) {
        strobe_lock_model_free(m->locks);
        m->locks = NULL;
    }
    eb.msg[0] = 0;
    html_problem(m, "memory", strobe_malloc_model_build(exp, prof, &m->mem, &eb), &eb, LEFT_OUT);
    eb.msg[0] = 0;
    html_problem(m, "samples", strobe_sample_model_build(exp, prof, &m->samples, &eb), &eb, LEFT_OUT);
    eb.msg[0] = 0;
    /* the blame view when the sampled code has blame tables */
    if (br->list)
        rc = strobe_blame_model_from_list(exp, br->list, br->points, br->npoints, &m->blame, &eb);
    else if (m->samples)
        rc = strobe_blame_model_build(exp, m->samples, br->points, br->npoints, &m->blame, &eb);
    html_problem(m, "blame", br->list || m->samples ? rc : 0, &eb, LEFT_OUT);
    if (m->blame && m->blame->ntables == 0) {
        strobe_blame_model_free(m->blame);
        m->blame = NULL;
    }
    eb.msg[0] = 0;
    if (strobe_mpi_present(exp))
        html_problem(m, "MPI", strobe_mpi_model_build(exp, prof, &m->mpi, &eb), &eb, LEFT_OUT);
    eb.msg[0] = 0;
    /* the view needs a graph recorded with tickets (`strobe run --taskgraph`) */
    if ((rc = strobe_taskgraph_recorded(exp, &eb)) == 1)
        rc = strobe_taskgraph_build(exp, NULL, &m->taskgraph, &eb);
    html_problem(m, "task graph", rc, &eb, LEFT_OUT);
    eb.msg[0] = 0;
    html_problem(m, "timeline", strobe_timeline_build(exp, STROBE_TIMELINE_BUDGET, &m->timeline, &eb), &eb,
                 LEFT_OUT);
    /* a damaged stream cuts its lane short, the others are whole */
    if (m->timeline && m->timeline->ndamaged)
        html_problem(m, "timeline", STROBE_ERR_FORMAT, &m->timeline->damage,
                     m->timeline->ndamaged == 1 ? "its lane ends there" : "those lanes end there");
    eb.msg[0] = 0;
    rc = strobe_tm_timeline_build(exp, STROBE_TM_TIMELINE_BUDGET, &m->tm_timeline, &eb);
    html_problem(m, "TM state timeline", rc, &eb, LEFT_OUT);
    if (rc == 0 && m->tm_timeline->intervals == 0) {
        strobe_timeline_free(m->tm_timeline);
        m->tm_timeline = NULL;
    }
}

static void html_models_free(struct html_models *m)
{
    strobe_tm_model_free(m->tm);
    strobe_lock_model_free(m->locks);
    strobe_malloc_model_free(m->mem);
    strobe_sample_model_free(m->samples);
    strobe_blame_model_free(m->blame);
    strobe_mpi_model_free(m->mpi);
    strobe_taskgraph_free(m->taskgraph);
    strobe_timeline_free(m->timeline);
    strobe_timeline_free(m->tm_timeline);
}

int strobe__cli_html_write(const char *path, const struct strobe_experiment *exp,
                           const struct strobe_profile *prof, struct strobe_html_opts *ho,
                           struct strobe_errbuf *eb)
{
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) && strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
        ho->generated = when;
    struct strobe__out_file o;
    int rc = strobe__out_file_open(&o, path, eb);
    if (rc == 0 && (rc = strobe_report_html(o.f, exp, prof, ho)) != 0)
        strobe__out_file_abort(&o);
    else if (rc == 0)
        rc = strobe__out_file_commit(&o, eb);
    ho->generated = NULL; /* `when` goes out of scope */
    return rc;
}

void strobe__cli_html_error(const char *path, const struct strobe_experiment *exp, int rc,
                            const struct strobe_errbuf *eb)
{
    if (rc == STROBE_ERR_FORMAT)
        strobe__cli_say("report: %s: inconsistent call-path profile", exp->dir);
    else if (rc && eb->msg[0])
        strobe__cli_say("report: %s", eb->msg);
    else if (rc)
        strobe__cli_say("report: -o %s: %s", path, strobe_strerror(rc));
}

/* `--format html -o PATH`: written all or nothing like an export
 * (export/output.h), so a failure never leaves a partial page behind. */
static int report_html(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                       const struct strobe_report_opts *ropts, const struct blame_request *br, const char *path)
{
    struct html_models m = {0};
    html_models_build(&m, exp, prof, br);
    struct strobe_html_opts ho = {.report = *ropts, .problems = m.lines, .nproblems = m.nproblems};
    ho.report.tm = m.tm;
    ho.report.locks = m.locks;
    ho.report.malloc = m.mem;
    ho.report.samples = m.samples;
    ho.report.blame = m.blame;
    ho.report.mpi = m.mpi;
    ho.report.taskgraph = m.taskgraph;
    ho.timeline = m.timeline;
    ho.tm_timeline = m.tm_timeline;
    struct strobe_errbuf eb = {""};
    int rc = strobe__cli_html_write(path, exp, prof, &ho, &eb);
    html_models_free(&m);
    for (size_t i = 0; i < m.nproblems; i++)
        strobe__cli_say("report: %s: warning: %s", exp->dir, m.lines[i]);
    strobe__cli_html_error(path, exp, rc, &eb);
    return rc ? STROBE_EXIT_FAILURE : 0;
}

/* `--diff A B`: checks the options, then compares (cmd_report_diff.c).
 * single: an option of the report of one experiment, or NULL. */
static int report_diff(struct strobe__diff_request *rq, bool diff, int argc, char **argv, const char *single)
{
    if (!diff)
        return strobe__cli_usage_error("report", "'--fail-above' and '--min-time' need --diff");
    if (single)
        return strobe__cli_usage_error("report", "'--diff' and '%s' exclude each other", single);
    if (optind + 2 > argc)
        return strobe__cli_usage_error("report",
                                       "--diff needs two experiments: A B (or A1,A2,... B1,B2,...)");
    if (optind + 2 < argc)
        return strobe__cli_usage_error("report", "unexpected argument '%s'", argv[optind + 2]);
    if (rq->format == STROBE__DIFF_HTML && !rq->out_path)
        return strobe__cli_usage_error("report", "--format html needs -o FILE");
    if (rq->format != STROBE__DIFF_HTML && rq->out_path)
        return strobe__cli_usage_error("report", "'-o' needs --score or --format html");
    if (rq->out_path && !*rq->out_path)
        return strobe__cli_usage_error("report", "-o: empty file name");
    rq->a = argv[optind];
    rq->b = argv[optind + 1];
    return strobe__report_diff(rq);
}

int strobe__cmd_report(int argc, char **argv)
{
    struct strobe_report_opts opts;
    strobe_report_opts_init(&opts);
    enum { TEXT, JSON, HTML } format = TEXT;
    bool tm = false, score = false, sorted = false, locks = false, mem = false, samples = false, mpi = false,
         taskgraph = false, blame = false;
    const char *points[32]; /* --blame-point, in argv */
    size_t npoints = 0;
    const char *sample_list = NULL;
    int source = STROBE_PROFILE_AUTO;
    struct strobe__score_target target;
    strobe__score_target_parse(STROBE__SCORE_TARGET_DEFAULT, &target);
    const char *target_arg = NULL, *out_path = NULL;
    bool diff = false;
    struct strobe__diff_request drq = {.min_ns = STROBE__DIFF_MIN_TIME_DEFAULT};
    const char *min_time = NULL, *chunk = NULL;
    uint64_t chunk_first = 0, chunk_count = 0;
    bool source_given = false;
    int c;
    while ((c = strobe__cli_getopt("report", argc, argv, ":ho:", report_options)) != -1) {
        switch (c) {
        case OPT_CHUNK:
            chunk = optarg;
            if ((c = chunk_option("report", optarg, &chunk_first, &chunk_count)) != 0)
                return c;
            break;
        case OPT_DIFF:
            diff = true;
            break;
        case OPT_FAIL_ABOVE: {
            char *end;
            drq.fail_above = strtod(optarg, &end);
            if (end == optarg || (*end && strcmp(end, "%") != 0) || !(drq.fail_above >= 0) ||
                drq.fail_above > 1e9)
                return strobe__cli_usage_error("report",
                                               "--fail-above: '%s' is not a percentage (10 or 10%%)", optarg);
            drq.gate = true;
            break;
        }
        case OPT_MIN_TIME: {
            unsigned long long ns;
            if (strobe__parse_duration(optarg, &ns) < 0)
                return strobe__cli_usage_error("report", "--min-time: '%s' is not a duration (1ms, 200us, 0)",
                                               optarg);
            drq.min_ns = ns;
            min_time = optarg;
            break;
        }
        case OPT_FORMAT:
            if (strcmp(optarg, "text") == 0)
                format = TEXT;
            else if (strcmp(optarg, "json") == 0)
                format = JSON;
            else if (strcmp(optarg, "html") == 0)
                format = HTML;
            else
                return strobe__cli_usage_error("report", "--format: unknown format '%s' (text, json or html)",
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
        case OPT_LOCKS:
            locks = true;
            break;
        case OPT_MALLOC:
            mem = true;
            break;
        case OPT_SAMPLES:
            samples = true;
            break;
        case OPT_MPI:
            mpi = true;
            break;
        case OPT_TASKGRAPH:
            taskgraph = true;
            break;
        case OPT_BLAME:
            blame = true;
            break;
        case OPT_BLAME_POINT:
            if (!*optarg)
                return strobe__cli_usage_error("report", "--blame-point: empty function name");
            if (npoints == sizeof points / sizeof points[0])
                return strobe__cli_usage_error("report", "--blame-point: at most %zu blame points", npoints);
            points[npoints++] = optarg;
            break;
        case OPT_SAMPLE_LIST:
            sample_list = optarg;
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
            out_path = optarg;
            break;
        case OPT_TOP:
            if (strobe__cli_parse_size(optarg, &opts.top) != 0)
                return strobe__cli_usage_error("report", "--top: '%s' is not a count (0 = all)", optarg);
            break;
        case OPT_SOURCE:
            source_given = true;
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
    if (diff || drq.gate || min_time) {
        drq.format = format == HTML   ? STROBE__DIFF_HTML
                     : format == JSON ? STROBE__DIFF_JSON
                                      : STROBE__DIFF_TEXT;
        drq.out_path = out_path;
        drq.sort = sorted ? opts.sort : STROBE_REPORT_SORT_INCL;
        drq.top = opts.top;
        drq.source = source;
        drq.tm = tm;
        drq.mpi = mpi;
        drq.samples = samples;
        const char *single = score          ? "--score"
                             : locks        ? "--locks"
                             : mem          ? "--malloc"
                             : taskgraph    ? "--taskgraph"
                             : blame        ? "--blame"
                             : opts.threads ? "--threads"
                             : opts.by      ? "--by"
                             : target_arg   ? "--target"
                             : chunk        ? "--chunk"
                                            : NULL;
        return report_diff(&drq, diff, argc, argv, single);
    }
    if (optind >= argc)
        return strobe__cli_usage_error("report", "missing experiment directory");
    if (optind + 1 < argc)
        return strobe__cli_usage_error("report", "unexpected argument '%s'", argv[optind + 1]);
    const char *dir = argv[optind];
    if (!score && target_arg)
        return strobe__cli_usage_error("report", "'--target' needs --score");
    if (!score && format != HTML && out_path)
        return strobe__cli_usage_error("report", "'-o' needs --score or --format html");
    if (format == HTML && score)
        return strobe__cli_usage_error("report", "'--score' and '--format html' exclude each other");
    if (format == HTML && !out_path)
        return strobe__cli_usage_error("report", "--format html needs -o FILE");
    if (score && (tm || mem || samples || opts.threads || sorted))
        return strobe__cli_usage_error("report", "'--score' and '%s' exclude each other",
                                       tm             ? "--tm"
                                       : mem          ? "--malloc"
                                       : samples      ? "--samples"
                                       : opts.threads ? "--threads"
                                                      : "--sort");
    if (out_path && !*out_path)
        return strobe__cli_usage_error("report", "-o: empty file name");
    if (locks && score)
        return strobe__cli_usage_error("report", "'--score' and '--locks' exclude each other");
    if (taskgraph && score)
        return strobe__cli_usage_error("report", "'--score' and '--taskgraph' exclude each other");
    if (blame && score)
        return strobe__cli_usage_error("report", "'--score' and '--blame' exclude each other");
    if (!blame && (npoints || sample_list))
        return strobe__cli_usage_error("report", "'%s' needs --blame", npoints ? "--blame-point" : "--sample-list");

    /* --chunk: the call-path profile of the chunks' events; the sections
     * read the streams with models of their own, which see whole streams */
    const char *whole = tm ? "--tm" : locks ? "--locks" : mem ? "--malloc" : samples ? "--samples"
                        : blame ? "--blame" : mpi ? "--mpi" : taskgraph ? "--taskgraph" : score ? "--score"
                        : format == HTML ? "--format html" : NULL;
    if (chunk && whole)
        return strobe__cli_usage_error("report", "'--chunk' and '%s' exclude each other", whole);
    if (chunk && source_given && source != STROBE_PROFILE_TRACE)
        return strobe__cli_usage_error("report", "--chunk builds the profile from the trace: not with --source %s",
                                       source == STROBE_PROFILE_FILES ? "profile" : "auto");
    if (chunk)
        source = STROBE_PROFILE_TRACE;

    struct strobe_experiment *exp = strobe__cli_open_experiment("report", dir);
    if (!exp)
        return STROBE_EXIT_FAILURE;
    if (chunk) {
        int code = apply_chunks("report", exp, chunk, chunk_first, chunk_count);
        if (code) {
            strobe_experiment_close(exp);
            return code;
        }
    }
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
        rc = report_score(exp, prof, &target, out_path, format == JSON, opts.top);
        strobe_profile_free(prof);
        strobe_experiment_close(exp);
        return rc;
    }
    if (format == HTML) {
        /* the page compares ranks (or processes) whenever there are several */
        if (opts.by == STROBE_REPORT_BY_NONE && (ranked || exp->nprocesses > 1))
            opts.by = ranked ? STROBE_REPORT_BY_RANK : STROBE_REPORT_BY_PROCESS;
        struct blame_request br = {points, npoints, sample_list};
        rc = report_html(exp, prof, &opts, &br, out_path);
        strobe_profile_free(prof);
        strobe_experiment_close(exp);
        return rc;
    }
    /* The sections' models; the first that cannot be built ends the
     * command (`missing`: what to say when the run did not record it). */
    struct strobe_tm_model *tm_model = NULL;
    struct strobe_lock_model *lock_model = NULL;
    struct strobe_malloc_model *mem_model = NULL;
    struct strobe_sample_model *sample_model = NULL;
    struct strobe_mpi_model *mpi_model = NULL;
    struct strobe_taskgraph *tg_model = NULL;
    struct strobe_blame_model *blame_model = NULL;
    const char *missing = NULL;
    bool failed = true, bad_list = false;
    if (tm && (rc = strobe_tm_model_build(exp, prof, &tm_model, &eb)) != 0)
        goto out;
    if (locks && (rc = strobe_lock_model_build(exp, &lock_model, &eb)) != 0)
        goto out;
    missing = "--malloc: no allocations were tracked (record them with `strobe run --malloc`)";
    if (mem && (rc = strobe_malloc_model_build(exp, prof, &mem_model, &eb)) != 0)
        goto out;
    missing = "--samples: the run did not sample (record with `strobe run --sample`)";
    if (samples && (rc = strobe_sample_model_build(exp, prof, &sample_model, &eb)) != 0)
        goto out;
    /* --blame: the run's samples, or the list's (a bad line is a usage error) */
    missing = sample_list ? NULL : "--blame: the run did not sample (record with `strobe run --sample`)";
    if (blame && sample_list) {
        rc = strobe_blame_model_from_list(exp, sample_list, points, npoints, &blame_model, &eb);
        bad_list = rc == STROBE_ERR_SYNTAX;
    } else if (blame && (sample_model || (rc = strobe_sample_model_build(exp, prof, &sample_model, &eb)) == 0)) {
        rc = strobe_blame_model_build(exp, sample_model, points, npoints, &blame_model, &eb);
    }
    if (rc != 0)
        goto out;
    for (size_t i = 0; blame_model && i < blame_model->nwarnings; i++)
        strobe__cli_say("report: warning: %s", blame_model->warnings[i]);
    /* the MPI section comes by itself when there are MPI calls */
    missing = "--mpi: no MPI calls were recorded (record them with `strobe run --mpi`)";
    if ((mpi || (!chunk && strobe_mpi_present(exp))) && (rc = strobe_mpi_model_build(exp, prof, &mpi_model, &eb)) != 0)
        goto out;
    /* the blocks summary comes by itself when there are block streams */
    struct strobe_blocks_summary blocks;
    bool has_blocks;
    missing = NULL;
    if ((rc = strobe_blocks_summarize(exp, &blocks, &has_blocks, &eb)) != 0)
        goto out;
    opts.blocks = has_blocks ? &blocks : NULL;
    if (taskgraph && (rc = strobe_taskgraph_build(exp, NULL, &tg_model, &eb)) != 0)
        goto out;
    failed = false;
    opts.tm = tm_model;
    opts.locks = lock_model;
    opts.malloc = mem_model;
    opts.samples = samples ? sample_model : NULL;
    opts.blame = blame_model;
    opts.mpi = mpi_model;
    opts.taskgraph = tg_model;
    rc = format == JSON ? strobe_report_json(stdout, exp, prof, &opts)
                        : strobe_report_text(stdout, exp, prof, &opts);
    if (rc == 0 && lock_model && format == TEXT)
        rc = strobe_report_locks_text(stdout, exp, lock_model, opts.top);
    if (rc == 0 && tg_model && format == TEXT)
        rc = strobe_report_taskgraph_text(stdout, exp, tg_model, opts.top);
    if (rc == 0 && blame_model && format == TEXT) {
        strobe__report_blame_text(stdout, blame_model, opts.top);
        rc = fflush(stdout) == 0 && !ferror(stdout) ? 0 : -EIO;
    }
out:
    if (failed && rc == -ENOENT && missing)
        strobe__cli_say("report: %s: %s", dir, missing);
    else if (failed)
        strobe__cli_say("report: %s", eb.msg[0] ? eb.msg : strobe_strerror(rc));
    strobe_lock_model_free(lock_model);
    strobe_malloc_model_free(mem_model);
    strobe_sample_model_free(sample_model);
    strobe_blame_model_free(blame_model);
    strobe_mpi_model_free(mpi_model);
    strobe_taskgraph_free(tg_model);
    strobe_tm_model_free(tm_model);
    strobe_profile_free(prof);
    strobe_experiment_close(exp);
    if (failed)
        return bad_list ? STROBE_EXIT_USAGE : STROBE_EXIT_FAILURE;
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

enum { OPT_FROM = 300, OPT_TO, OPT_EXPORT_THREADS, OPT_PROCESSES, OPT_RANKS, OPT_MIN_DURATION, OPT_CHUNK_SIZE };

static const struct option export_options[] = {
    {"format", required_argument, NULL, OPT_FORMAT},
    {"output", required_argument, NULL, 'o'},
    {"from", required_argument, NULL, OPT_FROM},
    {"to", required_argument, NULL, OPT_TO},
    {"threads", required_argument, NULL, OPT_EXPORT_THREADS},
    {"processes", required_argument, NULL, OPT_PROCESSES},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"min-duration", required_argument, NULL, OPT_MIN_DURATION},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"chunk-size", required_argument, NULL, OPT_CHUNK_SIZE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef int (*exporter_fn)(const struct strobe_experiment *, const char *, const struct strobe_export_opts *,
                           struct strobe_errbuf *);

/* Above this estimated output size the export warns (docs/cli.md). The
 * environment variable STROBE_EXPORT_WARN_BYTES replaces it; it exists
 * only so the tests can reach the warning without writing 1 GB. */
#define EXPORT_WARN_BYTES 1000000000ull

/* What the export command asked for, beyond format and output. */
struct export_request {
    const char *from, *to, *min_duration, *chunk, *chunk_size; /* as typed, for messages */
    uint64_t chunk_first, chunk_count, part_bytes;
    struct strobe_select_opts sel;
    struct strobe__cli_range *threads, *pids, *ranks;
    size_t nthreads, npids, nranks;
};

/* Parses a duration option into *ns; prints the usage error. */
static int duration_option(const char *name, const char *arg, uint64_t *ns)
{
    unsigned long long v;
    if (strobe__parse_duration(arg, &v) < 0)
        return strobe__cli_usage_error("export", "%s: '%s' is not a duration (1.5s, 200ms, 10us, 123ns)",
                                       name, arg);
    *ns = v;
    return 0;
}

static int list_option(const char *name, const char *arg, struct strobe__cli_range **r, size_t *n)
{
    free(*r);
    *r = NULL;
    int rc = strobe__cli_parse_ranges(arg, r, n);
    if (rc == -ENOMEM) {
        strobe__cli_say("export: out of memory");
        return STROBE_EXIT_FAILURE;
    }
    if (rc < 0)
        return strobe__cli_usage_error("export", "%s: '%s' is not a list of numbers and ranges (0,2-3)", name,
                                       arg);
    return 0;
}

/* true when process P's pid (key 0) or MPI rank (key 1; a process without
 * one never matches) lies in one of the n ranges. */
static bool process_matches(const struct strobe_process_info *p, int key, const struct strobe__cli_range *r,
                            size_t n)
{
    if (key == 1 && !p->has_rank)
        return false;
    uint64_t v = key == 0 ? p->pid : p->rank;
    for (size_t i = 0; i < n; i++)
        if (v >= r[i].lo && v <= r[i].hi)
            return true;
    return false;
}

/* The threads the request keeps, into sel->threads (malloc'd, [nthreads]),
 * after checking every index and pid against the experiment. Returns 0 or
 * an exit code after printing the one-line error. */
static int select_threads(const struct strobe_experiment *exp, const char *dir, struct export_request *rq,
                          bool **out)
{
    bool *keep = malloc((exp->nthreads ? exp->nthreads : 1) * sizeof *keep);
    if (!keep) {
        strobe__cli_say("export: out of memory");
        return STROBE_EXIT_FAILURE;
    }
    for (size_t t = 0; t < exp->nthreads; t++)
        keep[t] = rq->nthreads == 0;
    for (size_t i = 0; i < rq->nthreads; i++) {
        if (rq->threads[i].hi >= exp->nthreads) {
            uint64_t bad = rq->threads[i].lo >= exp->nthreads ? rq->threads[i].lo : exp->nthreads;
            free(keep);
            return strobe__cli_usage_error("export", "--threads: %s has no thread %llu (threads 0-%zu)", dir,
                                           (unsigned long long)bad, exp->nthreads - 1);
        }
        for (uint64_t t = rq->threads[i].lo; t <= rq->threads[i].hi; t++)
            keep[t] = true;
    }
    /* --processes by pid, --ranks by MPI rank: a thread stays when its
     * process matches every list given */
    static const char *const key_name[2] = {"pid", "MPI rank"}, *const option[2] = {"--processes", "--ranks"};
    const struct strobe__cli_range *lists[2] = {rq->pids, rq->ranks};
    size_t lens[2] = {rq->npids, rq->nranks};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < lens[k]; i++) {
            bool found = false;
            for (size_t p = 0; p < exp->nprocesses; p++)
                found |= process_matches(&exp->processes[p], k, &lists[k][i], 1);
            if (found)
                continue;
            free(keep);
            if (lists[k][i].lo == lists[k][i].hi)
                return strobe__cli_usage_error("export", "%s: %s has no process with %s %llu", option[k], dir,
                                               key_name[k], (unsigned long long)lists[k][i].lo);
            return strobe__cli_usage_error("export", "%s: %s has no process with a %s in %llu-%llu",
                                           option[k], dir, key_name[k], (unsigned long long)lists[k][i].lo,
                                           (unsigned long long)lists[k][i].hi);
        }
        for (size_t t = 0; t < exp->nthreads && lens[k]; t++)
            keep[t] &= process_matches(&exp->processes[exp->threads[t].process], k, lists[k], lens[k]);
    }
    bool any = false;
    for (size_t t = 0; t < exp->nthreads; t++)
        any |= keep[t];
    if (!any) {
        free(keep);
        return strobe__cli_usage_error(
            "export", "--threads, --processes and --ranks select no thread of %s together", dir);
    }
    *out = keep;
    return 0;
}

/* Prints the warning when the estimated output exceeds the threshold. */
static void warn_size(const char *out, uint64_t events, unsigned bytes_per_event)
{
    uint64_t limit = EXPORT_WARN_BYTES;
    const char *env = getenv("STROBE_EXPORT_WARN_BYTES");
    if (env && *env && strobe__parse_size(env, &limit) != 0)
        limit = EXPORT_WARN_BYTES;
    uint64_t bytes = events > UINT64_MAX / bytes_per_event ? UINT64_MAX : events * bytes_per_event;
    if (bytes <= limit)
        return;
    char size[STROBE_UNITS_LEN];
    strobe__cli_say("export: warning: %s will be about %s (%llu events x %u B); narrow it with --from/--to, "
                    "--threads, --processes, --ranks or --min-duration",
                    out, strobe__fmt_bytes(size, bytes), (unsigned long long)events, bytes_per_event);
}

int strobe__cmd_export(int argc, char **argv)
{
    /* bytes_per_event: output bytes per event of the trace, measured with
     * each exporter (docs/cli.md, "Size warning"); 0 = not a trace export,
     * the selection options do not apply. */
    static const struct {
        const char *name;
        exporter_fn fn;
        unsigned bytes_per_event;
    } formats[] = {
#if STROBE_WITH_OTF2
        {"otf2", strobe_export_otf2, STROBE_EXPORT_OTF2_BYTES_PER_EVENT},
#else
        {"otf2", NULL, STROBE_EXPORT_OTF2_BYTES_PER_EVENT}, /* NULL: says it was built without */
#endif
        {"chrome", strobe_export_chrome, STROBE_EXPORT_CHROME_BYTES_PER_EVENT},
        {"perfetto", strobe_export_perfetto, STROBE_EXPORT_PERFETTO_BYTES_PER_EVENT},
        {"cubex", strobe_export_cubex, 0},
        {"pprof", strobe_export_pprof, 0},
        {"paraver", strobe_export_paraver, STROBE_EXPORT_PARAVER_BYTES_PER_EVENT},
    };
    size_t format = SIZE_MAX;
    const char *out = NULL;
    struct export_request rq = {.sel = {.to_ns = UINT64_MAX}};
    int c, code = 0;
    while (code == 0 && (c = strobe__cli_getopt("export", argc, argv, ":ho:", export_options)) != -1) {
        switch (c) {
        case OPT_FORMAT:
            format = SIZE_MAX;
            for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
                if (strcmp(optarg, formats[i].name) == 0)
                    format = i;
            if (format == SIZE_MAX)
                code = strobe__cli_usage_error(
                    "export",
                    "--format: unknown format '%s' (otf2, chrome, perfetto, cubex, pprof or paraver)",
                    optarg);
            else if (!formats[format].fn) {
                strobe__cli_say("export: --format %s: %s", optarg, STROBE_WITHOUT("OTF2"));
                code = STROBE_EXIT_FAILURE;
            }
            break;
        case 'o':
            out = optarg;
            break;
        case OPT_FROM:
            rq.from = optarg;
            code = duration_option("--from", optarg, &rq.sel.from_ns);
            break;
        case OPT_TO:
            rq.to = optarg;
            code = duration_option("--to", optarg, &rq.sel.to_ns);
            break;
        case OPT_MIN_DURATION:
            rq.min_duration = optarg;
            code = duration_option("--min-duration", optarg, &rq.sel.min_duration_ns);
            break;
        case OPT_EXPORT_THREADS:
            code = list_option("--threads", optarg, &rq.threads, &rq.nthreads);
            break;
        case OPT_PROCESSES:
            code = list_option("--processes", optarg, &rq.pids, &rq.npids);
            break;
        case OPT_RANKS:
            code = list_option("--ranks", optarg, &rq.ranks, &rq.nranks);
            break;
        case OPT_CHUNK:
            rq.chunk = optarg;
            code = chunk_option("export", optarg, &rq.chunk_first, &rq.chunk_count);
            break;
        case OPT_CHUNK_SIZE:
            rq.chunk_size = optarg;
            if (strobe__parse_size(optarg, &rq.part_bytes) != 0 || rq.part_bytes == 0)
                code = strobe__cli_usage_error("export", "--chunk-size: '%s' is not a size (64M, 1G, 500k)", optarg);
            break;
        case 'h':
            fputs(strobe__export_help, stdout);
            goto done;
        default:
            code = STROBE_EXIT_USAGE;
            break;
        }
    }
    bool selecting = rq.from || rq.to || rq.min_duration || rq.nthreads || rq.npids || rq.nranks;
    bool splittable = format != SIZE_MAX && (formats[format].fn == strobe_export_chrome ||
                                             formats[format].fn == strobe_export_perfetto);
    if (code != 0)
        goto done;
    if (optind >= argc)
        code = strobe__cli_usage_error("export", "missing experiment directory");
    else if (optind + 1 < argc)
        code = strobe__cli_usage_error("export", "unexpected argument '%s'", argv[optind + 1]);
    else if (format == SIZE_MAX)
        code = strobe__cli_usage_error("export",
                                       "missing --format (otf2, chrome, perfetto, cubex, pprof or paraver)");
    else if (!out || !*out)
        code = strobe__cli_usage_error("export", "missing -o OUT");
    else if (selecting && formats[format].bytes_per_event == 0)
        code =
            strobe__cli_usage_error("export",
                                    "--from, --to, --threads, --processes, --ranks and --min-duration select "
                                    "events of trace exports (otf2, chrome, perfetto, paraver), not %s",
                                    formats[format].name);
    else if (rq.chunk && formats[format].bytes_per_event == 0)
        code = strobe__cli_usage_error("export", "--chunk selects events of trace exports (otf2, chrome, perfetto, "
                                       "paraver), not %s", formats[format].name);
    else if (rq.chunk_size && !splittable)
        code = strobe__cli_usage_error("export", "--chunk-size splits chrome and perfetto exports, not %s",
                                       formats[format].name);
    else if (rq.from && rq.to && rq.sel.from_ns > rq.sel.to_ns)
        code = strobe__cli_usage_error("export", "--from %s is after --to %s", rq.from, rq.to);
    if (code != 0)
        goto done;
    const char *dir = argv[optind];

    struct strobe_experiment *exp = strobe__cli_open_experiment("export", dir);
    if (!exp) {
        code = STROBE_EXIT_FAILURE;
        goto done;
    }
    struct strobe_errbuf eb = {""};
    struct strobe_select_summary sum = {.events = exp->total_events};
    bool *threads = NULL;
    if (rq.chunk && (code = apply_chunks("export", exp, rq.chunk, rq.chunk_first, rq.chunk_count)) != 0) {
        /* said */
    } else if (rq.from && rq.sel.from_ns > exp->duration_ns) {
        char end[STROBE_UNITS_LEN];
        code = strobe__cli_usage_error("export", "--from %s is after the end of %s (%s)", rq.from, dir,
                                       strobe__fmt_time(end, exp->duration_ns));
    } else if (selecting && (code = select_threads(exp, dir, &rq, &threads)) == 0) {
        rq.sel.threads = threads;
        int rc = strobe_experiment_select(exp, &rq.sel, &sum, &eb);
        if (rc) {
            strobe__cli_say("export: %s", eb.msg[0] ? eb.msg : strobe_strerror(rc));
            code = STROBE_EXIT_FAILURE;
        }
    }
    if (code == 0) {
        if (formats[format].bytes_per_event) /* a profile's size does not grow with the events */
            warn_size(out, sum.events, formats[format].bytes_per_event);
        struct strobe__progress prog;
        char what[512];
        snprintf(what, sizeof what, "writing %s", out);
        strobe__progress_init(&prog, what);
        uint32_t nparts = 0;
        struct strobe_export_opts eo = {
            .progress = strobe__progress_cb, .progress_arg = &prog, .part_bytes = rq.part_bytes, .nparts = &nparts};
        int rc = formats[format].fn(exp, out, &eo, &eb);
        strobe__progress_end(&prog);
        if (rc) {
            strobe__cli_say("export: %s", eb.msg[0] ? eb.msg : strobe_strerror(rc));
            code = STROBE_EXIT_FAILURE;
        } else if (rq.chunk_size) {
            char *first = strobe__part_name(out, 0), *last = strobe__part_name(out, nparts - 1);
            strobe__cli_say("export: %u parts of about %s: %s ... %s", nparts, rq.chunk_size, first ? first : out,
                            last ? last : out);
            free(first);
            free(last);
        }
        if (rc == 0 && rq.min_duration) {
            strobe__cli_say("export: %llu frames shorter than %s dropped (%llu events)",
                            (unsigned long long)sum.short_frames, rq.min_duration,
                            (unsigned long long)sum.short_events);
        }
    }
    free(threads);
    strobe_experiment_close(exp);
done:
    free(rq.threads);
    free(rq.pids);
    free(rq.ranks);
    return code;
}
