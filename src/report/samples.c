/* SPDX-License-Identifier: MIT */
/* The sampled section of the text report (see samples.h). */
#include "report/samples.h"

#include <inttypes.h>
#include <string.h>

#include "common/format.h"
#include "report/malloc.h"
#include "report/units.h"
#include "report/view.h"

const char *strobe__sample_source_name(int source)
{
    return source == STROBE_SAMPLE_PERF    ? "perf task-clock"
           : source == STROBE_SAMPLE_TIMER ? "CPU-time timers"
                                           : "?";
}

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

static size_t shown(size_t n, size_t top)
{
    return top && top < n ? top : n;
}

/* "name  file:line" or "name  [module]" */
static void func_cell(FILE *out, const struct strobe_sample_func *f)
{
    fputs(f->name, out);
    if (f->file[0])
        fprintf(out, "  %s:%u", f->file, f->line);
    else if (f->module[0] && !strchr(f->name, '+')) {
        const char *base = strrchr(f->module, '/');
        fprintf(out, "  [%s]", base ? base + 1 : f->module);
    }
}

static void tree(FILE *out, const struct strobe_sample_model *m, uint32_t n, int depth, size_t top,
                 uint64_t min_total)
{
    size_t k = 0;
    uint64_t rest = 0, rest_n = 0;
    for (uint32_t c = m->nodes[n].first_child; c != STROBE_NONE; c = m->nodes[c].next_sibling) {
        const struct strobe_sample_node *x = &m->nodes[c];
        if ((top && k >= top) || x->total < min_total) {
            rest += x->total;
            rest_n++;
            continue;
        }
        k++;
        fprintf(out, "  %8" PRIu64 " %6.1f%% %8" PRIu64 "  %*s", x->total, pct(x->total, m->samples), x->self,
                2 * depth, "");
        func_cell(out, &m->funcs[x->func]);
        fputc('\n', out);
        tree(out, m, c, depth + 1, top, min_total);
    }
    if (rest_n)
        fprintf(out, "  %8" PRIu64 " %6.1f%% %8s  %*s(%" PRIu64 " more)\n", rest, pct(rest, m->samples), "",
                2 * depth, "", rest_n);
}

double strobe__sample_cover(const struct strobe_experiment *exp, const struct strobe_sample_model *m,
                            size_t th, uint64_t *cpu_ns, bool *listed)
{
    const struct strobe_sample_thread *st = &m->threads[th];
    const struct strobe_thread_info *ti = &exp->threads[th];
    bool user = m->source == STROBE_SAMPLE_PERF;
    uint64_t period = m->hz ? 1000000000u / m->hz : 0;
    *cpu_ns = ti->has_rusage ? 1000 * (ti->rusage.utime_us + (user ? 0 : ti->rusage.stime_us)) : 0;
    /* a thread that ran without a single sample is listed too: it kept
     * SIGPROF blocked (liblzma's workers block every signal) */
    *listed = st->samples || st->missed || (st->sampled && *cpu_ns >= 100000000u);
    /* CPU time is counted in scheduler ticks: below 100 ms it says little */
    return *cpu_ns >= 100000000u ? (double)(st->samples * period) / (double)*cpu_ns : -1;
}

void strobe__report_samples_text(FILE *out, const struct strobe_experiment *exp,
                                 const struct strobe_profile *prof, const struct strobe_sample_model *m,
                                 size_t top)
{
    char t[STROBE_UNITS_LEN];
    uint64_t period = m->hz ? 1000000000u / m->hz : 0;
    /* who sampled: the runtime, or strobe record attached to the process */
    const char *attached = strobe__report_meta(exp, "attached_pid");
    fprintf(out, "\nSamples (%s: %" PRIu32 " Hz of each thread's CPU time, %s%s)\n",
            attached ? "strobe record --pid" : "strobe run --sample", m->hz,
            strobe__sample_source_name(m->source),
            m->mixed_rates ? "; processes sampled at different rates" : "");
    fprintf(out, "  %" PRIu64 " samples (%s of CPU time) in %" PRIu64 " signals", m->samples,
            strobe__fmt_time(t, m->samples * period), m->records);
    if (m->missed)
        fprintf(out, ", %" PRIu64 " missed (signal blocked or delayed, or the runtime busy)", m->missed);
    if (m->truncated)
        fprintf(out, ", %" PRIu64 " with their outermost frames cut (deeper than %u frames%s)", m->truncated,
                STROBE_SAMPLE_MAX_FRAMES, attached ? " or the 8 KiB stack copy" : "");
    fputc('\n', out);
    if (m->source == STROBE_SAMPLE_PERF)
        fputs("  (user-mode CPU time: time in the kernel is not sampled)\n", out);
    if (m->unstacked)
        fprintf(out,
                "  (%" PRIu64
                " samples of threads without a trace (--no-trace): per instrumented call path only, "
                "their stacks were not recorded)\n",
                m->unstacked);

    fputs("\nSampled flat profile (by self samples)\n", out);
    fprintf(out, "  %8s %7s %8s %7s  %s\n", "self", "self%", "total", "total%", "function  file:line");
    for (size_t i = 0; i < shown(m->nfuncs, top); i++) {
        const struct strobe_sample_func *f = &m->funcs[i];
        fprintf(out, "  %8" PRIu64 " %6.1f%% %8" PRIu64 " %6.1f%%  ", f->self, pct(f->self, m->samples),
                f->total, pct(f->total, m->samples));
        func_cell(out, f);
        fputc('\n', out);
    }
    if (top && m->nfuncs > top)
        fprintf(out, "  (%zu more; --top 0 shows all)\n", m->nfuncs - top);

    fputs("\nSampled call tree (total samples, outermost frame first; branches under 1% not shown)\n", out);
    fprintf(out, "  %8s %7s %8s  %s\n", "total", "total%", "self", "function");
    tree(out, m, 0, 0, top, m->samples / 100 ? m->samples / 100 : 1);

    /* How much of each thread's CPU time (user mode for the perf source,
     * whose samples are user mode only) its samples stand for: far below
     * 100 % when it blocked SIGPROF or another handler took the signal. */
    bool user = m->source == STROBE_SAMPLE_PERF;
    fprintf(out, "\nSamples per thread (cover: samples x %s / the thread's %s CPU time)\n",
            strobe__fmt_time(t, period), user ? "user" : "user + system");
    fprintf(out, "  %8s %10s %8s %7s  %s\n", "thread", "samples", "missed", "cover",
            "hottest functions (self)");
    size_t low = 0;
    for (size_t th = 0; th < exp->nthreads; th++) {
        const struct strobe_sample_thread *st = &m->threads[th];
        uint64_t cpu_ns;
        bool listed;
        double c = strobe__sample_cover(exp, m, th, &cpu_ns, &listed);
        if (!listed)
            continue;
        char cover[16] = "?";
        if (c >= 0) {
            snprintf(cover, sizeof cover, "%.0f%%", 100 * c);
            low += c < 0.75;
        }
        fprintf(out, "  %8zu %10" PRIu64 " %8" PRIu64 " %7s ", th, st->samples, st->missed, cover);
        /* the three functions with most self samples in this thread */
        uint32_t best[3] = {STROBE_NONE, STROBE_NONE, STROBE_NONE};
        for (size_t i = 0; i < m->nfuncs; i++) {
            uint64_t v = m->funcs[i].thread_self[th];
            if (!v)
                continue;
            for (int k = 0; k < 3; k++) {
                if (best[k] == STROBE_NONE || v > m->funcs[best[k]].thread_self[th]) {
                    memmove(best + k + 1, best + k, (size_t)(2 - k) * sizeof *best);
                    best[k] = (uint32_t)i;
                    break;
                }
            }
        }
        for (int k = 0; k < 3 && best[k] != STROBE_NONE; k++)
            fprintf(out, " %s %.1f%%", m->funcs[best[k]].name,
                    pct(m->funcs[best[k]].thread_self[th], st->samples));
        fputc('\n', out);
    }
    if (low)
        fprintf(out,
                "  (%zu thread(s) sampled for less than 75 %% of its CPU time: SIGPROF blocked, or taken by "
                "another handler)\n",
                low);

    if (prof && m->npaths && !(m->npaths == 1 && m->paths[0].node == 0)) {
        fputs("\nSamples per instrumented call path (hybrid: the regions open when sampled)\n", out);
        fprintf(out, "  %8s %7s  %-30s  %s\n", "samples", "%", "mostly in (self)", "call path");
        for (size_t i = 0; i < shown(m->npaths, top); i++) {
            const struct strobe_sample_path *p = &m->paths[i];
            fprintf(out, "  %8" PRIu64 " %6.1f%%  ", p->samples, pct(p->samples, m->samples));
            char cell[256];
            if (p->top_func != STROBE_NONE)
                snprintf(cell, sizeof cell, "%s %.0f%%", m->funcs[p->top_func].name,
                         pct(p->top_samples, p->samples));
            else
                snprintf(cell, sizeof cell, "-");
            fprintf(out, "%-30s  ", cell);
            if (p->node == 0)
                fputs("(no instrumented region open)", out);
            else if (p->node == STROBE_NONE)
                fputs("(a call path the profile does not have)", out);
            else
                strobe__malloc_path(out, exp, prof, p->node);
            fputc('\n', out);
        }
        if (top && m->npaths > top)
            fprintf(out, "  (%zu more; --top 0 shows all)\n", m->npaths - top);
    }
}
