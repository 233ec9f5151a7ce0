/* SPDX-License-Identifier: MIT */
/*
 * `strobe merge` without MPI (src/cli/cmd_merge.c): two runs of a shell
 * that forks, the second with its clock 10 s behind (the runtime's test
 * hook STROBE_TEST_CLOCK_SHIFT_NS), put on one timebase by their realtime
 * anchors; one input twice (renamed directories, fork parents kept); and
 * the errors: an existing output, a directory that is no experiment,
 * another format version, each one line, exit 1 and nothing left behind.
 * The MPI side is tests/adapters/mpi/test_mpi_clocks.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"

/* <dir>/a, then <dir>/b 10 s behind: a shell and the child it forks. */
static const char *two_runs(const char *name)
{
    const char *dir = strobe_test_tmpdir(name);
    char *out;
    int st = strobe_test_sh(&out,
                            "cd '%s' && rm -rf a b out* empty v2 .out* && " STROBE
                            " run -o a -- sh -c ': & wait' && STROBE_TEST_CLOCK_SHIFT_NS=-10000000000 " STROBE
                            " run -o b -- sh -c ': & wait' 2>&1",
                            dir);
    if (st != 0)
        STROBE_FAIL("strobe run: exit %d: %s", st, out);
    free(out);
    return dir;
}

/* The output of `cmd` in dir (two %s: dir, then script), which must exit
 * with want. */
static char *sh(int want, const char *cmd, const char *dir, const char *script)
{
    char *out;
    int st = strobe_test_sh(&out, cmd, dir, script);
    if (st != want)
        STROBE_FAIL("exit %d, expected %d:\n%s", st, want, out);
    return out;
}

/* Per process: its method, and whether the offset is 10 s within 10 µs;
 * then whether every thread of b begins after every thread of a ended. */
static const char order_script[] =
    "import json,sys\n"
    "d=json.load(sys.stdin); ps=d['processes']; th=d['threads']\n"
    "inp=lambda i: 'ab'[ps[i]['clock_domain']-1]\n"
    "for p in ps: print(inp(p['index']), p['parent'] is None, p['clock_align'], "
    "abs(p['clock_offset_ns']-(1e10 if inp(p['index'])=='b' else 0))<=10000)\n"
    "ea=max(t['end_ns'] for t in th if inp(t['process'])=='a')\n"
    "bb=min(t['begin_ns'] for t in th if inp(t['process'])=='b')\n"
    "print('b after a', bb>=ea)\n";

STROBE_TEST(realtime_anchors)
{
    const char *dir = two_runs("merge_realtime");
    char *out = sh(0, "cd '%s' && " STROBE " merge a b -o out%s", dir, "");
    CHECK_CONTAINS(out, "strobe merge: out: 2 experiments, 4 processes, 4 threads, ");
    CHECK_CONTAINS(out, "  realtime anchors: as close as the hosts' realtime clocks (NTP, PTP) agree\n");
    free(out);
    out = sh(0, "cd '%s' && " STROBE " report out --format json | python3 -c \"%s\"", dir, order_script);
    CHECK_STR_EQ(out, "a True reference True\n"
                      "a False reference True\n"
                      "b True realtime True\n"
                      "b False realtime True\n"
                      "b after a True\n");
    free(out);
    /* as recorded, b's clock puts it 10 s before a */
    free(sh(0, "cd '%s' && " STROBE " merge --no-align a b -o out2 >/dev/null%s", dir, ""));
    out = sh(0, "cd '%s' && " STROBE " report out2 --format json | python3 -c \"%s\"", dir, order_script);
    CHECK_CONTAINS(out, "b True off False\n");
    CHECK_CONTAINS(out, "b after a False\n");
    free(out);
    out = sh(0, "cd '%s' && grep -c '^merge_process: ' out/meta; grep '^clock_align' out2/meta%s", dir, "");
    CHECK_STR_EQ(out, "4\nclock_align: off\n");
    free(out);
}

/* One input twice: the second copy's directories are renamed -m2, and
 * its fork child still has the renamed copy of its parent as parent. */
STROBE_TEST(renamed_processes)
{
    const char *dir = two_runs("merge_renamed");
    free(sh(0, "cd '%s' && " STROBE " merge a a -o out >/dev/null%s", dir, ""));
    char *out = sh(0, "cd '%s' && ls out | sed 's/[0-9][0-9]*/N/g' | LC_ALL=C sort%s", dir, "");
    CHECK_STR_EQ(out, "meta\nproc-N\nproc-N\nproc-N-mN\nproc-N-mN\n");
    free(out);
    out = sh(0, "cd '%s' && " STROBE " report out --format json | python3 -c \"%s\"", dir,
             "import json,sys\n"
             "ps=json.load(sys.stdin)['processes']\n"
             "for p in ps:\n"
             "  if p['parent'] is not None: print(p['dir'].endswith('-m2'), "
             "ps[p['parent']]['dir'].endswith('-m2'))\n");
    CHECK_STR_EQ(out, "False False\nTrue True\n");
    free(out);
}

/* No leftovers: only what the test made is in dir. */
static void check_nothing_left(const char *dir, const char *want)
{
    char *out = sh(0, "cd '%s' && ls -A%s", dir, "");
    CHECK_STR_EQ(out, want);
    free(out);
}

STROBE_TEST(errors_are_one_line)
{
    const char *dir = two_runs("merge_errors");
    /* an output that exists */
    char *out = sh(1, "cd '%s' && mkdir out && " STROBE " merge a b -o out 2>&1%s", dir, "");
    CHECK_STR_EQ(out, "strobe: merge: out: exists (merge into a new directory)\n");
    free(out);
    /* a directory that is no experiment */
    out = sh(1, "cd '%s' && rmdir out && mkdir empty && " STROBE " merge a empty -o out 2>&1%s", dir, "");
    CHECK_STR_EQ(out, "strobe: merge: empty: no proc-* directory: not a strobe experiment or nothing was "
                      "measured\n");
    free(out);
    check_nothing_left(dir, "a\nb\nempty\n");
    /* another format version (the version field of a defs header) */
    out = sh(1,
             "cd '%s' && cp -r b v2 && for f in v2/proc-*/defs; do printf '\\002' | dd of=$f bs=1 seek=8 "
             "conv=notrunc 2>/dev/null; done && " STROBE " merge a v2 -o out 2>&1%s",
             dir, "");
    CHECK_STR_EQ(out, "strobe: merge: a has format version 1, v2 has 2: merge experiments of one version\n");
    free(out);
    check_nothing_left(dir, "a\nb\nempty\nv2\n");
    /* usage */
    out = sh(2, "cd '%s' && " STROBE " merge a b 2>&1%s", dir, "");
    CHECK_STR_EQ(
        out, "strobe: merge: missing -o OUT (the new experiment directory) (see 'strobe merge --help')\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(realtime_anchors), STROBE_CASE(renamed_processes),
                 STROBE_CASE(errors_are_one_line))
