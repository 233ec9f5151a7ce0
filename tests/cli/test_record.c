/* SPDX-License-Identifier: MIT */
/*
 * `strobe record --pid` end to end: attaching to cli_attach_prog
 * (attach_prog.c, built by gcc -O2 without and with frame pointers, no
 * -g), then the sample model (src/analysis/samples.c) of what it wrote;
 * the threads it finds, how it ends, and its errors.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/experiment.h"
#include "analysis/samples.h"
#include "records.h"
#include "test.h"

#define PROG_O2 STROBE_TEST_BIN_DIR "/cli_attach_prog_o2"
#define PROG_FP STROBE_TEST_BIN_DIR "/cli_attach_prog_fp"
#define PROG_DEEP STROBE_TEST_BIN_DIR "/cli_attach_deep"
#define STROBE STROBE_BIN_DIR "/strobe"

static char dir[4200];

/* Starts PROG THREADS SECONDS LATE [MAIN] and waits for its "ready" line;
 * returns its pid. */
static pid_t start_main(const char *prog, const char *threads, const char *seconds, const char *late,
                        const char *main)
{
    int fds[2];
    if (pipe(fds) != 0)
        STROBE_FAIL("pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl(prog, prog, threads, seconds, late, main, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[16] = "";
    ssize_t n = read(fds[0], buf, 6);
    close(fds[0]);
    if (n != 6 || memcmp(buf, "ready\n", 6) != 0)
        STROBE_FAIL("%s did not start", prog);
    return pid;
}

static pid_t start(const char *prog, const char *threads, const char *seconds, const char *late)
{
    return start_main(prog, threads, seconds, late, NULL);
}

static void stop(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* `strobe record --pid PID OPTIONS -o <tmpdir of NAME>/exp`: its exit
 * code, its output (malloc'd) into *out. */
static int record(const char *name, pid_t pid, const char *options, char **out)
{
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir(name));
    return strobe_test_sh(out, "%s record --pid %d %s -o '%s' 2>&1", STROBE, (int)pid, options, dir);
}

static struct strobe_sample_model *model(struct strobe_experiment *exp)
{
    struct strobe_sample_model *m;
    struct strobe_errbuf eb = {""};
    if (strobe_sample_model_build(exp, NULL, &m, &eb) != 0)
        STROBE_FAIL("sample model: %s", eb.msg);
    return m;
}

static uint32_t func_index(const struct strobe_sample_model *m, const char *name)
{
    for (size_t i = 0; i < m->nfuncs; i++)
        if (strcmp(m->funcs[i].name, name) == 0)
            return (uint32_t)i;
    STROBE_FAIL("no sampled function %s", name);
}

/* The samples of function `callee` whose caller is `caller` (call tree
 * nodes callee under caller). */
static uint64_t called_from(const struct strobe_sample_model *m, const char *callee, const char *caller)
{
    uint32_t fe = func_index(m, callee), fr = func_index(m, caller);
    uint64_t n = 0;
    for (size_t i = 0; i < m->nnodes; i++) {
        const struct strobe_sample_node *x = &m->nodes[i];
        if (x->func == fe && x->parent != STROBE_NONE && m->nodes[x->parent].func == fr)
            n += x->total;
    }
    return n;
}

/* Fails the test, listing the stacks (innermost first) of the samples not
 * under function `outer`. */
static void fail_outside(const struct strobe_sample_model *m, const char *outer)
{
    uint32_t f = func_index(m, outer);
    for (size_t i = 0; i < m->nstacks; i++) {
        const struct strobe_sample_stack *st = &m->stacks[i];
        bool in = false;
        char line[2048] = "";
        for (uint32_t k = 0; k < st->n; k++) {
            const struct strobe_sample_loc *l = &m->locs[m->stack_locs[st->first + k]];
            for (uint32_t j = 0; j < l->n; j++) {
                uint32_t fn = m->loc_frames[l->first + j].func;
                in |= fn == f;
                size_t len = strlen(line);
                snprintf(line + len, sizeof line - len, " %s+0x%" PRIx64, m->funcs[fn].name, l->rel);
            }
        }
        if (!in)
            fprintf(stderr, "%" PRIu64 " samples outside %s:%s\n", st->samples, outer, line);
    }
    STROBE_FAIL("samples outside %s (%" PRIu64 " truncated of %" PRIu64 ")", outer, m->truncated, m->samples);
}

/* A 2 s recording of one thread looping in caller() -> hot() (90 %) and
 * warm() (10 %): hot is the top function with about 90 % of the samples,
 * always called from caller, and the samples stand for the thread's CPU
 * time (cover) at 1000 Hz. */
static void check_hot(const char *name, const char *prog)
{
    pid_t pid = start(prog, "1", "0", "0");
    char *out;
    int rc = record(name, pid, "--duration 2s", &out);
    stop(pid);
    if (rc != 0)
        STROBE_FAIL("strobe record: exit %d\n%s", rc, out);
    CHECK_CONTAINS(out, "strobe: record: ");
    CHECK_CONTAINS(out, " samples of 2 threads of process ");
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    CHECK_EQ_INT(exp->nprocesses, 1);
    CHECK_EQ_INT(exp->nthreads, 2); /* main (pause) and the worker */
    struct strobe_sample_model *m = model(exp);
    CHECK_EQ_INT(m->hz, 1000);
    CHECK_EQ_INT(m->source, STROBE_SAMPLE_PERF);
    CHECK_STR_EQ(m->funcs[0].name, "hot");
    uint64_t hot = m->funcs[0].self;
    /* at most 2 s of CPU time; a busy machine may give the worker much
     * less (the cover below checks the rate) */
    if (m->samples < 50 || m->samples > 2100)
        STROBE_FAIL("%" PRIu64 " samples in 2 s at 1000 Hz", m->samples);
    /* hot's share: 90 % by design, within 4 binomial standard deviations
     * of the sample count and 3 points of the loops' unequal costs */
    double share = (double)hot / (double)m->samples, sd = sqrt(0.09 / (double)m->samples);
    if (share < 0.87 - 4 * sd || share > 0.93 + 4 * sd)
        STROBE_FAIL("hot: %" PRIu64 " of %" PRIu64 " samples (about 90 %% expected)", hot, m->samples);
    CHECK_EQ_U64(called_from(m, "hot", "caller"), hot);
    /* under caller: all but the rare sample in worker's own loop */
    if (m->funcs[func_index(m, "caller")].total * 100 < m->samples * 99)
        fail_outside(m, "caller");
    CHECK_EQ_U64(called_from(m, "caller", "worker"), m->funcs[func_index(m, "caller")].total);
    /* the rest: warm, and rarely caller's or the loop's own instructions */
    if ((m->funcs[func_index(m, "warm")].self + hot) * 100 < m->samples * 98)
        STROBE_FAIL("hot and warm: %" PRIu64 " + %" PRIu64 " of %" PRIu64 " samples", hot,
                    m->funcs[func_index(m, "warm")].self, m->samples);
    CHECK_EQ_U64(m->truncated, 0);
    CHECK_EQ_U64(m->threads[0].samples, 0);
    CHECK_EQ_U64(m->threads[1].samples, m->samples);
    /* cover: samples x 1 ms against the user CPU time the worker used
     * while recorded, within 10 % and 30 ms (its /proc clock has 10 ms
     * ticks, read at both ends) */
    const struct strobe_thread_info *ti = &exp->threads[1];
    CHECK(ti->has_rusage);
    double sampled_us = (double)m->samples * 1000.0, used_us = (double)ti->rusage.utime_us;
    if (sampled_us < used_us * 0.9 - 30000 || sampled_us > used_us * 1.1 + 30000)
        STROBE_FAIL("%" PRIu64 " samples for %" PRIu64 " us of user time", m->samples, ti->rusage.utime_us);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
}

/* gcc -O2 without frame pointers: the stacks come from the DWARF CFI */
STROBE_TEST(attach_o2)
{
    check_hot("attach_o2", PROG_O2);
}

STROBE_TEST(attach_frame_pointers)
{
    check_hot("attach_frame_pointers", PROG_FP);
}

/* 3 threads from the start and 2 started 0.3 s after it: all found */
STROBE_TEST(attach_threads)
{
    pid_t pid = start(PROG_O2, "3", "0", "2");
    char *out;
    int rc = record("attach_threads", pid, "--duration 1s --frequency 500", &out);
    stop(pid);
    if (rc != 0)
        STROBE_FAIL("strobe record: exit %d\n%s", rc, out);
    CHECK_CONTAINS(out, " samples of 6 threads of process ");
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    CHECK_EQ_INT(exp->nthreads, 6);
    struct strobe_sample_model *m = model(exp);
    CHECK_EQ_INT(m->hz, 500);
    CHECK_STR_EQ(m->funcs[0].name, "hot");
    for (size_t t = 1; t < 6; t++) {
        if (m->threads[t].samples < 5)
            STROBE_FAIL("thread %zu: %" PRIu64 " samples", t, m->threads[t].samples);
        CHECK(exp->threads[t].tid != exp->threads[0].tid);
    }
    CHECK_EQ_U64(m->threads[0].samples, 0);
    CHECK_EQ_U64(called_from(m, "hot", "caller"), m->funcs[0].self);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
}

/* A stack deeper than the 8 KiB copy: every sample keeps its innermost
 * frames (leaf, then descend) and is counted as truncated, and the report
 * says why. Nearly every sample is in leaf: a rare one lands in the few
 * instructions of descend's loop between two calls of leaf (1 of 440
 * once), so up to 1 % may be descend's own. */
STROBE_TEST(deep_stack)
{
    pid_t pid = start(PROG_DEEP, NULL, NULL, NULL);
    char *out;
    int rc = record("deep_stack", pid, "--duration 1s", &out);
    stop(pid);
    if (rc != 0)
        STROBE_FAIL("strobe record: exit %d\n%s", rc, out);
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    struct strobe_sample_model *m = model(exp);
    if (m->samples < 20)
        STROBE_FAIL("%" PRIu64 " samples", m->samples);
    CHECK_EQ_U64(m->truncated, m->samples);
    CHECK_STR_EQ(m->funcs[0].name, "leaf");
    CHECK(m->funcs[0].self * 100 >= m->samples * 99);
    CHECK_EQ_U64(called_from(m, "leaf", "descend"), m->funcs[0].self);
    for (size_t f = 1; f < m->nfuncs; f++)
        if (m->funcs[f].self)
            CHECK_STR_EQ(m->funcs[f].name, "descend");
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "%s report '%s' --samples | grep -o 'with their outermost frames cut.*'",
                                STROBE, dir),
                 0);
    CHECK_STR_EQ(out, "with their outermost frames cut (deeper than 128 frames or the 8 KiB stack copy)\n");
    free(out);
}

/* The process ends (killed) 0.5 s into a 20 s recording: the recording
 * ends then, with what it has. The process stays a zombie of this test
 * meanwhile, which counts as ended. */
STROBE_TEST(process_exits)
{
    pid_t pid = start(PROG_O2, "2", "0", "0");
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("process_exits"));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char *out;
    int rc = strobe_test_sh(
        &out,
        "%s record --pid %d --duration 20s -o '%s' 2>&1 & until [ -f '%s/meta' ] || ! kill -0 $! "
        "2>/dev/null; do sleep 0.05; done; sleep 0.5; kill -KILL %d; wait $!",
        STROBE, (int)pid, dir, dir, (int)pid);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    waitpid(pid, NULL, 0);
    if (rc != 0)
        STROBE_FAIL("strobe record: exit %d\n%s", rc, out);
    CHECK_CONTAINS(out, "; the process exited -> ");
    free(out);
    if (t1.tv_sec - t0.tv_sec > 10)
        STROBE_FAIL("strobe record took %ld s, not stopping when the process ended",
                    (long)(t1.tv_sec - t0.tv_sec));
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    CHECK_STR_EQ(strobe_experiment_meta(exp, "process_exited"), "1");
    CHECK_EQ_INT(exp->nthreads, 3);
    struct strobe_sample_model *m = model(exp);
    if (m->samples < 20)
        STROBE_FAIL("%" PRIu64 " samples", m->samples);
    CHECK_STR_EQ(m->funcs[0].name, "hot");
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
}

/* The main thread ends (pthread_exit, a zombie) and the others go on:
 * the process still runs, and is recorded to the end. */
STROBE_TEST(main_thread_exits)
{
    pid_t pid = start_main(PROG_O2, "2", "0", "0", "main-exits");
    char *out;
    int rc = record("main_thread_exits", pid, "--duration 1s", &out);
    stop(pid);
    if (rc != 0)
        STROBE_FAIL("strobe record: exit %d\n%s", rc, out);
    CHECK(strstr(out, "the process exited") == NULL);
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    CHECK_STR_EQ(strobe_experiment_meta(exp, "process_exited"), "0");
    struct strobe_sample_model *m = model(exp);
    /* the two workers sampled (the ended main thread may be listed) */
    size_t workers = 0;
    for (size_t t = 0; t < exp->nthreads; t++)
        if (exp->threads[t].tid != (uint64_t)pid) {
            CHECK(m->threads[t].samples > 0);
            workers++;
        }
    CHECK_EQ_INT(workers, 2);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
}

/* SIGINT ends a recording without --duration, which is written (a shell
 * starts background jobs with SIGINT ignored: strobe takes it anyway). */
STROBE_TEST(interrupted)
{
    pid_t pid = start(PROG_O2, "1", "0", "0");
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("interrupted"));
    char *out;
    int rc = strobe_test_sh(&out,
                            "%s record --pid %d -o '%s' 2>&1 & until [ -f '%s/meta' ] || ! kill -0 $! "
                            "2>/dev/null; do sleep 0.05; done; "
                            "sleep 0.5; kill -INT $!; wait $!",
                            STROBE, (int)pid, dir, dir);
    stop(pid);
    if (rc != 0)
        STROBE_FAIL("strobe record: exit %d\n%s", rc, out);
    CHECK_CONTAINS(out, "; stopped by a signal");
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    CHECK_STR_EQ(strobe_experiment_meta(exp, "process_exited"), "0");
    struct strobe_sample_model *m = model(exp);
    if (m->samples < 10)
        STROBE_FAIL("%" PRIu64 " samples", m->samples);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
}

/* A pid that was a process: one line, exit 1, nothing created. */
STROBE_TEST(no_such_process)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    char *out, expect[128];
    CHECK_EQ_INT(record("no_such_process", pid, "", &out), 1);
    snprintf(expect, sizeof expect, "strobe: record: no such process: %d\n", (int)pid);
    CHECK_STR_EQ(out, expect);
    free(out);
    CHECK(access(dir, F_OK) != 0);
}

/* Another user's process: the line says whose it is and what to do. */
STROBE_TEST(not_permitted)
{
    if (geteuid() != 0 || system("setpriv --help >/dev/null 2>&1") != 0) {
        printf("skipped: needs root and setpriv\n");
        return;
    }
    pid_t pid = start(PROG_O2, "1", "0", "0");
    char *out, expect[256];
    int rc = strobe_test_sh(
        &out, "cd / && setpriv --reuid=65534 --regid=65534 --clear-groups %s record --pid %d 2>&1", STROBE,
        (int)pid);
    stop(pid);
    CHECK_EQ_INT(rc, 1);
    snprintf(expect, sizeof expect,
             "strobe: record: process %d belongs to uid 0, not to you (uid 65534): run strobe record as that "
             "user or as root (or with CAP_PERFMON and CAP_SYS_PTRACE)\n",
             (int)pid);
    CHECK_STR_EQ(out, expect);
    free(out);
}

STROBE_TEST(usage_errors)
{
    static const struct {
        const char *args, *line;
    } cases[] = {
        {"", "strobe: record: --pid PID is required (see 'strobe record --help')\n"},
        {"--pid x", "strobe: record: --pid: 'x' is not a process id (see 'strobe record --help')\n"},
        {"--pid 1 --duration 0",
         "strobe: record: --duration: '0' is not a duration above 0 (\"2s\", \"500ms\") (see 'strobe record "
         "--help')\n"},
        {"--pid 1 --frequency 20000", "strobe: record: --frequency: '20000' is not a rate of 1 to 10000 Hz "
                                      "(see 'strobe record --help')\n"},
        {"--pid 1 extra", "strobe: record: unexpected argument 'extra' (see 'strobe record --help')\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out;
        CHECK_EQ_INT(strobe_test_sh(&out, "%s record %s 2>&1", STROBE, cases[i].args), 2);
        CHECK_STR_EQ(out, cases[i].line);
        free(out);
    }
}

STROBE_TEST_MAIN(STROBE_CASE(attach_o2), STROBE_CASE(attach_frame_pointers), STROBE_CASE(attach_threads),
                 STROBE_CASE(deep_stack), STROBE_CASE(process_exits), STROBE_CASE(main_thread_exits),
                 STROBE_CASE(interrupted), STROBE_CASE(no_such_process), STROBE_CASE(not_permitted),
                 STROBE_CASE(usage_errors))
