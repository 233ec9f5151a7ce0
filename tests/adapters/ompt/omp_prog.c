/* SPDX-License-Identifier: MIT */
/*
 * The OpenMP fixture of test_ompt.c, built with clang -fopenmp (LLVM's
 * libomp, which has OMPT): 3 parallel regions of 2 threads, each with a
 * loop of 1000 iterations that enter a critical section, a single, an
 * explicit barrier, and thread 1 sleeping 20 ms before the region's end;
 * then one region of 2 threads where one creates 8 explicit tasks (each
 * creating one more) and waits for them. The line numbers of the pragmas
 * are checked by the test.
 */
#include <omp.h>
#include <stdio.h>
#include <unistd.h>
static double sum;
static void tasks(void);
int main(void)
{
    for (int r = 0; r < 3; r++) {
#pragma omp parallel num_threads(2)
        {
#pragma omp for schedule(static)
            for (int i = 0; i < 1000; i++) {
#pragma omp critical
                sum += i;
            }
#pragma omp single
            sum += 1;
#pragma omp barrier
            if (omp_get_thread_num() == 1)
                usleep(20000);
        }
    }
    tasks();
    printf("%.0f\n", sum);
    return 0;
}

static void add(double v)
{
#pragma omp atomic
    sum += v;
}

static void tasks(void)
{
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        for (int i = 0; i < 8; i++) {
#pragma omp task firstprivate(i)
            {
#pragma omp task firstprivate(i)
                add(i);
                add(1);
            }
        }
#pragma omp taskwait
    }
}
