/* SPDX-License-Identifier: MIT */
/*
 * Deterministic single-threaded test program for the runtime, compiled
 * with -finstrument-functions and NOT linked with libstrobe (the tests
 * preload it). For `prog_calls N` the visits per call path are exactly:
 *
 *   main                 1
 *     work               1
 *       leaf             N
 *       rec              1   rec(3) > rec(2) > rec(1) > rec(0): 4 visits,
 *         rec ...            one per level
 *       twice            1
 *         leaf           2
 *
 * so ENTER records: 1 + 1 + N + 4 + 1 + 2 = N + 9, as many EXITs.
 *
 * It first prints one line "fn <name> <address>" per function so the tests
 * can map REGION records (which carry addresses) to names.
 *
 * Usage: core_prog_calls N [kill | exit S | rec D | longjmp]
 *   kill     SIGKILL itself right after the N leaf calls (work, main open)
 *   exit S   call exit(S) at the end of work() instead of returning
 *   rec D    recurse D levels instead of 3 (D + 1 visits of rec)
 *   longjmp  also run jumper(): enters deep() > deeper(), longjmp()s back
 *            to jumper (skipping two exits), calls leaf once more there
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static jmp_buf jump;

NOINLINE void leaf(unsigned long x)
{
    sink += x;
}

NOINLINE void rec(int n)
{
    if (n > 0)
        rec(n - 1);
    sink++;
}

NOINLINE void twice(void)
{
    leaf(1);
    leaf(2);
}

NOINLINE void deeper(void)
{
    longjmp(jump, 1);
}

NOINLINE void deep(void)
{
    deeper();
    sink++;
}

NOINLINE void jumper(void)
{
    if (setjmp(jump) == 0)
        deep();
    else
        leaf(7);
}

NOINLINE void work(long n, const char *mode, int arg)
{
    for (long i = 0; i < n; i++)
        leaf((unsigned long)i);
    if (strcmp(mode, "kill") == 0)
        kill(getpid(), SIGKILL);
    rec(strcmp(mode, "rec") == 0 ? arg : 3);
    twice();
    if (strcmp(mode, "longjmp") == 0)
        jumper();
    if (strcmp(mode, "exit") == 0)
        exit(arg);
}

int main(int argc, char **argv);

__attribute__((no_instrument_function)) static void print_addresses(void)
{
    printf("fn main %p\nfn work %p\nfn leaf %p\nfn rec %p\nfn twice %p\nfn jumper %p\nfn deep %p\n"
           "fn deeper %p\n",
           (void *)main, (void *)work, (void *)leaf, (void *)rec, (void *)twice, (void *)jumper, (void *)deep,
           (void *)deeper);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    print_addresses();
    long n = argc > 1 ? atol(argv[1]) : 10;
    const char *mode = argc > 2 ? argv[2] : "";
    int arg = argc > 3 ? atoi(argv[3]) : 0;
    work(n, mode, arg);
    return 0;
}
