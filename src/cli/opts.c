/* SPDX-License-Identifier: MIT */
/*
 * Option parsing and one-line messages shared by the subcommands. getopt's
 * own diagnostics are switched off (opterr = 0) so every usage problem is
 * reported the same way: one line naming the option, a pointer to the
 * subcommand's --help, exit code 2.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

void strobe__cli_say(const char *fmt, ...)
{
    va_list ap;
    fputs("strobe: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int strobe__cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "strobe: %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'strobe %s --help')\n", cmd);
    return STROBE_EXIT_USAGE;
}

/* The spelling of option `val` for messages: "--name" when it has a long
 * form, else "-c". */
static void option_name(char *buf, size_t len, int val, const struct option *longopts)
{
    for (const struct option *o = longopts; o->name; o++) {
        if (!o->flag && o->val == val) {
            snprintf(buf, len, "--%s", o->name);
            return;
        }
    }
    snprintf(buf, len, "-%c", val);
}

int strobe__cli_getopt(const char *cmd, int argc, char **argv, const char *optstring,
                       const struct option *longopts)
{
    static char **parsing;
    if (argv != parsing) { /* a new argv: restart glibc's getopt from scratch */
        parsing = argv;
        optind = 0;
    }
    opterr = 0;
    int c = getopt_long(argc, argv, optstring, longopts, NULL);
    if (c != '?' && c != ':')
        return c;
    /* the element getopt was looking at when it gave up */
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    char name[128];
    if (c == ':') {
        option_name(name, sizeof name, optopt, longopts);
        strobe__cli_usage_error(cmd, "option '%s' needs an argument", name);
        return -2;
    }
    if (strncmp(arg, "--", 2) == 0) {
        /* long option: unknown, or given a value it does not take (glibc
         * then sets optopt to the option's value, so test the spelling) */
        size_t n = strcspn(arg, "=");
        snprintf(name, sizeof name, "%.*s", (int)(n < 100 ? n : 100), arg);
        if (arg[n] == '=') {
            for (const struct option *o = longopts; o->name; o++) {
                if (strcmp(o->name, name + 2) == 0 && o->has_arg == no_argument) {
                    strobe__cli_usage_error(cmd, "option '%s' takes no argument", name);
                    return -2;
                }
            }
        }
        strobe__cli_usage_error(cmd, "unknown option '%s'", name);
        return -2;
    }
    if (optopt > 0 && optopt < 256 && strchr(optstring, optopt) == NULL)
        snprintf(name, sizeof name, "-%c", optopt);
    else if (optopt > 0)
        option_name(name, sizeof name, optopt, longopts);
    else
        snprintf(name, sizeof name, "%.100s", arg);
    strobe__cli_usage_error(cmd, "unknown option '%s'", name);
    return -2;
}

int strobe__cli_parse_size(const char *s, size_t *out)
{
    if (!*s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* One decimal number at *s (no sign, no overflow); advances *s. */
static int parse_u64(const char **s, uint64_t *out)
{
    if (**s < '0' || **s > '9')
        return -1;
    uint64_t v = 0;
    for (; **s >= '0' && **s <= '9'; (*s)++) {
        uint64_t d = (uint64_t)(**s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int strobe__cli_parse_ranges(const char *s, struct strobe__cli_range **out, size_t *n)
{
    size_t items = 1;
    for (const char *p = s; *p; p++)
        items += *p == ',';
    struct strobe__cli_range *r = malloc(items * sizeof *r);
    if (!r)
        return -ENOMEM;
    size_t k = 0;
    for (;;) {
        if (parse_u64(&s, &r[k].lo) < 0)
            break;
        r[k].hi = r[k].lo;
        if (*s == '-') {
            s++;
            if (parse_u64(&s, &r[k].hi) < 0 || r[k].hi < r[k].lo)
                break;
        }
        k++;
        if (*s == '\0') {
            *out = r;
            *n = k;
            return 0;
        }
        if (*s++ != ',')
            break;
    }
    free(r);
    return -1;
}
