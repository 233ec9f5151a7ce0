/* SPDX-License-Identifier: MIT */
/*
 * Internal interface of the `strobe` command: the subcommands, their help
 * texts and the pieces they share (option parsing with one-line usage
 * errors, the experiment meta file, finding the runtime to preload,
 * terminal progress). Everything here runs in the single-threaded CLI
 * process; nothing is async-signal-safe unless it says so.
 *
 * Exit codes used by every subcommand (docs/cli.md):
 *   0 success, 1 the command failed (unreadable experiment, write error),
 *   2 usage error or invalid input file (nothing was started),
 *   3 `strobe report --diff --fail-above`: the regression gate failed.
 * `strobe run` passes the program's own exit code through and adds
 *   125 strobe failed before starting the program, 126 the program cannot
 *   be executed, 127 the program was not found, 128+S killed by signal S.
 */
#ifndef STROBE_CLI_CLI_H
#define STROBE_CLI_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

enum {
    STROBE_EXIT_FAILURE = 1,
    STROBE_EXIT_USAGE = 2,
    STROBE_EXIT_GATE = 3, /* `strobe report --diff --fail-above`: a call path grew */
    STROBE_EXIT_RUN_FAILED = 125,
    STROBE_EXIT_CANNOT_EXEC = 126,
    STROBE_EXIT_NOT_FOUND = 127,
};

/* ---- Subcommands: return the process exit code ------------------------ */
int strobe__cmd_run(int argc, char **argv);
int strobe__cmd_record(int argc, char **argv);
int strobe__cmd_report(int argc, char **argv);
int strobe__cmd_export(int argc, char **argv);
int strobe__cmd_ls(int argc, char **argv);
int strobe__cmd_petra(int argc, char **argv);
int strobe__cmd_ctl(int argc, char **argv);
/* `strobe cc` and `strobe c++` (argv[0] says which): execs the compiler */
int strobe__cmd_cc(int argc, char **argv);
int strobe__cmd_taskgraph(int argc, char **argv);
int strobe__cmd_instrument(int argc, char **argv);
int strobe__cmd_blame_prep(int argc, char **argv);
int strobe__cmd_merge(int argc, char **argv);

/* What `strobe report --diff A B` was asked (cmd_report.c parses it,
 * cmd_report_diff.c does it). */
enum { STROBE__DIFF_TEXT, STROBE__DIFF_JSON, STROBE__DIFF_HTML };
/* --min-time's default: the gate ignores paths whose inclusive time stays
 * below 1 ms on both sides, where scheduling and timer noise alone make
 * tens of percent (docs/cli.md, "Comparing experiments"). */
#define STROBE__DIFF_MIN_TIME_DEFAULT 1000000ull
struct strobe__diff_request {
    const char *a, *b;    /* DIR or DIR,DIR,... per side */
    int format;           /* STROBE__DIFF_* */
    const char *out_path; /* html: the page */
    int sort;             /* enum strobe_report_sort */
    size_t top;
    int source;           /* enum strobe_profile_source */
    bool gate;            /* --fail-above given */
    double fail_above;    /* percent */
    uint64_t min_ns;      /* --min-time */
    bool tm, mpi, samples; /* every run must have these */
};
int strobe__report_diff(const struct strobe__diff_request *rq);

extern const char strobe__run_help[];
extern const char strobe__record_help[];
extern const char strobe__report_help[];
extern const char strobe__export_help[];
extern const char strobe__ls_help[];
extern const char strobe__petra_help[];
extern const char strobe__ctl_help[];
extern const char strobe__cc_help[];
extern const char strobe__taskgraph_help[];
extern const char strobe__instrument_help[];
extern const char strobe__blame_prep_help[];
extern const char strobe__merge_help[];

struct strobe_experiment;
struct strobe_profile;
struct strobe_html_opts;
struct strobe_errbuf;
/* Writes the HTML report of EXP to PATH all or nothing (export/output.h),
 * stamped with the time: a failure leaves no partial page. Returns 0 or
 * strobe_report_html's and the output's codes (message in eb). (cmd_report.c) */
int strobe__cli_html_write(const char *path, const struct strobe_experiment *exp,
                           const struct strobe_profile *prof, struct strobe_html_opts *ho,
                           struct strobe_errbuf *eb);
/* Prints the one line for strobe__cli_html_write's rc (nothing for 0). */
void strobe__cli_html_error(const char *path, const struct strobe_experiment *exp, int rc,
                            const struct strobe_errbuf *eb);
/* Opens DIR for command CMD with a progress line on a terminal; prints the
 * error and returns NULL. (cmd_report.c) */
struct strobe_experiment *strobe__cli_open_experiment(const char *cmd, const char *dir);

/* ---- Talking to a strobed (ls, ctl) ------------------------------------- */

struct strobe__client;
/* Reads the secret (when secret_file is given) and connects to addr
 * within timeout_ns (timeout: the option's text, for messages). Returns
 * 0, or a negative code after printing "strobe: CMD: ..." */
int strobe__cli_daemon_connect(const char *cmd, const char *addr, const char *secret_file,
                               unsigned long long timeout_ns, const char *timeout,
                               struct strobe__client **out);
/* Prints the one line for a failed exchange with addr: the daemon's or
 * the transport's reason (detail, when not empty), or that --timeout
 * passed. */
void strobe__cli_daemon_failure(const char *cmd, const char *addr, int rc, const char *detail,
                                const char *timeout);

/* ---- Messages ----------------------------------------------------------- */

/* Prints "strobe: <formatted>\n" on stderr (the one-line error style). */
void strobe__cli_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "strobe: CMD: <formatted> (see 'strobe CMD --help')" and returns
 * STROBE_EXIT_USAGE. */
int strobe__cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* getopt_long with strobe's error messages: returns the option value, -1
 * at the end of the options, or -2 after printing a usage error for an
 * unknown option, a missing or unexpected argument. Resets getopt state,
 * so each subcommand can call it on its own argv. optstring must start
 * with ':' (after an optional '+'). */
int strobe__cli_getopt(const char *cmd, int argc, char **argv, const char *optstring,
                       const struct option *longopts);

/* Parses a decimal size_t in full ("12"); returns 0 or -1. */
int strobe__cli_parse_size(const char *s, size_t *out);

/* An inclusive range of numbers in a list option. */
struct strobe__cli_range {
    uint64_t lo, hi;
};

/* Parses a list of decimal numbers and ranges separated by commas
 * ("0,2-3"): *out (malloc'd, free it) gets one range per item. Returns 0,
 * -1 on bad syntax (also an empty item or a range whose end is below its
 * start) or -ENOMEM. */
int strobe__cli_parse_ranges(const char *s, struct strobe__cli_range **out, size_t *n);

/* ---- Meta file (DIR/meta) ---------------------------------------------- */

/* POSIX-shell quoting of argv joined by spaces, e.g. `./app 'a b' $'x\ny'`:
 * pasting it into bash runs the same command. Returns a malloc'd string
 * or NULL when out of memory. */
char *strobe__shell_quote_argv(char *const *argv);

/* "2026-11-22T10:45:00Z" (UTC, second precision) into buf[24]. */
void strobe__iso8601_utc(char buf[24], int64_t sec);

struct strobe__run_info {
    char *const *argv;   /* program and its arguments */
    const char *runtime; /* libstrobe.so being preloaded */
    const char *filter;  /* absolute filter path or NULL */
    int trace, profile;  /* -1: not set by strobe (runtime default), 0/1 */
    const char *tm_monitor; /* --tm: the TM monitoring level; NULL without --tm */
    int64_t start_sec;   /* CLOCK_REALTIME at start */
    int64_t start_nsec;
    long launcher_pid;
};

/* Writes the first part of the meta file (`key: value` lines, values on
 * one line: control characters in paths become '?'). Returns 0 or -errno. */
int strobe__meta_write_start(const char *path, const struct strobe__run_info *info);

/* Appends end_time, end_realtime_ns and exit_status or signal, and
 * after_signal when PROG exited (not killed) after strobe received the
 * signal after_signal (0 = none). wstatus is from waitpid(). Returns 0 or
 * -errno. */
int strobe__meta_write_end(const char *path, int wstatus, int after_signal, int64_t end_sec,
                           int64_t end_nsec);

/* Creates an experiment directory for command CMD ("run"): OUTPUT (created,
 * or an existing empty one), or strobe-<basename of PROG>-<START as local
 * YYYYmmdd-HHMMSS>, with a -N suffix when that exists. *dir is malloc'd,
 * *created tells whether strobe made it (and may remove it again). Returns
 * 0 or an exit code after printing the problem. (cmd_run.c) */
int strobe__cli_experiment_dir(const char *cmd, const char *output, const char *prog, time_t start, char **dir,
                               bool *created);

struct strobe__attach_info {
    char *const *argv; /* the process's command line (/proc/PID/cmdline) */
    const char *cwd;   /* its working directory, NULL when unknown */
    long pid;
    unsigned hz;       /* sampling rate */
    int64_t start_sec; /* CLOCK_REALTIME when sampling began */
    int64_t start_nsec;
};

/* The meta file of `strobe record --pid`: the common first lines, then
 * attached_pid and sample_hz. Returns 0 or -errno. */
int strobe__meta_write_attach(const char *path, const struct strobe__attach_info *info);

/* Appends end_time, end_realtime_ns and process_exited (1 when the
 * process ended while it was recorded). Returns 0 or -errno. */
int strobe__meta_write_detach(const char *path, bool exited, int64_t end_sec, int64_t end_nsec);

/* ---- Runtime lookup (preload.c) ----------------------------------------- */

/* The file name of strobe's library NAME ("libstrobe-tm") that strobe run
 * preloads: its SONAME (libstrobe-tm.so.0), which a distribution's runtime
 * package installs, not the development link libstrobe-tm.so. */
#define STROBE__SONAME(name) name ".so." STROBE_SOVERSION

/* Finds the runtime: $STROBE_RUNTIME, else <exe dir>/../lib/libstrobe.so.0,
 * else <exe dir>/../<install libdir>/libstrobe.so.0. Returns 0 and a
 * malloc'd absolute path, or a negative errno with a message in err
 * naming every place looked at. */
int strobe__find_runtime(char **out, char *err, size_t errlen);

/* The PATH search execvp() does (cmd_run.c), to report a missing program
 * before anything is created. Returns 0 and the path found in *found
 * (malloc'd), or -ENOENT, -EACCES or -ENOMEM. */
int strobe__find_program(const char *prog, char **found);

/* Finds the pass plugin of strobe cc, strobe/libstrobe-cc.so below the
 * library folder, as strobe__find_lib does. */
int strobe__find_cc_plugin(char **out, char *err, size_t errlen);

/* Finds the library FILE installed with strobe: <exe dir>/../lib/FILE,
 * else <exe dir>/../<install libdir>/FILE. Returns 0 and a malloc'd
 * absolute path, or a negative errno with a message in err naming every
 * place looked at, followed by hint. */
int strobe__find_lib(const char *file, const char *hint, char **out, char *err, size_t errlen);

/* Runs a compiler (args, NULL-terminated, found in PATH) and waits: its
 * exit status (128 + the signal when one ended it), or -1 with *err set
 * when it could not be started. Until it ends, an interruption meant for
 * the command (Ctrl-C, make or timeout stopping it) goes to the compiler,
 * so that the command's temporary files are still removed after it: the
 * signals stay blocked, and what arrives after the compiler ended is
 * dropped at the command's exit. (cmd_cc.c: strobe cc, strobe blame-prep) */
int strobe__run_compiler(char **args, int *err);

/* When the CLI itself runs under ASan/TSan, the path of the sanitizer
 * runtime it has loaded (malloc'd); NULL otherwise or when it is linked
 * statically. The child needs it first in LD_PRELOAD because the
 * sanitized libstrobe.so requires it. */
char *strobe__sanitizer_runtime(void);

/* true when the CLI was built with AddressSanitizer. */
bool strobe__built_with_asan(void);

/* ---- Progress on a terminal (progress.c) -------------------------------- */

struct strobe__progress {
    FILE *out;          /* stderr */
    const char *what;   /* "reading strobe-app-.../" */
    uint64_t min_total; /* show nothing when total bytes are below this */
    bool enabled;       /* out is a terminal */
    bool shown;         /* a line is on screen and must be cleared */
    int last_pct;
};

/* Traces smaller than this are processed too fast to need a progress line. */
#define STROBE_PROGRESS_MIN_BYTES (64ull << 20)

void strobe__progress_init(struct strobe__progress *p, const char *what);
/* Callback for strobe_experiment_open() and the exporters: arg is the
 * struct strobe__progress. Redraws "\r<what>: NN%" when NN changes. */
void strobe__progress_cb(uint64_t done, uint64_t total, void *arg);
/* Erases the line if one was drawn. */
void strobe__progress_end(struct strobe__progress *p);

#endif
