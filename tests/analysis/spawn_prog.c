/* SPDX-License-Identifier: MIT */
/*
 * Child processes started three ways (compiled with -finstrument-functions;
 * tests/analysis checks each is a process of its own in the experiment):
 *
 *   analysis_spawn_prog         main > launch: posix_spawn() of itself with
 *                               "child", then fork() + execv() of itself
 *                               with "child", then fork() of a child that
 *                               runs leaf x 5 and _exit(0)s, then vfork()
 *                               of a child that runs exec_child > leaf and
 *                               execv()s itself with "child"; waits for all
 *   analysis_spawn_prog child   main > leaf x 3
 */
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

extern char **environ;
static volatile unsigned long sink;

NOINLINE void leaf(unsigned long x)
{
    sink += x;
}

static int wait_ok(pid_t pid)
{
    int st;
    return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

NOINLINE void exec_child(char *self, char **argv)
{
    leaf(9);
    execv(self, argv);
    _exit(127);
}

NOINLINE int launch(char *self)
{
    char *argv[] = {self, "child", NULL};
    pid_t spawned;
    if (posix_spawn(&spawned, self, NULL, NULL, argv, environ) != 0)
        return 1;
    pid_t execed = fork();
    if (execed == 0) {
        execv(self, argv);
        _exit(127);
    }
    pid_t forked = fork();
    if (forked == 0) {
        for (int i = 0; i < 5; i++)
            leaf((unsigned long)i);
        _exit(0);
    }
    pid_t vforked = vfork();
    if (vforked == 0)
        exec_child(self, argv);
    return wait_ok(spawned) && wait_ok(execed) && wait_ok(forked) && wait_ok(vforked) ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        for (int i = 0; i < 3; i++)
            leaf((unsigned long)i);
        return 0;
    }
    return launch(argv[0]);
}
