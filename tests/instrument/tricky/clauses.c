/* SPDX-License-Identifier: MIT */
/* parallel for with reduction, lastprivate, firstprivate, private, schedule. */
#include <stdio.h>
#include "probe.h"

int main(void)
{
    double sum = 0.0;
    long prod = 1;
    int last = 0, base = 5, tmp = 0;
#pragma omp parallel for reduction(+:sum) reduction(*:prod) lastprivate(last) firstprivate(base) private(tmp) schedule(static, 3) num_threads(2)
    for (int i = 1; i <= 12; i++) {
        tmp = base + i;
        sum += tmp * 0.5;
        if (i % 4 == 0)
            prod *= 2;
        last = tmp;
    }
    LINE_PROBE;
    printf("clauses: sum=%.1f prod=%ld last=%d base=%d line=%d\n", sum, prod, last, base, __LINE__);
    return 0;
}
