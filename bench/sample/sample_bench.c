/* SPDX-License-Identifier: MIT */
/*
 * The sampler's benchmark program (bench/sample/run.sh), uninstrumented,
 * built with frame pointers so that a frame-pointer walk can be timed too.
 *
 *   strobe-bench-sample work ITER
 *       descends 20 frames, then runs ITER iterations of a dependent
 *       floating-point chain there; prints the wall-clock ns of that phase
 *       (CLOCK_MONOTONIC) and the thread's CPU ns
 *   strobe-bench-sample walk REPS
 *       at 20 frames, times REPS stack walks each of: libunwind's
 *       unw_init_local + unw_step loop, unw_backtrace (libunwind's cached
 *       fast path, what the sampler's handler uses), and a frame-pointer
 *       walk; prints ns per walk and frames. Then, run bare, the same
 *       unw_backtrace from a SIGPROF handler (ITIMER_PROF every 1 ms of
 *       CPU) while the work runs at 20 frames: median and 90th percentile
 *       ns over the signals of 1 s, and the median of the same walk
 *       repeated at once in the handler (caches warm)
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#define DEPTH 20
#define MAX 128

static uint64_t ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long iter, reps;
static volatile double sink;
static int mode_walk;

static unsigned walk_unw_step(uint64_t *ips)
{
    unw_context_t uc;
    unw_cursor_t cur;
    unsigned n = 0;
    unw_getcontext(&uc);
    if (unw_init_local(&cur, &uc) < 0)
        return 0;
    do {
        unw_word_t ip;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0 || n == MAX)
            break;
        ips[n++] = ip;
    } while (unw_step(&cur) > 0);
    return n;
}

static unsigned walk_fp(uint64_t *ips)
{
    /* the chain of saved frame pointers: [fp] = caller's fp, [fp+8] = return address */
    uintptr_t *fp = __builtin_frame_address(0);
    unsigned n = 0;
    while (fp && n < MAX) {
        uintptr_t ret = fp[1];
        if (!ret)
            break;
        ips[n++] = ret;
        uintptr_t *next = (uintptr_t *)fp[0];
        if (next <= fp) /* the stack grows down: a caller's frame is above */
            break;
        fp = next;
    }
    return n;
}

static void time_walks(void)
{
    uint64_t ips[MAX];
    unsigned n1 = 0, n2 = 0, n3 = 0;
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    walk_unw_step(ips); /* warm the caches */
    uint64_t t0 = ns(CLOCK_MONOTONIC);
    for (long i = 0; i < reps; i++)
        n1 = walk_unw_step(ips);
    uint64_t t1 = ns(CLOCK_MONOTONIC);
    for (long i = 0; i < reps; i++)
        n2 = (unsigned)unw_backtrace((void **)ips, MAX);
    uint64_t t2 = ns(CLOCK_MONOTONIC);
    for (long i = 0; i < reps; i++)
        n3 = walk_fp(ips);
    uint64_t t3 = ns(CLOCK_MONOTONIC);
    printf("unw_step %.1f ns %u frames unw_backtrace %.1f ns %u frames fp %.1f ns %u frames\n",
           (double)(t1 - t0) / (double)reps, n1, (double)(t2 - t1) / (double)reps, n2,
           (double)(t3 - t2) / (double)reps, n3);
}

static uint64_t sig_ns[4096], again_ns[4096];
static volatile int nsig;

static void on_prof(int sig)
{
    (void)sig;
    void *buf[MAX];
    uint64_t t0 = ns(CLOCK_MONOTONIC);
    unw_backtrace(buf, MAX);
    uint64_t t1 = ns(CLOCK_MONOTONIC);
    unw_backtrace(buf, MAX); /* the same walk again: caches warm */
    if (nsig < 4096) {
        sig_ns[nsig] = t1 - t0;
        again_ns[nsig] = ns(CLOCK_MONOTONIC) - t1;
    }
    nsig++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void time_signal_walks(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &it, NULL);
    uint64_t c0 = ns(CLOCK_THREAD_CPUTIME_ID);
    double x = 1.0;
    while (ns(CLOCK_THREAD_CPUTIME_ID) - c0 < 1000000000u)
        for (int i = 0; i < 100000; i++)
            x = x * 1.0000001 + 0.5;
    sink = x;
    setitimer(ITIMER_PROF, &off, NULL);
    int n = nsig < 4096 ? nsig : 4096;
    qsort(sig_ns, (size_t)n, sizeof *sig_ns, cmp_u64);
    qsort(again_ns, (size_t)n, sizeof *again_ns, cmp_u64);
    printf("signal %llu ns p90 %llu ns %d walks again %llu ns\n", n ? (unsigned long long)sig_ns[n / 2] : 0ull,
           n ? (unsigned long long)sig_ns[n * 9 / 10] : 0ull, n, n ? (unsigned long long)again_ns[n / 2] : 0ull);
}

static void work(void)
{
    uint64_t w0 = ns(CLOCK_MONOTONIC), c0 = ns(CLOCK_THREAD_CPUTIME_ID);
    double x = 1.0;
    for (long i = 0; i < iter; i++)
        x = x * 1.0000001 + 0.5;
    sink = x;
    uint64_t w1 = ns(CLOCK_MONOTONIC), c1 = ns(CLOCK_THREAD_CPUTIME_ID);
    printf("wall %llu cpu %llu\n", (unsigned long long)(w1 - w0), (unsigned long long)(c1 - c0));
}

/* DEPTH frames of this function (noinline, not a tail call). */
__attribute__((noinline)) static int descend(int d)
{
    if (d == 0) {
        if (mode_walk) {
            time_walks();
            time_signal_walks();
        } else
            work();
        return 0;
    }
    int r = descend(d - 1);
    __asm__ volatile("" ::: "memory");
    return r + 1;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    mode_walk = strcmp(argv[1], "walk") == 0;
    if (mode_walk)
        reps = atol(argv[2]);
    else
        iter = atol(argv[2]);
    /* main and the C library's start frames make the rest of the 20 */
    return descend(DEPTH - 4) < 0;
}
