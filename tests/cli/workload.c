/* SPDX-License-Identifier: MIT */
/*
 * A deterministic multithreaded program for the end-to-end tests of
 * `strobe run`. Built with -finstrument-functions and NOT linked with
 * libstrobe: `strobe run` preloads the runtime. Its call paths and visit
 * counts are fixed, so the tests can expect them exactly:
 *
 *   main                          1
 *     setup                       1
 *       rec > rec > rec > rec     1 each (rec(3) .. rec(0))
 *     compute                     5
 *       leaf                      10
 *   worker (threads 1, 2, 3)      1 per thread
 *     compute                     10, 20, 30
 *       leaf                      2 per compute
 *
 * Usage: cli_workload [exit N | kill | wait FILE | env]
 *   exit N     do the work, then exit(N)
 *   kill       do the work, then SIGKILL itself
 *   wait FILE  create FILE and sleep until a signal ends the process
 *   env        print the strobe variables of its environment and exit
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* per thread: the workers would race on a shared one (TSan builds) */
static _Thread_local volatile unsigned long sink;

static NOINLINE void leaf(unsigned long x)
{
    sink += x;
}

static NOINLINE void compute(unsigned long x)
{
    leaf(x);
    leaf(x + 1);
}

static NOINLINE void rec(int n)
{
    if (n > 0)
        rec(n - 1);
    sink++;
}

static NOINLINE void setup(void)
{
    rec(3);
}

static NOINLINE void *worker(void *arg)
{
    unsigned long calls = 10 * (unsigned long)(uintptr_t)arg;
    for (unsigned long i = 0; i < calls; i++)
        compute(i);
    return NULL;
}

static void print_env(const char *name)
{
    const char *v = getenv(name);
    printf("%s=%s\n", name, v ? v : "(unset)");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "env") == 0) {
        static const char *const names[] = {"LD_PRELOAD", "STROBE_EXPERIMENT_DIR", "STROBE_FILTER",
                                            "STROBE_TRACE", "STROBE_PROFILE"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            print_env(names[i]);
        return 0;
    }
    if (strcmp(mode, "wait") == 0 && argc > 2) {
        FILE *f = fopen(argv[2], "w");
        if (!f)
            return 1;
        fclose(f);
        for (;;)
            pause();
    }
    setup();
    for (unsigned long i = 0; i < 5; i++)
        compute(i);
    pthread_t t[3];
    for (uintptr_t i = 0; i < 3; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)) != 0)
            return 1;
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    if (strcmp(mode, "exit") == 0 && argc > 2)
        exit(atoi(argv[2]));
    if (strcmp(mode, "kill") == 0)
        raise(SIGKILL);
    return 0;
}
