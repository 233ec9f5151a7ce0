/* SPDX-License-Identifier: MIT */
/*
 * An uninstrumented program for `strobe record --pid` (test_record.c,
 * bench/attach.sh): caller() spends about 90 % of its time in hot() and
 * the rest in warm(), forever or for a while, in one or more threads.
 *
 *   attach_prog [THREADS [SECONDS [LATE [main-exits]]]]
 *
 * THREADS threads (default 1) run the loop; it prints "ready" once they
 * all run, starts LATE more (default 0) 0.3 s later, and after SECONDS of
 * wall time (default 0: never) prints the loop's iterations per second of
 * all threads, per second of wall time and per second of the process's
 * CPU time (user + system), and exits. With main-exits, the main thread
 * ends (pthread_exit) once they all run, and the others go on.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_long iterations;
static atomic_int running;

/* not static, and noipa: never inlined, cloned, or found pure and
 * hoisted out of the loop; the tests look for these names */
__attribute__((noipa)) double hot(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)i * 0.5 / ((double)i + 1.0);
    return x;
}

__attribute__((noipa)) double warm(long n)
{
    double x = 1;
    for (long i = 0; i < n; i++)
        x += (double)i / ((double)i * 0.25 + 2.0);
    return x;
}

__attribute__((noipa)) double caller(void)
{
    double a = hot(900000);
    double b = warm(100000);
    return a + b;
}

static void *worker(void *arg)
{
    (void)arg;
    volatile double sink = 0;
    atomic_fetch_add(&running, 1);
    for (;;) {
        sink += caller();
        atomic_fetch_add_explicit(&iterations, 1, memory_order_relaxed);
    }
    return NULL;
}

static int start(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    double seconds = argc > 2 ? atof(argv[2]) : 0;
    int late = argc > 3 ? atoi(argv[3]) : 0;
    bool main_exits = argc > 4 && strcmp(argv[4], "main-exits") == 0;
    if (threads < 1 || threads > 64 || seconds < 0 || late < 0 || late > 64) {
        fprintf(stderr, "usage: attach_prog [THREADS [SECONDS [LATE [main-exits]]]]\n");
        return 2;
    }
    if (start(threads) != 0)
        return 1;
    while (atomic_load(&running) < threads)
        usleep(1000);
    printf("ready\n");
    fflush(stdout);
    if (late) {
        usleep(300000);
        if (start(late) != 0)
            return 1;
    }
    if (main_exits)
        pthread_exit(NULL);
    if (seconds <= 0)
        for (;;)
            pause();
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    long i0 = atomic_load(&iterations);
    usleep((useconds_t)(seconds * 1e6));
    long i1 = atomic_load(&iterations);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    double dc = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
    printf("%.1f %.1f\n", (double)(i1 - i0) / dt, (double)(i1 - i0) / dc);
    return 0;
}
