/* SPDX-License-Identifier: MIT */
/*
 * `strobe petra FILE [ls | get METRIC... | history METRIC [-n N] | dump
 * [--json]]`: reads back what the `petra` store of strobed keeps in a
 * PETRA heap (docs/petra-store.md, docs/cli.md). The key layout is
 * src/plugins/petra_layout.h, shared with the store.
 *
 * Opening a heap recovers it and closing it checkpoints, which write to
 * the file; petra's lock (taken by strobe_petra_open) makes the command
 * refuse a heap that a running store (or another strobe petra) holds
 * rather than race with its writes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/build_config.h"
#if STROBE_WITH_PETRA
#include "export/escape.h"
#include "plugins/petra_layout.h"
#endif

const char strobe__petra_help[] =
    "usage: strobe petra FILE [--salvage] [ls | get METRIC... | history METRIC [-n N] | dump [--json]]\n"
    "\n"
    "Reads the heap FILE of strobed's petra store (a metric is INSTANCE/METRIC,\n"
    "INSTANCE/METRIC[I] for array elements).\n"
    "\n"
    "  ls                   the stored metrics, one name per line (the default)\n"
    "  get METRIC...        latest sample of each: name, value, timestamp (s.ns)\n"
    "  history METRIC       its kept samples, oldest first: timestamp (s.ns), value\n"
    "    -n, --last N       only the last N\n"
    "  dump                 every metric with its history\n"
    "    --json             as one JSON document\n"
    "  --salvage            a heap whose descriptor log is damaged: recover (and keep,\n"
    "                       in the file) the transactions before the damage\n";

#if STROBE_WITH_PETRA
/* One stored metric, read from the heap. */
struct rec {
    char *name;
    uint64_t id;
    struct strobe__pst_desc d;
    uint64_t seq, value, ts; /* samples stored, latest sample */
};

struct reader {
    const char *file;
    struct strobe__pst s;
};

static int fail(const struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const struct reader *r, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "strobe: petra: %s: ", r->file);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return STROBE_EXIT_FAILURE;
}

static int read_latest(struct reader *r, struct rec *m)
{
    int sid = r->s.sid[STROBE__PST_LATEST], rc;
    if ((rc = strobe_petra_get(r->s.t, sid, strobe__pst_key(m->id, STROBE__PST_LATEST_SEQ), &m->seq)) < 0 ||
        (rc = strobe_petra_get(r->s.t, sid, strobe__pst_key(m->id, STROBE__PST_LATEST_VALUE), &m->value)) <
            0 ||
        (rc = strobe_petra_get(r->s.t, sid, strobe__pst_key(m->id, STROBE__PST_LATEST_TS), &m->ts)) < 0)
        return rc == -ENOENT ? STROBE_ERR_FORMAT : rc;
    return m->seq ? 0 : STROBE_ERR_FORMAT;
}

struct list {
    struct rec *v;
    size_t n, cap;
    int err;
};

static int collect(void *arg, uint64_t key, uint64_t value)
{
    struct list *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        struct rec *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return l->err = -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    struct rec *m = &l->v[l->n];
    memset(m, 0, sizeof *m);
    m->id = key;
    if (strobe__pst_desc_unpack(value, &m->d) < 0)
        return l->err = STROBE_ERR_FORMAT;
    l->n++;
    return 0;
}

static int cmp_rec(const void *a, const void *b)
{
    return strcmp(((const struct rec *)a)->name, ((const struct rec *)b)->name);
}

static void free_list(struct list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].name);
    free(l->v);
}

/* Every stored metric with its name and latest sample, in name order. */
static int list_all(struct reader *r, struct list *l)
{
    memset(l, 0, sizeof *l);
    int rc = strobe_petra_foreach(r->s.t, r->s.sid[STROBE__PST_NAMES], collect, l);
    if (rc == 0)
        rc = l->err;
    for (size_t i = 0; rc == 0 && i < l->n; i++) {
        struct rec *m = &l->v[i];
        if (!(m->name = malloc(m->d.name_len + 1)))
            rc = -ENOMEM;
        else if ((rc = strobe__pst_read_name(&r->s, m->id, &m->d, m->name, m->d.name_len + 1)) == 0)
            rc = read_latest(r, m);
        if (rc < 0)
            fail(r, "metric id %" PRIu64 ": %s", m->id, strobe_strerror(rc));
    }
    if (rc == 0 && l->n)
        qsort(l->v, l->n, sizeof *l->v, cmp_rec);
    else if (rc == -ENOMEM)
        fail(r, "%s", strobe_strerror(rc));
    return rc;
}

/* Metric by name: 0, or 1 after printing why not. */
static int find(struct reader *r, const char *name, struct rec *m)
{
    memset(m, 0, sizeof *m);
    int rc = strobe__pst_lookup(&r->s, name, strlen(name), &m->id, &m->d);
    if (rc == -ENOENT)
        return fail(r, "no metric '%s' (see 'strobe petra %s ls')", name, r->file);
    if (rc == 0)
        rc = read_latest(r, m);
    if (rc < 0)
        return fail(r, "%s: %s", name, strobe_strerror(rc));
    m->name = (char *)name;
    return 0;
}

static void print_ts(uint64_t ns)
{
    printf("%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

/* Calls fn for the last `last` kept samples of m, oldest first. */
static int walk_history(struct reader *r, const struct rec *m, uint64_t last,
                        void (*fn)(const struct rec *m, uint64_t ts, uint64_t v, uint64_t k, void *arg),
                        void *arg)
{
    uint64_t kept = m->seq < m->d.history ? m->seq : m->d.history;
    if (last < kept)
        kept = last;
    for (uint64_t k = 0, seq = m->seq - kept + 1; seq <= m->seq; seq++, k++) {
        uint32_t slot = (uint32_t)((seq - 1) % m->d.history);
        uint64_t ts, v;
        int rc;
        if ((rc = strobe_petra_get(r->s.t, r->s.sid[STROBE__PST_RING_TS], strobe__pst_key(m->id, slot),
                                   &ts)) < 0 ||
            (rc = strobe_petra_get(r->s.t, r->s.sid[STROBE__PST_RING_VALUE], strobe__pst_key(m->id, slot),
                                   &v)) < 0)
            return fail(r, "%s: history slot %" PRIu32 ": %s", m->name, slot,
                        strobe_strerror(rc == -ENOENT ? STROBE_ERR_FORMAT : rc));
        fn(m, ts, v, k, arg);
    }
    return 0;
}

static void print_sample(const struct rec *m, uint64_t ts, uint64_t v, uint64_t k, void *arg)
{
    char buf[64];
    strobe__pst_format_value(m->d.type, v, buf, sizeof buf);
    printf("%s", (const char *)arg);
    print_ts(ts);
    printf(" %s\n", buf);
}

static void json_value(enum strobe_metric_type t, uint64_t v)
{
    char buf[64];
    strobe__pst_format_value(t, v, buf, sizeof buf);
    if (!strcmp(buf, "nan") || !strcmp(buf, "-nan") || !strcmp(buf, "inf") || !strcmp(buf, "-inf"))
        printf("null"); /* JSON has no NaN */
    else
        printf("%s", buf);
}

static void json_sample(const struct rec *m, uint64_t ts, uint64_t v, uint64_t k, void *arg)
{
    printf("%s{\"timestamp_ns\": %" PRIu64 ", \"value\": ", k ? ", " : "", ts);
    json_value(m->d.type, v);
    printf("}");
}

static int cmd_dump(struct reader *r, int json)
{
    struct list l;
    if (list_all(r, &l) < 0) {
        free_list(&l);
        return STROBE_EXIT_FAILURE;
    }
    int rc = 0;
    if (json) {
        printf("{\"file\": ");
        strobe__json_string(stdout, r->file);
        printf(", \"metrics\": [");
    }
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        const struct rec *m = &l.v[i];
        if (json) {
            printf("%s\n  {\"name\": ", i ? "," : "");
            strobe__json_string(stdout, m->name);
            printf(", \"type\": \"%s\", \"samples\": %" PRIu64 ", \"history_size\": %" PRIu32
                   ", \"latest\": {\"timestamp_ns\": %" PRIu64 ", \"value\": ",
                   strobe_metric_type_name(m->d.type), m->seq, m->d.history, m->ts);
            json_value(m->d.type, m->value);
            printf("},\n   \"history\": [");
            rc = walk_history(r, m, UINT64_MAX, json_sample, NULL);
            printf("]}");
        } else {
            printf("%s %s samples %" PRIu64 " history %" PRIu32 "\n", m->name,
                   strobe_metric_type_name(m->d.type), m->seq, m->d.history);
            rc = walk_history(r, m, UINT64_MAX, print_sample, "  ");
        }
    }
    if (json && rc == 0)
        printf("\n]}\n");
    free_list(&l);
    return rc ? STROBE_EXIT_FAILURE : 0;
}

static int cmd_ls(struct reader *r)
{
    struct list l;
    if (list_all(r, &l) < 0) {
        free_list(&l);
        return STROBE_EXIT_FAILURE;
    }
    for (size_t i = 0; i < l.n; i++)
        printf("%s\n", l.v[i].name);
    free_list(&l);
    return 0;
}

static int cmd_get(struct reader *r, char **names, int n)
{
    struct rec *m = calloc((size_t)n, sizeof *m);
    if (!m)
        return fail(r, "%s", strobe_strerror(-ENOMEM));
    int rc = 0;
    /* every name first: an unknown one prints nothing but the error */
    for (int i = 0; rc == 0 && i < n; i++)
        rc = find(r, names[i], &m[i]);
    for (int i = 0; rc == 0 && i < n; i++) {
        char buf[64];
        strobe__pst_format_value(m[i].d.type, m[i].value, buf, sizeof buf);
        printf("%s %s ", m[i].name, buf);
        print_ts(m[i].ts);
        printf("\n");
    }
    free(m);
    return rc;
}

static int cmd_history(struct reader *r, const char *name, uint64_t last)
{
    struct rec m;
    int rc = find(r, name, &m);
    return rc ? rc : walk_history(r, &m, last, print_sample, "");
}

int strobe__cmd_petra(int argc, char **argv)
{
    static const struct option opts[] = {
        {"last", required_argument, 0, 'n'},
        {"json", no_argument, 0, 'J'},
        {"salvage", no_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int json = 0, salvage = 0, c;
    uint64_t last = UINT64_MAX;
    const char *last_arg = NULL;
    while ((c = strobe__cli_getopt("petra", argc, argv, ":n:h", opts)) != -1) {
        switch (c) {
        case 'n': {
            size_t v;
            if (strobe__cli_parse_size(optarg, &v) < 0)
                return strobe__cli_usage_error("petra", "-n %s: not a number of samples", optarg);
            last = v;
            last_arg = optarg;
            break;
        }
        case 'J':
            json = 1;
            break;
        case 'S':
            salvage = 1;
            break;
        case 'h':
            fputs(strobe__petra_help, stdout);
            return 0;
        default:
            return STROBE_EXIT_USAGE;
        }
    }
    if (optind >= argc)
        return strobe__cli_usage_error("petra", "which heap? give FILE");
    struct reader r = {.file = argv[optind]};
    const char *cmd = optind + 1 < argc ? argv[optind + 1] : "ls";
    char **args = argv + optind + 2;
    int nargs = optind + 2 <= argc ? argc - optind - 2 : 0;
    int is_ls = !strcmp(cmd, "ls"), is_get = !strcmp(cmd, "get"), is_hist = !strcmp(cmd, "history"),
        is_dump = !strcmp(cmd, "dump");
    if (!is_ls && !is_get && !is_hist && !is_dump)
        return strobe__cli_usage_error("petra", "unknown command '%s' (ls, get, history or dump)", cmd);
    if ((is_ls || is_dump) && nargs)
        return strobe__cli_usage_error("petra", "%s: unexpected argument '%s'", cmd, args[0]);
    if (is_get && !nargs)
        return strobe__cli_usage_error("petra", "get: which metric?");
    if (is_hist && nargs != 1)
        return strobe__cli_usage_error("petra",
                                       nargs ? "history: one metric at a time" : "history: which metric?");
    if (last_arg && !is_hist)
        return strobe__cli_usage_error("petra", "-n is an option of history");
    if (json && !is_dump)
        return strobe__cli_usage_error("petra", "--json is an option of dump");

    char why[320];
    int rc = strobe__pst_open(r.file, 0, 0, salvage, &r.s, why, sizeof why);
    if (rc < 0)
        return fail(&r, "%s", why);
    int status;
    if (is_ls)
        status = cmd_ls(&r);
    else if (is_get)
        status = cmd_get(&r, args, nargs);
    else if (is_hist)
        status = cmd_history(&r, args[0], last);
    else
        status = cmd_dump(&r, json);
    if ((rc = strobe__pst_close(&r.s)) < 0 && status == 0)
        status = fail(&r, "close: %s", strobe_strerror(rc));
    return status;
}
#else
/* Built without PETRA (STROBE_WITH_PETRA=OFF): the command is listed, and
 * says so in one line. */
int strobe__cmd_petra(int argc, char **argv)
{
    strobe__cli_say("petra: %s", STROBE_WITHOUT("PETRA"));
    return STROBE_EXIT_FAILURE;
}
#endif
