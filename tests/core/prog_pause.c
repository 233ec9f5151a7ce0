/* SPDX-License-Identifier: MIT */
/*
 * Pausing and resuming recording (src/core/pause.h), compiled with
 * -finstrument-functions and linked with -lstrobe. Prints one line
 * "fn <name> <address>" per function first.
 *
 * `core_prog_pause api`: strobe_pause()/strobe_resume() around known calls.
 * Recorded visits per call path, exactly:
 *
 *   main                 1
 *     leaf               17   10 before outer, 4 in resumer, 3 at the end
 *     outer              1    entered recording, left paused: recorded whole
 *       leaf             2    (its 3 calls after the pause are not)
 *   (resumer: entered paused, left recording: not recorded; the leaf calls
 *    it makes after resuming are charged to main)
 *
 * and 20 + 5 + 7 paused leaf calls, a nested pause, a strobe_resume() too
 * many (-EINVAL), the metric "m" added once recording (counted) and once
 * paused (not), and a thread started and joined while paused that calls
 * leaf 100 times (t1: no visit). Two RECORDING records: STOP in outer,
 * RESUME in resumer.
 *
 * `core_prog_pause rec`: recursion across a pause: rec(3) > rec(2) pauses,
 * rec(1) > rec(0) run paused, rec(0) resumes and calls leaf once, which is
 * charged to the innermost recorded frame: main 1, main > rec 1,
 * main > rec > rec 1, main > rec > rec > leaf 1 (rec(1) and rec(0) not
 * recorded; every exit pairs with its own enter).
 *
 * `core_prog_pause signal`: the toggle signal (STROBE_TOGGLE_SIGNAL, sent
 * with raise()): leaf 5 times, toggle, leaf 6 times (paused), toggle, leaf
 * 7 times: main > leaf 12.
 *
 * `core_prog_pause phases`: three phases 1.5 s apart, each 1000 calls of
 * its own function (phase1 > f1, ...), for `strobe run --delay 0.75
 * --duration 1.5`, which records the second only.
 *
 * Exit status 1 when a return code is not the expected one.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <strobe/strobe.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static strobe_metric_t metric = STROBE_METRIC_INIT("m", "");
static int failures;

static void expect(const char *what, int got, int want)
{
    if (got != want) {
        fprintf(stderr, "%s returned %d, expected %d\n", what, got, want);
        failures++;
    }
}

NOINLINE void leaf(unsigned long x)
{
    sink += x;
}

NOINLINE static void leaves(int n)
{
    for (int i = 0; i < n; i++)
        leaf((unsigned long)i);
}

NOINLINE void outer(void)
{
    leaf(1);
    leaf(2);
    expect("strobe_pause", strobe_pause(), 0);
    leaf(3);
    leaf(4);
    leaf(5);
}

NOINLINE void resumer(void)
{
    expect("strobe_resume", strobe_resume(), 0);
    for (int i = 0; i < 4; i++)
        leaf(7);
}

NOINLINE static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++)
        leaf(1);
    return NULL;
}

NOINLINE static void run_api(void)
{
    for (int i = 0; i < 10; i++)
        leaf(0);
    expect("strobe_is_recording", strobe_is_recording(), 1);
    strobe_metric_add(&metric, 5);
    outer();
    expect("strobe_is_recording", strobe_is_recording(), 0);
    strobe_metric_add(&metric, 100);
    for (int i = 0; i < 20; i++)
        leaf(0);
    expect("strobe_pause", strobe_pause(), 0); /* nested */
    for (int i = 0; i < 5; i++)
        leaf(0);
    expect("strobe_resume", strobe_resume(), 0);
    expect("strobe_is_recording", strobe_is_recording(), 0);
    for (int i = 0; i < 7; i++)
        leaf(0);
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0 || pthread_join(th, NULL) != 0)
        failures++;
    resumer();
    expect("strobe_is_recording", strobe_is_recording(), 1);
    for (int i = 0; i < 3; i++)
        leaf(0);
    expect("strobe_resume", strobe_resume(), -EINVAL); /* none left to match */
}

NOINLINE void rec(int n)
{
    if (n == 2)
        expect("strobe_pause", strobe_pause(), 0);
    if (n > 0)
        rec(n - 1);
    if (n == 0) {
        expect("strobe_resume", strobe_resume(), 0);
        leaf(9);
    }
}

/* Waits (up to 10 s) until the control thread has acted on the signal. */
static void wait_recording(int want)
{
    for (int i = 0; i < 10000 && strobe_is_recording() != want; i++)
        usleep(1000);
    expect("strobe_is_recording", strobe_is_recording(), want);
}

NOINLINE static void run_signal(void)
{
    int sig = atoi(getenv("STROBE_TOGGLE_SIGNAL") ? getenv("STROBE_TOGGLE_SIGNAL") : "10");
    leaves(5);
    raise(sig);
    wait_recording(0);
    leaves(6);
    raise(sig);
    wait_recording(1);
    leaves(7);
}

NOINLINE void f1(void) { sink++; }
NOINLINE void f2(void) { sink++; }
NOINLINE void f3(void) { sink++; }

NOINLINE void phase1(void) { for (int i = 0; i < 1000; i++) f1(); }
NOINLINE void phase2(void) { for (int i = 0; i < 1000; i++) f2(); }
NOINLINE void phase3(void) { for (int i = 0; i < 1000; i++) f3(); }

static void sleep_until(const struct timespec *t0, double s)
{
    struct timespec t = *t0;
    t.tv_sec += (time_t)s;
    t.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
        ;
}

NOINLINE static void run_phases(void)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    phase1();
    sleep_until(&t0, 1.5);
    phase2();
    sleep_until(&t0, 3.0);
    phase3();
}

int main(int argc, char **argv)
{
    printf("fn main %p\nfn leaf %p\nfn outer %p\nfn resumer %p\nfn f1 %p\nfn f2 %p\nfn f3 %p\nfn phase2 %p\n"
           "fn rec %p\nfn expect %p\n",
           (void *)main, (void *)leaf, (void *)outer, (void *)resumer, (void *)f1, (void *)f2, (void *)f3,
           (void *)phase2, (void *)rec, (void *)expect);
    const char *mode = argc > 1 ? argv[1] : "api";
    if (strcmp(mode, "api") == 0)
        run_api();
    else if (strcmp(mode, "rec") == 0)
        rec(3);
    else if (strcmp(mode, "signal") == 0)
        run_signal();
    else if (strcmp(mode, "phases") == 0)
        run_phases();
    else
        return 2;
    return failures ? 1 : 0;
}
