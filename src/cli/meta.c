/* SPDX-License-Identifier: MIT */
/*
 * The experiment's `meta` file, written by `strobe run`: one `key: value`
 * line per fact about the run (what was started, where, by whom, when, and
 * at the end how it finished). The analysis keeps the pairs in file order
 * and the report shows them; docs/cli.md lists the keys.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "strobe/strobe.h"

/* Characters that never need quoting in a POSIX shell word. */
static bool shell_safe(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("_@%+=:,./-", c) != NULL;
}

/* Appends one quoted word to f: as is when safe, '...' when printable,
 * else bash's $'...' with escapes so the meta line stays one line. */
static void quote_word(FILE *f, const char *w)
{
    const unsigned char *p = (const unsigned char *)w;
    bool safe = *p != 0, printable = true;
    for (; *p; p++) {
        if (!shell_safe(*p))
            safe = false;
        if (*p < 0x20 || *p == 0x7f)
            printable = false;
    }
    if (safe) {
        fputs(w, f);
        return;
    }
    if (printable) {
        fputc('\'', f);
        for (p = (const unsigned char *)w; *p; p++) {
            if (*p == '\'')
                fputs("'\\''", f);
            else
                fputc(*p, f);
        }
        fputc('\'', f);
        return;
    }
    fputs("$'", f);
    for (p = (const unsigned char *)w; *p; p++) {
        switch (*p) {
        case '\\':
            fputs("\\\\", f);
            break;
        case '\'':
            fputs("\\'", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(f, "\\x%02x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('\'', f);
}

char *strobe__shell_quote_argv(char *const *argv)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    for (size_t i = 0; argv[i]; i++) {
        if (i)
            fputc(' ', f);
        quote_word(f, argv[i]);
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

void strobe__iso8601_utc(char buf[24], int64_t sec)
{
    time_t t = (time_t)sec;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(buf, 24, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, 24, "%" PRId64, sec);
}

/* `key: value` with control characters replaced, so a strange cwd or host
 * name cannot break the one-line-per-key format. */
static void meta_line(FILE *f, const char *key, const char *value)
{
    fprintf(f, "%s: ", key);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++)
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
    fputc('\n', f);
}

static int close_checked(FILE *f)
{
    int rc = ferror(f) ? -EIO : 0;
    if (fflush(f) != 0 && rc == 0)
        rc = -errno;
    if (fsync(fileno(f)) != 0 && rc == 0 && errno != EINVAL)
        rc = -errno;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

/* Creates the meta file PATH (it must not exist) with the lines every
 * experiment's meta starts with: what ran (argv), where, by whom and when.
 * Returns 0 and the open file in *out, or -errno. */
static int meta_create(const char *path, char *const *argv, const char *cwd, int64_t start_sec,
                       int64_t start_nsec, FILE **out)
{
    char *command = strobe__shell_quote_argv(argv);
    if (!command)
        return -ENOMEM;
    FILE *f = fopen(path, "wx");
    if (!f) {
        int rc = -errno;
        free(command);
        return rc;
    }
    char num[32], when[24];
    meta_line(f, "strobe_version", STROBE_VERSION_STRING);
    meta_line(f, "command", command);
    free(command);
    meta_line(f, "cwd", cwd ? cwd : "?");

    char host[256];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "?");
    host[sizeof host - 1] = 0;
    meta_line(f, "host", host);

    struct passwd pw, *res = NULL;
    char pwbuf[4096];
    if (getpwuid_r(geteuid(), &pw, pwbuf, sizeof pwbuf, &res) == 0 && res) {
        meta_line(f, "user", pw.pw_name);
    } else {
        snprintf(num, sizeof num, "%u", (unsigned)geteuid());
        meta_line(f, "user", num);
    }

    strobe__iso8601_utc(when, start_sec);
    meta_line(f, "start_time", when);
    snprintf(num, sizeof num, "%" PRId64, start_sec * 1000000000 + start_nsec);
    meta_line(f, "start_realtime_ns", num);
    *out = f;
    return 0;
}

/* Opens the meta file PATH to append the end of the recording (end_time,
 * end_realtime_ns). Returns 0 and the open file in *out, or -errno. */
static int meta_append_end(const char *path, int64_t end_sec, int64_t end_nsec, FILE **out)
{
    FILE *f = fopen(path, "a");
    if (!f)
        return -errno;
    char num[32], when[24];
    strobe__iso8601_utc(when, end_sec);
    meta_line(f, "end_time", when);
    snprintf(num, sizeof num, "%" PRId64, end_sec * 1000000000 + end_nsec);
    meta_line(f, "end_realtime_ns", num);
    *out = f;
    return 0;
}

int strobe__meta_write_start(const char *path, const struct strobe__run_info *info)
{
    FILE *f;
    char num[32];
    char *cwd = getcwd(NULL, 0);
    int rc = meta_create(path, info->argv, cwd, info->start_sec, info->start_nsec, &f);
    free(cwd);
    if (rc)
        return rc;
    snprintf(num, sizeof num, "%ld", info->launcher_pid);
    meta_line(f, "launcher_pid", num);
    meta_line(f, "runtime", info->runtime);
    if (info->filter)
        meta_line(f, "filter", info->filter);
    if (info->trace >= 0)
        meta_line(f, "trace", info->trace ? "1" : "0");
    if (info->profile >= 0)
        meta_line(f, "profile", info->profile ? "1" : "0");
    /* what the STM records decides what `strobe report --tm` can say */
    meta_line(f, "tm", info->tm_monitor ? "1" : "0");
    if (info->tm_monitor)
        meta_line(f, "tm_monitor", info->tm_monitor);
    return close_checked(f);
}

int strobe__meta_write_end(const char *path, int wstatus, int after_signal, int64_t end_sec, int64_t end_nsec)
{
    FILE *f;
    int rc = meta_append_end(path, end_sec, end_nsec, &f);
    if (rc)
        return rc;
    char num[32];
    if (WIFSIGNALED(wstatus)) {
        snprintf(num, sizeof num, "%d", WTERMSIG(wstatus));
        meta_line(f, "signal", num);
    } else {
        snprintf(num, sizeof num, "%d", WEXITSTATUS(wstatus));
        meta_line(f, "exit_status", num);
        if (after_signal) {
            snprintf(num, sizeof num, "%d", after_signal);
            meta_line(f, "after_signal", num);
        }
    }
    return close_checked(f);
}

int strobe__meta_write_attach(const char *path, const struct strobe__attach_info *info)
{
    FILE *f;
    int rc = meta_create(path, info->argv, info->cwd, info->start_sec, info->start_nsec, &f);
    if (rc)
        return rc;
    char num[32];
    snprintf(num, sizeof num, "%ld", info->pid);
    meta_line(f, "attached_pid", num);
    snprintf(num, sizeof num, "%u", info->hz);
    meta_line(f, "sample_hz", num);
    return close_checked(f);
}

int strobe__meta_write_detach(const char *path, bool exited, int64_t end_sec, int64_t end_nsec)
{
    FILE *f;
    int rc = meta_append_end(path, end_sec, end_nsec, &f);
    if (rc)
        return rc;
    meta_line(f, "process_exited", exited ? "1" : "0");
    return close_checked(f);
}
