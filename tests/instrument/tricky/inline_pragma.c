/* SPDX-License-Identifier: MIT */
/* _Pragma written inline, in the middle of a line. */
#include <stdio.h>
#include "probe.h"

int main(void)
{
    long s = 0;
    int t = 0;
    _Pragma("omp parallel for reduction(+:s) num_threads(2)") for (int i = 0; i < 100; i++) s += i;
    _Pragma("omp parallel num_threads(2)") { LINE_PROBE; _Pragma("omp atomic") t += 1; }
    printf("inline_pragma: s=%ld t=%d line=%d\n", s, t, __LINE__);
    return 0;
}
