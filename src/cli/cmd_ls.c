/* SPDX-License-Identifier: MIT */
/*
 * `strobe ls`: what a strobed serves, in the spirit of ldms_ls. Names
 * only; -l values; -v metadata too; --json everything as one JSON
 * document. Talks the same protocol as aggregators (src/transport).
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "export/escape.h"
#include "strobe/metric_set.h"
#include "strobed/config.h"
#include "transport/auth.h"
#include "transport/client.h"

const char strobe__ls_help[] =
    "usage: strobe ls [-l] [-v] [--json] [--secret-file FILE] [--timeout DURATION] HOST:PORT [SET...]\n"
    "\n"
    "Lists the metric sets a strobed publishes (SET: names or globs).\n"
    "\n"
    "  -l, --long          values too: 'M'/'D' (meta/data), type, name, value\n"
    "  -v, --verbose       metadata too: producer, schema, sizes, generations, timestamp\n"
    "      --json          one JSON document with metadata and values\n"
    "      --secret-file F the daemon's shared secret\n"
    "      --timeout D     give up after D: connection, handshake and reply (default 5s)\n";

static void print_time(uint64_t ns)
{
    time_t sec = (time_t)(ns / 1000000000ull);
    struct tm tm;
    char buf[64];
    localtime_r(&sec, &tm);
    strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Y", &tm);
    printf("%s [%" PRIu64 "us]", buf, (uint64_t)(ns % 1000000000ull / 1000));
}

static void print_set(const strobe_set *s, int lng, int verbose)
{
    printf("%s: %s, last update: ", strobe_set_instance(s),
           strobe_set_is_consistent(s) ? "consistent" : "inconsistent");
    print_time(strobe_set_timestamp(s));
    printf("\n");
    if (verbose) {
        size_t ml, dl;
        strobe_set_meta(s, &ml);
        strobe_set_data(s, &dl);
        printf("  METADATA --------\n    Producer Name : %s\n    Instance Name : %s\n"
               "      Schema Name : %s\n             Size : %zu\n     Metric Count : %u\n"
               "               GN : %" PRIu64 "\n",
               strobe_set_producer(s), strobe_set_instance(s), strobe_set_schema_name(s), ml,
               strobe_set_card(s), strobe_set_meta_gn(s));
        printf("  DATA ------------\n        Timestamp : ");
        print_time(strobe_set_timestamp(s));
        printf("\n         Duration : [%.6fs]\n       Consistent : %s\n             Size : %zu\n"
               "               GN : %" PRIu64 "\n  -----------------\n",
               (double)strobe_set_duration(s) / 1e9, strobe_set_is_consistent(s) ? "TRUE" : "FALSE",
               dl, strobe_set_data_gn(s));
    }
    if (!lng && !verbose)
        return;
    for (uint32_t i = 0; i < strobe_set_card(s); i++) {
        enum strobe_metric_type t = strobe_set_metric_type(s, i);
        uint32_t cnt = t == STROBE_MT_CHAR ? 1 : strobe_set_metric_count(s, i);
        const char *unit = strobe_set_metric_unit(s, i);
        printf("%c %-5s %-40s ", strobe_set_metric_flags(s, i) & STROBE_METRIC_META ? 'M' : 'D',
               strobe_metric_type_name(t), strobe_set_metric_name(s, i));
        for (uint32_t j = 0; j < cnt; j++) {
            char v[300];
            strobe_set_format_value(s, i, j, v, sizeof v);
            printf("%s%s", j ? "," : "", v);
        }
        if (*unit)
            printf(" %s", unit);
        if (!strobe_set_is_valid(s, i))
            printf(" (invalid)");
        printf("\n");
    }
    printf("\n");
}

static void json_set(const strobe_set *s, int first)
{
    printf("%s\n  {\"instance\": ", first ? "" : ",");
    strobe__json_string(stdout, strobe_set_instance(s));
    printf(", \"producer\": ");
    strobe__json_string(stdout, strobe_set_producer(s));
    printf(", \"schema\": ");
    strobe__json_string(stdout, strobe_set_schema_name(s));
    printf(", \"meta_gn\": %" PRIu64 ", \"data_gn\": %" PRIu64 ", \"timestamp_ns\": %" PRIu64
           ", \"duration_ns\": %" PRIu64 ", \"consistent\": %s,\n   \"metrics\": [",
           strobe_set_meta_gn(s), strobe_set_data_gn(s), strobe_set_timestamp(s),
           strobe_set_duration(s), strobe_set_is_consistent(s) ? "true" : "false");
    for (uint32_t i = 0; i < strobe_set_card(s); i++) {
        enum strobe_metric_type t = strobe_set_metric_type(s, i);
        printf("%s\n    {\"name\": ", i ? "," : "");
        strobe__json_string(stdout, strobe_set_metric_name(s, i));
        printf(", \"type\": \"%s\", \"unit\": ", strobe_metric_type_name(t));
        strobe__json_string(stdout, strobe_set_metric_unit(s, i));
        printf(", \"meta\": %s, \"valid\": %s, \"value\": ",
               strobe_set_metric_flags(s, i) & STROBE_METRIC_META ? "true" : "false",
               strobe_set_is_valid(s, i) ? "true" : "false");
        uint32_t cnt = strobe_set_metric_count(s, i);
        int array = t != STROBE_MT_CHAR && cnt > 1;
        if (array)
            printf("[");
        for (uint32_t j = 0; j < (t == STROBE_MT_CHAR ? 1 : cnt); j++) {
            char v[300];
            strobe_set_format_value(s, i, j, v, sizeof v);
            if (t == STROBE_MT_CHAR)
                strobe__json_string(stdout, v);
            else if (!strcmp(v, "nan") || !strcmp(v, "inf") || !strcmp(v, "-inf"))
                printf("%snull", j ? ", " : ""); /* JSON has no NaN */
            else
                printf("%s%s", j ? ", " : "", v);
        }
        printf("%s}", array ? "]" : "");
    }
    printf("]}");
}

static int selected(const char *name, char **pats, int n)
{
    if (n == 0)
        return 1;
    for (int i = 0; i < n; i++)
        if (fnmatch(pats[i], name, 0) == 0)
            return 1;
    return 0;
}

static int cmp_sets(const void *a, const void *b)
{
    return strcmp(strobe_set_instance(*(strobe_set *const *)a), strobe_set_instance(*(strobe_set *const *)b));
}

static int cmp_dir(const void *a, const void *b)
{
    return strcmp(((const struct strobe__dir_entry *)a)->name, ((const struct strobe__dir_entry *)b)->name);
}

void strobe__cli_daemon_failure(const char *cmd, const char *addr, int rc, const char *detail,
                                const char *timeout)
{
    if (rc == -ETIMEDOUT)
        strobe__cli_say("%s: %s: no reply within %s", cmd, addr, timeout);
    else if (rc == -EACCES && detail && *detail) /* the text names the peer */
        strobe__cli_say("%s: %s", cmd, detail);
    else
        strobe__cli_say("%s: %s: %s", cmd, addr, detail && *detail ? detail : strobe_strerror(rc));
}

int strobe__cli_daemon_connect(const char *cmd, const char *addr, const char *secret_file,
                               unsigned long long timeout_ns, const char *timeout,
                               struct strobe__client **out)
{
    char *secret = NULL;
    char err[1200];
    int rc;
    if (secret_file && (rc = strobe__auth_read_secret(secret_file, &secret, err, sizeof err)) < 0) {
        strobe__cli_say("%s: %s", cmd, err);
        return rc;
    }
    rc = strobe__client_open(addr, secret, (uint32_t)(timeout_ns / 1000000ull), 1, out);
    free(secret);
    if (rc < 0)
        strobe__cli_daemon_failure(cmd, addr, rc, NULL, timeout);
    return rc;
}

int strobe__cmd_ls(int argc, char **argv)
{
    static const struct option opts[] = {
        { "long", no_argument, 0, 'l' },        { "verbose", no_argument, 0, 'v' },
        { "json", no_argument, 0, 'J' },        { "secret-file", required_argument, 0, 'S' },
        { "timeout", required_argument, 0, 'T' }, { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    int lng = 0, verbose = 0, json = 0, c;
    const char *secret_file = NULL, *timeout = "5s";
    unsigned long long timeout_ns = 5000000000ull;
    while ((c = strobe__cli_getopt("ls", argc, argv, ":lvh", opts)) != -1) {
        switch (c) {
        case 'l': lng = 1; break;
        case 'v': verbose = 1; break;
        case 'J': json = 1; break;
        case 'S': secret_file = optarg; break;
        case 'T':
            if (strobe__parse_duration(optarg, &timeout_ns) < 0 || timeout_ns == 0)
                return strobe__cli_usage_error("ls", "--timeout %s: not a duration (e.g. 2s)", optarg);
            timeout = optarg;
            break;
        case 'h': fputs(strobe__ls_help, stdout); return 0;
        default: return STROBE_EXIT_USAGE;
        }
    }
    if (optind >= argc)
        return strobe__cli_usage_error("ls", "which daemon? give HOST:PORT");
    const char *addr = argv[optind];
    int rc;
    struct strobe__client *cl;
    if (strobe__cli_daemon_connect("ls", addr, secret_file, timeout_ns, timeout, &cl) < 0)
        return STROBE_EXIT_FAILURE;
    char **pats = argv + optind + 1;
    int npats = argc - optind - 1;
    int status = 0;
    if (!lng && !verbose && !json) {
        struct strobe__dir_entry *dir;
        size_t n;
        if ((rc = strobe__client_dir(cl, &dir, &n)) == 0) {
            qsort(dir, n, sizeof *dir, cmp_dir);
            for (size_t i = 0; i < n; i++)
                if (selected(dir[i].name, pats, npats))
                    printf("%s\n", dir[i].name);
            free(dir);
        }
    } else {
        struct strobe__mirror m = { 0 };
        if (npats > 64) {
            strobe__cli_say("ls: at most 64 SET patterns");
            strobe__client_close(cl);
            return STROBE_EXIT_USAGE;
        }
        /* the daemon filters by the patterns: other sets do not travel */
        if ((rc = strobe__client_update(cl, &m, (const char *const *)pats, (size_t)npats, 0, NULL, NULL)) == 0) {
            qsort(m.sets, m.n, sizeof *m.sets, cmp_sets);
            if (json) {
                printf("{\"daemon\": ");
                strobe__json_string(stdout, addr);
                printf(", \"sets\": [");
            }
            int first = 1;
            for (size_t i = 0; i < m.n; i++) {
                if (!selected(strobe_set_instance(m.sets[i]), pats, npats))
                    continue;
                if (json)
                    json_set(m.sets[i], first);
                else
                    print_set(m.sets[i], lng, verbose);
                first = 0;
            }
            if (json)
                printf("\n]}\n");
        }
        strobe__mirror_free(&m);
    }
    if (rc < 0) {
        strobe__cli_daemon_failure("ls", addr, rc, strobe__client_error(cl), timeout);
        status = STROBE_EXIT_FAILURE;
    }
    strobe__client_close(cl);
    return status;
}
