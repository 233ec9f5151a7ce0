/* SPDX-License-Identifier: MIT */
/*
 * `strobe cc` and `strobe c++`: programs built by the wrapper (clang by
 * default, gcc through STROBE_CC, from a makefile through CC="strobe cc")
 * are measured by `strobe run` with their exact visit counts
 * (workload.c), clang-14 when it is the only clang, C++ functions are reported by their C++ names
 * (cc_shapes.cpp), a missing or recursive compiler gives one line, and
 * --trace selects the level.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"
#define SRC STROBE_SOURCE_DIR "/tests/cli"

/* Builds with BUILD (a shell command run in TMP), runs ./prog under
 * strobe run, returns the flat profile lines. */
static char *build_and_measure(const char *tmp, const char *build)
{
    char *out;
    int rc = strobe_test_sh(&out,
                            "cd '%s' && %s && %s run -o exp -- ./prog >/dev/null 2>&1 && %s report exp "
                            "--format json | " STROBE_TEST_FLAT_PY,
                            tmp, build, STROBE, STROBE);
    if (rc != 0)
        STROBE_FAIL("%s: exit %d\n%s", build, rc, out);
    return out;
}

static const char workload_flat[] = "compute 65\nleaf 130\nmain 1\nrec 4\nsetup 1\nworker 3\n";

STROBE_TEST(clang_default)
{
    char *out = build_and_measure(strobe_test_tmpdir("cc_clang"),
                                  STROBE " cc -O2 -pthread " SRC "/workload.c -o prog");
    CHECK_STR_EQ(out, workload_flat);
    free(out);
}

STROBE_TEST(gcc_by_strobe_cc)
{
    char *out = build_and_measure(strobe_test_tmpdir("cc_gcc"),
                                  "STROBE_CC=gcc " STROBE " cc -O2 -pthread " SRC "/workload.c -o prog");
    CHECK_STR_EQ(out, workload_flat);
    free(out);
}

/* Only clang-14 in PATH (Debian's clang-14 package without the clang
 * one): strobe cc runs it, with the plugin; neither: one line. */
STROBE_TEST(versioned_clang_only)
{
    const char *tmp = strobe_test_tmpdir("cc_clang14");
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "mkdir -p '%s/path' && for p in clang-14 ld ld.bfd as; do "
                                "ln -sf \"$(command -v $p)\" '%s/path/'; done",
                                tmp, tmp),
                 0);
    free(out);
    out = build_and_measure(tmp, "PATH=$PWD/path " STROBE " cc -O2 -pthread " SRC "/workload.c -o prog && "
                                 "readelf -S prog | grep -c strobe_blame >/dev/null");
    CHECK_STR_EQ(out, workload_flat);
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && rm path/clang-14 && PATH=$PWD/path %s cc x.c", tmp, STROBE),
                 127);
    CHECK_STR_EQ(out, "strobe: cc: clang: not found (install it, or name the compiler in STROBE_CC)\n");
    free(out);
}

/* CC="strobe cc" in a makefile: separate compile and link steps. */
STROBE_TEST(makefile)
{
    const char *tmp = strobe_test_tmpdir("cc_make");
    char *out;
    CHECK_EQ_INT(
        strobe_test_sh(
            &out,
            "cd '%s' && cp %s/workload.c . && printf 'prog: workload.o\\n\\t$(CC) -pthread "
            "workload.o -o prog\\nworkload.o: workload.c\\n\\t$(CC) -O1 -c workload.c\\n' > Makefile",
            tmp, SRC),
        0);
    free(out);
    out = build_and_measure(tmp, "make -s CC='" STROBE " cc'");
    CHECK_STR_EQ(out, workload_flat);
    free(out);
}

STROBE_TEST(cxx_names)
{
    char *out =
        build_and_measure(strobe_test_tmpdir("cc_cxx"), STROBE " c++ -O1 " SRC "/cc_shapes.cpp -o prog");
    CHECK_CONTAINS(out, "geo::Square::area() const 3\n");
    CHECK_CONTAINS(out, "int total<int>(std::vector<int, std::allocator<int> > const&) 1\n");
    CHECK_CONTAINS(out, "main 1\n");
    CHECK_CONTAINS(out, "sum_areas(std::vector<geo::Shape*, std::allocator<geo::Shape*> > const&) 1\n");
    CHECK(strstr(out, "_Z") == NULL);
    free(out);
}

STROBE_TEST(errors)
{
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "STROBE_CC=no-such-compiler %s cc x.c", STROBE), 127);
    CHECK_STR_EQ(out, "strobe: cc: no-such-compiler: not found\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "STROBE_CC='%s cc' %s cc x.c", STROBE, STROBE), 2);
    CHECK_STR_EQ(out, "strobe: cc: STROBE_CC runs strobe cc again (name the real compiler in STROBE_CC)\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "STROBE_CXX=' ' %s c++ x.cpp", STROBE), 2);
    CHECK_STR_EQ(out, "strobe: c++: STROBE_CXX is blank (name the compiler, e.g. STROBE_CXX=gcc)\n");
    free(out);
    /* the compiler's own failure and exit status come through */
    CHECK_EQ_INT(
        strobe_test_sh(&out, "cd '%s' && %s cc no-such-file.c", strobe_test_tmpdir("cc_errors"), STROBE), 1);
    CHECK_CONTAINS(out, "no-such-file.c");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "%s help c++", STROBE), 0);
    CHECK_CONTAINS(
        out, "usage: strobe cc [--trace=bb|bb,mem|func] [--no-blame] [--no-directives] [COMPILER ARGS...]\n");
    free(out);
}

/* --trace is strobe's (the compiler never sees it); bb levels need clang
 * 14 (one line otherwise, and the function level); func: no pass. */
STROBE_TEST(trace_option)
{
    const char *tmp = strobe_test_tmpdir("cc_trace");
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "%s cc --trace=mem x.c", STROBE), 2);
    CHECK_STR_EQ(out, "strobe: cc: --trace=mem: not a level (bb, bb,mem or func)\n");
    free(out);
    CHECK_EQ_INT(
        strobe_test_sh(&out, "cd '%s' && STROBE_CC=gcc %s cc --trace=bb -O1 %s/workload.c -o gprog -pthread",
                       tmp, STROBE, SRC),
        0);
    CHECK_STR_EQ(out, "strobe: cc: --trace=bb needs clang 14 (the compiler is gcc): function level only\n");
    free(out);
    /* the default with gcc: function level, silently */
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && STROBE_CC=gcc %s cc -O1 %s/workload.c -o gprog -pthread",
                                tmp, STROBE, SRC),
                 0);
    CHECK_STR_EQ(out, "");
    free(out);
    CHECK_EQ_INT(
        strobe_test_sh(&out,
                       "cd '%s' && %s cc --trace=func -O1 %s/workload.c -o fprog -pthread && "
                       "%s cc -O1 %s/workload.c -o mprog -pthread && nm fprog | grep -c strobe.bb.module; "
                       "nm mprog | grep -c strobe.bb.module",
                       tmp, STROBE, SRC, STROBE, SRC),
        0);
    CHECK_STR_EQ(out, "0\n1\n");
    free(out);
}

/* Directives: `STROBE_CC=gcc strobe cc -fopenmp` instruments each source
 * with directives (directives/: a parallel region in main.c, a user region
 * in util.c, both including "util.h" of their folder), compiled from
 * another folder in two steps (-c without -o, -MD, an -iquote folder with
 * another util.h, which the sources' own folder precedes) and in one with clang;
 * the regions have their exact visits and lines, the dependency files name
 * the originals, no temporary copy is left. A malformed directive stops
 * the compile with FILE:LINE and no object; the temporary folder goes
 * whatever the end; --no-directives compiles as it is. */
STROBE_TEST(directives)
{
    const char *tmp = strobe_test_tmpdir("cc_directives");
    char cmd[2048];
    snprintf(
        cmd, sizeof cmd,
        "mkdir t other && printf '#error the source folder comes first\\n' > other/util.h && "
        "export TMPDIR=$PWD/t STROBE_CC=gcc && "
        "%s cc -fopenmp -O2 -iquote other -c %s/directives/util.c %s/directives/main.c -MD && "
        "%s cc -fopenmp main.o util.o -o prog && ./prog && ls t | wc -l && ls *.o *.d && "
        "grep -c 'strobe-cc' main.d util.d; grep -c '^ %s/directives/main.c ' main.d && "
        "unset STROBE_CC && %s cc -fopenmp %s/directives/main.c %s/directives/util.c -o prog2 && ./prog2 && "
        "ls t | wc -l",
        STROBE, SRC, SRC, STROBE, SRC, STROBE, SRC, SRC);
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, "90\n0\nmain.d\nmain.o\nutil.d\nutil.o\nmain.d:0\nutil.d:0\n1\n90\n0\n");
    free(out);
    for (int step = 0; step < 2; step++) {
        char *flat;
        CHECK_EQ_INT(
            strobe_test_sh(&flat,
                           "cd '%s' && rm -rf exp && %s run -o exp -- ./%s >/dev/null 2>&1 && %s report "
                           "exp --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); "
                           "[print(d[\"regions\"][f[\"region\"]][\"name\"], f[\"visits\"], "
                           "d[\"regions\"][f[\"region\"]][\"line\"]) for f in "
                           "sorted(d[\"flat\"], key=lambda f: d[\"regions\"][f[\"region\"]][\"name\"])]'",
                           tmp, STROBE, step ? "prog2" : "prog", STROBE),
            0);
        char want[512];
        unsigned par = strobe_test_line_of("tests/cli/directives/main.c", "#pragma omp parallel");
        /* clang's outlined parallel body is a function of its own */
        snprintf(want, sizeof want,
                 "%smain 1 %u\nomp barrier@main 2 %u\nomp implicit task@main 2 %u\nomp parallel@main 1 %u\n"
                 "work 2 %u\nwork_loop 2 %u\n",
                 step ? ".omp_outlined. 2 11\n.omp_outlined._debug__ 2 11\n" : "",
                 strobe_test_line_of("tests/cli/directives/main.c", "int main(void)"), par, par, par,
                 strobe_test_line_of("tests/cli/directives/util.c", "int work(int n)"),
                 strobe_test_line_of("tests/cli/directives/util.c", "#pragma strobe region(work_loop)"));
        CHECK_STR_EQ(flat, want);
        free(flat);
    }
    /* a malformed directive: FILE:LINE, exit status 2, no object */
    snprintf(cmd, sizeof cmd,
             "printf 'void f(void)\\n{\\n#pragma strobe region end(x)\\n}\\n' > bad.c && "
             "TMPDIR=$PWD/t %s cc -c bad.c; echo $?; ls bad.o 2>/dev/null | wc -l; ls t | wc -l",
             STROBE);
    out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, "strobe: cc: bad.c:3: region end without its begin (regions nest): x\n2\n0\n0\n");
    free(out);
    /* the temporary folder goes also when libclang cannot parse the file
     * (compiled as it is: the compiler's error) and when strobe cc is
     * stopped (timeout, Ctrl-C): the signal goes to the compiler, which
     * here is a script that would sleep 5 s */
    snprintf(
        cmd, sizeof cmd,
        "printf '/* pragma */\\nint f(void) { return x; }\\n' > undeclared.c && "
        "TMPDIR=$PWD/t STROBE_CC=gcc %s cc -c undeclared.c >/dev/null 2>&1; echo $?; ls t | wc -l; "
        "printf '#!/bin/sh\\nexec sleep 5\\n' > slowcc && chmod +x slowcc && "
        "TMPDIR=$PWD/t STROBE_CC=./slowcc timeout 0.3 %s cc -c %s/directives/util.c; echo $?; ls t | wc -l",
        STROBE, STROBE, SRC);
    out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, "1\n0\n124\n0\n");
    free(out);
    /* --no-directives: compiled as it is (gcc ignores the unknown pragma) */
    snprintf(cmd, sizeof cmd,
             "STROBE_CC=gcc %s cc --no-directives -O2 %s/directives/util.c %s/directives/main.c -o plain && "
             "rm -rf exp && %s run -o exp -- ./plain >/dev/null 2>&1 && %s report exp | awk '/work_loop|omp "
             "/' | wc -l",
             STROBE, SRC, SRC, STROBE, STROBE);
    out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, "0\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(clang_default), STROBE_CASE(gcc_by_strobe_cc), STROBE_CASE(versioned_clang_only),
                 STROBE_CASE(makefile), STROBE_CASE(cxx_names), STROBE_CASE(errors),
                 STROBE_CASE(trace_option), STROBE_CASE(directives))
