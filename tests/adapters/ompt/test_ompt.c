/* SPDX-License-Identifier: MIT */
/*
 * libstrobe-ompt.so end to end: `strobe run --openmp` on omp_prog built by
 * clang -fopenmp (libomp), then the report's regions with their exact
 * visits per thread, source lines and team size, explicit tasks, and the OTF2 export's
 * OpenMP regions, forks and joins; and on the same program
 * built by gcc (libgomp, no OMPT): one notice, a normal run.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"

/* Per region (name:line): total visits and the sorted visits per thread,
 * summed over the call paths (explicit tasks: the total only, any thread
 * may run them); then the metrics of each region. Barriers:
 * their total, and the explicit one alone, since libomp sometimes passes
 * no address for an implicit barrier (the adapter then charges it to the
 * parallel region's line). */
static const char regions_script[] =
    "import json,sys\n"
    "d=json.load(open(sys.argv[1]))\n"
    "regs=d['regions']; mets=d['metrics']\n"
    "tot={}; per={}; met={}\n"
    "for n in d['calltree']:\n"
    "  if n['region'] is None: continue\n"
    "  r=regs[n['region']]; k='%s:%d' % (r['name'], r['line'])\n"
    "  tot[k]=tot.get(k,0)+n['visits']\n"
    "  for t in n['threads']: per.setdefault(k,{}); "
    "per[k][t['thread']]=per[k].get(t['thread'],0)+t['visits']\n"
    "  for m in n['metrics']: met[k+' '+mets[m['metric']]['name']]=(m['count'],m['sum'])\n"
    "bar=[k for k in tot if k.startswith('omp barrier@')]\n"
    "bt={}\n"
    "for k in bar:\n"
    "  for t,v in per[k].items(): bt[t]=bt.get(t,0)+v\n"
    "print('omp barrier (all)', sum(tot[k] for k in bar), sorted(bt.values()))\n"
    "for k in sorted(tot):\n"
    "  if k.startswith('omp task@'): print(k, tot[k])\n"
    "  elif k not in bar or k.endswith(':28'): print(k, tot[k], sorted(per[k].values()))\n"
    "for k in sorted(met): print(k, met[k][0], met[k][1])\n";

STROBE_TEST(constructs_exact)
{
    char *out;
    const char *dir = strobe_test_tmpdir("constructs_exact");
    int st = strobe_test_sh(
        &out, "cd '%s' && " STROBE " run --openmp -o exp -- " STROBE_TEST_BIN_DIR "/omp_prog", dir);
    if (st != 0)
        STROBE_FAIL("strobe run --openmp exited %d:\n%s", st, out);
    CHECK_CONTAINS(out, "1498539\n"); /* the program's own result */
    CHECK(strstr(out, "strobe: --openmp") == NULL);
    free(out);
    st = strobe_test_sh(
        &out, STROBE " report '%s/exp' --format json > '%s/r.json' && python3 -c \"%s\" '%s/r.json'", dir,
        dir, regions_script, dir);
    if (st != 0)
        STROBE_FAIL("report failed (%d):\n%s", st, out);
    /* single: one thread per region runs it, whichever comes first */
    const char *single = strstr(out, "omp single@.omp_outlined.:26 3 [");
    CHECK(single != NULL);
    char want[2048];
    snprintf(want, sizeof want,
             /* per thread: in each of the first 3 regions the loop's,
              * the single's, the explicit and the region's end; in the
              * tasks' region the single's and the region's end */
             "omp barrier (all) 28 [14, 14]\n"
             "omp barrier@.omp_outlined.:28 6 [3, 3]\n"
             "omp critical@.omp_outlined.:23 3000 [1500, 1500]\n"
             "omp implicit task@main:19 6 [3, 3]\n"
             "omp implicit task@main:46 2 [1, 1]\n"
             "omp loop@.omp_outlined.:21 6 [3, 3]\n"
             "omp parallel@main:19 3 [3]\n"
             "omp parallel@main:46 1 [1]\n"
             "omp single@.omp_outlined..6:47 1 [1]\n"
             "%.*s\n"
             /* 8 tasks, each creating one, whose creator is the first's
              * outlined body; then the single's taskwait */
             "omp task@.omp_outlined..6:50 8\n"
             "omp task@.omp_task_entry..5:52 8\n"
             "omp wait@.omp_outlined..6:57 1 [1]\n"
             "omp wait@.omp_outlined.:23 3000 [1500, 1500]\n"
             "omp parallel@main:19 omp team size 3 6\n"
             "omp parallel@main:46 omp team size 1 2\n",
             single ? (int)strcspn(single, "\n") : 0, single ? single : "");
    CHECK_STR_EQ(out, want);
    free(out);
    /* OTF2: the constructs' roles and paradigm, a fork (team of 2) and a
     * join per parallel region */
    st = strobe_test_sh(
        &out,
        STROBE " export '%s/exp' --format otf2 -o '%s/otf2' >/dev/null && cd '%s/otf2' && "
               "otf2-print traces.otf2 | grep -c '^THREAD_FORK .*Model: OPENMP, # Requested Threads: 2$'; "
               "otf2-print traces.otf2 | grep -c '^THREAD_JOIN .*Model: OPENMP$'; "
               "otf2-print -G traces.otf2 | grep -c 'Name: \"omp parallel@main\".*Role: PARALLEL, "
               "Paradigm: OPENMP'; "
               "otf2-print -G traces.otf2 | "
               "grep -c 'Name: \"omp barrier@.*Role: BARRIER, Paradigm: OPENMP, .* Begin: 28,'; "
               "otf2-print -G traces.otf2 | "
               "grep -c 'Name: \"omp task@.*Role: TASK, Paradigm: OPENMP, .* Begin: 5[02],'",
        dir, dir, dir);
    CHECK_EQ_INT(st, 0);
    CHECK_STR_EQ(out, "4\n4\n2\n1\n2\n");
    free(out);
}

STROBE_TEST(libgomp_notice)
{
    char *out;
    const char *dir = strobe_test_tmpdir("libgomp_notice");
    int st = strobe_test_sh(
        &out, "cd '%s' && " STROBE " run --openmp -o exp -- " STROBE_TEST_BIN_DIR "/omp_prog_gomp 2>&1", dir);
    if (st != 0)
        STROBE_FAIL("strobe run --openmp exited %d:\n%s", st, out);
    CHECK_CONTAINS(out, "1498539\n");
    CHECK_CONTAINS(
        out, "strobe: --openmp: the program uses GCC's libgomp, which has no OMPT interface: its "
             "OpenMP constructs are not measured through OMPT (build it with clang -fopenmp, or instrument "
             "its directives: strobe instrument, strobe cc; docs/openmp.md)\n");
    free(out);
}

/* The task graph of omp_tg_prog (its comment): per thread its tasks;
 * edges by kind, and which threads the lock, fork and barrier edges join;
 * the critical section's acquisitions (per thread: the master's path has
 * the parallel region too; sorted, since the table's order is by wait) and
 * the barrier episodes. */
static const char taskgraph_script[] =
    "import json,sys\n"
    "d=json.load(open(sys.argv[1])); g=d['taskgraph']; regs=d['regions']\n"
    "thr={}\n"
    "for t in d['tasks']: thr[t['id']]=t['thread']\n"
    "print('tasks', len(d['tasks']), sorted(list(thr.values()).count(i) for i in set(thr.values())))\n"
    "print('edges', ' '.join('%s %d' % (k, v) for k, v in g['edges'].items()))\n"
    "for k in ('lock', 'fork', 'barrier'):\n"
    "  e=[(thr[x['from']], thr[x['to']]) for x in d['edges'] if x['kind']==k]\n"
    "  print(k, sum(a!=b for a, b in e), 'across threads of', len(e))\n"
    "locks=[]\n"
    "for l in g['locks']:\n"
    "  if l['path']: locks.append('lock %s %d %s' % (l['kind'], l['acquisitions'], ' > '.join('%s:%d' % "
    "(regs[r]['name'], regs[r]['line']) for r in l['path'])))\n"
    "for l in sorted(locks): print(l)\n"
    "teams={}\n"
    "for e in g['barrier_episodes']: teams.setdefault(e['address'], []).append((e['episode'], e['threads'], "
    "e['complete']))\n"
    "for a in sorted(teams): print('team', sorted(teams[a]))\n";

/* Runs omp_tg_prog with 3 threads and KMP_BLOCKTIME=`blocktime` under
 * `strobe run --openmp --taskgraph` in scratch directory `name`; returns
 * taskgraph_script's lines of its graph (malloc'ed). */
static char *omp_taskgraph(const char *name, const char *blocktime)
{
    char *out;
    const char *dir = strobe_test_tmpdir(name);
    int st = strobe_test_sh(&out,
                            "cd '%s' && OMP_NUM_THREADS=3 KMP_BLOCKTIME=%s " STROBE
                            " run --openmp --taskgraph -o exp -- " STROBE_TEST_BIN_DIR "/omp_tg_prog",
                            dir, blocktime);
    if (st != 0)
        STROBE_FAIL("strobe run --openmp --taskgraph exited %d:\n%s", st, out);
    CHECK_CONTAINS(out, "36\n");
    free(out);
    st = strobe_test_sh(
        &out, STROBE " taskgraph '%s/exp' --format json -o '%s/g.json' && python3 -c \"%s\" '%s/g.json'", dir,
        dir, taskgraph_script, dir);
    if (st != 0)
        STROBE_FAIL("strobe taskgraph failed (%d):\n%s", st, out);
    return out;
}

STROBE_TEST(taskgraph_exact)
{
    /* KMP_BLOCKTIME: workers spin between regions, never sleep on a
     * condition variable (whose calls would be tasks of their own) */
    char *out = omp_taskgraph("ompt_taskgraph_exact", "infinite");
    CHECK_STR_EQ(
        out,
        /* tasks end: on the master at libomp's start-up lock and
         * unlock of a pthread mutex, the fork, its 2 creates, the
         * critical section's acquire and release, the 2 arrivals
         * of region 1, the second fork, its arrival, the end; on
         * each worker at its team begin, the acquire, release,
         * the 2 arrivals, the second team begin, its arrival */
        "tasks 26 [7, 7, 12]\n"
        "edges program 23 create 2 join 0 lock 2 barrier 14 cond 0 fork 4\n"
        "lock 2 across threads of 2\n"
        "fork 4 across threads of 4\n"
        "barrier 14 across threads of 14\n"
        "lock mutex 1 omp parallel@main:18 > omp implicit task@main:18 > omp critical@.omp_outlined.:22\n"
        "lock mutex 2 omp implicit task@main:18 > omp critical@.omp_outlined.:22\n"
        /* the explicit barrier and the join of region 1; region
         * 2's join, which the workers leave only at the next
         * region: never */
        "team [(1, 3, True), (2, 3, True)]\n"
        "team [(1, 3, False)]\n");
    free(out);
}

/* KMP_BLOCKTIME=0: libomp's threads sleep in a pthread condition wait
 * inside every barrier (interposed: more tasks, lock and cond edges of
 * libomp's own, their number up to timing), which must not disturb the
 * barrier episodes or the fork edges. */
STROBE_TEST(taskgraph_sleeping_workers)
{
    char *out = omp_taskgraph("ompt_taskgraph_sleeping", "0");
    CHECK_CONTAINS(out, "\nfork 4 across threads of 4\n"
                        "barrier 14 across threads of 14\n");
    CHECK_CONTAINS(out, "\nteam [(1, 3, True), (2, 3, True)]\n"
                        "team [(1, 3, False)]\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(constructs_exact), STROBE_CASE(libgomp_notice), STROBE_CASE(taskgraph_exact),
                 STROBE_CASE(taskgraph_sleeping_workers))
