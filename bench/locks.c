/* SPDX-License-Identifier: MIT */
/*
 * `make bench` (bench/locks.sh): what an uncontended mutex lock+unlock pair
 * costs through the synchronization interposer (src/core/sync.c) compared
 * with bare glibc, in the same process and run. Run it with libstrobe.so
 * preloaded: pthread_mutex_lock/unlock then reach the interposer, while the
 * pointers taken from libc.so.6 itself are the bare functions.
 *
 * Rounds alternate bare and interposed batches of PAIRS pairs (so drift of
 * the machine hits both alike), and a batch of bare trylock+unlock pairs
 * (what trying first would add, src/core/sync.c); it prints the medians
 * over the rounds of the ns per pair of each, and of the per-round
 * difference and ratio:
 *   bare_ns <x> interposed_ns <y> diff_ns <y-x> ratio <y/x> trylock_ns <z>
 * Usage: strobe-bench-locks [PAIRS [ROUNDS]] (default 2000000, 11).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long pairs = argc > 1 ? atol(argv[1]) : 2000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 11;
    if (pairs < 1 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "usage: strobe-bench-locks [PAIRS [ROUNDS]]\n");
        return 2;
    }
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    int (*bare_lock)(pthread_mutex_t *) =
        libc ? (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_lock") : NULL;
    int (*bare_unlock)(pthread_mutex_t *) =
        libc ? (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_unlock") : NULL;
    int (*bare_trylock)(pthread_mutex_t *) =
        libc ? (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_trylock") : NULL;
    if (!bare_lock || !bare_unlock || !bare_trylock) {
        fprintf(stderr, "strobe-bench-locks: cannot find libc's pthread_mutex_lock\n");
        return 1;
    }
    /* the calls the program makes, through the PLT like any program's */
    int (*volatile lock)(pthread_mutex_t *) = pthread_mutex_lock;
    int (*volatile unlock)(pthread_mutex_t *) = pthread_mutex_unlock;
    int (*volatile blk)(pthread_mutex_t *) = bare_lock;
    int (*volatile bunl)(pthread_mutex_t *) = bare_unlock;
    int (*volatile btry)(pthread_mutex_t *) = bare_trylock;
    if (lock == bare_lock)
        fprintf(stderr, "strobe-bench-locks: pthread_mutex_lock is libc's (libstrobe.so not preloaded?)\n");
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    double *diff = malloc(sizeof *diff * (size_t)rounds), *ratio = malloc(sizeof *ratio * (size_t)rounds);
    double *bare = malloc(sizeof *bare * (size_t)rounds), *inter = malloc(sizeof *inter * (size_t)rounds);
    double *tryl = malloc(sizeof *tryl * (size_t)rounds);
    if (!diff || !ratio || !bare || !inter || !tryl)
        return 1;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_ns();
        for (long i = 0; i < pairs; i++) {
            blk(&m);
            bunl(&m);
        }
        double t1 = now_ns();
        for (long i = 0; i < pairs; i++) {
            lock(&m);
            unlock(&m);
        }
        double t2 = now_ns();
        for (long i = 0; i < pairs; i++)
            if (btry(&m) == 0)
                bunl(&m);
        double t3 = now_ns();
        tryl[r] = (t3 - t2) / (double)pairs;
        bare[r] = (t1 - t0) / (double)pairs;
        inter[r] = (t2 - t1) / (double)pairs;
        diff[r] = inter[r] - bare[r];
        ratio[r] = inter[r] / bare[r];
    }
    qsort(bare, (size_t)rounds, sizeof *bare, cmp);
    qsort(inter, (size_t)rounds, sizeof *inter, cmp);
    qsort(diff, (size_t)rounds, sizeof *diff, cmp);
    qsort(ratio, (size_t)rounds, sizeof *ratio, cmp);
    qsort(tryl, (size_t)rounds, sizeof *tryl, cmp);
    printf("bare_ns %.2f interposed_ns %.2f diff_ns %.2f ratio %.2f trylock_ns %.2f\n", bare[rounds / 2],
           inter[rounds / 2], diff[rounds / 2], ratio[rounds / 2], tryl[rounds / 2]);
    return 0;
}
