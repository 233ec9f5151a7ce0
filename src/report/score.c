/* SPDX-License-Identifier: MIT */
/* Filter advice: cost per region, full-run estimate, the regions to
 * exclude for a target, and the filter file (see score.h). */
#define _GNU_SOURCE /* qsort_r */
#include "report/score.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/filter.h"
#include "common/format.h"
#include "common/size.h"
#include "report/report.h"
#include "report/units.h"
#include "strobe/strobe.h"

int strobe__score_target_parse(const char *s, struct strobe__score_target *t)
{
    size_t n = strlen(s);
    if (n >= 2 && s[n - 1] == '%') {
        /* plain decimals only: strtod would also take "0x1p3" or "1e1" */
        if (strspn(s, "0123456789.") != n - 1)
            return STROBE_ERR_SYNTAX;
        char *end;
        double pct = strtod(s, &end);
        if (end != s + n - 1 || !(pct >= 0 && pct <= 100))
            return STROBE_ERR_SYNTAX;
        *t = (struct strobe__score_target){.kind = STROBE__SCORE_OVERHEAD, .pct = pct};
        return 0;
    }
    uint64_t bytes;
    if (strobe__parse_size(s, &bytes) != 0)
        return STROBE_ERR_SYNTAX;
    *t = (struct strobe__score_target){.kind = STROBE__SCORE_SIZE, .bytes = bytes};
    return 0;
}

void strobe__score_target_describe(const struct strobe__score_target *t, char *buf, size_t size)
{
    char b[STROBE_UNITS_LEN];
    if (t->kind == STROBE__SCORE_SIZE)
        snprintf(buf, size, "trace <= %s", strobe__fmt_bytes(b, t->bytes));
    else
        snprintf(buf, size, "overhead <= %g%% of thread time", t->pct);
}

const char *strobe__score_filter_name(int filter)
{
    switch (filter) {
    case STROBE__SCORE_EXCLUDE:
        return "exclude";
    case STROBE__SCORE_NEVER_MAIN:
        return "never:main";
    case STROBE__SCORE_NEVER_USER:
        return "never:user";
    case STROBE__SCORE_NEVER_ATOMIC:
        return "never:atomic";
    case STROBE__SCORE_NEVER_OMP:
        return "never:omp";
    case STROBE__SCORE_NEVER_NAME:
        return "never:name";
    case STROBE__SCORE_NEVER_OPEN:
        return "never:open";
    default:
        return "keep";
    }
}

/* Encoded size of one visit when there is no trace to measure, from the
 * record layout of src/common/format.h: an ENTER is b0, one uleb byte
 * continuing the time delta and the uleb region id; an EXIT is b0 and one
 * delta byte. b0 holds deltas below 32 ticks and one more byte those up to
 * 4095: at GHz tick rates that is 10 ns to 1.4 µs, where the short,
 * frequent visits that fill a trace fall. A repeated call of the same
 * function is an ENTER_SAME without the id, so loops take a byte less. */
static uint64_t visit_bytes(uint32_t local_id)
{
    uint8_t buf[10];
    uint64_t id_bytes = (uint64_t)(strobe_uleb_put(buf, local_id) - buf);
    return (1 + 1 + id_bytes) + (1 + 1);
}

/* Process-local region id of each global region (the first process that
 * defines it), for visit_bytes; 0 when none. */
static uint32_t *local_ids(const struct strobe_experiment *exp)
{
    uint32_t *local = calloc(exp->nregions ? exp->nregions : 1, sizeof *local);
    if (!local)
        return NULL;
    for (size_t p = 0; p < exp->nprocesses; p++) {
        const struct strobe_process_info *pi = &exp->processes[p];
        for (size_t l = 0; l < pi->region_map_len; l++) {
            uint32_t g = pi->region_map[l];
            if (g < exp->nregions && local[g] == 0)
                local[g] = (uint32_t)l;
        }
    }
    return local;
}

static int classify(const struct strobe_experiment *exp, uint32_t r, bool timed)
{
    /* timed: a visit completed, so there is a time per visit to rank by */
    const struct strobe_region_def *d = &exp->regions[r];
    if (d->kind == STROBE_REGION_USER)
        return STROBE__SCORE_NEVER_USER;
    if (d->kind == STROBE_REGION_TM_ATOMIC)
        return STROBE__SCORE_NEVER_ATOMIC;
    if (d->kind != STROBE_REGION_FUNCTION)
        return STROBE__SCORE_NEVER_OMP;
    if (strcmp(d->name, "main") == 0)
        return STROBE__SCORE_NEVER_MAIN;
    /* "0x..." is the reader's name for an address without a symbol: the
     * runtime's filter matches symbol names only */
    if (strncmp(d->name, "0x", 2) == 0 || strobe__filter_exact_glob(d->name, NULL) != 0)
        return STROBE__SCORE_NEVER_NAME;
    if (!timed)
        return STROBE__SCORE_NEVER_OPEN;
    return STROBE__SCORE_KEEP;
}

static int cmp_name(const struct strobe__score *s, const struct strobe__score_row *a,
                    const struct strobe__score_row *b)
{
    const struct strobe_experiment *exp = s->view.exp;
    int c = strcmp(exp->regions[a->region].name, exp->regions[b->region].name);
    return c ? c : a->region < b->region ? -1 : a->region > b->region;
}

static int cmp_events(const void *pa, const void *pb, void *arg)
{
    const struct strobe__score_row *a = pa, *b = pb;
    if (a->cost.events != b->cost.events)
        return a->cost.events > b->cost.events ? -1 : 1;
    return cmp_name(arg, a, b);
}

/* The exclusion order: shortest inclusive time per visit first, because a
 * visit's overhead (2 events) is the same whatever its length, so that is
 * the most overhead (and trace) saved per unit of measured time lost; ties
 * by more events first. Indexes into s->rows. */
static int cmp_candidates(const void *pa, const void *pb, void *arg)
{
    const struct strobe__score *s = arg;
    const struct strobe__score_row *a = &s->rows[*(const size_t *)pa], *b = &s->rows[*(const size_t *)pb];
    unsigned __int128 x = (unsigned __int128)a->incl_ns * b->visits,
                      y = (unsigned __int128)b->incl_ns * a->visits;
    if (x != y)
        return x < y ? -1 : 1;
    return cmp_events(a, b, arg);
}

/* Putting excluded regions back: fewest events first. */
static int cmp_fewest(const void *pa, const void *pb, void *arg)
{
    const struct strobe__score *s = arg;
    const struct strobe__score_row *a = &s->rows[*(const size_t *)pa], *b = &s->rows[*(const size_t *)pb];
    if (a->cost.events != b->cost.events)
        return a->cost.events < b->cost.events ? -1 : 1;
    return cmp_name(s, a, b);
}

static bool meets(const struct strobe__score *s, const struct strobe__score_estimate *e)
{
    if (s->target.kind == STROBE__SCORE_SIZE)
        return e->bytes <= s->target.bytes;
    return e->overhead_ns <= s->target.pct / 100.0 * (double)s->view.thread_time_ns;
}

static uint64_t sub_u64(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

void strobe__score_add(struct strobe__score_estimate *e, const struct strobe__score_estimate *r)
{
    e->events += r->events;
    e->bytes += r->bytes;
    e->overhead_ns += r->overhead_ns;
}

/* e -= r. The rows' bytes are an estimate, so the difference is clamped
 * at 0. */
static void subtract(struct strobe__score_estimate *e, const struct strobe__score_estimate *r)
{
    e->events = sub_u64(e->events, r->events);
    e->bytes = sub_u64(e->bytes, r->bytes);
    e->overhead_ns = e->overhead_ns > r->overhead_ns ? e->overhead_ns - r->overhead_ns : 0;
}

/* Greedy in cmp_candidates order until the estimate meets the target,
 * then back out the exclusions the target does not need, fewest events
 * first, so a rare function that came early in the order does not stay in
 * the filter for nothing. */
static int choose(struct strobe__score *s)
{
    size_t *order = malloc((s->nrows ? s->nrows : 1) * sizeof *order), n = 0;
    if (!order)
        return -ENOMEM;
    for (size_t i = 0; i < s->nrows; i++)
        if (s->rows[i].filter == STROBE__SCORE_KEEP)
            order[n++] = i;
    s->ncandidates = n;
    qsort_r(order, n, sizeof *order, cmp_candidates, s);
    struct strobe__score_estimate cur = s->full;
    size_t chosen = 0;
    for (; chosen < n && !meets(s, &cur); chosen++) {
        s->rows[order[chosen]].filter = STROBE__SCORE_EXCLUDE;
        subtract(&cur, &s->rows[order[chosen]].cost);
    }
    if (meets(s, &cur)) {
        qsort_r(order, chosen, sizeof *order, cmp_fewest, s);
        for (size_t k = 0; k < chosen; k++) {
            struct strobe__score_estimate back = cur;
            strobe__score_add(&back, &s->rows[order[k]].cost);
            if (meets(s, &back)) {
                s->rows[order[k]].filter = STROBE__SCORE_KEEP;
                cur = back;
            }
        }
    }
    free(order);
    return 0;
}

/* Fills the rows from the flat profile: visits, times, per-thread visits
 * x the cost per event of each thread's process, bytes. */
static int fill_rows(struct strobe__score *s)
{
    const struct strobe__report_view *v = &s->view;
    const struct strobe_experiment *exp = v->exp;
    size_t nt = exp->nthreads;
    uint32_t *regs = malloc((v->nflat ? v->nflat : 1) * sizeof *regs);
    uint32_t *local = s->bytes_measured ? NULL : local_ids(exp);
    s->rows = calloc(v->nflat ? v->nflat : 1, sizeof *s->rows);
    uint64_t *incl = NULL, *visits = NULL;
    int rc = -ENOMEM;
    if (!regs || !s->rows || (!s->bytes_measured && !local))
        goto out;
    for (size_t i = 0; i < v->nflat; i++)
        regs[i] = v->flat[i].region;
    if ((rc = strobe__report_region_threads(v, regs, v->nflat, &incl, &visits)) != 0)
        goto out;
    for (size_t i = 0; i < v->nflat; i++) {
        const struct strobe__flat_row *f = &v->flat[i];
        struct strobe__score_row *r = &s->rows[i];
        r->region = f->region;
        r->visits = f->visits;
        r->cost.events = 2 * f->visits;
        r->incl_ns = f->sum_incl_ns;
        r->excl_ns = f->excl_ns;
        r->timed = f->min_ns != UINT64_MAX;
        for (size_t t = 0; t < nt; t++)
            r->cost.overhead_ns += 2.0 * (double)visits[i * nt + t] * strobe__report_event_cost(exp, t);
        r->cost.bytes = s->bytes_measured ? (uint64_t)llround((double)r->cost.events * s->bytes_per_event)
                                          : r->visits * visit_bytes(local[r->region]);
        r->filter = classify(exp, r->region, r->timed && r->visits > 0);
        strobe__score_add(&s->regions, &r->cost);
    }
    s->nrows = v->nflat;
    qsort_r(s->rows, s->nrows, sizeof *s->rows, cmp_events, s);
    rc = 0;
out:
    free(regs);
    free(local);
    free(incl);
    free(visits);
    return rc;
}

/* The full run: the view's events and overhead, which count the events
 * the size limit dropped with those recorded (or 2 per visit without a
 * trace). */
static void estimate_full(struct strobe__score *s)
{
    const struct strobe__report_view *v = &s->view;
    const struct strobe_experiment *exp = v->exp;
    s->full.events = v->overhead_events;
    s->full.overhead_ns = v->overhead_ns;
    if (!s->bytes_measured) {
        s->full.bytes = s->regions.bytes;
        s->bytes_per_event = s->regions.events ? (double)s->regions.bytes / (double)s->regions.events : 0;
        return;
    }
    double bytes = 0;
    for (size_t t = 0; t < exp->nthreads; t++) {
        const struct strobe_thread_info *th = &exp->threads[t];
        bytes += th->stream_path ? (double)th->bytes + (double)th->dropped * s->bytes_per_event
                                 : (double)v->thread_events[t] * s->bytes_per_event;
    }
    s->full.bytes = (uint64_t)llround(bytes);
}

int strobe__score_build(struct strobe__score *s, const struct strobe_experiment *exp,
                        const struct strobe_profile *prof, const struct strobe__score_target *t)
{
    memset(s, 0, sizeof *s);
    s->target = *t;
    int rc = strobe__report_view_build(&s->view, exp, prof, STROBE_REPORT_SORT_EXCL);
    if (rc)
        return rc;
    /* bytes per event of the threads that have a trace (a thread without
     * one has events, counted from its visits, but no bytes) */
    uint64_t traced_events = 0;
    for (size_t i = 0; i < exp->nthreads; i++)
        if (exp->threads[i].stream_path)
            traced_events += exp->threads[i].events;
    s->bytes_measured = traced_events > 0;
    if (s->bytes_measured)
        s->bytes_per_event = (double)exp->total_bytes / (double)traced_events;
    if ((rc = fill_rows(s)) != 0) {
        strobe__score_free(s);
        return rc;
    }
    estimate_full(s);
    s->evaluable = t->kind == STROBE__SCORE_SIZE || s->view.overhead_known;
    if (s->evaluable && (rc = choose(s)) != 0) {
        strobe__score_free(s);
        return rc;
    }
    s->filtered = s->full;
    s->kept = s->regions;
    for (size_t i = 0; i < s->nrows; i++)
        if (s->rows[i].filter == STROBE__SCORE_EXCLUDE) {
            s->nexcluded++;
            subtract(&s->filtered, &s->rows[i].cost);
            subtract(&s->kept, &s->rows[i].cost);
        }
    s->met = s->evaluable && meets(s, &s->filtered);
    return 0;
}

void strobe__score_free(struct strobe__score *s)
{
    strobe__report_view_free(&s->view);
    free(s->rows);
    memset(s, 0, sizeof *s);
}

/* part as a share of the thread time: "12.34%", and two significant
 * digits below 0.01% ("0.0034%") so a small overhead does not read as 0. */
static void thread_share(char buf[STROBE_UNITS_LEN], const struct strobe__score *s, double part)
{
    uint64_t whole = s->view.thread_time_ns;
    double pct = whole ? 100.0 * part / (double)whole : 0;
    snprintf(buf, STROBE_UNITS_LEN, pct >= 0.01 || pct == 0 ? "%.2f%%" : "%.2g%%", pct);
}

void strobe__score_estimate_str(const struct strobe__score *s, const struct strobe__score_estimate *e,
                                char *buf, size_t size)
{
    char b[STROBE_UNITS_LEN], o[STROBE_UNITS_LEN], p[STROBE_UNITS_LEN];
    if (s->view.overhead_known) {
        thread_share(p, s, e->overhead_ns);
        snprintf(buf, size, "%" PRIu64 " events, %s, overhead %s (%s of thread time)", e->events,
                 strobe__fmt_bytes(b, e->bytes), strobe__fmt_time(o, (uint64_t)llround(e->overhead_ns)), p);
    } else
        snprintf(buf, size, "%" PRIu64 " events, %s, overhead unknown", e->events,
                 strobe__fmt_bytes(b, e->bytes));
}

/* The quantity the target is about, for e. */
static void measure(const struct strobe__score *s, const struct strobe__score_estimate *e, char *buf,
                    size_t size)
{
    char b[STROBE_UNITS_LEN];
    if (s->target.kind == STROBE__SCORE_SIZE)
        snprintf(buf, size, "%s", strobe__fmt_bytes(b, e->bytes));
    else {
        thread_share(b, s, e->overhead_ns);
        snprintf(buf, size, "%s of thread time", b);
    }
}

void strobe__score_outcome(const struct strobe__score *s, char *buf, size_t size)
{
    char target[96], before[64], after[64];
    strobe__score_target_describe(&s->target, target, sizeof target);
    if (!s->evaluable) {
        snprintf(buf, size,
                 "target %s cannot be evaluated: the experiment has no measured cost per event (a size "
                 "target can, e.g. --target 500MB)",
                 target);
        return;
    }
    measure(s, &s->full, before, sizeof before);
    measure(s, &s->filtered, after, sizeof after);
    if (s->met && s->nexcluded == 0)
        snprintf(buf, size, "target %s met without a filter (%s)", target, before);
    else if (s->met)
        snprintf(buf, size, "target %s met by excluding %zu function%s (%s -> %s)", target, s->nexcluded,
                 s->nexcluded == 1 ? "" : "s", before, after);
    else {
        /* the rest: the regions never excluded (kept), and records no
         * region accounts for: thread, metric and TM records, and events
         * the size limit dropped when the profile was rebuilt from the
         * incomplete trace */
        struct strobe__score_estimate other = s->filtered;
        subtract(&other, &s->kept);
        char never[64], rest[64];
        measure(s, &s->kept, never, sizeof never);
        measure(s, &other, rest, sizeof rest);
        bool unattributed = s->view.prof->source == STROBE_PROFILE_TRACE && s->view.exp->total_dropped;
        snprintf(buf, size,
                 "target %s not met: reached %s by excluding the %zu function%s that may be excluded; of the "
                 "rest, %s is in regions never excluded (main, annotated, TM atomic blocks, no name or no "
                 "completed visit) and %s in records of no region%s",
                 target, after, s->ncandidates, s->ncandidates == 1 ? "" : "s", never, rest,
                 unattributed ? " (the events the size limit dropped: the trace cannot attribute them)" : "");
    }
}

/* A string of the experiment (its directory) in a comment line. */
static void put_one_line(FILE *out, const char *str)
{
    for (const unsigned char *p = (const unsigned char *)str; *p; p++)
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

int strobe__score_write_filter(FILE *out, const struct strobe__score *s)
{
    const struct strobe_experiment *exp = s->view.exp;
    char line[512], tb[STROBE_UNITS_LEN];
    fputs("# strobe filter written by `strobe report --score` from the experiment ", out);
    put_one_line(out, exp->dir ? exp->dir : "");
    strobe__score_target_describe(&s->target, line, sizeof line);
    fprintf(out, "\n# target: %s (thread time %s)\n", line, strobe__fmt_time(tb, s->view.thread_time_ns));
    strobe__score_estimate_str(s, &s->full, line, sizeof line);
    fprintf(out, "# before: %s\n", line);
    strobe__score_estimate_str(s, &s->filtered, line, sizeof line);
    fprintf(out, "# after:  %s\n", line);
    strobe__score_outcome(s, line, sizeof line);
    fprintf(out, "# %s\n", line);
    fputs("#\n"
          "# Functions with the shortest inclusive time per visit are excluded first (the most\n"
          "# overhead saved per unit of measured time; ties: more events first) until the estimate\n"
          "# meets the target; then those the target does not need are kept again, fewest events first.\n"
          "# Never excluded: main, annotated (USER) regions, TM atomic blocks, and names no glob can\n"
          "# match exactly. Excluded functions still call the -finstrument-functions hooks (a cache\n"
          "# lookup each, not in the estimate); no_instrument_function at compile time removes that.\n"
          "# Use: strobe run --filter THIS_FILE -- PROG [ARGS...]\n",
          out);
    int rc = 0;
    for (size_t i = 0; i < s->nrows && rc == 0; i++) {
        const struct strobe__score_row *r = &s->rows[i];
        if (r->filter != STROBE__SCORE_EXCLUDE)
            continue;
        char *glob;
        if ((rc = strobe__filter_exact_glob(exp->regions[r->region].name, &glob)) != 0)
            break; /* classify() let only expressible names through */
        fprintf(out, "exclude %s  # %" PRIu64 " visits, %s per visit\n", glob, r->visits,
                strobe__fmt_time(tb, strobe__div_round(r->incl_ns, r->visits)));
        free(glob);
    }
    if (rc == 0 && ferror(out))
        rc = -EIO;
    return rc;
}
