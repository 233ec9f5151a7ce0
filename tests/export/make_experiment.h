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

#endif
