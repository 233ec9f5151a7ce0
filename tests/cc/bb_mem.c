/* SPDX-License-Identifier: MIT */
/* test_bbpass.c's accesses: fill() stores two fields of each element of a
 * struct array whose addresses main prints first; main then reads and
 * writes a global. */
#include <stdio.h>
#include <stdlib.h>

struct rec {
    int a;
    double b;
    char c[5];
    long d;
};

int counter;

__attribute__((noinline)) void fill(struct rec *r, int n)
{
#pragma clang loop vectorize(disable) interleave(disable) unroll(disable)
    for (int i = 0; i < n; i++) {
        r[i].a = i;     /* FILL_A */
        r[i].d = i * 3; /* FILL_D */
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    struct rec *r = calloc((size_t)n, sizeof *r);
    for (int i = 0; i < n; i++)
        printf("a %p\nd %p\n", (void *)&r[i].a, (void *)&r[i].d);
    printf("counter %p\n", (void *)&counter);
    fill(r, n);
    counter++; /* COUNTER */
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += r[i].a + r[i].d;
    printf("sum %ld\n", sum);
    free(r);
    return 0;
}
