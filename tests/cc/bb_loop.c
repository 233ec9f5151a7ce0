/* SPDX-License-Identifier: MIT */
/* test_bbpass.c's loop: main calls sink() N times (N = argv[1]). */
#include <stdio.h>
#include <stdlib.h>

int total;

__attribute__((noinline)) void sink(int x)
{
    total += x;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    for (int i = 0; i < n; i++)
        sink(i); /* LOOP_CALL */
    printf("total %d\n", total);
    return 0;
}
