/* SPDX-License-Identifier: MIT */
/* test_bbpass.c's far ids: main calls f0() (the module's first segment)
 * and f39() (its 40th) N times (N = argv[1]); main's own segments come
 * after the 40 functions'. */
#include <stdio.h>
#include <stdlib.h>

int calls; /* a side effect: the calls stay */

#define F(n)                                                                                                 \
    __attribute__((noinline)) int f##n(int x)                                                                \
    {                                                                                                        \
        calls++;                                                                                             \
        return x + n;                                                                                        \
    }
#define F10(t) F(t##0) F(t##1) F(t##2) F(t##3) F(t##4) F(t##5) F(t##6) F(t##7) F(t##8) F(t##9)
#define F40 F10() F10(1) F10(2) F10(3) extern int calls
F40;

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10, s = 0;
    for (int i = 0; i < n; i++)
        s += f0(i) + f39(i);
    printf("sum %d calls %d\n", s, calls);
    return 0;
}
