/* SPDX-License-Identifier: MIT */
/*
 * The fixture of `strobe report --diff` (test_diff.c): its call paths and
 * visit counts are set by its arguments, so two runs differ by known
 * amounts. Built with -finstrument-functions; `strobe run` preloads the
 * runtime.
 *
 *   main                 1
 *     alpha              ALPHA
 *       leaf             2 per alpha
 *     beta               BETA
 *       leaf             1 per beta
 *     slow               1, sleeps SLEEP_MS milliseconds
 *     only_a / only_b    1 when EXTRA says so (a path of one run only)
 *
 * Usage: diff_prog ALPHA BETA SLEEP_MS [a|b]
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

static NOINLINE void leaf(unsigned long x)
{
    sink += x;
}

static NOINLINE void alpha(unsigned long i)
{
    leaf(i);
    leaf(i + 1);
}

static NOINLINE void beta(unsigned long i)
{
    leaf(i);
}

static NOINLINE void slow(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static NOINLINE void only_a(void)
{
    sink++;
}

static NOINLINE void only_b(void)
{
    sink--;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    unsigned long na = strtoul(argv[1], NULL, 10), nb = strtoul(argv[2], NULL, 10);
    for (unsigned long i = 0; i < na; i++)
        alpha(i);
    for (unsigned long i = 0; i < nb; i++)
        beta(i);
    slow(strtol(argv[3], NULL, 10));
    if (argc > 4 && strcmp(argv[4], "a") == 0)
        only_a();
    if (argc > 4 && strcmp(argv[4], "b") == 0)
        only_b();
    return 0;
}
