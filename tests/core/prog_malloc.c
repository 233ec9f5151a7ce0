/* SPDX-License-Identifier: MIT */
/*
 * Allocations with known sizes on known call paths, for the --malloc tests
 * (test_malloc.c). Built with -finstrument-functions -O0, so every
 * function below is a region. No stdio: its buffer would be an allocation
 * of its own.
 *
 *   prog_malloc paths    every allocation function once or more; leaks
 *                        exactly 4 blocks of 2300 bytes (f_leak 2 x 1000,
 *                        f_calloc 200, f_memalign 100)
 *   prog_malloc threads  give() allocates 5 blocks of 500 bytes that
 *                        worker(), another thread, frees
 *   prog_malloc stress   4 threads: produce() allocates 2000 blocks of 1..100
 *                        bytes (101000 bytes), consume() on the next thread
 *                        frees them while churn() allocates and frees
 *                        10000 blocks of 32 bytes on every thread
 *   prog_malloc fork     f_leak, then a fork child whose child_leak()
 *                        leaks 300 bytes
 *   prog_malloc kill     f_leak, then SIGKILL to itself
 *   prog_malloc none     allocates nothing
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void *early;

/* Runs before main (and before the program's other constructors). */
__attribute__((constructor(101))) static void early_ctor(void)
{
    early = calloc(4, 4);
}

static void *volatile keep[8];

static void say(const char *s)
{
    ssize_t r = write(1, s, strlen(s));
    (void)r;
}

static void f_leak(void)
{
    keep[0] = malloc(1000);
    keep[1] = malloc(1000);
}

static void f_calloc(void)
{
    unsigned char *p = calloc(10, 20);
    for (int i = 0; i < 200; i++)
        if (p[i])
            say("calloc: not zero\n");
    keep[2] = p;
}

static void f_memalign(void)
{
    void *a, *b, *c;
    if (posix_memalign(&a, 64, 128) != 0 || ((uintptr_t)a & 63))
        say("posix_memalign: bad block\n");
    b = aligned_alloc(64, 256);
    c = memalign(32, 96);
    keep[3] = valloc(100);
    if (((uintptr_t)b & 63) || ((uintptr_t)c & 31) || ((uintptr_t)keep[3] & 4095))
        say("memalign: misaligned\n");
    free(a);
    free(b);
    free(c);
}

static void f_malloc(void)
{
    void *p[3];
    for (int i = 0; i < 3; i++)
        p[i] = malloc(100);
    for (int i = 0; i < 3; i++)
        free(p[i]);
    free(NULL);
}

static void f_realloc(void)
{
    char *p = realloc(NULL, 64);
    memset(p, 'x', 64);
    p = realloc(p, 4096); /* grows */
    if (p[63] != 'x')
        say("realloc: lost data\n");
    p = realloc(p, 16); /* shrinks */
    p = realloc(p, 0);  /* frees (glibc returns NULL) */
    free(p);
}

static void f_mmap(void)
{
    void *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(m, 3 * 4096);
}

static void f_large(void)
{
    void *p = malloc(2u << 20);
    free(p);
}

static void child_leak(void)
{
    keep[4] = malloc(300);
}

static void *worker(void *arg)
{
    void **blocks = arg;
    for (int i = 0; i < 5; i++)
        free(blocks[i]);
    return NULL;
}

enum { STRESS_THREADS = 4, STRESS_BLOCKS = 2000, CHURN = 10000 };
static void *stress_blocks[STRESS_THREADS][STRESS_BLOCKS];
static pthread_barrier_t stress_barrier;

static void produce(void **blocks)
{
    for (int i = 0; i < STRESS_BLOCKS; i++)
        blocks[i] = malloc((size_t)(i % 100 + 1));
}

static void consume(void **blocks)
{
    for (int i = 0; i < STRESS_BLOCKS; i++)
        free(blocks[i]);
}

static void churn(void)
{
    for (int i = 0; i < CHURN; i++) {
        char *volatile p = malloc(32);
        p[0] = 1;
        free(p);
    }
}

static void *stress(void *arg)
{
    int k = (int)(intptr_t)arg;
    produce(stress_blocks[k]);
    pthread_barrier_wait(&stress_barrier);
    consume(stress_blocks[(k + 1) % STRESS_THREADS]);
    churn();
    return NULL;
}

static void give(void **blocks)
{
    for (int i = 0; i < 5; i++)
        blocks[i] = malloc(500);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "paths";
    if (early) {
        if (((unsigned char *)early)[15])
            say("early calloc: not zero\n");
        free(early);
    }
    if (strcmp(mode, "paths") == 0) {
        f_leak();
        f_calloc();
        f_memalign();
        f_malloc();
        f_realloc();
        f_mmap();
        f_large();
    } else if (strcmp(mode, "fork") == 0) {
        f_leak();
        pid_t pid = fork();
        if (pid == 0) {
            child_leak();
            return 0;
        }
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
            return 1;
    } else if (strcmp(mode, "kill") == 0) {
        f_leak();
        raise(SIGKILL);
    } else if (strcmp(mode, "stress") == 0) {
        pthread_t t[STRESS_THREADS];
        pthread_barrier_init(&stress_barrier, NULL, STRESS_THREADS);
        for (int k = 0; k < STRESS_THREADS; k++)
            if (pthread_create(&t[k], NULL, stress, (void *)(intptr_t)k) != 0)
                return 1;
        for (int k = 0; k < STRESS_THREADS; k++)
            pthread_join(t[k], NULL);
    } else if (strcmp(mode, "threads") == 0) {
        static void *blocks[5];
        give(blocks);
        pthread_t t;
        if (pthread_create(&t, NULL, worker, blocks) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    say("done\n");
    return 0;
}
