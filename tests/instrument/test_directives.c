/* SPDX-License-Identifier: MIT */
/*
 * `strobe instrument` on OpenMP, tm_atomic and speculative directives,
 * built with gcc -fopenmp [-fgnu-tm] at -Wall -Wextra -Werror: the result
 * equals the uninstrumented build's, and under `strobe run` every
 * construct has its exact visits per thread, named at its original line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"
#define SRC STROBE_SOURCE_DIR "/tests/instrument"

/* Per construct (name:line) its visits and their split over the threads. */
static const char visits_script[] =
    "import json,sys\n"
    "d=json.load(open(sys.argv[1]))\n"
    "regs=d['regions']; mets=d['metrics']\n"
    "tot={}; per={}; met={}\n"
    "for n in d['calltree']:\n"
    "  if n['region'] is None: continue\n"
    "  r=regs[n['region']]; k='%s:%d' % (r['name'], r['line'])\n"
    "  tot[k]=tot.get(k,0)+n['visits']\n"
    "  for t in n['threads']: per.setdefault(k,{}); "
    "per[k][t['thread']]=per[k].get(t['thread'],0)+t['visits']\n"
    "  for m in n['metrics']:\n"
    "    x=k+' '+mets[m['metric']]['name']; met[x]=met.get(x,0)+m['sum']\n"
    "for k in sorted(tot, key=lambda k: (int(k.split(':')[-1]), k)):\n"
    "  print(k, tot[k], sorted(per[k].values()) if k in sys.argv[2].split(',') else '')\n"
    "for k in sorted(met): print(k, met[k])\n";

static void check_str(const char *tmp, const char *cmd, const char *want)
{
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, want);
    free(out);
}

static unsigned line(const char *marker)
{
    return strobe_test_line_of("tests/instrument/omp_constructs.c", marker);
}

STROBE_TEST(omp_constructs_exact)
{
    const char *tmp = strobe_test_tmpdir("directives_omp");
    char *out;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s instrument %s/omp_constructs.c -o oc.c -- -fopenmp && "
             "gcc -O2 -fopenmp -Wall -Wextra -Werror -I%s/include oc.c -o oc && "
             "clang -O2 -fopenmp -Wall -Wextra -Werror -I%s/include oc.c -o oc_clang && "
             "gcc -O2 -fopenmp %s/omp_constructs.c -o plain && ./plain && ./oc && ./oc_clang && "
             "%s run -o exp -- ./oc 2>/dev/null",
             STROBE, SRC, STROBE_SOURCE_DIR, STROBE_SOURCE_DIR, SRC, STROBE);
    out = strobe_test_ok_in(tmp, cmd);
    /* the plain build, the instrumented one alone (gcc, clang), and under
     * strobe run */
    const char *result = "sum 59530 crit 40 atom 40 ord 946595 tasks 80 locked 40\n";
    char want[8192];
    snprintf(want, sizeof want, "%s%s%s%s", result, result, result, result);
    CHECK_STR_EQ(out, want);
    free(out);
    unsigned P = line("M_PARALLEL"), F = line("M_FOR"), S = line("M_SECTIONS"), SI = line("M_SINGLE"),
             CR = line("M_CRITICAL"), OF = line("M_ORDERED_FOR"), O = line("M_ORDERED */");
    /* per thread where the construct decides who runs it; totals where
     * the scheduling does (sections, single, tasks) */
    snprintf(
        cmd, sizeof cmd,
        "%s report exp --format json > r.json && python3 -c \"%s\" r.json "
        "'omp barrier@main:%u,omp implicit task@main:%u,omp parallel@main:%u,omp barrier@main:%u,"
        "omp loop@main:%u,omp barrier@main:%u,omp sections@main:%u,omp barrier@main:%u,"
        "omp master@main:%u,omp critical(update)@main:%u,omp atomic@main:%u,omp_set_lock@main:%u,omp "
        "barrier@main:%u,"
        "omp barrier@main:%u,omp loop@main:%u,omp ordered@main:%u,omp flush@main:%u,omp taskgroup@main:%u'",
        STROBE, visits_script, P, P, P, F, F, S, S, SI, line("M_MASTER"), CR, line("M_ATOMIC"),
        line("M_LOCK"), line("M_BARRIER"), OF, OF, O, line("M_FLUSH"), line("M_TASKGROUP"));
    out = strobe_test_ok_in(tmp, cmd);
    const char *four = "[10, 10, 10, 10]";
    snprintf(want, sizeof want,
             "omp barrier@main:%u 40 %s\n"
             "omp implicit task@main:%u 40 %s\n"
             "omp parallel@main:%u 10 [10]\n"
             "omp barrier@main:%u 40 %s\n"
             "omp loop@main:%u 40 %s\n"
             "omp barrier@main:%u 40 %s\n"
             "omp sections@main:%u 40 %s\n"
             "omp section@main:%u 10 \n"
             "omp section@main:%u 10 \n"
             "omp barrier@main:%u 40 %s\n"
             "omp single@main:%u 10 \n"
             "omp task@main:%u 40 \n"
             "omp atomic@main:%u 40 \n"
             "omp wait@main:%u 10 \n"
             "omp master@main:%u 10 [10]\n"
             "omp critical(update)@main:%u 40 %s\n"
             "omp wait@main:%u 40 \n"
             "omp atomic@main:%u 40 %s\n"
             "omp_set_lock@main:%u 40 %s\n"
             "omp barrier@main:%u 40 %s\n"
             "omp barrier@main:%u 40 %s\n"
             "omp loop@main:%u 40 %s\n"
             "omp ordered@main:%u 80 [20, 20, 20, 20]\n"
             "omp wait@main:%u 80 \n"
             "omp flush@main:%u 40 %s\n"
             "omp taskgroup@main:%u 40 %s\n"
             "omp task@main:%u 40 \n"
             "omp atomic@main:%u 40 \n"
             "omp parallel@main:%u omp team size 40\n",
             P, four, P, four, P, F, four, F, four, S, four, S, four, line("M_SECTION1"), line("M_SECTION2"),
             SI, four, SI, line("M_TASK"), line("M_TASK_ATOMIC"), line("M_TASKWAIT"), line("M_MASTER"), CR,
             four, CR, line("M_ATOMIC"), four, line("M_LOCK"), four, line("M_BARRIER"), four, OF, four, OF,
             four, O, O, line("M_FLUSH"), four, line("M_TASKGROUP"), four, line("M_GROUP_TASK"),
             line("M_GROUP_ATOMIC"), P);
    CHECK_STR_EQ(out, want);
    free(out);
    /* OTF2: a fork of 4 and a join per parallel region; for the 40
     * entries into the critical section an acquire and a release of lock 0
     * each, every order of 1..40 once per kind; the constructs' roles and
     * paradigm */
    out = strobe_test_ok_in(
        tmp,
        STROBE " export exp --format otf2 -o otf2 >/dev/null && cd otf2 && "
               "otf2-print traces.otf2 | grep -c '^THREAD_FORK .*Model: OPENMP, # Requested Threads: 4$'; "
               "otf2-print traces.otf2 | grep -c '^THREAD_JOIN .*Model: OPENMP$'; "
               "otf2-print traces.otf2 | grep -o '^THREAD_[A-Z]*_LOCK .*Model: OPENMP, Lock: 0, Acquisition "
               "Order: [0-9]*$' | awk '{print $1, $NF}' | sort -k2n | uniq -c | awk '$1 != 1 || $3 > 40' | "
               "wc -l; "
               "otf2-print traces.otf2 | grep -c '^THREAD_ACQUIRE_LOCK .*Model: OPENMP, Lock: 0,'; "
               "otf2-print -G traces.otf2 | grep -o 'Role: [A-Z_]*, Paradigm: OPENMP' | sort | uniq -c | "
               "awk '{print $1, $3}'");
    CHECK_STR_EQ(out, "10\n10\n0\n40\n3 ATOMIC,\n6 BARRIER,\n1 CRITICAL,\n1 FLUSH,\n2 LOOP,\n1 MASTER,\n"
                      "1 ORDERED,\n1 PARALLEL,\n2 SECTION,\n1 SECTIONS,\n1 SINGLE,\n3 TASK,\n1 TASK_WAIT,\n"
                      "4 WRAPPER,\n");
    free(out);
}

static unsigned tricky_line(const char *marker)
{
    return strobe_test_line_of("tests/instrument/omp_tricky.c", marker);
}

/* omp_tricky.c's layouts: the same result as the plain build with gcc and
 * clang at -Werror, every construct measured at its line, and a
 * diagnostic in the instrumented file naming the original line. */
STROBE_TEST(tricky_layouts)
{
    const char *tmp = strobe_test_tmpdir("directives_tricky");
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s instrument %s/omp_tricky.c -o t.c -- -fopenmp && "
             "gcc -O2 -fopenmp -Wall -Wextra -Werror -I%s/include t.c -o t && "
             "clang -O2 -fopenmp -Wall -Wextra -Werror -I%s/include t.c -o t_clang && "
             "gcc -O2 -fopenmp %s/omp_tricky.c -o plain && ./plain && ./t && ./t_clang && "
             "%s run -o exp -- ./t 2>/dev/null && %s report exp --format json > r.json && "
             "python3 -c \"%s\" r.json none",
             STROBE, SRC, STROBE_SOURCE_DIR, STROBE_SOURCE_DIR, SRC, STROBE, STROBE, visits_script);
    char *out = strobe_test_ok_in(tmp, cmd);
    unsigned M = tricky_line("M_MACRO"), S = tricky_line("M_STRINGIZED"),
             B = tricky_line("#pragma omp barrier"), SI = tricky_line("a comment with a } brace"),
             C = tricky_line("M_CONTINUED") - 1, I = tricky_line("M_INLINE"),
             A = tricky_line("_Pragma(\"omp atomic\")");
    char want[4096];
    snprintf(
        want, sizeof want,
        "n 2 m 1 k 32\nn 2 m 1 k 32\nn 2 m 1 k 32\nn 2 m 1 k 32\n"
        "omp barrier@main:%u 2 \nomp implicit task@main:%u 2 \nomp parallel@main:%u 1 \n"
        "omp critical@main:%u 2 \nomp wait@main:%u 2 \nomp barrier@main:%u 2 \n"
        "omp barrier@main:%u 2 \nomp single@main:%u 1 \n"
        "omp barrier@main:%u 2 \nomp implicit task@main:%u 2 \nomp loop@main:%u 2 \nomp parallel@main:%u 1 \n"
        "omp barrier@main:%u 2 \nomp implicit task@main:%u 2 \nomp parallel@main:%u 1 \n"
        "omp atomic@main:%u 2 \n"
        "omp parallel@main:%u omp team size 2\nomp parallel@main:%u omp team size 2\n"
        "omp parallel@main:%u omp team size 2\n",
        M, M, M, S, S, B, SI, SI, C, C, C, C, I, I, I, A, M, C, I);
    CHECK_STR_EQ(out, want);
    free(out);
    /* a warning in the instrumented file names the original file and line */
    snprintf(cmd, sizeof cmd,
             "%s instrument %s/omp_tricky.c -o t.c -- -fopenmp -DUNUSED_AT_MARK && "
             "{ gcc -fopenmp -Wall -Werror -DUNUSED_AT_MARK -I%s/include t.c -o t 2>&1; true; } | grep -o "
             "'omp_tricky.c:[0-9]*:[0-9]*: "
             "error: unused variable'",
             STROBE, SRC, STROBE_SOURCE_DIR);
    out = strobe_test_ok_in(tmp, cmd);
    snprintf(want, sizeof want, "omp_tricky.c:%u:13: error: unused variable\n", tricky_line("int unused;"));
    CHECK_STR_EQ(out, want);
    free(out);
}

/* The update kernel four ways and the speculative prefix sum: the
 * correct result; the TM variant's atomic block has one
 * transaction per update, the speculative loop one committed chunk per
 * iteration (chunks of 1), speculative or not. */
STROBE_TEST(tm_and_speculative)
{
    const char *tmp = strobe_test_tmpdir("directives_tm");
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s instrument %s/tm_kernels.c -o k.c -- -fopenmp -fgnu-tm && "
             "gcc -O2 -g -fopenmp -fgnu-tm -Wall -Wextra -Werror -I%s/include k.c -o k && "
             "./k && "
             "%s run --tm --tm-monitor stats -o exp -- ./k 2>/dev/null",
             STROBE, SRC, STROBE_SOURCE_DIR, STROBE);
    char *out = strobe_test_ok_in(tmp, cmd);
    /* GCC ignores `#pragma tm_atomic` in the plain build (a data race):
     * the correct result instead, alone and under strobe run; each kernel
     * adds 0 + 1 + ... + 9999 */
    const char *result = "tm-atomic-critical 49995000 sum 49995000 prefix 5995 sections 11992\n";
    char want[4096];
    snprintf(want, sizeof want, "%s%s", result, result);
    CHECK_STR_EQ(out, want);
    free(out);
    snprintf(cmd, sizeof cmd,
             "%s report exp --format json > r.json && python3 -c \"%s\" r.json none | "
             "grep -E '^(atomic|speculative)' | sed 's/ $//'",
             STROBE, visits_script);
    out = strobe_test_ok_in(tmp, cmd);
    unsigned tm = strobe_test_line_of("tests/instrument/tm_kernels.c", "M_TM"),
             spec = strobe_test_line_of("tests/instrument/tm_kernels.c", "M_SPEC");
    /* se.*: the 1999 chunks (2 sections) commit speculatively or not, as
     * timing has it */
    long chunks = 0, sections = 0;
    for (const char *l = out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        const char *m = strstr(l, " se.");
        if (!m || m > l + strcspn(l, "\n") ||
            (strncmp(m, " se.nonspec_committed ", 22) != 0 && strncmp(m, " se.spec_committed ", 19) != 0))
            continue;
        long v = atol(strchr(m + 1, ' ') + 1);
        if (strncmp(l, "speculative for@", 16) == 0)
            chunks += v;
        else if (strncmp(l, "speculative sections@", 21) == 0)
            sections += v;
    }
    CHECK_EQ_INT(chunks, 1999);
    CHECK_EQ_INT(sections, 2);
    /* each chunk and section is a transaction, named after the line of
     * the statement the directive applies to */
    unsigned sec = strobe_test_line_of("tests/instrument/tm_kernels.c", "M_SECTIONS");
    snprintf(
        want, sizeof want,
        "speculative for@main:%u 1\natomic@main:%u 1999\nspeculative sections@main:%u 1\natomic@main:%u 2\n",
        spec, spec + 1, sec, sec + 1);
    char got[4096] = "";
    for (const char *l = out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
        if ((strncmp(l, "atomic@main:", 12) == 0 || strncmp(l, "speculative ", 12) == 0) &&
            !memchr(l, '.', strcspn(l, "\n"))) /* not a metric's line (se.*) */
            snprintf(got + strlen(got), sizeof got - strlen(got), "%.*s\n", (int)strcspn(l, "\n"), l);
    CHECK_STR_EQ(got, want);
    free(out);
    /* the TM variant's block: one transaction per update over all threads
     * (the --tm table, from each thread's counts) */
    snprintf(cmd, sizeof cmd, "%s report exp --tm | grep -m1 '^  atomic@main._omp_fn.0 ' | awk '{print $3}'",
             STROBE);
    check_str(tmp, cmd, "10000\n");
    (void)tm;
    /* IBM's query API in the instrumented program, linked with
     * libstrobe-tm, alone and under strobe run --tm: 10,000 transactions
     * (speculative chunks count as SE only), 1,999 + 2 committed chunks */
    snprintf(cmd, sizeof cmd,
             "%s instrument %s/tm_kernels.c -o kb.c -- -fopenmp -fgnu-tm -DBGQ_STATS -I%s/include && "
             "gcc -O2 -fopenmp -fgnu-tm -Wall -Wextra -Werror -DBGQ_STATS -I%s/include -c kb.c && "
             "gcc -fopenmp -fgnu-tm " STROBE_TEST_SANITIZE " kb.o -o kb -L%s -lstrobe-tm -Wl,-rpath,%s && "
             "./kb | tail -1 && %s run --tm -o exp_bgq -- ./kb 2>/dev/null | tail -1",
             STROBE, SRC, STROBE_SOURCE_DIR, STROBE_SOURCE_DIR, STROBE_LIB_DIR, STROBE_LIB_DIR, STROBE);
    check_str(tmp, cmd,
              "bgq transactions 10000 se committed 2001\nbgq transactions 10000 se committed 2001\n");
}

/* Directives the TM families refuse, FILE:LINE and exit status 2. */
STROBE_TEST(bad_tm_directives)
{
    const char *tmp = strobe_test_tmpdir("directives_bad");
    static const struct {
        const char *src, *args, *why;
    } cases[] = {
        {"int x;\nvoid f(void)\n{\n#pragma tm_atomic\n  { x++; }\n}\n", "",
         "bad.c:4: #pragma tm_atomic needs GCC's transactional memory: compile with gcc and pass -fgnu-tm "
         "(clang has no transactional memory)"},
        {"int x;\nvoid f(void)\n{\n#pragma tm_atomic\n  x++;\n}\n", "-fgnu-tm",
         "bad.c:4: tm_atomic is not followed by a compound statement { ... }"},
        {"int x;\nvoid f(void)\n{\n#pragma tm_atomic fast\n  { x++; }\n}\n", "-fgnu-tm",
         "bad.c:4: tm_atomic: unknown clause 'fast' (safe_mode is the only one)"},
        {"int a[9];\nvoid f(void)\n{\n#pragma speculative for\n  for (int i = 0; i * i < 9; i++) "
         "a[i]++;\n}\n",
         "-fgnu-tm",
         "bad.c:4: speculative for needs a canonical loop: for ([TYPE] I = LB; I <, <=, >, >= UB; I++, I--, "
         "I += STEP, I -= STEP) with an integer I"},
        {"int a[9];\nint f(void)\n{\n#pragma speculative for\n  for (int i = 0; i < 9; i++) { if (a[i]) "
         "return i; }\n  return 0;\n}\n",
         "-fgnu-tm", "bad.c:5: speculative: return leaves the speculative code early (not supported)"},
        {"void f(int n)\n{\n  int v[n];\n#pragma speculative for\n  for (int i = 0; i < n; i++) v[i] = "
         "i;\n}\n",
         "-fgnu-tm",
         "bad.c:5: speculative: v is a variable-length array, which cannot be reached from the outlined "
         "code"},
        {"void f(void)\n{\n#pragma speculative sections\n  { }\n}\n", "-fgnu-tm",
         "bad.c:3: speculative sections has no speculative section"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/bad.c", tmp);
        FILE *f = fopen(path, "w");
        CHECK(f && fputs(cases[i].src, f) >= 0 && fclose(f) == 0);
        char *out;
        CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && rm -f out.c && %s instrument bad.c -o out.c -- %s", tmp,
                                    STROBE, cases[i].args),
                     2);
        char want[512];
        snprintf(want, sizeof want, "strobe: instrument: %s\n", cases[i].why);
        CHECK_STR_EQ(out, want);
        free(out);
        free(strobe_test_ok_in(tmp, "test ! -e out.c"));
    }
}

STROBE_TEST_MAIN(STROBE_CASE(omp_constructs_exact), STROBE_CASE(tricky_layouts),
                 STROBE_CASE(tm_and_speculative), STROBE_CASE(bad_tm_directives))
