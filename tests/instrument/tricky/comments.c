/* SPDX-License-Identifier: MIT */
/* Comments between a directive and its statement, some holding braces. */
#include <stdio.h>
#include "probe.h"

int main(void)
{
    int a = 0, b = 0, c = 0;
#pragma omp parallel num_threads(2) /* { not a brace } */
    /* } a block comment with a closing brace
       on two lines { */
    // } a line comment with a closing brace
    {
        LINE_PROBE;
#pragma omp critical
        // } the critical statement is the next line
        /* } */ a++;
#pragma omp single
        /* { */
        { b += 10; } // }
#pragma omp for reduction(+:c) // {
        /* } */
        for (int i = 0; i < 8; i++)
            c += i; /* } */
    }
    printf("comments: a=%d b=%d c=%d line=%d\n", a, b, c, __LINE__);
    return 0;
}
