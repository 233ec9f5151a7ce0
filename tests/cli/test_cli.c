/* SPDX-License-Identifier: MIT */
/*
 * Tests of the `strobe` command. Unit cases call the CLI's pieces directly
 * (shell quoting, meta file, progress line); the others run bin/strobe:
 * usage errors and --help, the checks `strobe run` makes before starting
 * anything, and end to end on cli_workload (workload.c, a deterministic
 * multithreaded -finstrument-functions program not linked with libstrobe):
 * exact visits per call path from `strobe report --format json`, exit
 * codes passed through, signals forwarded, the child's environment and
 * the meta file.
 */
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/build_config.h"
#include "strobe/strobe.h"
#include "test.h"

#define STROBE STROBE_BIN_DIR "/strobe"
#define WORKLOAD STROBE_TEST_BIN_DIR "/cli_workload"
#define TM_WORKLOAD STROBE_TEST_BIN_DIR "/cli_tm_workload"

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Runs a command, checks its exit status and that its output (stdout and
 * stderr) is exactly `want` (NULL: anything). */
static char *expect_sh(int status, const char *want, const char *cmd)
{
    char *out;
    int st = strobe_test_sh(&out, "%s", cmd);
    if (st != status)
        STROBE_FAIL("`%s` exited %d, expected %d; output:\n%s", cmd, st, status, out);
    if (want && strcmp(out, want) != 0)
        STROBE_FAIL("`%s` printed:\n%s\nexpected:\n%s", cmd, out, want);
    return out;
}

static void expect(int status, const char *want, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void expect(int status, const char *want, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    free(expect_sh(status, want, cmd));
}

/* The last line of s (without its newline). */
static const char *last_line(char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == '\n')
        s[--n] = 0;
    char *nl = strrchr(s, '\n');
    return nl ? nl + 1 : s;
}

/* ---- Unit --------------------------------------------------------------- */

STROBE_TEST(shell_quote)
{
    char *argv[] = {"./app", "a b", "it's", "x\ny\t\x01", "", "plain-1.0_@%+=:,./", "$HOME", "é", NULL};
    char *q = strobe__shell_quote_argv(argv);
    CHECK_STR_EQ(q, "./app 'a b' 'it'\\''s' $'x\\ny\\t\\x01' '' plain-1.0_@%+=:,./ '$HOME' 'é'");
    /* bash turns it back into the same words ($'...' is bash, not the
     * /bin/sh that popen runs, so bash reads the line from a file) */
    char path[4200];
    snprintf(path, sizeof path, "%s/quoted", strobe_test_tmpdir("shell_quote"));
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(q, f) >= 0 && fclose(f) == 0);
    char *out;
    int st = strobe_test_sh(&out, "bash -c 'eval \"set -- $(cat %s)\"; printf \"[%%s]\" \"$@\"' | od -An -c | tr -s ' \\n' ' '",
                            path);
    CHECK_EQ_INT(st, 0);
    CHECK_STR_EQ(out,
                 " [ . / a p p ] [ a b ] [ i t ' s ] [ x \\n y \\t 001 ] [ ] [ p l a i n - 1 . 0 _ @ % + = : "
                 ", . / ] [ $ H O M E ] [ 303 251 ] ");
    free(out);
    free(q);
}

/* The lists of `strobe export --threads/--processes`. */
STROBE_TEST(parse_ranges)
{
    struct strobe__cli_range *r = NULL;
    size_t n = 0;
    CHECK_EQ_INT(strobe__cli_parse_ranges("0,2-3,7,18446744073709551615", &r, &n), 0);
    CHECK_EQ_INT(n, 4);
    CHECK_EQ_U64(r[0].lo, 0);
    CHECK_EQ_U64(r[0].hi, 0);
    CHECK_EQ_U64(r[1].lo, 2);
    CHECK_EQ_U64(r[1].hi, 3);
    CHECK_EQ_U64(r[2].lo, 7);
    CHECK_EQ_U64(r[2].hi, 7);
    CHECK_EQ_U64(r[3].lo, UINT64_MAX);
    free(r);
    CHECK_EQ_INT(strobe__cli_parse_ranges("5-5", &r, &n), 0);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_U64(r[0].lo, 5);
    CHECK_EQ_U64(r[0].hi, 5);
    free(r);
    static const char *const bad[] = {"", ",", "1,", ",1", "1,,2", "1-", "-1", "3-2", "1 ", " 1", "1-2-3", "0x1",
                                      "+1", "18446744073709551616"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = NULL;
        if (strobe__cli_parse_ranges(bad[i], &r, &n) != -1)
            STROBE_FAIL("'%s' was accepted", bad[i]);
        CHECK(r == NULL);
    }
}

STROBE_TEST(iso8601)
{
    char buf[24];
    strobe__iso8601_utc(buf, 0);
    CHECK_STR_EQ(buf, "1970-01-01T00:00:00Z");
    strobe__iso8601_utc(buf, 1795344300);
    CHECK_STR_EQ(buf, "2026-11-22T10:45:00Z");
}

STROBE_TEST(meta_file)
{
    const char *dir = strobe_test_tmpdir("meta_file");
    char path[4200];
    snprintf(path, sizeof path, "%s/meta", dir);
    char *argv[] = {"./app", "two words", NULL};
    struct strobe__run_info info = {.argv = argv,
                                    .runtime = "/opt/lib/libstrobe.so",
                                    .filter = "/x/f\nilter",
                                    .trace = 1,
                                    .profile = 0,
                                    .start_sec = 1795344300,
                                    .start_nsec = 5,
                                    .launcher_pid = 77};
    CHECK_EQ_INT(strobe__meta_write_start(path, &info), 0);
    /* never overwrites an existing meta file */
    CHECK(strobe__meta_write_start(path, &info) < 0);
    CHECK_EQ_INT(strobe__meta_write_end(path, 3 << 8 /* exited with 3 */, 0, 1795344301, 0), 0);
    CHECK_EQ_INT(strobe__meta_write_end(path, 9 /* killed by SIGKILL */, 0, 1795344302, 7), 0);
    CHECK_EQ_INT(strobe__meta_write_end(path, 1 << 8 /* exited with 1 after SIGTERM */, 15, 1795344303, 0), 0);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "sed -e 's/^cwd: .*/cwd: C/' -e 's/^host: .*/host: H/' "
                                "-e 's/^user: .*/user: U/' '%s'",
                                path),
                 0);
    CHECK_STR_EQ(out, "strobe_version: 0.1.0\n"
                      "command: ./app 'two words'\n"
                      "cwd: C\n"
                      "host: H\n"
                      "user: U\n"
                      "start_time: 2026-11-22T10:45:00Z\n"
                      "start_realtime_ns: 1795344300000000005\n"
                      "launcher_pid: 77\n"
                      "runtime: /opt/lib/libstrobe.so\n"
                      "filter: /x/f?ilter\n"
                      "trace: 1\n"
                      "profile: 0\n"
                      "tm: 0\n"
                      "end_time: 2026-11-22T10:45:01Z\n"
                      "end_realtime_ns: 1795344301000000000\n"
                      "exit_status: 3\n"
                      "end_time: 2026-11-22T10:45:02Z\n"
                      "end_realtime_ns: 1795344302000000007\n"
                      "signal: 9\n"
                      "end_time: 2026-11-22T10:45:03Z\n"
                      "end_realtime_ns: 1795344303000000000\n"
                      "exit_status: 1\n"
                      "after_signal: 15\n");
    free(out);
}

STROBE_TEST(progress_line)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct strobe__progress p;
    strobe__progress_init(&p, "reading x/");
    p.out = f;
    p.enabled = true;
    p.min_total = 100;
    strobe__progress_cb(10, 50, &p); /* below the size threshold: silent */
    strobe__progress_end(&p);        /* nothing drawn, nothing erased */
    strobe__progress_cb(10, 200, &p);
    strobe__progress_cb(11, 200, &p); /* same percentage: not redrawn */
    strobe__progress_cb(200, 200, &p);
    strobe__progress_end(&p);
    fclose(f);
    CHECK_STR_EQ(buf, "\rstrobe: reading x/:   5%\rstrobe: reading x/: 100%\r\033[K");
    free(buf);
    /* not a terminal: never drawn */
    buf = NULL;
    f = open_memstream(&buf, &len);
    strobe__progress_init(&p, "x");
    p.out = f;
    p.enabled = false;
    strobe__progress_cb(1, 1ull << 40, &p);
    strobe__progress_end(&p);
    fclose(f);
    CHECK_STR_EQ(buf, "");
    free(buf);
}

/* ---- Usage -------------------------------------------------------------- */

STROBE_TEST(help)
{
    char *main_help = expect_sh(0, NULL, STROBE " --help");
    CHECK(strncmp(main_help, "usage: strobe [--help | --version] COMMAND", 42) == 0);
    expect(0, main_help, STROBE " help");
    expect(0, main_help, STROBE " -h");
    free(main_help);
    static const char *const cmds[] = {"run", "report", "export"};
    for (int i = 0; i < 3; i++) {
        char cmd[256], prefix[64];
        snprintf(cmd, sizeof cmd, STROBE " %s --help", cmds[i]);
        char *h = expect_sh(0, NULL, cmd);
        snprintf(prefix, sizeof prefix, "usage: strobe %s ", cmds[i]);
        CHECK(strncmp(h, prefix, strlen(prefix)) == 0);
        expect(0, h, STROBE " help %s", cmds[i]);
        expect(0, h, STROBE " %s -h", cmds[i]);
        free(h);
    }
    expect(2, "strobe: help: unknown command 'nope' (see 'strobe --help')\n", STROBE " help nope");
}

STROBE_TEST(version)
{
    expect(0, "strobe 0.1.0 (experiment format 1)\n", STROBE " --version");
}

STROBE_TEST(usage_errors)
{
    char *out = expect_sh(2, NULL, STROBE);
    CHECK(strncmp(out, "usage: strobe", 13) == 0);
    free(out);
    expect(2, "strobe: unknown command 'frob' (see 'strobe --help')\n", STROBE " frob");
    expect(2, "strobe: unknown option '--frob' (see 'strobe --help')\n", STROBE " --frob");
    expect(2, "strobe: report: unknown option '--bogus' (see 'strobe report --help')\n",
           STROBE " report --bogus x");
    expect(2, "strobe: report: unknown option '--bogus' (see 'strobe report --help')\n",
           STROBE " report x --bogus=1");
    expect(2, "strobe: report: unknown option '-q' (see 'strobe report --help')\n", STROBE " report x -q");
    expect(2, "strobe: report: option '--threads' takes no argument (see 'strobe report --help')\n",
           STROBE " report x --threads=1");
    expect(2, "strobe: report: option '--format' needs an argument (see 'strobe report --help')\n",
           STROBE " report x --format");
    expect(2, "strobe: report: --format: unknown format 'xml' (text, json or html) (see 'strobe report --help')\n",
           STROBE " report x --format xml");
    expect(2,
           "strobe: report: --sort: unknown key 'time' (incl, excl or visits) (see 'strobe report --help')\n",
           STROBE " report x --sort time");
    expect(2, "strobe: report: --top: '-1' is not a count (0 = all) (see 'strobe report --help')\n",
           STROBE " report x --top -1");
    expect(2, "strobe: report: --top: '5x' is not a count (0 = all) (see 'strobe report --help')\n",
           STROBE " report x --top=5x");
    expect(2,
           "strobe: report: --source: unknown source 'disk' (auto, profile or trace) (see 'strobe report "
           "--help')\n",
           STROBE " report x --source disk");
    expect(2, "strobe: report: missing experiment directory (see 'strobe report --help')\n",
           STROBE " report");
    expect(2,
           "strobe: report: --target: '5x' is neither a share of the thread time (5%) nor a size (500MB) (see "
           "'strobe report --help')\n",
           STROBE " report x --score --target 5x");
    expect(2,
           "strobe: report: --target: '120%' is neither a share of the thread time (5%) nor a size (500MB) (see "
           "'strobe report --help')\n",
           STROBE " report x --score --target 120%%");
    expect(2, "strobe: report: '-o' needs --score or --format html (see 'strobe report --help')\n", STROBE " report x -o f.txt");
    expect(2, "strobe: report: '--target' needs --score (see 'strobe report --help')\n",
           STROBE " report x --target 5%%");
    expect(2, "strobe: report: '--score' and '--sort' exclude each other (see 'strobe report --help')\n",
           STROBE " report x --score --sort incl");
    if (STROBE_WITH_TM) /* (else the case built_without) */
        expect(2,
               "strobe: run: --tm-monitor: unknown level 'all' (off, counters, stats or events) (see 'strobe run "
               "--help')\n",
               STROBE " run --tm-monitor all -- true");
    expect(2, "strobe: report: unexpected argument 'y' (see 'strobe report --help')\n", STROBE " report x y");
    expect(2, "strobe: export: option '--output' needs an argument (see 'strobe export --help')\n",
           STROBE " export x --format chrome -o");
    expect(2,
           "strobe: export: missing --format (otf2, chrome, perfetto, cubex, pprof or paraver) (see 'strobe "
           "export --help')\n",
           STROBE " export x -o y");
    expect(2, "strobe: export: missing -o OUT (see 'strobe export --help')\n",
           STROBE " export x --format chrome");
    expect(2,
           "strobe: export: --format: unknown format 'pdf' (otf2, chrome, perfetto, cubex, pprof or paraver) "
           "(see 'strobe export --help')\n",
           STROBE " export x --format pdf -o y");
    expect(2, "strobe: run: missing program to run (see 'strobe run --help')\n", STROBE " run");
    expect(2, "strobe: run: missing program to run (see 'strobe run --help')\n", STROBE " run -o x --");
    expect(2, "strobe: run: unknown option '-x' (see 'strobe run --help')\n", STROBE " run -x true");
    expect(2, "strobe: run: option '--filter' needs an argument (see 'strobe run --help')\n",
           STROBE " run --filter");
    expect(2, "strobe: run: '--no-trace' and '--no-profile' exclude each other (see 'strobe run --help')\n",
           STROBE " run --no-trace --no-profile true");
}

/* ---- Checks before anything starts ------------------------------------- */

STROBE_TEST(bad_filter)
{
    const char *dir = strobe_test_tmpdir("bad_filter");
    /* line 3 is wrong: nothing may be created or started */
    expect(2, "strobe: filter.txt:3: unknown keyword 'frobnicate' (expected include or exclude)\n",
           "cd '%s' && printf '# ok\\nexclude *\\nfrobnicate main\\n' > filter.txt && " STROBE
           " run -o exp --filter filter.txt -- sh -c 'touch started'",
           dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/started", dir);
    CHECK(!exists(path));
    snprintf(path, sizeof path, "%s/exp", dir);
    CHECK(!exists(path));
    expect(2, "strobe: filter.txt:1: 'include' needs at least one glob\n",
           "cd '%s' && printf 'include\\n' > filter.txt && " STROBE
           " run --filter filter.txt -- sh -c 'touch started'",
           dir);
    expect(2, "strobe: missing.txt: No such file or directory\n",
           "cd '%s' && " STROBE " run --filter missing.txt -- sh -c 'touch started'", dir);
    snprintf(path, sizeof path, "%s/started", dir);
    CHECK(!exists(path));
    /* no default-named experiment directory was made either */
    char *out;
    strobe_test_sh(&out, "ls '%s'", dir);
    CHECK_STR_EQ(out, "filter.txt\n");
    free(out);
}

STROBE_TEST(program_not_found)
{
    const char *dir = strobe_test_tmpdir("program_not_found");
    expect(127, "strobe: run: ./no-such-program: No such file or directory\n",
           "cd '%s' && " STROBE " run -o exp -- ./no-such-program a b", dir);
    expect(127, "strobe: run: no-such-program-strobe: No such file or directory\n",
           "cd '%s' && " STROBE " run no-such-program-strobe", dir);
    expect(126, "strobe: run: ./notexec: Permission denied\n",
           "cd '%s' && touch notexec && chmod 644 notexec && " STROBE " run -o exp ./notexec", dir);
    char *out;
    strobe_test_sh(&out, "ls '%s'", dir);
    CHECK_STR_EQ(out, "notexec\n"); /* no experiment directory left behind */
    free(out);
}

STROBE_TEST(output_dir_not_empty)
{
    const char *dir = strobe_test_tmpdir("output_dir_not_empty");
    expect(2, "strobe: run: exp: directory is not empty (choose a new -o DIR)\n",
           "cd '%s' && mkdir exp && touch exp/x && " STROBE " run -o exp -- true", dir);
    expect(2, "strobe: run: file: exists and is not a directory\n",
           "cd '%s' && touch file && " STROBE " run -o file -- true", dir);
}

STROBE_TEST(runtime_override_missing)
{
    expect(125, "strobe: run: STROBE_RUNTIME=/nonexistent/libstrobe.so: No such file or directory\n",
           "STROBE_RUNTIME=/nonexistent/libstrobe.so " STROBE " run -o never -- true");
    CHECK(!exists("never"));
}

STROBE_TEST(report_unreadable)
{
    char *out = expect_sh(1, NULL, "cd '" STROBE_TEST_WORK_DIR "' && " STROBE " report no-such-experiment");
    CHECK(strncmp(out, "strobe: report: ", 16) == 0);
    CHECK(strchr(out, '\n') == out + strlen(out) - 1); /* one line */
    free(out);
    out = expect_sh(1, NULL, STROBE " export no-such-experiment --format chrome -o x.json");
    CHECK(strncmp(out, "strobe: export: ", 16) == 0);
    CHECK(strchr(out, '\n') == out + strlen(out) - 1);
    free(out);
}

/* ---- End to end (needs libstrobe.so) ------------------------------------ */

static void need_runtime(void)
{
    if (!exists(STROBE_LIB_DIR "/libstrobe.so"))
        STROBE_FAIL("%s/libstrobe.so is missing: build the runtime (src/core) first", STROBE_LIB_DIR);
}

/* Every call path of the report with its visits and its sorted per-thread
 * visits, paths sorted; first line: the profile source. */
static const char visits_script[] =
    "import json,sys\n"
    "d=json.load(open(sys.argv[1]))\n"
    "assert d[\"schema\"] == \"strobe-report\" and d[\"version\"] == 1\n"
    "names=[r[\"name\"] for r in d[\"regions\"]]\n"
    "path={}; out=[]\n"
    "for n in d[\"calltree\"]:\n"
    "  if n[\"parent\"] is None: path[n[\"id\"]]=\"\"; continue\n"
    "  p=path[n[\"parent\"]]; path[n[\"id\"]]=(p+\"/\" if p else \"\")+names[n[\"region\"]]\n"
    "  th=\",\".join(str(v) for v in sorted(x[\"visits\"] for x in n[\"threads\"]))\n"
    "  out.append(\"%s %d [%s]\" % (path[n[\"id\"]], n[\"visits\"], th))\n"
    "print(d[\"summary\"][\"profile_source\"], d[\"summary\"][\"threads\"])\n"
    "for l in sorted(out): print(l)\n";

static const char expected_paths[] = "main 1 [1]\n"
                                     "main/compute 5 [5]\n"
                                     "main/compute/leaf 10 [10]\n"
                                     "main/setup 1 [1]\n"
                                     "main/setup/rec 1 [1]\n"
                                     "main/setup/rec/rec 1 [1]\n"
                                     "main/setup/rec/rec/rec 1 [1]\n"
                                     "main/setup/rec/rec/rec/rec 1 [1]\n"
                                     "worker 3 [1,1,1]\n"
                                     "worker/compute 60 [10,20,30]\n"
                                     "worker/compute/leaf 120 [20,40,60]\n";

/* `strobe report EXP --format json [extra]` reduced by visits_script. */
static char *report_visits(const char *exp, const char *extra)
{
    char *out;
    int st =
        strobe_test_sh(&out, STROBE " report '%s' --format json %s > '%s.json' && python3 -c '%s' '%s.json'",
                       exp, extra, exp, visits_script, exp);
    if (st != 0)
        STROBE_FAIL("report of %s failed (%d):\n%s", exp, st, out);
    return out;
}

static void check_visits(const char *exp, const char *extra, const char *source)
{
    char want[2048];
    snprintf(want, sizeof want, "%s 4\n%s", source, expected_paths);
    char *got = report_visits(exp, extra);
    CHECK_STR_EQ(got, want);
    free(got);
}

STROBE_TEST(run_exact_visits)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("run_exact_visits");
    char *out;
    int st = strobe_test_sh(&out, "cd '%s' && " STROBE " run -o exp -- " WORKLOAD, dir);
    if (st != 0)
        STROBE_FAIL("strobe run exited %d:\n%s", st, out);
    /* the run ends with one summary line read back from the experiment */
    const char *last = last_line(out);
    CHECK(strncmp(last, "strobe: experiment exp/: 4 threads, ", 36) == 0);
    CHECK(strstr(last, " events, ") && strstr(last, ", 0 dropped") && strchr(last, '\n') == NULL);
    free(out);

    char exp[4200];
    snprintf(exp, sizeof exp, "%s/exp", dir);
    check_visits(exp, "", "profile"); /* auto: profile files */
    check_visits(exp, "--source profile", "profile");
    check_visits(exp, "--source trace", "trace"); /* rebuilt from the events */

    /* the text report and the thread tables render too */
    out = expect_sh(0, NULL,
                    STROBE " report '" STROBE_TEST_WORK_DIR "/run_exact_visits.tmp/exp' --threads --top 0");
    CHECK_CONTAINS(out, "\nFlat profile (sorted by excl; 6 regions)\n");
    CHECK_CONTAINS(out, "\n  threads          4\n");
    CHECK_CONTAINS(out, "\n  exit             status 0\n");
    CHECK_CONTAINS(out, "\nThread x region");
    free(out);
}

STROBE_TEST(report_profile_reads_no_stream)
{
    /* After a complete run, the closing line and a profile-file report take
     * everything from defs and t<N>.prof: event streams emptied afterwards
     * are not read (only --source trace decodes them, and says what is
     * wrong). */
    need_runtime();
    const char *dir = strobe_test_tmpdir("report_profile_reads_no_stream");
    expect(0, NULL, "cd '%s' && " STROBE " run -o exp -- " WORKLOAD " >/dev/null 2>&1", dir);
    char pattern[4400];
    snprintf(pattern, sizeof pattern, "%s/exp/proc-*/t*.evt", dir);
    glob_t g;
    CHECK_EQ_INT(glob(pattern, 0, NULL, &g), 0);
    CHECK_EQ_INT(g.gl_pathc, 4);
    for (size_t i = 0; i < g.gl_pathc; i++)
        CHECK_EQ_INT(truncate(g.gl_pathv[i], 0), 0);
    globfree(&g);
    char exp[4200];
    snprintf(exp, sizeof exp, "%s/exp", dir);
    check_visits(exp, "", "profile");
    check_visits(exp, "--source profile", "profile");
    char *out = expect_sh(1, NULL, "cd '" STROBE_TEST_WORK_DIR "/report_profile_reads_no_stream.tmp' && " STROBE
                                   " report exp --source trace");
    CHECK(strstr(out, "t0.evt: ") != NULL);
    free(out);
}

/* --by on an experiment without MPI ranks: rank is a usage error naming
 * the alternative; process gives one row per process. */
STROBE_TEST(report_by)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("report_by");
    expect(0, NULL, "cd '%s' && " STROBE " run -o exp -- " WORKLOAD " >/dev/null", dir);
    expect(2,
           "strobe: report: exp: --by rank: no process has an MPI rank (not started by an MPI launcher); use "
           "--by process\n",
           "cd '%s' && " STROBE " report exp --by rank", dir);
    expect(2, "strobe: report: --by: unknown grouping 'node' (rank or process) (see 'strobe report --help')\n",
           "cd '%s' && " STROBE " report exp --by node", dir);
    char *out = expect_sh(0, NULL, "cd '" STROBE_TEST_WORK_DIR "/report_by.tmp' && " STROBE " report exp --by process");
    CHECK_CONTAINS(out, "\nProcesses (1; incl = inclusive time of the top-level regions of their threads)\n");
    free(out);
    /* every thread's visits in the one process: 1 + 5 + 10 + 5 (main) + 3 + 60 + 120 (workers) */
    out = expect_sh(0, NULL,
                    "cd '" STROBE_TEST_WORK_DIR "/report_by.tmp' && " STROBE
                    " report exp --by process --format json | python3 -c "
                    "'import json,sys; g=json.load(sys.stdin)[\"by\"][\"groups\"]; "
                    "print(len(g), g[0][\"processes\"], g[0][\"threads\"], g[0][\"visits\"])'");
    CHECK_STR_EQ(out, "1 [0] 4 204\n");
    free(out);
}

STROBE_TEST(run_no_trace)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("run_no_trace");
    expect(0, NULL, "cd '%s' && " STROBE " run --no-trace -o exp -- " WORKLOAD " >/dev/null", dir);
    char exp[4200];
    snprintf(exp, sizeof exp, "%s/exp", dir);
    check_visits(exp, "", "profile");
    /* there are no events to rebuild a profile from */
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, STROBE " report '%s' --source trace", exp), 1);
    CHECK(strncmp(out, "strobe: report: ", 16) == 0);
    free(out);
}

STROBE_TEST(run_no_profile)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("run_no_profile");
    expect(0, NULL, "cd '%s' && " STROBE " run --no-profile -o exp -- " WORKLOAD " >/dev/null", dir);
    char exp[4200];
    snprintf(exp, sizeof exp, "%s/exp", dir);
    check_visits(exp, "", "trace"); /* auto falls back to the trace */
    check_visits(exp, "--source trace", "trace");
}

STROBE_TEST(exit_code_passthrough)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("exit_code_passthrough");
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && " STROBE " run -o exp -- " WORKLOAD " exit 3", dir), 3);
    CHECK(strncmp(last_line(out), "strobe: experiment exp/: 4 threads, ", 36) == 0);
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "grep -c '^exit_status: 3$' '%s/exp/meta'", dir), 0);
    free(out);
    char exp[4200];
    snprintf(exp, sizeof exp, "%s/exp", dir);
    check_visits(exp, "", "profile");
}

STROBE_TEST(killed_by_signal)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("killed_by_signal");
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && " STROBE " run -o exp -- " WORKLOAD " kill", dir), 137);
    CHECK_CONTAINS(out, "strobe: run: " WORKLOAD " killed by signal 9 (Killed)\n");
    CHECK(strncmp(last_line(out), "strobe: experiment exp/: ", 25) == 0);
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "grep -c '^signal: 9$' '%s/exp/meta'", dir), 0);
    free(out);
    /* what the killed process recorded is still readable */
    expect(0, NULL, "cd '%s' && " STROBE " report exp >/dev/null", dir);
}

STROBE_TEST(signal_forwarded)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("signal_forwarded");
    char *out;
    int st = strobe_test_sh(&out,
                            "cd '%s' && { " STROBE " run -o exp -- " WORKLOAD " wait ready & pid=$!; "
                            "i=0; while [ ! -e ready ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; "
                            "kill -TERM $pid; wait $pid; echo \"status=$?\"; }",
                            dir);
    CHECK_EQ_INT(st, 0);
    CHECK_CONTAINS(out, "strobe: run: " WORKLOAD " killed by signal 15 (Terminated)\n");
    CHECK_CONTAINS(out, "\nstatus=143\n");
    free(out);
}

/* A program that catches the forwarded signal and exits (as an MPI
 * launcher does) still gets a line saying what ended it, in the run's
 * output, meta and the report. */
STROBE_TEST(exit_after_signal)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("exit_after_signal");
    char *out;
    int st = strobe_test_sh(&out,
                            "cd '%s' && { " STROBE " run -o exp -- sh -c 'trap \"exit 3\" TERM; touch ready; "
                            "i=0; while [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done' & pid=$!; "
                            "i=0; while [ ! -e ready ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; "
                            "kill -TERM $pid; wait $pid; echo \"status=$?\"; }",
                            dir);
    CHECK_EQ_INT(st, 0);
    CHECK_CONTAINS(out, "strobe: run: sh exited with status 3 after signal 15 (Terminated)\n");
    CHECK_CONTAINS(out, "\nstatus=3\n");
    free(out);
    expect(0, "exit_status: 3\nafter_signal: 15\n", "tail -2 '%s/exp/meta'", dir);
    out = expect_sh(0, NULL, "cd '" STROBE_TEST_WORK_DIR "/exit_after_signal.tmp' && " STROBE " report exp");
    CHECK_CONTAINS(out, "\n  exit             status 3 after signal 15\n");
    free(out);
}

STROBE_TEST(child_environment)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("child_environment");
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && printf 'exclude leaf\\n' > f.txt && "
                                /* the sanitized strobe itself runs with this LD_PRELOAD */
                                "ASAN_OPTIONS=verify_asan_link_order=0 "
                                "STROBE_TRACE=1 LD_PRELOAD=libm.so.6 " STROBE
                                " run --no-trace --filter f.txt -o exp -- " WORKLOAD " env 2>/dev/null",
                                dir),
                 0);
    char want[8400];
    snprintf(want, sizeof want,
             "STROBE_EXPERIMENT_DIR=%s/exp\nSTROBE_FILTER=%s/f.txt\nSTROBE_TRACE=0\nSTROBE_PROFILE=1\n", dir,
             dir);
    /* LD_PRELOAD: [sanitizer runtime:]libstrobe.so:previous */
    const char *pre = strstr(out, "LD_PRELOAD=");
    CHECK(pre == out);
    const char *nl = strchr(pre, '\n');
    CHECK(nl != NULL);
    char *lib = realpath(STROBE_LIB_DIR "/libstrobe.so", NULL);
    CHECK(lib != NULL);
    char tail[4200];
    snprintf(tail, sizeof tail, "%s:libm.so.6\n", lib);
    CHECK(strncmp(nl + 1 - strlen(tail), tail, strlen(tail)) == 0);
    CHECK_STR_EQ(nl + 1, want);
    free(lib);
    free(out);
    /* without --filter an inherited STROBE_FILTER is not passed on */
    CHECK_EQ_INT(strobe_test_sh(&out,
                                "cd '%s' && STROBE_FILTER=/nonexistent " STROBE " run -o exp2 -- " WORKLOAD
                                " env 2>/dev/null | grep STROBE_FILTER",
                                dir),
                 0);
    CHECK_STR_EQ(out, "STROBE_FILTER=(unset)\n");
    free(out);
}

STROBE_TEST(meta_of_run)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("meta_of_run");
    expect(0, NULL, "cd '%s' && " STROBE " run -o exp -- " WORKLOAD " exit 0 'a b' 2>/dev/null", dir);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "cut -d: -f1 '%s/exp/meta' | tr '\\n' ' '", dir), 0);
    CHECK_STR_EQ(out,
                 "strobe_version command cwd host user start_time start_realtime_ns launcher_pid runtime "
                 "trace profile tm end_time end_realtime_ns exit_status ");
    free(out);
    char want[8400];
    snprintf(want, sizeof want, "command: %s exit 0 'a b'\ncwd: %s\n", WORKLOAD, dir);
    CHECK_EQ_INT(strobe_test_sh(&out, "grep -e '^command: ' -e '^cwd: ' '%s/exp/meta'", dir), 0);
    CHECK_STR_EQ(out, want);
    free(out);
    CHECK_EQ_INT(strobe_test_sh(
                     &out,
                     "grep -Ec '^(start|end)_time: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' "
                     "'%s/exp/meta'",
                     dir),
                 0);
    CHECK_STR_EQ(out, "2\n");
    free(out);
}

STROBE_TEST(default_dir_name)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("default_dir_name");
    /* occupy the names of the next few seconds: the run must add "-1" */
    time_t now = time(NULL);
    for (int i = 0; i < 10; i++) {
        char name[64], path[4300];
        time_t t = now + i;
        struct tm tm;
        localtime_r(&t, &tm);
        strftime(name, sizeof name, "strobe-cli_workload-%Y%m%d-%H%M%S", &tm);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        CHECK_EQ_INT(mkdir(path, 0777), 0);
    }
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && " STROBE " run " WORKLOAD " exit 0", dir), 0);
    free(out);
    CHECK_EQ_INT(strobe_test_sh(&out, "cd '%s' && ls -d strobe-*-1", dir), 0);
    CHECK(strlen(out) == strlen("strobe-cli_workload-20261122-104500-1\n"));
    CHECK(strncmp(out, "strobe-cli_workload-", 20) == 0);
    free(out);
}

STROBE_TEST(export_dispatch)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("export_dispatch");
    expect(0, NULL, "cd '%s' && " STROBE " run -o exp -- " WORKLOAD " 2>/dev/null", dir);
    expect(0, "", "cd '%s' && " STROBE " export exp --format chrome -o trace.json", dir);
    expect(0, "ok\n", "cd '%s' && python3 -c 'import json; json.load(open(\"trace.json\")); print(\"ok\")'",
           dir);
    if (STROBE_WITH_OTF2) {
        expect(0, "", "cd '%s' && " STROBE " export exp --format otf2 -o otf2", dir);
        CHECK(exists(STROBE_TEST_WORK_DIR "/export_dispatch.tmp/otf2/traces.otf2"));
    }
    expect(0, "", "cd '%s' && " STROBE " export exp --format cubex -o exp.cubex", dir);
    CHECK(exists(STROBE_TEST_WORK_DIR "/export_dispatch.tmp/exp.cubex"));
}

/* --tm: the program's transactions run on libstrobe-tm, not on libitm. */
STROBE_TEST(run_tm)
{
    need_runtime();
    char *out = expect_sh(0, NULL, TM_WORKLOAD);
    CHECK(strstr(out, "strobe-tm") == NULL); /* on its own: GCC's libitm */
    CHECK(strstr(out, " 100\n") != NULL);
    free(out);
    system("rm -rf tm-exp");
    out = expect_sh(0, NULL, STROBE " run --tm -o tm-exp -- " TM_WORKLOAD);
    static const char want[] = "strobe-tm " STROBE_VERSION_STRING ", GCC TM ABI 1 100\n";
    CHECK(strncmp(out, want, sizeof want - 1) == 0);
    free(out);
    CHECK(exists("tm-exp/meta"));
    /* meta records --tm and the level: counters by default */
    out = expect_sh(0, "tm: 1\ntm_monitor: counters\n", "grep '^tm' tm-exp/meta");
    free(out);
}

/* An experiment of --tm-monitor off says what that level recorded, never
 * that it was not run with --tm; Paraver refuses it in one line. */
STROBE_TEST(report_tm_level_off)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("report_tm_level_off");
    expect(0, NULL, "cd '%s' && " STROBE " run --tm-monitor off -o exp -- " TM_WORKLOAD " >/dev/null 2>&1",
           dir);
    char *out;
    CHECK_EQ_INT(strobe_test_sh(&out, "grep '^tm' '%s/exp/meta'", dir), 0);
    CHECK_STR_EQ(out, "tm: 1\ntm_monitor: off\n");
    free(out);
    CHECK_EQ_INT(strobe_test_sh(
                     &out,
                     STROBE " report '%s/exp' --tm | grep -i -e 'tm monitoring' -e 'atomic' -e 'strobe run'",
                     dir),
                 0);
    CHECK_STR_EQ(
        out, "  TM monitoring    off — nothing recorded by the STM (use --tm-monitor counters or higher)\n"
             "  TM monitoring: off — nothing recorded by the STM (use --tm-monitor counters or higher)\n"
             "  no atomic blocks: the STM recorded nothing at level 'off' (re-run with --tm-monitor counters "
             "or higher)\n");
    free(out);
    char want[8600];
    snprintf(want, sizeof want,
             "strobe: export: %s/exp was recorded at TM monitoring level 'off'; the Paraver timeline needs "
             "per-attempt events: re-run with --tm-monitor events\n",
             dir);
    expect(1, want, STROBE " export '%s/exp' --format paraver -o '%s/pv'", dir, dir);
    CHECK(!exists(STROBE_TEST_WORK_DIR "/report_tm_level_off.tmp/pv.prv"));
}

STROBE_TEST(drops_per_thread)
{
    /* An 8 KiB stream limit: the report names the thread, how many of its
     * events were dropped, and the limit that would have kept them. */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/exp", strobe_test_tmpdir("drops_per_thread"));
    expect(0, NULL, "STROBE_CHUNK_SIZE=4K STROBE_TRACE_LIMIT=8K %s run -o '%s' -- %s 20000 >/dev/null 2>&1", STROBE, dir,
           STROBE_BIN_DIR "/../tests/core/core_prog_calls");
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "%s report '%s' | sed -n 2,4p", STROBE, dir);
    char *out = expect_sh(0, NULL, cmd);
    unsigned long dropped, total;
    char limit[64];
    const char *l2 = strchr(out, '\n') + 1;
    CHECK(strncmp(out, "WARNING: ", 9) == 0);
    CHECK_EQ_INT(sscanf(l2, "  thread 0 (proc-%*u t0): %lu dropped of %lu at the size limit of %63[^\n]", &dropped,
                        &total, limit),
                 3);
    CHECK_EQ_U64(total, 2 * (20000 + 9) + 2); /* every enter and exit, THREAD_BEGIN and END */
    CHECK(dropped > 0 && dropped < total);
    CHECK_STR_EQ(limit, "8.0 KiB per stream");
    CHECK(strstr(out, "to keep them: strobe run with STROBE_TRACE_LIMIT=") != NULL);
    free(out);
}

/* ---- Filter advice (`strobe report --score`) ----------------------------- */

#define SCORE_WORKLOAD STROBE_TEST_BIN_DIR "/cli_score_workload"

/* Per region of `strobe report --score --format json`: name, visits,
 * events, filter; then the bytes per event's origin and whether the
 * target was met. */
static const char score_script[] =
    "import json,sys\n"
    "d=json.load(open(sys.argv[1]))\n"
    "assert d[\"schema\"] == \"strobe-score\" and d[\"version\"] == 1\n"
    "for r in d[\"regions\"]: print(r[\"name\"], r[\"visits\"], r[\"events\"], r[\"filter\"])\n"
    "print(d[\"bytes_per_event_from\"], d[\"target_met\"])\n";

/* `strobe run OPTS -o DIR/NAME score_workload`; the experiment's path in exp. */
static void run_score_workload(const char *dir, const char *opts, const char *name, char exp[4200])
{
    expect(0, NULL, "cd '%s' && " STROBE " run %s -o %s -- " SCORE_WORKLOAD " 2>/dev/null", dir, opts, name);
    snprintf(exp, 4200, "%s/%s", dir, name);
}

static char *score_facts(const char *exp, const char *extra)
{
    char *out;
    int st = strobe_test_sh(&out,
                            STROBE " report '%s' --score --format json %s > '%s.score.json' && python3 -c '%s' "
                                   "'%s.score.json'",
                            exp, extra, exp, score_script, exp);
    if (st != 0)
        STROBE_FAIL("score of %s failed (%d):\n%s", exp, st, out);
    return out;
}

/* score_workload: tiny 100000 visits, medium 1000, main 1. The advice for
 * a 100 KiB trace, and for an overhead share that needs more than half of
 * tiny's overhead removed (computed from the experiment, so the thread
 * time of a loaded machine does not matter), excludes exactly tiny;
 * measured again with that filter, tiny is gone and the others keep their
 * visits. */
STROBE_TEST(report_score)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("report_score");
    char exp[4200];
    run_score_workload(dir, "", "exp", exp);
    static const char only_tiny[] = "tiny 100000 200000 exclude\n"
                                    "medium 1000 2000 keep\n"
                                    "main 1 2 never:main\n"
                                    "trace True\n";
    char *facts = score_facts(exp, "--target 100KB -o '" STROBE_TEST_WORK_DIR "/report_score.tmp/filter.txt'");
    CHECK_STR_EQ(facts, only_tiny);
    free(facts);
    expect(0, "exclude tiny\n", "grep -v '^#' '%s/filter.txt' | sed 's/ *#.*//'", dir);
    expect(0, "# target: trace <= 100.0 KiB\n", "grep '^# target:' '%s/filter.txt' | sed 's/ (.*//'", dir);

    char *pct;
    CHECK_EQ_INT(strobe_test_sh(&pct,
                                "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
                                "t=[r for r in d[\"regions\"] if r[\"name\"]==\"tiny\"][0]; "
                                "print(\"%%.6f\" %% (100.0*(d[\"full_run\"][\"overhead_ns\"]-t[\"overhead_ns\"]/2)"
                                "/d[\"thread_time_ns\"]), end=\"\")' '%s.score.json'",
                                exp),
                 0);
    char extra[128];
    snprintf(extra, sizeof extra, "--target %s%%", pct);
    facts = score_facts(exp, extra);
    CHECK_STR_EQ(facts, only_tiny);
    free(facts);
    free(pct);

    /* the text table */
    char *out = expect_sh(0, NULL,
                          STROBE " report '" STROBE_TEST_WORK_DIR "/report_score.tmp/exp' --score --target 100KB");
    CHECK_CONTAINS(out, "\n  target           trace <= 100.0 KiB\n");
    CHECK_CONTAINS(out, "\n  outcome          target trace <= 100.0 KiB met by excluding 1 function (");
    CHECK_CONTAINS(out, "  exclude       tiny (score_workload.c:");
    CHECK_CONTAINS(out, "  keep          medium (score_workload.c:");
    CHECK_CONTAINS(out, "  never:main    main (score_workload.c:");
    free(out);

    /* the filter round-trips through strobe run */
    run_score_workload(dir, "--filter filter.txt", "exp2", exp);
    facts = score_facts(exp, "--target 100KB");
    CHECK_STR_EQ(facts, "medium 1000 2000 keep\n"
                        "main 1 2 never:main\n"
                        "trace True\n");
    free(facts);

    /* a target that cannot be met (main's own events cost something):
     * what was reached, on stderr; the best filter is still written and
     * the exit status is 0 */
    out = expect_sh(0, NULL,
                    "cd '" STROBE_TEST_WORK_DIR "/report_score.tmp' && " STROBE
                    " report exp --score --target 0% -o all.txt >/dev/null");
    CHECK(strncmp(out, "strobe: report: target overhead <= 0% of thread time not met: reached ", 70) == 0);
    CHECK(strstr(out, " by excluding the 2 functions that may be excluded; ") &&
          strchr(out, '\n') == strrchr(out, '\n'));
    free(out);
    expect(0, "exclude tiny\nexclude medium\n", "grep -v '^#' '%s/all.txt' | sed 's/ *#.*//'", dir);

    /* an unwritable FILTER: one line, exit 1, nothing printed */
    expect(1, "strobe: report: -o /nonexistent/filter.txt: No such file or directory\n",
           STROBE " report '" STROBE_TEST_WORK_DIR "/report_score.tmp/exp' --score -o /nonexistent/filter.txt");
}

/* Profile-only experiments estimate bytes from the record format (5 bytes
 * per visit: ids below 128); trace-only ones rebuild the visits. */
STROBE_TEST(report_score_sources)
{
    need_runtime();
    const char *dir = strobe_test_tmpdir("report_score_sources");
    char exp[4200];
    run_score_workload(dir, "--no-trace", "prof", exp);
    char *facts = score_facts(exp, "--target 100KB");
    CHECK_STR_EQ(facts, "tiny 100000 200000 exclude\n"
                        "medium 1000 2000 keep\n"
                        "main 1 2 never:main\n"
                        "format True\n");
    free(facts);
    expect(0, "2.5 505005\n",
           "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d[\"bytes_per_event\"], "
           "d[\"full_run\"][\"bytes\"])' '%s.score.json'",
           exp);
    run_score_workload(dir, "--no-profile", "trace", exp);
    facts = score_facts(exp, "--target 100KB");
    CHECK_STR_EQ(facts, "tiny 100000 200000 exclude\n"
                        "medium 1000 2000 keep\n"
                        "main 1 2 never:main\n"
                        "trace True\n");
    free(facts);
}

/* Each part this strobe was built without (STROBE_WITH_*=OFF,
 * common/build_config.h) says so in one line when a command asks for it,
 * and nothing runs (exit 125 before the program, 1 for the other commands).
 * Nothing to check in a build with every part. */
STROBE_TEST(built_without)
{
    const char *dir = strobe_test_tmpdir("built_without");
    if (!STROBE_WITH_TM) {
        expect(125, "strobe: run: --tm: " STROBE_WITHOUT("TM") "\n", STROBE " run --tm -- true");
        expect(125, "strobe: run: --tm-monitor: " STROBE_WITHOUT("TM") "\n",
               STROBE " run --tm-monitor off -- true");
    }
    if (!STROBE_WITH_MPI)
        expect(125, "strobe: run: --mpi: " STROBE_WITHOUT("MPI") "\n", STROBE " run --mpi -- true");
    if (!STROBE_WITH_OTF2)
        expect(1, "strobe: export: --format otf2: " STROBE_WITHOUT("OTF2") "\n",
               STROBE " export x --format otf2 -o y");
    if (!STROBE_WITH_PETRA) {
        expect(1, "strobe: petra: " STROBE_WITHOUT("PETRA") "\n", STROBE " petra x.petra ls");
        expect(0, "",
               "cd '%s' && printf 'daemon:\\n  producer: n1\\nstores:\\n  - plugin: petra\\n    path: x.petra\\n' "
               ">petra.yaml",
               dir);
        expect(1, "strobed: petra.yaml:4: plugin: petra: " STROBE_WITHOUT("PETRA") "\n",
               "cd '%s' && " STROBE_BIN_DIR "/strobed --check -c petra.yaml", dir);
    }
    if (!STROBE_WITH_REMOTE_WRITE) {
        expect(0, "",
               "cd '%s' && printf 'daemon:\\n  producer: n1\\nstores:\\n  - plugin: remote_write\\n"
               "    url: http://127.0.0.1:9/api/v1/write\\n' >rw.yaml",
               dir);
        expect(1, "strobed: rw.yaml:4: plugin: remote_write: " STROBE_WITHOUT("REMOTE_WRITE") "\n",
               "cd '%s' && " STROBE_BIN_DIR "/strobed --check -c rw.yaml", dir);
    }
    if (!STROBE_WITH_INFLUX) {
        expect(0, "",
               "cd '%s' && printf 'daemon:\\n  producer: n1\\nstores:\\n  - plugin: influx\\n    url: http://h\\n' "
               ">influx.yaml",
               dir);
        expect(1, "strobed: influx.yaml:4: plugin: influx: " STROBE_WITHOUT("INFLUX") "\n",
               "cd '%s' && " STROBE_BIN_DIR "/strobed --check -c influx.yaml", dir);
    }
    if (!STROBE_WITH_POSTGRES) {
        expect(0, "",
               "cd '%s' && printf 'daemon:\\n  producer: n1\\nstores:\\n  - plugin: postgres\\n    conninfo: dbname=x\\n' "
               ">pg.yaml",
               dir);
        expect(1, "strobed: pg.yaml:4: plugin: postgres: " STROBE_WITHOUT("POSTGRES") "\n",
               "cd '%s' && " STROBE_BIN_DIR "/strobed --check -c pg.yaml", dir);
    }
}

STROBE_TEST_MAIN(STROBE_CASE(shell_quote), STROBE_CASE(parse_ranges), STROBE_CASE(iso8601), STROBE_CASE(meta_file),
                 STROBE_CASE(progress_line), STROBE_CASE(help), STROBE_CASE(version),
                 STROBE_CASE(usage_errors), STROBE_CASE(bad_filter), STROBE_CASE(program_not_found),
                 STROBE_CASE(output_dir_not_empty), STROBE_CASE(runtime_override_missing),
                 STROBE_CASE(report_unreadable), STROBE_CASE(run_exact_visits), STROBE_CASE(report_by), STROBE_CASE(run_no_trace),
                 STROBE_CASE(run_no_profile), STROBE_CASE(exit_code_passthrough),
                 STROBE_CASE(killed_by_signal), STROBE_CASE(signal_forwarded), STROBE_CASE(exit_after_signal), STROBE_CASE(child_environment),
                 STROBE_CASE(meta_of_run), STROBE_CASE(default_dir_name), STROBE_CASE(export_dispatch),
                 STROBE_CASE(run_tm), STROBE_CASE(report_tm_level_off), STROBE_CASE(report_score),
                 STROBE_CASE(report_score_sources), STROBE_CASE(drops_per_thread),
                 STROBE_CASE(report_profile_reads_no_stream), STROBE_CASE(built_without))
