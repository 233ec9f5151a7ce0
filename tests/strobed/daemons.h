/* SPDX-License-Identifier: MIT */
/*
 * Test helpers: start strobed processes from configuration text, stop or
 * kill them, and read what a daemon serves through the client library.
 */
#ifndef STROBE_TESTS_STROBED_DAEMONS_H
#define STROBE_TESTS_STROBED_DAEMONS_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "transport/client.h"

/* Port blocks: base + 0..9 for one test process, fixed at the first call
 * so forked children agree with their parent. All blocks lie in
 * 10000-31999, below Linux's ephemeral range (32768 and up by default): a
 * port there can be taken at any moment by the local end of some other
 * test's outgoing connection, and a daemon that then cannot listen
 * ("Address in use") fails the test.
 *
 * Test processes run in parallel (ctest -j, other build trees of the same
 * machine), so a block is claimed: an flock on TEST_PORT_LOCKS/<base>,
 * held until the process ends (the descriptor is close-on-exec, so the
 * daemons it starts do not keep it), and only when each of its ports can
 * be bound at that moment (nothing else, e.g. a socket in TIME_WAIT, holds
 * it). The search starts at a block chosen by the process id. */
#define TEST_PORT_LOCKS "/tmp/strobe-test-ports"
#define TEST_PORT_FIRST 10000
#define TEST_PORT_BLOCKS 2200

static inline bool test_port_free(int port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return false;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = bind(s, (struct sockaddr *)&a, sizeof a) == 0;
    close(s);
    return ok;
}

static inline int test_port_claim(int start)
{
    if (mkdir(TEST_PORT_LOCKS, 0777) != 0 && errno != EEXIST)
        STROBE_FAIL("mkdir %s: %s", TEST_PORT_LOCKS, strerror(errno));
    for (int i = 0; i < TEST_PORT_BLOCKS; i++) {
        int base = TEST_PORT_FIRST + (start + i) % TEST_PORT_BLOCKS * 10;
        char path[64];
        snprintf(path, sizeof path, TEST_PORT_LOCKS "/%d", base);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
            STROBE_FAIL("%s: %s", path, strerror(errno));
        bool free_block = flock(fd, LOCK_EX | LOCK_NB) == 0;
        for (int p = 0; free_block && p < 10; p++)
            free_block = test_port_free(base + p);
        if (free_block)
            return base; /* fd stays open: the claim lasts as long as the process */
        close(fd);
    }
    STROBE_FAIL("no free block of 10 loopback ports in %d-%d", TEST_PORT_FIRST,
                TEST_PORT_FIRST + TEST_PORT_BLOCKS * 10 - 1);
}

static inline int test_port(int slot)
{
    static int base;
    if (!base)
        base = test_port_claim((int)(getpid() % TEST_PORT_BLOCKS));
    CHECK(slot >= 0 && slot < 10);
    return base + slot;
}

/* Every daemon a test started, killed when the test process exits by any
 * path (a failed CHECK exits at once): no daemon outlives its test. */
static pid_t started[64];
static int nstarted;

static void kill_started(void)
{
    for (int i = 0; i < nstarted; i++)
        if (started[i] > 0 && kill(started[i], SIGKILL) == 0)
            waitpid(started[i], NULL, 0);
}

static inline void remember_child(pid_t pid)
{
    if (nstarted == 0)
        atexit(kill_started);
    if (nstarted < 64)
        started[nstarted++] = pid;
}

/* Writes a file only its owner can access (mode 0600), as a shared-secret
 * file must be: strobed and strobe ls refuse one group or others can. */
static inline void write_private(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CHECK(fd >= 0);
    CHECK(fchmod(fd, 0600) == 0); /* also when the file was there */
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
}

/* Starts `strobed -c <dir>/<name>.yaml` with the given text; its log goes
 * to <dir>/<name>.log. */
static inline pid_t start_daemon(const char *dir, const char *name, const char *yaml)
{
    char cfg[4096], log[4096];
    snprintf(cfg, sizeof cfg, "%.3900s/%.150s.yaml", dir, name);
    snprintf(log, sizeof log, "%.3900s/%.150s.log", dir, name);
    FILE *f = fopen(cfg, "w");
    CHECK(f != NULL);
    fputs(yaml, f);
    fclose(f);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        FILE *lf = freopen(log, "a", stderr);
        (void)lf;
        execl(STROBE_BIN_DIR "/strobed", "strobed", "-c", cfg, "--log-level", "debug", (char *)NULL);
        _exit(127);
    }
    remember_child(pid);
    return pid;
}

/* Stops a daemon; under a sanitizer a report (or a leak) makes the
 * daemon's exit status non-zero, which expect_clean_exit turns into a
 * test failure. */
/* Sends sig and waits for the daemon, at most 60 s: a daemon that does not
 * end is killed and fails the test with its threads' stacks (gdb), rather
 * than hanging it until ctest's timeout. */
static inline int stop_daemon(pid_t pid, int sig)
{
    int st = 0;
    kill(pid, sig);
    pid_t r = 0;
    for (int ms = 0; ms < 60000 && (r = waitpid(pid, &st, WNOHANG)) == 0; ms += 10) {
        struct timespec ts = { 0, 10000000L };
        nanosleep(&ts, NULL);
    }
    if (r == 0) {
        char *bt;
        strobe_test_sh(&bt, "gdb -batch -p %d -ex 'thread apply all bt' 2>&1 | grep -E '^(Thread|#)'", (int)pid);
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        STROBE_FAIL("strobed (pid %d) still running 60 s after signal %d; its threads:\n%s", (int)pid, sig, bt);
    }
    for (int i = 0; i < nstarted; i++)
        if (started[i] == pid)
            started[i] = 0;
    return st;
}

static inline void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static inline void stop_clean(pid_t pid, const char *dir, const char *name)
{
    int st = stop_daemon(pid, SIGTERM);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char *log;
        strobe_test_sh(&log, "tail -n 40 '%s/%s.log'", dir, name);
        STROBE_FAIL("strobed %s ended with status 0x%x:\n%s", name, st, log);
    }
}

/* Value of metric `metric` (element 0) of set `set` at daemon `port`, or
 * -1 when the set or the daemon is not there (yet). */
static inline long long served_value(int port, const char *secret, const char *set, const char *metric,
                                     int *valid)
{
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    struct strobe__client *c;
    if (strobe__client_open(addr, secret, 1000, 1, &c) < 0)
        return -1;
    struct strobe__mirror m = { 0 };
    long long v = -1;
    if (strobe__client_update(c, &m, NULL, 0, 0, NULL, NULL) == 0)
        for (size_t i = 0; i < m.n; i++)
            if (strcmp(strobe_set_instance(m.sets[i]), set) == 0) {
                int k = strobe_set_metric_index(m.sets[i], metric);
                if (k >= 0) {
                    v = (long long)strobe_set_get_u64(m.sets[i], (uint32_t)k, 0);
                    if (valid)
                        *valid = strobe_set_is_valid(m.sets[i], (uint32_t)k);
                }
            }
    strobe__mirror_free(&m);
    strobe__client_close(c);
    return v;
}

/* Waits until served_value(...) == want; fails the test after ms. */
static inline void wait_value(int port, const char *secret, const char *set, const char *metric,
                              long long want, long ms)
{
    long long v = -1;
    for (long t = 0; t < ms; t += 50) {
        if ((v = served_value(port, secret, set, metric, NULL)) == want)
            return;
        sleep_ms(50);
    }
    STROBE_FAIL("port %d: %s %s is %lld, expected %lld after %ld ms", port, set, metric, v, want, ms);
}

#endif
