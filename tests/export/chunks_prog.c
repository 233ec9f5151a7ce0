/* SPDX-License-Identifier: MIT */
/*
 * The workload of the chunked-trace tests (test_chunks.c), compiled with
 * -finstrument-functions -O0 and run by `strobe run` with 4 KiB chunks:
 *
 *   main 1 > work 1 > leaf N
 *                   > recurse (every 16th iteration, D + 1 deep) > leaf
 *
 * so for N = 4000, D = 40: leaf 4250, recurse 250 * 41 = 10250, work 1,
 * main 1 visits; most chunk boundaries fall inside a recursion.
 *
 * Usage: chunks_prog N D
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE void leaf(void)
{
    sink++;
}

NOINLINE void recurse(unsigned d)
{
    if (d)
        recurse(d - 1);
    else
        leaf();
}

NOINLINE void work(unsigned long n, unsigned d)
{
    for (unsigned long i = 0; i < n; i++) {
        leaf();
        if (i % 16 == 0)
            recurse(d);
    }
}

int main(int argc, char **argv)
{
    work(argc > 1 ? strtoul(argv[1], NULL, 10) : 4000, argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 40);
    return 0;
}
