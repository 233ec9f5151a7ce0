/* SPDX-License-Identifier: MIT */
/* test_bbpass.c's sampled loop: N calls of sin(), a function the pass did
 * not instrument, from a loop whose segments (at -O0) keep the cursor on
 * the stack, run under `strobe run --sample` (N = argv[1]). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    double s = 0;
    for (int i = 0; i < n; i++)
        s += sin((double)i);
    printf("%s\n", s < (double)n ? "done" : "wrong");
    return 0;
}
