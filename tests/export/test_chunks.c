/* SPDX-License-Identifier: MIT */
/*
 * Chunked traces: every chunk of an event stream decodes alone (CHUNK
 * records, docs/formats/trace.md), `strobe report/export --chunk` read
 * chunks alone, and `strobe export --chunk-size` splits Chrome and Perfetto
 * exports into parts that each load alone. The workload is chunks_prog.c
 * under `strobe run` with 4 KiB chunks: exact visit counts, a recursion 41
 * deep crossing most chunk boundaries.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/experiment.h"
#include "common/format.h"
#include "export/export.h"
#include "make_experiment.h"
#include "perfetto_decode.h"
#include "test.h"

#define CHECKS STROBE_SOURCE_DIR "/tests/export"
#define PROG STROBE_BIN_DIR "/../tests/export/export_chunks_prog"

/* chunks_prog.c's visits for N = 4000, D = 40 */
static const struct {
    const char *name;
    uint64_t visits;
} expected[] = {{"main", 1}, {"work", 1}, {"leaf", 4250}, {"recurse", 10250}};
#define NREGIONS (sizeof expected / sizeof expected[0])

/* Records `chunks_prog ARGS` in <case dir>/exp with 4 KiB chunks;
 * returns the experiment directory (static). */
static const char *record_args(const char *name, const char *args)
{
    static char exp[4200];
    snprintf(exp, sizeof exp, "%s/exp", strobe_test_tmpdir(name));
    char *out;
    if (strobe_test_sh(&out, "STROBE_CHUNK_SIZE=4096 %s/strobe run -o '%s' %s %s", STROBE_BIN_DIR, exp, PROG,
                       args) != 0)
        STROBE_FAIL("strobe run: %s", out);
    free(out);
    return exp;
}

static const char *record(const char *name)
{
    return record_args(name, "4000 40");
}

/* record(), with the case's scratch directory (the experiment is its
 * `exp`) into dir. */
static void record_dir(const char *name, char *dir, size_t size)
{
    snprintf(dir, size, "%.4000s/..", record(name));
}

static struct strobe_experiment *open_exp(const char *dir)
{
    struct strobe_experiment *exp;
    struct strobe_errbuf eb = {""};
    if (strobe_experiment_open(dir, &exp, NULL, NULL, &eb) != 0)
        STROBE_FAIL("strobe_experiment_open: %s", eb.msg);
    CHECK_EQ_INT(exp->nthreads, 1);
    return exp;
}

/* Visits per expected region of the profile of EXP built from SOURCE. */
static void visits(const struct strobe_experiment *exp, int source, uint64_t out[NREGIONS])
{
    struct strobe_profile *prof;
    struct strobe_errbuf eb = {""};
    if (strobe_profile_build(exp, source, &prof, &eb) != 0)
        STROBE_FAIL("strobe_profile_build: %s", eb.msg);
    memset(out, 0, NREGIONS * sizeof *out);
    for (size_t n = 1; n < prof->nnodes; n++)
        for (size_t r = 0; r < NREGIONS; r++)
            if (strcmp(exp->regions[prof->nodes[n].region].name, expected[r].name) == 0)
                out[r] += prof->nodes[n].total.visits;
    strobe_profile_free(prof);
}

static uint64_t nchunks(struct strobe_experiment *exp)
{
    uint64_t n;
    struct strobe_errbuf eb = {""};
    if (strobe_experiment_chunks(exp, 0, 0, &n, &eb) != 0)
        STROBE_FAIL("strobe_experiment_chunks: %s", eb.msg);
    return n;
}

static void select_chunks(struct strobe_experiment *exp, uint64_t first, uint64_t count)
{
    uint64_t n;
    struct strobe_errbuf eb = {""};
    if (strobe_experiment_chunks(exp, first, count, &n, &eb) != 0)
        STROBE_FAIL("strobe_experiment_chunks: %s", eb.msg);
}

/* The profile of each chunk read alone: per region, the visits summed
 * over the chunks are the whole run's (the profile files' and the exact
 * counts); a frame open at a chunk start is not visited again. */
STROBE_TEST(visits_per_chunk_sum)
{
    struct strobe_experiment *exp = open_exp(record("visits_per_chunk_sum"));
    uint64_t whole[NREGIONS], sum[NREGIONS] = {0}, one[NREGIONS];
    visits(exp, STROBE_PROFILE_FILES, whole);
    for (size_t r = 0; r < NREGIONS; r++)
        CHECK_EQ_U64(whole[r], expected[r].visits);
    uint64_t n = nchunks(exp);
    /* ~29000 events of ~1.6 bytes in 4 KiB chunks */
    CHECK(n >= 8);
    for (uint64_t c = 0; c < n; c++) {
        select_chunks(exp, c, 1);
        visits(exp, STROBE_PROFILE_TRACE, one);
        for (size_t r = 0; r < NREGIONS; r++)
            sum[r] += one[r];
    }
    for (size_t r = 0; r < NREGIONS; r++)
        CHECK_EQ_U64(sum[r], expected[r].visits);
    /* a range of chunks is the same as its chunks one by one */
    select_chunks(exp, 1, n - 1);
    visits(exp, STROBE_PROFILE_TRACE, one);
    select_chunks(exp, 0, 1);
    visits(exp, STROBE_PROFILE_TRACE, sum);
    for (size_t r = 0; r < NREGIONS; r++)
        CHECK_EQ_U64(one[r] + sum[r], expected[r].visits);
    strobe_experiment_close(exp);
}

struct frame {
    uint32_t region;
    uint64_t ns;
};

/* Chunk c read alone begins with synthetic ENTERs of exactly the frames
 * open at the end of chunk c - 1 (same regions, same entry times), and
 * its real events are the whole stream's between the two; chunks cut
 * into the recursion (frames of recurse open at their start). */
STROBE_TEST(chunk_alone_reopens_frames)
{
    struct strobe_experiment *exp = open_exp(record("chunk_alone_reopens_frames"));
    uint64_t n = nchunks(exp), real = 0, deep = 0;
    struct frame open[64], prev[64], next[64];
    size_t nprev = 0, nnext = 0;
    uint32_t recurse = STROBE_NONE;
    for (size_t r = 0; r < exp->nregions; r++)
        if (strcmp(exp->regions[r].name, "recurse") == 0)
            recurse = (uint32_t)r;
    CHECK(recurse != STROBE_NONE);
    struct strobe_errbuf eb = {""};
    for (uint64_t c = 0; c < n; c++) {
        select_chunks(exp, c, 1);
        struct strobe_stream_iter *it;
        if (strobe_stream_open(exp, 0, &it, &eb) != 0)
            STROBE_FAIL("strobe_stream_open: %s", eb.msg);
        struct strobe_event ev;
        size_t depth = 0, synthetic_enters = 0, recursing = 0;
        bool closing = false;
        int rc;
        while ((rc = strobe_stream_next(it, &ev, &eb)) == 1) {
            if (ev.synthetic && ev.type == STROBE_EVENT_ENTER) {
                CHECK(!closing && depth == synthetic_enters); /* only first */
                CHECK(synthetic_enters < nprev);
                CHECK_EQ_INT(ev.region, prev[synthetic_enters].region);
                CHECK_EQ_U64(ev.time_ns, prev[synthetic_enters].ns);
                synthetic_enters++;
                recursing += ev.region == recurse;
            } else if (ev.synthetic) {
                CHECK_EQ_INT(ev.type, STROBE_EVENT_EXIT);
                if (!closing) { /* the frames open at the chunk's end */
                    memcpy(next, open, depth * sizeof *open);
                    nnext = depth;
                    closing = true;
                }
            } else {
                CHECK(!closing);
                real++;
            }
            if (ev.type == STROBE_EVENT_ENTER) {
                CHECK(depth < 64);
                open[depth++] = (struct frame){ev.region, ev.time_ns};
            } else if (ev.type == STROBE_EVENT_EXIT) {
                CHECK(depth > 0 && open[depth - 1].region == ev.region);
                depth--;
            }
        }
        if (rc < 0)
            STROBE_FAIL("chunk %" PRIu64 ": %s", c, eb.msg);
        strobe_stream_close(it);
        CHECK_EQ_INT(depth, 0);
        if (c > 0)
            CHECK_EQ_INT(synthetic_enters, nprev); /* at least main and work */
        CHECK(c == 0 || synthetic_enters >= 2);
        deep += recursing >= 10;
        memcpy(prev, next, nnext * sizeof *next);
        nprev = closing ? nnext : 0;
    }
    /* the real events of the chunks are the stream's (THREAD_BEGIN/END included) */
    CHECK_EQ_U64(real, exp->threads[0].events);
    CHECK_EQ_U64(real, 2 * (1 + 1 + 4250 + 10250) + 2);
    /* 2/3 of the events are in a recursion: a boundary inside one is certain */
    CHECK(deep >= 1);
    strobe_experiment_close(exp);
}

/* The visits of STROBE_TEST_FLAT_PY's output, in expected[]'s order
 * (0 for a region not listed). */
static void flat_visits(const char *text, uint64_t out[NREGIONS])
{
    for (size_t r = 0; r < NREGIONS; r++) {
        char key[64];
        snprintf(key, sizeof key, "\n%s ", expected[r].name);
        char *full = malloc(strlen(text) + 2);
        sprintf(full, "\n%s", text);
        const char *at = strstr(full, key);
        out[r] = at ? strtoull(at + strlen(key), NULL, 10) : 0;
        free(full);
    }
}

/* A stack too deep for its CHUNK record (300 frames: a 4 KiB chunk lists
 * about 100) does not end tracing: the trace has every visit, nothing is
 * dropped; the chunks that begin that deep say in one line that they
 * cannot be read alone, the others can. */
STROBE_TEST(deep_stack_keeps_tracing)
{
    const char *dir = record_args("deep_stack_keeps_tracing", "4000 300");
    struct strobe_experiment *exp = open_exp(dir);
    const uint64_t deep[NREGIONS] = {1, 1, 4250, 250 * 301};
    uint64_t got[NREGIONS];
    visits(exp, STROBE_PROFILE_TRACE, got);
    for (size_t r = 0; r < NREGIONS; r++)
        CHECK_EQ_U64(got[r], deep[r]);
    CHECK_EQ_U64(exp->threads[0].dropped, 0);
    uint64_t n = nchunks(exp), alone = 0, unlisted = 0, first_unlisted = 0;
    for (uint64_t c = 0; c < n; c++) {
        struct strobe_profile *prof;
        struct strobe_errbuf eb = {""};
        select_chunks(exp, c, 1);
        if (strobe_profile_build(exp, STROBE_PROFILE_TRACE, &prof, &eb) == 0) {
            strobe_profile_free(prof);
            alone++;
            continue;
        }
        char want[128];
        snprintf(want, sizeof want, ": chunk %" PRIu64 " cannot be read alone: its ", c);
        CHECK_CONTAINS(eb.msg, want);
        CHECK_CONTAINS(eb.msg,
                       " open frames were too deep to list in its CHUNK record; read it with the chunks "
                       "before it");
        if (!unlisted++)
            first_unlisted = c;
    }
    strobe_experiment_close(exp);
    CHECK(alone >= 2);
    CHECK(unlisted >= 2);
    char *out;
    CHECK_EQ_INT(
        strobe_test_sh(&out, "%s/strobe report '%s' --chunk %" PRIu64, STROBE_BIN_DIR, dir, first_unlisted),
        1);
    CHECK_CONTAINS(out, "cannot be read alone");
    CHECK(strchr(out, '\n') == strrchr(out, '\n'));
    free(out);
}

/* `strobe report --chunk`: the profile of the chunks alone, equal to the
 * reader's; one-line errors for bad values and combinations. */
STROBE_TEST(report_chunk_cli)
{
    const char *dir = record("report_chunk_cli");
    struct strobe_experiment *exp = open_exp(dir);
    uint64_t n = nchunks(exp), api[NREGIONS], cli[NREGIONS], sum[NREGIONS] = {0};
    char *out;
    for (uint64_t c = 0; c < n; c++) {
        CHECK_EQ_INT(strobe_test_sh(&out,
                                    "%s/strobe report '%s' --chunk %" PRIu64
                                    " --format json | " STROBE_TEST_FLAT_PY,
                                    STROBE_BIN_DIR, dir, c),
                     0);
        flat_visits(out, cli);
        free(out);
        select_chunks(exp, c, 1);
        visits(exp, STROBE_PROFILE_TRACE, api);
        for (size_t r = 0; r < NREGIONS; r++) {
            CHECK_EQ_U64(cli[r], api[r]);
            sum[r] += cli[r];
        }
    }
    for (size_t r = 0; r < NREGIONS; r++)
        CHECK_EQ_U64(sum[r], expected[r].visits);
    /* a range: all chunks, as the whole run */
    CHECK_EQ_INT(strobe_test_sh(
                     &out, "%s/strobe report '%s' --chunk 0-%" PRIu64 " --format json | " STROBE_TEST_FLAT_PY,
                     STROBE_BIN_DIR, dir, n - 1),
                 0);
    flat_visits(out, cli);
    free(out);
    for (size_t r = 0; r < NREGIONS; r++)
        CHECK_EQ_U64(cli[r], expected[r].visits);
    strobe_experiment_close(exp);

    static const struct {
        const char *args;
        int status;
        const char *line;
    } bad[] = {
        {"--chunk 99", 2, "strobe: report: --chunk 99: the longest stream of %s has %" PRIu64 " chunks"},
        {"--chunk x", 2, "strobe: report: --chunk: 'x' is not a chunk number or range (3 or 2-5)"},
        {"--chunk 1,3", 2, "strobe: report: --chunk: '1,3' is not a chunk number or range (3 or 2-5)"},
        {"--chunk 1 --source profile", 2,
         "strobe: report: --chunk builds the profile from the trace: not with --source profile"},
        {"--chunk 1 --locks", 2, "strobe: report: '--chunk' and '--locks' exclude each other"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char line[8192];
        snprintf(line, sizeof line, bad[i].line, dir, n);
        CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' %s", STROBE_BIN_DIR, dir, bad[i].args),
                     bad[i].status);
        CHECK_CONTAINS(out, line);
        CHECK(strchr(out, '\n') == strrchr(out, '\n')); /* one line */
        free(out);
    }
}

/* A stream written without chunks (the byte-exact fixture of
 * make_experiment.c, flags 0, as older strobe versions wrote) reads as
 * before; --chunk says why it cannot. */
STROBE_TEST(older_stream_without_chunks)
{
    char exp[4200];
    snprintf(exp, sizeof exp, "%s/exp", strobe_test_tmpdir("older_stream_without_chunks"));
    CHECK_EQ_INT(make_experiment(exp), 0);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --source trace", STROBE_BIN_DIR, exp), 0);
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --chunk 0", STROBE_BIN_DIR, exp), 1);
    CHECK_CONTAINS(
        out, "strobe: report: --chunk 0: proc-4242/t0.evt: not written in self-contained chunks (header "
             "flags 0x0: recorded by a strobe older than the chunked format)\n");
    CHECK(strchr(out, '\n') == strrchr(out, '\n'));
    free(out);
}

/* Slice begins (and ends) per track of a decoded Perfetto part: they
 * balance, never end more than began; begins not marked continued are
 * counted per name into *real. */
static void perfetto_part_balanced(const char *path, size_t *real_begins, size_t *continued)
{
    struct pf_trace t;
    char err[512];
    if (pf_decode(path, &t, err, sizeof err) != 0)
        STROBE_FAIL("%s: %s", path, err);
    long open[16] = {0};
    for (size_t i = 0; i < t.nevents; i++) {
        const struct pf_event *e = &t.events[i];
        size_t k = e->track % 16;
        if (e->type == 1) {
            open[k]++;
            if (strstr(e->args, "continued=1"))
                ++*continued;
            else
                ++*real_begins;
        } else if (e->type == 2) {
            if (--open[k] < 0)
                STROBE_FAIL("%s: slice end without a begin on track %" PRIu64, path, e->track);
        }
    }
    for (size_t k = 0; k < 16; k++)
        if (open[k] != 0)
            STROBE_FAIL("%s: %ld slices left open", path, open[k]);
    CHECK(t.ntracks >= 2); /* every part has the process and thread tracks */
    pf_free(&t);
}

/* --chunk-size: the Perfetto parts each pass the schema and sequence
 * checks of perfetto_decode.c and balance their slices; their slices not
 * marked continued are those of the export in one file; the Chrome parts
 * pass check_parts.py (each loads alone, B/E balance, the same events as
 * the whole). Sizes: at most SIZE plus a few events. */
STROBE_TEST(export_parts)
{
    char dir[4200];
    record_dir("export_parts", dir, sizeof dir);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && %s/strobe export exp --format perfetto -o whole.pftrace && "
                                "%s/strobe export exp --format perfetto -o part.pftrace --chunk-size 8k && "
                                "%s/strobe export exp --format chrome -o whole.json && "
                                "%s/strobe export exp --format chrome -o part.json --chunk-size 64k",
                                dir, STROBE_BIN_DIR, STROBE_BIN_DIR, STROBE_BIN_DIR, STROBE_BIN_DIR),
                 0);
    CHECK_CONTAINS(out, "strobe: export: ");
    CHECK_CONTAINS(out, " parts of about 8k: part-000.pftrace ... part-0");
    CHECK_CONTAINS(out, " parts of about 64k: part-000.json ... part-0");
    free(out);
    size_t whole_begins = 0, whole_continued = 0, real = 0, continued = 0, parts = 0;
    char path[4400];
    snprintf(path, sizeof path, "%s/whole.pftrace", dir);
    perfetto_part_balanced(path, &whole_begins, &whole_continued);
    CHECK_EQ_U64(whole_begins, 1 + 1 + 4250 + 10250);
    CHECK_EQ_U64(whole_continued, 0);
    for (;; parts++) {
        snprintf(path, sizeof path, "%s/part-%03zu.pftrace", dir, parts);
        if (access(path, F_OK) != 0)
            break;
        perfetto_part_balanced(path, &real, &continued);
        FILE *f = fopen(path, "rb");
        CHECK(f && fseek(f, 0, SEEK_END) == 0);
        CHECK(ftell(f) <= 8192 + 8 * 64 + 4096); /* SIZE, the events between two looks, the tracks */
        fclose(f);
    }
    CHECK(parts >= 5);
    CHECK_EQ_U64(real, whole_begins);
    CHECK(continued >= 2 * (parts - 1)); /* main and work at least */
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && ls part-*.json | wc -l && python3 %s/check_parts.py whole.json "
                                "part-*.json",
                                dir, CHECKS),
                 0);
    CHECK(atoi(out) >= 3);
    CHECK_CONTAINS(out, " frames continued\n");
    free(out);
    /* without --chunk-size the one file is OUT itself */
    snprintf(path, sizeof path, "%s/whole-000.json", dir);
    CHECK(access(path, F_OK) != 0);
    /* a tiny size: a part per event (the size is looked at after each),
     * each still complete; on the two threads of make_experiment.c */
    char small[4400];
    snprintf(small, sizeof small, "%s/small", dir);
    CHECK_EQ_INT(make_experiment(small), 0);
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "cd '%s' && mkdir tiny && %s/strobe export small --format chrome -o tiny/one.json && "
                       "%s/strobe export small --format chrome -o tiny/t.json --chunk-size 1 && "
                       "python3 %s/check_parts.py tiny/one.json $(ls tiny/t-*.json | sort -V)",
                       dir, STROBE_BIN_DIR, STROBE_BIN_DIR, CHECKS),
        0);
    CHECK_CONTAINS(out, "strobe: export: 21 parts of about 1: tiny/t-000.json ... tiny/t-020.json\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && %s/strobe export exp --format cubex -o x.cubex --chunk-size 1M",
                                dir, STROBE_BIN_DIR),
                 2);
    CHECK_CONTAINS(out, "strobe: export: --chunk-size splits chrome and perfetto exports, not cubex");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && %s/strobe export exp --format chrome -o x.json --chunk-size 0",
                                dir, STROBE_BIN_DIR),
                 2);
    CHECK_CONTAINS(out, "strobe: export: --chunk-size: '0' is not a size (64M, 1G, 500k)");
    free(out);
}

/* `strobe export --chunk`: one chunk's events alone, the frames open at
 * its start re-entered (B at their entry times, before the chunk), all
 * balanced. */
STROBE_TEST(export_chunk_cli)
{
    char dir[4200];
    record_dir("export_chunk_cli", dir, sizeof dir);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && %s/strobe export exp --chunk 2 --format chrome -o c2.json && "
                                "%s/strobe export exp --chunk 2 --format perfetto -o c2.pftrace && "
                                "python3 -c 'import json; d=json.load(open(\"c2.json\")); "
                                "e=[x for x in d[\"traceEvents\"] if x[\"ph\"] in \"BE\"]; "
                                "print(e[0][\"name\"], e[1][\"name\"], sum(x[\"ph\"]==\"B\" for x in e), "
                                "sum(x[\"ph\"]==\"E\" for x in e))'",
                                dir, STROBE_BIN_DIR, STROBE_BIN_DIR),
                 0);
    CHECK(strncmp(out, "main work ", 10) == 0);
    unsigned b = 0, e = 0;
    CHECK_EQ_INT(sscanf(out + 10, "%u %u", &b, &e), 2);
    CHECK_EQ_INT(b, e);
    free(out);
    size_t real = 0, continued = 0;
    char path[4400];
    snprintf(path, sizeof path, "%s/c2.pftrace", dir);
    perfetto_part_balanced(path, &real, &continued);
    CHECK_EQ_U64(real, b);
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && %s/strobe export exp --chunk 2 --format pprof -o x.pb.gz",
                                dir, STROBE_BIN_DIR),
                 2);
    CHECK_CONTAINS(out, "strobe: export: --chunk selects events of trace exports");
    free(out);
}

/* ---- malformed chunked streams ------------------------------------------ */

struct chunk_rec {
    size_t at;               /* offset of the record */
    size_t seq_at, ticks_at; /* offsets of its fields */
    uint64_t seq, ticks, depth;
    size_t frame_at[8]; /* region id of the first frames */
};

/* Reads the CHUNK record at `at` of buf. */
static void parse_chunk(const uint8_t *buf, size_t len, size_t at, struct chunk_rec *r)
{
    const uint8_t *p = buf + at + 1, *end = buf + len;
    uint64_t v;
    CHECK_EQ_INT(buf[at], STROBE_EXT_CHUNK);
    CHECK(strobe_uleb_get(&p, end, &v) == 0 && strobe_uleb_get(&p, end, &v) == 0);
    r->at = at;
    r->seq_at = (size_t)(p - buf);
    CHECK(strobe_uleb_get(&p, end, &r->seq) == 0);
    r->ticks_at = (size_t)(p - buf);
    CHECK(strobe_uleb_get(&p, end, &r->ticks) == 0 && strobe_uleb_get(&p, end, &r->depth) == 0);
    for (uint64_t i = 0; i < r->depth && i < 8; i++) {
        r->frame_at[i] = (size_t)(p - buf);
        CHECK(strobe_uleb_get(&p, end, &v) == 0 && strobe_uleb_get(&p, end, &v) == 0);
    }
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    CHECK(f && fseek(f, 0, SEEK_END) == 0);
    *len = (size_t)ftell(f);
    uint8_t *buf = malloc(*len);
    CHECK(buf && fseek(f, 0, SEEK_SET) == 0 && fread(buf, 1, *len, f) == *len);
    fclose(f);
    return buf;
}

/* Each way a chunked stream can be malformed is one line naming the file
 * and the offset, and exit 1, whether the stream is read whole or from
 * the damaged chunk on. */
STROBE_TEST(corrupt_chunked)
{
    const char *exp = record("corrupt_chunked");
    char *out, evt[4400], proc[4300];
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && printf %%s proc-*", exp), 0);
    snprintf(proc, sizeof proc, "%s", out);
    free(out);
    snprintf(evt, sizeof evt, "%s/%s/t0.evt", exp, proc);
    size_t len;
    uint8_t *orig = read_all(evt, &len);
    /* chunk 2's CHUNK record (sequence 3), and a later one that lists
     * more than two frames and whose time's low bits are not zero */
    struct chunk_rec c2, deep = {0};
    parse_chunk(orig, len, 2 * 4096, &c2);
    CHECK_EQ_U64(c2.seq, 3);
    for (size_t at = 3 * 4096; at < len && !deep.depth; at += 4096) {
        parse_chunk(orig, len, at, &deep);
        if (deep.depth < 3 || (orig[deep.ticks_at] & 0x7f) == 0)
            deep.depth = 0;
    }
    CHECK(deep.depth >= 3);
    struct {
        size_t at;
        uint8_t byte;
        char msg[256];
    } bad[7];
    size_t n = 0;
    bad[n].at = 48, bad[n].byte = 6;
    snprintf(bad[n++].msg, 256, "t0.evt: offset 48: unknown stream flags 0x6");
    bad[n].at = 48, bad[n].byte = 0;
    snprintf(bad[n++].msg, 256,
             "t0.evt: offset 64: CHUNK record in a stream that is not chunked (header flags 0x0)");
    bad[n].at = c2.at, bad[n].byte = STROBE_EXT_METRIC;
    snprintf(bad[n++].msg, 256,
             "t0.evt: offset 8192: chunk 2 of a chunked stream does not begin with a CHUNK record");
    bad[n].at = c2.seq_at, bad[n].byte = 7;
    snprintf(bad[n++].msg, 256, "t0.evt: offset 8192: CHUNK record: sequence 7 in chunk 2 (expected 3)");
    /* main's frame (the outermost) named as another region */
    bad[n].at = deep.frame_at[0], bad[n].byte = (uint8_t)(orig[deep.frame_at[0]] + 1);
    snprintf(bad[n++].msg, 256,
             "t0.evt: offset %zu: CHUNK record: open frame 0 is region %u, the stream has %u", deep.at,
             orig[deep.frame_at[0]] + 1u, orig[deep.frame_at[0]]);
    /* time going backwards: the low 7 bits of its ticks cleared */
    bad[n].at = deep.ticks_at, bad[n].byte = orig[deep.ticks_at] & 0x80;
    snprintf(bad[n++].msg, 256,
             "t0.evt: offset %zu: CHUNK record: %" PRIu64 " open frames at %" PRIu64
             " ticks do not continue the stream",
             deep.at, deep.depth, deep.ticks - (orig[deep.ticks_at] & 0x7f));
    /* THREAD_BEGIN, the record after chunk 0's CHUNK record, made a CHUNK
     * record in the middle of the chunk */
    struct chunk_rec c0;
    parse_chunk(orig, len, 64, &c0);
    CHECK_EQ_U64(c0.depth, 0);
    const uint8_t *p = orig + c0.ticks_at;
    uint64_t v;
    CHECK(strobe_uleb_get(&p, orig + len, &v) == 0 && strobe_uleb_get(&p, orig + len, &v) == 0);
    bad[n].at = (size_t)(p - orig), bad[n].byte = STROBE_EXT_CHUNK;
    CHECK_EQ_INT(orig[bad[n].at], STROBE_EXT_THREAD_BEGIN);
    snprintf(bad[n].msg, 256, "t0.evt: offset %zu: CHUNK record in the middle of a chunk", bad[n].at);
    n++;
    for (size_t i = 0; i < n; i++) {
        uint8_t *buf = malloc(len);
        memcpy(buf, orig, len);
        buf[bad[i].at] = bad[i].byte;
        FILE *f = fopen(evt, "wb");
        CHECK(f && fwrite(buf, 1, len, f) == len);
        fclose(f);
        free(buf);
        /* the whole stream, then from the damaged chunk on (the header's
         * damage shows either way) */
        const char *how[2] = {"--source trace", "--chunk 2-99"};
        for (int h = 0; h < 2; h++) {
            if (h == 1 && bad[i].at < 8192 && (bad[i].at != 48 || bad[i].byte == 0))
                continue; /* chunk 0's damage is not read from chunk 2 on; flags 0: no chunks */
            CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' %s", STROBE_BIN_DIR, exp, how[h]), 1);
            CHECK_CONTAINS(out, bad[i].msg);
            CHECK(strncmp(out, "strobe: report: ", 16) == 0);
            CHECK(strchr(out, '\n') == strrchr(out, '\n')); /* one line */
            free(out);
        }
    }
    FILE *f = fopen(evt, "wb");
    CHECK(f && fwrite(orig, 1, len, f) == len);
    fclose(f);
    free(orig);
}

STROBE_TEST_MAIN(STROBE_CASE(visits_per_chunk_sum), STROBE_CASE(chunk_alone_reopens_frames),
                 STROBE_CASE(deep_stack_keeps_tracing), STROBE_CASE(report_chunk_cli),
                 STROBE_CASE(older_stream_without_chunks), STROBE_CASE(export_parts),
                 STROBE_CASE(export_chunk_cli), STROBE_CASE(corrupt_chunked))
