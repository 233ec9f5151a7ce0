/* SPDX-License-Identifier: MIT */
/* test_bbpass.c's two modules: main (this file) calls twice(), compiled
 * apart (bb_two_lib.c), N times (N = argv[1]). */
#include <stdio.h>
#include <stdlib.h>

int twice(int x);

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    long s = 0;
    for (int i = 0; i < n; i++)
        s += twice(i);
    printf("sum %ld\n", s);
    return 0;
}
