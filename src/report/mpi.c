/* SPDX-License-Identifier: MIT */
/* The MPI section of the text report (see mpi.h). */
#include "report/mpi.h"

#include <inttypes.h>
#include <stdlib.h>

#include "report/units.h"

/* Columns of ranks the text shows (JSON has them all). */
#define MAX_RANK_COLUMNS 16u

static void ranks_table(FILE *out, const struct strobe_mpi_model *m)
{
    char a[STROBE_UNITS_LEN], b[STROBE_UNITS_LEN];
    fprintf(out, "  %6s %12s %12s %7s %10s %10s %14s %10s %14s\n", "rank", "MPI time", "thread time", "MPI %",
            "calls", "sent", "sent bytes", "received", "recv bytes");
    for (uint32_t r = 0; r < m->nranks; r++) {
        const struct strobe_mpi_rank *k = &m->ranks[r];
        if (!k->present) {
            fprintf(out, "  %6u  (not measured)\n", r);
            continue;
        }
        fprintf(out, "  %6u ", r);
        strobe__cell(out, strobe__fmt_time(a, k->mpi_ns), 12);
        fputc(' ', out);
        strobe__cell(out, strobe__fmt_time(b, k->thread_ns), 12);
        fprintf(out, " %6.2f%% %10" PRIu64 " %10" PRIu64 " %14" PRIu64 " %10" PRIu64 " %14" PRIu64 "\n",
                k->thread_ns ? 100.0 * (double)k->mpi_ns / (double)k->thread_ns : 0.0, k->calls, k->sent,
                k->sent_bytes, k->received, k->received_bytes);
    }
}

static void calls_table(FILE *out, const struct strobe_experiment *exp, const struct strobe_mpi_model *m,
                        size_t top)
{
    char a[STROBE_UNITS_LEN];
    uint32_t cols = m->nranks < MAX_RANK_COLUMNS ? m->nranks : MAX_RANK_COLUMNS;
    fprintf(out, "\n  MPI functions (by time; time per rank)\n  %12s %10s", "time", "calls");
    for (uint32_t r = 0; r < cols; r++) {
        char head[16];
        snprintf(head, sizeof head, "rank %u", r);
        fprintf(out, " %12s", head);
    }
    fprintf(out, "  function\n");
    size_t shown = top && top < m->ncalls ? top : m->ncalls;
    for (size_t i = 0; i < shown; i++) {
        const struct strobe_mpi_call *c = &m->calls[i];
        fputs("  ", out);
        strobe__cell(out, strobe__fmt_time(a, c->ns), 12);
        fprintf(out, " %10" PRIu64, c->calls);
        for (uint32_t r = 0; r < cols; r++) {
            fputc(' ', out);
            strobe__cell(out, strobe__fmt_time(a, c->rank_ns[r]), 12);
        }
        fprintf(out, "  %s\n", exp->regions[c->region].name);
    }
    if (shown < m->ncalls)
        fprintf(out, "  ... %zu more (--top 0 shows all)\n", m->ncalls - shown);
}

static void histogram(FILE *out, const struct strobe_mpi_model *m)
{
    fprintf(out, "\n  Message sizes (point-to-point, as sent)\n  %-24s %10s %14s\n", "bytes", "messages",
            "bytes");
    for (unsigned b = 0; b < STROBE_MPI_HIST_BUCKETS; b++) {
        if (!m->hist[b])
            continue;
        char range[48];
        if (b == 0)
            snprintf(range, sizeof range, "0");
        else if (b == STROBE_MPI_HIST_BUCKETS - 1)
            snprintf(range, sizeof range, "%" PRIu64 "+", strobe_mpi_bucket_low(b));
        else
            snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, strobe_mpi_bucket_low(b),
                     strobe_mpi_bucket_low(b + 1) - 1);
        fprintf(out, "  %-24s %10" PRIu64 " %14" PRIu64 "\n", range, m->hist[b], m->hist_bytes[b]);
    }
}

static void matrix(FILE *out, const struct strobe_mpi_model *m)
{
    uint32_t n = m->nranks < MAX_RANK_COLUMNS ? m->nranks : MAX_RANK_COLUMNS;
    fprintf(out, "\n  Bytes sent (row: sender, column: receiver)\n  %6s", "");
    for (uint32_t c = 0; c < n; c++)
        fprintf(out, " %12u", c);
    fputc('\n', out);
    for (uint32_t r = 0; r < n; r++) {
        fprintf(out, "  %6u", r);
        for (uint32_t c = 0; c < n; c++)
            fprintf(out, " %12" PRIu64, m->matrix_bytes[(size_t)r * m->nranks + c]);
        fputc('\n', out);
    }
    if (n < m->nranks)
        fprintf(out, "  (the first %u of %u ranks; --format json has all)\n", n, m->nranks);
}

void strobe__report_mpi_text(FILE *out, const struct strobe_experiment *exp, const struct strobe_mpi_model *m,
                             size_t top)
{
    if (m->traced)
        fprintf(out, "\nMPI (%u ranks; %" PRIu64 " point-to-point messages, %" PRIu64 " bytes, as sent)\n",
                m->nranks, m->messages, m->bytes);
    else
        fprintf(out, "\nMPI (%u ranks)\n", m->nranks);
    ranks_table(out, m);
    calls_table(out, exp, m, top);
    if (!m->traced) {
        fprintf(out,
                "\n  no traces in this experiment (STROBE_TRACE=0): messages and collectives live there\n");
        return;
    }
    if (m->messages) {
        histogram(out, m);
        matrix(out, m);
    }
    if (m->pairs) {
        char a[STROBE_UNITS_LEN], b[STROBE_UNITS_LEN];
        /* > 0: a receive ended before its send began, which only clocks
         * that disagree can show */
        fprintf(out, "\n  Clock skew (%" PRIu64 " matched messages): %s %s%s; as recorded: %s %s\n", m->pairs,
                m->skew_ns > 0 ? "a receive ends before its send by up to" : "no receive ends before its send, slack",
                strobe__fmt_time(a, (uint64_t)llabs(m->skew_ns)),
                m->skew_ns > 0 ? " after alignment" : "",
                m->skew_unaligned_ns > 0 ? "up to" : "slack",
                strobe__fmt_time(b, (uint64_t)llabs(m->skew_unaligned_ns)));
    }
    bool colls = false;
    for (unsigned c = 1; c < STROBE_MPI_NCOLLS; c++)
        colls = colls || m->colls[c].calls;
    if (!colls)
        return;
    fprintf(out, "\n  Collectives (over all ranks)\n  %10s %14s %14s  %s\n", "calls", "sent bytes",
            "recv bytes", "collective");
    for (unsigned c = 1; c < STROBE_MPI_NCOLLS; c++)
        if (m->colls[c].calls)
            fprintf(out, "  %10" PRIu64 " %14" PRIu64 " %14" PRIu64 "  %s\n", m->colls[c].calls,
                    m->colls[c].sent_bytes, m->colls[c].received_bytes, strobe_mpi_coll_name(c));
}
