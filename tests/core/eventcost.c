/* SPDX-License-Identifier: MIT */
/*
 * Micro-measurement of the runtime's cost per event: a loop calls an empty
 * noinline function, the only one compiled with instrumentation, CALLS
 * times and prints the loop time per call. Run it with and without
 * LD_PRELOAD=libstrobe.so (and STROBE_TRACE=0 / STROBE_PROFILE=0); the
 * difference divided by 2 is the cost of one enter or exit event. Without
 * the preload the hooks are glibc's empty ones, so the baseline includes
 * the two calls the instrumentation itself makes.
 *
 * Usage: core_eventcost [CALLS]   (default 10000000)
 * Prints: calls=N ns_per_call=X.XX
 * (The formal benchmarks are bench/; this is the runtime's own check.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINST __attribute__((no_instrument_function))

__attribute__((noinline)) void empty_function(void)
{
    __asm__ volatile("" ::: "memory");
}

static NOINST double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

NOINST int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 10000000;
    for (long i = 0; i < 1000; i++) /* warm up: registration, first chunk */
        empty_function();
    double t0 = now_ns();
    for (long i = 0; i < calls; i++)
        empty_function();
    double t1 = now_ns();
    printf("calls=%ld ns_per_call=%.2f\n", calls, (t1 - t0) / (double)calls);
    return 0;
}
