/* SPDX-License-Identifier: MIT */
/* test_bbpass.c's unrolled loop: at -O2 the unrolled copies index the
 * array with i + 1, i + 2, i + 3 written as adds, or as ors when i is
 * known to be a multiple of 4; those addresses are static offsets of the
 * first copy's. main prints every element's address first. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void fill(long *v, int n)
{
#pragma clang loop vectorize(disable) interleave(disable) unroll_count(4)
    for (int i = 0; i < n; i++)
        v[i] = i; /* UNROLLED */
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    long *v = calloc((size_t)n, sizeof *v);
    for (int i = 0; i < n; i++)
        printf("v %p\n", (void *)&v[i]);
    fill(v, n);
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    printf("sum %ld\n", sum);
    free(v);
    return 0;
}
