/* SPDX-License-Identifier: MIT */
/*
 * The installed strobe (cmake --install into a temporary prefix, then the
 * prefix moved to another folder, so nothing may remember where it was
 * built or installed) run with a clean environment (env -i): the command,
 * the daemon, the runtime `strobe run` preloads from its own prefix, and
 * `strobe cc` with its own headers and pass plugin;
 * and a program built downstream against the installed headers and
 * library, through pkg-config and through CMake's find_package(strobe),
 * links and runs, alone and under strobe run.
 */
#include <stdio.h>
#include <stdlib.h>

#include "test.h"

#define BUILD STROBE_BIN_DIR "/.."
#define CLEAN "env -i PATH=/usr/bin:/bin HOME=/nonexistent"

/* Installs into DIR/stage, then moves it to DIR/moved. Returns DIR. */
static const char *installed(const char *name)
{
    const char *tmp = strobe_test_tmpdir(name);
    char cmd[3 * 4096 + 256];
    snprintf(cmd, sizeof cmd,
             "cmake --install '%s' --prefix '%s/stage' >/dev/null && mv '%s/stage' '%s/moved'", BUILD, tmp,
             tmp, tmp);
    char *out = strobe_test_ok_in(tmp, cmd);
    free(out);
    return tmp;
}

STROBE_TEST(tools_run_from_moved_prefix)
{
    const char *tmp = installed("install_tools");
    char cmd[4096];
    snprintf(
        cmd, sizeof cmd,
        "%s moved/bin/strobe --version >/dev/null && echo version && "
        "(%s moved/bin/strobed 2>&1 | head -1) && "
        "(%s moved/bin/petra-bench --help 2>&1 | head -1 | cut -c1-18) && "
        "for f in moved/bin/* moved/lib/*.so; do %s ldd \"$f\" | grep 'not found' || true; done && "
        "printf '#include <stdio.h>\\nint main(void) { puts(\"hi\"); return 0; }\\n' > p.c && cc p.c -o p && "
        "%s moved/bin/strobe run -o exp -- ./p 2>/dev/null && %s moved/bin/strobe report exp | "
        "grep -c '^  exit  *status 0$' && "
        /* strobe cc: its headers (the directive step) and its plugin (blame) */
        "if [ -f moved/lib/libstrobe-cc.so ]; then %s moved/bin/strobe cc -fopenmp %s/tests/cc/blame_omp.c "
        "-o omp && readelf -S omp | grep -c strobe_blame; else echo 1; fi",
        CLEAN, CLEAN, CLEAN, CLEAN, CLEAN, CLEAN, CLEAN, STROBE_SOURCE_DIR);
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(
        out, "version\nusage: strobed -c FILE [--log-level LEVEL] [--check]\nusage: petra-bench\nhi\n1\n1\n");
    free(out);
}

/* annotate.c uses the API (regions, metrics): built with the flags
 * pkg-config gives, it starts alone (the .pc's run path) and is measured
 * by the installed strobe run. */
STROBE_TEST(downstream_pkg_config)
{
    const char *tmp = installed("install_pkg_config");
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s PKG_CONFIG_PATH=moved/lib/pkgconfig sh -c 'cc %s/examples/annotate/annotate.c -o ann "
             "$(pkg-config --cflags --libs strobe) && ./ann >/dev/null && echo alone && "
             "moved/bin/strobe run -o exp -- ./ann >/dev/null 2>&1 && moved/bin/strobe report exp | grep -c "
             "^Summary'",
             CLEAN, STROBE_SOURCE_DIR);
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, "alone\n1\n");
    free(out);
}

STROBE_TEST(downstream_cmake)
{
    const char *tmp = installed("install_cmake");
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "mkdir -p app && printf 'cmake_minimum_required(VERSION 3.16)\\nproject(app C)\\n"
             "find_package(strobe REQUIRED)\\nadd_executable(ann %s/examples/annotate/annotate.c)\\n"
             "target_link_libraries(ann PRIVATE strobe::strobe)\\n' > app/CMakeLists.txt && "
             "%s sh -c 'cmake -S app -B app/b -DCMAKE_PREFIX_PATH=\"$PWD/moved\" >/dev/null && "
             "cmake --build app/b >/dev/null && app/b/ann >/dev/null && echo built'",
             STROBE_SOURCE_DIR, CLEAN);
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, "built\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(tools_run_from_moved_prefix), STROBE_CASE(downstream_pkg_config),
                 STROBE_CASE(downstream_cmake))
