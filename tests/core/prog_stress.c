/* SPDX-License-Identifier: MIT */
/*
 * Concurrency stress for the runtime (-finstrument-functions, preloaded).
 *
 * `core_prog_stress fork`: threads 1..4 each call leaf 100000 times while
 * the main thread fork()s 4 children one after the other. Each child (a
 * copy of the forking thread only) runs main > forker > child_work > leaf
 * x 100 and exits with status 0. Run with small chunks, the workers switch
 * chunks (under the runtime's lock) while the forks happen.
 *
 * `core_prog_stress many`: 300 threads, 4 alive at a time (created and
 * joined in batches), each worker > leaf x 10.
 *
 * Prints "fn <name> <address>" for leaf, worker, child_work.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static _Thread_local volatile unsigned long sink; /* per thread: no race between workers */

NOINLINE void leaf(unsigned long x)
{
    __atomic_fetch_add(&sink, x, __ATOMIC_RELAXED);
}

NOINLINE void *worker(void *arg)
{
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++)
        leaf((unsigned long)i);
    return NULL;
}

NOINLINE void child_work(void)
{
    worker((void *)(intptr_t)100);
}

NOINLINE int forker(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        child_work();
        exit(0);
    }
    int st;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    printf("fn leaf %p\nfn worker %p\nfn child_work %p\n", (void *)leaf, (void *)worker, (void *)child_work);
    fflush(stdout);
    int rc = 0;
    if (argc > 1 && strcmp(argv[1], "fork") == 0) {
        pthread_t th[4];
        for (int k = 0; k < 4; k++)
            if (pthread_create(&th[k], NULL, worker, (void *)(intptr_t)100000) != 0)
                return 1;
        for (int k = 0; k < 4 && rc == 0; k++) {
            usleep(2000);
            rc = forker();
        }
        for (int k = 0; k < 4; k++)
            pthread_join(th[k], NULL);
    } else if (argc > 1 && strcmp(argv[1], "many") == 0) {
        for (int b = 0; b < 300 / 4; b++) {
            pthread_t th[4];
            for (int k = 0; k < 4; k++)
                if (pthread_create(&th[k], NULL, worker, (void *)(intptr_t)10) != 0)
                    return 1;
            for (int k = 0; k < 4; k++)
                pthread_join(th[k], NULL);
        }
    }
    return rc;
}
