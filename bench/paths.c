/* SPDX-License-Identifier: MIT */
/*
 * The profile-export workload of `make bench` (bench/export.sh): a call
 * tree with many distinct call paths. Sixteen instrumented functions f0..f15
 * each call three others (f_{(5i + k) mod 16}, k = 0..2) down to DEPTH
 * levels, so one walk from f0 visits 3^0 + ... + 3^DEPTH call paths, all
 * distinct; THREADS threads each walk the same tree, so the merged profile
 * has every path on every thread.
 *
 * Usage: strobe-bench-paths DEPTH THREADS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINST __attribute__((no_instrument_function))

static int depth;
static _Thread_local volatile unsigned long leaves;

typedef void (*fn)(int);
static const fn table[16];

NOINST static void descend(int d, int i)
{
    if (d == 0) {
        leaves++;
        return;
    }
    for (int k = 0; k < 3; k++)
        table[(5 * i + k) % 16](d - 1);
}

#define F(n)                                                                                                 \
    __attribute__((noinline)) void f##n(int d);                                                              \
    __attribute__((noinline)) void f##n(int d)                                                               \
    {                                                                                                        \
        descend(d, n);                                                                                       \
    }
F(0)
F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)

    static const fn table[16] = {f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15};

NOINST static void *walk(void *arg)
{
    (void)arg;
    f0(depth);
    return NULL;
}

NOINST int main(int argc, char **argv)
{
    if (argc != 3 || (depth = atoi(argv[1])) < 0 || depth > 20 || atoi(argv[2]) < 1 || atoi(argv[2]) > 64) {
        fprintf(stderr, "usage: strobe-bench-paths DEPTH(0-20) THREADS(1-64)\n");
        return 2;
    }
    int n = atoi(argv[2]);
    pthread_t t[64];
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, walk, NULL) != 0)
            return 1;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return 0;
}
