/* SPDX-License-Identifier: MIT */
/*
 * The flight recorder's workload (`strobe run --max-size`), compiled with
 * -finstrument-functions and NOT linked with libstrobe. Prints one line
 * "fn <name> <address>" per function, then runs
 *
 *   main 1 > loop 1 > tick N       (2N + 2 events: most of them overwritten)
 *   main 1 > marker M              (the last 2M events before main's exit)
 *
 * Usage: core_prog_flight N M [kill | wait FILE]: kill = SIGKILL itself
 * after the marker calls (main open), so the ring is read as the crash
 * left it; wait FILE = then print "ready" and wait (up to 60 s, making no
 * event) until FILE exists, for a dump to be taken meanwhile.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE void tick(void)
{
    sink++;
}

NOINLINE void marker(void)
{
    sink += 2;
}

NOINLINE void loop(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        tick();
}

int main(int argc, char **argv)
{
    printf("fn main %p\nfn loop %p\nfn tick %p\nfn marker %p\n", (void *)main, (void *)loop, (void *)tick,
           (void *)marker);
    fflush(stdout);
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000, m = argc > 2 ? strtoul(argv[2], NULL, 10) : 10;
    loop(n);
    for (unsigned long i = 0; i < m; i++)
        marker();
    if (argc > 3 && strcmp(argv[3], "kill") == 0)
        raise(SIGKILL);
    if (argc > 4 && strcmp(argv[3], "wait") == 0) {
        puts("ready");
        fflush(stdout);
        for (int i = 0; i < 6000 && access(argv[4], F_OK) != 0; i++)
            usleep(10000);
    }
    return 0;
}
