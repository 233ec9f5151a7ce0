/* SPDX-License-Identifier: MIT */
/*
 * Fixture of the task graph's sharing analyses (test_taskgraph.c), built
 * by the test with `strobe cc --trace=bb,mem -O0`. Usage: share_prog MODE
 *
 *   produce  t1 writes buf[0..999] (8 bytes each) and ends; main joins it
 *            and reads them all: t1 -> t0 exactly 8000 bytes, nothing else
 *            shared
 *   false    t1 and t2 meet at a barrier, then increment counters.a and
 *            counters.b (adjacent, one 64-byte line) 100000 times each, and
 *            on until the other has begun (so their tasks overlap in time
 *            whatever the scheduling): the line is a false-sharing
 *            candidate with the lines of the two increments (marked
 *            INCREMENT_A and INCREMENT_B)
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static long buf[1000];
static volatile struct {
    long a, b;
} counters __attribute__((aligned(64)));
static pthread_barrier_t bar;

static void *producer(void *arg)
{
    (void)arg;
    for (long i = 0; i < 1000; i++)
        buf[i] = i;
    return NULL;
}

static void *inc_a(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&bar);
    for (int i = 0; i < 100000 || counters.b == 0; i++)
        counters.a++; /* INCREMENT_A */
    return NULL;
}

static void *inc_b(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&bar);
    for (int i = 0; i < 100000 || counters.a == 0; i++)
        counters.b++; /* INCREMENT_B */
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t1, t2;
    if (argc > 1 && strcmp(argv[1], "produce") == 0) {
        pthread_create(&t1, NULL, producer, NULL);
        pthread_join(t1, NULL);
        long sum = 0;
        for (long i = 0; i < 1000; i++)
            sum += buf[i];
        printf("sum %ld\n", sum);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "false") == 0) {
        pthread_barrier_init(&bar, NULL, 2);
        pthread_create(&t1, NULL, inc_a, NULL);
        pthread_create(&t2, NULL, inc_b, NULL);
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);
        printf("a %ld b %ld\n", counters.a, counters.b);
        return 0;
    }
    fprintf(stderr, "usage: share_prog produce|false\n");
    return 2;
}
