/* SPDX-License-Identifier: MIT */
/*
 * What the end-to-end MPI tests share: the environment mpirun needs here,
 * and running a shell command that must exit with a given status.
 */
#ifndef STROBE_TESTS_ADAPTERS_MPI_LAUNCH_H
#define STROBE_TESTS_ADAPTERS_MPI_LAUNCH_H

#include <stdlib.h>

#include "test.h"

/* Open MPI refuses root without both variables and more ranks than cores
 * without oversubscription; other MPIs ignore them. */
#define MPI_ENV                                                                                              \
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "

/* The output of `fmt` (a shell command with two %s: dir and arg), failing
 * the test unless it exits with `want`. The caller frees it. */
static inline char *run(int want, const char *fmt, const char *dir, const char *arg)
{
    char *out;
    int st = strobe_test_sh(&out, fmt, dir, arg);
    if (st != want)
        STROBE_FAIL("exit %d, expected %d:\n%s", st, want, out);
    return out;
}

#endif
