/* SPDX-License-Identifier: MIT */
/* A deliberate compile error on the statement after a directive: the
 * diagnostic must name this file and the line of `undeclared_in_region`. */
#include <stdio.h>

int main(void)
{
    int s = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp atomic
        s += undeclared_in_region;
    }
    printf("line_error: s=%d\n", s);
    return 0;
}
