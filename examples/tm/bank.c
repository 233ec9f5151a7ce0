/* SPDX-License-Identifier: MIT */
/*
 * A bank for strobe's transactional memory: 4 tellers move money between
 * 32 accounts in __transaction_atomic blocks, a fifth of the transfers
 * touching the same "house" account (so transactions conflict), while an
 * auditor sums all balances in a read-only transaction and, now and then,
 * logs the sum from a __transaction_relaxed block (I/O: irrevocable).
 *
 *   gcc -O2 -g -fgnu-tm -pthread bank.c -o bank
 *   strobe run --tm -- ./bank          # then: strobe report DIR --tm
 *
 * Deterministic counts (whatever the interleaving): 4 x 20000 transfers
 * and 200 audits = 80200 completed transactions, 20 of them serialized by
 * an irrevocable action (the logged audits); the total balance stays
 * 32 x 1000. Rollbacks depend on timing. The program checks the total and
 * prints the BG/Q-style statistics (<strobe/bgq_tm.h>) when it is linked
 * with -lstrobe-tm or run under `strobe run --tm`.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ACCOUNTS 32
#define TELLERS 4
#define TRANSFERS 20000
#define AUDITS 200
#define HOUSE 0

static long balance[ACCOUNTS];

static void *teller(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg;
    for (int i = 0; i < TRANSFERS; i++) {
        int from = rand_r(&seed) % ACCOUNTS;
        int to = i % 5 == 0 ? HOUSE : rand_r(&seed) % ACCOUNTS;
        long amount = rand_r(&seed) % 50;
        __transaction_atomic {
            if (balance[from] >= amount) {
                balance[from] -= amount;
                balance[to] += amount;
            }
        }
    }
    return NULL;
}

static long audit(FILE *log, int i)
{
    long sum = 0;
    if (i % 10 == 0) {
        __transaction_relaxed {
            for (int a = 0; a < ACCOUNTS; a++)
                sum += balance[a];
            fprintf(log, "audit %d: %ld\n", i, sum); /* I/O: irrevocable */
        }
    } else {
        __transaction_atomic {
            for (int a = 0; a < ACCOUNTS; a++)
                sum += balance[a];
        }
    }
    return sum;
}

/* The TM runtime's statistics, when the program runs on strobe's STM. */
struct tm_report {
    unsigned long thread, transactions, rollbacks, jmv, maxrb, other, cancels;
};
int strobe_tm_get_all_stats(struct tm_report *r) __attribute__((weak));

int main(void)
{
    for (int a = 0; a < ACCOUNTS; a++)
        balance[a] = 1000;
    pthread_t t[TELLERS];
    for (int i = 0; i < TELLERS; i++)
        pthread_create(&t[i], NULL, teller, (void *)(size_t)(i + 1));
    FILE *log = fopen("/dev/null", "w");
    int bad = 0;
    for (int i = 0; i < AUDITS; i++)
        bad += audit(log, i) != ACCOUNTS * 1000;
    for (int i = 0; i < TELLERS; i++)
        pthread_join(t[i], NULL);
    fclose(log);
    long total = 0;
    for (int a = 0; a < ACCOUNTS; a++)
        total += balance[a];
    printf("total %ld (expected %d), %d inconsistent audits\n", total, ACCOUNTS * 1000, bad);
    struct tm_report r;
    if (strobe_tm_get_all_stats && strobe_tm_get_all_stats(&r) == 0)
        printf("strobe-tm: %lu transactions, %lu rollbacks, serialized: %lu irrevocable, %lu max rollbacks, "
               "%lu other\n",
               r.transactions, r.rollbacks, r.jmv, r.maxrb, r.other);
    return total == ACCOUNTS * 1000 && bad == 0 ? 0 : 1;
}
