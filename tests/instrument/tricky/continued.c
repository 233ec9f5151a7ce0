/* SPDX-License-Identifier: MIT */
/* Directives continued over several lines with a backslash. */
#include <stdio.h>
#include "probe.h"

int main(void)
{
    long s = 0;
    int last = -1;
#pragma omp parallel for \
    reduction(+:s) \
    lastprivate(last) \
    num_threads(2)
    for (int i = 0; i < 50; i++) {
        s += i;
        last = i;
    }
#pragma omp parallel \
    num_threads(2)
    {
        LINE_PROBE;
#pragma omp \
    critical
        s += 1000;
    }
    printf("continued: s=%ld last=%d line=%d\n", s, last, __LINE__);
    return 0;
}
