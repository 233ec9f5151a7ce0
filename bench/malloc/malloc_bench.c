/* SPDX-License-Identifier: MIT */
/*
 * The workload of bench/malloc/run.sh: THREADS threads each run PAIRS
 * malloc+free pairs of SIZE bytes (each block written once, so neither call
 * can be optimized away) and print the nanoseconds per pair of the whole
 * loop, wall clock from the first start to the last end. Not instrumented:
 * its allocations belong to the thread root, as in an uninstrumented
 * program (the per-path metric update is the same code for any path).
 *
 *   strobe-bench-malloc PAIRS SIZE THREADS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long pairs;
static size_t size;

static void *loop(void *arg)
{
    (void)arg;
    for (long i = 0; i < pairs; i++) {
        char *volatile p = malloc(size);
        p[0] = (char)i;
        free(p);
    }
    return NULL;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (pairs = atol(argv[1])) <= 0 || (size = (size_t)atol(argv[2])) == 0 ||
        atoi(argv[3]) < 1 || atoi(argv[3]) > 64) {
        fprintf(stderr, "usage: strobe-bench-malloc PAIRS SIZE THREADS(1..64)\n");
        return 2;
    }
    int threads = atoi(argv[3]);
    pthread_t t[64];
    double t0 = now_ns();
    for (int i = 1; i < threads; i++)
        if (pthread_create(&t[i], NULL, loop, NULL) != 0)
            return 1;
    loop(NULL);
    for (int i = 1; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("%.3f\n", (now_ns() - t0) / (double)pairs);
    return 0;
}
