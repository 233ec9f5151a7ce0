/* SPDX-License-Identifier: MIT */
/*
 * The workload of `make bench`: a loop that calls one empty, noinline
 * function `calls` times per thread, on 1 thread (the main thread) or on
 * several threads started together behind a barrier. Every tool in the
 * benchmark measures this same program, so the only thing that differs
 * between two rows of the table is what runs inside the
 * __cyg_profile_func_enter/exit hooks.
 *
 * bench/CMakeLists.txt builds this file twice:
 *   strobe-bench-calls-plain  without -finstrument-functions (the bare loop)
 *   strobe-bench-calls        with -finstrument-functions, linked against
 *                             libstrobe-bench-cyg-null.so (empty hooks, see
 *                             cyg_null.c for why the hooks must live in a
 *                             shared library and not in this executable)
 * Only empty_function() is instrumented: every other function here carries
 * no_instrument_function, so one call = exactly one enter + one exit event.
 *
 * Usage: strobe-bench-calls CALLS_PER_THREAD THREADS [CPU]
 *   CPU >= 0 pins the single-threaded run to that CPU (ignored when
 *   THREADS > 1: two threads on a 2-core machine must be free to move).
 * Prints one line, parsed by bench/run.sh:
 *   threads=T calls=N loop_ns=t0,t1,... sys_us=s0,s1,... minflt=f0,f1,...
 *   cpu_ns=c0,c1,...
 * then `end_ns=` and CLOCK_MONOTONIC just before main returns (for
 * bench/command.py).
 * where t_i is thread i's loop time (CLOCK_MONOTONIC, ns), hooks included,
 * start-up and exit of the process excluded; s_i and f_i are the kernel
 * time (us, as precise as the kernel's CPU accounting) and minor page
 * faults of thread i during its loop (getrusage(RUSAGE_THREAD)): the part
 * of a tool's cost spent in the kernel, e.g. faulting in trace buffers.
 * c_i is thread i's CPU time during its loop (CLOCK_THREAD_CPUTIME_ID,
 * ns: the scheduler's exact run time, not ticks): well below t_i, the
 * thread waited for a CPU (another thread, a tracer's daemon, other
 * processes or the hypervisor had it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NOINST __attribute__((no_instrument_function))
#define MAX_THREADS 64

/* The measured function. The empty asm is a side effect the optimizer must
 * keep, so neither the call nor the loop can be removed (noinline alone
 * does not stop GCC from deleting calls to a function it proves pure). */
__attribute__((noinline)) void empty_function(void)
{
    __asm__ volatile("" ::: "memory");
}

struct worker {
    pthread_t thread;
    long calls;
    uint64_t loop_ns;
    uint64_t sys_us;
    uint64_t minflt;
    uint64_t cpu_ns;
};

static pthread_barrier_t start_barrier;

static NOINST uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static NOINST uint64_t tv_us(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static NOINST void run_loop(struct worker *w)
{
    struct rusage r0, r1;
    getrusage(RUSAGE_THREAD, &r0);
    uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    for (long i = 0; i < w->calls; i++)
        empty_function();
    w->loop_ns = clock_ns(CLOCK_MONOTONIC) - t0;
    w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    getrusage(RUSAGE_THREAD, &r1);
    w->sys_us = tv_us(r1.ru_stime) - tv_us(r0.ru_stime);
    w->minflt = (uint64_t)(r1.ru_minflt - r0.ru_minflt);
}

static NOINST void *worker_main(void *arg)
{
    pthread_barrier_wait(&start_barrier);
    run_loop(arg);
    return NULL;
}

static NOINST long parse_long(const char *s, const char *what, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < min || v > max) {
        fprintf(stderr, "strobe-bench-calls: bad %s '%s' (expected %ld..%ld)\n", what, s, min, max);
        exit(2);
    }
    return v;
}

NOINST int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: %s CALLS_PER_THREAD THREADS [CPU]\n", argv[0]);
        return 2;
    }
    long calls = parse_long(argv[1], "call count", 1, 1L << 40);
    int nthreads = (int)parse_long(argv[2], "thread count", 1, MAX_THREADS);
    int cpu = argc == 4 ? (int)parse_long(argv[3], "cpu", -1, CPU_SETSIZE - 1) : -1;
    static struct worker workers[MAX_THREADS];

    if (nthreads == 1) {
        /* The main thread runs the loop itself: the common case of a tool
         * measuring a sequential program (thread 0 of the trace). */
        if (cpu >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            if (sched_setaffinity(0, sizeof set, &set) != 0)
                fprintf(stderr, "strobe-bench-calls: cannot pin to cpu %d: %s\n", cpu, strerror(errno));
        }
        workers[0].calls = calls;
        run_loop(&workers[0]);
    } else {
        pthread_barrier_init(&start_barrier, NULL, (unsigned)nthreads);
        for (int i = 0; i < nthreads; i++) {
            workers[i].calls = calls;
            int rc = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
            if (rc != 0) {
                fprintf(stderr, "strobe-bench-calls: pthread_create: %s\n", strerror(rc));
                return 1;
            }
        }
        for (int i = 0; i < nthreads; i++)
            pthread_join(workers[i].thread, NULL);
        pthread_barrier_destroy(&start_barrier);
    }

    printf("threads=%d calls=%ld loop_ns=", nthreads, calls);
    for (int i = 0; i < nthreads; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)workers[i].loop_ns);
    printf(" sys_us=");
    for (int i = 0; i < nthreads; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)workers[i].sys_us);
    printf(" minflt=");
    for (int i = 0; i < nthreads; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)workers[i].minflt);
    printf(" cpu_ns=");
    for (int i = 0; i < nthreads; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)workers[i].cpu_ns);
    /* The last act of the program: bench/command.py times from here to the
     * return of the command that ran it (the wait after the program). */
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("\nend_ns=%lld\n", (long long)end.tv_sec * 1000000000LL + end.tv_nsec);
    return 0;
}
