/* SPDX-License-Identifier: MIT */
/*
 * Basic-block and memory tracing end to end: the runtime (src/core/bb.c)
 * under `strobe run` of analysis_bb_prog (bb_prog.c: what `strobe cc
 * --trace=bb,mem` emits, written by hand), read back by src/analysis/
 * blocks.c, compared exactly with what the fixture did; byte-level
 * streams for what a run cannot produce on demand (MARKs, a record ending
 * at a chunk's last byte); damaged files.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/blocks.h"
#include "analysis/decode.h"
#include "analysis/experiment.h"
#include "common/bbtrace.h"
#include "common/format.h"
#include "records.h"
#include "test.h"

static char dir[4200];
static char output[8192];

static struct strobe_experiment *run(const char *name, const char *mode)
{
    return strobe_test_run_fixture(dir, sizeof dir, output, sizeof output, name, "", "analysis_bb_prog",
                                   mode);
}

/* What one kernel() call of the fixture printed. */
struct kernel {
    unsigned long a, b, g, far0, far1;
    long n;
};

static struct kernel kernel_line(const char *out, const char *prefix)
{
    char key[64];
    snprintf(key, sizeof key, "%skernel a=", prefix);
    const char *p = strstr(out, key);
    struct kernel k;
    if (!p || sscanf(p + strlen(prefix), "kernel a=%lx b=%lx g=%lx far0=%lx far1=%lx n=%ld", &k.a, &k.b, &k.g,
                     &k.far0, &k.far1, &k.n) != 6)
        STROBE_FAIL("no '%s' line in:\n%s", key, out);
    return k;
}

static struct strobe__blocks *tables(const struct strobe_experiment *exp, uint32_t process)
{
    struct strobe__blocks *b;
    struct strobe_errbuf eb = {""};
    if (strobe__blocks_open(exp, process, &b, &eb) != 0)
        STROBE_FAIL("%s", eb.msg);
    if (!b)
        STROBE_FAIL("process %u has no blocks file", process);
    return b;
}

static uint32_t thread_of(const struct strobe_experiment *exp, uint32_t process, uint32_t index)
{
    for (size_t t = 0; t < exp->nthreads; t++)
        if (exp->threads[t].process == process && exp->threads[t].index == index)
            return (uint32_t)t;
    STROBE_FAIL("no thread t%u in process %u", index, process);
}

static struct strobe__bbstream *stream(const struct strobe_experiment *exp, uint32_t thread,
                                       const struct strobe__blocks *b)
{
    struct strobe__bbstream *s;
    struct strobe_errbuf eb = {""};
    if (strobe__bbstream_open(exp, thread, b, &s, &eb) != 0)
        STROBE_FAIL("%s", eb.msg);
    if (!s)
        STROBE_FAIL("thread %u has no block stream", thread);
    return s;
}

/* One expected access. */
struct acc {
    uint64_t address;
    uint32_t size;
    int kind, how;
};

/* The k-th expected BLOCK of kernel(n) followed by `lib` blocks of the
 * library: its id and accesses; false past the end. */
static bool expected(const struct kernel *k, long lib, uint64_t i, uint32_t *id, struct acc *a, uint32_t *na)
{
    /* blocks 2 (x n) and 3 (x ceil(n / 16)) interleaved, then 4, then lib x 1 */
    static long loop, step; /* position in the loop: iteration, 0 = block 2, 1 = block 3 */
    if (i == 0)
        loop = step = 0;
    *na = 0;
    if (loop < k->n) {
        if (step == 0) {
            *id = 2;
            a[0] = (struct acc){k->a + 8 * (uint64_t)loop, 8, STROBE_BB_LOAD, STROBE__BB_ADDR_RECORDED};
            a[1] = (struct acc){k->a + 8 * (uint64_t)loop + 8, 8, STROBE_BB_LOAD, STROBE__BB_ADDR_ELIDED};
            a[2] = (struct acc){k->g, 4, STROBE_BB_LOAD, STROBE__BB_ADDR_CONSTANT};
            a[3] = (struct acc){k->b + 8 * (uint64_t)loop, 8, STROBE_BB_STORE, STROBE__BB_ADDR_RECORDED};
            *na = 4;
            if (loop % 16 == 0)
                step = 1;
            else
                loop++;
        } else {
            *id = 3;
            a[0] = (struct acc){(loop / 16) % 2 ? k->far1 : k->far0, 1, STROBE_BB_STORE,
                                STROBE__BB_ADDR_RECORDED};
            *na = 1;
            step = 0;
            loop++;
        }
        return true;
    }
    uint64_t rest = i - (uint64_t)k->n - (uint64_t)(k->n + 15) / 16;
    if (rest == 0) {
        *id = 4;
        return true;
    }
    if (rest <= (uint64_t)lib) {
        *id = 1;
        return true;
    }
    return false;
}

/* Decodes the stream and compares it with kernel k and `lib` library
 * blocks; MARKs are skipped. With `prefix`, the stream may stop early.
 * Returns the BLOCKs seen. */
static uint64_t check_stream(struct strobe__bbstream *s, const struct kernel *k, long lib, bool prefix)
{
    struct strobe__bb_event ev;
    struct strobe_errbuf eb = {""};
    uint64_t i = 0;
    int rc;
    while ((rc = strobe__bbstream_next(s, &ev, &eb)) == 1) {
        if (ev.type == STROBE__BB_MARK)
            continue;
        uint32_t id, na;
        struct acc a[4];
        if (!expected(k, lib, i, &id, a, &na))
            STROBE_FAIL("block %llu (id %u at offset %llu): more blocks than the fixture ran",
                        (unsigned long long)i, ev.id, (unsigned long long)ev.offset);
        if (ev.id != id || ev.naccesses != na)
            STROBE_FAIL("block %llu at offset %llu: id %u with %u accesses, expected id %u with %u",
                        (unsigned long long)i, (unsigned long long)ev.offset, ev.id, ev.naccesses, id, na);
        for (uint32_t j = 0; j < na; j++) {
            const struct strobe__bb_access *x = &ev.accesses[j];
            if (x->address != a[j].address || x->size != a[j].size || x->kind != a[j].kind ||
                x->how != a[j].how || x->op != j)
                STROBE_FAIL(
                    "block %llu (id %u) access %u: %#llx size %u kind %d how %d, expected %#llx %u %d %d",
                    (unsigned long long)i, id, j, (unsigned long long)x->address, x->size, x->kind, x->how,
                    (unsigned long long)a[j].address, a[j].size, a[j].kind, a[j].how);
        }
        i++;
    }
    if (rc < 0)
        STROBE_FAIL("%s", eb.msg);
    uint32_t id, na;
    struct acc a[4];
    if (!prefix && expected(k, lib, i, &id, a, &na))
        STROBE_FAIL("the stream ends after %llu blocks; block id %u is missing", (unsigned long long)i, id);
    return i;
}

/* The stream of thread t<index> of process p against kernel k and `lib`
 * library blocks (check_stream); returns the BLOCKs seen. */
static uint64_t check_thread(const struct strobe_experiment *exp, uint32_t p, uint32_t index,
                             const struct kernel *k, long lib, bool prefix)
{
    struct strobe__blocks *b = tables(exp, p);
    struct strobe__bbstream *s = stream(exp, thread_of(exp, p, index), b);
    uint64_t n = check_stream(s, k, lib, prefix);
    strobe__bbstream_close(s);
    strobe__blocks_free(b);
    return n;
}

static uint64_t kernel_blocks(long n)
{
    return (uint64_t)n + (uint64_t)(n + 15) / 16 + 1;
}

STROBE_TEST(loop_exact)
{
    struct strobe_experiment *exp = run("bb_loop", "loop 1000");
    struct kernel k = kernel_line(output, "");
    CHECK_EQ_INT(exp->nprocesses, 1);
    struct strobe__blocks *b = tables(exp, 0);
    CHECK_EQ_INT(b->nmodules, 2);
    CHECK_STR_EQ(b->modules[0].name, "bb_lib.c");
    CHECK_EQ_INT(b->modules[0].level, STROBE_BB_LEVEL_BB);
    CHECK_STR_EQ(b->modules[1].name, "bb_prog.c");
    CHECK_EQ_INT(b->modules[1].first_id, 2);
    CHECK_EQ_INT(b->nblocks, 4);
    const struct strobe__block_info *k2 = strobe__blocks_info(b, 2);
    CHECK(k2 && k2->nops == 4 && k2->recorded == 2 && k2->loads == 3 && k2->stores == 1 && k2->line == 60);
    CHECK_STR_EQ(k2->function, "kernel");
    CHECK_STR_EQ(k2->file, "bb_prog.c");
    CHECK(k2->ops[3].line == 61 && k2->ops[3].column == 14 && k2->ops[2].offset == (int64_t)k.g);
    CHECK_STR_EQ(strobe__blocks_info(b, 1)->function, "bb_lib_work");
    CHECK(strobe__blocks_info(b, 5) == NULL && strobe__blocks_info(b, 0) == NULL);

    struct strobe__bbstream *s = stream(exp, thread_of(exp, 0, 0), b);
    CHECK_EQ_U64(check_stream(s, &k, 7, false), kernel_blocks(1000) + 7);
    /* ids 1..4 are within 31 of each other: every head is a 1-byte NEAR
     * (1071 blocks); blocks 2 and 3 have one mask byte (1000 + 63); the
     * first block 2 escapes both addresses (no previous address: 2 x 8),
     * the second has deltas of 8 (2 x 2), the stride of every later one;
     * every block 3 escapes (far0 and far1 alternate: +1 MiB, -1 MiB, never
     * the previous stride) */
    CHECK_EQ_U64(strobe__bbstream_bytes(s), 1071 + 1063 + 2 * 8 + 2 * 2 + 63 * 8);
    strobe__bbstream_close(s);
    strobe__blocks_free(b);

    struct strobe_blocks_summary sum;
    bool has;
    struct strobe_errbuf eb = {""};
    CHECK_EQ_INT(strobe_blocks_summarize(exp, &sum, &has, &eb), 0);
    CHECK(has);
    CHECK_EQ_U64(sum.blocks, kernel_blocks(1000) + 7);
    CHECK_EQ_U64(sum.reads, 3 * 1000);
    CHECK_EQ_U64(sum.writes, 1000 + 63);
    CHECK_EQ_U64(sum.bytes, 2658);
    /* the thread's end cut its stream to the data, the process's end the
     * tables (SIGKILL leaves whole chunks: the killed case) */
    struct stat st;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s/t0.bb", dir, exp->processes[0].dir);
    CHECK(stat(path, &st) == 0 && st.st_size == 64 + 2658);
    snprintf(path, sizeof path, "%s/%s/blocks", dir, exp->processes[0].dir);
    CHECK(stat(path, &st) == 0 && st.st_size < 4096);
    strobe_experiment_close(exp);
}

STROBE_TEST(threads_own_streams)
{
    struct strobe_experiment *exp = run("bb_threads", "threads 3 200");
    for (uint32_t t = 1; t <= 3; t++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "thread %u ", t);
        struct kernel k = kernel_line(output, prefix);
        CHECK_EQ_INT(k.n, 200 * (long)t);
        CHECK_EQ_U64(check_thread(exp, 0, t, &k, 0, false), kernel_blocks(k.n));
    }
    strobe_experiment_close(exp);
}

/* 4 KiB chunks: the stream spans many (16 iterations take 42 bytes: 16
 * blocks 2 of 2 bytes, a block 3 of 10), every one decoded from a reset
 * delta state (an address or an id wrong by a missed reset fails the
 * comparison). */
STROBE_TEST(small_chunks)
{
    setenv("STROBE_CHUNK_SIZE", "4096", 1);
    struct strobe_experiment *exp = run("bb_chunks", "loop 20000");
    struct kernel k = kernel_line(output, "");
    struct strobe__blocks *b = tables(exp, 0);
    struct strobe__bbstream *s = stream(exp, thread_of(exp, 0, 0), b);
    CHECK_EQ_U64(check_stream(s, &k, 7, false), kernel_blocks(20000) + 7);
    CHECK(strobe__bbstream_bytes(s) > 8 * 4096);
    strobe__bbstream_close(s);
    strobe__blocks_free(b);
    strobe_experiment_close(exp);
}

/* The size limit of the event streams applies: the stream stops at it,
 * what it holds is an exact prefix, the rest went to the scratch area. */
STROBE_TEST(size_limit)
{
    setenv("STROBE_CHUNK_SIZE", "4096", 1);
    setenv("STROBE_TRACE_LIMIT", "8192", 1);
    struct strobe_experiment *exp = run("bb_limit", "loop 5000");
    struct kernel k = kernel_line(output, "");
    struct strobe__blocks *b = tables(exp, 0);
    struct strobe__bbstream *s = stream(exp, thread_of(exp, 0, 0), b);
    uint64_t n = check_stream(s, &k, 7, true);
    /* 8192 - 64 bytes at 17 blocks per 42 bytes: 3290, less each chunk's
     * escapes and the unused end of chunk 0 */
    CHECK(n > 3100 && n < 3290);
    CHECK(strobe__bbstream_bytes(s) > 8192 - 64 - 2 * STROBE_BB_MAX_RECORD &&
          strobe__bbstream_bytes(s) <= 8192 - 64);
    strobe__bbstream_close(s);
    strobe__blocks_free(b);
    struct stat st;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s/t0.bb", dir, exp->processes[0].dir);
    CHECK(stat(path, &st) == 0 && st.st_size <= 8192);
    strobe_experiment_close(exp);
}

/* The flight recorder (--max-size) bounds the event streams by its
 * ring; the block streams, which are not rings, keep the size limit. It
 * was lifted for them: strobe cc's XSBench under --max-size 32M wrote 57 GB
 * of blocks. */
STROBE_TEST(size_limit_flight)
{
    setenv("STROBE_CHUNK_SIZE", "4096", 1);
    setenv("STROBE_TRACE_LIMIT", "8192", 1);
    struct strobe_experiment *exp =
        strobe_test_run_fixture(dir, sizeof dir, output, sizeof output, "bb_limit_flight", "--max-size 64K",
                                "analysis_bb_prog", "loop 5000");
    struct stat st;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s/t0.bb", dir, exp->processes[0].dir);
    CHECK(stat(path, &st) == 0 && st.st_size <= 8192);
    strobe_experiment_close(exp);
}

/* The child's segments go to a stream of its own, in its own process
 * directory, with the parent's modules (same ids) in its blocks file. */
STROBE_TEST(fork_child)
{
    struct strobe_experiment *exp = run("bb_fork", "fork 100 300");
    CHECK_EQ_INT(exp->nprocesses, 2);
    for (uint32_t p = 0; p < 2; p++) {
        bool child = exp->processes[p].parent != STROBE_NONE;
        struct kernel k = kernel_line(output, child ? "child " : "parent ");
        CHECK_EQ_U64(check_thread(exp, p, 0, &k, 0, false), kernel_blocks(child ? 300 : 100));
    }
    strobe_experiment_close(exp);
}

/* SIGKILL after 3000 iterations and half a segment: every completed
 * segment is there, the half one ends the stream. */
STROBE_TEST(killed)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("bb_killed"));
    char *out;
    int rc = strobe_test_sh(&out, "%s/strobe run -o '%s' -- %s/analysis_bb_prog kill 3000", STROBE_BIN_DIR,
                            dir, STROBE_TEST_BIN_DIR);
    CHECK(rc != 0);
    struct kernel k = kernel_line(out, "");
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    CHECK_EQ_U64(check_thread(exp, 0, 0, &k, 0, false), kernel_blocks(3000));
    struct stat st;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s/t0.bb", dir, exp->processes[0].dir);
    CHECK(stat(path, &st) == 0 && st.st_size == STROBE_CHUNK_SIZE_DEFAULT); /* not cut: killed */
    strobe_experiment_close(exp);
}

/* A module the runtime cannot take (another ABI) ends the recording of
 * blocks for the process, said in one line: what was recorded before
 * stays, the later segments go to scratch. */
STROBE_TEST(other_abi_stops)
{
    struct strobe_experiment *exp = run("bb_abi", "abi 500");
    struct kernel k = kernel_line(output, "");
    CHECK_CONTAINS(output,
                   "strobe: a module: compiled by another version of `strobe cc` (block-tracing ABI); blocks "
                   "are no longer recorded in this process\n");
    CHECK_EQ_U64(check_thread(exp, 0, 0, &k, 0, false), kernel_blocks(500));
    strobe_experiment_close(exp);
}

/* An executable that does not export its cursor writes into its own,
 * which the runtime never sees: one line says so, nothing is recorded. */
STROBE_TEST(cursor_not_exported)
{
    struct strobe_experiment *exp = strobe_test_run_fixture(
        dir, sizeof dir, output, sizeof output, "bb_noexport", "", "analysis_bb_prog_noexport", "loop 100");
    CHECK_CONTAINS(
        output, "strobe: the program: its strobe_bb_cursor is not the runtime's (an executable must export "
                "it: -Wl,--export-dynamic-symbol=strobe_bb_cursor, as `strobe cc` links); blocks are no "
                "longer recorded in this process\n");
    struct strobe__blocks *b = tables(exp, 0);
    struct strobe__bbstream *s = stream(exp, thread_of(exp, 0, 0), b);
    struct strobe__bb_event ev;
    struct strobe_errbuf eb = {""};
    CHECK_EQ_INT(strobe__bbstream_next(s, &ev, &eb), 0);
    strobe__bbstream_close(s);
    strobe__blocks_free(b);
    strobe_experiment_close(exp);
}

/* `strobe report`: the summary's lines and the JSON member. */
STROBE_TEST(report_summary)
{
    struct strobe_experiment *exp = run("bb_report", "loop 1000");
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s'", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(out, "\n  blocks           1071 executed (1 block stream)\n"
                        "  memory events    3000 reads, 1063 writes\n"
                        "  block trace      2.6 KiB (0.65 bytes/memory event)\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report --format json '%s'", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(out,
                   "\n  \"blocks\": {\n    \"streams\": 1,\n    \"blocks\": 1071,\n    \"reads\": 3000,\n"
                   "    \"writes\": 1063,\n    \"marks\": 0,\n    \"bytes\": 2658,\n"
                   "    \"bytes_per_memory_event\": 0.65");
    free(out);
}

/* Without the runtime the segments write into the scratch area. */
STROBE_TEST(no_runtime)
{
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/analysis_bb_prog loop 5000", STROBE_TEST_BIN_DIR), 0);
    CHECK_CONTAINS(out, "n=5000");
    free(out);
}

/* The first error of decoding the stream of t0, process 0. */
static const char *stream_error(const struct strobe_experiment *exp)
{
    static struct strobe_errbuf eb;
    struct strobe__blocks *b;
    eb.msg[0] = 0;
    if (strobe__blocks_open(exp, 0, &b, &eb) != 0)
        return eb.msg;
    struct strobe__bbstream *s;
    int rc = strobe__bbstream_open(exp, thread_of(exp, 0, 0), b, &s, &eb);
    struct strobe__bb_event ev;
    while (rc == 0 && (rc = strobe__bbstream_next(s, &ev, &eb)) == 1)
        ;
    strobe__bbstream_close(s);
    strobe__blocks_free(b);
    return rc < 0 ? eb.msg : "";
}

static void patch(const char *path, long off, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f && fseek(f, off, SEEK_SET) == 0 && fwrite(bytes, 1, n, f) == n);
    fclose(f);
}

STROBE_TEST(damaged)
{
    struct strobe_experiment *exp = run("bb_damaged", "loop 100");
    char bb[4400], tab[4400], want[512];
    snprintf(bb, sizeof bb, "%s/%s/t0.bb", dir, exp->processes[0].dir);
    snprintf(tab, sizeof tab, "%s/%s/blocks", dir, exp->processes[0].dir);
    CHECK_STR_EQ(stream_error(exp), "");
    uint8_t first[5];
    FILE *f = fopen(bb, "rb");
    CHECK(f && fseek(f, 64, SEEK_SET) == 0 && fread(first, 1, 5, f) == 5);
    fclose(f);
    CHECK_EQ_INT(first[0], 2 << 2 | 2); /* NEAR: id 0 + 2 */
    /* NEARs to ids 0 and -1 */
    patch(bb, 64, "\x02", 1);
    snprintf(want, sizeof want, "%s/t0.bb: offset 64: block id 0 is not in %s/blocks", exp->processes[0].dir,
             exp->processes[0].dir);
    CHECK_STR_EQ(stream_error(exp), want);
    patch(bb, 64, "\xfe", 1);
    snprintf(want, sizeof want, "%s/t0.bb: offset 64: block id -1 is not in %s/blocks", exp->processes[0].dir,
             exp->processes[0].dir);
    CHECK_STR_EQ(stream_error(exp), want);
    /* an id the tables do not have */
    patch(bb, 64, "\xff\xff\xff", 3);
    snprintf(want, sizeof want, "%s/t0.bb: offset 64: block id 8388607 is not in %s/blocks",
             exp->processes[0].dir, exp->processes[0].dir);
    CHECK_STR_EQ(stream_error(exp), want);
    /* a reserved record type */
    patch(bb, 64, "\x0c", 1);
    snprintf(want, sizeof want, "%s/t0.bb: offset 64: reserved record type 0x0c", exp->processes[0].dir);
    CHECK_STR_EQ(stream_error(exp), want);
    /* a REPEAT with nothing to repeat (the chunk's first record) */
    patch(bb, 64, "\x08\x01", 2);
    snprintf(want, sizeof want,
             "%s/t0.bb: offset 64: REPEAT record without a block record before it in its chunk",
             exp->processes[0].dir);
    CHECK_STR_EQ(stream_error(exp), want);
    /* a record cut by the end of the file: the first, 18 bytes (head,
     * mask, two escapes) */
    patch(bb, 64, first, 5);
    CHECK_EQ_INT(truncate(bb, 64 + 10), 0);
    snprintf(want, sizeof want, "%s/t0.bb: offset 64: NEAR record runs past the end of the file",
             exp->processes[0].dir);
    CHECK_STR_EQ(stream_error(exp), want);
    /* the tables */
    patch(tab, 0, "XXXX", 4);
    snprintf(want, sizeof want, "%s/blocks: offset 0: bad magic (not a strobe block tables file)",
             exp->processes[0].dir);
    CHECK_STR_EQ(stream_error(exp), want);
    strobe_experiment_close(exp);
}

/* ---- built by `strobe cc --trace=bb,mem` (bb_cc_prog.c) ---- */

/* Builds bb_cc_prog in the case's scratch directory; false (the case is
 * skipped) when this build has no pass plugin. */
static bool cc_build(const char *tmp)
{
    char *out;
    if (strobe_test_sh(&out, "test -e %s/strobe/libstrobe-cc.so", STROBE_LIB_DIR) != 0) {
        free(out);
        printf("skipped: strobe was built without the pass plugin (LLVM 14)\n");
        return false;
    }
    free(out);
    int rc = strobe_test_sh(&out,
                            "cd '%s' && %s/strobe cc --trace=bb,mem -O1 -fno-unroll-loops -pthread "
                            "%s/tests/analysis/bb_cc_prog.c -o prog",
                            tmp, STROBE_BIN_DIR, STROBE_SOURCE_DIR);
    if (rc != 0)
        STROBE_FAIL("strobe cc: exit %d\n%s", rc, out);
    free(out);
    return true;
}

/* The 8-byte stores of thread t<index> into [a, a + 8 n): they must be
 * a[0], a[1], ... in order; returns how many. */
static uint64_t cc_stores(const struct strobe_experiment *exp, uint32_t index, uint64_t a, uint64_t n)
{
    struct strobe__blocks *b = tables(exp, 0);
    struct strobe__bbstream *s = stream(exp, thread_of(exp, 0, index), b);
    struct strobe__bb_event ev;
    struct strobe_errbuf eb = {""};
    uint64_t seen = 0;
    int rc;
    while ((rc = strobe__bbstream_next(s, &ev, &eb)) == 1)
        for (uint32_t i = 0; i < ev.naccesses; i++) {
            const struct strobe__bb_access *x = &ev.accesses[i];
            if (x->kind != STROBE_BB_STORE || x->address < a || x->address >= a + 8 * n)
                continue;
            if (x->size != 8 || x->address != a + 8 * seen)
                STROBE_FAIL("t%u: store %llu: %u bytes at a + %llu, expected 8 at a + %llu", index,
                            (unsigned long long)seen, x->size, (unsigned long long)(x->address - a),
                            (unsigned long long)(8 * seen));
            CHECK_STR_EQ(ev.block->function, "fill");
            seen++;
        }
    if (rc < 0)
        STROBE_FAIL("%s", eb.msg);
    strobe__bbstream_close(s);
    strobe__blocks_free(b);
    return seen;
}

/* Up to 64 tickets of an event stream's records, in stream order. */
struct tickets {
    uint64_t *t;
    size_t n;
};

static void take_ticket(const struct strobe__raw_event *ev, void *arg)
{
    struct tickets *k = arg;
    if (ev->ticket && k->n < 64)
        k->t[k->n++] = ev->ticket;
}

/* The tickets of t<index>'s ticketed records in t<index>.evt, in order,
 * and those of the MARKs of its block stream: the same sequence. Returns
 * its length. */
static size_t marks_match_tickets(const struct strobe_experiment *exp, uint32_t index)
{
    uint64_t evt[64], bb[64];
    size_t nbb = 0;
    uint32_t t = thread_of(exp, 0, index);
    struct tickets got = {evt, 0};
    strobe_test_each_record(exp->threads[t].stream_path, take_ticket, &got);
    struct strobe_errbuf eb = {""};
    int rc;
    struct strobe__blocks *b = tables(exp, 0);
    struct strobe__bbstream *s = stream(exp, t, b);
    struct strobe__bb_event ev;
    while ((rc = strobe__bbstream_next(s, &ev, &eb)) == 1)
        if (ev.type == STROBE__BB_MARK && nbb < 64)
            bb[nbb++] = ev.ticket;
    if (rc < 0)
        STROBE_FAIL("%s", eb.msg);
    strobe__bbstream_close(s);
    strobe__blocks_free(b);
    CHECK_EQ_U64(nbb, got.n);
    for (size_t i = 0; i < nbb; i++)
        CHECK_EQ_U64(bb[i], evt[i]);
    return nbb;
}

/* Each thread's stream holds exactly its own array's stores, in order;
 * main's MARKs are its 3 creates and 3 joins, with their records'
 * tickets (registration turned task-graph recording on). */
STROBE_TEST(cc_threads)
{
    const char *tmp = strobe_test_tmpdir("bb_cc_threads");
    if (!cc_build(tmp))
        return;
    char prog[4300];
    snprintf(prog, sizeof prog, "%s/prog", tmp);
    snprintf(dir, sizeof dir, "%s/exp", tmp);
    char *out;
    if (strobe_test_sh(&out, "%s/strobe run -o '%s' -- '%s' threads 3 5000", STROBE_BIN_DIR, dir, prog) != 0)
        STROBE_FAIL("strobe run: %s", out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    for (uint32_t t = 1; t <= 3; t++) {
        char key[32];
        unsigned long a;
        long n;
        snprintf(key, sizeof key, "thread %u a=", t);
        const char *p = strstr(out, key);
        CHECK(p && sscanf(p + strlen(key), "%lx n=%ld", &a, &n) == 2 && n == 5000 * (long)t);
        CHECK_EQ_U64(cc_stores(exp, t, a, (uint64_t)n), (uint64_t)n);
    }
    CHECK_EQ_U64(marks_match_tickets(exp, 0), 6);
    free(out);
    strobe_experiment_close(exp);
}

/* SIGKILL right after fill(): every store is in the stream. */
STROBE_TEST(cc_killed)
{
    const char *tmp = strobe_test_tmpdir("bb_cc_killed");
    if (!cc_build(tmp))
        return;
    snprintf(dir, sizeof dir, "%s/exp", tmp);
    char *out;
    CHECK(strobe_test_sh(&out, "%s/strobe run -o '%s' -- '%s/prog' kill 20000", STROBE_BIN_DIR, dir, tmp) !=
          0);
    unsigned long a;
    long n;
    const char *p = strstr(out, "a=");
    CHECK(p && sscanf(p, "a=%lx n=%ld", &a, &n) == 2 && n == 20000);
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    CHECK_EQ_U64(cc_stores(exp, 0, a, (uint64_t)n), (uint64_t)n);
    strobe_experiment_close(exp);
}

/* ---- byte-level streams ---- */

static uint8_t *put_header(uint8_t *p, const char *magic, uint32_t chunk)
{
    struct strobe_file_header h = {.version = STROBE_FORMAT_VERSION, .header_size = 64, .chunk_size = chunk};
    memcpy(h.magic, magic, 8);
    memcpy(p, &h, sizeof h);
    return p + sizeof h;
}

static uint8_t *put_record(uint8_t *p, unsigned type, const uint8_t *payload, size_t len)
{
    *p++ = (uint8_t)type;
    p = strobe_uleb_put(p, len);
    memcpy(p, payload, len);
    return p + len;
}

/* One MEM module, one block (id 1) with one recorded 4-byte load. */
static struct strobe__blocks *one_block_tables(void)
{
    static uint8_t buf[4096];
    memset(buf, 0, sizeof buf);
    uint8_t *p = put_header(buf, STROBE_MAGIC_BLOCK_TABLES, 4096);
    uint8_t rec[64], *q = rec;
    const uint8_t module[] = {1, 1, 1, 2, STROBE_BB_LEVEL_MEM, 1, 'm'};
    p = put_record(p, STROBE_BT_MODULE, module, sizeof module);
    const uint8_t names[] = {2, 1, 'f', 3, 'f', '.', 'c'};
    p = put_record(p, STROBE_BT_NAMES, names, sizeof names);
    const uint8_t blocks[] = {1, 0, 1, 1, 0, 1, 7};
    p = put_record(p, STROBE_BT_BLOCKS, blocks, sizeof blocks);
    q = strobe_uleb_put(q, 1);
    q = strobe_uleb_put(q, 4);
    q = strobe_uleb_put(q, 7);
    q = strobe_uleb_put(q, 3);
    q = strobe_uleb_put(q, STROBE_BB_LOAD);
    q = strobe_uleb_put(q, strobe_zigzag(STROBE_BB_RECORDED));
    q = strobe_uleb_put(q, 0);
    put_record(p, STROBE_BT_OPS, rec, (size_t)(q - rec));
    struct strobe__blocks *b;
    struct strobe_errbuf eb = {""};
    if (strobe__blocks_decode(buf, sizeof buf, "blocks", &b, &eb) != 0)
        STROBE_FAIL("%s", eb.msg);
    return b;
}

/* MARKs fill chunk 0 to its last byte; chunk 1 starts with a BLOCK whose
 * delta counts from 0 (the reset at the chunk start, no padding between),
 * then NEARs: an elided address (the stride again), a new stride; then
 * padding, and chunk 2 with a NEAR whose id and delta count from 0; a torn
 * record ends the stream. */
STROBE_TEST(byte_level_marks_and_chunks)
{
    struct strobe__blocks *b = one_block_tables();
    static uint8_t buf[4 * 4096];
    memset(buf, 0, sizeof buf);
    uint8_t *p = put_header(buf, STROBE_MAGIC_BLOCKS, 4096);
    for (int i = 0; i < (4096 - 64) / 2; i++) {
        *p++ = STROBE_BB_MARK;
        *p++ = (uint8_t)(i % 128);
    }
    /* id 1, mask 0, address 0x1000 (escape) */
    const uint8_t block_a[] = {3, 0, 0, 0, 0x00, 0x80, 0x00, 0x10, 0, 0, 0, 0};
    const uint8_t block_d[] = {3, 0, 0, 0, 0x10, 0x00};   /* id 1, mask 0, previous + 16 */
    const uint8_t near_same[] = {0x02, 0x01};             /* id + 0, previous + stride */
    const uint8_t near_back[] = {0x02, 0x00, 0xf0, 0xff}; /* id + 0, mask 0, previous - 16 */
    const uint8_t near_next[] = {0x06, 0x00, 0x10, 0x00}; /* id + 1, mask 0, previous + 16 */
    memcpy(p, block_d, sizeof block_d);                   /* chunk 1: 0 + 16 */
    p += sizeof block_d;
    memcpy(p, block_a, sizeof block_a); /* 0x1000, stride 0xff0 */
    p += sizeof block_a;
    memcpy(p, block_d, sizeof block_d); /* 0x1010, stride 16 */
    p += sizeof block_d;
    memcpy(p, near_same, sizeof near_same); /* 0x1020 */
    p += sizeof near_same;
    memcpy(p, near_back, sizeof near_back); /* 0x1010, stride -16 */
    p += sizeof near_back;
    memcpy(p, near_same, sizeof near_same); /* 0x1000 */
    p = buf + 2 * 4096;
    memcpy(p, near_next, sizeof near_next); /* chunk 2: id 0 + 1, address 0 + 16 */
    p += sizeof near_next;
    const uint8_t marks[] = {STROBE_BB_MARK, 0xac, 0x02}; /* ticket 300 */
    memcpy(p, marks, sizeof marks);
    p += sizeof marks;
    p[3] = 0x77; /* a torn record: fields, no first byte */
    struct strobe__bbstream *s;
    struct strobe_errbuf eb = {""};
    CHECK_EQ_INT(strobe__bbstream_begin(buf, sizeof buf, "t0.bb", b, &s, &eb), 0);
    struct strobe__bb_event ev;
    for (int i = 0; i < (4096 - 64) / 2; i++) {
        CHECK_EQ_INT(strobe__bbstream_next(s, &ev, &eb), 1);
        CHECK(ev.type == STROBE__BB_MARK && ev.ticket == (uint64_t)(i % 128) &&
              ev.offset == 64 + 2 * (uint64_t)i);
    }
    const uint64_t addr[] = {16, 0x1000, 0x1010, 0x1020, 0x1010, 0x1000, 16};
    for (int i = 0; i < 7; i++) {
        CHECK_EQ_INT(strobe__bbstream_next(s, &ev, &eb), 1);
        CHECK(ev.type == STROBE__BB_BLOCK && ev.id == 1 && ev.naccesses == 1);
        CHECK_EQ_U64(ev.accesses[0].address, addr[i]);
        CHECK(ev.accesses[0].size == 4 && ev.accesses[0].kind == STROBE_BB_LOAD &&
              ev.block->ops[0].line == 7);
    }
    CHECK_EQ_INT(strobe__bbstream_next(s, &ev, &eb), 1);
    CHECK(ev.type == STROBE__BB_MARK && ev.ticket == 300);
    CHECK_EQ_INT(strobe__bbstream_next(s, &ev, &eb), 0);
    strobe__bbstream_close(s);

    /* the same torn bytes with a chunk after them: damage, not a torn tail */
    buf[3 * 4096] = STROBE_BB_MARK;
    CHECK_EQ_INT(strobe__bbstream_begin(buf, sizeof buf, "t0.bb", b, &s, &eb), 0);
    int rc;
    while ((rc = strobe__bbstream_next(s, &ev, &eb)) == 1)
        ;
    CHECK(rc < 0);
    char want[128];
    snprintf(want, sizeof want, "t0.bb: offset %zu: non-zero byte in chunk padding", (size_t)(p + 3 - buf));
    CHECK_STR_EQ(eb.msg, want);
    strobe__bbstream_close(s);
    strobe__blocks_free(b);
}

/* A block (address 0x1000), then again (0x1010: stride 16), then a
 * REPEAT of 3 runs (0x1020, 0x1030, 0x1040, reported at the REPEAT's
 * offset), a NEAR at the stride again (0x1050); then the errors: a count
 * of 0, a count cut by the end of its chunk. */
STROBE_TEST(byte_level_repeat)
{
    struct strobe__blocks *b = one_block_tables();
    static uint8_t buf[2 * 4096];
    memset(buf, 0, sizeof buf);
    uint8_t *p = put_header(buf, STROBE_MAGIC_BLOCKS, 4096);
    /* id 1 at 0x1000 (escape); NEAR + 16; REPEAT 3 more runs; NEAR, the stride */
    const uint8_t records[] = {3,    0, 0, 0, 0x00, 0x80, 0x00, 0x10, 0, 0, 0, 0, 0x02, 0x00, 0x10, 0x00,
                               0x08, 3, 0x02, 0x01};
    memcpy(p, records, sizeof records);
    struct strobe__bbstream *s;
    struct strobe_errbuf eb = {""};
    CHECK_EQ_INT(strobe__bbstream_begin(buf, sizeof buf, "t0.bb", b, &s, &eb), 0);
    struct strobe__bb_event ev;
    const uint64_t addr[] = {0x1000, 0x1010, 0x1020, 0x1030, 0x1040, 0x1050};
    const uint64_t off[] = {64, 76, 80, 80, 80, 82};
    for (int i = 0; i < 6; i++) {
        CHECK_EQ_INT(strobe__bbstream_next(s, &ev, &eb), 1);
        CHECK(ev.type == STROBE__BB_BLOCK && ev.id == 1 && ev.naccesses == 1);
        CHECK_EQ_U64(ev.accesses[0].address, addr[i]);
        CHECK_EQ_U64(ev.offset, off[i]);
        CHECK_EQ_INT(ev.accesses[0].how, STROBE__BB_ADDR_RECORDED);
    }
    CHECK_EQ_INT(strobe__bbstream_next(s, &ev, &eb), 0);
    CHECK_EQ_U64(strobe__bbstream_bytes(s), sizeof records);
    strobe__bbstream_close(s);

    buf[64 + 17] = 0; /* count 0 */
    CHECK_EQ_INT(strobe__bbstream_begin(buf, sizeof buf, "t0.bb", b, &s, &eb), 0);
    int rc;
    while ((rc = strobe__bbstream_next(s, &ev, &eb)) == 1)
        ;
    CHECK_STR_EQ(eb.msg, "t0.bb: offset 80: REPEAT record: count 0");
    strobe__bbstream_close(s);

    /* a REPEAT cut by its chunk's end, after MARKs and a block */
    memcpy(buf + 64, "\x04\x80\x01", 3); /* one 3-byte MARK, then 2-byte ones */
    for (p = buf + 67; p < buf + 4096 - 13; p += 2)
        memcpy(p, "\x04\x00", 2);
    memcpy(buf + 4096 - 13, records, 12);
    buf[4096 - 1] = STROBE_BB_REPEAT;
    buf[4096] = STROBE_BB_MARK;
    CHECK_EQ_INT(strobe__bbstream_begin(buf, sizeof buf, "t0.bb", b, &s, &eb), 0);
    while ((rc = strobe__bbstream_next(s, &ev, &eb)) == 1)
        ;
    CHECK_STR_EQ(eb.msg, "t0.bb: offset 4095: REPEAT record runs past its chunk");
    strobe__bbstream_close(s);
    strobe__blocks_free(b);
}

STROBE_TEST_MAIN(STROBE_CASE(loop_exact), STROBE_CASE(threads_own_streams), STROBE_CASE(small_chunks), STROBE_CASE(size_limit_flight),
                 STROBE_CASE(size_limit), STROBE_CASE(fork_child), STROBE_CASE(killed),
                 STROBE_CASE(no_runtime), STROBE_CASE(other_abi_stops), STROBE_CASE(report_summary),
                 STROBE_CASE(cursor_not_exported), STROBE_CASE(cc_threads), STROBE_CASE(cc_killed),
                 STROBE_CASE(damaged), STROBE_CASE(byte_level_marks_and_chunks),
                 STROBE_CASE(byte_level_repeat))
