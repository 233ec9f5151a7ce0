/* SPDX-License-Identifier: MIT */
/*
 * The block-tracing fixture of test_blocks: a module traced at level MEM
 * written by hand as `strobe cc --trace=bb,mem` emits it (bb_emit.h), and
 * the BB-level library bb_lib.c. kernel(n) runs
 *   block 1 (local 1, id 2): n times, ops: 0 load a[i] (recorded),
 *           1 load a[i + 1] (op 0 + 8), 2 load g_counter (constant),
 *           3 store b[i] (recorded)
 *   block 2 (local 2, id 3): when i % 16 == 0, op 0 a 1-byte store to
 *           far[(i / 16) % 2] (1 MiB apart: always the escape)
 *   block 3 (local 3, id 4): once at the end, no ops
 * and prints "kernel a=A b=B g=G far0=F0 far1=F1 n=N" (the library's block
 * is id 1: its constructor registers first).
 *
 * usage: bb_prog loop N | threads K N | fork N M | kill N | abi N
 *   loop     kernel(N), then bb_lib_work(7)
 *   threads  thread k (1..K) runs kernel(N * k); lines printed by main in
 *            thread order after the joins ("thread k kernel ...")
 *   fork     kernel(N) in the parent, kernel(M) in the child
 *   kill     kernel(N), then half a segment (address fields, no id), then
 *            SIGKILL
 *   abi      kernel(N), then a module of another ABI version registers
 *            (the runtime stops recording blocks), then kernel(N) again
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bb_emit.h"

#ifdef BB_NO_LIB
/* the variant that exports nothing (test_blocks: cursor_not_exported) */
static int bb_lib_work(int n)
{
    return n;
}
#else
int bb_lib_work(int n);
#endif

static uint32_t base;
static __thread uint64_t prev[5][2]; /* per op: previous address, stride */
int g_counter = 3;
static char far[2][1 << 20];

static void reset(void)
{
    memset(prev, 0, sizeof prev);
}

static const struct strobe_bb_block blocks[] = {
    {0, 4, 2, 0, 1, 60},
    {4, 1, 1, 0, 1, 64},
    {5, 0, 0, 0, 1, 68},
};
static const struct strobe_bb_op ops[] = {
    {8, 60, 17, STROBE_BB_LOAD, 0, STROBE_BB_RECORDED, 0},
    {8, 60, 24, STROBE_BB_LOAD, 0, 0, 8},
    {4, 61, 9, STROBE_BB_LOAD, 0, STROBE_BB_CONSTANT, (int64_t)(intptr_t)&g_counter},
    {8, 61, 14, STROBE_BB_STORE, 0, STROBE_BB_RECORDED, 0},
    {1, 64, 5, STROBE_BB_STORE, 0, STROBE_BB_RECORDED, 0},
};
static const char *const names[] = {"kernel", "bb_prog.c"};
static const struct strobe_bb_module module = {
    STROBE_BB_ABI, STROBE_BB_LEVEL_MEM, 3, 5, 2, 0, "bb_prog.c", blocks, ops, names, &base, reset};

__attribute__((constructor)) static void prog_register(void)
{
    if (strobe_bb_register)
        strobe_bb_register(&module);
}

struct run {
    long n;
    char line[256];
};

static void kernel(struct run *r)
{
    long n = r->n;
    int64_t *a = malloc((size_t)(n + 1) * sizeof *a), *b = malloc((size_t)(n ? n : 1) * sizeof *b);
    for (long i = 0; i <= n; i++)
        a[i] = i;
    for (long i = 0; i < n; i++) {
        struct bb_seg s;
        bb_begin(&s, &base, 1, 2);
        bb_addr(&s, prev[0], &a[i]);
        int64_t x = a[i] + a[i + 1] + g_counter;
        bb_addr(&s, prev[3], &b[i]);
        b[i] = x;
        bb_end(&s);
        if (i % 16 == 0) {
            char *f = far[(i / 16) % 2];
            bb_begin(&s, &base, 2, 1);
            bb_addr(&s, prev[4], f);
            (*f)++;
            bb_end(&s);
        }
    }
    struct bb_seg s;
    bb_begin(&s, &base, 3, 0);
    bb_end(&s);
    snprintf(r->line, sizeof r->line, "kernel a=%#lx b=%#lx g=%#lx far0=%#lx far1=%#lx n=%ld",
             (unsigned long)a, (unsigned long)b, (unsigned long)&g_counter, (unsigned long)far[0],
             (unsigned long)far[1], n);
    /* a and b stay allocated: their addresses must not be reused by
     * another thread's kernel while the test compares them */
}

static void *thread_main(void *arg)
{
    kernel(arg);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    struct run r = {.n = atol(argv[2])};
    if (strcmp(argv[1], "loop") == 0) {
        kernel(&r);
        printf("%s\nlib %d\n", r.line, bb_lib_work(7));
    } else if (strcmp(argv[1], "threads") == 0 && argc == 4) {
        int k = atoi(argv[2]);
        pthread_t th[16];
        struct run runs[16];
        for (int i = 0; i < k && i < 16; i++) {
            runs[i].n = atol(argv[3]) * (i + 1);
            pthread_create(&th[i], NULL, thread_main, &runs[i]);
        }
        for (int i = 0; i < k && i < 16; i++) {
            pthread_join(th[i], NULL);
            printf("thread %d %s\n", i + 1, runs[i].line);
        }
    } else if (strcmp(argv[1], "fork") == 0 && argc == 4) {
        kernel(&r);
        printf("parent %s\n", r.line);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            struct run c = {.n = atol(argv[3])};
            kernel(&c);
            printf("child %s\n", c.line);
            return 0;
        }
        int st;
        waitpid(pid, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    } else if (strcmp(argv[1], "kill") == 0) {
        kernel(&r);
        printf("%s\n", r.line);
        fflush(stdout);
        struct bb_seg s;
        bb_begin(&s, &base, 1, 2);
        bb_addr(&s, prev[0], &r);
        raise(SIGKILL);
    } else if (strcmp(argv[1], "abi") == 0) {
        static uint32_t other_base;
        static const struct strobe_bb_module other = {STROBE_BB_ABI + 1,
                                                      STROBE_BB_LEVEL_BB,
                                                      0,
                                                      0,
                                                      0,
                                                      0,
                                                      "other.c",
                                                      NULL,
                                                      NULL,
                                                      NULL,
                                                      &other_base,
                                                      NULL};
        kernel(&r);
        printf("%s\n", r.line);
        if (strobe_bb_register)
            strobe_bb_register(&other);
        kernel(&r);
    } else {
        return 2;
    }
    return 0;
}
