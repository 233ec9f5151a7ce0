/* SPDX-License-Identifier: MIT */
/* Single statements without braces under parallel, critical, single, master. */
#include <stdio.h>
#include "probe.h"

static int count;

static void bump(void)
{
#pragma omp critical
    count++;
}

int main(void)
{
    int s = 0, m = 0;
#pragma omp parallel num_threads(2)
    bump();
#pragma omp parallel num_threads(2)
#pragma omp single
    s += 7;
#pragma omp parallel num_threads(2)
#pragma omp master
    m = 3;
    LINE_PROBE;
    if (count > 0)
#pragma omp parallel num_threads(2)
#pragma omp critical
        count += 100;
    else
        count = -1;
    printf("nobrace: count=%d s=%d m=%d line=%d\n", count, s, m, __LINE__);
    return 0;
}
