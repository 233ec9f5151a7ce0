/* SPDX-License-Identifier: MIT */
/*
 * Header-only test framework. A test file defines cases with
 * STROBE_TEST(name) and ends with STROBE_TEST_MAIN(STROBE_CASE(a), ...).
 * CMake (strobe_add_test in tests/CMakeLists.txt) finds the STROBE_CASE
 * names in the source and registers each case as its own ctest test, so
 * every case runs in its own process with a timeout.
 *
 * Checks print "file:line: check failed: ..." and exit(1).
 */
#ifndef STROBE_TESTS_TEST_H
#define STROBE_TESTS_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct strobe_test_case {
    const char *name;
    void (*fn)(void);
};

#define STROBE_TEST(name) static void strobe_test_##name(void)
#define STROBE_CASE(name) { #name, strobe_test_##name }

#define STROBE_TEST_MAIN(...)                                                  \
    int main(int argc, char **argv)                                            \
    {                                                                          \
        static const struct strobe_test_case cases[] = { __VA_ARGS__ };       \
        size_t n = sizeof cases / sizeof cases[0];                             \
        int ran = 0;                                                           \
        for (size_t i = 0; i < n; i++) {                                       \
            if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)               \
                continue;                                                      \
            cases[i].fn();                                                     \
            printf("ok %s\n", cases[i].name);                                  \
            ran++;                                                             \
        }                                                                      \
        if (!ran) {                                                            \
            fprintf(stderr, "no test case named %s\n", argc > 1 ? argv[1] : "?"); \
            return 1;                                                          \
        }                                                                      \
        return 0;                                                              \
    }

#define STROBE_FAIL(...)                                                       \
    do {                                                                       \
        fprintf(stderr, "%s:%d: check failed: ", __FILE__, __LINE__);          \
        fprintf(stderr, __VA_ARGS__);                                          \
        fprintf(stderr, "\n");                                                 \
        exit(1);                                                               \
    } while (0)

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond))                                                           \
            STROBE_FAIL("%s", #cond);                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                     \
    do {                                                                       \
        long long a_ = (long long)(a), b_ = (long long)(b);                    \
        if (a_ != b_)                                                          \
            STROBE_FAIL("%s == %s (%lld != %lld)", #a, #b, a_, b_);            \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                     \
    do {                                                                       \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                       \
        if (a_ != b_)                                                          \
            STROBE_FAIL("%s == %s (%" PRIu64 " != %" PRIu64 ")", #a, #b, a_, b_); \
    } while (0)

#define CHECK_STR_EQ(a, b)                                                     \
    do {                                                                       \
        const char *a_ = (a), *b_ = (b);                                       \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                 \
            STROBE_FAIL("%s == %s (\"%s\" != \"%s\")", #a, #b, a_ ? a_ : "(null)", \
                        b_ ? b_ : "(null)");                                   \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                            \
    do {                                                                       \
        const char *h_ = (hay), *n_ = (needle);                                \
        if (!h_ || !strstr(h_, n_))                                            \
            STROBE_FAIL("\"%s\" not found in %s:\n%s", n_, #hay, h_ ? h_ : "(null)"); \
    } while (0)

/* Runs a shell command; returns its exit status (128+signal when killed)
 * and, when out is not NULL, its stdout+stderr in a malloc'd string. */
static inline int strobe_test_sh(char **out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#include <stdarg.h>
static inline int strobe_test_sh(char **out, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[8300];
    snprintf(full, sizeof full, "(%s) 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p)
        STROBE_FAIL("popen %s", cmd);
    size_t len = 0, cap = 65536;
    char *buf = (char *)malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 4096)
            buf = (char *)realloc(buf, cap *= 2);
    }
    buf[len] = 0;
    int st = pclose(p);
    if (out)
        *out = buf;
    else
        free(buf);
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + WTERMSIG(st);
}

/* Runs CMD in DIR; fails the test unless it exits 0; returns its output
 * (free it). */
static inline char *strobe_test_ok_in(const char *dir, const char *cmd)
{
    char *out;
    int rc = strobe_test_sh(&out, "cd '%s' && %s", dir, cmd);
    if (rc != 0)
        STROBE_FAIL("%s: exit %d\n%s", cmd, rc, out);
    return out;
}

/* The number of the first line of source file PATH (from the source
 * tree's root) that contains TEXT; fails the test when none does. */
static inline unsigned strobe_test_line_of(const char *path, const char *text)
{
    char full[4096], line[512];
    snprintf(full, sizeof full, "%s/%s", STROBE_SOURCE_DIR, path);
    FILE *f = fopen(full, "r");
    for (unsigned n = 1; f && fgets(line, sizeof line, f); n++)
        if (strstr(line, text)) {
            fclose(f);
            return n;
        }
    STROBE_FAIL("%s: no line with %s", path, text);
}

/* A shell filter printing "name visits" per row of the flat profile in
 * the JSON report on its standard input (strobe report --format json),
 * sorted by name. */
#define STROBE_TEST_FLAT_PY                                                    \
    "python3 -c 'import json,sys; d=json.load(sys.stdin); "                    \
    "[print(d[\"regions\"][f[\"region\"]][\"name\"], f[\"visits\"]) for f in " \
    "sorted(d[\"flat\"], key=lambda f: d[\"regions\"][f[\"region\"]][\"name\"])]'"

/* Fresh empty scratch directory under the test's working directory,
 * named after the case; returned string is static per call site use. */
static inline const char *strobe_test_tmpdir(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s.tmp", STROBE_TEST_WORK_DIR, name);
    strobe_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s'", path, path);
    return path;
}

#endif
