/* SPDX-License-Identifier: MIT */
/*
 * `strobe run -- mpirun -np 3 rank_prog` end to end: the ranks are
 * measured and numbered from the launcher's environment, the launcher is
 * not (unless --measure-launcher), `strobe report --by rank` has the exact
 * visits of each rank (rank r calls work() r + 1 times, leaf() twice per
 * work()), the OTF2 archive has exactly the location groups "MPI Rank
 * 0..2" in order and the Cube file one location group per rank.
 * Built and run only where CMake finds MPI (the deps target installs Open
 * MPI); mpirun must work then, so nothing here is skipped.
 */
#include <stdbool.h>

#include "launch.h"
#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"

/* Runs the 3-rank job under strobe run in dir/exp (extra: options of
 * strobe run). */
static void run_job(const char *dir, const char *extra)
{
    free(run(0,
             "cd '%s' && " MPI_ENV STROBE " run -o exp %s -- " STROBE_MPIEXEC " " STROBE_MPIEXEC_NP
             " 3 " STROBE_RANK_PROG,
             dir, extra));
}

/* Per process of the JSON report: rank, world size, exe basename. */
static const char processes_script[] =
    "import json,os,sys\n"
    "d=json.load(sys.stdin)\n"
    "for p in d['processes']: print(p['rank'], p['world_size'], os.path.basename(p['exe']))\n";

/* --by rank in JSON: per rank its visits; per call path the visits of
 * each rank and their min/avg/max. */
static const char by_rank_script[] =
    "import json,sys\n"
    "d=json.load(sys.stdin)\n"
    "names=[r['name'] for r in d['regions']]\n"
    "region={n['id']: names[n['region']] for n in d['calltree'] if n['region'] is not None}\n"
    "print(d['by']['key'], d['by']['left_out'])\n"
    "for g in d['by']['groups']: print('rank', g['rank'], 'processes', g['processes'], 'visits', "
    "g['visits'])\n"
    "for c in d['by']['calltree']:\n"
    "  v=c['visits']; print(region[c['id']], v['groups'], v['min'], v['avg'], v['max'])\n";

STROBE_TEST(ranks)
{
    const char *dir = strobe_test_tmpdir("ranks");
    run_job(dir, "");
    /* three process directories, all of rank_prog: none for the launcher */
    char *out = run(0, "cd '%s' && ls -d exp/proc-* | wc -l%s", dir, "");
    CHECK_STR_EQ(out, "3\n");
    free(out);
    out = run(0, "cd '%s' && " STROBE " report exp --format json | python3 -c \"%s\"", dir, processes_script);
    CHECK_STR_EQ(out, "0 3 rank_prog\n1 3 rank_prog\n2 3 rank_prog\n");
    free(out);

    out = run(0, "cd '%s' && " STROBE " report exp --by rank --format json | python3 -c \"%s\"", dir,
              by_rank_script);
    CHECK_STR_EQ(out, "rank 0\n"
                      "rank 0 processes [0] visits 4\n"
                      "rank 1 processes [1] visits 7\n"
                      "rank 2 processes [2] visits 10\n"
                      "main [1, 1, 1] 1 1 1\n"
                      "work [1, 2, 3] 1 2 3\n"
                      "leaf [2, 4, 6] 2 4 6\n");
    free(out);
    /* the text: the same visits per rank, and min/avg/max per call path */
    out = run(0, "cd '%s' && " STROBE " report exp --by rank%s", dir, "");
    CHECK_CONTAINS(out, "\nRanks (3; incl = inclusive time of the top-level regions of their threads)\n");
    CHECK_CONTAINS(out, "\nRank x call path (visits of the first 3 call paths above)\n"
                        "  [1] main (rank_prog.c:29)\n"
                        "  [2]   work (rank_prog.c:23)\n"
                        "  [3]     leaf (rank_prog.c:18)\n"
                        "  rank         [1]         [2]         [3]\n"
                        "  0              1           1           2\n"
                        "  1              1           2           4\n"
                        "  2              1           3           6\n");
    free(out);

    /* the thread table names each thread's rank */
    out = run(0, "cd '%s' && " STROBE " report exp --threads | grep -o ' (rank [0-9]*) ' | sort -u%s", dir, "");
    CHECK_STR_EQ(out, " (rank 0) \n (rank 1) \n (rank 2) \n");
    free(out);

    /* OTF2: exactly one location group per rank, in rank order */
    free(run(0, "cd '%s' && " STROBE " export exp --format otf2 -o otf2%s", dir, ""));
    out = run(0,
              "cd '%s' && otf2-print -G otf2/traces.otf2 | "
              "sed -n 's/^LOCATION_GROUP *\\([0-9]*\\) *Name: \"\\([^\"]*\\)\".*Type: \\([A-Z]*\\).*/\\1 \\2 "
              "\\3/p'%s",
              dir, "");
    CHECK_STR_EQ(out, "0 MPI Rank 0 PROCESS\n1 MPI Rank 1 PROCESS\n2 MPI Rank 2 PROCESS\n");
    free(out);
    /* --ranks: only those ranks' groups; a rank the job did not have is an error */
    free(run(0, "cd '%s' && " STROBE " export exp --format otf2 -o otf2r --ranks 1-2%s", dir, ""));
    out = run(0,
              "cd '%s' && otf2-print -G otf2r/traces.otf2 | "
              "sed -n 's/^LOCATION_GROUP *\\([0-9]*\\) *Name: \"\\([^\"]*\\)\".*/\\2/p'%s",
              dir, "");
    CHECK_STR_EQ(out, "MPI Rank 1\nMPI Rank 2\n");
    free(out);
    out = run(2, "cd '%s' && " STROBE " export exp --format chrome -o r.json --ranks 3%s", dir, "");
    CHECK_STR_EQ(out, "strobe: export: --ranks: exp has no process with MPI rank 3 (see 'strobe export --help')\n");
    free(out);
    /* Cube: one location group per rank, ranked by it */
    free(run(0, "cd '%s' && " STROBE " export exp --format cubex -o exp.cubex%s", dir, ""));
    out = run(0,
              "cd '%s' && tar -xOf exp.cubex anchor.xml | "
              "sed -n '/<locationgroup/,/<type>/{/<name>\\|<rank>/p}' | tr -d '\\n'; echo%s",
              dir, "");
    CHECK_STR_EQ(out, "<name>MPI Rank 0</name><rank>0</rank><name>MPI Rank 1</name><rank>1</rank>"
                      "<name>MPI Rank 2</name><rank>2</rank>\n");
    free(out);
}

/* --measure-launcher: the launcher is measured too, as processes without a
 * rank after the ranks; --by rank leaves them out and says so. */
STROBE_TEST(measure_launcher)
{
    const char *dir = strobe_test_tmpdir("measure_launcher");
    run_job(dir, "--measure-launcher");
    char *out = run(0, "cd '%s' && " STROBE " report exp --format json | python3 -c \"%s\" | sort -u", dir,
                    processes_script);
    /* the launcher and its fork children (between fork and exec) */
    CHECK_STR_EQ(out, "0 3 rank_prog\n1 3 rank_prog\n2 3 rank_prog\nNone None orterun\n");
    free(out);
    out = run(0, "cd '%s' && " STROBE " report exp --format json | python3 -c \"%s\" | sed -n 1,3p", dir,
              processes_script);
    CHECK_STR_EQ(out, "0 3 rank_prog\n1 3 rank_prog\n2 3 rank_prog\n"); /* ranks first */
    free(out);
    out = run(0, "cd '%s' && " STROBE " report exp --by rank | grep '^Ranks'%s", dir, "");
    CHECK(strncmp(out, "Ranks (3; incl = inclusive time of the top-level regions of their threads; ", 75) ==
          0);
    CHECK(strstr(out, " processes without an MPI rank left out)\n") != NULL);
    free(out);
}

/* The launcher ends the job when strobe forwards SIGTERM to it and exits
 * with a status: the run says what ended it. */
STROBE_TEST(launcher_terminated)
{
    const char *dir = strobe_test_tmpdir("launcher_terminated");
    char *out;
    int st = strobe_test_sh(
        &out,
        "cd '%s' && { " MPI_ENV STROBE " run -o exp -- " STROBE_MPIEXEC " " STROBE_MPIEXEC_NP
        " 3 " STROBE_RANK_PROG " hold & pid=$!; i=0; "
        "while [ $(ls -d exp/proc-* 2>/dev/null | wc -l) -lt 3 ] && [ $i -lt 3000 ]; do "
        "sleep 0.01; i=$((i+1)); done; sleep 0.5; kill -TERM $pid; wait $pid; echo \"status=$?\"; }",
        dir);
    CHECK_EQ_INT(st, 0);
    CHECK_CONTAINS(out,
                   "strobe: run: " STROBE_MPIEXEC " exited with status 1 after signal 15 (Terminated)\n");
    CHECK_CONTAINS(out, "\nstatus=1\n");
    free(out);
    out = run(0, "cd '%s' && " STROBE " report exp | grep '^  exit '%s", dir, "");
    CHECK_STR_EQ(out, "  exit             status 1 after signal 15\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(ranks), STROBE_CASE(measure_launcher), STROBE_CASE(launcher_terminated))
