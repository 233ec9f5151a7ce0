/* SPDX-License-Identifier: MIT */
/*
 * Clocks of MPI ranks put on one timebase (src/adapters/mpi/clocks.c,
 * src/analysis/align.c, `strobe merge`): the two ranks of clock_prog.c,
 * each measured by its own `strobe run --mpi`, rank 1's clock shifted by
 * 50 ms (and drifting 1000 ppm) through the runtime's test hooks. After
 * `strobe merge` every one of the 40 messages is received after it was
 * sent, the offset found is the shift within 10 µs and the bound the
 * report states is within 10 µs too; `--no-align` shows the shift.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "launch.h"
#include "records.h"
#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"

/* The two ranks, rank 1 with the environment assignments rank1 (an MPMD
 * launch: `mpirun -np 1 A : -np 1 env ... A`), each into its own
 * experiment <dir>/r<rank>. */
static const char *ranks(const char *name, const char *rank1)
{
    const char *dir = strobe_test_tmpdir(name);
    free(run(0,
             "cd '%s' && rm -rf r0 r1 out raw && " MPI_ENV STROBE_MPIEXEC " " STROBE_MPIEXEC_NP " 1 " STROBE
             " run -o r0 --mpi -- " STROBE_CLOCK_PROG " : " STROBE_MPIEXEC_NP " 1 env %s " STROBE
             " run -o r1 --mpi -- " STROBE_CLOCK_PROG " 2>&1",
             dir, rank1));
    return dir;
}

/* Per process: rank, method, whether the offset is `want` ns within `tol`
 * and the bound within 10 µs, and the drift in ppm rounded to 100; then
 * the messages: matched, none received before its send (aligned), the
 * violation as recorded above 10 ms. */
static const char check_script[] =
    "import json,sys\n"
    "d=json.load(sys.stdin); m=d['mpi']; want=float(sys.argv[1]); tol=float(sys.argv[2])\n"
    "for p in d['processes']:\n"
    "  o=want if p['rank']==1 else 0\n"
    "  print(p['rank'], p['clock_align'], abs(p['clock_offset_ns']-o)<=tol, p['clock_bound_ns']<=10000, "
    "int(round(p['clock_drift_ppm']/100.0))*100)\n"
    "print(m['messages'], m['matched_messages'], m['skew_ns']<=0, m['skew_unaligned_ns']>10000000)\n";

#define CHECK_JSON(dir, exp, want)                                                                           \
    run(0, "cd '%s' && " STROBE " report " exp " --format json | python3 -c \"%s\" " want, dir, check_script)

/* Rank 1 50 ms ahead: the merged report puts it back. */
STROBE_TEST(merge_shifted_rank)
{
    const char *dir = ranks("mpi_clocks_shift", "STROBE_TEST_CLOCK_SHIFT_NS=50000000");
    char *out = run(0, "cd '%s' && " STROBE " merge r0 r1 -o out%s", dir, "");
    CHECK_CONTAINS(out, "  offsets: within ±");
    CHECK_CONTAINS(out,
                   "  messages: 40 matched; the most a receive ends before its send started: none aligned, ");
    free(out);
    out = CHECK_JSON(dir, "out", "-50000000 10000");
    CHECK_STR_EQ(out, "0 reference True True 0\n"
                      "1 mpi True True 0\n"
                      "40 40 True True\n");
    free(out);
    /* without alignment the shift shows: a receive 50 ms before its send */
    out = run(0, "cd '%s' && " STROBE " merge --no-align r0 r1 -o raw | tail -1%s", dir, "");
    CHECK_CONTAINS(out, "the most a receive ends before its send started: 49.");
    CHECK_CONTAINS(out, "(clocks not aligned)");
    free(out);
    out = CHECK_JSON(dir, "raw", "0 10000");
    CHECK_STR_EQ(out, "0 off True True 0\n"
                      "1 off True True 0\n"
                      "40 40 False True\n");
    free(out);
    /* one rank twice: two jobs, whose messages cannot be told apart */
    out = run(1, "cd '%s' && " STROBE " merge r0 r0 -o dup 2>&1; echo $?; ls -A | grep -c dup%s", dir, "");
    CHECK_STR_EQ(
        out,
        "strobe: merge: r0 and r0 both hold MPI rank 0: only the ranks of one job can be merged\n1\n0\n");
    free(out);
}

/* Rank 1 20 ms behind and gaining 1000 ppm: the offsets at MPI_Init and at
 * MPI_Finalize differ by the drift, and the line through them keeps every
 * message in order from the first to the last. */
STROBE_TEST(merge_drifting_rank)
{
    const char *dir =
        ranks("mpi_clocks_drift", "STROBE_TEST_CLOCK_SHIFT_NS=-20000000 STROBE_TEST_CLOCK_DRIFT_PPM=1000");
    free(run(0, "cd '%s' && " STROBE " merge r0 r1 -o out >/dev/null%s", dir, ""));
    /* the offset at MPI_Init is the shift and the drift since the process
     * started (1000 ppm of MPI_Init's time, under 5 ms) */
    char *out = CHECK_JSON(dir, "out", "20000000 5000000");
    CHECK_STR_EQ(out, "0 reference True True 0\n"
                      "1 mpi True True -1000\n"
                      "40 40 True True\n");
    free(out);
}

/* The runtime's records: at MPI_Init and at MPI_Finalize, rank 0's own
 * (no round trip) and rank 1's after at least 10 round trips. */
STROBE_TEST(offset_records)
{
    const char *dir = ranks("mpi_clocks_records", "STROBE_TEST_CLOCK_SHIFT_NS=1");
    for (int r = 0; r < 2; r++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/r%d", dir, r);
        struct strobe_experiment *exp = strobe_test_open_experiment(path);
        CHECK_EQ_INT((int)exp->nprocesses, 1);
        struct strobe__defs d;
        struct strobe_errbuf eb = {""};
        CHECK_EQ_INT(strobe__process_defs(exp, 0, &d, &eb), 0);
        for (int k = 0; k < 2; k++) {
            CHECK(d.have_offset[k]);
            CHECK_EQ_INT((int)d.offsets[k].rank, r);
            CHECK_EQ_INT((int)d.offsets[k].reference, 0);
            CHECK(r ? d.offsets[k].trips >= 10 && d.offsets[k].trips <= 200 : d.offsets[k].trips == 0);
            CHECK(r ? d.offsets[k].rtt > 0 : d.offsets[k].rtt == 0);
        }
        strobe__defs_free(&d);
        strobe_experiment_close(exp);
    }
    /* an unknown `when` is one line naming the file and offset */
    char defs[4200], want[256];
    char *proc = run(0, "cd '%s/r1' && ls -d proc-*%s", dir, "");
    proc[strcspn(proc, "\n")] = 0;
    snprintf(defs, sizeof defs, "%s/r1/%s/defs", dir, proc);
    long rec = strobe_test_first_def(defs, STROBE_DEF_CLOCK_OFFSET);
    CHECK_EQ_INT(strobe_test_sh(NULL, "printf '\\003' | dd of='%s' bs=1 seek=%ld conv=notrunc 2>/dev/null",
                                defs, rec + 2),
                 0);
    char *out = run(1, "cd '%s' && " STROBE " report r1 2>&1 >/dev/null%s", dir, "");
    snprintf(want, sizeof want, "strobe: report: %s/defs: offset %ld: CLOCK_OFFSET record: unknown when 3\n",
             proc, rec);
    CHECK_STR_EQ(out, want);
    free(out);
    free(proc);
}

/* One `strobe run` of both ranks, rank 1's clock shifted: the report of
 * that one experiment aligns it by the same offsets. */
STROBE_TEST(single_experiment_aligned)
{
    const char *dir = strobe_test_tmpdir("mpi_clocks_single");
    free(run(0,
             "cd '%s' && rm -rf exp && " MPI_ENV STROBE " run -o exp --mpi -- " STROBE_MPIEXEC
             " " STROBE_MPIEXEC_NP " 1 " STROBE_CLOCK_PROG " : " STROBE_MPIEXEC_NP
             " 1 -x %s " STROBE_CLOCK_PROG " 2>&1",
             dir, "STROBE_TEST_CLOCK_SHIFT_NS=50000000"));
    char *out = CHECK_JSON(dir, "exp", "-50000000 10000");
    CHECK_STR_EQ(out, "0 reference True True 0\n"
                      "1 mpi True True 0\n"
                      "40 40 True True\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(merge_shifted_rank), STROBE_CASE(merge_drifting_rank),
                 STROBE_CASE(offset_records), STROBE_CASE(single_experiment_aligned))
