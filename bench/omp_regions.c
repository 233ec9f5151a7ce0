/* SPDX-License-Identifier: MIT */
/*
 * bench/openmp.sh's program: N parallel regions with B explicit barriers
 * each, built with clang -fopenmp (libomp); prints the CPU time of the
 * loop (the process's, so the runtime's recording and its page faults
 * are in it, the start-up is not) in ns per region.
 *
 *   omp_regions N B
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <omp.h>

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: omp_regions N B\n");
        return 2;
    }
    int n = atoi(argv[1]), bars = atoi(argv[2]);
    long sum = 0;
    double t0 = cpu_ns();
    for (int i = 0; i < n; i++) {
#pragma omp parallel reduction(+ : sum)
        {
            sum += omp_get_thread_num() + 1;
            for (int b = 0; b < bars; b++) {
#pragma omp barrier
            }
        }
    }
    double t = cpu_ns() - t0;
    if (sum < n) /* every region ran */
        return 1;
    printf("%.1f\n", t / n);
    return 0;
}
