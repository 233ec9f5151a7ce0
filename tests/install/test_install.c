/* SPDX-License-Identifier: MIT */
/*
 * The installed strobe (cmake --install into a temporary prefix, then the
 * prefix moved to another folder, so nothing may remember where it was
 * built or installed) run with a clean environment (env -i): the command,
 * the demo built from the installed example sources and measured,
 * the daemon, the runtime `strobe run` preloads from its own prefix, and
 * `strobe cc` with its own headers and pass plugin;
 * and a program built downstream against the installed headers and
 * library, through pkg-config and through CMake's find_package(strobe),
 * links and runs, alone and under strobe run; the service files pass
 * systemd's checks, the configuration the service starts with loads, and
 * strobed tells systemd when it is ready.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/build_config.h"
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

/* petra-bench's first help line, in a tree built with PETRA */
#if STROBE_WITH_PETRA
#define PETRA_BENCH_USAGE "usage: petra-bench\n"
#else
#define PETRA_BENCH_USAGE ""
#endif

STROBE_TEST(tools_run_from_moved_prefix)
{
    const char *tmp = installed("install_tools");
    char cmd[4096];
    snprintf(
        cmd, sizeof cmd,
        "%s moved/bin/strobe --version >/dev/null && echo version && "
        "(%s moved/bin/strobed 2>&1 | head -1) && "
        "%s"
        "for f in moved/bin/* moved/lib/*.so; do %s ldd \"$f\" | grep 'not found' || true; done && "
        /* the demo from the installed example sources */
        "cc -g -finstrument-functions -pthread moved/share/doc/strobe/examples/demo/demo.c -o demo && "
        "%s moved/bin/strobe run -o exp -- ./demo >/dev/null 2>&1 && %s moved/bin/strobe report exp --format "
        "json | " STROBE_TEST_FLAT_PY " && "
        /* strobe cc: its headers (the directive step) and its plugin (blame) */
        "if [ -f moved/lib/strobe/libstrobe-cc.so ]; then %s moved/bin/strobe cc -fopenmp "
        "%s/tests/cc/blame_omp.c "
        "-o omp && readelf -S omp | grep -c strobe_blame; else echo 1; fi",
        CLEAN, CLEAN,
        STROBE_WITH_PETRA ? "(" CLEAN " moved/bin/petra-bench --help 2>&1 | head -1 | cut -c1-18) && " : "",
        CLEAN, CLEAN, CLEAN, CLEAN, STROBE_SOURCE_DIR);
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(
        out, "version\nusage: strobed -c FILE [--log-level LEVEL] [--check]\n" PETRA_BENCH_USAGE
             "fib 177\nintegrate 4\nmain 1\nreport 1\nsample 25000\nsetup 1\nstart_workers 1\nworker 4\n1\n");
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

/* The service files: the units pass `systemd-analyze verify` (their
 * ExecStart pointed at the moved prefix, a template checked through an
 * instance), the sysusers.d entry makes the strobe user in an empty root,
 * the logrotate snippet names strobed's log folder. */
STROBE_TEST(service_files)
{
    const char *tmp = installed("install_service");
    char cmd[4096];
    snprintf(
        cmd, sizeof cmd,
        "mkdir -p v root/etc && for u in strobed.service strobed@.service; do "
        "sed \"s|=[^ ]*/bin/strobed|=$PWD/moved/bin/strobed|\" moved/lib/systemd/system/$u > v/$u; done && "
        "cp v/strobed@.service v/strobed@east.service && "
        "systemd-analyze verify --man=no v/strobed.service v/strobed@east.service && echo verified && "
        "grep -c '^ExecStartPre=.*strobed --check -c .*/strobe/%%i.yaml$' v/strobed@east.service && "
        "touch root/etc/passwd root/etc/group root/etc/shadow root/etc/gshadow && "
        "systemd-sysusers --root=\"$PWD/root\" \"$PWD/moved/lib/sysusers.d/strobe.conf\" >/dev/null 2>&1 && "
        "cut -d: -f1,6,7 root/etc/passwd && head -3 moved/etc/logrotate.d/strobed | tail -1 && "
        "sed \"s|/var/log/strobe/|$PWD/|\" moved/etc/strobe/strobed.yaml > strobed.yaml && "
        "moved/bin/strobed --check -c strobed.yaml && grep -c 'plugin:' strobed.yaml");
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, "verified\n1\nstrobe:/var/lib/strobe:/usr/sbin/nologin\n/var/log/strobe/*.log {\n"
                      "strobed: strobed.yaml: configuration is valid\n3\n");
    free(out);
}

/* Type=notify: READY=1 with its status once the listeners are up,
 * RELOADING=1 then READY=1 around a SIGHUP, STOPPING=1 on SIGTERM. */
STROBE_TEST(strobed_notifies_systemd)
{
    const char *tmp = strobe_test_tmpdir("install_notify");
    char *out = strobe_test_ok_in(tmp, "python3 " STROBE_SOURCE_DIR "/tests/install/notify.py " STROBE_BIN_DIR
                                       "/strobed");
    CHECK_STR_EQ(out, "READY=1\nSTATUS=producer n1 running\nRELOADING=1\nREADY=1\nSTOPPING=1\nexit 0\n");
    free(out);
}

/* bash completion from the installed file, with the installed strobe
 * first in PATH: commands, an option's values, options, experiment
 * directories (those with a meta file). */
STROBE_TEST(bash_completion)
{
    const char *tmp = installed("install_completion");
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "mkdir -p exps/one exps/other && touch exps/one/meta && cat > c.sh <<'EOF'\n"
             "source moved/share/bash-completion/completions/strobe\n"
             "t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _strobe; echo "
             "\"${COMPREPLY[*]}\"; }\n"
             "PATH=$PWD/moved/bin:/usr/bin:/bin\n"
             "t strobe re\nt strobe export x --format ''\nt strobe report --thr\nt strobe report exps/\n"
             "t strobe cc --no\nt strobe help tas\nt strobe mer\nt strobe merge --no\nt strobe record --fr\n"
             "EOF\n"
             "%s bash c.sh",
             CLEAN);
    char *out = strobe_test_ok_in(tmp, cmd);
    CHECK_STR_EQ(out, "record report\nchrome cubex otf2 paraver perfetto pprof\n--threads\nexps/one\n"
                      "--no-blame --no-directives\ntaskgraph\nmerge\n--no-align\n--frequency\n");
    free(out);
}

/* The manual pages (scripts/manpages.py, from the docs) are installed and
 * render with no warning from groff at 80 columns. */
STROBE_TEST(man_pages)
{
    const char *tmp = installed("install_man");
    char *out =
        strobe_test_ok_in(tmp, "cd moved/share/man && ls man1 man5 man8 | grep -v '^$' | grep -v : && "
                               "for f in man*/*; do MANWIDTH=80 " CLEAN
                               " man --warnings -E UTF-8 -l \"$f\" 2>&1 >/dev/null; done && "
                               "MANWIDTH=80 " CLEAN " man -l man1/strobe-run.1 | head -1 | tr -s ' '");
    CHECK_STR_EQ(
        out, "petra-bench.1\npetra-crash.1\nstrobe-blame-prep.1\nstrobe-cc.1\nstrobe-ctl.1\nstrobe-"
             "export.1\nstrobe-instrument.1\n"
             "strobe-ls.1\nstrobe-merge.1\nstrobe-petra.1\nstrobe-record.1\nstrobe-report.1\nstrobe-run.1\n"
             "strobe-taskgraph.1\nstrobe.1\n"
             "strobe-filter.5\nstrobed.yaml.5\nstrobed.8\nSTROBE-RUN(1) strobe manual STROBE-RUN(1)\n");
    free(out);
}

/* The modulefile, under the module system the machine has (Environment
 * Modules, which scripts/install-deps.sh installs, or Lmod: the two Debian
 * packages exclude each other): loading it puts the moved prefix's strobe
 * first in PATH, its pages in MANPATH, its pkg-config files in reach;
 * unloading takes them away. */
STROBE_TEST(modulefile)
{
    const char *tmp = installed("install_module");
    char *out = strobe_test_ok_in(
        tmp, CLEAN " bash -c 'for i in /usr/share/modules/init/bash /usr/share/lmod/lmod/init/bash; do "
                   "[ -f $i ] && . $i && break; done && module use \"$PWD/moved/share/modulefiles\" && "
                   "module load strobe && command -v strobe | sed \"s|$PWD/||\" && "
                   "echo \"$MANPATH\" | sed \"s|$PWD/||\" | cut -d: -f1 && pkg-config --modversion strobe && "
                   "module unload strobe && (command -v strobe || echo gone)'");
    CHECK_STR_EQ(out, "moved/bin/strobe\nmoved/share/man\n0.1.0\ngone\n");
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(tools_run_from_moved_prefix), STROBE_CASE(downstream_pkg_config),
                 STROBE_CASE(downstream_cmake), STROBE_CASE(service_files),
                 STROBE_CASE(strobed_notifies_systemd), STROBE_CASE(bash_completion), STROBE_CASE(man_pages),
                 STROBE_CASE(modulefile))
