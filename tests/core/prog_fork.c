/* SPDX-License-Identifier: MIT */
/*
 * fork() and exec() under the runtime (-finstrument-functions, preloaded,
 * not linked). `core_prog_fork` runs:
 *
 *   parent: main > forker > fork(); waits for the child; leaf x1 in forker
 *   child:  (inherits main > forker) > child_work > leaf x3, returns
 *           through forker and main: exit status 0
 *
 * `core_prog_fork exec` additionally has the parent, after the wait,
 * exec() itself as `core_prog_fork after-exec`, which runs main > leaf x2.
 * So with exec there are three process directories: proc-P (parent before
 * exec), proc-C (child), proc-P-1 (the exec'ed image).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE void leaf(unsigned long x)
{
    sink += x;
}

NOINLINE void child_work(void)
{
    for (int i = 0; i < 3; i++)
        leaf((unsigned long)i);
}

NOINLINE int forker(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        child_work();
        return -1; /* the child: main returns 0 without exec */
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 1;
    leaf(9);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "after-exec") == 0) {
        printf("fn exec_main %p\nfn exec_leaf %p\n", (void *)main, (void *)leaf); /* ASLR: new addresses */
        fflush(stdout);
        leaf(1);
        leaf(2);
        return 0;
    }
    printf("fn main %p\nfn forker %p\nfn child_work %p\nfn leaf %p\n", (void *)main, (void *)forker,
           (void *)child_work, (void *)leaf);
    fflush(stdout);
    int rc = forker();
    if (rc < 0)
        return 0;
    if (rc == 0 && argc > 1 && strcmp(argv[1], "exec") == 0) {
        execl("/proc/self/exe", argv[0], "after-exec", (char *)NULL);
        return 3;
    }
    return rc;
}
