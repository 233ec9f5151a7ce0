/* SPDX-License-Identifier: MIT */
/*
 * The sampling fixture (test_samples.c). Built twice: analysis_sample_prog
 * with no instrumentation at all, analysis_sample_prog_instr with
 * -finstrument-functions (the hybrid view). N is the iterations of
 * sample_spin (libsample_lib.so) per call.
 *
 *   sample_prog lib N        outer() calls sample_spin(N) on the main thread
 *   sample_prog killed N     the same, then SIGKILLs itself: the work
 *                            before the kill is the same however loaded
 *                            the machine is, unlike a kill after a delay
 *   sample_prog dlopen N LIB the same through dlopen(LIB)
 *   sample_prog hidden N LIB sample_spin_hidden(N) through dlopen(LIB)
 *   sample_prog inline N     sample_spin_inline(N)
 *   sample_prog spawn N      4 threads spin N / 4 each while main runs
 *                            /bin/true 20 times with posix_spawn and vfork
 *   sample_prog threads N    main spins N, then starts 2 threads that each
 *                            spin N and are joined, then forks a child that
 *                            spins N and exits
 *   sample_prog stress N     20 rounds of 4 threads that lock a mutex,
 *                            allocate and free, spin N / 100 and exit
 *   sample_prog handler N    installs its own SIGPROF handler and a
 *                            setitimer(ITIMER_PROF), spins N; prints how
 *                            many of its own signals it got ("own 0" would
 *                            mean the runtime swallowed them)
 *   sample_prog blocked N    spins N with SIGPROF blocked, then N unblocked
 *   sample_prog blocked_thread N  a thread created with every signal
 *                            blocked (as liblzma's workers are) spins N
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <spawn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

double sample_spin(long n);
double sample_spin_inline(long n);

static long n;
static _Thread_local volatile double sink; /* per thread: no data race for TSan */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void outer(void)
{
    sink = sample_spin(n);
}

static void *worker(void *arg)
{
    (void)arg;
    outer();
    return NULL;
}

static void *stress_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        pthread_mutex_lock(&lock);
        void *p = malloc(64 + (size_t)i);
        memset(p, i, 64);
        free(p);
        pthread_mutex_unlock(&lock);
        sink = sample_spin(n / 5000);
    }
    return NULL;
}

static volatile sig_atomic_t own;
static void on_prof(int sig)
{
    (void)sig;
    own++;
}

/* Runs /bin/true through posix_spawn or vfork; 0 when it exited 0. */
__attribute__((noinline)) static int run_true(int use_vfork)
{
    char *args[] = {"/bin/true", NULL};
    pid_t pid;
    if (!use_vfork) {
        if (posix_spawn(&pid, "/bin/true", NULL, NULL, args, environ) != 0)
            return -1;
    } else if ((pid = vfork()) == 0) {
        execv("/bin/true", args);
        _exit(127);
    }
    int st;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void run_threads(int k, void *(*fn)(void *))
{
    pthread_t t[8];
    for (int i = 0; i < k; i++)
        pthread_create(&t[i], NULL, fn, NULL);
    for (int i = 0; i < k; i++)
        pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    n = atol(argv[2]);
    const char *mode = argv[1];
    if (strcmp(mode, "lib") == 0) {
        outer();
    } else if (strcmp(mode, "killed") == 0) {
        outer();
        raise(SIGKILL);
    } else if (strcmp(mode, "dlopen") == 0 && argc > 3) {
        void *h = dlopen(argv[3], RTLD_NOW);
        double (*spin)(long) = h ? (double (*)(long))dlsym(h, "sample_spin") : NULL;
        if (!spin)
            return 3;
        sink = spin(n);
    } else if (strcmp(mode, "hidden") == 0 && argc > 3) {
        void *h = dlopen(argv[3], RTLD_NOW);
        double (*spin)(long) = h ? (double (*)(long))dlsym(h, "sample_spin_hidden") : NULL;
        if (!spin)
            return 3;
        sink = spin(n);
    } else if (strcmp(mode, "inline") == 0) {
        sink = sample_spin_inline(n);
    } else if (strcmp(mode, "spawn") == 0) {
        pthread_t t[4];
        n /= 4;
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, worker, NULL);
        for (int i = 0; i < 20; i++)
            if (run_true(i % 2) != 0)
                return 4;
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
    } else if (strcmp(mode, "threads") == 0) {
        outer();
        run_threads(2, worker);
        pid_t pid = fork();
        if (pid == 0) {
            outer();
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
    } else if (strcmp(mode, "stress") == 0) {
        for (int r = 0; r < 20; r++)
            run_threads(4, stress_worker);
    } else if (strcmp(mode, "handler") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_prof;
        sigaction(SIGPROF, &sa, NULL);
        struct itimerval it = {{0, 10000}, {0, 10000}};
        setitimer(ITIMER_PROF, &it, NULL);
        outer();
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_PROF, &off, NULL);
        printf("own %s\n", own > 0 ? "> 0" : "0");
    } else if (strcmp(mode, "blocked_thread") == 0) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        run_threads(1, worker);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    } else if (strcmp(mode, "blocked") == 0) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGPROF);
        pthread_sigmask(SIG_BLOCK, &s, NULL);
        outer();
        pthread_sigmask(SIG_UNBLOCK, &s, NULL);
        outer();
    } else {
        return 2;
    }
    printf("done\n");
    return 0;
}
