/* SPDX-License-Identifier: MIT */
/*
 * Runtime control of a running strobed, in the spirit of LDMS's
 * ldmsd_controller: list, add and remove samplers, transforms, stores and
 * producers and change their intervals without a restart. The commands
 * come as words (`strobe ctl HOST:PORT sampler add s1 synthetic
 * interval=100ms`, carried by the CTL message of the protocol); entries
 * are checked by the same code as the configuration file. Changes are
 * not written back to any file.
 */
#ifndef STROBE_STROBED_CONTROL_H
#define STROBE_STROBED_CONTROL_H

#include <stddef.h>

struct strobe__daemon;

/* The most words one command may have (the CTL message's limit). */
#define STROBE__CONTROL_MAX_WORDS 64

/* Runs the command words[0..n) (docs/strobed.md, Runtime control).
 * Returns 0 with a malloc'ed reply text in *out (lines ending in '\n'),
 * or a negative code with one line in err; a refused command changes
 * nothing. Thread-safe: commands run one at a time (d->ctl_lock), and
 * not while the daemon starts or after it began to stop. */
int strobe__control_run(struct strobe__daemon *d, char *const *words, size_t n, char **out, char *err,
                        size_t errlen);

#endif
