/* SPDX-License-Identifier: MIT */
/*
 * Test-only writer of a tiny, fully known experiment directory, encoded
 * byte by byte from src/common/format.h (no runtime involved), so the
 * exporters can be checked against exact expectations.
 *
 * The experiment (one process, pid 4242, clock MONOTONIC: 1 tick = 1 ns;
 * times below are ns after the main thread's start_ticks S):
 *
 *   t0 (tid 4242)  +0 THREAD_BEGIN
 *                  +100  ENTER main             (demo.c:10)
 *                  +200    ENTER compute        (demo.c:20)
 *                  +500    EXIT                 compute 300 ns
 *                  +550    METRIC bytes = 100   (in main)
 *                  +600    ENTER_SAME compute
 *                  +700    EXIT                 compute 100 ns
 *                  +800    THREAD_CREATE t1
 *                  +900    ENTER odd name       (EXPERIMENT_ODD_NAME, no file)
 *                  +1000   EXIT                 100 ns
 *                  +5000   THREAD_JOIN t1
 *                  +6000 EXIT main              main 5900 ns, exclusive 5400 ns
 *                  +6100 THREAD_END
 *   t1 (tid 4243)  +850 THREAD_BEGIN (parent t0)
 *                  +900  ENTER compute
 *                  +910    METRIC bytes = -7
 *                  +1300 EXIT                   compute 400 ns
 *                  +1350 ENTER compute
 *                  +1370 EXIT                   compute 20 ns
 *                  +1450 THREAD_END
 */
#ifndef STROBE_TESTS_EXPORT_MAKE_EXPERIMENT_H
#define STROBE_TESTS_EXPORT_MAKE_EXPERIMENT_H

#include <stdint.h>

#define EXPERIMENT_PID 4242u
#define EXPERIMENT_START_TICKS 1000000000u /* S */
/* Quotes, markup characters, a control character, valid non-ASCII UTF-8
 * and one invalid byte: exercises every branch of the escapers. */
#define EXPERIMENT_ODD_NAME                                                                                  \
    "say \"hi\" <&> \x01 gr\xc3\xb6\xc3\x9f"                                                                 \
    "e \xff!"

/* Creates dir (must not exist or be empty) with meta and proc-4242/{defs,
 * t0.evt,t1.evt}. Returns 0 or -errno. */
int make_experiment(const char *dir);

/*
 * A transactional-memory experiment (one process, pid 4343, MONOTONIC; no
 * MODULE record, so atomic blocks are named atomic@0x<site>):
 *
 *   defs: region 0, kind TM_ATOMIC, site 0x1000
 *   t0  +0    THREAD_BEGIN
 *       +5    TM LOGGING 3              (only when `events`)
 *       +100  ENTER block 0x1000        attempt 1
 *       +150    TM ABORT read_conflict, culprit unknown   (only when `events`)
 *       +160    TM START 2                                (only when `events`)
 *       +200  EXIT                      (commits)
 *       +300  ENTER_SAME, +400 EXIT     (commits at once)
 *       +500  THREAD_CREATE t1, +900 THREAD_JOIN t1
 *       +1000 TM COUNTS t0, site 0x1000: 753000 transactions, 10
 *             rollbacks, serialized 0/1/0, 0 cancels, aborts 6 4 0 0 0 0
 *       +1000 TM COUNTS t1, site 0x2000 (no REGION): 5 transactions, 5
 *             rollbacks, serialized 0/0/0, 1 cancel, 8 causes 1 2 1 1 0 0 9 9
 *       +1100 THREAD_END
 *   t1  +450 THREAD_BEGIN (parent t0), +800 THREAD_END
 *
 * meta has the lines of EXTRA_META ("" for none) after the usual ones.
 * Returns 0 or -errno.
 */
#define TM_EXPERIMENT_PID 4343u
int make_tm_experiment(const char *dir, const char *extra_meta, int events);

#endif
