/* SPDX-License-Identifier: MIT */
/*
 * Display names, thread ordering, event iteration and the start of the
 * profile exports, shared by the exporters (see names.h).
 */
#include "export/names.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/samples.h"
#include "export/output.h"
#include "strobe/strobe.h"

const char *strobe__basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

void strobe__thread_name(const struct strobe_experiment *exp, uint32_t thread, char *buf, size_t size)
{
    const struct strobe_thread_info *t = &exp->threads[thread];
    snprintf(buf, size, "thread %" PRIu32 " (tid %" PRIu64 ")", t->index, t->tid);
}

void strobe__process_name(const struct strobe_experiment *exp, uint32_t process, char *buf, size_t size)
{
    const struct strobe_process_info *p = &exp->processes[process];
    const char *exe = p->exe ? strobe__basename(p->exe) : "";
    if (p->has_rank) {
        /* the model keeps the processes of one rank next to each other */
        bool alone = (process == 0 || !exp->processes[process - 1].has_rank ||
                      exp->processes[process - 1].rank != p->rank) &&
                     (process + 1 >= exp->nprocesses || !exp->processes[process + 1].has_rank ||
                      exp->processes[process + 1].rank != p->rank);
        if (alone)
            snprintf(buf, size, "rank %" PRIu32, p->rank);
        else
            snprintf(buf, size, "rank %" PRIu32 ": %s (pid %" PRIu64 ")", p->rank, *exe ? exe : "process",
                     p->pid);
    } else if (*exe)
        snprintf(buf, size, "%s (pid %" PRIu64 ")", exe, p->pid);
    else
        snprintf(buf, size, "process %" PRIu64, p->pid);
}

uint32_t strobe__group_leader(const struct strobe_experiment *exp, uint32_t process)
{
    const struct strobe_process_info *p = exp->processes;
    while (process > 0 && p[process].has_rank && p[process - 1].has_rank &&
           p[process - 1].rank == p[process].rank)
        process--;
    return process;
}

void strobe__group_name(const struct strobe_experiment *exp, uint32_t process, char *buf, size_t size)
{
    const struct strobe_process_info *p = &exp->processes[process];
    if (p->has_rank)
        snprintf(buf, size, "MPI Rank %" PRIu32, p->rank);
    else
        strobe__process_name(exp, process, buf, size);
}

const char *strobe__host_name(const struct strobe_experiment *exp)
{
    const char *host = strobe_experiment_meta(exp, "host");
    return host && *host ? host : "localhost";
}

struct tree_key {
    uint32_t process, index, thread;
};

static int tree_order_cmp(const void *a, const void *b)
{
    const struct tree_key *x = a, *y = b;
    if (x->process != y->process)
        return x->process < y->process ? -1 : 1;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

uint32_t *strobe__threads_in_tree_order(const struct strobe_experiment *exp)
{
    if (exp->nthreads == 0)
        return NULL;
    struct tree_key *keys = malloc(exp->nthreads * sizeof *keys);
    uint32_t *order = malloc(exp->nthreads * sizeof *order);
    if (!keys || !order) {
        free(keys);
        free(order);
        return NULL;
    }
    for (size_t i = 0; i < exp->nthreads; i++)
        keys[i] = (struct tree_key){exp->threads[i].process, exp->threads[i].index, (uint32_t)i};
    qsort(keys, exp->nthreads, sizeof *keys, tree_order_cmp);
    for (size_t i = 0; i < exp->nthreads; i++)
        order[i] = keys[i].thread;
    free(keys);
    return order;
}

int strobe__export_profile_begin(const struct strobe_experiment *exp, const char *out,
                                 const struct strobe_export_opts *opts, struct strobe_profile **prof,
                                 struct strobe_sample_model **sm, struct strobe__out_file *o,
                                 struct strobe_errbuf *eb)
{
    *prof = NULL;
    *sm = NULL;
    if (exp->nthreads == 0)
        return strobe__error(eb, -ENODATA, "%s: the experiment has no threads to export", out);
    strobe__export_progress(opts, 0, exp->total_bytes);
    int rc = strobe_profile_build(exp, STROBE_PROFILE_AUTO, prof, eb);
    if (rc < 0)
        return rc;
    if ((*prof)->nnodes == 0)
        rc = strobe__error(eb, STROBE_ERR_FORMAT, "%s: the call-path profile is empty", out);
    else if ((rc = strobe_sample_model_build(exp, *prof, sm, eb)) == -ENOENT) /* not sampled */
        rc = 0;
    if (rc == 0)
        rc = strobe__out_file_open(o, out, eb);
    if (rc < 0) {
        strobe_sample_model_free(*sm);
        strobe_profile_free(*prof);
        *prof = NULL;
        *sm = NULL;
    }
    return rc;
}

void strobe__export_progress(const struct strobe_export_opts *opts, uint64_t done, uint64_t total)
{
    if (opts && opts->progress)
        opts->progress(done, total, opts->progress_arg);
}

int strobe__check_event_ids(const struct strobe_experiment *exp, uint32_t thread, const struct strobe_event *ev,
                            struct strobe_errbuf *eb)
{
    bool has_region =
        ev->type == STROBE_EVENT_ENTER || ev->type == STROBE_EVENT_INHERIT || ev->type == STROBE_EVENT_EXIT;
    if ((has_region && ev->region >= exp->nregions) ||
        (ev->type == STROBE_EVENT_METRIC && ev->metric >= exp->nmetrics))
        return strobe__error(eb, STROBE_ERR_FORMAT, "%s: offset %" PRIu64 ": undefined region or metric id",
                             exp->threads[thread].stream_path, ev->offset);
    return 0;
}

int strobe__export_thread_events(const struct strobe_experiment *exp, uint32_t thread,
                                 const struct strobe_export_opts *opts, uint64_t *done, strobe__event_fn fn,
                                 void *arg, struct strobe_errbuf *eb)
{
    struct strobe_stream_iter *it;
    int rc = strobe_stream_open(exp, thread, &it, eb);
    if (rc < 0)
        return rc;
    struct strobe_event ev;
    uint64_t n = 0;
    while ((rc = strobe_stream_next(it, &ev, eb)) > 0) {
        if ((rc = fn(arg, thread, &ev, eb)) < 0)
            break;
        if ((++n & 0xffff) == 0)
            strobe__export_progress(opts, *done + ev.offset, exp->total_bytes);
    }
    strobe_stream_close(it);
    if (rc < 0)
        return rc;
    *done += exp->threads[thread].bytes;
    strobe__export_progress(opts, *done, exp->total_bytes);
    return 0;
}
