/* SPDX-License-Identifier: MIT */
/* The transfer fixture of test_blame (its unit is written there, keyed
 * by these lines): a callee writing through a pointer parameter (fill),
 * a thread's start routine (worker, a spawn record), a function whose
 * call the test shows from the wrong line (tail: caller unknown), a
 * global. Keep every line where it is. */
#include <pthread.h>
int counter;

static void fill(double *dst, int n)
{
    for (int k = 0; k < n; k++)
        dst[k] = 2.0 * k;
}
static void *worker(void *arg)
{
    double *v = arg;
    v[0] += 1.0;
    counter++;
    return 0;
}
static int tail(int x)
{
    return x + 1;
}
int main(void)
{
    double h[4];
    fill(h, 4);
    pthread_t t;
    pthread_create(&t, 0, worker, h);
    pthread_join(t, 0);
    int r = tail((int)h[1]);
    return r - 3;
}
