/* SPDX-License-Identifier: MIT */
/*
 * The program `make demo` measures: a small deterministic multithreaded
 * computation, built with -g -finstrument-functions -pthread and NOT linked
 * with libstrobe (`strobe run` preloads the runtime). It computes pi by the
 * midpoint rule on 4 threads and a Fibonacci number by naive recursion,
 * and always produces exactly these visits:
 *
 *   thread 0 (main)
 *     main                  1
 *       setup               1
 *         fib             177   fib(10) and every call below it; the call
 *                               tree has one path per recursion depth,
 *                               fib > fib > ... 10 levels deep
 *       start_workers       1   creates threads 1..4, then joins them
 *       report              1
 *   threads 1..4 (k = 1, 2, 3, 4)
 *     worker                1
 *       integrate           1
 *         sample       2500*k   (2500, 5000, 7500, 10000)
 *
 * 25000 samples in all; it prints "fib(10) = 55" and pi to 8 decimals, and
 * runs in a few milliseconds.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define THREADS 4

struct part {
    pthread_t thread;
    unsigned k;        /* 1..THREADS */
    long first, count; /* sample indices of this part */
    double sum;
};

static const long total_samples = 2500L * (1 + 2 + 3 + 4);

NOINLINE double sample(long i)
{
    double x = ((double)i + 0.5) / (double)total_samples;
    return 4.0 / (1.0 + x * x);
}

NOINLINE double integrate(long first, long count)
{
    double s = 0;
    for (long i = first; i < first + count; i++)
        s += sample(i);
    return s;
}

NOINLINE void *worker(void *arg)
{
    struct part *p = arg;
    p->sum = integrate(p->first, p->count);
    return NULL;
}

NOINLINE unsigned long fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

NOINLINE unsigned long setup(void)
{
    return fib(10);
}

NOINLINE void start_workers(struct part *parts)
{
    long next = 0;
    for (unsigned k = 1; k <= THREADS; k++) {
        struct part *p = &parts[k - 1];
        p->k = k;
        p->first = next;
        p->count = 2500L * k;
        next += p->count;
        if (pthread_create(&p->thread, NULL, worker, p) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    for (unsigned k = 0; k < THREADS; k++)
        pthread_join(parts[k].thread, NULL);
}

NOINLINE void report(unsigned long f, const struct part *parts)
{
    double sum = 0;
    for (unsigned k = 0; k < THREADS; k++)
        sum += parts[k].sum;
    printf("fib(10) = %lu\npi ~ %.8f (%ld samples on %d threads)\n", f, sum / (double)total_samples,
           total_samples, THREADS);
}

int main(void)
{
    struct part parts[THREADS];
    unsigned long f = setup();
    start_workers(parts);
    report(f, parts);
    return 0;
}
