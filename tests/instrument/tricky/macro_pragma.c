/* SPDX-License-Identifier: MIT */
/* An OpenMP directive that only exists in a macro's expansion. */
#include <stdio.h>
#include "probe.h"

#define PAR _Pragma("omp parallel num_threads(2)")
#define CRIT _Pragma("omp critical")

int main(void)
{
    int n = 0, s = 0;
    PAR
    {
        LINE_PROBE;
        CRIT
        n++;
#pragma omp atomic
        s += 5;
    }
    printf("macro_pragma: n=%d s=%d line=%d\n", n, s, __LINE__);
    return 0;
}
