/* SPDX-License-Identifier: MIT */
/*
 * The reader and model (src/analysis): exact events, times, call paths and
 * metrics on the byte-level experiment of tests/export/make_experiment.c;
 * one exact error line per kind of corruption; and real runs under
 * `strobe run` for symbol resolution (PIE + shared library) and for the
 * equality of profiles read from t<N>.prof files and replayed from traces.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/experiment.h"
#include "analysis/malloc.h"
#include "analysis/tm.h"
#include "common/format.h"
#include "make_experiment.h"
#include "strobe/strobe.h"
#include "strobe/tm.h"
#include <signal.h>

#include "test.h"

static char dir[4200];

static const char *synth(const char *name)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir(name));
    CHECK_EQ_INT(make_experiment(dir), 0);
    return dir;
}

static struct strobe_experiment *open_ok(const char *d)
{
    struct strobe_experiment *exp = NULL;
    struct strobe_errbuf eb;
    int rc = strobe_experiment_open(d, &exp, NULL, NULL, &eb);
    if (rc)
        STROBE_FAIL("open %s: %s", d, eb.msg);
    return exp;
}

/* Opening (and building a profile from SOURCE) fails with CODE and MSG. */
static void expect_error(const char *d, int source, int code, const char *msg)
{
    struct strobe_experiment *exp = NULL;
    struct strobe_errbuf eb = { "" };
    int rc = strobe_experiment_open(d, &exp, NULL, NULL, &eb);
    if (rc == 0) {
        struct strobe_profile *p = NULL;
        rc = strobe_profile_build(exp, source, &p, &eb);
        strobe_profile_free(p);
        strobe_experiment_close(exp);
    }
    CHECK_EQ_INT(rc, code);
    CHECK_STR_EQ(eb.msg, msg);
}

static char *path_of(const char *rel)
{
    static char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return p;
}

static void patch(const char *rel, long off, const void *bytes, size_t n)
{
    int fd = open(path_of(rel), O_WRONLY);
    CHECK(fd >= 0);
    CHECK_EQ_INT(pwrite(fd, bytes, n, off), (long)n);
    close(fd);
}

/* Keeps the 64-byte header of REL and replaces everything after it. */
static void replace_body(const char *rel, const void *bytes, size_t n)
{
    CHECK_EQ_INT(truncate(path_of(rel), 64), 0);
    patch(rel, 64, bytes, n);
}

/* Offset of the K-th record of thread T in the synthetic experiment. */
static uint64_t record_offset(uint32_t t, int k)
{
    struct strobe_experiment *exp = open_ok(dir);
    struct strobe_stream_iter *it;
    struct strobe_errbuf eb;
    struct strobe_event ev;
    CHECK_EQ_INT(strobe_stream_open(exp, t, &it, &eb), 0);
    for (int i = 0; i <= k; i++)
        CHECK_EQ_INT(strobe_stream_next(it, &ev, &eb), 1);
    strobe_stream_close(it);
    strobe_experiment_close(exp);
    return ev.offset;
}

static uint32_t region_id(const struct strobe_experiment *exp, const char *name)
{
    for (uint32_t i = 0; i < exp->nregions; i++)
        if (strcmp(exp->regions[i].name, name) == 0)
            return i;
    STROBE_FAIL("no region %s", name);
}

/* Node at PATH ("a/b/c" of region names) or NULL. */
static const struct strobe_cnode *node_at(const struct strobe_experiment *exp, const struct strobe_profile *p,
                                          const char *path)
{
    uint32_t n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save, *part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
        uint32_t c = p->nodes[n].first_child;
        while (c != STROBE_NONE && strcmp(exp->regions[p->nodes[c].region].name, part) != 0)
            c = p->nodes[c].next_sibling;
        if (c == STROBE_NONE)
            return NULL;
        n = c;
    }
    return &p->nodes[n];
}

static const struct strobe_cnode *must_node(const struct strobe_experiment *exp, const struct strobe_profile *p,
                                            const char *path)
{
    const struct strobe_cnode *n = node_at(exp, p, path);
    if (!n)
        STROBE_FAIL("no call path %s", path);
    return n;
}

/* ---- the synthetic experiment ------------------------------------------ */

STROBE_TEST(model_definitions_threads_counts)
{
    struct strobe_experiment *exp = open_ok(synth("model"));
    CHECK_EQ_INT(exp->nprocesses, 1);
    CHECK_EQ_U64(exp->processes[0].pid, EXPERIMENT_PID);
    CHECK_STR_EQ(exp->processes[0].dir, "proc-4242");
    CHECK(exp->processes[0].exited);
    CHECK_STR_EQ(strobe_experiment_meta(exp, "host"), "testhost");
    CHECK_EQ_INT(exp->nregions, 3);
    uint32_t m = region_id(exp, "main");
    CHECK_STR_EQ(exp->regions[m].file, "demo.c");
    CHECK_EQ_INT(exp->regions[m].line, 10);
    CHECK_EQ_INT(exp->regions[m].kind, STROBE_REGION_USER);
    CHECK_EQ_INT(exp->nmetrics, 1);
    CHECK_STR_EQ(exp->metrics[0].name, "bytes");
    CHECK_STR_EQ(exp->metrics[0].unit, "B");
    CHECK_EQ_INT(exp->nthreads, 2);
    const struct strobe_thread_info *t0 = &exp->threads[0], *t1 = &exp->threads[1];
    CHECK_EQ_U64(t0->events, 13);
    CHECK_EQ_U64(t1->events, 7);
    CHECK_EQ_U64(exp->total_events, 20);
    CHECK_EQ_U64(t0->begin_ns, 0);
    CHECK_EQ_U64(t0->end_ns, 6100);
    CHECK_EQ_U64(t1->begin_ns, 850);
    CHECK_EQ_U64(t1->end_ns, 1450);
    CHECK_EQ_U64(exp->duration_ns, 6100);
    CHECK_EQ_INT(t0->parent, STROBE_NONE);
    CHECK_EQ_INT(t1->parent, 0);
    CHECK_EQ_U64(t1->tid, EXPERIMENT_PID + 1);
    CHECK(t0->ended && t0->has_rusage);
    CHECK_EQ_U64(t0->rusage.maxrss_kb, 2048);
    CHECK_EQ_U64(t0->rusage.nivcsw, 2);
    strobe_experiment_close(exp);
}

STROBE_TEST(iterator_exact_events)
{
    struct strobe_experiment *exp = open_ok(synth("iterator"));
    struct strobe_stream_iter *it;
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_stream_open(exp, 0, &it, &eb), 0);
    static const struct {
        int type;
        uint64_t t;
        const char *region;
        uint32_t depth;
    } want[] = {
        { STROBE_EVENT_THREAD_BEGIN, 0, NULL, 0 },  { STROBE_EVENT_ENTER, 100, "main", 1 },
        { STROBE_EVENT_ENTER, 200, "compute", 2 },  { STROBE_EVENT_EXIT, 500, "compute", 1 },
        { STROBE_EVENT_METRIC, 550, NULL, 1 },      { STROBE_EVENT_ENTER, 600, "compute", 2 },
        { STROBE_EVENT_EXIT, 700, "compute", 1 },   { STROBE_EVENT_THREAD_CREATE, 800, NULL, 1 },
        { STROBE_EVENT_ENTER, 900, EXPERIMENT_ODD_NAME, 2 },
        { STROBE_EVENT_EXIT, 1000, EXPERIMENT_ODD_NAME, 1 },
        { STROBE_EVENT_THREAD_JOIN, 5000, NULL, 1 }, { STROBE_EVENT_EXIT, 6000, "main", 0 },
        { STROBE_EVENT_THREAD_END, 6100, NULL, 0 },
    };
    struct strobe_event ev;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK_EQ_INT(strobe_stream_next(it, &ev, &eb), 1);
        CHECK_EQ_INT(ev.type, want[i].type);
        CHECK_EQ_U64(ev.time_ns, want[i].t);
        CHECK_EQ_INT(ev.depth, want[i].depth);
        CHECK(!ev.synthetic);
        if (want[i].region)
            CHECK_STR_EQ(exp->regions[ev.region].name, want[i].region);
        if (ev.type == STROBE_EVENT_METRIC) {
            CHECK_EQ_INT(ev.metric, 0);
            CHECK_EQ_INT(ev.value, 100);
        }
        if (ev.type == STROBE_EVENT_THREAD_CREATE || ev.type == STROBE_EVENT_THREAD_JOIN)
            CHECK_EQ_INT(ev.other_thread, 1);
    }
    CHECK_EQ_INT(strobe_stream_next(it, &ev, &eb), 0);
    strobe_stream_close(it);
    strobe_experiment_close(exp);
}

STROBE_TEST(profile_from_trace_exact)
{
    struct strobe_experiment *exp = open_ok(synth("profile"));
    struct strobe_profile *p;
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_AUTO, &p, &eb), 0);
    CHECK_EQ_INT(p->source, STROBE_PROFILE_TRACE); /* no t<N>.prof files */
    CHECK_EQ_INT(p->nnodes, 5); /* root, main, main/compute, main/odd, compute (t1) */
    const struct strobe_cnode *m = must_node(exp, p, "main");
    CHECK_EQ_U64(m->total.visits, 1);
    CHECK_EQ_U64(m->total.incl_ns, 5900);
    CHECK_EQ_U64(m->total.excl_ns, 5400);
    CHECK_EQ_U64(m->per_thread[1].visits, 0);
    CHECK_EQ_INT(m->metrics[0].count, 1);
    CHECK_EQ_INT(m->metrics[0].sum, 100);
    const struct strobe_cnode *mc = must_node(exp, p, "main/compute");
    CHECK_EQ_U64(mc->total.visits, 2);
    CHECK_EQ_U64(mc->total.incl_ns, 400);
    CHECK_EQ_U64(mc->total.excl_ns, 400);
    CHECK_EQ_U64(mc->total.min_ns, 100);
    CHECK_EQ_U64(mc->total.max_ns, 300);
    CHECK(mc->total.sumsq_ns == 100000.0);
    CHECK_EQ_INT(mc->depth, 2);
    const struct strobe_cnode *c = must_node(exp, p, "compute");
    CHECK_EQ_U64(c->total.visits, 2);
    CHECK_EQ_U64(c->per_thread[1].visits, 2);
    CHECK_EQ_U64(c->per_thread[0].visits, 0);
    CHECK_EQ_U64(c->total.incl_ns, 420);
    CHECK_EQ_U64(c->total.min_ns, 20);
    CHECK_EQ_U64(c->total.max_ns, 400);
    CHECK_EQ_INT(c->thread_metrics[1 * exp->nmetrics + 0].sum, -7);
    CHECK_EQ_INT(c->metrics[0].min, -7);
    CHECK_EQ_U64(must_node(exp, p, "main/" EXPERIMENT_ODD_NAME)->total.incl_ns, 100);
    strobe_profile_free(p);
    /* FILES is refused: profiling was off */
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_FILES, &p, &eb), -ENOENT);
    CHECK_CONTAINS(eb.msg, "proc-4242/t0 has no profile file (profiling was off)");
    strobe_experiment_close(exp);
}

STROBE_TEST(killed_thread_closed_at_process_end)
{
    synth("killed");
    /* cut t1 before its last EXIT: ENTER compute at +1350 stays open */
    CHECK_EQ_INT(truncate(path_of("proc-4242/t1.evt"), (off_t)record_offset(1, 5)), 0);
    struct strobe_experiment *exp = open_ok(dir);
    CHECK(!exp->threads[1].ended);
    CHECK_EQ_U64(exp->threads[1].events, 5);
    CHECK_EQ_U64(exp->threads[1].end_ns, 6200); /* PROCESS_END of the process */
    struct strobe_stream_iter *it;
    struct strobe_errbuf eb;
    struct strobe_event ev;
    CHECK_EQ_INT(strobe_stream_open(exp, 1, &it, &eb), 0);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(strobe_stream_next(it, &ev, &eb), 1);
    CHECK_EQ_INT(strobe_stream_next(it, &ev, &eb), 1);
    CHECK_EQ_INT(ev.type, STROBE_EVENT_EXIT);
    CHECK(ev.synthetic);
    CHECK_EQ_U64(ev.time_ns, 6200);
    CHECK_STR_EQ(exp->regions[ev.region].name, "compute");
    CHECK_EQ_INT(strobe_stream_next(it, &ev, &eb), 0);
    strobe_stream_close(it);
    struct strobe_profile *p;
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_TRACE, &p, &eb), 0);
    CHECK_EQ_U64(must_node(exp, p, "compute")->total.incl_ns, 400 + (6200 - 1350));
    strobe_profile_free(p);
    strobe_experiment_close(exp);
}

STROBE_TEST(zero_tail_is_end_of_data)
{
    synth("zerotail");
    /* what a SIGKILLed writer leaves: the chunk's unused rest is zeros */
    struct stat st;
    CHECK_EQ_INT(stat(path_of("proc-4242/t0.evt"), &st), 0);
    CHECK_EQ_INT(truncate(path_of("proc-4242/t0.evt"), st.st_size + 3000), 0);
    struct strobe_experiment *exp = open_ok(dir);
    CHECK_EQ_U64(exp->threads[0].events, 13);
    strobe_experiment_close(exp);
}

STROBE_TEST(records_across_chunks)
{
    synth("chunks");
    /* t1 rewritten with 4 KiB chunks: 1000 enter/exit pairs padded at
     * every chunk end */
    uint32_t cs = 4096;
    patch("proc-4242/t1.evt", 16, &cs, 4);
    static uint8_t body[3 * 4096];
    size_t n = 0, pairs = 0;
    uint64_t off = 64;
    while (pairs < 1500) {
        size_t need = pairs == 0 ? 3 : 2;  /* ENTER id 1, then ENTER_SAME */
        if ((off % cs) + need + 1 > cs) { /* +1: the EXIT */
            while (off % cs) {
                body[n++] = 0;
                off++;
            }
            continue;
        }
        if (pairs == 0) {
            body[n++] = 0x41; /* ENTER, delta 1 */
            body[n++] = 1;
        } else {
            body[n++] = 0xc1; /* ENTER_SAME, delta 1 */
        }
        body[n++] = 0x81; /* EXIT, delta 1 */
        off = 64 + n;
        pairs++;
        if (n + 8 > sizeof body)
            break;
    }
    replace_body("proc-4242/t1.evt", body, n);
    struct strobe_experiment *exp = open_ok(dir);
    CHECK_EQ_U64(exp->threads[1].events, 2 * pairs);
    struct strobe_profile *p;
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_TRACE, &p, &eb), 0);
    CHECK_EQ_U64(must_node(exp, p, "compute")->per_thread[1].visits, pairs);
    CHECK_EQ_U64(must_node(exp, p, "compute")->per_thread[1].incl_ns, pairs);
    strobe_profile_free(p);
    strobe_experiment_close(exp);
}

/* A profile file: header + root + node(region 1 = compute, parent P). */
static void write_prof(const char *rel, uint32_t thread, uint32_t parent, uint32_t slot_count)
{
    struct strobe_prof_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, STROBE_MAGIC_PROFILE, 8);
    h.version = STROBE_FORMAT_VERSION;
    h.header_size = 64;
    h.slot_size = 64;
    h.thread_index = thread;
    h.slot_count = slot_count;
    struct strobe_prof_node n[2] = { 0 };
    n[0] = (struct strobe_prof_node){ STROBE_SLOT_NODE, STROBE_PROF_NONE, STROBE_PROF_NO_REGION, 1,
                                      STROBE_PROF_NONE, STROBE_PROF_NONE, 0, 0, UINT64_MAX, 0, 0 };
    n[1] = (struct strobe_prof_node){ STROBE_SLOT_NODE, parent, 1, STROBE_PROF_NONE, STROBE_PROF_NONE,
                                      STROBE_PROF_NONE, 3, 30, 5, 20, 525 };
    int fd = open(path_of(rel), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK_EQ_INT(write(fd, &h, 64), 64);
    CHECK_EQ_INT(write(fd, n, sizeof n), (long)sizeof n);
    close(fd);
}

STROBE_TEST(profile_files_exact)
{
    synth("proffiles");
    write_prof("proc-4242/t0.prof", 0, 0, 2);
    write_prof("proc-4242/t1.prof", 1, 0, 2);
    struct strobe_experiment *exp = open_ok(dir);
    struct strobe_profile *p;
    struct strobe_errbuf eb;
    /* the synthetic streams have no THREAD_SUMMARY, as if killed: the
     * automatic choice is their trace, the files lack the open frames */
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_AUTO, &p, &eb), 0);
    CHECK_EQ_INT(p->source, STROBE_PROFILE_TRACE);
    strobe_profile_free(p);
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_FILES, &p, &eb), 0);
    CHECK(p->incomplete);
    const struct strobe_cnode *c = must_node(exp, p, "compute");
    CHECK_EQ_U64(c->total.visits, 6);
    CHECK_EQ_U64(c->total.incl_ns, 60);
    CHECK_EQ_U64(c->total.min_ns, 5);
    CHECK_EQ_U64(c->total.max_ns, 20);
    CHECK(c->total.sumsq_ns == 1050.0);
    strobe_profile_free(p);
    strobe_experiment_close(exp);
}

/* ---- corruption: one exact line each, never a crash --------------------- */

STROBE_TEST(corrupt_stream_header)
{
    synth("badhdr");
    patch("proc-4242/t0.evt", 0, "X", 1);
    expect_error(dir, 0, STROBE_ERR_FORMAT, "proc-4242/t0.evt: offset 0: bad magic (not a strobe event stream file)");
    synth("badversion");
    uint32_t v = 9;
    patch("proc-4242/t0.evt", 8, &v, 4);
    expect_error(dir, 0, STROBE_ERR_VERSION, "proc-4242/t0.evt: offset 8: format version 9, this strobe reads 1");
    synth("badchunk");
    v = 1000;
    patch("proc-4242/t1.evt", 16, &v, 4);
    expect_error(dir, 0, STROBE_ERR_FORMAT,
                 "proc-4242/t1.evt: offset 16: chunk size 1000 is not a power of two in [4096, 1073741824]");
    synth("shortfile");
    CHECK_EQ_INT(truncate(path_of("proc-4242/t1.evt"), 10), 0);
    expect_error(dir, 0, STROBE_ERR_TRUNCATED,
                 "proc-4242/t1.evt: file is 10 bytes, shorter than its 64-byte header");
}

STROBE_TEST(corrupt_stream_records)
{
    char msg[256];
    synth("truncrec");
    /* ENTER main at +100: b0, delta continuation, region id; cut the id */
    uint64_t off = record_offset(0, 1);
    CHECK_EQ_INT(truncate(path_of("proc-4242/t0.evt"), (off_t)off + 2), 0);
    snprintf(msg, sizeof msg, "proc-4242/t0.evt: offset %llu: ENTER record truncated", (unsigned long long)off + 2);
    expect_error(dir, 0, STROBE_ERR_TRUNCATED, msg);

    synth("badregion");
    off = record_offset(0, 1);
    patch("proc-4242/t0.evt", (long)off + 2, "\x7f", 1);
    snprintf(msg, sizeof msg, "proc-4242/t0.evt: offset %llu: region id 127 not defined in proc-4242/defs",
             (unsigned long long)off);
    expect_error(dir, 0, STROBE_ERR_FORMAT, msg);

    synth("underflow");
    replace_body("proc-4242/t0.evt", "\x81", 1);
    expect_error(dir, 0, STROBE_ERR_FORMAT, "proc-4242/t0.evt: offset 64: EXIT with no open region");
    synth("samefirst");
    replace_body("proc-4242/t0.evt", "\xc1", 1);
    expect_error(dir, 0, STROBE_ERR_FORMAT, "proc-4242/t0.evt: offset 64: ENTER_SAME with no earlier ENTER");
    synth("overlong");
    replace_body("proc-4242/t0.evt", "\x41\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
    expect_error(dir, 0, STROBE_ERR_FORMAT,
                 "proc-4242/t0.evt: offset 65: ENTER record has an integer longer than 64 bits");
    synth("padding");
    replace_body("proc-4242/t0.evt", "\x41\x01\x00\x05", 4);
    expect_error(dir, 0, STROBE_ERR_FORMAT, "proc-4242/t0.evt: offset 67: non-zero byte in chunk padding");
    synth("extpast");
    /* THREAD_END claiming 9 payload bytes at the end of the file */
    replace_body("proc-4242/t0.evt", "\x02\x00\x09\x01", 4);
    expect_error(dir, 0, STROBE_ERR_TRUNCATED,
                 "proc-4242/t0.evt: offset 64: THREAD_END record of 9 bytes runs past the end of the file");
}

/* ---- transactional memory: COUNTS records, monitoring level ------------ */

static const char *synth_tm(const char *name, const char *extra_meta, int events)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir(name));
    CHECK_EQ_INT(make_tm_experiment(dir, extra_meta, events), 0);
    return dir;
}

static struct strobe_tm_model *tm_model_of(const struct strobe_experiment *exp)
{
    struct strobe_profile *p;
    struct strobe_tm_model *m;
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_AUTO, &p, &eb), 0);
    if (strobe_tm_model_build(exp, p, &m, &eb) != 0)
        STROBE_FAIL("tm model: %s", eb.msg);
    strobe_profile_free(p);
    return m;
}

static void check_cell(const struct strobe_tm_cell *c, uint64_t transactions, uint64_t rollbacks,
                       uint64_t cancels, const uint64_t ser[STROBE_TM_NSERIAL],
                       const uint64_t aborts[STROBE_TM_NCAUSES])
{
    CHECK_EQ_U64(c->transactions, transactions);
    CHECK_EQ_U64(c->rollbacks, rollbacks);
    CHECK_EQ_U64(c->cancels, cancels);
    for (int k = 0; k < STROBE_TM_NSERIAL; k++)
        CHECK_EQ_U64(c->serialized[k], ser[k]);
    for (int k = 0; k < STROBE_TM_NCAUSES; k++)
        CHECK_EQ_U64(c->aborts[k], aborts[k]);
}

/* Level counters: the COUNTS records are the counts; a site without a
 * REGION becomes an atomic block of its own; the iterator skips them. */
STROBE_TEST(tm_counts_records)
{
    struct strobe_experiment *exp = open_ok(synth_tm("tmcounts", "tm: 1\ntm_monitor: counters\n", 0));
    CHECK(exp->tm);
    CHECK_EQ_INT(exp->tm_level, STROBE_TM_MONITOR_COUNTERS);
    CHECK(!exp->tm_level_inferred);
    CHECK(!exp->tm_logging);
    CHECK_EQ_INT(exp->ntm_counts, 2);
    CHECK_EQ_INT(exp->nregions, 2);
    CHECK_STR_EQ(exp->regions[0].name, "atomic@0x1000");
    CHECK_STR_EQ(exp->regions[1].name, "atomic@0x2000");
    CHECK_EQ_INT(exp->regions[1].kind, STROBE_REGION_TM_ATOMIC);
    CHECK_EQ_U64(exp->regions[1].address, 0x2000);
    CHECK_EQ_INT(exp->tm_counts[0].thread, 0);
    CHECK_EQ_INT(exp->tm_counts[0].block, 0);
    CHECK_EQ_INT(exp->tm_counts[1].thread, 1);
    CHECK_EQ_INT(exp->tm_counts[1].block, 1);
    /* records in the stream: 10 in t0 (two COUNTS among them) */
    CHECK_EQ_U64(exp->threads[0].events, 10);

    /* the iterator gives the other 8 */
    struct strobe_stream_iter *it;
    struct strobe_errbuf eb;
    struct strobe_event ev;
    static const int want[] = {STROBE_EVENT_THREAD_BEGIN, STROBE_EVENT_ENTER,     STROBE_EVENT_EXIT,
                               STROBE_EVENT_ENTER,        STROBE_EVENT_EXIT,      STROBE_EVENT_THREAD_CREATE,
                               STROBE_EVENT_THREAD_JOIN,  STROBE_EVENT_THREAD_END};
    CHECK_EQ_INT(strobe_stream_open(exp, 0, &it, &eb), 0);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK_EQ_INT(strobe_stream_next(it, &ev, &eb), 1);
        CHECK_EQ_INT(ev.type, want[i]);
    }
    CHECK_EQ_INT(strobe_stream_next(it, &ev, &eb), 0);
    strobe_stream_close(it);

    struct strobe_tm_model *m = tm_model_of(exp);
    CHECK_EQ_INT(m->nblocks, 2);
    CHECK(m->has_counts && m->has_aborts && !m->has_events);
    /* COUNTS, not the block's two visits in the profile */
    check_cell(&m->cells[0 * 2 + 0], 753000, 10, 0, (uint64_t[]){0, 1, 0}, (uint64_t[]){6, 4, 0, 0, 0, 0, 0, 0});
    check_cell(&m->cells[0 * 2 + 1], 0, 0, 0, (uint64_t[]){0, 0, 0}, (uint64_t[]){0, 0, 0, 0, 0, 0, 0, 0});
    /* causes 9 and 10 are unknown to this reader: dropped */
    check_cell(&m->cells[1 * 2 + 1], 5, 5, 1, (uint64_t[]){0, 0, 0}, (uint64_t[]){1, 2, 1, 1, 0, 0, 9, 9});
    CHECK_EQ_U64(m->cells[0].committed_ns, 0);
    strobe_tm_model_free(m);
    strobe_experiment_close(exp);
}

/* An experiment without the meta keys, with LOGGING and COUNTS: level
 * events inferred; abort causes from COUNTS only (the ABORT record is not
 * added to them), times and culprits from the event log. */
STROBE_TEST(tm_counts_with_events)
{
    struct strobe_experiment *exp = open_ok(synth_tm("tmcountsev", "", 1));
    CHECK(exp->tm);
    CHECK(exp->tm_level_inferred);
    CHECK(exp->tm_logging);
    CHECK_EQ_INT(exp->tm_level, STROBE_TM_MONITOR_EVENTS);
    struct strobe_tm_model *m = tm_model_of(exp);
    CHECK(m->has_counts && m->has_events);
    check_cell(&m->cells[0], 753000, 10, 0, (uint64_t[]){0, 1, 0}, (uint64_t[]){6, 4, 0, 0, 0, 0, 0, 0});
    CHECK_EQ_U64(m->cells[0].committed_ns, 140);
    CHECK_EQ_U64(m->cells[0].aborted_ns, 50);
    CHECK_EQ_U64(m->cells[0].cancelled_ns, 0);
    CHECK_EQ_U64(m->states[0 * STROBE_TM_STATE_COUNT + STROBE_TM_STATE_ABORT], 10);
    CHECK_EQ_U64(m->aborted_by[2 * 2 + 0], 1); /* culprit unknown, victim t0 */
    strobe_tm_model_free(m);
    strobe_experiment_close(exp);
}

/* The level from meta, or what the records show; never a TM experiment
 * without either. */
STROBE_TEST(tm_level_meta_and_inferred)
{
    static const struct {
        const char *meta;
        bool tm, inferred;
        int level;
    } cases[] = {
        {"", false, true, STROBE_TM_MONITOR_OFF},
        {"tm: 0\n", false, true, STROBE_TM_MONITOR_OFF},
        {"tm: 1\ntm_monitor: off\n", true, false, STROBE_TM_MONITOR_OFF},
        {"tm: 1\ntm_monitor: stats\n", true, false, STROBE_TM_MONITOR_STATS},
        {"tm: 1\ntm_monitor: events\n", true, false, STROBE_TM_MONITOR_EVENTS},
        {"tm: 1\ntm_monitor: someday\n", true, true, STROBE_TM_MONITOR_OFF},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "tmlevel%zu", i);
        synth(name);
        FILE *f = fopen(path_of("meta"), "a");
        CHECK(f != NULL);
        fputs(cases[i].meta, f);
        fclose(f);
        struct strobe_experiment *exp = open_ok(dir);
        CHECK_EQ_INT(exp->tm, cases[i].tm);
        CHECK_EQ_INT(exp->tm_level_inferred, cases[i].inferred);
        CHECK_EQ_INT(exp->tm_level, cases[i].level);
        struct strobe_tm_model *m = tm_model_of(exp);
        CHECK_EQ_INT(m->nblocks, 0);
        strobe_tm_model_free(m);
        strobe_experiment_close(exp);
    }
    /* old experiments: a stats-level run is known by its atomic blocks */
    struct strobe_experiment *exp = open_ok(synth_tm("tmlevelold", "", 0));
    CHECK(exp->tm && exp->tm_level_inferred);
    CHECK_EQ_INT(exp->tm_level, STROBE_TM_MONITOR_STATS);
    strobe_experiment_close(exp);
}

STROBE_TEST(corrupt_tm_counts)
{
    /* TM record of 10 bytes: COUNTS t0, site 0x10, 1 2 0 0 0 0, then 65 causes */
    static const uint8_t too_many[] = {0x08, 0x00, 0x0a, 0x07, 0x00, 0x10, 1, 2, 0, 0, 0, 0, 0x41};
    synth_tm("tmcauses", "", 0);
    replace_body("proc-4343/t0.evt", too_many, sizeof too_many);
    expect_error(dir, 0, STROBE_ERR_FORMAT,
                 "proc-4343/t0.evt: offset 64: TM COUNTS record: 65 abort causes (at most 64)");
    /* 3 causes announced, 2 present */
    static const uint8_t short_causes[] = {0x08, 0x00, 0x0c, 0x07, 0x00, 0x10, 1, 2, 0, 0, 0, 0, 3, 1, 1};
    synth_tm("tmshort", "", 0);
    replace_body("proc-4343/t0.evt", short_causes, sizeof short_causes);
    expect_error(dir, 0, STROBE_ERR_TRUNCATED, "proc-4343/t0.evt: offset 79: TM COUNTS record truncated");
    /* thread t7 left no file */
    static const uint8_t no_thread[] = {0x08, 0x00, 0x0b, 0x07, 0x07, 0x10, 1, 2, 0, 0, 0, 0, 1, 1};
    synth_tm("tmthread", "", 0);
    replace_body("proc-4343/t0.evt", no_thread, sizeof no_thread);
    expect_error(
        dir, 0, STROBE_ERR_FORMAT,
        "proc-4343/t0.evt: offset 64: TM COUNTS record names thread t7, which has no file in proc-4343");
    /* a thread index beyond 32 bits */
    static const uint8_t huge_thread[] = {0x08, 0x00, 0x0e, 0x07, 0x80, 0x80, 0x80, 0x80, 0x10,
                                          0x10, 1,    2,    0,    0,    0,    0,    0};
    synth_tm("tmhuge", "", 0);
    replace_body("proc-4343/t0.evt", huge_thread, sizeof huge_thread);
    expect_error(dir, 0, STROBE_ERR_FORMAT,
                 "proc-4343/t0.evt: offset 64: TM COUNTS record: thread index 4294967296 out of range");
    /* the LOGGING argument is the level: 1..3 */
    static const uint8_t bad_logging[] = {0x08, 0x00, 0x02, 0x06, 0x04};
    synth_tm("tmlogging", "", 0);
    replace_body("proc-4343/t0.evt", bad_logging, sizeof bad_logging);
    expect_error(dir, 0, STROBE_ERR_FORMAT,
                 "proc-4343/t0.evt: offset 64: TM event 6: argument 4 out of range");
}

STROBE_TEST(corrupt_defs_meta_profiles)
{
    synth("nodefs");
    CHECK_EQ_INT(unlink(path_of("proc-4242/defs")), 0);
    expect_error(dir, 0, -ENOENT, "proc-4242/defs: No such file or directory");
    synth("noprocess");
    replace_body("proc-4242/defs", "", 0);
    expect_error(dir, 0, STROBE_ERR_FORMAT, "proc-4242/defs: no PROCESS record");
    synth("badmeta");
    int fd = open(path_of("meta"), O_WRONLY | O_APPEND);
    CHECK(fd >= 0);
    CHECK_EQ_INT(write(fd, "bogus line\n", 11), 11);
    close(fd);
    char msg[4400];
    snprintf(msg, sizeof msg, "%s/meta:4: expected 'key: value'", dir);
    expect_error(dir, 0, STROBE_ERR_FORMAT, msg);
    synth("badparent");
    write_prof("proc-4242/t0.prof", 0, 5, 2);
    write_prof("proc-4242/t1.prof", 1, 0, 2);
    expect_error(dir, STROBE_PROFILE_FILES, STROBE_ERR_FORMAT, "proc-4242/t0.prof: offset 128: slot 1 has invalid parent 5");
    synth("slotcount");
    write_prof("proc-4242/t0.prof", 0, 0, 9);
    write_prof("proc-4242/t1.prof", 1, 0, 2);
    expect_error(dir, STROBE_PROFILE_FILES, STROBE_ERR_TRUNCATED,
                 "proc-4242/t0.prof: offset 24: slot count 9 does not fit the file's 192 bytes");
    synth("notadir");
    expect_error("/nonexistent/strobe-exp", 0, -ENOENT, "/nonexistent/strobe-exp: No such file or directory");
}

static long append(const char *rel, const void *bytes, size_t n)
{
    int fd = open(path_of(rel), O_WRONLY | O_APPEND);
    CHECK(fd >= 0);
    long at = (long)lseek(fd, 0, SEEK_END);
    CHECK_EQ_INT(write(fd, bytes, n), (long)n);
    close(fd);
    return at;
}

/* MPI_RANK (format.h): the model's rank and world size; one record at
 * most, rank below the size. */
STROBE_TEST(mpi_rank_record)
{
    static const uint8_t rank3of4[] = {STROBE_DEF_MPI_RANK, 11, 3, 4, 8, 'P', 'M', 'I', '_', 'R', 'A', 'N', 'K'};
    static const uint8_t rank4of4[] = {STROBE_DEF_MPI_RANK, 11, 4, 4, 8, 'P', 'M', 'I', '_', 'R', 'A', 'N', 'K'};
    synth("mpi_rank_record");
    struct strobe_experiment *exp = open_ok(dir);
    CHECK(!exp->processes[0].has_rank);
    strobe_experiment_close(exp);
    append("proc-4242/defs", rank3of4, sizeof rank3of4);
    exp = open_ok(dir);
    CHECK(exp->processes[0].has_rank);
    CHECK_EQ_INT(exp->processes[0].rank, 3);
    CHECK_EQ_INT(exp->processes[0].world_size, 4);
    strobe_experiment_close(exp);
    char msg[128];
    snprintf(msg, sizeof msg, "proc-4242/defs: offset %ld: second MPI_RANK record",
             append("proc-4242/defs", rank3of4, sizeof rank3of4));
    expect_error(dir, 0, STROBE_ERR_FORMAT, msg);
    synth("mpi_rank_range");
    snprintf(msg, sizeof msg, "proc-4242/defs: offset %ld: MPI rank 4 out of range (world size 4)",
             append("proc-4242/defs", rank4of4, sizeof rank4of4));
    expect_error(dir, 0, STROBE_ERR_FORMAT, msg);
}

/* RECORDING records (format.h) into the model, in ns; stop and resume
 * must alternate in time order, each malformed record is one exact line. */
STROBE_TEST(recording_records)
{
    static const uint8_t stop[] = {STROBE_DEF_RECORDING, 3, 100, STROBE_RECORDING_STOP, STROBE_RECORDING_API};
    static const uint8_t resume[] = {STROBE_DEF_RECORDING, 3, 120, STROBE_RECORDING_RESUME, STROBE_RECORDING_TIMER};
    static const uint8_t early[] = {STROBE_DEF_RECORDING, 3, 110, STROBE_RECORDING_STOP, STROBE_RECORDING_SIGNAL};
    static const uint8_t cause9[] = {STROBE_DEF_RECORDING, 3, 125, STROBE_RECORDING_STOP, 9};
    synth("recording_records");
    struct strobe_experiment *exp = open_ok(dir);
    CHECK_EQ_INT(exp->processes[0].nrecording, 0);
    strobe_experiment_close(exp);
    append("proc-4242/defs", stop, sizeof stop);
    append("proc-4242/defs", resume, sizeof resume);
    exp = open_ok(dir);
    const struct strobe_process_info *pi = &exp->processes[0];
    CHECK_EQ_INT(pi->nrecording, 2);
    CHECK(!pi->recording[0].resume && pi->recording[1].resume);
    CHECK_EQ_INT(pi->recording[0].cause, STROBE_RECORDING_API);
    CHECK_EQ_INT(pi->recording[1].cause, STROBE_RECORDING_TIMER);
    CHECK_EQ_U64(pi->recording[1].ns - pi->recording[0].ns,
                 strobe_ticks_to_ns(exp, 0, 120) - strobe_ticks_to_ns(exp, 0, 100));
    strobe_experiment_close(exp);
    char msg[160];
    snprintf(msg, sizeof msg, "proc-4242/defs: offset %ld: RECORDING record earlier than the one before",
             append("proc-4242/defs", early, sizeof early));
    expect_error(dir, 0, STROBE_ERR_FORMAT, msg);
    synth("recording_resume_first");
    snprintf(msg, sizeof msg, "proc-4242/defs: offset %ld: RECORDING record: resume while recording",
             append("proc-4242/defs", resume, sizeof resume));
    expect_error(dir, 0, STROBE_ERR_FORMAT, msg);
    synth("recording_cause");
    snprintf(msg, sizeof msg, "proc-4242/defs: offset %ld: RECORDING record: what 0, cause 9 out of range",
             append("proc-4242/defs", cause9, sizeof cause9));
    expect_error(dir, 0, STROBE_ERR_FORMAT, msg);
}

/* MALLOC records (format.h) into the model; the leak of an unknown path
 * lands on the thread root; each malformed record is one exact line. */
STROBE_TEST(malloc_records)
{
    static const uint8_t config[] = {STROBE_DEF_MALLOC, 2, STROBE_MALLOC_CONFIG, 64};
    static const uint8_t summary[] = {STROBE_DEF_MALLOC, 6, STROBE_MALLOC_SUMMARY, 100, 0, 10, 1, 0};
    static const uint8_t live[] = {STROBE_DEF_MALLOC, 5, STROBE_MALLOC_LIVE, 0, 0, 1, 10};
    static const uint8_t live_t9[] = {STROBE_DEF_MALLOC, 5, STROBE_MALLOC_LIVE, 9, 0, 1, 10};
    synth("malloc_records");
    struct strobe_experiment *exp = open_ok(dir);
    CHECK(!exp->processes[0].malloc.on);
    struct strobe_profile *p = NULL;
    struct strobe_malloc_model *m = NULL;
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_profile_build(exp, 0, &p, &eb), 0);
    CHECK_EQ_INT(strobe_malloc_model_build(exp, p, &m, &eb), -ENOENT);
    strobe_profile_free(p);
    strobe_experiment_close(exp);
    append("proc-4242/defs", config, sizeof config);
    append("proc-4242/defs", summary, sizeof summary);
    append("proc-4242/defs", live, sizeof live);
    append("proc-4242/defs", live, sizeof live); /* the same path again: one leak row */
    exp = open_ok(dir);
    const struct strobe_malloc_info *mi = &exp->processes[0].malloc;
    CHECK(mi->on && mi->summarized);
    CHECK_EQ_U64(mi->large, 64);
    CHECK_EQ_U64(mi->peak_bytes, 100);
    CHECK_EQ_U64(mi->live_bytes, 10);
    CHECK_EQ_U64(mi->live_blocks, 1);
    CHECK_EQ_INT(exp->nmalloc_live, 2);
    CHECK_EQ_INT(exp->malloc_live[0].slot, STROBE_NONE);
    CHECK_EQ_INT(strobe_profile_build(exp, 0, &p, &eb), 0);
    CHECK_EQ_INT(strobe_malloc_model_build(exp, p, &m, &eb), 0);
    CHECK_EQ_INT(m->nleaks, 1);
    CHECK_EQ_INT(m->leaks[0].node, 0);
    CHECK_EQ_U64(m->leaks[0].blocks, 2);
    CHECK_EQ_U64(m->leaks[0].bytes, 20);
    CHECK_EQ_U64(m->live_bytes, 20);
    strobe_malloc_model_free(m);
    strobe_profile_free(p);
    strobe_experiment_close(exp);

    char msg[160];
    snprintf(msg, sizeof msg, "proc-4242/defs: offset %ld: second MALLOC SUMMARY record",
             append("proc-4242/defs", summary, sizeof summary));
    expect_error(dir, 0, STROBE_ERR_FORMAT, msg);
    synth("malloc_live_first");
    snprintf(msg, sizeof msg, "proc-4242/defs: offset %ld: MALLOC LIVE record before the SUMMARY",
             append("proc-4242/defs", live, sizeof live));
    expect_error(dir, 0, STROBE_ERR_FORMAT, msg);
    synth("malloc_live_t9");
    append("proc-4242/defs", summary, sizeof summary);
    append("proc-4242/defs", live_t9, sizeof live_t9);
    expect_error(dir, 0, STROBE_ERR_FORMAT,
                 "proc-4242/defs: MALLOC LIVE record names thread t9, which has no t<N> file");
    static const uint8_t live_slot[] = {STROBE_DEF_MALLOC, 5, STROBE_MALLOC_LIVE, 0, 1, 1, 10};
    synth("malloc_live_slot");
    append("proc-4242/defs", summary, sizeof summary);
    append("proc-4242/defs", live_slot, sizeof live_slot);
    expect_error(dir, 0, STROBE_ERR_FORMAT,
                 "proc-4242/defs: MALLOC LIVE record names thread t0 and a profile slot, which has no t<N>.prof "
                 "file");
    /* an ALLOC event with an unknown operation */
    static const uint8_t bad_alloc[] = {STROBE_EXT_ALLOC, 0x00, 0x04, 0x03, 0x01, 0x10, 0x20};
    synth("malloc_bad_alloc");
    replace_body("proc-4242/t0.evt", bad_alloc, sizeof bad_alloc);
    expect_error(dir, STROBE_PROFILE_TRACE, STROBE_ERR_FORMAT,
                 "proc-4242/t0.evt: offset 64: ALLOC record: operation 3, call 1 unknown");
}

/* ---- real runs ---------------------------------------------------------- */

static struct strobe_experiment *run_with(const char *name, const char *options, const char *prog)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir(name));
    char *out;
    int rc = strobe_test_sh(&out, "%s/strobe run %s -o '%s' -- %s", STROBE_BIN_DIR, options, dir, prog);
    if (rc != 0)
        STROBE_FAIL("strobe run %s: exit %d\n%s", prog, rc, out);
    free(out);
    return open_ok(dir);
}

static struct strobe_experiment *run(const char *name, const char *prog)
{
    return run_with(name, "", prog);
}

static const char *basename_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The regions of analysis_symprog (built by gcc, or by clang) */
static void check_symprog(const char *name, const char *prog)
{
    struct strobe_experiment *exp = run(name, prog);
    const struct strobe_region_def *r = &exp->regions[region_id(exp, "main")];
    CHECK_STR_EQ(basename_of(r->file), "symprog.c");
    CHECK_EQ_INT(r->line, 19);
    CHECK_STR_EQ(basename_of(r->module), basename_of(prog));
    r = &exp->regions[region_id(exp, "local_sum")];
    CHECK_STR_EQ(basename_of(r->file), "symprog.c");
    CHECK_EQ_INT(r->line, 10);
    r = &exp->regions[region_id(exp, "symlib_square")];
    CHECK_STR_EQ(basename_of(r->file), "symlib.c");
    CHECK_EQ_INT(r->line, 7);
    CHECK_STR_EQ(basename_of(r->module), "libanalysis_symlib.so");
    struct strobe_profile *p;
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_TRACE, &p, &eb), 0);
    CHECK_EQ_U64(must_node(exp, p, "main/local_sum/symlib_square")->total.visits, 4);
    strobe_profile_free(p);
    strobe_experiment_close(exp);
}

STROBE_TEST(real_symbols_pie_and_shared_library)
{
    check_symprog("symbols", STROBE_TEST_BIN_DIR "/analysis_symprog");
}

/* clang 14's DWARF 5 has no .debug_aranges and no declaration file that
 * libdw 0.188 finds: before, its functions had no file and no line */
STROBE_TEST(real_symbols_clang)
{
    check_symprog("symbols_clang", STROBE_TEST_BIN_DIR "/analysis_symprog_clang");
}

/* Every node of A exists in B at the same path with the same visits. */
static void same_tree(const struct strobe_experiment *exp, const struct strobe_profile *a,
                      const struct strobe_profile *b, uint32_t na, uint32_t nb)
{
    for (uint32_t c = a->nodes[na].first_child; c != STROBE_NONE; c = a->nodes[c].next_sibling) {
        uint32_t d = b->nodes[nb].first_child;
        while (d != STROBE_NONE && b->nodes[d].region != a->nodes[c].region)
            d = b->nodes[d].next_sibling;
        if (d == STROBE_NONE)
            STROBE_FAIL("%s missing from one profile", exp->regions[a->nodes[c].region].name);
        for (size_t t = 0; t < exp->nthreads; t++) {
            const struct strobe_stats *x = &a->nodes[c].per_thread[t], *y = &b->nodes[d].per_thread[t];
            CHECK_EQ_U64(x->visits, y->visits);
            CHECK_EQ_U64(x->open_at_end, y->open_at_end);
            /* within 1 %, plus the rounding of ticks to ns (1 ns a visit) */
            uint64_t hi = x->incl_ns > y->incl_ns ? x->incl_ns : y->incl_ns;
            uint64_t diff = hi - (x->incl_ns < y->incl_ns ? x->incl_ns : y->incl_ns);
            if (diff > hi / 100 + x->visits)
                STROBE_FAIL("%s, thread %zu: incl %llu ns in one profile, %llu ns in the other",
                            exp->regions[a->nodes[c].region].name, t, (unsigned long long)x->incl_ns,
                            (unsigned long long)y->incl_ns);
        }
        same_tree(exp, a, b, c, d);
    }
}

/* Runs analysis_end_prog HOW (exit status `status`) and builds both
 * profiles, which must agree (same_tree). */
static struct strobe_experiment *run_end_prog(const char *how, int status, struct strobe_profile **pf,
                                              struct strobe_profile **pt)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir(how));
    char *out;
    int rc = strobe_test_sh(&out, "TSAN_OPTIONS=report_thread_leaks=0 %s/strobe run -o '%s' -- %s/analysis_end_prog %s",
                            STROBE_BIN_DIR, dir, STROBE_TEST_BIN_DIR, how);
    if (rc != status)
        STROBE_FAIL("strobe run analysis_end_prog %s: exit %d, expected %d\n%s", how, rc, status, out);
    free(out);
    struct strobe_experiment *exp = open_ok(dir);
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_FILES, pf, &eb), 0);
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_TRACE, pt, &eb), 0);
    return exp;
}

STROBE_TEST(real_exit_closes_open_frames)
{
    /* exit() under main > work > finish: the three frames end with the
     * process, in both sources, after the 20 ms finish spins */
    struct strobe_profile *pf, *pt;
    struct strobe_experiment *exp = run_end_prog("exit", 0, &pf, &pt);
    CHECK(exp->threads[0].summarized);
    CHECK_EQ_INT(exp->threads[0].nopen, 3);
    same_tree(exp, pf, pt, 0, 0);
    same_tree(exp, pt, pf, 0, 0);
    CHECK(!pf->incomplete);
    static const char *const paths[] = {"main", "main/work", "main/work/finish"};
    for (int i = 0; i < 3; i++) {
        const struct strobe_cnode *n = must_node(exp, pf, paths[i]);
        CHECK_EQ_U64(n->total.visits, 1);
        CHECK_EQ_U64(n->total.open_at_end, 1);
        /* 1 % below for the tick-to-ns line through the run's clock sync
         * points; the failures that margin was once widened for came from
         * the fixture, whose spin ended up to 1 ms early when it crossed
         * a second (end_prog.c) */
        if (n->total.incl_ns < 19800000)
            STROBE_FAIL("%s: incl %" PRIu64 " ns < 19.8 ms", paths[i], n->total.incl_ns);
    }
    struct strobe_profile *pa;
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_AUTO, &pa, &eb), 0);
    CHECK_EQ_INT(pa->source, STROBE_PROFILE_FILES); /* complete: no stream is decoded */
    strobe_profile_free(pa);
    strobe_profile_free(pf);
    strobe_profile_free(pt);
    strobe_experiment_close(exp);
}

STROBE_TEST(real_worker_open_at_exit)
{
    /* a thread still inside loop() when main returns: loop's frame ends
     * with the process; tick's 1000 visits are complete */
    struct strobe_profile *pf, *pt;
    struct strobe_experiment *exp = run_end_prog("worker", 0, &pf, &pt);
    CHECK_EQ_INT(exp->nthreads, 2);
    CHECK(exp->threads[1].at_exit);
    CHECK(!exp->threads[1].ended);
    CHECK(exp->threads[1].has_rusage); /* read from /proc at exit */
    same_tree(exp, pf, pt, 0, 0);
    same_tree(exp, pt, pf, 0, 0);
    const struct strobe_cnode *loop = must_node(exp, pf, "loop");
    CHECK_EQ_U64(loop->total.visits, 1);
    CHECK_EQ_U64(loop->total.open_at_end, 1);
    CHECK(loop->total.incl_ns >= 20000000); /* main spun 20 ms after the ticks */
    CHECK_EQ_U64(must_node(exp, pf, "loop/tick")->total.visits, 1000);
    CHECK_EQ_U64(must_node(exp, pf, "loop/tick")->total.open_at_end, 0);
    CHECK_EQ_U64(must_node(exp, pf, "main")->total.open_at_end, 0);
    strobe_profile_free(pf);
    strobe_profile_free(pt);
    strobe_experiment_close(exp);
}

/* Visits of PATH summed over the threads of process P. */
static uint64_t process_visits(const struct strobe_experiment *exp, const struct strobe_profile *p, uint32_t proc,
                               const char *path)
{
    const struct strobe_cnode *n = node_at(exp, p, path);
    uint64_t v = 0;
    for (size_t t = 0; n && t < exp->nthreads; t++)
        if (exp->threads[t].process == proc)
            v += n->per_thread[t].visits;
    return v;
}

STROBE_TEST(real_children_are_processes)
{
    /* posix_spawn, fork + exec, fork, and vfork + exec: each child is a
     * process of the experiment with its own calls only; a fork child
     * starts empty */
    struct strobe_experiment *exp = run("spawn", STROBE_TEST_BIN_DIR "/analysis_spawn_prog");
    struct strobe_profile *p;
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_AUTO, &p, &eb), 0);
    /* parent, spawned child, fork image before its exec, exec'ed child,
     * fork child, vfork image before its exec, its exec'ed child */
    CHECK_EQ_INT(exp->nprocesses, 7);
    uint32_t parent = STROBE_NONE;
    for (uint32_t i = 0; i < exp->nprocesses; i++)
        if (process_visits(exp, p, i, "main/launch") == 1)
            parent = i;
    CHECK(parent != STROBE_NONE);
    int children = 0, forked = 0, images = 0, vforked = 0;
    for (uint32_t i = 0; i < exp->nprocesses; i++) {
        const struct strobe_process_info *pi = &exp->processes[i];
        if (i == parent)
            continue;
        CHECK_EQ_U64(process_visits(exp, p, i, "main/launch"), 0);
        if (process_visits(exp, p, i, "main/leaf") == 3) { /* spawned or exec'ed */
            CHECK_EQ_U64(pi->ppid, exp->processes[parent].pid);
            CHECK_EQ_U64(process_visits(exp, p, i, "main"), 1);
            children++;
        } else if (process_visits(exp, p, i, "exec_child/leaf") == 1) { /* the vfork child before its exec */
            CHECK_EQ_INT(pi->parent, parent);
            CHECK_EQ_U64(process_visits(exp, p, i, "exec_child"), 1);
            vforked++;
        } else if (process_visits(exp, p, i, "leaf") == 5) { /* the fork child: no inherited frames */
            CHECK_EQ_INT(pi->parent, parent);
            CHECK_EQ_U64(process_visits(exp, p, i, "main"), 0);
            forked++;
        } else { /* the fork child that exec'ed: nothing measured before the exec */
            CHECK_EQ_INT(pi->parent, parent);
            images++;
        }
    }
    CHECK_EQ_INT(children, 3);
    CHECK_EQ_INT(forked, 1);
    CHECK_EQ_INT(images, 1);
    CHECK_EQ_INT(vforked, 1);
    /* nothing of the vfork child in the parent */
    CHECK_EQ_U64(process_visits(exp, p, parent, "main/launch/exec_child"), 0);
    CHECK_EQ_U64(process_visits(exp, p, parent, "main/launch/exec_child/leaf"), 0);
    CHECK_EQ_U64(process_visits(exp, p, parent, "main/launch/wait_ok"), 4);
    strobe_profile_free(p);
    strobe_experiment_close(exp);
}

STROBE_TEST(real_killed_uses_trace)
{
    /* SIGKILL: no summary; only the trace knows what was open, so the
     * automatic choice is the trace and the files say they lack it */
    struct strobe_profile *pf, *pt, *pa;
    struct strobe_errbuf eb;
    struct strobe_experiment *exp = run_end_prog("kill", 128 + SIGKILL, &pf, &pt);
    CHECK(!exp->threads[0].summarized);
    CHECK(pf->incomplete);
    CHECK_EQ_U64(must_node(exp, pf, "main/work/finish")->total.incl_ns, 0);
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_AUTO, &pa, &eb), 0);
    CHECK_EQ_INT(pa->source, STROBE_PROFILE_TRACE);
    const struct strobe_cnode *f = must_node(exp, pa, "main/work/finish");
    CHECK_EQ_U64(f->total.visits, 1);
    CHECK_EQ_U64(f->total.open_at_end, 1);
    /* a killed process has only its start-up clock points: ticks to ns
     * may be off by a few per cent */
    CHECK(f->total.incl_ns >= 19000000);
    strobe_profile_free(pa);
    strobe_profile_free(pf);
    strobe_profile_free(pt);
    strobe_experiment_close(exp);
}

STROBE_TEST(real_demo_profile_equals_trace)
{
    struct strobe_experiment *exp = run("demo", STROBE_BIN_DIR "/../examples/demo");
    CHECK_EQ_INT(exp->nthreads, 5);
    for (uint32_t t = 1; t < 5; t++)
        CHECK_EQ_INT(exp->threads[t].parent, 0);
    struct strobe_profile *pf, *pt;
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_FILES, &pf, &eb), 0);
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_TRACE, &pt, &eb), 0);
    CHECK_EQ_INT(pf->nnodes, pt->nnodes);
    same_tree(exp, pf, pt, 0, 0);
    same_tree(exp, pt, pf, 0, 0);
    /* examples/demo/demo.c documents these exact visits */
    CHECK_EQ_U64(must_node(exp, pf, "worker/integrate/sample")->total.visits, 25000);
    CHECK_EQ_U64(must_node(exp, pf, "main/setup/fib")->total.visits, 1);
    CHECK_EQ_U64(must_node(exp, pf, "main/start_workers")->total.visits, 1);
    uint64_t fib = 0;
    for (size_t i = 0; i < pf->nnodes; i++)
        if (pf->nodes[i].region == region_id(exp, "fib"))
            fib += pf->nodes[i].total.visits;
    CHECK_EQ_U64(fib, 177);
    for (uint32_t t = 1; t < 5; t++) {
        uint32_t k = 0; /* thread t samples 2500 * k for its creation rank k */
        const struct strobe_cnode *s = must_node(exp, pf, "worker/integrate/sample");
        k = (uint32_t)(s->per_thread[t].visits / 2500);
        CHECK(k >= 1 && k <= 4);
        CHECK_EQ_U64(s->per_thread[t].visits, 2500u * k);
    }
    strobe_profile_free(pf);
    strobe_profile_free(pt);
    strobe_experiment_close(exp);
}

/* ---- transactional memory ------------------------------------------------ */

/* Block index of the atomic block whose call is on LINE of tm_prog.c. */
static size_t tm_block(const struct strobe_experiment *exp, const struct strobe_tm_model *m, unsigned line)
{
    for (size_t b = 0; b < m->nblocks; b++) {
        const struct strobe_region_def *r = &exp->regions[m->blocks[b]];
        if (r->line == line && strcmp(basename_of(r->file), "tm_prog.c") == 0)
            return b;
    }
    STROBE_FAIL("no atomic block at tm_prog.c:%u", line);
}

/* Line of the first line of tm_prog.c containing `marker`. */
static unsigned tm_prog_line(const char *marker)
{
    FILE *f = fopen(STROBE_SOURCE_DIR "/tests/analysis/tm_prog.c", "r");
    CHECK(f != NULL);
    char buf[512];
    for (unsigned n = 1; fgets(buf, sizeof buf, f); n++)
        if (strstr(buf, marker)) {
            fclose(f);
            return n;
        }
    STROBE_FAIL("tm_prog.c has no line with %s", marker);
}

static void check_tm_counts(const struct strobe_experiment *exp, const struct strobe_tm_model *m)
{
    CHECK_EQ_INT(m->nblocks, 4);
    CHECK_EQ_INT(exp->nthreads, 3);
    size_t a = tm_block(exp, m, tm_prog_line("/* block A */")), b = tm_block(exp, m, tm_prog_line("/* block B */"));
    size_t c = tm_block(exp, m, tm_prog_line("/* block C */")), d = tm_block(exp, m, tm_prog_line("/* block D */"));
    CHECK_STR_EQ(exp->regions[m->blocks[a]].name, "atomic@main");
    CHECK_STR_EQ(exp->regions[m->blocks[c]].name, "atomic@culprit");
    struct strobe_tm_cell s;
    strobe_tm_block_total(m, a, &s);
    CHECK_EQ_U64(s.transactions, 1000);
    CHECK_EQ_U64(s.cancels, 10);
    CHECK_EQ_U64(s.rollbacks, 0);
    CHECK_EQ_U64(m->cells[a * 3 + 0].transactions, 1000);
    strobe_tm_block_total(m, b, &s);
    CHECK_EQ_U64(s.transactions, 1);
    CHECK_EQ_U64(s.serialized[STROBE_TM_SERIAL_IRREVOCABLE - 1], 1);
    CHECK_EQ_U64(s.rollbacks, 0);
    CHECK_EQ_U64(m->cells[c * 3 + 1].transactions, 2);
    CHECK_EQ_U64(m->cells[c * 3 + 1].rollbacks, 0);
    CHECK_EQ_U64(m->cells[d * 3 + 2].transactions, 1);
    CHECK_EQ_U64(m->cells[d * 3 + 2].rollbacks, 2);
    for (int k = 0; k < STROBE_TM_NSERIAL; k++)
        CHECK_EQ_U64(m->cells[d * 3 + 2].serialized[k], 0);
}

STROBE_TEST(real_tm_events)
{
    struct strobe_experiment *exp =
        run_with("tm", "--tm-monitor events", STROBE_TEST_BIN_DIR "/analysis_tm_prog");
    struct strobe_profile *p;
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_AUTO, &p, &eb), 0);
    struct strobe_tm_model *m;
    CHECK_EQ_INT(strobe_tm_model_build(exp, p, &m, &eb), 0);
    CHECK(m->has_events);
    check_tm_counts(exp, m);
    size_t d = tm_block(exp, m, tm_prog_line("/* block D */"));
    /* both rollbacks: validation failures caused by thread 1 */
    CHECK_EQ_U64(m->cells[d * 3 + 2].aborts[STROBE_TM_ABORT_VALIDATION - 1], 2);
    uint64_t total = 0;
    for (size_t i = 0; i < 4 * 3; i++)
        total += m->aborted_by[i];
    CHECK_EQ_U64(total, 2);
    CHECK_EQ_U64(m->aborted_by[1 * 3 + 2], 2);
    /* the victim's wasted time and the abort state are those two attempts */
    CHECK(m->states[2 * STROBE_TM_STATE_COUNT + STROBE_TM_STATE_WASTED] > 0);
    CHECK(m->cells[d * 3 + 2].aborted_ns == m->states[2 * STROBE_TM_STATE_COUNT + STROBE_TM_STATE_WASTED]);
    CHECK(m->states[2 * STROBE_TM_STATE_COUNT + STROBE_TM_STATE_ABORT] > 0);
    CHECK_EQ_U64(m->states[1 * STROBE_TM_STATE_COUNT + STROBE_TM_STATE_WASTED], 0);
    strobe_tm_model_free(m);
    strobe_profile_free(p);
    strobe_experiment_close(exp);
}

STROBE_TEST(real_tm_stats_level)
{
    struct strobe_experiment *exp =
        run_with("tmstats", "--tm-monitor stats", STROBE_TEST_BIN_DIR "/analysis_tm_prog");
    struct strobe_profile *p;
    struct strobe_errbuf eb;
    CHECK_EQ_INT(strobe_profile_build(exp, STROBE_PROFILE_AUTO, &p, &eb), 0);
    struct strobe_tm_model *m;
    CHECK_EQ_INT(strobe_tm_model_build(exp, p, &m, &eb), 0);
    CHECK(!m->has_events); /* counts only */
    check_tm_counts(exp, m);
    /* the profile has them per call path, as untimed visits with metrics:
     * block A (at the root: main is not instrumented) on thread 0 */
    size_t a = tm_block(exp, m, tm_prog_line("/* block A */"));
    uint32_t cancels = STROBE_NONE;
    for (size_t i = 0; i < exp->nmetrics; i++)
        if (strcmp(exp->metrics[i].name, "tm.cancels") == 0)
            cancels = (uint32_t)i;
    CHECK(cancels != STROBE_NONE);
    size_t found = 0;
    for (size_t i = 0; i < p->nnodes; i++) {
        const struct strobe_cnode *n = &p->nodes[i];
        if (n->region != m->blocks[a])
            continue;
        found++;
        CHECK_EQ_INT(n->depth, 1);
        CHECK_EQ_U64(n->total.visits, 1000);
        CHECK_EQ_U64(n->per_thread[0].visits, 1000);
        CHECK_EQ_U64(n->total.incl_ns, 0);
        CHECK_EQ_U64(n->total.min_ns, UINT64_MAX);
        CHECK(n->metrics != NULL);
        CHECK_EQ_U64(n->metrics[cancels].count, 10);
        CHECK_EQ_INT(n->metrics[cancels].sum, 10);
    }
    CHECK_EQ_INT(found, 1);
    strobe_tm_model_free(m);
    strobe_profile_free(p);
    strobe_experiment_close(exp);
}

/* Level counters: the blocks exist only through the COUNTS records, named
 * like the regions of the other levels; abort causes without an event log. */
STROBE_TEST(real_tm_counters_level)
{
    struct strobe_experiment *exp =
        run_with("tmcounters", "--tm-monitor counters", STROBE_TEST_BIN_DIR "/analysis_tm_prog");
    CHECK(exp->tm && !exp->tm_level_inferred);
    CHECK_EQ_INT(exp->tm_level, STROBE_TM_MONITOR_COUNTERS);
    struct strobe_tm_model *m = tm_model_of(exp);
    CHECK(m->has_counts && !m->has_events);
    check_tm_counts(exp, m);
    size_t d = tm_block(exp, m, tm_prog_line("/* block D */"));
    CHECK_EQ_U64(m->cells[d * 3 + 2].aborts[STROBE_TM_ABORT_VALIDATION - 1], 2);
    strobe_tm_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST_MAIN(STROBE_CASE(model_definitions_threads_counts), STROBE_CASE(recording_records), STROBE_CASE(iterator_exact_events),
                 STROBE_CASE(profile_from_trace_exact), STROBE_CASE(killed_thread_closed_at_process_end),
                 STROBE_CASE(zero_tail_is_end_of_data), STROBE_CASE(records_across_chunks),
                 STROBE_CASE(profile_files_exact), STROBE_CASE(corrupt_stream_header),
                 STROBE_CASE(corrupt_stream_records), STROBE_CASE(corrupt_defs_meta_profiles), STROBE_CASE(mpi_rank_record),
                 STROBE_CASE(malloc_records), STROBE_CASE(tm_counts_records), STROBE_CASE(tm_counts_with_events),
                 STROBE_CASE(tm_level_meta_and_inferred), STROBE_CASE(corrupt_tm_counts),
                 STROBE_CASE(real_symbols_pie_and_shared_library), STROBE_CASE(real_symbols_clang),
                 STROBE_CASE(real_demo_profile_equals_trace), STROBE_CASE(real_exit_closes_open_frames),
                 STROBE_CASE(real_worker_open_at_exit), STROBE_CASE(real_killed_uses_trace),
                 STROBE_CASE(real_children_are_processes), STROBE_CASE(real_tm_events),
                 STROBE_CASE(real_tm_stats_level), STROBE_CASE(real_tm_counters_level))
