/* SPDX-License-Identifier: MIT */
/*
 * A -fgnu-tm program with known transactional behaviour, for the TM model
 * tests (run under `strobe run --tm`):
 *   block A (main thread): 1000 transactions, 10 of them cancelled;
 *   block B (main thread): 1 transaction that does I/O (irrevocable);
 *   then thread 1 (culprit) and thread 2 (victim): the victim's one
 *   transaction (block D) is invalidated exactly twice by the culprit's
 *   commits (block C, 2 transactions) and commits at its third attempt.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "strobe/tm.h"

#define PURE __attribute__((transaction_pure))

static long counter, x, y;
static _Atomic int attempts, go, stop;
static pthread_barrier_t barrier;

/* Completed transactions: counted before a commit waits for older
 * transactions (privatization safety), so waiting on it cannot deadlock. */
PURE static unsigned long completed(void)
{
    strobe_tm_report_t r;
    strobe_tm_get_all_stats(&r);
    return r.total_transactions;
}

PURE static void victim_sync(void)
{
    int a = atomic_fetch_add(&attempts, 1) + 1;
    if (a >= 3)
        return;
    unsigned long before = completed();
    atomic_store(&go, a);
    while (completed() == before)
        ;
}

static void register_and_meet(void)
{
    strobe_tm_report_t r;
    strobe_tm_get_stats(&r); /* known to the STM before either transacts */
    pthread_barrier_wait(&barrier);
}

static void *culprit(void *arg)
{
    (void)arg;
    register_and_meet();
    int served = 0;
    while (!atomic_load(&stop)) {
        int g = atomic_load(&go);
        if (g == served)
            continue;
        served = g;
        __transaction_atomic { x++; } /* block C */
    }
    return NULL;
}

static void *victim(void *arg)
{
    (void)arg;
    register_and_meet();
    __transaction_atomic { /* block D */
        long v = x;
        victim_sync();
        y = v + 100;
    }
    return NULL;
}

int main(void)
{
    for (int i = 0; i < 1000; i++)
        __transaction_atomic { /* block A */
            counter++;
            if (i % 100 == 0)
                __transaction_cancel;
        }
    __transaction_relaxed { /* block B */
        printf("counter %ld\n", counter);
    }
    pthread_barrier_init(&barrier, NULL, 2);
    pthread_t c, v;
    pthread_create(&c, NULL, culprit, NULL);
    pthread_create(&v, NULL, victim, NULL);
    pthread_join(v, NULL);
    atomic_store(&stop, 1);
    pthread_join(c, NULL);
    printf("x %ld y %ld\n", x, y);
    return counter == 990 && x == 2 && y == 102 ? 0 : 1;
}
