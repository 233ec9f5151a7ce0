/* SPDX-License-Identifier: MIT */
/* Nested constructs: worksharing, sections, single, critical, barriers and
 * a nested parallel region inside a parallel region. */
#include <omp.h>
#include <stdio.h>
#include "probe.h"

int main(void)
{
    long s = 0;
    int sec = 0, inner = 0, crit = 0;
#pragma omp parallel num_threads(2)
    {
        LINE_PROBE;
#pragma omp for reduction(+:s)
        for (int i = 0; i < 20; i++) {
            for (int j = 0; j < 3; j++) {
#pragma omp critical(inner_crit)
                crit++;
            }
            s += i;
        }
#pragma omp sections
        {
#pragma omp section
            {
#pragma omp atomic
                sec += 1;
            }
#pragma omp section
            {
#pragma omp atomic
                sec += 10;
            }
        }
#pragma omp barrier
#pragma omp single
        {
#pragma omp parallel num_threads(2)
            {
#pragma omp atomic
                inner++;
            }
        }
    }
    printf("nested: s=%ld sec=%d crit=%d inner>=1:%d line=%d\n", s, sec, crit, inner >= 1, __LINE__);
    return 0;
}
