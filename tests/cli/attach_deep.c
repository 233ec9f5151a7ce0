/* SPDX-License-Identifier: MIT */
/*
 * An uninstrumented program whose stack is deeper than the 8 KiB that
 * `strobe record --pid` copies per sample (test_record.c): descend()
 * recurses 100 times with 512 bytes of locals each, then spins in leaf().
 * Prints "ready" once at the bottom (so no sample sees the descent) and
 * runs until killed.
 */
#include <stdio.h>

static volatile int spin = 1; /* never cleared: the program runs until killed */

/* noipa: never inlined, cloned, or turned into a loop */
__attribute__((noipa)) double leaf(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)i * 0.5 / ((double)i + 1.0);
    return x;
}

__attribute__((noipa)) double descend(int depth)
{
    volatile char pad[512];
    pad[depth % 512] = (char)depth;
    if (depth == 0) {
        printf("ready\n");
        fflush(stdout);
        while (spin)
            pad[0] = (char)leaf(1000000);
        return pad[0];
    }
    return descend(depth - 1) + pad[depth % 512];
}

int main(void)
{
    return (int)descend(100);
}
