/* SPDX-License-Identifier: MIT */
/*
 * Synchronization fixture for `strobe report --locks` (test_locks.c),
 * compiled with -finstrument-functions so acquisitions have call paths.
 * Usage: analysis_locks_prog MODE
 *
 *   mutex    threads t1..t3 (created in order) call bump() 100*k times
 *            (k = thread index), main calls bump() 5 times after joining
 *            them: counted_lock is acquired 600 times from worker > bump and
 *            5 times from main > bump. Meanwhile t1 takes hot_lock and holds
 *            it 30 ms; t2 waits until t1 holds it, then locks it too (exactly
 *            one contended acquisition, ~30 ms of wait); prints
 *            "hot_wait_ns N", how long that lock call took by t2's clock.
 *   barrier  threads t1..t3 wait 3 times on `bar` (episodes 1..3); t1 sleeps
 *            50 ms before its second wait, so t2 and t3 wait ~50 ms there;
 *            prints "slept_ns N", how long the sleep really took, and
 *            "imbalance_ns N", how long before t1 the first of t2 and t3
 *            reached that wait (the longest wait the barrier should see,
 *            give or take the waiters' wake-up), and "longest_wait_ns N",
 *            the longest barrier call the threads timed.
 *   cond     a producer (t1) hands 20000 numbers through a 16-slot queue to
 *            a consumer (t2) under queue_lock with queue_cond; exits 0 when
 *            the consumer's sum is right, 1 otherwise.
 *   misc     main thread only: rwlock `rw` 10 rdlock + 5 wrlock + 1
 *            tryrdlock + 1 timedwrlock, spin lock `spin` 7, semaphore `sem`
 *            3 posts then 3 waits + 1 trywait that fails (not counted),
 *            mutex `misc_lock` 1 timedlock + 1 trylock; each released.
 *   fork     t1 waits on fork_cond; main forks while it waits, and the
 *            child signals fork_cond (whose waiter is the parent's thread)
 *            and exits; then main wakes t1 and joins it.
 *   graph    the task-graph shape: main creates t1..t3, each locks and
 *            unlocks graph_lock twice, waits once on graph_bar (3 threads),
 *            and returns; main joins them in order. Nothing else
 *            synchronizes.
 *   signal   t1 locks sig_lock and waits on sig_cond until main sets
 *            sig_done; main, once t1 waits, locks sig_lock, sets it,
 *            signals sig_cond once and unlocks; then joins t1. Exactly one
 *            wait (barring a spurious wake-up of the condition variable).
 * Synchronization between threads is done with plain atomics where the
 * counts must not change.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

pthread_mutex_t counted_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t misc_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
pthread_spinlock_t spin;
pthread_barrier_t bar;
sem_t sem;

static long counter;
static int hot_held;

NOINLINE void bump(void)
{
    pthread_mutex_lock(&counted_lock);
    counter++;
    pthread_mutex_unlock(&counted_lock);
}

NOINLINE void hold_hot(void)
{
    pthread_mutex_lock(&hot_lock);
    __atomic_store_n(&hot_held, 1, __ATOMIC_RELEASE);
    usleep(30000);
    pthread_mutex_unlock(&hot_lock);
}

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long hot_wait_ns;

NOINLINE void wait_hot(void)
{
    while (!__atomic_load_n(&hot_held, __ATOMIC_ACQUIRE))
        usleep(100);
    long long t0 = mono_ns();
    pthread_mutex_lock(&hot_lock);
    hot_wait_ns = mono_ns() - t0;
    pthread_mutex_unlock(&hot_lock);
}

NOINLINE void *worker(void *arg)
{
    long k = (long)arg;
    if (k == 1)
        hold_hot();
    if (k == 2)
        wait_hot();
    for (long i = 0; i < 100 * k; i++)
        bump();
    return NULL;
}

static long long slept_ns;
static long long arrived_ns[4]; /* at the second wait, by thread 1..3 */
static long long waited_ns[4];  /* the longest wait, by thread 1..3 */

NOINLINE void *barrier_worker(void *arg)
{
    long k = (long)arg;
    for (int e = 1; e <= 3; e++) {
        if (k == 1 && e == 2) {
            long long t0 = mono_ns();
            usleep(50000);
            slept_ns = mono_ns() - t0;
        }
        long long t0 = mono_ns();
        if (e == 2)
            arrived_ns[k] = t0;
        pthread_barrier_wait(&bar);
        if (mono_ns() - t0 > waited_ns[k])
            waited_ns[k] = mono_ns() - t0;
    }
    return NULL;
}

#define QN 16
#define ITEMS 20000
static int queue[QN], queued;
static long consumed;

NOINLINE void *producer(void *arg)
{
    (void)arg;
    for (int i = 1; i <= ITEMS; i++) {
        pthread_mutex_lock(&queue_lock);
        while (queued == QN)
            pthread_cond_wait(&queue_cond, &queue_lock);
        queue[queued++] = i;
        pthread_cond_broadcast(&queue_cond);
        pthread_mutex_unlock(&queue_lock);
    }
    return NULL;
}

NOINLINE void *consumer(void *arg)
{
    (void)arg;
    for (int i = 1; i <= ITEMS; i++) {
        pthread_mutex_lock(&queue_lock);
        while (queued == 0)
            pthread_cond_wait(&queue_cond, &queue_lock);
        consumed += queue[--queued];
        pthread_cond_signal(&queue_cond);
        pthread_mutex_unlock(&queue_lock);
    }
    return NULL;
}

pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t fork_cond = PTHREAD_COND_INITIALIZER;
static int fork_waiting, fork_done;

NOINLINE void *fork_waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&fork_lock);
    __atomic_store_n(&fork_waiting, 1, __ATOMIC_RELEASE);
    while (!fork_done)
        pthread_cond_wait(&fork_cond, &fork_lock);
    pthread_mutex_unlock(&fork_lock);
    return NULL;
}

static int fork_while_waiting(void)
{
    pthread_t t;
    pthread_create(&t, NULL, fork_waiter, NULL);
    while (!__atomic_load_n(&fork_waiting, __ATOMIC_ACQUIRE))
        usleep(100);
    /* t1 holds fork_lock until its wait has begun */
    pthread_mutex_lock(&fork_lock);
    pthread_mutex_unlock(&fork_lock);
    pid_t pid = fork();
    if (pid == 0) {
        pthread_cond_signal(&fork_cond);
        exit(0);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 1;
    pthread_mutex_lock(&fork_lock);
    fork_done = 1;
    pthread_cond_signal(&fork_cond);
    pthread_mutex_unlock(&fork_lock);
    pthread_join(t, NULL);
    return 0;
}

pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_barrier_t graph_bar;

NOINLINE void *graph_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&graph_lock);
        counter++;
        pthread_mutex_unlock(&graph_lock);
    }
    pthread_barrier_wait(&graph_bar);
    return NULL;
}

pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t sig_cond = PTHREAD_COND_INITIALIZER;
static int sig_waiting, sig_done;

NOINLINE void *sig_waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&sig_lock);
    __atomic_store_n(&sig_waiting, 1, __ATOMIC_RELEASE);
    while (!sig_done)
        pthread_cond_wait(&sig_cond, &sig_lock);
    pthread_mutex_unlock(&sig_lock);
    return NULL;
}

static int signal_once(void)
{
    pthread_t t;
    pthread_create(&t, NULL, sig_waiter, NULL);
    while (!__atomic_load_n(&sig_waiting, __ATOMIC_ACQUIRE))
        usleep(100);
    /* t1 holds sig_lock until its wait has begun */
    pthread_mutex_lock(&sig_lock);
    sig_done = 1;
    pthread_cond_signal(&sig_cond);
    pthread_mutex_unlock(&sig_lock);
    pthread_join(t, NULL);
    return 0;
}

static void run_threads(void *(*fn)(void *), void *(*fn2)(void *), int n)
{
    pthread_t t[3];
    for (long k = 1; k <= n; k++)
        pthread_create(&t[k - 1], NULL, fn2 && k == 2 ? fn2 : fn, (void *)k);
    for (int k = 0; k < n; k++)
        pthread_join(t[k], NULL);
}

static struct timespec in_one_second(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    return ts;
}

static int misc(void)
{
    for (int i = 0; i < 10; i++) {
        pthread_rwlock_rdlock(&rw);
        pthread_rwlock_unlock(&rw);
    }
    for (int i = 0; i < 5; i++) {
        pthread_rwlock_wrlock(&rw);
        pthread_rwlock_unlock(&rw);
    }
    struct timespec ts = in_one_second();
    if (pthread_rwlock_tryrdlock(&rw) != 0 || pthread_rwlock_unlock(&rw) != 0 ||
        pthread_rwlock_timedwrlock(&rw, &ts) != 0 || pthread_rwlock_unlock(&rw) != 0)
        return 1;
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    for (int i = 0; i < 7; i++) {
        pthread_spin_lock(&spin);
        pthread_spin_unlock(&spin);
    }
    sem_init(&sem, 0, 0);
    for (int i = 0; i < 3; i++)
        sem_post(&sem);
    for (int i = 0; i < 3; i++)
        if (sem_wait(&sem) != 0)
            return 1;
    if (sem_trywait(&sem) == 0)
        return 1;
    if (pthread_mutex_timedlock(&misc_lock, &ts) != 0 || pthread_mutex_unlock(&misc_lock) != 0 ||
        pthread_mutex_trylock(&misc_lock) != 0 || pthread_mutex_unlock(&misc_lock) != 0)
        return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "mutex") == 0) {
        run_threads(worker, NULL, 3);
        for (int i = 0; i < 5; i++)
            bump();
        printf("hot_wait_ns %lld\n", hot_wait_ns);
        return counter == 605 ? 0 : 1;
    }
    if (strcmp(mode, "barrier") == 0) {
        pthread_barrier_init(&bar, NULL, 3);
        run_threads(barrier_worker, NULL, 3);
        long long first = arrived_ns[2] < arrived_ns[3] ? arrived_ns[2] : arrived_ns[3];
        long long longest = 0;
        for (int k = 1; k <= 3; k++)
            longest = waited_ns[k] > longest ? waited_ns[k] : longest;
        printf("slept_ns %lld\nimbalance_ns %lld\nlongest_wait_ns %lld\n", slept_ns, arrived_ns[1] - first,
               longest);
        return 0;
    }
    if (strcmp(mode, "cond") == 0) {
        run_threads(producer, consumer, 2);
        return consumed == (long)ITEMS * (ITEMS + 1) / 2 ? 0 : 1;
    }
    if (strcmp(mode, "misc") == 0)
        return misc();
    if (strcmp(mode, "fork") == 0)
        return fork_while_waiting();
    if (strcmp(mode, "graph") == 0) {
        pthread_barrier_init(&graph_bar, NULL, 3);
        run_threads(graph_worker, NULL, 3);
        return counter == 6 ? 0 : 1;
    }
    if (strcmp(mode, "signal") == 0)
        return signal_once();
    fprintf(stderr, "usage: analysis_locks_prog mutex|barrier|cond|misc|fork|graph|signal\n");
    return 2;
}
