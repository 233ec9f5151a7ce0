/* SPDX-License-Identifier: MIT */
/*
 * bench/instrument.sh's program: many small parallel regions, each with a
 * short worksharing loop, a critical section, an atomic update, an explicit
 * barrier and a single, the constructs a directive instrumenter measures.
 * The script builds it uninstrumented, with `strobe instrument` and with
 * OPARI2; prints the process's CPU time of the loop (start-up excluded), the
 * number of construct events (one per construct instance a thread executes:
 * master once per region; the parallel region's implicit task, the loop,
 * critical, atomic, barrier and single once per thread) and a checksum that
 * must be the same in every build.
 *
 *   omp_constructs N   (team size from OMP_NUM_THREADS)
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
    if (argc != 2) {
        fprintf(stderr, "usage: omp_constructs N\n");
        return 2;
    }
    int n = atoi(argv[1]), team = 0;
    long loop = 0, crit = 0, atom = 0, single = 0;
    double t0 = cpu_ns();
    for (int r = 0; r < n; r++) {
#pragma omp parallel reduction(+ : loop)
        {
#pragma omp master
            team = omp_get_num_threads();
#pragma omp for
            for (int i = 0; i < 8; i++)
                loop += i;
#pragma omp critical
            crit++;
#pragma omp atomic
            atom++;
#pragma omp barrier
#pragma omp single
            single++;
        }
    }
    double t = cpu_ns() - t0;
    /* master is one event per region, the others one per thread */
    long events = (long)n * (1 + 6L * team);
    printf("cpu_ns=%.0f events=%ld check=%ld\n", t, events, loop + crit + atom + single);
    return 0;
}
