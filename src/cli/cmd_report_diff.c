/* SPDX-License-Identifier: MIT */
/*
 * `strobe report --diff A B`: opens the runs of both sides (A and B are
 * experiment directories, or lists of them separated by commas for
 * repeated runs), builds each run's profile and the models the comparison
 * uses (samples, TM statistics, MPI summary: whichever the run recorded),
 * merges them (analysis/diff.h) and prints the comparison (report/diff.h)
 * or writes the HTML page with the differential flame graph; with
 * --fail-above it is a regression gate that exits 3 when a call path grew.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/diff.h"
#include "cli/cli.h"
#include "report/diff.h"
#include "report/html.h"
#include "report/units.h"
#include "strobe/strobe.h"

/* One run being compared, with what was built from it. */
struct run {
    struct strobe_experiment *exp;
    struct strobe_diff_run models; /* what the diff reads */
    struct strobe_profile *prof;
    struct strobe_sample_model *samples;
    struct strobe_tm_model *tm;
    struct strobe_mpi_model *mpi;
};

/* Splits a side's argument into directories: the argument itself when it
 * names an existing path (a directory may have a comma in its name), else
 * its comma-separated parts. *out (malloc'd, with the copy of the text in
 * *buf) gets them. Returns 0, -EINVAL for an empty part, or -ENOMEM. */
static int split_side(const char *arg, char **buf, const char ***out, size_t *n)
{
    struct stat st;
    *buf = strdup(arg);
    size_t parts = 1;
    for (const char *p = arg; *p; p++)
        parts += *p == ',' && stat(arg, &st) != 0;
    *out = calloc(parts, sizeof **out);
    if (!*buf || !*out)
        return -ENOMEM;
    *n = 0;
    if (parts == 1) {
        (*out)[(*n)++] = *buf;
        return **buf ? 0 : -EINVAL;
    }
    for (char *p = *buf, *next; p; p = next) {
        next = strchr(p, ',');
        if (next)
            *next++ = 0;
        if (!*p)
            return -EINVAL;
        (*out)[(*n)++] = p;
    }
    return 0;
}

/* Opens DIR and builds its models; prints the one-line error naming DIR. */
static int open_run(struct run *r, const char *dir, int source)
{
    r->exp = strobe__cli_open_experiment("report", dir);
    if (!r->exp)
        return STROBE_EXIT_FAILURE;
    struct strobe_errbuf eb = {""};
    int rc = strobe_profile_build(r->exp, source, &r->prof, &eb);
    if (rc == 0 && (rc = strobe_sample_model_build(r->exp, r->prof, &r->samples, &eb)) == -ENOENT)
        rc = 0;
    if (rc == 0)
        rc = strobe_tm_model_build(r->exp, r->prof, &r->tm, &eb);
    if (rc == 0 && strobe_mpi_present(r->exp))
        rc = strobe_mpi_model_build(r->exp, r->prof, &r->mpi, &eb);
    if (rc) {
        strobe__cli_say("report: %s: %s", dir, eb.msg[0] ? eb.msg : strobe_strerror(rc));
        return STROBE_EXIT_FAILURE;
    }
    r->models = (struct strobe_diff_run){r->exp, r->prof, r->samples, r->tm, r->mpi};
    return 0;
}

static void close_run(struct run *r)
{
    strobe_sample_model_free(r->samples);
    strobe_tm_model_free(r->tm);
    strobe_mpi_model_free(r->mpi);
    strobe_profile_free(r->prof);
    strobe_experiment_close(r->exp);
}

/* --tm, --mpi, --samples with --diff: every run must have the data. */
static int check_required(const struct strobe__diff_request *rq, const struct run *runs, size_t n,
                          const char *const *dirs)
{
    for (size_t i = 0; i < n; i++) {
        const char *missing = rq->samples && !runs[i].samples
                                  ? "--samples: the run did not sample (record with `strobe run --sample`)"
                              : rq->tm && (!runs[i].tm || runs[i].tm->nblocks == 0)
                                  ? "--tm: no transactional-memory statistics (record with `strobe run --tm`)"
                              : rq->mpi && !runs[i].mpi
                                  ? "--mpi: no MPI calls were recorded (record them with `strobe run --mpi`)"
                                  : NULL;
        if (missing) {
            strobe__cli_say("report: %s: %s", dirs[i], missing);
            return STROBE_EXIT_FAILURE;
        }
    }
    return 0;
}

/* The page: B's report (flame graph, tables) with the differential flame
 * graph of the comparison, written all or nothing. */
static int write_html(const char *path, const struct run *b, const struct strobe_diff *d,
                      const struct strobe_diff_report_opts *o, int sort)
{
    struct strobe_html_opts ho = {.diff = d, .diff_opts = o};
    strobe_report_opts_init(&ho.report);
    ho.report.sort = sort;
    struct strobe_errbuf eb = {""};
    int rc = strobe__cli_html_write(path, b->exp, b->prof, &ho, &eb);
    strobe__cli_html_error(path, b->exp, rc, &eb);
    return rc;
}

int strobe__report_diff(const struct strobe__diff_request *rq)
{
    char *text[2] = {NULL, NULL};
    const char **dirs[2] = {NULL, NULL};
    size_t n[2] = {0, 0};
    int code = 0;
    for (int s = 0; s < 2 && code == 0; s++) {
        int rc = split_side(s ? rq->b : rq->a, &text[s], &dirs[s], &n[s]);
        if (rc == -ENOMEM) {
            strobe__cli_say("report: out of memory");
            code = STROBE_EXIT_FAILURE;
        } else if (rc) {
            code = strobe__cli_usage_error("report", "--diff: '%s' has an empty directory name",
                                           s ? rq->b : rq->a);
        }
    }
    struct run *runs = code ? NULL : calloc(n[0] + n[1], sizeof *runs);
    struct strobe_diff_run *models = code ? NULL : calloc(n[0] + n[1], sizeof *models);
    const char **all = code ? NULL : calloc(n[0] + n[1], sizeof *all);
    if (code == 0 && (!runs || !models || !all)) {
        strobe__cli_say("report: out of memory");
        code = STROBE_EXIT_FAILURE;
    }
    size_t opened = 0;
    for (int s = 0; s < 2 && code == 0; s++) {
        for (size_t r = 0; r < n[s] && code == 0; r++, opened++) {
            all[opened] = dirs[s][r];
            code = open_run(&runs[opened], dirs[s][r], rq->source);
            models[opened] = runs[opened].models;
        }
    }
    if (code == 0)
        code = check_required(rq, runs, opened, all);
    struct strobe_diff *d = NULL;
    if (code == 0) {
        int rc = strobe_diff_build(models, n[0], models + n[0], n[1], &d);
        if (rc) {
            strobe__cli_say("report: comparing %s and %s: %s", rq->a, rq->b,
                            rc == STROBE_ERR_FORMAT ? "inconsistent call-path profile" : strobe_strerror(rc));
            code = STROBE_EXIT_FAILURE;
        }
    }
    if (code == 0) {
        struct strobe_diff_report_opts o = {.dirs = {dirs[0], dirs[1]},
                                            .sort = rq->sort,
                                            .top = rq->top,
                                            .gate = rq->gate,
                                            .fail_above = rq->fail_above,
                                            .min_ns = rq->min_ns};
        if (rq->gate)
            o.nfailed = strobe_diff_gate(d, rq->fail_above, rq->min_ns);
        int rc = rq->format == STROBE__DIFF_HTML   ? write_html(rq->out_path, &runs[n[0]], d, &o, rq->sort)
                 : rq->format == STROBE__DIFF_JSON ? strobe_report_diff_json(stdout, d, &o)
                                                   : strobe_report_diff_text(stdout, d, &o);
        if (rc && rq->format != STROBE__DIFF_HTML)
            strobe__cli_say("report: writing the report: %s", strobe_strerror(rc));
        if (rc) {
            code = STROBE_EXIT_FAILURE;
        } else if (o.nfailed) {
            char floor[STROBE_UNITS_LEN];
            strobe__cli_say(
                "report: gate failed: %zu call path%s grew more than %g%% (inclusive time from %s)",
                o.nfailed, o.nfailed == 1 ? "" : "s", rq->fail_above, strobe__fmt_time(floor, rq->min_ns));
            code = STROBE_EXIT_GATE;
        }
    }
    strobe_diff_free(d);
    for (size_t i = 0; i < opened; i++)
        close_run(&runs[i]);
    free(runs);
    free(models);
    free(all);
    for (int s = 0; s < 2; s++) {
        free(dirs[s]);
        free(text[s]);
    }
    return code;
}
