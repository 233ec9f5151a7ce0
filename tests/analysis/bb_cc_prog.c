/* SPDX-License-Identifier: MIT */
/*
 * Built by `strobe cc --trace=bb,mem -O1 -fno-unroll-loops` at test time
 * (test_blocks: cc_*). fill(a, n) stores a[i] = 3 i for i = 0 .. n - 1,
 * one 8-byte store each, in order.
 *
 * usage: bb_cc_prog threads K N | kill N
 *   threads  thread k (1..K) fills an array of N k elements; main prints
 *            "thread k a=A n=N" after the joins
 *   kill     main fills an array of N elements, prints "a=A n=N", then
 *            SIGKILLs itself
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct job {
    long n;
    long *a;
};

__attribute__((noinline)) static void fill(long *a, long n)
{
    for (long i = 0; i < n; i++)
        a[i] = 3 * i;
}

static void *worker(void *p)
{
    struct job *j = p;
    fill(j->a, j->n);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "threads") == 0) {
        int k = atoi(argv[2]);
        pthread_t th[16];
        struct job jobs[16];
        for (int i = 0; i < k && i < 16; i++) {
            jobs[i].n = atol(argv[3]) * (i + 1);
            jobs[i].a = malloc((size_t)jobs[i].n * sizeof(long));
            pthread_create(&th[i], NULL, worker, &jobs[i]);
        }
        for (int i = 0; i < k && i < 16; i++) {
            pthread_join(th[i], NULL);
            printf("thread %d a=%#lx n=%ld\n", i + 1, (unsigned long)jobs[i].a, jobs[i].n);
        }
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "kill") == 0) {
        struct job j = {atol(argv[2]), NULL};
        j.a = malloc((size_t)j.n * sizeof(long));
        fill(j.a, j.n);
        printf("a=%#lx n=%ld\n", (unsigned long)j.a, j.n);
        fflush(stdout);
        raise(SIGKILL);
    }
    return 2;
}
