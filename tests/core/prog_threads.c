/* SPDX-License-Identifier: MIT */
/*
 * Deterministic multithreaded test program, compiled with
 * -finstrument-functions and NOT linked with libstrobe (the tests preload
 * it). Visits per thread:
 *
 *   thread 0 (main):   main 1 > spawn 1
 *   threads 1..4:      worker 1 > compute 10*k (k = thread index) > leaf 2
 *                      per compute
 *
 * Threads are created and joined in order 1..4 by main, so t0's stream
 * holds THREAD_CREATE 1..4 and THREAD_JOIN 1..4 inside spawn. It first
 * prints one line "fn <name> <address>" per function.
 *
 * Usage: core_prog_threads [exit S | c11]
 *   exit S   thread 2 calls exit(S) after its work while main waits in join
 *   c11      then one more thread, started with C11 thrd_create (which the
 *            runtime does not interpose): worker 1 > compute 10 > leaf 2
 *            per compute, registered on its first event with no parent
 *   pexit    thread 3 calls pthread_exit() in its 5th compute (after its
 *            leaf calls), and main calls pthread_exit() instead of
 *            returning (the process ends with the last thread, status 0)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static _Thread_local volatile unsigned long sink; /* per thread: no race between workers */
static int exit_status = -1;
static int pexit;

NOINLINE void leaf(unsigned long x)
{
    __atomic_fetch_add(&sink, x, __ATOMIC_RELAXED);
}

NOINLINE void compute(unsigned long x, unsigned long k)
{
    leaf(x);
    leaf(x + 1);
    if (pexit && k == 3 && x == 4)
        pthread_exit(NULL);
}

NOINLINE void *worker(void *arg)
{
    unsigned long k = (unsigned long)(uintptr_t)arg;
    for (unsigned long i = 0; i < 10 * k; i++)
        compute(i, k);
    if (k == 2 && exit_status >= 0)
        exit(exit_status);
    return NULL;
}

NOINLINE void spawn(void)
{
    pthread_t th[4];
    for (uintptr_t k = 1; k <= 4; k++)
        if (pthread_create(&th[k - 1], NULL, worker, (void *)k) != 0)
            abort();
    for (int k = 0; k < 4; k++)
        pthread_join(th[k], NULL);
}

NOINLINE int c11_worker(void *arg)
{
    worker(arg);
    return 0;
}

int main(int argc, char **argv)
{
    printf("fn main %p\nfn spawn %p\nfn worker %p\nfn compute %p\nfn leaf %p\n", (void *)main, (void *)spawn,
           (void *)worker, (void *)compute, (void *)leaf);
    fflush(stdout);
    if (argc > 2 && strcmp(argv[1], "exit") == 0)
        exit_status = atoi(argv[2]);
    pexit = argc > 1 && strcmp(argv[1], "pexit") == 0;
    spawn();
    if (pexit)
        pthread_exit(NULL);
    if (argc > 1 && strcmp(argv[1], "c11") == 0) {
        thrd_t t;
        if (thrd_create(&t, c11_worker, (void *)(uintptr_t)1) != thrd_success)
            return 1;
        thrd_join(t, NULL);
    }
    return 0;
}
