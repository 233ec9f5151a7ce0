/* SPDX-License-Identifier: MIT */
/*
 * The seed paper's update kernel four ways (tm_atomic, omp atomic, omp
 * critical, reduction) and a prefix sum with a true dependence under
 * `#pragma speculative for`, and two dependent speculative sections
 * (tests/instrument/test_directives.c). The
 * printed result is the same for every correct execution. With
 * -DBGQ_STATS it also prints the Blue Gene/Q TM/SE statistics.
 */
#include <stdio.h>
#include <stdlib.h>
#ifdef BGQ_STATS /* linked with libstrobe-tm: IBM's query API, unchanged */
#include <strobe/bgq_tm.h>
#endif

#define BINS 16
#define N 2000

static long hist_tm[BINS], hist_atomic[BINS], hist_critical[BINS];

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 10000;
    long sum = 0;
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < iters; i++) {
#pragma tm_atomic /* M_TM */
        {
            hist_tm[(i * 7) % BINS] += i;
        }
    }
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < iters; i++) {
#pragma omp atomic
        hist_atomic[(i * 7) % BINS] += i;
    }
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < iters; i++) {
#pragma omp critical
        hist_critical[(i * 7) % BINS] += i;
    }
#pragma omp parallel for num_threads(4) reduction(+ : sum)
    for (int i = 0; i < iters; i++)
        sum += i;
    long a[N], p[N];
    for (int i = 0; i < N; i++)
        a[i] = i % 7;
    p[0] = a[0];
#pragma speculative for /* M_SPEC */
    for (int i = 1; i < N; i++) /* true dependence */
        p[i] = p[i - 1] + a[i];
    long s1 = 0, s2 = 0;
#pragma speculative sections /* M_SECTIONS */
    {
#pragma speculative section
        s1 = p[N - 1] + 1;
#pragma speculative section
        {
            s2 = s1 * 2; /* reads the first section's result: committed in order */
        }
    }
    long t = 0;
    for (int b = 0; b < BINS; b++)
        t += hist_tm[b] * 3 - hist_atomic[b] - hist_critical[b];
    printf("tm-atomic-critical %ld sum %ld prefix %ld sections %ld\n", t, sum, p[N - 1], s2);
#ifdef BGQ_STATS
    TmReport_t tm;
    SeReport_t se;
    tm_get_all_stats(&tm);
    se_get_all_stats(&se);
    printf("bgq transactions %lu se committed %lu\n", (unsigned long)tm.totalTransactions,
           (unsigned long)(se.totalNONSpecCommitted + se.totalSpecCommitted));
#endif
    return 0;
}
