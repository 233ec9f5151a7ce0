/* SPDX-License-Identifier: MIT */
/*
 * Fixture of the task-graph tests (test_taskgraph.c), compiled with
 * -finstrument-functions so tasks have regions. Usage: taskgraph_prog MODE
 *
 *   graph       main creates t1..t3; each locks `lock` twice (work() in
 *               between) and waits once on `bar` (3 threads), then ends;
 *               main joins them in order. Tasks: main 7 (begin, 3 creates,
 *               3 joins), each worker 6 (lock, unlock, lock, unlock,
 *               arrive | depart, end) = 25. Edges: program 6 + 3 * 5 = 21,
 *               create 3, join 3, lock 5 (every acquisition but the
 *               first), barrier 3 * 2 = 6 (each arrival -> each other
 *               thread's departure).
 *   bottleneck  t1 takes `slow_lock`, meets t2 and t3 at `bar`, then sleeps
 *               100 ms in it; t2 and t3 lock it after `bar` (each ~100 ms
 *               of wait or more); all three also take `fast_lock` 100 times
 *               without sleeping. The barrier, not a polled flag, tells the
 *               waiters the lock is held: polling would be work of theirs
 *               as long as t1 takes to get there, and on a loaded machine
 *               that path could outgrow the hold.
 *   kill        as graph, but main SIGKILLs itself after the barrier
 *               episode instead of joining.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t fast_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_barrier_t bar;

static volatile long counter;
static int departed;

NOINLINE void work(void)
{
    for (int i = 0; i < 1000; i++)
        counter++;
}

NOINLINE void *graph_worker(void *arg)
{
    (void)arg;
    for (int k = 0; k < 2; k++) {
        pthread_mutex_lock(&lock);
        work();
        pthread_mutex_unlock(&lock);
    }
    pthread_barrier_wait(&bar);
    __atomic_add_fetch(&departed, 1, __ATOMIC_RELEASE);
    return NULL;
}

NOINLINE void hold_slow(void)
{
    pthread_mutex_lock(&slow_lock);
    pthread_barrier_wait(&bar);
    usleep(100000);
    pthread_mutex_unlock(&slow_lock);
}

NOINLINE void wait_slow(void)
{
    pthread_barrier_wait(&bar);
    pthread_mutex_lock(&slow_lock);
    work();
    pthread_mutex_unlock(&slow_lock);
}

NOINLINE void *bottleneck_worker(void *arg)
{
    long k = (long)arg;
    for (int i = 0; i < 100; i++) {
        pthread_mutex_lock(&fast_lock);
        counter++;
        pthread_mutex_unlock(&fast_lock);
    }
    if (k == 1)
        hold_slow();
    else
        wait_slow();
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    void *(*fn)(void *) = strcmp(mode, "bottleneck") == 0 ? bottleneck_worker : graph_worker;
    if (strcmp(mode, "graph") && strcmp(mode, "bottleneck") && strcmp(mode, "kill")) {
        fprintf(stderr, "usage: taskgraph_prog graph|bottleneck|kill\n");
        return 2;
    }
    pthread_barrier_init(&bar, NULL, 3);
    pthread_t t[3];
    for (long k = 0; k < 3; k++)
        pthread_create(&t[k], NULL, fn, (void *)(k + 1));
    if (strcmp(mode, "kill") == 0) {
        while (__atomic_load_n(&departed, __ATOMIC_ACQUIRE) < 3)
            usleep(100);
        usleep(10000);
        kill(getpid(), SIGKILL);
    }
    for (int k = 0; k < 3; k++)
        pthread_join(t[k], NULL);
    return 0;
}
