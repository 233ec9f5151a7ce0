/* SPDX-License-Identifier: MIT */
/*
 * The in-process strobed that fuzz_proto_request answers from and that
 * gen_corpus.c asks for real replies: a daemon built from a fixed YAML
 * text (three samplers of different shapes, nothing listening) and
 * sampled once. Header-only, shared by those two programs.
 */
#ifndef STROBE_TESTS_FUZZ_DAEMON_H
#define STROBE_TESTS_FUZZ_DAEMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strobed/config.h"
#include "strobed/daemon.h"

static const char fuzz_daemon_yaml[] =
    "daemon:\n"
    "  producer: fz\n"
    "  log_level: error\n"
    "samplers:\n"
    "  - plugin: synthetic\n"
    "    name: s1\n"
    "    base: 7\n"
    "  - plugin: synthetic\n"
    "    name: s2\n"
    "    instance: fz/other\n"
    "    metrics: 70\n"
    "  - plugin: loadavg\n";

/* The daemon, or exits: a target without it would fuzz nothing. */
static inline struct strobe__daemon *fuzz_daemon_new(void)
{
    struct strobe__cfg *cfg;
    struct strobe__daemon *d;
    char err[1024];
    if (strobe__cfg_parse(fuzz_daemon_yaml, strlen(fuzz_daemon_yaml), "fuzz.yaml", &cfg, err,
                          sizeof err) < 0 ||
        strobe__daemon_new(cfg, &d, err, sizeof err) < 0) {
        fprintf(stderr, "fuzz daemon: %s\n", err);
        exit(2);
    }
    strobe__daemon_sample_all(d, 1000000000ull);
    return d;
}

#endif
