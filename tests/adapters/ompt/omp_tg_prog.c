/* SPDX-License-Identifier: MIT */
/*
 * The OpenMP task-graph fixture (test_ompt.c, taskgraph_exact): run with
 * OMP_NUM_THREADS=3, one parallel region whose threads each pass one
 * critical section, thread i after sleeping i x 30 ms (in that order, so
 * that the lock edges lead from thread 0 to 1 to 2), then an explicit
 * barrier; then a second parallel region. Prints the sum.
 */
#include <stdio.h>
#include <unistd.h>

#include <omp.h>

static long total;

int main(void)
{
#pragma omp parallel
    {
        int me = omp_get_thread_num();
        usleep(30000 * (useconds_t)me);
#pragma omp critical
        total += me + 1;
#pragma omp barrier
    }
#pragma omp parallel
    {
#pragma omp atomic
        total += 10;
    }
    printf("%ld\n", total);
    return 0;
}
