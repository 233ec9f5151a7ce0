/* SPDX-License-Identifier: MIT */
/*
 * MPI calls in the trace (`strobe run --mpi`, src/adapters/mpi/trace.c)
 * end to end: the 2-rank ping-pong of pingpong.c under mpirun, then the
 * exact message counts and bytes in `strobe report` (text and JSON) and
 * in `otf2-print` of the OTF2 export. The MPI launcher is the one CMake
 * found (STROBE_MPIEXEC, STROBE_PINGPONG: Open MPI's), or MPICH's for the
 * _mpich build of this test (libstrobe-mpi-mpich.so, chosen by strobe run).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "launch.h"
#include "records.h"
#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"

/* "_mpich" for the MPICH build of this test: its own directories */
#ifndef STROBE_MPI_VARIANT
#define STROBE_MPI_VARIANT ""
#endif

/* The ping-pong measured into <name>/exp (extra: options of strobe run):
 * a directory per case, since ctest runs cases in parallel. */
static const char *experiment_with(const char *name, const char *extra)
{
    const char *dir = strobe_test_tmpdir(name);
    free(run(0,
             "cd '%s' && " MPI_ENV STROBE " run -o exp --mpi %s -- " STROBE_MPIEXEC " " STROBE_MPIEXEC_NP
             " 2 " STROBE_PINGPONG,
             dir, extra));
    return dir;
}

static const char *experiment(const char *name)
{
    return experiment_with(name, "");
}

/* The JSON report's MPI object, exact values only (no times). */
static const char mpi_json_script[] =
    "import json,sys\n"
    "d=json.load(sys.stdin); m=d['mpi']; names=[r['name'] for r in d['regions']]\n"
    "print('ranks', m['ranks'], 'messages', m['messages'], 'bytes', m['bytes'])\n"
    "for r in m['per_rank']: print('rank', r['rank'], r['measured'], r['sent'], r['sent_bytes'], "
    "r['received'], r['received_bytes'], r['calls'])\n"
    "for s in m['sizes']: print('size', s['min_bytes'], s['max_bytes'], s['messages'], s['bytes'])\n"
    "print('matrix', m['matrix_bytes'], m['matrix_messages'])\n"
    "for c in m['collectives']: print(c['name'], c['calls'], c['sent_bytes'], c['received_bytes'])\n"
    "calls={names[f['region']]: f['calls'] for f in m['functions']}\n"
    "for f in ['MPI_Init','MPI_Send','MPI_Recv','MPI_Isend','MPI_Irecv','MPI_Waitall','MPI_Send_init',"
    "'MPI_Start','MPI_Waitany','MPI_Wait','MPI_Request_free','MPI_Comm_dup','MPI_Bcast','MPI_Finalize']:\n"
    "  print(f, calls.get(f))\n";

STROBE_TEST(report_json)
{
    char *out = run(0, "cd '%s' && " STROBE " report exp --format json | python3 -c \"%s\"",
                    experiment("mpi_trace_json" STROBE_MPI_VARIANT), mpi_json_script);
    CHECK_STR_EQ(out, "ranks 2 messages 28 bytes 30848\n"
                      "rank 0 True 14 15424 14 15424 47\n"
                      "rank 1 True 14 15424 14 15424 47\n"
                      "size 64 127 2 128\n"
                      "size 512 1023 4 2048\n"
                      "size 1024 2047 20 20480\n"
                      "size 4096 8191 2 8192\n"
                      "matrix [[0, 15424], [15424, 0]] [[0, 14], [14, 0]]\n"
                      "MPI_Barrier 2 0 0\n"
                      "MPI_Bcast 2 400 400\n"
                      "MPI_Gather 2 32 32\n"
                      "MPI_Allreduce 2 128 128\n"
                      "MPI_Init 2\n"
                      "MPI_Send 22\n"
                      "MPI_Recv 22\n"
                      "MPI_Isend 2\n"
                      "MPI_Irecv 2\n"
                      "MPI_Waitall 2\n"
                      "MPI_Send_init 2\n"
                      "MPI_Start 8\n"
                      "MPI_Waitany 4\n"
                      "MPI_Wait 4\n"
                      "MPI_Request_free 4\n"
                      "MPI_Comm_dup 2\n"
                      "MPI_Bcast 2\n"
                      "MPI_Finalize 2\n");
    free(out);
}

/* The text section: shown without --mpi, its exact tables. */
STROBE_TEST(report_text)
{
    char *out = run(0,
                    "cd '%s' && " STROBE " report exp | sed -n '/^MPI (/p; /Message sizes/,/^$/p; "
                    "/Bytes sent/,/^$/p; /Collectives/,$p'%s",
                    experiment("mpi_trace_text" STROBE_MPI_VARIANT), "");
    CHECK_STR_EQ(out, "MPI (2 ranks; 28 point-to-point messages, 30848 bytes, as sent)\n"
                      "  Message sizes (point-to-point, as sent)\n"
                      "  bytes                      messages          bytes\n"
                      "  64-127                            2            128\n"
                      "  512-1023                          4           2048\n"
                      "  1024-2047                        20          20480\n"
                      "  4096-8191                         2           8192\n"
                      "\n"
                      "  Bytes sent (row: sender, column: receiver)\n"
                      "                    0            1\n"
                      "       0            0        15424\n"
                      "       1        15424            0\n"
                      "\n"
                      "  Collectives (over all ranks)\n"
                      "       calls     sent bytes     recv bytes  collective\n"
                      "           2              0              0  MPI_Barrier\n"
                      "           2            400            400  MPI_Bcast\n"
                      "           2             32             32  MPI_Gather\n"
                      "           2            128            128  MPI_Allreduce\n");
    free(out);
}

/* Per OTF2 MPI event type: count and summed Length; then the MPI
 * communicator definitions. */
static const char otf2_script[] =
    "otf2-print otf2/traces.otf2 | awk '/^MPI_/ { n[$1]++; for (i = 1; i < NF; i++) if ($i == \"Length:\") "
    "{ v = $(i + 1); sub(/,/, \"\", v); b[$1] += v } } END { for (k in n) print k, n[k], b[k] + 0 }' | sort; "
    "otf2-print -G otf2/traces.otf2 | awk '/^COMM / && /MPI/ { match($0, /Name: \"[^\"]*\"/); "
    "print \"COMM\", substr($0, RSTART + 6, RLENGTH - 6) }'";

STROBE_TEST(otf2)
{
    const char *dir = experiment("mpi_trace_otf2" STROBE_MPI_VARIANT);
    free(run(0, "cd '%s' && " STROBE " export exp --format otf2 -o otf2 >/dev/null%s", dir, ""));
    char *out = run(0, "cd '%s' && %s", dir, otf2_script);
    CHECK_STR_EQ(out, "MPI_COLLECTIVE_BEGIN 8 0\n"
                      "MPI_COLLECTIVE_END 8 0\n"
                      "MPI_IRECV 6 10240\n"
                      "MPI_IRECV_REQUEST 6 0\n"
                      "MPI_ISEND 6 10240\n"
                      "MPI_ISEND_COMPLETE 6 0\n"
                      "MPI_RECV 22 20608\n"
                      "MPI_SEND 22 20608\n"
                      "COMM \"MPI_COMM_WORLD\"\n"
                      "COMM \"MPI_COMM_SELF of rank 0\"\n"
                      "COMM \"MPI communicator 0.2\"\n"
                      "COMM \"MPI_COMM_SELF of rank 1\"\n");
    free(out);
}

/* Without traces the section has the calls and times of the profiles,
 * and says where the messages are. */
static const char no_trace_script[] =
    "import json,sys\n"
    "d=json.load(sys.stdin); m=d['mpi']; names=[r['name'] for r in d['regions']]\n"
    "print(m['traced'], m['messages'], [r['calls'] for r in m['per_rank']])\n"
    "calls={names[f['region']]: f['calls'] for f in m['functions']}\n"
    "print(calls['MPI_Send'], calls['MPI_Recv'], calls['MPI_Start'])\n";

STROBE_TEST(no_trace)
{
    const char *dir = experiment_with("mpi_trace_no_trace" STROBE_MPI_VARIANT, "--no-trace");
    char *out =
        run(0, "cd '%s' && " STROBE " report exp --format json | python3 -c \"%s\"", dir, no_trace_script);
    CHECK_STR_EQ(out, "False 0 [47, 47]\n22 22 8\n");
    free(out);
    out = run(0, "cd '%s' && " STROBE " report exp | grep -e '^MPI (' -e 'no traces'%s", dir, "");
    CHECK_STR_EQ(out,
                 "MPI (2 ranks)\n"
                 "  no traces in this experiment (STROBE_TRACE=0): messages and collectives live there\n");
    free(out);
}

/* --mpi on an experiment without MPI calls: one line, exit 1. */
STROBE_TEST(report_no_mpi)
{
    const char *dir = strobe_test_tmpdir("mpi_trace_none" STROBE_MPI_VARIANT);
    free(run(0, "cd '%s' && " STROBE " run -o exp -- true%s", dir, ""));
    char *out = run(1, "cd '%s' && " STROBE " report exp --mpi 2>&1 >/dev/null%s", dir, "");
    CHECK_STR_EQ(
        out,
        "strobe: report: exp: --mpi: no MPI calls were recorded (record them with `strobe run --mpi`)\n");
    free(out);
}

static bool is_send(const struct strobe__raw_event *ev)
{
    return ev->mpi.op == STROBE_MPI_SEND;
}

/* A corrupted MPI record or MPI_COMM definition fails the report with one
 * line naming the file, the offset and the problem. */
STROBE_TEST(corrupt_mpi_data_is_one_line_error)
{
    const char *dir = experiment("mpi_trace_corrupt" STROBE_MPI_VARIANT);
    /* a rank's process (MPICH's launcher starts a measured proxy too) */
    char *out = run(0,
                    "cd '%s' && grep -la -e OMPI_COMM_WORLD_RANK -e PMI_RANK exp/proc-*/defs | head -1 | "
                    "xargs dirname | tr -d '\\n'%s",
                    dir, "");
    char evt[4400], defs[4400], want[256];
    snprintf(evt, sizeof evt, "%s/%s/t0.evt", dir, out);
    snprintf(defs, sizeof defs, "%s/%s/defs", dir, out);
    free(out);
    /* an MPI_COMM record with flags 7: its id (0, one byte) comes first */
    long comm = strobe_test_first_def(defs, STROBE_DEF_MPI_COMM);
    CHECK_EQ_INT(strobe_test_sh(NULL, "printf '\\007' | dd of='%s' bs=1 seek=%ld conv=notrunc 2>/dev/null", defs,
                                comm + 3),
                 0);
    out = run(1, "cd '%s' && " STROBE " report exp 2>&1 >/dev/null%s", dir, "");
    snprintf(want, sizeof want, "defs: offset %ld: MPI_COMM record: flags 7, size 2, 1 runs out of range\n",
             comm);
    CHECK_CONTAINS(out, want);
    CHECK(strchr(out, '\n') == out + strlen(out) - 1); /* one line */
    free(out);
    CHECK_EQ_INT(strobe_test_sh(NULL, "printf '\\000' | dd of='%s' bs=1 seek=%ld conv=notrunc 2>/dev/null", defs,
                                comm + 3),
                 0);
    /* an MPI record of an unknown op (11): the op is the first payload
     * byte, after b0, a 1..10-byte delta and the 1-byte length */
    long rec = strobe_test_first_record(evt, STROBE__RAW_MPI, is_send);
    strobe_test_patch_ext_op(evt, rec, 11);
    out = run(1, "cd '%s' && " STROBE " report exp 2>&1 >/dev/null%s", dir, "");
    snprintf(want, sizeof want, "t0.evt: offset %ld: unknown MPI op 11\n", rec);
    CHECK_CONTAINS(out, want);
    CHECK(strchr(out, '\n') == out + strlen(out) - 1);
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(report_json), STROBE_CASE(report_text), STROBE_CASE(otf2),
                 STROBE_CASE(report_no_mpi), STROBE_CASE(no_trace),
                 STROBE_CASE(corrupt_mpi_data_is_one_line_error))
