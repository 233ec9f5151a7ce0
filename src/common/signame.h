/* SPDX-License-Identifier: MIT */
/* Signal names as users write them (`strobe run --toggle-signal USR1`,
 * STROBE_TOGGLE_SIGNAL): one parser for the runtime and the tools. */
#ifndef STROBE_COMMON_SIGNAME_H
#define STROBE_COMMON_SIGNAME_H

/* Parses "USR1", "SIGUSR1" (any case) or a number into *sig. Refuses
 * (STROBE_ERR_SYNTAX) an unknown name, a number out of 1..SIGRTMAX, and
 * the signals the program cannot hand to strobe: SIGKILL and SIGSTOP
 * (cannot be caught), those of faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT, SIGTRAP, SIGSYS) and SIGPROF (the sampler's). Returns 0. */
int strobe__parse_signal(const char *s, int *sig);

#endif
