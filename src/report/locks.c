/* SPDX-License-Identifier: MIT */
/* The --locks section of the text report (see locks.h). */
#include "report/locks.h"

#include <errno.h>
#include <inttypes.h>

#include "common/format.h"
#include "report/units.h"

const char *strobe__sync_kind_name(uint32_t kind)
{
    static const char *const names[] = {"?", "mutex", "rwlock", "spin", "sem", "cond", "barrier"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

void strobe__object_label(FILE *out, const struct strobe_experiment *exp, uint32_t process, const char *name,
                          uint64_t object)
{
    if (exp->nprocesses > 1)
        fprintf(out, "%" PRIu64 ":", exp->processes[process].pid);
    if (name)
        fprintf(out, "%s", name);
    else
        fprintf(out, "0x%" PRIx64, object);
}

void strobe__thread_label(FILE *out, const struct strobe_experiment *exp, uint32_t thread)
{
    const struct strobe_thread_info *t = &exp->threads[thread];
    if (exp->nprocesses > 1)
        fprintf(out, "%" PRIu64 "/", exp->processes[t->process].pid);
    fprintf(out, "t%u", t->index);
}

int strobe_report_locks_text(FILE *out, const struct strobe_experiment *exp,
                             const struct strobe_lock_model *m, size_t top)
{
    char w[STROBE_UNITS_LEN], mx[STROBE_UNITS_LEN], h[STROBE_UNITS_LEN];
    fprintf(out, "\nLocks (per object and acquiring call path, by total wait)\n");
    if (m->profiled_threads == 0)
        fprintf(out, "  no profiles in this experiment (STROBE_PROFILE=0): lock counts live there\n");
    else if (m->nrows == 0)
        fprintf(out,
                "  none (no lock, semaphore or condition variable was used, or `strobe run --no-locks`)\n");
    else
        fprintf(out, "  %10s %10s %10s %10s %10s  %-7s %s\n", "wait", "max wait", "acquired", "contended",
                "hold", "kind", "object / threads (acquisitions) / call path");
    size_t shown = top && top < m->nrows ? top : m->nrows;
    for (size_t i = 0; i < shown; i++) {
        const struct strobe_lock_row *r = &m->rows[i];
        if (r->hold_samples)
            strobe__fmt_time(h, r->hold_ns);
        else
            snprintf(h, sizeof h, "-");
        fputs("  ", out);
        strobe__cell(out, strobe__fmt_time(w, r->wait_ns), 10);
        fputc(' ', out);
        strobe__cell(out, strobe__fmt_time(mx, r->max_wait_ns), 10);
        fprintf(out, " %10" PRIu64 " %10" PRIu64 " ", r->acquisitions, r->contended);
        strobe__cell(out, h, 10);
        fprintf(out, "  %-7s ", strobe__sync_kind_name(r->kind));
        strobe__object_label(out, exp, r->process, r->name, r->object);
        fprintf(out, "\n  %*s threads:", 64, "");
        for (size_t k = 0; k < r->nthreads; k++) {
            fputc(' ', out);
            strobe__thread_label(out, exp, r->threads[k].thread);
            fprintf(out, " %" PRIu64, r->threads[k].acquisitions);
        }
        fprintf(out, "\n  %*s path: ", 64, "");
        if (r->depth == 0)
            fprintf(out, "(outside measured regions)");
        for (uint32_t k = 0; k < r->depth; k++)
            fprintf(out, "%s%s", k ? " > " : "", exp->regions[r->path[k]].name);
        fputc('\n', out);
    }
    if (shown < m->nrows)
        fprintf(out, "  ... %zu more (--top 0 shows all)\n", m->nrows - shown);
    if (m->nrows)
        fprintf(out,
                "  hold: estimated from the timed holds (the first 16 per thread and path, then about 1 in "
                "16); '-' none timed\n");
    if (m->nsites) {
        fprintf(out,
                "\nWaits by call site (from the trace: each wait at its first frame outside the runtime)\n");
        fprintf(out, "  %10s %10s %10s  %-7s %s\n", "wait", "max wait", "waits", "kind",
                "object / waiting function");
        size_t sites = top && top < m->nsites ? top : m->nsites;
        for (size_t i = 0; i < sites; i++) {
            const struct strobe_lock_site *s = &m->sites[i];
            fputs("  ", out);
            strobe__cell(out, strobe__fmt_time(w, s->wait_ns), 10);
            fputc(' ', out);
            strobe__cell(out, strobe__fmt_time(mx, s->max_wait_ns), 10);
            fprintf(out, " %10" PRIu64 "  %-7s ", s->waits, strobe__sync_kind_name(s->kind));
            strobe__object_label(out, exp, s->process, s->name, s->object);
            fprintf(out, "\n  %*s at %s", 42, "", s->function);
            if (*s->file)
                fprintf(out, " (%s:%u)", s->file, s->line);
            fputc('\n', out);
        }
        if (sites < m->nsites)
            fprintf(out, "  ... %zu more (--top 0 shows all)\n", m->nsites - sites);
    }
    if (m->nbarriers) {
        fprintf(out, "\nBarriers (by total wait; max wait is the imbalance)\n");
        fprintf(out, "  %10s %10s %10s %10s %10s  %s\n", "wait", "max wait", "episodes", "waits", "threads",
                "object");
        for (size_t i = 0; i < m->nbarriers; i++) {
            const struct strobe_barrier_row *b = &m->barriers[i];
            fputs("  ", out);
            strobe__cell(out, strobe__fmt_time(w, b->wait_ns), 10);
            fputc(' ', out);
            strobe__cell(out, strobe__fmt_time(mx, b->max_wait_ns), 10);
            fprintf(out, " %10" PRIu64 " %10" PRIu64 " %10zu  ", b->episodes, b->waits, b->nthreads);
            strobe__object_label(out, exp, b->process, b->name, b->object);
            fputc('\n', out);
        }
    }
    return ferror(out) ? -EIO : 0;
}
