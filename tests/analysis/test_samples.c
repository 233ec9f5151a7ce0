/* SPDX-License-Identifier: MIT */
/*
 * The sampler (src/core/sample.c) end to end: `strobe run --sample` of
 * analysis_sample_prog (sample_prog.c), then the sample model
 * (src/analysis/samples.c) and `strobe report --samples`.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/decode.h"
#include "analysis/experiment.h"
#include "analysis/samples.h"
#include "common/format.h"
#include "records.h"
#include "test.h"

#define SPIN "100000000" /* about 0.3 s of sample_spin */

/* A TSan build of the runtime does not sample (core/sample.c says why):
 * the cases run there (check-tsan) check its notice instead. */
#if defined(__SANITIZE_THREAD__)
#define SAMPLING_OFF 1
#else
#define SAMPLING_OFF 0
#endif
#define OFF_NOTICE                                                                                           \
    "strobe: STROBE_SAMPLE: this libstrobe is built with ThreadSanitizer, which delays signals: sampling "   \
    "is off\n"

static char dir[4200];
static char output[4096];

/* Runs PROG MODE under `strobe run OPTIONS`; fails the test unless it
 * exits 0. Its output is kept in `output`. */
static struct strobe_experiment *run(const char *name, const char *options, const char *prog,
                                     const char *mode)
{
    return strobe_test_run_fixture(dir, sizeof dir, output, sizeof output, name, options, prog, mode);
}

static struct strobe_sample_model *model(const struct strobe_experiment *exp,
                                         const struct strobe_profile *prof)
{
    struct strobe_sample_model *m;
    struct strobe_errbuf eb = {""};
    if (strobe_sample_model_build(exp, prof, &m, &eb) != 0)
        STROBE_FAIL("sample model: %s", eb.msg);
    return m;
}

static const struct strobe_sample_func *func(const struct strobe_sample_model *m, const char *name)
{
    for (size_t i = 0; i < m->nfuncs; i++)
        if (strcmp(m->funcs[i].name, name) == 0)
            return &m->funcs[i];
    STROBE_FAIL("no sampled function %s", name);
}

/* The line of sample_lib.c marked MARK; with TEXT, *col is the column
 * (1-based) TEXT starts at in it. */
static unsigned marked_at(const char *mark, const char *text, unsigned *col)
{
    FILE *f = fopen(STROBE_SOURCE_DIR "/tests/analysis/sample_lib.c", "r");
    char line[256];
    unsigned n = 0;
    while (f && fgets(line, sizeof line, f)) {
        n++;
        if (strstr(line, mark)) {
            fclose(f);
            const char *at = text ? strstr(line, text) : NULL;
            if (text && !at)
                STROBE_FAIL("sample_lib.c line %u has no %s", n, text);
            if (at)
                *col = (unsigned)(at - line) + 1;
            return n;
        }
    }
    STROBE_FAIL("sample_lib.c has no line %s", mark);
}

static unsigned marked_line(const char *mark)
{
    return marked_at(mark, NULL, NULL);
}

static unsigned hot_line(void)
{
    return marked_line("/* HOT */");
}

/* Thread t's samples are >= 90 % in sample_spin, at its HOT line. */
static void check_hot(const struct strobe_sample_model *m, uint32_t t)
{
    const struct strobe_sample_func *f = func(m, "sample_spin");
    CHECK(m->threads[t].samples >= 20);
    if (f->thread_self[t] * 10 < m->threads[t].samples * 9)
        STROBE_FAIL("thread %u: %llu of %llu samples in sample_spin, expected >= 90 %%", t,
                    (unsigned long long)f->thread_self[t], (unsigned long long)m->threads[t].samples);
    CHECK(strstr(f->file, "tests/analysis/sample_lib.c") != NULL);
    CHECK_EQ_INT(f->line, hot_line());
    CHECK(strstr(f->module, "libanalysis_sample_lib.so") != NULL);
}

STROBE_TEST(hot_function_in_library)
{
    /* no instrumentation at all: the samples are the whole profile */
    struct strobe_experiment *exp = run("hot", "--sample", "analysis_sample_prog", "lib " SPIN);
    CHECK(strncmp(output, "done\n", 5) == 0);
    CHECK_EQ_INT(exp->nregions, 0);
    struct strobe_sample_model *m = model(exp, NULL);
    CHECK_EQ_INT(m->hz, 1000);
    CHECK_EQ_INT(m->source, STROBE_SAMPLE_TIMER);
    check_hot(m, 0);
    /* the stack above it: outer, called by main, in the program */
    const struct strobe_sample_func *o = func(m, "outer"), *mn = func(m, "main");
    /* all but the start-up's and exit's samples; one sample there may
     * weigh up to the periods of a kernel tick (4 at 250 Hz) */
    uint64_t outside = m->threads[0].samples / 20 > 8 ? m->threads[0].samples / 20 : 8;
    CHECK(o->total <= m->threads[0].samples && o->total + outside >= m->threads[0].samples);
    CHECK(mn->total >= o->total);
    CHECK(strstr(o->file, "tests/analysis/sample_prog.c") != NULL);
    uint32_t node = m->nodes[0].first_child, depth = 0;
    bool seen_main = false;
    for (; node != STROBE_NONE; node = m->nodes[node].first_child, depth++)
        seen_main = seen_main || strcmp(m->funcs[m->nodes[node].func].name, "main") == 0;
    CHECK(seen_main);
    uint64_t total = m->samples, spin = func(m, "sample_spin")->self;
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
    /* the Cube export: the sampled call tree below the root, every sample
     * in it, the hottest path main > outer > sample_spin */
    char *cube;
    CHECK_EQ_INT(strobe_test_sh(&cube,
                                "%s/strobe export '%s' --format cubex -o '%s.cubex' && python3 "
                                "%s/tests/analysis/check_cube_samples.py '%s.cubex'",
                                STROBE_BIN_DIR, dir, dir, STROBE_SOURCE_DIR, dir),
                 0);
    char cwant[256];
    snprintf(cwant, sizeof cwant, "%" PRIu64 " analysis_sample_prog > sampled call stacks > ", spin);
    CHECK(strncmp(cube, cwant, strlen(cwant)) == 0);
    CHECK_CONTAINS(cube, " > main > outer > sample_spin\n");
    /* neither the runtime's own frames in between nor symbol versions */
    CHECK(!strstr(cube, "main_wrapper") && !strstr(cube, "@"));
    snprintf(cwant, sizeof cwant, "\ntotal %" PRIu64 "\n", total);
    CHECK_CONTAINS(cube, cwant);
    free(cube);
    /* the pprof export (decoded by protoc): sample types samples and cpu
     * (1 ms a period at 1000 Hz), the default as nothing was instrumented;
     * every sample on a sampled stack of thread 0, main > outer >
     * sample_spin among them */
    char *pp;
    CHECK_EQ_INT(strobe_test_sh(
                     &pp,
                     "%s/strobe export '%s' --format pprof -o '%s.pb.gz' && python3 "
                     "%s/tests/export/check_pprof.py '%s.pb.gz' %s/src/export > '%s.pprof.txt' && "
                     "head -1 '%s.pprof.txt' && grep -q ' > main > outer > sample_spin \\[thread=thread 0 ' "
                     "'%s.pprof.txt' && awk '/^sample/ {s += $(NF-1); c += $NF} END {print s, c}' "
                     "'%s.pprof.txt'",
                     STROBE_BIN_DIR, dir, dir, STROBE_SOURCE_DIR, dir, STROBE_SOURCE_DIR, dir, dir, dir, dir),
                 0);
    snprintf(cwant, sizeof cwant,
             "types visits/count incl_time/nanoseconds excl_time/nanoseconds samples/count cpu/nanoseconds "
             "default samples period cpu/nanoseconds 1000000\n%" PRIu64 " %" PRIu64 "000000\n",
             total, total);
    CHECK_STR_EQ(pp, cwant);
    free(pp);
    /* the report's rows */
    char *out, want[512];
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --samples", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(out,
                   "\nSamples (strobe run --sample: 1000 Hz of each thread's CPU time, CPU-time timers)\n");
    snprintf(want, sizeof want, "  sample_spin  %s/tests/analysis/sample_lib.c:%u\n", STROBE_SOURCE_DIR,
             hot_line());
    CHECK_CONTAINS(out, want);
    free(out);
    /* JSON carries them */
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --samples --format json", STROBE_BIN_DIR, dir),
                 0);
    CHECK_CONTAINS(out, "\"samples\": {");
    CHECK_CONTAINS(out, "\"name\": \"sample_spin\"");
    free(out);
}

STROBE_TEST(dlopened_library)
{
    char mode[4400];
    snprintf(mode, sizeof mode, "dlopen " SPIN " %s/libanalysis_sample_lib.so", STROBE_TEST_BIN_DIR);
    /* with the perf source, which the environment chooses */
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("dlopen"));
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "STROBE_SAMPLE_SOURCE=perf %s/strobe run --sample=2000 -o '%s' -- %s/%s %s",
                                STROBE_BIN_DIR, dir, STROBE_TEST_BIN_DIR, "analysis_sample_prog", mode),
                 0);
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    struct strobe_sample_model *m = model(exp, NULL);
    CHECK_EQ_INT(m->hz, 2000);
    CHECK_EQ_INT(m->source, STROBE_SAMPLE_PERF);
    check_hot(m, 0);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST(stripped_code_is_module_offset)
{
    /* a stripped copy of the library: its static hot function has no
     * symbol, and must not take the name of the exported one before it */
    char lib[4400], mode[4500];
    snprintf(lib, sizeof lib, "%s/libstripped.so", strobe_test_tmpdir("stripped_lib"));
    CHECK_EQ_INT(strobe_test_sh(NULL, "cp '%s/libanalysis_sample_lib.so' '%s' && strip --strip-all '%s'",
                                STROBE_TEST_BIN_DIR, lib, lib),
                 0);
    snprintf(mode, sizeof mode, "hidden " SPIN " %s", lib);
    struct strobe_experiment *exp = run("stripped", "--sample", "analysis_sample_prog", mode);
    struct strobe_sample_model *m = model(exp, NULL);
    const struct strobe_sample_func *top = &m->funcs[0];
    if (strncmp(top->name, "libstripped.so+0x", 17) != 0)
        STROBE_FAIL("hottest function %s, expected libstripped.so+0x...", top->name);
    CHECK(top->self * 10 >= m->samples * 9);
    CHECK_STR_EQ(top->file, "");
    /* the exported caller is named (the .dynsym keeps it), on the stack */
    CHECK(func(m, "sample_spin_hidden")->total * 10 >= m->samples * 9);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST(inlined_function)
{
    /* the loop of a function inlined into sample_spin_inline: a frame of
     * its own, and its caller's line is the inlined call's */
    struct strobe_experiment *exp = run("inline", "--sample", "analysis_sample_prog", "inline " SPIN);
    struct strobe_sample_model *m = model(exp, NULL);
    const struct strobe_sample_func *in = func(m, "inlined_spin"), *caller = func(m, "sample_spin_inline");
    CHECK(in->self * 10 >= m->samples * 9);
    CHECK(strstr(in->file, "tests/analysis/sample_lib.c") != NULL);
    CHECK(caller->total * 10 >= m->samples * 9);
    CHECK(caller->self * 10 < m->samples);
    CHECK_EQ_INT(caller->line, marked_line("/* CALL */"));
    /* in the tree, the inlined function is the caller's child */
    bool found = false;
    for (size_t n = 1; n < m->nnodes; n++)
        found = found || (m->nodes[n].func == (uint32_t)(in - m->funcs) &&
                          m->nodes[m->nodes[n].parent].func == (uint32_t)(caller - m->funcs));
    CHECK(found);
    /* each sampled address in the loop is one location of both: the
     * inlined function first, at a line and column of its own; the caller
     * at the inlined call's line and column (DW_AT_call_column: where the
     * call expression starts, for gcc and clang alike) */
    unsigned call_col = 0;
    unsigned call_line = marked_at("/* CALL */", "inlined_spin(n)", &call_col);
    uint32_t seen = 0;
    for (size_t i = 0; i < m->nlocs; i++) {
        const struct strobe_sample_frame *fr = &m->loc_frames[m->locs[i].first];
        if (fr->func != (uint32_t)(in - m->funcs))
            continue;
        CHECK_EQ_INT(m->locs[i].n, 2);
        CHECK_EQ_INT(fr[1].func, (uint32_t)(caller - m->funcs));
        CHECK_EQ_INT(fr[1].line, call_line);
        CHECK_EQ_INT(fr[1].col, call_col);
        CHECK(fr->line != 0 && fr->line != fr[1].line);
        CHECK(fr->col != 0);
        seen++;
    }
    CHECK(seen >= 1);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
    /* pprof: those locations have two lines, the inlined function first */
    char *out;
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "%s/strobe export '%s' --format pprof -o '%s.pb.gz' && python3 "
                       "%s/tests/export/check_pprof.py '%s.pb.gz' %s/src/export | grep '^inlined' | sort -u",
                       STROBE_BIN_DIR, dir, dir, STROBE_SOURCE_DIR, dir, STROBE_SOURCE_DIR),
        0);
    CHECK_STR_EQ(out, "inlined inlined_spin in sample_spin_inline\n");
    free(out);
}

STROBE_TEST(hybrid_with_instrumentation)
{
    struct strobe_experiment *exp = run("hybrid", "--sample", "analysis_sample_prog_instr", "lib " SPIN);
    struct strobe_profile *prof;
    struct strobe_errbuf eb = {""};
    if (strobe_profile_build(exp, STROBE_PROFILE_AUTO, &prof, &eb) != 0)
        STROBE_FAIL("profile: %s", eb.msg);
    struct strobe_sample_model *m = model(exp, prof);
    check_hot(m, 0);
    /* most samples were taken inside main > outer */
    CHECK(m->npaths >= 1);
    const struct strobe_sample_path *p = &m->paths[0];
    CHECK(p->node != STROBE_NONE && p->node != 0);
    CHECK_STR_EQ(exp->regions[prof->nodes[p->node].region].name, "outer");
    CHECK_STR_EQ(exp->regions[prof->nodes[prof->nodes[p->node].parent].region].name, "main");
    CHECK(p->samples * 10 >= m->samples * 9);
    CHECK_STR_EQ(m->funcs[p->top_func].name, "sample_spin");
    /* the profile files count them too (metric strobe.samples) */
    uint32_t metric = STROBE_NONE;
    for (uint32_t i = 0; i < exp->nmetrics; i++)
        if (strcmp(exp->metrics[i].name, STROBE_SAMPLE_METRIC) == 0)
            metric = i;
    CHECK(metric != STROBE_NONE);
    CHECK(prof->nodes[p->node].metrics != NULL);
    uint64_t counted = (uint64_t)prof->nodes[p->node].metrics[metric].sum;
    CHECK(counted + 1 >= p->samples && counted <= p->samples + 1);
    strobe_sample_model_free(m);
    strobe_profile_free(prof);
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --samples", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(out, "Samples per instrumented call path (hybrid: the regions open when sampled)\n");
    CHECK_CONTAINS(out, "main > outer\n");
    free(out);
    /* the program locks nothing: the mutex libunwind takes in the handler's
     * stack walk is the runtime's business, not recorded as the program's */
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --locks", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(out, "\n  none (no lock, semaphore or condition variable was used");
    free(out);
    /* the Cube export carries the metric */
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "%s/strobe export '%s' --format cubex -o '%s/h.cubex' && tar xOf '%s/h.cubex' "
                       "anchor.xml | grep -c '<uniq_name>strobe.samples</uniq_name>'",
                       STROBE_BIN_DIR, dir, dir, dir),
        0);
    CHECK_STR_EQ(out, "1\n");
    free(out);
    /* pprof: the instrumented profile is the default view, the samples one
     * sample_index away */
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "%s/strobe export '%s' --format pprof -o '%s/h.pb.gz' && python3 "
                                "%s/tests/export/check_pprof.py '%s/h.pb.gz' %s/src/export | sed -n 1p",
                                STROBE_BIN_DIR, dir, dir, STROBE_SOURCE_DIR, dir, STROBE_SOURCE_DIR),
                 0);
    CHECK_STR_EQ(out, "types visits/count incl_time/nanoseconds excl_time/nanoseconds samples/count "
                      "cpu/nanoseconds default excl_time period cpu/nanoseconds 1000000\n");
    free(out);
}

STROBE_TEST(profile_only)
{
    /* --no-trace: no stacks, but the samples per instrumented call path
     * from the profile's strobe.samples */
    struct strobe_experiment *exp =
        run("noTrace", "--no-trace --sample", "analysis_sample_prog_instr", "lib " SPIN);
    struct strobe_profile *prof;
    struct strobe_errbuf eb = {""};
    if (strobe_profile_build(exp, STROBE_PROFILE_AUTO, &prof, &eb) != 0)
        STROBE_FAIL("profile: %s", eb.msg);
    struct strobe_sample_model *m = model(exp, prof);
    CHECK_EQ_INT(m->nfuncs, 0);
    CHECK(m->samples >= 100);
    CHECK_EQ_INT(m->unstacked, m->samples);
    CHECK(m->paths[0].samples * 10 >= m->samples * 9);
    CHECK_STR_EQ(exp->regions[prof->nodes[m->paths[0].node].region].name, "outer");
    CHECK_EQ_INT(m->paths[0].top_func, STROBE_NONE);
    strobe_sample_model_free(m);
    strobe_profile_free(prof);
    strobe_experiment_close(exp);
}

STROBE_TEST(killed_keeps_samples)
{
    /* SIGKILL after 0.3 s of sample_spin: the samples taken so far are in
     * the trace */
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("killed"));
    char *out;
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "%s/strobe run --sample -o '%s' -- %s/analysis_sample_prog killed " SPIN,
                       STROBE_BIN_DIR, dir, STROBE_TEST_BIN_DIR),
        137);
    free(out);
    struct strobe_experiment *exp = strobe_test_open_experiment(dir);
    struct strobe_sample_model *m = model(exp, NULL);
    CHECK_EQ_INT(exp->nthreads, 1);
    check_hot(m, 0);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST(threads_and_fork)
{
    /* threads created later and a forked child are sampled too */
    struct strobe_experiment *exp = run("threads", "--sample", "analysis_sample_prog", "threads 30000000");
    CHECK_EQ_INT(exp->nprocesses, 2);
    if (SAMPLING_OFF) {
        CHECK_CONTAINS(output, OFF_NOTICE);
        strobe_experiment_close(exp);
        return;
    }
    struct strobe_sample_model *m = model(exp, NULL);
    size_t sampled = 0;
    for (size_t t = 0; t < exp->nthreads; t++)
        sampled += m->threads[t].samples >= 5;
    CHECK(sampled >= 4); /* main, 2 workers, the child's main */
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
}

/* Runs MODE under `strobe run OPTIONS`: it must print "done" and leave
 * samples. */
static void check_survives(const char *name, const char *options, const char *mode)
{
    struct strobe_experiment *exp = run(name, options, "analysis_sample_prog", mode);
    CHECK_CONTAINS(output, "done\n");
    if (SAMPLING_OFF) {
        CHECK_CONTAINS(output, OFF_NOTICE);
        strobe_experiment_close(exp);
        return;
    }
    struct strobe_sample_model *m = model(exp, NULL);
    CHECK(m->samples > 0);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST(stress)
{
    /* 10 kHz while 80 threads lock, allocate and exit */
    check_survives("stress", "--sample=10000 --malloc", "stress " SPIN);
}

STROBE_TEST(spawn_and_vfork)
{
    /* posix_spawn and vfork children while 4 threads are sampled at 10 kHz */
    check_survives("sample_spawn", "--sample=10000", "spawn " SPIN);
}

STROBE_TEST(program_sigprof_handler)
{
    /* the program's own SIGPROF timer still reaches its handler, and the
     * runtime keeps sampling */
    struct strobe_experiment *exp = run("handler", "--sample", "analysis_sample_prog", "handler " SPIN);
    CHECK(strncmp(output, "own > 0\ndone\n", 13) == 0);
    struct strobe_sample_model *m = model(exp, NULL);
    check_hot(m, 0);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
}

STROBE_TEST(blocked_sigprof)
{
    /* the half spun with SIGPROF blocked is not sampled: its time shows as
     * missed (about 300 periods of 1 ms), and the report says how much of
     * the thread's CPU time the samples cover */
    struct strobe_experiment *exp = run("blocked", "--sample", "analysis_sample_prog", "blocked " SPIN);
    CHECK(strncmp(output, "done\n", 5) == 0);
    struct strobe_sample_model *m = model(exp, NULL);
    CHECK(m->threads[0].samples >= 20);
    CHECK(m->threads[0].missed >= 100);
    CHECK(m->threads[0].missed <= m->threads[0].samples * 2);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --samples", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(out, " missed (signal blocked or delayed, or the runtime busy)");
    CHECK_CONTAINS(out, "1 thread(s) sampled for less than 75 % of its CPU time");
    free(out);
}

STROBE_TEST(blocked_thread)
{
    /* a thread that keeps every signal blocked has no sample at all: the
     * report still lists it, with its CPU time uncovered */
    struct strobe_experiment *exp =
        run("blocked_thread", "--sample", "analysis_sample_prog", "blocked_thread " SPIN);
    CHECK(strncmp(output, "done\n", 5) == 0);
    CHECK_EQ_INT(exp->nthreads, 2);
    struct strobe_sample_model *m = model(exp, NULL);
    CHECK(m->threads[1].sampled);
    CHECK_EQ_U64(m->threads[1].records, 0);
    strobe_sample_model_free(m);
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --samples", STROBE_BIN_DIR, dir), 0);
    CHECK_CONTAINS(out, "\n         1          0        0      0% \n");
    CHECK_CONTAINS(out, "1 thread(s) sampled for less than 75 % of its CPU time");
    free(out);
}

STROBE_TEST(bad_rates)
{
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe run --sample=0 -- true", STROBE_BIN_DIR), 2);
    CHECK_CONTAINS(out, "--sample: '0' is not a rate in Hz from 1 to 10000");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe run --sample=20k -- true", STROBE_BIN_DIR), 2);
    CHECK_CONTAINS(out, "--sample: '20k' is not a rate in Hz from 1 to 10000");
    free(out);
    /* the runtime's own check (`strobe run` replaces STROBE_SAMPLE: env
     * sets it for the image it executes) */
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("bad_rates"));
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe run -o '%s' -- env STROBE_SAMPLE=10001 /bin/true",
                                STROBE_BIN_DIR, dir),
                 0);
    CHECK_CONTAINS(out, "strobe: STROBE_SAMPLE=10001: expected a rate in Hz from 1 to 10000 (0: off); "
                        "measurement disabled\n");
    free(out);
}

STROBE_TEST(corrupt_sample_record_is_one_line_error)
{
    struct strobe_experiment *exp = run("corrupt_sample", "--sample", "analysis_sample_prog", "lib 30000000");
    char evt[4400], *out, want[256];
    snprintf(evt, sizeof evt, "%s/%s/t0.evt", dir, exp->processes[0].dir);
    strobe_experiment_close(exp);
    long rec = strobe_test_first_record(evt, STROBE__RAW_SAMPLE, NULL);
    /* weight (the first payload byte) 0: out of range */
    strobe_test_patch_ext_op(evt, rec, 0);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --samples", STROBE_BIN_DIR, dir), 1);
    snprintf(want, sizeof want, "t0.evt: offset %ld: SAMPLE record: weight 0, missed 0, flags 0, ", rec);
    CHECK_CONTAINS(out, want);
    CHECK(strchr(out, '\n') == out + strlen(out) - 1); /* one line */
    free(out);
}

STROBE_TEST(report_samples_usage)
{
    /* a run that did not sample */
    struct strobe_experiment *exp = run("nosample", "", "analysis_sample_prog", "lib 1000");
    strobe_experiment_close(exp);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s/strobe report '%s' --samples", STROBE_BIN_DIR, dir), 1);
    CHECK_CONTAINS(out, "--samples: the run did not sample (record with `strobe run --sample`)\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(hot_function_in_library), STROBE_CASE(dlopened_library),
                 STROBE_CASE(stripped_code_is_module_offset), STROBE_CASE(inlined_function),
                 STROBE_CASE(spawn_and_vfork), STROBE_CASE(profile_only), STROBE_CASE(killed_keeps_samples),
                 STROBE_CASE(hybrid_with_instrumentation), STROBE_CASE(threads_and_fork), STROBE_CASE(stress),
                 STROBE_CASE(program_sigprof_handler), STROBE_CASE(blocked_sigprof),
                 STROBE_CASE(blocked_thread), STROBE_CASE(bad_rates),
                 STROBE_CASE(corrupt_sample_record_is_one_line_error), STROBE_CASE(report_samples_usage))
