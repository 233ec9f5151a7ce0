/* SPDX-License-Identifier: MIT */
/*
 * Hardware transactions in front of the STM (src/tm/htm.c): results stay
 * right whichever way a transaction commits, and each way out of the
 * hardware (capacity, a system call, a nested block that may cancel, STM
 * transactions running beside) ends on the STM or in serial mode with the
 * right counts. On a processor without RTM (or with STROBE_TM_HTM=0) the
 * same cases check that everything commits on the STM: no hardware
 * commit is counted.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "strobe/tm.h"
#include "test.h"

static strobe_tm_report_t stats(void)
{
    strobe_tm_report_t r;
    CHECK_EQ_INT(strobe_tm_get_all_stats(&r), 0);
    return r;
}

static void run_threads(int n, void *(*fn)(void *))
{
    pthread_t t[8];
    for (long i = 0; i < n; i++)
        CHECK_EQ_INT(pthread_create(&t[i], NULL, fn, (void *)i), 0);
    for (int i = 0; i < n; i++)
        CHECK_EQ_INT(pthread_join(t[i], NULL), 0);
}

/* ---- bank: four threads move money, the total never changes ---- */

#define ACCOUNTS 256
#define TRANSFERS 50000
static long accounts[ACCOUNTS];
static _Atomic long bad_totals;

static void *bank_worker(void *arg)
{
    unsigned s = (unsigned)(long)arg * 7919u + 1;
    for (int i = 0; i < TRANSFERS; i++) {
        s = s * 1103515245u + 12345u;
        int a = (int)(s >> 8) % ACCOUNTS, b = (int)(s >> 20) % ACCOUNTS;
        if ((long)arg == 0 && i % 64 == 0) {
            long total = 0;
            __transaction_atomic
            {
                total = 0;
                for (int k = 0; k < ACCOUNTS; k++)
                    total += accounts[k];
            }
            if (total != 0)
                atomic_fetch_add(&bad_totals, 1);
            continue;
        }
        __transaction_atomic
        {
            accounts[a] -= 3;
            accounts[b] += 3;
        }
    }
    return NULL;
}

STROBE_TEST(bank_keeps_total)
{
    strobe_tm_report_t before = stats();
    run_threads(4, bank_worker);
    long total = 0;
    for (int k = 0; k < ACCOUNTS; k++)
        total += accounts[k];
    CHECK_EQ_INT(total, 0);
    CHECK_EQ_INT(atomic_load(&bad_totals), 0);
    strobe_tm_report_t r = stats();
    CHECK_EQ_INT(r.total_transactions - before.total_transactions, 4L * TRANSFERS);
    if (!strobe_tm_hardware())
        CHECK_EQ_INT(r.total_hw_commits, 0);
    printf("hardware %d: %lu of %lu transactions committed by the hardware, %lu rollbacks\n",
           strobe_tm_hardware(), r.total_hw_commits, r.total_transactions, r.total_rollbacks);
}

static long x_idle;
static _Atomic int idle_stop;

/* keeps the process multithreaded: a thread alone runs serially and never
 * tries the hardware */
static void *idle(void *arg)
{
    __transaction_atomic
    {
        x_idle++;
    }
    while (!atomic_load(&idle_stop))
        usleep(1000);
    return arg;
}

/* Starts the idle thread once it has made its transaction. */
static pthread_t idle_start(void)
{
    pthread_t t;
    CHECK_EQ_INT(pthread_create(&t, NULL, idle, NULL), 0);
    while (stats().total_transactions == 0)
        usleep(1000);
    return t;
}

static void idle_end(pthread_t t)
{
    atomic_store(&idle_stop, 1);
    CHECK_EQ_INT(pthread_join(t, NULL), 0);
}

/* ---- more data than the hardware can track: the STM commits it ---- */

#define BIG (1 << 18) /* 2 MiB of longs */
static long big[BIG];

STROBE_TEST(capacity_falls_back)
{
    pthread_t t = idle_start();
    strobe_tm_report_t before = stats();
    for (int round = 1; round <= 3; round++)
        __transaction_atomic
        {
            for (int i = 0; i < BIG; i++)
                big[i] += i;
        }
    strobe_tm_report_t r = stats();
    idle_end(t);
    for (int i = 0; i < BIG; i++)
        CHECK_EQ_INT(big[i], 3L * i);
    CHECK_EQ_INT(r.total_transactions - before.total_transactions, 3);
    CHECK_EQ_INT(r.total_hw_commits - before.total_hw_commits, 0);
    CHECK_EQ_INT(r.total_serialized_jmv + r.total_serialized_maxrb + r.total_serialized_other, 0);
    /* each tried the hardware, which gave up at the latest at the capacity
     * abort (the first attempts may also meet page faults) */
    if (strobe_tm_hardware())
        CHECK(r.total_rollbacks - before.total_rollbacks >= 3);
    else
        CHECK_EQ_INT(r.total_rollbacks - before.total_rollbacks, 0);
}

/* ---- no conflict, no STM transaction beside: all in hardware ---- */

static long counter;

STROBE_TEST(uncontended_commits_in_hardware)
{
    pthread_t t = idle_start();
    strobe_tm_report_t before = stats();
    for (int i = 0; i < 1000; i++)
        __transaction_atomic
        {
            counter += 2;
        }
    strobe_tm_report_t r = stats();
    idle_end(t);
    CHECK_EQ_INT(counter, 2000);
    CHECK_EQ_INT(r.total_transactions - before.total_transactions, 1000);
    /* an interrupt in the middle of one sends it to the STM now and then */
    if (strobe_tm_hardware())
        CHECK(r.total_hw_commits - before.total_hw_commits >= 990);
    else
        CHECK_EQ_INT(r.total_hw_commits - before.total_hw_commits, 0);
}

/* ---- a system call: the hardware cannot, the transaction goes irrevocable ---- */

static int devnull = -1;
static long calls;

static void *syscall_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++)
        __transaction_relaxed
        {
            calls++;
            if (write(devnull, "x", 1) != 1)
                abort();
        }
    return NULL;
}

STROBE_TEST(syscall_goes_irrevocable)
{
    devnull = open("/dev/null", O_WRONLY);
    CHECK(devnull >= 0);
    strobe_tm_report_t before = stats();
    run_threads(2, syscall_worker);
    CHECK_EQ_INT(calls, 40);
    strobe_tm_report_t r = stats();
    CHECK_EQ_INT(r.total_transactions - before.total_transactions, 40);
    CHECK_EQ_INT(r.total_hw_commits - before.total_hw_commits, 0);
    CHECK_EQ_INT(r.total_serialized_jmv - before.total_serialized_jmv, 40);
    close(devnull);
}

/* ---- a nested block that may cancel: the STM runs the whole transaction,
 * beside hardware transactions of another thread on the same data ---- */

static long x, y;
#define MIXED 20000

static void *cancelling(void *arg)
{
    (void)arg;
    for (long i = 0; i < MIXED; i++)
        __transaction_atomic
        {
            x++;
            __transaction_atomic
            {
                y += 2;
                if (i % 4 == 0)
                    __transaction_cancel;
            }
        }
    return NULL;
}

static void *plain(void *arg)
{
    (void)arg;
    for (long i = 0; i < MIXED; i++)
        __transaction_atomic
        {
            x++;
            y += 2;
        }
    return NULL;
}

static void *mixed(void *arg)
{
    return (long)arg == 0 ? cancelling(arg) : plain(arg);
}

STROBE_TEST(nested_cancel_beside_hardware)
{
    strobe_tm_report_t before = stats();
    run_threads(2, mixed);
    CHECK_EQ_INT(x, 2L * MIXED);
    CHECK_EQ_INT(y, 2L * (MIXED + MIXED - MIXED / 4));
    strobe_tm_report_t r = stats();
    CHECK_EQ_INT(r.total_transactions - before.total_transactions, 2L * MIXED);
    /* only the plain thread's transactions can commit in hardware */
    CHECK(r.total_hw_commits - before.total_hw_commits <= MIXED);
}

/* ---- STROBE_TM_HTM=0 (registered with that environment) ---- */

STROBE_TEST(off_by_environment)
{
    CHECK_EQ_INT(strobe_tm_hardware(), 0);
    run_threads(4, bank_worker);
    CHECK_EQ_INT(stats().total_hw_commits, 0);
}

STROBE_TEST_MAIN(STROBE_CASE(bank_keeps_total), STROBE_CASE(capacity_falls_back),
                 STROBE_CASE(uncontended_commits_in_hardware), STROBE_CASE(syscall_goes_irrevocable),
                 STROBE_CASE(nested_cancel_beside_hardware), STROBE_CASE(off_by_environment))
