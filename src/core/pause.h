/* SPDX-License-Identifier: MIT */
/*
 * Pausing and resuming recording: strobe_pause()/strobe_resume() (nesting),
 * the toggle signal (`strobe run --toggle-signal`, STROBE_TOGGLE_SIGNAL)
 * and the timer of `--delay`/`--duration` (STROBE_DELAY, STROBE_DURATION).
 *
 * Recording is one process-wide switch, strobe__rt.gate, which the region
 * hot path reads instead of the runtime's state (runtime.h): each cause of
 * a pause has its own bits in it, and recording goes on when none is set.
 * While paused, region enters and exits and metric samples are not
 * recorded (neither in the trace nor in the profile: a phase left out is
 * left out of both, as with Score-P's recording off) and the sampler
 * takes no samples; the other records (threads, locks, allocations, TM,
 * MPI) are written as usual, so that their own books stay balanced. A
 * region entered before a pause and left during it is recorded in full;
 * one entered during a pause is not recorded at all, even when it is left
 * after it (hotpath.h, api.c).
 *
 * Every change of the recording state is a RECORDING record in defs
 * (format.h), written under the process lock in the order of the changes.
 * The toggle signal's handler only wakes the control thread, which makes
 * the change (async-signal-safe); the timer runs in the same thread, and
 * so do the flight recorder's dumps (the dump signal, dump.h). The control
 * thread exists only when one of them is configured; it is the runtime's
 * own and never measured.
 */
#ifndef STROBE_CORE_PAUSE_H
#define STROBE_CORE_PAUSE_H

/* Start-up, after the overhead measurement (state ACTIVE): applies
 * --delay and starts the control thread when it is needed. Returns 0 or a
 * negative errno (the caller turns measurement off). */
int strobe__pause_start(void);

/* Fork child (system calls only): the parent's control thread is gone;
 * a new one takes over the remaining deadlines. */
void strobe__pause_after_fork_child(void);

#endif
