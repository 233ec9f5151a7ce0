/* SPDX-License-Identifier: MIT */
/* An OpenMP parallel region of 2 threads, each calling work() once
 * (tests/cli/test_cc.c, directives). */
#include <stdio.h>

#include "util.h"

int main(void)
{
    int s = 0;
#pragma omp parallel num_threads(2) reduction(+ : s)
    s += work(10);
    printf("%d\n", s);
    return 0;
}
