/* SPDX-License-Identifier: MIT */
/*
 * Preloaded by bench/real.sh next to a tool's own library: measures how
 * long the program itself runs, from this library's constructor to its
 * destructor at exit, so the table can tell the program's time from the
 * whole command's (a tool may work on after the program ends), and the
 * CPU time of all its threads over that time (what it cost when other
 * work on the machine made it wait). Appends "<program name> <ns>
 * <cpu ns>" to the file named by STROBE_BENCH_LIFETIME (every
 * process started with it writes a line: the tool's own too); does
 * nothing without it. Never instrumented: it must add no events.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t start_ns, start_cpu_ns;

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((constructor)) static void lifetime_start(void)
{
    start_ns = clock_ns(CLOCK_MONOTONIC);
    start_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

__attribute__((destructor)) static void lifetime_end(void)
{
    const char *path = getenv("STROBE_BENCH_LIFETIME");
    if (!path || !*path)
        return;
    char line[320];
    int n = snprintf(line, sizeof line, "%.255s %llu %llu\n", program_invocation_short_name,
                     (unsigned long long)(clock_ns(CLOCK_MONOTONIC) - start_ns),
                     (unsigned long long)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - start_cpu_ns));
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, line, (size_t)n);
    (void)w; /* nothing to report to from a destructor; real.sh notices a missing line */
    close(fd);
}
