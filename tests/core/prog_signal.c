/* SPDX-License-Identifier: MIT */
/*
 * Signal handlers that interrupt the runtime (-finstrument-functions,
 * preloaded). `core_prog_signal N US`: main > loop calls leaf N times
 * while a POSIX timer sends SIGALRM every US microseconds; the handler on_tick > tick_leaf is instrumented
 * too. When a signal lands while the runtime is writing an event, the runtime must skip the handler's 4
 * events (and count them as dropped) rather than corrupt the one it was writing; otherwise it records them
 * normally. So: leaf visits == N, and on_tick visits + dropped / 4 == ticks (printed). Prints "fn <name>
 * <address>" lines first and "ticks K" at the end.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static volatile sig_atomic_t ticks;

NOINLINE void leaf(unsigned long x)
{
    sink += x;
}

NOINLINE void tick_leaf(void)
{
    sink++;
}

NOINLINE void on_tick(int sig)
{
    (void)sig;
    ticks++;
    tick_leaf();
}

NOINLINE void loop(long n)
{
    for (long i = 0; i < n; i++)
        leaf((unsigned long)i);
}

int main(int argc, char **argv)
{
    printf("fn leaf %p\nfn on_tick %p\nfn tick_leaf %p\n", (void *)leaf, (void *)on_tick, (void *)tick_leaf);
    fflush(stdout);
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    long us = argc > 2 ? atol(argv[2]) : 100;
    struct sigaction sa = {0};
    sa.sa_handler = on_tick;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    timer_t tm;
    struct sigevent sev = {0};
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGALRM;
    if (timer_create(CLOCK_MONOTONIC, &sev, &tm) != 0)
        return 2;
    struct itimerspec its = {{0, us * 1000}, {0, us * 1000}};
    timer_settime(tm, 0, &its, NULL);
    loop(n);
    struct itimerspec off = {{0, 0}, {0, 0}};
    timer_settime(tm, 0, &off, NULL);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, NULL); /* a pending tick must not land after the count is printed */
    printf("ticks %d\n", (int)ticks);
    return 0;
}
