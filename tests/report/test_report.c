/* SPDX-License-Identifier: MIT */
/*
 * Tests of the report (src/report) on an experiment model built in memory,
 * so every expected number below is worked out by hand from the model:
 *
 *   thread 0:  main                1 visit   incl 1000 µs  excl 650 µs
 *                rec               1 visit   incl  300 µs  excl 100 µs
 *                  rec             2 visits  incl  200 µs  (recursion)
 *                io                5 visits  incl   50 µs  (5,5,10,10,20 µs)
 *                                  metric bytes [B]: count 5 sum 5000 min 500 max 2000
 *   threads 1, 2: worker           1 visit each, incl 600 / 400 µs, excl 100 µs each
 *                  compute         10 visits each, incl 500 / 300 µs (50 / 30 µs per visit)
 *
 * Total exclusive time 2000 µs; rec's inclusive time counts only its
 * outermost occurrence (300 µs, not 500 µs).
 */
#include <errno.h>
#include <math.h>
#include <unistd.h>

#include "report/html.h"
#include "report/report.h"
#include "report/score.h"
#include "common/filter.h"
#include "report/units.h"
#include "report/verdict.h"
#include "common/format.h"
#include "strobe/strobe.h"
#include "strobe/tm.h"
#include "test.h"

enum { R_MAIN, R_WORKER, R_COMPUTE, R_REC, R_IO, NREGIONS };
enum { NTHREADS = 3, NNODES = 7 };

struct model {
    struct strobe_experiment exp;
    struct strobe_profile prof;
    struct strobe_process_info proc;
    struct strobe_thread_info threads[NTHREADS];
    struct strobe_region_def regions[NREGIONS];
    struct strobe_metric_def metric;
    struct strobe_cnode nodes[NNODES];
    struct strobe_stats per_thread[NNODES][NTHREADS];
    struct strobe_metric_stats io_metric, io_thread_metric[NTHREADS];
    char *meta_keys[4], *meta_values[4];
};

static struct strobe_stats stats(uint64_t visits, uint64_t incl, uint64_t excl, uint64_t min, uint64_t max,
                                 double sumsq)
{
    return (struct strobe_stats){visits, incl, excl, min, max, sumsq, 0};
}

static void link_node(struct model *m, uint32_t n, uint32_t parent, uint32_t region)
{
    struct strobe_cnode *node = &m->nodes[n];
    node->region = region;
    node->parent = parent;
    node->first_child = node->next_sibling = STROBE_NONE;
    node->per_thread = m->per_thread[n];
    node->depth = parent == STROBE_NONE ? 0 : m->nodes[parent].depth + 1;
    for (size_t t = 0; t < NTHREADS; t++)
        if (m->per_thread[n][t].visits == 0)
            m->per_thread[n][t].min_ns = UINT64_MAX;
    if (parent == STROBE_NONE)
        return;
    /* append to the parent's child list (order must not matter) */
    uint32_t *link = &m->nodes[parent].first_child;
    while (*link != STROBE_NONE)
        link = &m->nodes[*link].next_sibling;
    *link = n;
}

static void build_model(struct model *m)
{
    memset(m, 0, sizeof *m);
    static const char *const names[NREGIONS] = {"main", "worker", "compute", "rec", "io"};
    static const unsigned lines[NREGIONS] = {10, 20, 30, 40, 0};
    for (int r = 0; r < NREGIONS; r++) {
        m->regions[r].name = (char *)names[r];
        m->regions[r].file = (char *)(r == R_IO ? "" : "/src/app.c");
        m->regions[r].line = lines[r];
        m->regions[r].module = (char *)(r == R_IO ? "/usr/lib/libio.so" : "/bin/app");
        m->regions[r].address = 0x1000 + 16 * (uint64_t)r;
    }
    m->metric.name = "bytes";
    m->metric.unit = "B";

    m->proc.dir = "proc-4242";
    m->proc.pid = 4242;
    m->proc.ppid = 1;
    m->proc.exe = "/bin/app";
    m->proc.parent = STROBE_NONE;
    m->proc.overhead_ns_per_event = 10.0;
    m->proc.exited = true;
    static const uint64_t begin[NTHREADS] = {0, 100000, 100000}, end[NTHREADS] = {1100000, 800000, 600000};
    static const uint64_t events[NTHREADS] = {100, 50, 50}, bytes[NTHREADS] = {400, 150, 150};
    for (uint32_t t = 0; t < NTHREADS; t++) {
        struct strobe_thread_info *th = &m->threads[t];
        th->process = 0;
        th->index = t;
        th->parent = t == 0 ? STROBE_NONE : 0;
        th->tid = 4242 + t;
        th->stream_path = "t.evt";
        th->profile_path = "t.prof";
        th->begin_ns = begin[t];
        th->end_ns = end[t];
        th->events = events[t];
        th->bytes = bytes[t];
        th->ended = true;
        th->has_rusage = t == 0;
    }
    m->threads[0].rusage = (struct strobe_rusage){1500, 250, 2048, 10, 0, 3, 1};

    /* per-thread statistics, then totals summed over threads */
    m->per_thread[1][0] = stats(1, 1000000, 650000, 1000000, 1000000, 1e12);
    m->per_thread[2][0] = stats(1, 300000, 100000, 300000, 300000, 9e10);
    m->per_thread[3][0] = stats(2, 200000, 200000, 100000, 100000, 2e10);
    m->per_thread[4][0] = stats(5, 50000, 50000, 5000, 20000, 6.5e8);
    m->per_thread[5][1] = stats(1, 600000, 100000, 600000, 600000, 3.6e11);
    m->per_thread[5][2] = stats(1, 400000, 100000, 400000, 400000, 1.6e11);
    m->per_thread[6][1] = stats(10, 500000, 500000, 50000, 50000, 2.5e10);
    m->per_thread[6][2] = stats(10, 300000, 300000, 30000, 30000, 9e9);
    link_node(m, 0, STROBE_NONE, STROBE_NONE);
    link_node(m, 1, 0, R_MAIN);
    link_node(m, 2, 1, R_REC);
    link_node(m, 3, 2, R_REC);
    link_node(m, 4, 1, R_IO);
    link_node(m, 5, 0, R_WORKER);
    link_node(m, 6, 5, R_COMPUTE);
    for (int n = 0; n < NNODES; n++) {
        struct strobe_stats *tot = &m->nodes[n].total;
        tot->min_ns = UINT64_MAX;
        for (int t = 0; t < NTHREADS; t++) {
            const struct strobe_stats *s = &m->per_thread[n][t];
            tot->visits += s->visits;
            tot->incl_ns += s->incl_ns;
            tot->excl_ns += s->excl_ns;
            tot->sumsq_ns += s->sumsq_ns;
            if (s->visits && s->min_ns < tot->min_ns)
                tot->min_ns = s->min_ns;
            if (s->max_ns > tot->max_ns)
                tot->max_ns = s->max_ns;
        }
    }
    m->io_metric = (struct strobe_metric_stats){5, 5000, 500, 2000};
    m->io_thread_metric[0] = m->io_metric;
    m->nodes[4].metrics = &m->io_metric;
    m->nodes[4].thread_metrics = m->io_thread_metric;

    static const char *const keys[4] = {"strobe_version", "command", "host", "start_time"};
    static const char *const values[4] = {"0.1.0", "./app 'a b'", "node1", "2026-11-22T10:45:00Z"};
    for (int i = 0; i < 4; i++) {
        m->meta_keys[i] = (char *)keys[i];
        m->meta_values[i] = (char *)values[i];
    }
    struct strobe_experiment *e = &m->exp;
    e->dir = "strobe-app-20261122-104500";
    e->nmeta = 4;
    e->meta_keys = m->meta_keys;
    e->meta_values = m->meta_values;
    e->processes = &m->proc;
    e->nprocesses = 1;
    e->threads = m->threads;
    e->nthreads = NTHREADS;
    e->regions = m->regions;
    e->nregions = NREGIONS;
    e->metrics = &m->metric;
    e->nmetrics = 1;
    e->duration_ns = 1100000;
    e->total_events = 200;
    e->total_bytes = 700;
    m->prof.nodes = m->nodes;
    m->prof.nnodes = NNODES;
    m->prof.source = STROBE_PROFILE_FILES;
}

/* Renders into a malloc'd string. */
static char *render(const struct model *m, int json, int sort, size_t top, bool threads, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    struct strobe_report_opts o;
    strobe_report_opts_init(&o);
    o.sort = sort;
    o.top = top;
    o.threads = threads;
    *rc = json ? strobe_report_json(f, &m->exp, &m->prof, &o) : strobe_report_text(f, &m->exp, &m->prof, &o);
    fclose(f);
    return buf;
}

static char *render_ok(const struct model *m, int json, int sort, size_t top, bool threads)
{
    int rc;
    char *s = render(m, json, sort, top, threads, &rc);
    if (rc != 0)
        STROBE_FAIL("report failed: %s", strobe_strerror(rc));
    return s;
}

#define CHECK_PREFIX(text, prefix)                                                                           \
    do {                                                                                                     \
        const char *p_ = (prefix);                                                                           \
        if (strncmp((text), p_, strlen(p_)) != 0)                                                            \
            STROBE_FAIL("text does not start with:\n%s\ntext:\n%s", p_, (text));                             \
    } while (0)

/* The exact line (without its newline) must occur in text. */
#define CHECK_LINE(text, line)                                                                               \
    do {                                                                                                     \
        char want_[512];                                                                                     \
        snprintf(want_, sizeof want_, "\n%s\n", (line));                                                     \
        CHECK_CONTAINS((text), want_);                                                                       \
    } while (0)

STROBE_TEST(units_time)
{
    char b[STROBE_UNITS_LEN];
    CHECK_STR_EQ(strobe__fmt_time(b, 0), "0 ns");
    CHECK_STR_EQ(strobe__fmt_time(b, 999), "999 ns");
    CHECK_STR_EQ(strobe__fmt_time(b, 1000), "1.000 µs");
    CHECK_STR_EQ(strobe__fmt_time(b, 999999), "999.999 µs");
    CHECK_STR_EQ(strobe__fmt_time(b, 1000000), "1.000 ms");
    CHECK_STR_EQ(strobe__fmt_time(b, 1234500), "1.235 ms"); /* half up */
    CHECK_STR_EQ(strobe__fmt_time(b, 999999499), "999.999 ms");
    CHECK_STR_EQ(strobe__fmt_time(b, 999999500), "1.000 s"); /* never "1000.000 ms" */
    CHECK_STR_EQ(strobe__fmt_time(b, 3723000000000ull), "3723.000 s");
    CHECK_STR_EQ(strobe__fmt_time(b, UINT64_MAX), "18446744073.710 s");
    CHECK_EQ_INT(strobe__display_width("1.000 µs"), 8);
}

STROBE_TEST(units_bytes)
{
    char b[STROBE_UNITS_LEN];
    CHECK_STR_EQ(strobe__fmt_bytes(b, 0), "0 B");
    CHECK_STR_EQ(strobe__fmt_bytes(b, 1023), "1023 B");
    CHECK_STR_EQ(strobe__fmt_bytes(b, 1024), "1.0 KiB");
    CHECK_STR_EQ(strobe__fmt_bytes(b, 3250586), "3.1 MiB");
    CHECK_STR_EQ(strobe__fmt_bytes(b, 1048575), "1.0 MiB"); /* never "1024.0 KiB" */
    CHECK_STR_EQ(strobe__fmt_bytes(b, UINT64_MAX), "16.0 EiB");
}

STROBE_TEST(sort_parse)
{
    CHECK_EQ_INT(strobe_report_sort_parse("excl"), STROBE_REPORT_SORT_EXCL);
    CHECK_EQ_INT(strobe_report_sort_parse("incl"), STROBE_REPORT_SORT_INCL);
    CHECK_EQ_INT(strobe_report_sort_parse("visits"), STROBE_REPORT_SORT_VISITS);
    CHECK_EQ_INT(strobe_report_sort_parse("time"), -1);
    CHECK_STR_EQ(strobe_report_sort_name(STROBE_REPORT_SORT_VISITS), "visits");
}

STROBE_TEST(text_summary)
{
    struct model m;
    build_model(&m);
    char *t = render_ok(&m, 0, STROBE_REPORT_SORT_EXCL, 20, false);
    CHECK_PREFIX(t, "strobe report: strobe-app-20261122-104500\n\nSummary\n");
    CHECK_LINE(t, "  command          ./app 'a b'");
    CHECK_LINE(t, "  host             node1");
    CHECK_LINE(t, "  started          2026-11-22T10:45:00Z");
    CHECK_LINE(t, "  duration         1.100 ms");
    CHECK_LINE(t, "  processes        1");
    CHECK_LINE(t, "  threads          3");
    CHECK_LINE(t, "  events           200");
    CHECK_LINE(t, "  trace            700 B (3.50 bytes/event)");
    CHECK_LINE(t, "  dropped          0");
    /* 200 events x 10 ns = 2 µs of 1.1 + 0.7 + 0.5 ms thread time */
    CHECK_LINE(t, "  overhead (est.)  2.000 µs, likely 1.200 µs to 3.400 µs (0.09% of 2.300 ms thread time)");
    CHECK_LINE(t, "  profile source   profile files (t<N>.prof)");
    CHECK(strstr(t, "WARNING") == NULL);
    CHECK(strstr(t, "\n  exit") == NULL); /* no exit_status in meta */
    free(t);
}

STROBE_TEST(text_drops_and_exit)
{
    struct model m;
    build_model(&m);
    m.exp.total_dropped = 1234;
    m.threads[0].dropped = 1234; /* 400 bytes for 100 events: 5336 bytes would keep all */
    m.threads[0].limit_bytes = 4096;
    char *k[5] = {"command", "signal"}, *v[5] = {"./app", "9"};
    m.exp.meta_keys = k;
    m.exp.meta_values = v;
    m.exp.nmeta = 2;
    char *t = render_ok(&m, 0, STROBE_REPORT_SORT_EXCL, 20, false);
    /* the warning comes right after the title, before anything else */
    CHECK_PREFIX(
        t, "strobe report: strobe-app-20261122-104500\n"
           "WARNING: 1234 events were dropped: the trace and anything rebuilt from it are incomplete\n"
           "  thread 0 (proc-4242 t0): 1234 dropped of 1334 at the size limit of 4.0 KiB per stream\n"
           "  to keep them: strobe run with STROBE_TRACE_LIMIT=1M (1.0 MiB per thread), or fewer events "
           "(strobe report --score writes a --filter)\n\nSummary\n");
    CHECK_LINE(t, "  dropped          1234 (WARNING: incomplete trace)");
    CHECK_LINE(t, "  exit             killed by signal 9");
    free(t);
}

STROBE_TEST(text_flat)
{
    struct model m;
    build_model(&m);
    char *t = render_ok(&m, 0, STROBE_REPORT_SORT_EXCL, 20, false);
    CHECK_LINE(t, "Flat profile (sorted by excl; 5 regions)");
    CHECK_LINE(t,
               "    excl%         excl         incl      visits          min          avg          max       "
               "stddev  region");
    /* compute: 10 x 50 µs + 10 x 30 µs; stddev sqrt(1.7e9 - 1.6e9) = 10 µs */
    const char *compute =
        "   40.00%   800.000 µs   800.000 µs          20    30.000 µs    40.000 µs    50.000 µs"
        "    10.000 µs  compute (app.c:30)";
    const char *main_ =
        "   32.50%   650.000 µs     1.000 ms           1     1.000 ms     1.000 ms     1.000 ms"
        "            -  main (app.c:10)";
    /* rec: incl = outermost 300 µs only; avg (300+100+100)/3 = 166.667 µs;
     * stddev sqrt(1.1e11/3 - (5e5/3)^2) = 94280.9 ns */
    const char *rec = "   15.00%   300.000 µs   300.000 µs           3   100.000 µs   166.667 µs   300.000 µs"
                      "    94.281 µs  rec (app.c:40)";
    const char *worker =
        "   10.00%   200.000 µs     1.000 ms           2   400.000 µs   500.000 µs   600.000 µs"
        "   100.000 µs  worker (app.c:20)";
    /* io has no file: the module is shown; stddev sqrt(1.3e8 - 1e8) = 5477.2 ns */
    const char *io = "    2.50%    50.000 µs    50.000 µs           5     5.000 µs    10.000 µs    20.000 µs"
                     "     5.477 µs  io [libio.so]";
    CHECK_LINE(t, compute);
    CHECK_LINE(t, main_);
    CHECK_LINE(t, rec);
    CHECK_LINE(t, worker);
    CHECK_LINE(t, io);
    /* sorted by excl: compute, main, rec, worker, io */
    CHECK(strstr(t, compute) < strstr(t, main_));
    CHECK(strstr(t, main_) < strstr(t, rec));
    CHECK(strstr(t, rec) < strstr(t, worker));
    CHECK(strstr(t, worker) < strstr(t, io));
    free(t);

    /* --sort visits --top 2: compute (20), io (5) */
    t = render_ok(&m, 0, STROBE_REPORT_SORT_VISITS, 2, false);
    CHECK_LINE(t, "Flat profile (sorted by visits; top 2 of 5 regions)");
    const char *flat = strstr(t, "Flat profile");
    const char *tree = strstr(t, "Call tree");
    CHECK(flat && tree);
    const char *c = strstr(flat, "compute (app.c:30)"), *i = strstr(flat, "io [libio.so]");
    CHECK(c && i && c < i && i < tree);
    const char *w = strstr(flat, "worker (app.c:20)");
    CHECK(w == NULL || w > tree);
    free(t);

    /* --sort incl: main and worker tie at 1 ms: name order decides */
    t = render_ok(&m, 0, STROBE_REPORT_SORT_INCL, 0, false);
    flat = strstr(t, "Flat profile");
    CHECK(strstr(flat, "  main (app.c:10)") < strstr(flat, "  worker (app.c:20)"));
    CHECK(strstr(flat, "  worker (app.c:20)") < strstr(flat, "  compute (app.c:30)"));
    free(t);
}

STROBE_TEST(text_tree)
{
    struct model m;
    build_model(&m);
    char *t = render_ok(&m, 0, STROBE_REPORT_SORT_EXCL, 20, false);
    const char *expect =
        "\nCall tree (children sorted by excl; at most 20 children per node)\n"
        "         incl         excl      visits          min          avg          max  call path\n"
        "     1.000 ms   650.000 µs           1     1.000 ms     1.000 ms     1.000 ms  main (app.c:10)\n"
        "   300.000 µs   100.000 µs           1   300.000 µs   300.000 µs   300.000 µs    rec (app.c:40)\n"
        "   200.000 µs   200.000 µs           2   100.000 µs   100.000 µs   100.000 µs      rec (app.c:40)\n"
        "    50.000 µs    50.000 µs           5     5.000 µs    10.000 µs    20.000 µs    io [libio.so]\n"
        "                                                                                   bytes [B]: "
        "count 5, sum 5000, min 500, max 2000, avg 1000.00\n"
        "     1.000 ms   200.000 µs           2   400.000 µs   500.000 µs   600.000 µs  worker (app.c:20)\n"
        "   800.000 µs   800.000 µs          20    30.000 µs    40.000 µs    50.000 µs    compute "
        "(app.c:30)\n";
    CHECK_CONTAINS(t, expect);
    /* the call tree ends the report without --threads */
    CHECK(strcmp(strstr(t, expect), expect) == 0);
    free(t);

    /* --top 1: one child per node, the rest summed in "(N more)" */
    t = render_ok(&m, 0, STROBE_REPORT_SORT_EXCL, 1, false);
    const char *expect1 =
        "\nCall tree (children sorted by excl; at most 1 children per node)\n"
        "         incl         excl      visits          min          avg          max  call path\n"
        "     1.000 ms   650.000 µs           1     1.000 ms     1.000 ms     1.000 ms  main (app.c:10)\n"
        "   300.000 µs   100.000 µs           1   300.000 µs   300.000 µs   300.000 µs    rec (app.c:40)\n"
        "   200.000 µs   200.000 µs           2   100.000 µs   100.000 µs   100.000 µs      rec (app.c:40)\n"
        "    50.000 µs    50.000 µs           5%43s(1 more)\n"
        "     1.000 ms   200.000 µs           2%41s(1 more)\n";
    /* blank min/avg/max: 3 x (2 + 11) columns, 2 separator, 2 per level */
    char want[2048];
    snprintf(want, sizeof want, expect1, "", "");
    CHECK_CONTAINS(t, want);
    free(t);
}

STROBE_TEST(text_threads)
{
    struct model m;
    build_model(&m);
    char *t = render_ok(&m, 0, STROBE_REPORT_SORT_EXCL, 20, true);
    CHECK_LINE(t, "Threads (incl = inclusive time of the thread's top-level regions)");
    CHECK_LINE(
        t, "  thread  process       t         tid  parent         incl      visits      events        utime"
           "        stime      maxrss  csw vol/invol");
    /* thread 0: 1+1+2+5 visits; rusage 1500 µs user, 250 µs system, 2048 KiB */
    CHECK_LINE(
        t, "       0  proc-4242     0        4242       -     1.000 ms           9         100     1.500 ms"
           "   250.000 µs     2.0 MiB  3/1");
    CHECK_LINE(
        t, "       1  proc-4242     1        4243       0   600.000 µs          11          50            -"
           "            -           -  -");
    CHECK_LINE(
        t, "       2  proc-4242     2        4244       0   400.000 µs          11          50            -"
           "            -           -  -");
    const char *matrix =
        "\nThread x region (inclusive time per thread of the top 5 regions by excl; - = never "
        "entered; min/avg/max over the threads that entered)\n"
        "  [1] compute (app.c:30)\n"
        "  [2] main (app.c:10)\n"
        "  [3] rec (app.c:40)\n"
        "  [4] worker (app.c:20)\n"
        "  [5] io [libio.so]\n"
        "   thread          [1]          [2]          [3]          [4]          [5]\n"
        "        0            -     1.000 ms   300.000 µs            -    50.000 µs\n"
        "        1   500.000 µs            -            -   600.000 µs            -\n"
        "        2   300.000 µs            -            -   400.000 µs            -\n"
        "      min   300.000 µs     1.000 ms   300.000 µs   400.000 µs    50.000 µs\n"
        "      avg   400.000 µs     1.000 ms   300.000 µs   500.000 µs    50.000 µs\n"
        "      max   500.000 µs     1.000 ms   300.000 µs   600.000 µs    50.000 µs\n"
        "  max/avg         1.25         1.00         1.00         1.20         1.00\n";
    CHECK_CONTAINS(t, matrix);
    CHECK(strcmp(strstr(t, matrix), matrix) == 0);
    free(t);

    /* profile only: events are estimated from visits and marked */
    for (int i = 0; i < NTHREADS; i++)
        m.threads[i].stream_path = NULL;
    m.exp.total_events = m.exp.total_bytes = 0;
    t = render_ok(&m, 0, STROBE_REPORT_SORT_EXCL, 20, true);
    CHECK_LINE(t, "  events           0 (no trace)");
    /* (9 + 11 + 11) x 2 = 62 events x 10 ns */
    CHECK_LINE(t, "  overhead (est.)  620 ns, likely 372 ns to 1.054 µs (0.03% of 2.300 ms thread time; "
                  "events estimated as 2 x visits)");
    CHECK_CONTAINS(t, "\n       0  proc-4242     0        4242       -     1.000 ms           9         18*");
    CHECK_LINE(t, "  (* no trace: events estimated as 2 x visits)");
    free(t);
}

/* Parses the JSON with python3 and prints selected facts, one per line. */
static char *json_facts(const char *json, const char *tag, const char *script)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/report.json", strobe_test_tmpdir(tag));
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(json, f);
    fclose(f);
    char *out;
    int st = strobe_test_sh(&out, "python3 -c '%s' '%s'", script, path);
    if (st != 0)
        STROBE_FAIL("python3 failed (%d):\n%s", st, out);
    return out;
}

/* Prints "path visits incl excl [per-thread visits]" for every call-tree
 * node, path built from parent links. */
static const char *const tree_script =
    "import json,sys\n"
    "d=json.load(open(sys.argv[1]))\n"
    "names=[r[\"name\"] for r in d[\"regions\"]]\n"
    "path={}\n"
    "for n in d[\"calltree\"]:\n"
    "  if n[\"parent\"] is None: path[n[\"id\"]]=\"\"; continue\n"
    "  assert n[\"parent\"] < n[\"id\"]\n"
    "  p=path[n[\"parent\"]]; path[n[\"id\"]]=(p+\"/\" if p else \"\")+names[n[\"region\"]]\n"
    "  th=\",\".join(\"%d:%d\" % (x[\"thread\"], x[\"visits\"]) for x in n[\"threads\"])\n"
    "  print(path[n[\"id\"]], n[\"visits\"], n[\"incl_ns\"], n[\"excl_ns\"], n[\"min_ns\"], n[\"max_ns\"], "
    "th)\n";

/* --by rank on the model split into two ranked processes: thread 0 is
 * rank 0, threads 1 and 2 rank 1. Rank sums and min/avg/max over ranks
 * per call path, exactly; the default options add no such section. */
STROBE_TEST(text_by_rank)
{
    struct model m;
    build_model(&m);
    struct strobe_process_info procs[2] = {m.proc, m.proc};
    procs[0].has_rank = procs[1].has_rank = true;
    procs[1].rank = 1;
    procs[1].dir = "proc-4243";
    m.exp.processes = procs;
    m.exp.nprocesses = 2;
    m.threads[1].process = m.threads[2].process = 1;

    char *t = render_ok(&m, 0, STROBE_REPORT_SORT_EXCL, 20, false);
    CHECK(strstr(t, "\nRanks (") == NULL);
    free(t);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct strobe_report_opts o;
    strobe_report_opts_init(&o);
    o.by = STROBE_REPORT_BY_RANK;
    CHECK_EQ_INT(strobe_report_text(f, &m.exp, &m.prof, &o), 0);
    fclose(f);
    const char *want =
        "\nRanks (2; incl = inclusive time of the top-level regions of their threads)\n"
        "  rank  processes  threads         incl      visits      events\n"
        "  0             1        1     1.000 ms           9         100\n"
        "  1             1        2     1.000 ms          22         100\n"
        "\nCall paths over ranks (min/avg/max over the 2 ranks of their sums; pre-order)\n"
        "   visits min          avg         max     incl min          avg          max  call path\n"
        "            0         0.50           1         0 ns   500.000 µs     1.000 ms  main (app.c:10)\n"
        "            0         0.50           1         0 ns   150.000 µs   300.000 µs    rec (app.c:40)\n"
        "            0         1.00           2         0 ns   100.000 µs   200.000 µs      rec (app.c:40)\n"
        "            0         2.50           5         0 ns    25.000 µs    50.000 µs    io [libio.so]\n"
        "            0         1.00           2         0 ns   500.000 µs     1.000 ms  worker (app.c:20)\n"
        "            0        10.00          20         0 ns   400.000 µs   800.000 µs    compute "
        "(app.c:30)\n"
        "\nRank x call path (visits of the first 6 call paths above)\n"
        "  [1] main (app.c:10)\n"
        "  [2]   rec (app.c:40)\n"
        "  [3]     rec (app.c:40)\n"
        "  [4]   io [libio.so]\n"
        "  [5] worker (app.c:20)\n"
        "  [6]   compute (app.c:30)\n"
        "  rank         [1]         [2]         [3]         [4]         [5]         [6]\n"
        "  0              1           1           2           5           0           0\n"
        "  1              0           0           0           0           2          20\n";
    CHECK_CONTAINS(buf, want);
    CHECK(strcmp(strstr(buf, want), want) == 0);
    free(buf);

    /* a process without a rank is left out and counted */
    procs[1].has_rank = false;
    buf = NULL;
    f = open_memstream(&buf, &len);
    CHECK_EQ_INT(strobe_report_json(f, &m.exp, &m.prof, &o), 0);
    fclose(f);
    CHECK_CONTAINS(
        buf, "\"by\": {\n    \"key\": \"rank\",\n    \"left_out\": 1,\n    \"groups\": [\n"
             "      {\"rank\": 0, \"processes\": [0], \"threads\": 1, \"visits\": 9, \"incl_ns\": 1000000, "
             "\"events\": 100}\n    ],");
    CHECK_CONTAINS(
        buf, "{\"id\": 1, \"visits\": {\"groups\": [1], \"min\": 1, \"avg\": 1, \"max\": 1}, "
             "\"incl_ns\": {\"groups\": [1000000], \"min\": 1000000, \"avg\": 1000000, \"max\": 1000000}}");
    free(buf);
    /* no rank at all: the caller's error */
    procs[0].has_rank = false;
    buf = NULL;
    f = open_memstream(&buf, &len);
    CHECK_EQ_INT(strobe_report_text(f, &m.exp, &m.prof, &o), -ENOENT);
    fclose(f);
    free(buf);
}

STROBE_TEST(json_tree)
{
    struct model m;
    build_model(&m);
    char *j = render_ok(&m, 1, STROBE_REPORT_SORT_EXCL, 1, false);
    char *facts = json_facts(j, "json_tree", tree_script);
    /* complete (--top ignored), pre-order, children sorted by excl */
    CHECK_STR_EQ(facts, "main 1 1000000 650000 1000000 1000000 0:1\n"
                        "main/rec 1 300000 100000 300000 300000 0:1\n"
                        "main/rec/rec 2 200000 200000 100000 100000 0:2\n"
                        "main/io 5 50000 50000 5000 20000 0:5\n"
                        "worker 2 1000000 200000 400000 600000 1:1,2:1\n"
                        "worker/compute 20 800000 800000 30000 50000 1:10,2:10\n");
    free(facts);
    free(j);
}

STROBE_TEST(json_fields)
{
    struct model m;
    build_model(&m);
    char *j = render_ok(&m, 1, STROBE_REPORT_SORT_EXCL, 20, false);
    static const char *const script = "import json,sys\n"
                                      "d=json.load(open(sys.argv[1]))\n"
                                      "print(d[\"schema\"], d[\"version\"], d[\"dir\"], d[\"sort\"])\n"
                                      "print(json.dumps(d[\"meta\"], sort_keys=True))\n"
                                      "print(json.dumps(d[\"summary\"], sort_keys=True))\n"
                                      "print(json.dumps(d[\"processes\"][0], sort_keys=True))\n"
                                      "print(json.dumps(d[\"threads\"][0], sort_keys=True))\n"
                                      "print(d[\"threads\"][1][\"rusage\"], d[\"threads\"][1][\"parent\"])\n"
                                      "print(json.dumps(d[\"regions\"][4], sort_keys=True))\n"
                                      "print(json.dumps(d[\"metrics\"], sort_keys=True))\n"
                                      "print(\" \".join(\"%d:%d:%d:%d\" % (f[\"region\"], f[\"incl_ns\"], "
                                      "f[\"excl_ns\"], f[\"sum_incl_ns\"]) "
                                      "for f in d[\"flat\"]))\n"
                                      "print(d[\"flat\"][2][\"sumsq_ns2\"] == 1.1e11)\n"
                                      "io=[n for n in d[\"calltree\"] if n[\"region\"] == 4][0]\n"
                                      "print(json.dumps(io[\"metrics\"], sort_keys=True))\n"
                                      "print(json.dumps(d[\"calltree\"][0], sort_keys=True))\n";
    char *facts = json_facts(j, "json_fields", script);
    CHECK_STR_EQ(
        facts,
        "strobe-report 1 strobe-app-20261122-104500 excl\n"
        "{\"command\": \"./app 'a b'\", \"host\": \"node1\", \"start_time\": \"2026-11-22T10:45:00Z\", "
        "\"strobe_version\": \"0.1.0\"}\n"
        "{\"chunk_first\": null, \"chunk_last\": null, \"dropped\": 0, \"duration_ns\": 1100000, \"events\": 200, "
                 "\"open_at_end\": 0, "
        "\"overhead_events\": 200, "
        "\"overhead_events_estimated\": false, \"overhead_high_ns\": 3400, \"overhead_low_ns\": 1200, "
        "\"overhead_ns\": 2000, \"processes\": 1, "
        "\"profile_incomplete\": false, \"profile_source\": \"profile\", \"profile_traced_threads\": 0, "
        "\"thread_time_ns\": 2300000, \"threads\": 3, "
        "\"total_excl_ns\": 2000000, \"trace_bytes\": 700}\n"
        "{\"clock_align\": \"reference\", \"clock_bound_ns\": 0, \"clock_domain\": 0, \"clock_drift_ppm\": 0, "
        "\"clock_offset_ns\": 0, "
        "\"dir\": \"proc-4242\", \"exe\": \"/bin/app\", \"exit_status\": 0, \"exited\": true, "
        "\"index\": 0, \"overhead_ns_per_event\": 10, \"parent\": null, \"paused\": [], \"pid\": 4242, \"ppid\": 1, "
        "\"rank\": null, \"start_realtime_ns\": 0, \"world_size\": null}\n"
        "{\"at_exit\": false, \"begin_ns\": 0, \"bytes\": 400, \"dropped\": 0, \"end_ns\": 1100000, "
        "\"ended\": true, "
        "\"events\": 100, \"incl_ns\": 1000000, \"index\": 0, \"parent\": null, \"process\": 0, "
        "\"profile\": true, \"ring\": null, \"rusage\": {\"majflt\": 0, \"maxrss_kb\": 2048, \"minflt\": 10, "
        "\"nivcsw\": 1, \"nvcsw\": 3, \"stime_us\": 250, \"utime_us\": 1500}, \"summarized\": false, "
        "\"thread\": 0, "
        "\"tid\": 4242, \"trace\": true, \"visits\": 9}\n"
        "None 0\n"
        "{\"address\": 4160, \"file\": \"\", \"id\": 4, \"kind\": \"function\", \"line\": 0, "
        "\"module\": \"/usr/lib/libio.so\", \"name\": \"io\"}\n"
        "[{\"id\": 0, \"name\": \"bytes\", \"unit\": \"B\"}]\n"
        "2:800000:800000:800000 0:1000000:650000:1000000 3:300000:300000:500000 "
        "1:1000000:200000:1000000 4:50000:50000:50000\n"
        "True\n"
        "[{\"count\": 5, \"max\": 2000, \"metric\": 0, \"min\": 500, \"sum\": 5000, \"threads\": "
        "[{\"count\": 5, \"max\": 2000, \"min\": 500, \"sum\": 5000, \"thread\": 0}]}]\n"
        "{\"depth\": 0, \"id\": 0, \"parent\": null, \"region\": null}\n");
    free(facts);
    free(j);
}

STROBE_TEST(json_escapes)
{
    struct model m;
    build_model(&m);
    /* quotes, control characters, valid UTF-8 and an invalid byte */
    m.regions[R_MAIN].name = "ma\"in\\\n\t\x01 \xc3\xa9 \xff";
    char *j = render_ok(&m, 1, STROBE_REPORT_SORT_EXCL, 20, false);
    CHECK_CONTAINS(j, "\"name\": \"ma\\\"in\\\\\\n\\t\\u0001 \xc3\xa9 \\ufffd\"");
    char *facts = json_facts(j, "json_escapes",
                             "import json,sys\nd=json.load(open(sys.argv[1]))\n"
                             "print(ascii(d[\"regions\"][0][\"name\"]))\n");
    CHECK_STR_EQ(facts, "'ma\"in\\\\\\n\\t\\x01 \\xe9 \\ufffd'\n");
    free(facts);
    free(j);
}

/* The HTML report's data: a name that would close the script element is
 * written with '<' as \\u003c, the page around it is intact (one data
 * element, the template's own tail after it), and the data parses back to
 * the exact name and the report's visits. */
STROBE_TEST(html_data_escapes)
{
    struct model m;
    build_model(&m);
    m.regions[R_MAIN].name = "</script><script>alert(1)</script>";
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    struct strobe_html_opts o = {.generated = "2026-11-27T00:00:00Z"};
    strobe_report_opts_init(&o.report);
    const char *problems[] = {"samples: proc-1/t0.evt: offset 8: bad <record>"};
    o.problems = problems;
    o.nproblems = 1;
    CHECK_EQ_INT(strobe_report_html(f, &m.exp, &m.prof, &o), 0);
    fclose(f);
    CHECK(strstr(buf, "alert(1)</script>") == NULL);
    CHECK_CONTAINS(buf, "\\u003c/script>\\u003cscript>alert(1)\\u003c/script>");
    const char *data = strstr(buf, "<script type=\"application/json\" id=\"strobe-data\">");
    CHECK(data != NULL);
    data = strchr(data, '>') + 1;
    const char *end = strstr(data, "</script>");
    CHECK(end != NULL);
    char *json = strndup(data, (size_t)(end - data));
    char *facts =
        json_facts(json, "html_data_escapes",
                   "import json,sys\nd=json.load(open(sys.argv[1]))\n"
                   "print(d[\"problems\"][0], d[\"generated\"], d[\"report\"][\"regions\"][0][\"name\"])\n"
                   "print(sum(d[\"report\"][\"calltree_columns\"][\"visits\"]))\n");
    CHECK_STR_EQ(facts, "samples: proc-1/t0.evt: offset 8: bad <record> 2026-11-27T00:00:00Z "
                        "</script><script>alert(1)</script>\n31\n");
    CHECK_CONTAINS(end, "</script>\n<script>\n\"use strict\";");
    CHECK_CONTAINS(buf + len - 16, "</html>\n");
    free(facts);
    free(json);
    free(buf);
}

STROBE_TEST(deep_recursion)
{
    /* a 200000-deep chain of one recursive region: no stack overflow, and
     * the flat inclusive time is the outermost node's only */
    enum { DEPTH = 200000 };
    struct model m;
    build_model(&m);
    struct strobe_cnode *nodes = calloc(DEPTH + 1, sizeof *nodes);
    CHECK(nodes != NULL);
    nodes[0].region = nodes[0].parent = STROBE_NONE;
    nodes[0].next_sibling = STROBE_NONE;
    for (uint32_t i = 1; i <= DEPTH; i++) {
        nodes[i - 1].first_child = i;
        nodes[i].region = R_REC;
        nodes[i].parent = i - 1;
        nodes[i].next_sibling = STROBE_NONE;
        nodes[i].depth = i;
        uint64_t incl = (uint64_t)(DEPTH - i + 1) * 10;
        nodes[i].total = stats(1, incl, 10, incl, incl, (double)incl * (double)incl);
    }
    nodes[DEPTH].first_child = STROBE_NONE;
    m.prof.nodes = nodes;
    m.prof.nnodes = DEPTH + 1;
    int rc;
    char *j = render(&m, 1, STROBE_REPORT_SORT_EXCL, 20, true, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_CONTAINS(j, "{\"region\": 3, \"visits\": 200000, \"incl_ns\": 2000000, \"excl_ns\": 2000000, ");
    CHECK_CONTAINS(j, "{\"id\": 200000, \"parent\": 199999, \"depth\": 200000, \"region\": 3, ");
    free(j);
    char *t = render(&m, 0, STROBE_REPORT_SORT_EXCL, 20, true, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_CONTAINS(t, "  100.00%     2.000 ms     2.000 ms      200000");
    free(t);
    /* the HTML page draws it in headless Chromium: no stack overflow in
     * the flame graph, which says what it did not draw */
    char page[4200];
    snprintf(page, sizeof page, "%s/deep.html", strobe_test_tmpdir("deep_recursion"));
    FILE *f = fopen(page, "w");
    CHECK(f != NULL);
    struct strobe_html_opts o = {0};
    strobe_report_opts_init(&o.report);
    CHECK_EQ_INT(strobe_report_html(f, &m.exp, &m.prof, &o), 0);
    CHECK_EQ_INT(fclose(f), 0);
    char *out;
    int st = strobe_test_sh(&out,
                            "python3 %s/tests/report/html_check.py '%s' --timeout 60 "
                            "--eval \"document.querySelector('#view-calltree .toolbar').textContent\" "
                            "--expect flat-profile:rec:visits=200000",
                            STROBE_SOURCE_DIR, page);
    if (st != 0)
        STROBE_FAIL("html_check.py: exit %d\n%s", st, out);
    CHECK_CONTAINS(out, "calls deeper than 300 levels below the zoomed box not drawn");
    free(out);
    free(nodes);
}

STROBE_TEST(bad_model)
{
    struct model m;
    int rc;
    char *s;
    /* child index out of range */
    build_model(&m);
    m.nodes[6].first_child = 99;
    s = render(&m, 0, 0, 20, false, &rc);
    CHECK_EQ_INT(rc, STROBE_ERR_FORMAT);
    free(s);
    /* a sibling cycle */
    build_model(&m);
    m.nodes[5].next_sibling = 1;
    s = render(&m, 1, 0, 20, false, &rc);
    CHECK_EQ_INT(rc, STROBE_ERR_FORMAT);
    free(s);
    /* a child naming another parent */
    build_model(&m);
    m.nodes[3].parent = 1;
    s = render(&m, 0, 0, 20, false, &rc);
    CHECK_EQ_INT(rc, STROBE_ERR_FORMAT);
    free(s);
    /* an undefined region */
    build_model(&m);
    m.nodes[4].region = NREGIONS;
    s = render(&m, 0, 0, 20, false, &rc);
    CHECK_EQ_INT(rc, STROBE_ERR_FORMAT);
    free(s);
    /* a node no path reaches */
    build_model(&m);
    m.nodes[5].first_child = STROBE_NONE;
    s = render(&m, 0, 0, 20, false, &rc);
    CHECK_EQ_INT(rc, STROBE_ERR_FORMAT);
    free(s);
}

STROBE_TEST(write_error)
{
    struct model m;
    build_model(&m);
    FILE *f = fopen("/dev/full", "w");
    CHECK(f != NULL);
    CHECK_EQ_INT(strobe_report_text(f, &m.exp, &m.prof, NULL), -ENOSPC);
    fclose(f);
    f = fopen("/dev/full", "w");
    CHECK_EQ_INT(strobe_report_json(f, &m.exp, &m.prof, NULL), -ENOSPC);
    fclose(f);
}

/* ---- transactional memory ----------------------------------------------
 * Two atomic blocks on the model above (regions 5 and 6):
 *   atomic@step (app.c:50), kmeans-like: thread 1 400000 transactions, 6
 *     rollbacks (aborts 4 read, 2 write), 1 serialized after too many
 *     rollbacks; thread 2 353000 transactions, 4 rollbacks (3 read, 1
 *     write). 10 rollbacks in 753010 attempts.
 *   atomic@push (app.c:60): thread 0 10 transactions, 30 rollbacks (20
 *     write, 5 validation, 5 other), 2 cancels.
 * At level events, block step spent 1 s in committed and 1 ms in aborted
 * attempts, block push 100 µs and 300 µs (100 µs of them cancelled). */
enum { R_STEP = NREGIONS, R_PUSH, NREGIONS_TM };

struct tm_fixture {
    struct model m;
    struct strobe_region_def regions[NREGIONS_TM];
    struct strobe_tm_model tm;
    uint32_t blocks[2];
    struct strobe_tm_cell cells[2 * NTHREADS];
    uint64_t states[NTHREADS * STROBE_TM_STATE_COUNT];
    uint64_t aborted_by[(NTHREADS + 1) * NTHREADS];
};

static void build_tm(struct tm_fixture *f, int level)
{
    memset(f, 0, sizeof *f);
    build_model(&f->m);
    memcpy(f->regions, f->m.regions, sizeof f->m.regions);
    f->regions[R_STEP] = (struct strobe_region_def){"atomic@step", "/src/app.c", 50,
                                                    "/bin/app",    0x2000,       STROBE_REGION_TM_ATOMIC};
    f->regions[R_PUSH] = (struct strobe_region_def){"atomic@push", "/src/app.c", 60,
                                                    "/bin/app",    0x3000,       STROBE_REGION_TM_ATOMIC};
    f->m.exp.regions = f->regions;
    f->m.exp.nregions = NREGIONS_TM;
    f->m.exp.tm = true;
    f->m.exp.tm_level = level;
    struct strobe_tm_model *t = &f->tm;
    t->nblocks = 2;
    t->blocks = f->blocks;
    f->blocks[0] = R_STEP;
    f->blocks[1] = R_PUSH;
    t->nthreads = NTHREADS;
    t->cells = f->cells;
    t->states = f->states;
    t->aborted_by = f->aborted_by;
    t->has_counts = level != STROBE_TM_MONITOR_STATS;
    t->has_events = level == STROBE_TM_MONITOR_EVENTS;
    t->has_aborts = t->has_counts || t->has_events;
    struct strobe_tm_cell *step1 = &f->cells[0 * NTHREADS + 1], *step2 = &f->cells[0 * NTHREADS + 2];
    struct strobe_tm_cell *push0 = &f->cells[1 * NTHREADS + 0];
    *step1 = (struct strobe_tm_cell){.transactions = 400000, .rollbacks = 6, .serialized = {0, 1, 0}};
    *step2 = (struct strobe_tm_cell){.transactions = 353000, .rollbacks = 4};
    *push0 = (struct strobe_tm_cell){.transactions = 10, .rollbacks = 30, .cancels = 2};
    if (t->has_aborts) {
        step1->aborts[0] = 4, step1->aborts[1] = 2;
        step2->aborts[0] = 3, step2->aborts[1] = 1;
        push0->aborts[1] = 20, push0->aborts[2] = 5, push0->aborts[5] = 5;
    }
    if (t->has_events) {
        step1->committed_ns = 600000000, step1->aborted_ns = 600000;
        step2->committed_ns = 400000000, step2->aborted_ns = 400000;
        push0->committed_ns = 100000, push0->aborted_ns = 300000, push0->cancelled_ns = 100000;
        for (int th = 0; th < NTHREADS; th++)
            f->states[th * STROBE_TM_STATE_COUNT + STROBE_TM_STATE_COMPUTE] = 1000 * (uint64_t)(th + 1);
        f->aborted_by[1 * NTHREADS + 0] = 25; /* thread 1 aborted thread 0 */
        f->aborted_by[NTHREADS * NTHREADS + 1] = 6;
    }
}

static char *render_tm(const struct tm_fixture *f, int json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    CHECK(out != NULL);
    struct strobe_report_opts o;
    strobe_report_opts_init(&o);
    o.tm = &f->tm;
    int rc = json ? strobe_report_json(out, &f->m.exp, &f->m.prof, &o)
                  : strobe_report_text(out, &f->m.exp, &f->m.prof, &o);
    fclose(out);
    CHECK_EQ_INT(rc, 0);
    return buf;
}

/* Builds the fixture at LEVEL and renders its report with the TM section. */
static char *tm_report(struct tm_fixture *f, int level, int json)
{
    build_tm(f, level);
    return render_tm(f, json);
}

static struct strobe__tm_verdict verdict(uint64_t transactions, uint64_t rollbacks, uint64_t irrevocable,
                                         uint64_t maxrb, bool times, uint64_t committed, uint64_t aborted,
                                         uint64_t cancelled)
{
    struct strobe_tm_cell c = {.transactions = transactions,
                               .rollbacks = rollbacks,
                               .serialized = {irrevocable, maxrb, 0},
                               .committed_ns = committed,
                               .aborted_ns = aborted,
                               .cancelled_ns = cancelled};
    struct strobe__tm_verdict v;
    strobe__tm_verdict(&c, times, &v);
    return v;
}

/* The grades of docs/tm.md at and around each threshold. */
STROBE_TEST(tm_verdict_thresholds)
{
    /* kmeans: 10 rollbacks in 753 k transactions, one of them serialized */
    struct strobe__tm_verdict v = verdict(753000, 10, 0, 1, false, 0, 0, 0);
    CHECK_EQ_INT(v.grade, STROBE__TM_GOOD);
    CHECK(v.rollback_rate == 10.0 / 753010);
    CHECK(v.wasted < 0);
    CHECK(v.serialized == 1.0 / 753000);
    CHECK_STR_EQ(v.grade_name, "good");
    CHECK_EQ_INT(verdict(753000, 10, 0, 1, true, 1000000000, 1000000, 0).grade, STROBE__TM_GOOD);
    /* rollback rate: < 5 % good, 5 % fair, 50 % contention */
    CHECK_EQ_INT(verdict(96, 4, 0, 0, false, 0, 0, 0).grade, STROBE__TM_GOOD);
    CHECK_EQ_INT(verdict(95, 5, 0, 0, false, 0, 0, 0).grade, STROBE__TM_FAIR);
    CHECK_EQ_INT(verdict(51, 49, 0, 0, false, 0, 0, 0).grade, STROBE__TM_FAIR);
    CHECK_EQ_INT(verdict(50, 50, 0, 0, false, 0, 0, 0).grade, STROBE__TM_CONTENTION);
    /* wasted: < 10 % good, 10 % fair, 50 % contention; cancelled time is
     * not a conflict */
    CHECK_EQ_INT(verdict(100, 0, 0, 0, true, 901, 99, 0).grade, STROBE__TM_GOOD);
    CHECK_EQ_INT(verdict(100, 0, 0, 0, true, 900, 100, 0).grade, STROBE__TM_FAIR);
    CHECK_EQ_INT(verdict(100, 0, 0, 0, true, 500, 500, 0).grade, STROBE__TM_CONTENTION);
    CHECK_EQ_INT(verdict(100, 0, 0, 0, true, 500, 500, 500).grade, STROBE__TM_GOOD);
    /* serialized: < 1 % good, 1 % fair, 10 % serialization */
    CHECK_EQ_INT(verdict(1000, 0, 9, 0, false, 0, 0, 0).grade, STROBE__TM_GOOD);
    CHECK_EQ_INT(verdict(1000, 0, 10, 0, false, 0, 0, 0).grade, STROBE__TM_FAIR);
    v = verdict(1000, 0, 100, 0, false, 0, 0, 0);
    CHECK_EQ_INT(v.grade, STROBE__TM_SERIALIZATION);
    CHECK_CONTAINS(v.advice, "irrevocably");
    v = verdict(1000, 0, 40, 60, false, 0, 0, 0);
    CHECK_EQ_INT(v.grade, STROBE__TM_SERIALIZATION);
    CHECK_CONTAINS(v.advice, "rollback limit");
    /* contention is named before serialization */
    CHECK_EQ_INT(verdict(10, 90, 0, 10, false, 0, 0, 0).grade, STROBE__TM_CONTENTION);
    CHECK_EQ_INT(verdict(0, 3, 0, 0, true, 0, 10, 0).grade, STROBE__TM_NONE);
}

/* Hardware transactions' aborts get their two columns, and only then. */
STROBE_TEST(text_tm_hardware_causes)
{
    struct tm_fixture f;
    build_tm(&f, STROBE_TM_MONITOR_COUNTERS);
    f.cells[1 * NTHREADS + 0].aborts[STROBE_TM_ABORT_HW_CONFLICT - 1] = 11;
    f.cells[1 * NTHREADS + 0].aborts[STROBE_TM_ABORT_HW_CAPACITY - 1] = 2;
    char *t = render_tm(&f, 0);
    CHECK_CONTAINS(
        t, "  block / thread          read_conflict  write_conflict  validation  explicit  irrevocable     "
           "other  hw_conflict  hw_capacity\n"
           "  atomic@step (app.c:50)              7               3           0         0            0       "
           "  0            0            0\n");
    CHECK_CONTAINS(
        t, "    thread 0                          0              20           5         0            0       "
           "  5           11            2\n");
    free(t);
}

/* Level counters: counts, abort causes per block and thread, no times; the
 * verdict says it rests on the counts. */
STROBE_TEST(text_tm_counters)
{
    struct tm_fixture f;
    char *t = tm_report(&f, STROBE_TM_MONITOR_COUNTERS, 0);
    CHECK_LINE(
        t, "  TM monitoring    counters — per block counts at exit; no times or culprits (use --tm-monitor "
           "events)");
    CHECK_CONTAINS(
        t, "\n\n"
           "Transactional memory\n"
           "  TM monitoring: counters — per block counts at exit; no times or culprits (use --tm-monitor "
           "events)\n"
           "\n"
           "Atomic blocks (rb rate = rollbacks / (transactions + rollbacks))\n"
           "  block / thread          transactions   rollbacks   rb rate  ser.irrev  ser.maxrb  ser.other   "
           "cancels\n"
           "  atomic@step (app.c:50)        753000          10    <0.01%          0          1          0    "
           "     0\n"
           "    thread 1                    400000           6    <0.01%          0          1          0    "
           "     0\n"
           "    thread 2                    353000           4    <0.01%          0          0          0    "
           "     0\n"
           "  atomic@push (app.c:60)            10          30    75.00%          0          0          0    "
           "     2\n"
           "    thread 0                        10          30    75.00%          0          0          0    "
           "     2\n"
           "\n"
           "Abort causes (aborted attempts per cause)\n"
           "  block / thread          read_conflict  write_conflict  validation  explicit  irrevocable     "
           "other\n"
           "  atomic@step (app.c:50)              7               3           0         0            0       "
           "  0\n"
           "    thread 1                          4               2           0         0            0       "
           "  0\n"
           "    thread 2                          3               1           0         0            0       "
           "  0\n"
           "  atomic@push (app.c:60)              0              20           5         0            0       "
           "  5\n"
           "    thread 0                          0              20           5         0            0       "
           "  5\n"
           "\n"
           "  Times, TMbox states and culprits are not recorded at level 'counters': re-run with "
           "--tm-monitor events\n"
           "\n"
           "Verdict (thresholds: docs/tm.md, \"Verdict\")\n"
           "  atomic@step (app.c:50): TM works well\n"
           "    rollback rate <0.01% (10 of 753010 attempts), serialized <0.01% (1 of 753000 transactions), "
           "wasted time not measured at level 'counters': the verdict rests on the counts only\n"
           "    Conflicts are rare; compare the block's time with a lock or atomic version to see whether TM "
           "pays off.\n"
           "  atomic@push (app.c:60): contention too high for TM\n"
           "    rollback rate 75.00% (30 of 40 attempts), serialized 0% (0 of 10 transactions), wasted time "
           "not measured at level 'counters': the verdict rests on the counts only\n"
           "    Most of the work is redone; a lock, smaller transactions or less shared data written would "
           "serve better.\n");
    CHECK(strstr(t, "strobe run --tm") == NULL);
    free(t);
}

/* Level events: times, the wasted share in the verdict, TMbox states. */
STROBE_TEST(text_tm_events)
{
    struct tm_fixture f;
    char *t = tm_report(&f, STROBE_TM_MONITOR_EVENTS, 0);
    CHECK_LINE(
        t, "  TM monitoring: events — every transaction attempt: counts, times, TMbox states, abort causes "
           "and culprits");
    CHECK_LINE(
        t, "Atomic blocks (rb rate = rollbacks / (transactions + rollbacks); wasted = aborted / (committed + "
           "aborted) attempt time)");
    CHECK_LINE(t, "  atomic@step (app.c:50)        753000          10    <0.01%          0          1        "
                  "  0         0"
                  "      1.000 s     1.000 ms     0.10%");
    CHECK_LINE(t, "    thread 0                        10          30    75.00%          0          0        "
                  "  0         2"
                  "   100.000 µs   300.000 µs    75.00%");
    CHECK_LINE(
        t, "    rollback rate <0.01% (10 of 753010 attempts), serialized <0.01% (1 of 753000 transactions), "
           "wasted 0.10% of attempt time in rolled-back attempts");
    CHECK_LINE(
        t,
        "    rollback rate 75.00% (30 of 40 attempts), serialized 0% (0 of 10 transactions), wasted 50.00% "
        "of attempt time in rolled-back attempts");
    CHECK_LINE(t, "  1               25         0         0");
    CHECK_LINE(t, "  unknown          0         6         0");
    CHECK(strstr(t, "not recorded at level") == NULL);
    free(t);
}

/* What the report says about each level when there is nothing to show. */
STROBE_TEST(text_tm_levels_without_blocks)
{
    static const struct {
        bool tm;
        int level;
        const char *line;
    } cases[] = {
        {false, 0,
         "  no atomic blocks: not run on the monitored STM (run the program with `strobe run --tm`)"},
        {true, STROBE_TM_MONITOR_OFF,
         "  no atomic blocks: the STM recorded nothing at level 'off' (re-run with --tm-monitor counters or "
         "higher)"},
        {true, STROBE_TM_MONITOR_COUNTERS,
         "  no atomic blocks: no TM counts: no atomic block ran, or the program did not exit normally (the "
         "counts "
         "are written at exit) or ran with --no-trace"},
        {true, STROBE_TM_MONITOR_EVENTS, "  no atomic blocks: no atomic block ran"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tm_fixture f;
        build_tm(&f, cases[i].level);
        f.m.exp.tm = cases[i].tm;
        f.tm.nblocks = 0;
        char *t = render_tm(&f, 0);
        CHECK_LINE(t, cases[i].line);
        if (cases[i].tm)
            CHECK(strstr(t, "strobe run --tm") == NULL);
        else
            CHECK(strstr(t, "TM monitoring") == NULL);
        free(t);
    }
    /* the level of an experiment without the meta keys is marked inferred */
    struct tm_fixture f;
    build_tm(&f, STROBE_TM_MONITOR_STATS);
    f.m.exp.tm_level_inferred = true;
    char *t = render_tm(&f, 0);
    CHECK_LINE(
        t,
        "  TM monitoring    stats — atomic blocks in the profile, counts per call path; no times or culprits "
        "(use --tm-monitor events) (level inferred from the records)");
    CHECK_LINE(
        t, "  Abort causes, times, TMbox states and culprits are not recorded at level 'stats': re-run with "
           "--tm-monitor events");
    CHECK(strstr(t, "Abort causes (") == NULL);
    free(t);
}

STROBE_TEST(json_tm)
{
    struct tm_fixture f;
    char *j = tm_report(&f, STROBE_TM_MONITOR_COUNTERS, 1);
    static const char *const script =
        "import json,sys\n"
        "d=json.load(open(sys.argv[1]))[\"tm\"]\n"
        "print(d[\"level\"], d[\"level_inferred\"], d[\"has_events\"], d[\"has_counts\"])\n"
        "print(d[\"recorded\"])\n"
        "b=d[\"blocks\"][0]\n"
        "def v(x): return \" \".join(k + \"=\" + (\"%.6g\" % x[k] if x[k] is not None else \"null\") "
        "for k in (\"rollback_rate\", \"wasted\", \"serialized\"))\n"
        "print(b[\"verdict\"][\"grade\"], v(b[\"verdict\"]))\n"
        "print(json.dumps(b[\"aborts\"], sort_keys=True), b[\"committed_ns\"])\n"
        "print(d[\"blocks\"][1][\"verdict\"][\"grade\"], v(d[\"blocks\"][1][\"verdict\"]))\n"
        "print(d[\"blocks\"][1][\"verdict\"][\"summary\"], \"|\", d[\"blocks\"][1][\"verdict\"][\"advice\"])\n"
        "print(d[\"states\"])\n"
        "print([(x[\"thread\"], x[\"transactions\"], x[\"rollbacks\"]) for x in d[\"threads\"]], "
        "b[\"threads\"][1][\"verdict\"][\"grade\"], v(b[\"threads\"][1][\"verdict\"]))\n";
    char *facts = json_facts(j, "json_tm", script);
    /* 10 / 753010 and 1 / 753000 */
    CHECK_STR_EQ(facts, "counters False False True\n"
                        "per block counts at exit; no times or culprits (use --tm-monitor events)\n"
                        "good rollback_rate=1.328e-05 wasted=null serialized=1.32802e-06\n"
                        "{\"explicit\": 0, \"hw_capacity\": 0, \"hw_conflict\": 0, \"irrevocable\": 0, "
                        "\"other\": 0, \"read_conflict\": 7, \"validation\": 0, \"write_conflict\": 3} None\n"
                        "contention rollback_rate=0.75 wasted=null serialized=0\n"
                        "contention too high for TM | Most of the work is redone; a lock, smaller transactions or "
                        "less shared data written would serve better\n"
                        "None\n"
                        "[(0, 10, 30), (1, 400000, 6), (2, 353000, 4)] good rollback_rate=1.49998e-05 wasted=null "
                        "serialized=2.5e-06\n");
    free(facts);
    free(j);
}

/* ---- filter advice (--score) -------------------------------------------
 * On the model: 200 recorded events, 700 bytes (3.5 B/event), 10 ns per
 * event, thread time 1.1 + 0.7 + 0.5 = 2.3 ms. Per region (2 events per
 * visit): compute 40 events 140 B 400 ns, 40 µs per visit; io 10, 35 B,
 * 100 ns, 10 µs; rec 6, 21 B, 60 ns, 166.667 µs; worker 4, 14 B, 40 ns,
 * 500 µs; main 2, 7 B, 20 ns. Exclusion order: io, compute, rec, worker. */

static struct strobe__score_target target_of(const char *text)
{
    struct strobe__score_target t;
    CHECK_EQ_INT(strobe__score_target_parse(text, &t), 0);
    return t;
}

/* Builds the advice for TARGET; its text (top 0 = all rows) in *text and
 * the filter file in *filter. */
static void score_of(const struct model *m, const char *target, struct strobe__score *sc, char **text,
                     char **filter)
{
    struct strobe__score_target t = target_of(target);
    CHECK_EQ_INT(strobe__score_build(sc, &m->exp, &m->prof, &t), 0);
    size_t len;
    FILE *f = open_memstream(text, &len);
    CHECK_EQ_INT(strobe__score_text(f, sc, 0), 0);
    fclose(f);
    f = open_memstream(filter, &len);
    CHECK_EQ_INT(strobe__score_write_filter(f, sc), 0);
    fclose(f);
}

static void score_done(struct strobe__score *sc, char *text, char *filter)
{
    free(text);
    free(filter);
    strobe__score_free(sc);
}

/* "name:filter" of every row, in table order. */
static char *score_filters(const struct model *m, const struct strobe__score *sc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (size_t i = 0; i < sc->nrows; i++)
        fprintf(f, "%s%s:%s", i ? " " : "", m->exp.regions[sc->rows[i].region].name,
                strobe__score_filter_name(sc->rows[i].filter));
    fclose(f);
    return buf;
}

STROBE_TEST(score_target_parse)
{
    struct strobe__score_target t = target_of("5%");
    CHECK(t.kind == STROBE__SCORE_OVERHEAD && t.pct == 5.0);
    t = target_of("0.5%");
    CHECK(t.kind == STROBE__SCORE_OVERHEAD && t.pct == 0.5);
    t = target_of("100%");
    CHECK(t.pct == 100.0);
    t = target_of("500MB");
    CHECK(t.kind == STROBE__SCORE_SIZE);
    CHECK_EQ_U64(t.bytes, 500ull << 20);
    CHECK_EQ_U64(target_of("1G").bytes, 1ull << 30);
    CHECK_EQ_U64(target_of("4096").bytes, 4096);
    static const char *const bad[] = {"",    "%",  "101%", "-1%",    "5 %",  "5%%", "x%",
                                      "abc", "5x", "1e1%", "0x1p3%", "nan%", ".%",  "1.2.3%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (strobe__score_target_parse(bad[i], &t) != STROBE_ERR_SYNTAX)
            STROBE_FAIL("target '%s' was accepted", bad[i]);
    char d[96];
    t = target_of(STROBE__SCORE_TARGET_DEFAULT);
    strobe__score_target_describe(&t, d, sizeof d);
    CHECK_STR_EQ(d, "overhead <= 5% of thread time");
    t = target_of("500MB");
    strobe__score_target_describe(&t, d, sizeof d);
    CHECK_STR_EQ(d, "trace <= 500.0 MiB");
}

STROBE_TEST(score_size_target)
{
    struct model m;
    build_model(&m);
    struct strobe__score sc;
    char *text, *filter;
    /* 700 B: io (35 B) alone is not enough, io + compute reach 525 B; then
     * io is not needed (560 B <= 600 B) and is kept again */
    score_of(&m, "600", &sc, &text, &filter);
    char *filters = score_filters(&m, &sc);
    CHECK_STR_EQ(filters, "compute:exclude io:keep rec:keep worker:keep main:never:main");
    CHECK_EQ_U64(sc.full.events, 200);
    CHECK_EQ_U64(sc.full.bytes, 700);
    CHECK_EQ_U64(sc.filtered.events, 160);
    CHECK_EQ_U64(sc.filtered.bytes, 560);
    CHECK(sc.met && sc.evaluable && sc.nexcluded == 1 && sc.ncandidates == 4);
    CHECK_STR_EQ(
        text, "strobe report --score: strobe-app-20261122-104500\n"
              "\n"
              "Estimate for a full run (recorded events and those the size limit dropped)\n"
              "  events           200 (0 dropped)\n"
              "  trace            700 B (3.50 bytes/event, measured in the trace)\n"
              "  overhead         2.000 µs (0.09% of 2.300 ms thread time)\n"
              "  target           trace <= 600 B\n"
              "  with the filter  160 events, 560 B, overhead 1.600 µs (0.07% of thread time)\n"
              "  outcome          target trace <= 600 B met by excluding 1 function (700 B -> 560 B)\n"
              "\n"
              "Regions by events (5 regions; filter: exclude = in the filter, keep = not needed for the "
              "target, never:... = never excluded)\n"
              "        events   events%       bytes      visits   incl/visit   excl/visit     overhead     "
              "ovh%  filter        region\n"
              "            40    20.00%       140 B          20    40.000 µs    40.000 µs       400 ns    "
              "0.02%  exclude       compute (app.c:30)\n"
              "            10     5.00%        35 B           5    10.000 µs    10.000 µs       100 ns    "
              "0.00%  keep          io [libio.so]\n"
              "             6     3.00%        21 B           3   166.667 µs   100.000 µs        60 ns    "
              "0.00%  keep          rec (app.c:40)\n"
              "             4     2.00%        14 B           2   500.000 µs   100.000 µs        40 ns    "
              "0.00%  keep          worker (app.c:20)\n"
              "             2     1.00%         7 B           1     1.000 ms   650.000 µs        20 ns    "
              "0.00%  never:main    main (app.c:10)\n"
              "            62    31.00%       217 B          31            -            -       620 ns    "
              "0.03%                total (all regions)\n"
              "            22    11.00%        77 B          11            -            -       220 ns    "
              "0.01%                kept (all regions but the excluded)\n");
    CHECK_STR_EQ(filter,
                 "# strobe filter written by `strobe report --score` from the experiment "
                 "strobe-app-20261122-104500\n"
                 "# target: trace <= 600 B (thread time 2.300 ms)\n"
                 "# before: 200 events, 700 B, overhead 2.000 µs (0.09% of thread time)\n"
                 "# after:  160 events, 560 B, overhead 1.600 µs (0.07% of thread time)\n"
                 "# target trace <= 600 B met by excluding 1 function (700 B -> 560 B)\n"
                 "#\n"
                 "# Functions with the shortest inclusive time per visit are excluded first (the most\n"
                 "# overhead saved per unit of measured time; ties: more events first) until the estimate\n"
                 "# meets the target; then those the target does not need are kept again, fewest events "
                 "first.\n"
                 "# Never excluded: main, annotated (USER) regions, TM atomic blocks, and names no glob can\n"
                 "# match exactly. Excluded functions still call the -finstrument-functions hooks (a "
                 "cache\n"
                 "# lookup each, not in the estimate); no_instrument_function at compile time removes "
                 "that.\n"
                 "# Use: strobe run --filter THIS_FILE -- PROG [ARGS...]\n"
                 "exclude compute  # 20 visits, 40.000 µs per visit\n");
    /* --top 2: the other three rows summed in one line */
    char *top2 = NULL;
    size_t top2_len;
    FILE *tf = open_memstream(&top2, &top2_len);
    CHECK_EQ_INT(strobe__score_text(tf, &sc, 2), 0);
    fclose(tf);
    CHECK_CONTAINS(top2, "Regions by events (top 2 of 5; ");
    CHECK_CONTAINS(
        top2, "\n            12     6.00%        42 B           6            -            -       120 ns    "
              "0.01%                (3 more)\n");
    free(top2);
    /* the file parses and excludes exactly compute */
    struct strobe_filter *f;
    char err[256];
    CHECK_EQ_INT(strobe__filter_parse(filter, strlen(filter), "advice", &f, err, sizeof err), 0);
    for (int r = 0; r < NREGIONS; r++)
        CHECK(strobe__filter_match(f, m.regions[r].name) == (r != R_COMPUTE));
    strobe__filter_free(f);
    free(filters);
    score_done(&sc, text, filter);
}

STROBE_TEST(score_overhead_target)
{
    struct model m;
    build_model(&m);
    struct strobe__score sc;
    char *text, *filter, *filters;
    /* 0.07% of 2.3 ms = 1610 ns: io + compute reach 1500 ns, io goes back (1600 ns) */
    score_of(&m, "0.07%", &sc, &text, &filter);
    filters = score_filters(&m, &sc);
    CHECK_STR_EQ(filters, "compute:exclude io:keep rec:keep worker:keep main:never:main");
    CHECK(sc.met);
    CHECK(fabs(sc.filtered.overhead_ns - 1600) < 1e-6);
    free(filters);
    score_done(&sc, text, filter);
    /* 0.05% = 1150 ns: every candidate excluded still leaves 1400 ns */
    score_of(&m, "0.05%", &sc, &text, &filter);
    filters = score_filters(&m, &sc);
    CHECK_STR_EQ(filters, "compute:exclude io:exclude rec:exclude worker:exclude main:never:main");
    CHECK(!sc.met && sc.evaluable);
    char line[512];
    strobe__score_outcome(&sc, line, sizeof line);
    /* main's 20 ns stay, and 1380 ns of the 200 events no region accounts for */
    CHECK_STR_EQ(line,
                 "target overhead <= 0.05% of thread time not met: reached 0.06% of thread time by "
                 "excluding the 4 functions that may be excluded; of the rest, 0.00087% of thread time is "
                 "in regions never excluded (main, annotated, TM atomic blocks, no name or no completed "
                 "visit) and 0.06% of thread time in records of no region");
    free(filters);
    score_done(&sc, text, filter);
    /* a profile rebuilt from a trace that lost events cannot attribute them */
    m.prof.source = STROBE_PROFILE_TRACE;
    m.threads[0].dropped = m.exp.total_dropped = 10;
    score_of(&m, "0.05%", &sc, &text, &filter);
    strobe__score_outcome(&sc, line, sizeof line);
    CHECK_CONTAINS(line,
                   " in records of no region (the events the size limit dropped: the trace cannot attribute "
                   "them)");
    score_done(&sc, text, filter);
    m.prof.source = STROBE_PROFILE_FILES;
    m.threads[0].dropped = m.exp.total_dropped = 0;
    /* met without a filter: the header says so and there is no rule */
    score_of(&m, "5%", &sc, &text, &filter);
    CHECK(sc.met && sc.nexcluded == 0);
    CHECK(strstr(filter, "\nexclude") == NULL);
    CHECK_CONTAINS(filter, "met without a filter (0.09% of thread time)");
    score_done(&sc, text, filter);
}

/* Without a trace the bytes come from the record format: 5 bytes per
 * visit (ENTER 3 with a 1-byte id, EXIT 2), 6 for a local id >= 128. */
STROBE_TEST(score_profile_only)
{
    struct model m;
    build_model(&m);
    uint32_t map[200];
    for (size_t l = 0; l < 200; l++)
        map[l] = STROBE_NONE;
    map[1] = R_MAIN;
    map[2] = R_WORKER;
    map[150] = R_COMPUTE;
    map[3] = R_REC;
    map[4] = R_IO;
    m.proc.region_map = map;
    m.proc.region_map_len = 200;
    for (int t = 0; t < NTHREADS; t++) {
        m.threads[t].stream_path = NULL;
        m.threads[t].events = m.threads[t].bytes = 0;
    }
    m.exp.total_events = m.exp.total_bytes = 0;
    struct strobe__score sc;
    char *text, *filter;
    score_of(&m, "100", &sc, &text, &filter);
    CHECK(!sc.bytes_measured);
    /* 2 x (1 + 2 + 10 + 3 + 5) visits */
    CHECK_EQ_U64(sc.full.events, 62);
    /* main 5, worker 10, compute 20 x 6, rec 15, io 25 */
    CHECK_EQ_U64(sc.full.bytes, 175);
    CHECK_EQ_U64(sc.rows[0].cost.bytes, 120);
    CHECK_CONTAINS(text, "\n  trace            175 B (2.82 bytes/event, no trace: from the record format)\n");
    char *filters = score_filters(&m, &sc);
    /* 175 - 25 (io) - 120 (compute) = 30 <= 100, and 55 without io */
    CHECK_STR_EQ(filters, "compute:exclude io:keep rec:keep worker:keep main:never:main");
    free(filters);
    score_done(&sc, text, filter);
}

/* main, annotated regions, TM atomic blocks, addresses without a symbol
 * and names no glob can hold are never excluded; special characters are
 * escaped; without a measured cost an overhead target cannot be
 * evaluated. */
STROBE_TEST(score_never_and_escapes)
{
    struct model m;
    build_model(&m);
    m.regions[R_IO].name = "operator*";
    m.regions[R_REC].kind = STROBE_REGION_USER;
    m.regions[R_WORKER].name = "0x1010";
    struct strobe__score sc;
    char *text, *filter;
    score_of(&m, "0", &sc, &text, &filter);
    char *filters = score_filters(&m, &sc);
    CHECK_STR_EQ(filters,
                 "compute:exclude operator*:exclude rec:never:user 0x1010:never:name main:never:main");
    CHECK_CONTAINS(filter, "\nexclude compute  # 20 visits, 40.000 µs per visit\n");
    CHECK_CONTAINS(filter, "\nexclude operator\\*  # 5 visits, 10.000 µs per visit\n");
    free(filters);
    score_done(&sc, text, filter);

    m.regions[R_COMPUTE].name = "operator delete";
    m.regions[R_IO].kind = STROBE_REGION_TM_ATOMIC;
    m.proc.overhead_ns_per_event = 0;
    score_of(&m, "1%", &sc, &text, &filter);
    filters = score_filters(&m, &sc);
    CHECK_STR_EQ(
        filters,
        "operator delete:never:name operator*:never:atomic rec:never:user 0x1010:never:name main:never:main");
    CHECK(!sc.evaluable && !sc.met);
    CHECK_CONTAINS(text, "\n  overhead         unknown (no cost per event was measured)\n");
    char line[512];
    strobe__score_outcome(&sc, line, sizeof line);
    CHECK_STR_EQ(line,
                 "target overhead <= 1% of thread time cannot be evaluated: the experiment has no measured "
                 "cost per event (a size target can, e.g. --target 500MB)");
    free(filters);
    score_done(&sc, text, filter);
}

STROBE_TEST(score_json)
{
    struct model m;
    build_model(&m);
    m.threads[1].dropped = 10; /* 10 more events of 3.5 B and 10 ns each */
    m.exp.total_dropped = 10;
    struct strobe__score sc;
    struct strobe__score_target t = target_of("600");
    CHECK_EQ_INT(strobe__score_build(&sc, &m.exp, &m.prof, &t), 0);
    char *j = NULL;
    size_t len;
    FILE *f = open_memstream(&j, &len);
    CHECK_EQ_INT(strobe__score_json(f, &sc), 0);
    fclose(f);
    strobe__score_free(&sc);
    static const char *const script =
        "import json,sys\n"
        "d=json.load(open(sys.argv[1]))\n"
        "print(d[\"schema\"], d[\"version\"], d[\"target\"], d[\"thread_time_ns\"], d[\"dropped\"])\n"
        "print(d[\"bytes_per_event\"], d[\"bytes_per_event_from\"], d[\"target_met\"], d[\"excluded\"])\n"
        "for k in (\"full_run\", \"filtered\", \"regions_total\", \"regions_kept\"): print(k, d[k])\n"
        "for r in d[\"regions\"]: print(r[\"name\"], r[\"kind\"], r[\"visits\"], r[\"events\"], "
        "r[\"bytes\"], "
        "r[\"incl_ns\"], r[\"excl_ns\"], r[\"overhead_ns\"], r[\"filter\"])\n";
    char *facts = json_facts(j, "score_json", script);
    /* the 10 dropped events count in the full run, not in the regions */
    CHECK_STR_EQ(facts, "strobe-score 1 {'kind': 'size', 'bytes': 600} 2300000 10\n"
                        "3.5 trace True 1\n"
                        "full_run {'events': 210, 'bytes': 735, 'overhead_ns': 2100}\n"
                        "filtered {'events': 170, 'bytes': 595, 'overhead_ns': 1700}\n"
                        "regions_total {'events': 62, 'bytes': 217, 'overhead_ns': 620}\n"
                        "regions_kept {'events': 22, 'bytes': 77, 'overhead_ns': 220}\n"
                        "compute function 20 40 140 800000 800000 400 exclude\n"
                        "io function 5 10 35 50000 50000 100 keep\n"
                        "rec function 3 6 21 500000 300000 60 keep\n"
                        "worker function 2 4 14 1000000 200000 40 keep\n"
                        "main function 1 2 7 1000000 650000 20 never:main\n");
    free(facts);
    free(j);
}

STROBE_TEST_MAIN(STROBE_CASE(units_time), STROBE_CASE(units_bytes), STROBE_CASE(sort_parse),
                 STROBE_CASE(text_summary), STROBE_CASE(text_drops_and_exit), STROBE_CASE(text_flat),
                 STROBE_CASE(text_tree), STROBE_CASE(text_threads), STROBE_CASE(text_by_rank),
                 STROBE_CASE(json_tree), STROBE_CASE(json_fields), STROBE_CASE(json_escapes),
                 STROBE_CASE(html_data_escapes), STROBE_CASE(deep_recursion), STROBE_CASE(bad_model),
                 STROBE_CASE(write_error), STROBE_CASE(tm_verdict_thresholds), STROBE_CASE(text_tm_counters),
                 STROBE_CASE(text_tm_hardware_causes), STROBE_CASE(text_tm_events),
                 STROBE_CASE(text_tm_levels_without_blocks), STROBE_CASE(json_tm),
                 STROBE_CASE(score_target_parse), STROBE_CASE(score_size_target),
                 STROBE_CASE(score_overhead_target), STROBE_CASE(score_profile_only),
                 STROBE_CASE(score_never_and_escapes), STROBE_CASE(score_json))
