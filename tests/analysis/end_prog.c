/* SPDX-License-Identifier: MIT */
/*
 * Programs whose measurement ends with frames still open (compiled with
 * -finstrument-functions; tests/analysis checks that the profile files and
 * the trace replay charge those frames the same time). Usage:
 *
 *   analysis_end_prog exit    main > work > finish: spins 20 ms, exit(0)
 *   analysis_end_prog worker  a thread runs loop > tick x 1000, then blocks
 *                             in loop forever; main spins 20 ms and returns
 *   analysis_end_prog kill    main > work > finish: spins 20 ms, SIGKILL
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static _Thread_local volatile unsigned long sink; /* per thread: no race between workers */
static atomic_int ticked;

static void spin_ms(long ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        sink++;
        clock_gettime(CLOCK_MONOTONIC, &b);
        /* in ns: a per-field ms count truncates a negative nsec
         * difference toward zero and stopped up to 1 ms early whenever
         * the spin crossed a second */
    } while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ms * 1000000L);
}

NOINLINE void tick(void)
{
    sink++;
}

NOINLINE void *loop(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        tick();
    atomic_store(&ticked, 1);
    for (;;)
        pause(); /* never returns: its frame is open when main ends the process */
    return NULL;
}

NOINLINE void finish(const char *how)
{
    spin_ms(20);
    if (strcmp(how, "kill") == 0)
        raise(SIGKILL);
    exit(0);
}

NOINLINE void work(const char *how)
{
    finish(how);
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "exit";
    if (strcmp(how, "worker") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, loop, NULL) != 0)
            return 1;
        while (!atomic_load(&ticked))
            usleep(100);
        spin_ms(20);
        return 0;
    }
    work(how);
    return 1;
}
