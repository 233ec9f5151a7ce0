/* SPDX-License-Identifier: MIT */
/*
 * Flight-recorder dumps (`strobe run --max-size --dump-signal SIG`,
 * STROBE_DUMP_SIGNAL): a copy of this process's rings, profiles and defs
 * as they are now into <experiment>/dump-<n>/proc-<pid>/, an experiment of
 * its own that later overwriting cannot touch. The threads go on
 * recording; those that need a new chunk meanwhile wait (the copy holds
 * the process lock, which every chunk switch takes, so no ring chunk is
 * written again while it is copied).
 */
#ifndef STROBE_CORE_DUMP_H
#define STROBE_CORE_DUMP_H

/* Writes the next dump. Runs on the runtime's control thread (pause.c),
 * never in a signal handler. Returns 0 or a negative errno. */
int strobe__flight_dump(void);

#endif
