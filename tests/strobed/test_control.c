/* SPDX-License-Identifier: MIT */
/*
 * Runtime control (`strobe ctl`, src/strobed/control.c): samplers,
 * transforms, stores and producers added, removed and re-timed in a
 * running daemon; refused commands answered with the configuration
 * file's messages and nothing changed; control refused without the
 * shared secret. The first cases drive a daemon built in the test's
 * process (deterministic: the test samples itself), the others real
 * daemons through `strobe ctl` and `strobe ls`.
 */
#include "daemons.h"
#include "inproc.h"
#include "strobed/control.h"

/* Runs the command (words separated by single spaces) on d: its reply
 * text, or "error: <code>: <message>" (static buffer). */
static const char *ctl(struct strobe__daemon *d, const char *command)
{
    static char result[4096];
    char buf[1024], *words[64], *save;
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", command);
    for (char *w = strtok_r(buf, " ", &save); w && n < 64; w = strtok_r(NULL, " ", &save))
        words[n++] = w;
    char *text, err[1024] = "";
    int rc = strobe__control_run(d, words, n, &text, err, sizeof err);
    if (rc < 0) {
        CHECK(text == NULL);
        snprintf(result, sizeof result, "error: %d: %s", rc, err);
    } else {
        snprintf(result, sizeof result, "%s", text);
        free(text);
    }
    return result;
}

static uint64_t value_of(struct strobe__daemon *d, const char *set, const char *metric)
{
    struct strobe__set_entry *e = strobe__daemon_set_find(d, set);
    if (!e)
        STROBE_FAIL("no set %s", set);
    int k = strobe_set_metric_index(e->set, metric);
    CHECK(k >= 0);
    return strobe_set_get_u64(e->set, (uint32_t)k, 0);
}

static const char base_status[] = "sampler synthetic plugin=synthetic interval=1s offset=0 sets=1\n";

/* A sampler added at runtime publishes its set and samples with the
 * others; removed, its set is gone. A transform added consumes it. */
STROBE_TEST(sampler_and_transform_add_remove)
{
    struct strobe__daemon *d =
        inproc_daemon("daemon:\n  producer: n1\nsamplers:\n  - plugin: synthetic\n", "test.yaml");
    CHECK_STR_EQ(ctl(d, "status"), base_status);
    CHECK_STR_EQ(ctl(d, "sampler add two synthetic instance=n1/two interval=250ms offset=50ms metrics=2"),
                 "sampler two added\n");
    struct strobe__set_entry *e = strobe__daemon_set_find(d, "n1/two");
    CHECK(e != NULL);
    CHECK(e->flags & STROBE_SET_PUBLISH);
    CHECK_STR_EQ(ctl(d, "transform add d delta input=n1/two"), "transform d added\n");
    CHECK_STR_EQ(ctl(d, "status"), "sampler synthetic plugin=synthetic interval=1s offset=0 sets=1\n"
                                   "sampler two plugin=synthetic interval=250ms offset=50ms sets=1\n"
                                   "transform d plugin=delta sets=0\n");
    for (int i = 0; i < 3; i++)
        strobe__daemon_sample_all(d, strobe__wall_ns());
    CHECK_EQ_U64(value_of(d, "n1/two", "m1"), 6);       /* base + k*(i+1), k = 3 */
    CHECK_EQ_U64(value_of(d, "n1/synthetic", "m0"), 3); /* sampled alike */
    CHECK_EQ_U64(value_of(d, "n1/two_delta", "m1"), 2);
    CHECK_STR_EQ(ctl(d, "transform remove d"), "transform d removed\n");
    CHECK(strobe__daemon_set_find(d, "n1/two_delta") == NULL);
    CHECK_STR_EQ(ctl(d, "sampler interval two 100ms"), "sampler two: interval 100ms\n");
    CHECK_STR_EQ(ctl(d, "status"), "sampler synthetic plugin=synthetic interval=1s offset=0 sets=1\n"
                                   "sampler two plugin=synthetic interval=100ms offset=50ms sets=1\n");
    CHECK_STR_EQ(ctl(d, "sampler remove two"), "sampler two removed\n");
    CHECK(strobe__daemon_set_find(d, "n1/two") == NULL);
    CHECK_STR_EQ(ctl(d, "status"), base_status);
    /* the configured sampler can go too, and its name be used again */
    CHECK_STR_EQ(ctl(d, "sampler remove synthetic"), "sampler synthetic removed\n");
    CHECK_STR_EQ(ctl(d, "status"), "");
    CHECK_STR_EQ(ctl(d, "sampler add synthetic synthetic"), "sampler synthetic added\n");
    CHECK_STR_EQ(ctl(d, "status"), base_status);
    strobe__daemon_free(d);
}

/* A csv store added at runtime writes the rows of the samples after it;
 * removed, what it buffered is on disk. */
STROBE_TEST(store_add_remove)
{
    const char *dir = strobe_test_tmpdir("ctl_store");
    struct strobe__daemon *d =
        inproc_daemon("daemon:\n  producer: n1\nsamplers:\n  - plugin: synthetic\n", "test.yaml");
    strobe__daemon_sample_all(d, strobe__wall_ns()); /* before the store: not written */
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "store add rows csv path=%s flush_interval=1h", dir);
    CHECK_STR_EQ(ctl(d, cmd), "store rows added\n");
    CHECK_STR_EQ(ctl(d, "status"), "sampler synthetic plugin=synthetic interval=1s offset=0 sets=1\n"
                                   "store rows plugin=csv flush_interval=1h sets=0\n");
    for (int i = 0; i < 4; i++)
        strobe__daemon_sample_all(d, strobe__wall_ns());
    char *out;
    /* flush_interval 1h and no flush yet: the rows are still buffered */
    strobe_test_sh(&out, "grep -vc '^#' '%s/synthetic.csv' 2>/dev/null || true", dir);
    CHECK_STR_EQ(out, "0\n");
    free(out);
    CHECK_STR_EQ(ctl(d, "store interval rows 2s"), "store rows: interval 2s\n");
    CHECK_STR_EQ(ctl(d, "store remove rows"), "store rows removed\n");
    strobe_test_sh(&out, "grep -v '^#' '%s/synthetic.csv' | cut -d, -f2-5", dir);
    CHECK_STR_EQ(out, "n1,n1/synthetic,0,2\nn1,n1/synthetic,0,3\nn1,n1/synthetic,0,4\nn1,n1/synthetic,0,5\n");
    free(out);
    CHECK_STR_EQ(ctl(d, "status"), base_status);
    strobe__daemon_free(d);
}

/* Refused commands: the configuration file's checks and messages, a
 * non-zero code, and the daemon as it was. */
STROBE_TEST(refused_commands_change_nothing)
{
    struct strobe__daemon *d = inproc_daemon("daemon:\n  producer: n1\nsamplers:\n  - plugin: synthetic\n"
                                             "  - plugin: synthetic\n    name: off\n    instance: n1/off\n"
                                             "    offset: 300ms\n",
                                             "test.yaml");
    char before[4096];
    snprintf(before, sizeof before, "%s", ctl(d, "status"));
    CHECK_STR_EQ(before, "sampler synthetic plugin=synthetic interval=1s offset=0 sets=1\n"
                         "sampler off plugin=synthetic interval=1s offset=300ms sets=1\n");
    static const struct {
        const char *cmd, *want;
    } cases[] = {
        {"",
         "error: -1003: expected status, or KIND add|remove|interval ... with KIND sampler, transform, store "
         "or producer"},
        {"frobnicate", "error: -1003: expected status, or KIND add|remove|interval ... with KIND sampler, "
                       "transform, store or producer"},
        {"status now", "error: -1003: expected status, or KIND add|remove|interval ... with KIND sampler, "
                       "transform, store or producer"},
        {"sampler start x", "error: -1003: sampler: unknown action 'start' (add, remove or interval)"},
        {"sampler add x", "error: -1003: usage: sampler add NAME PLUGIN [KEY=VALUE...]"},
        {"producer add p", "error: -1003: usage: producer add NAME HOST:PORT [KEY=VALUE...]"},
        {"sampler remove", "error: -1003: usage: sampler remove NAME"},
        {"sampler interval synthetic", "error: -1003: usage: sampler interval NAME DURATION"},
        {"sampler add s synthetic oops", "error: -1003: 'oops' is not KEY=VALUE"},
        {"sampler add s synthetic =1", "error: -1003: '=1' is not KEY=VALUE"},
        {"sampler add s synthetic name=t", "error: -1003: name: given twice"},
        {"sampler add synthetic synthetic",
         "error: -1003: name: a second instance named 'synthetic' (give each a distinct 'name')"},
        {"sampler add s synthetic instance=n1/s interval=1ns",
         "error: -1003: interval: '1ns' is below the minimum interval of 1ms"},
        {"sampler add s synthetic instance=n1/s interval=soon",
         "error: -1003: interval: 'soon' is not a positive duration"},
        {"sampler add s synthetic instance=n1/s interval=1s offset=1s",
         "error: -1003: offset: '1s' is not a duration below the interval"},
        {"sampler add s synthetic instance=n1/s colour=red",
         "error: -1003: colour: unknown key for plugin synthetic"},
        {"sampler add s synthetic instance=n1/s metrics=0",
         "error: -1003: s: metrics: must be between 1 and 10000"},
        {"sampler add s csv path=/tmp",
         "error: -1003: plugin: 'csv' is a store plugin, listed under samplers"},
        {"store add c csv", "error: -1003: c: `path` (the output directory) is required"},
        {"store add c csv path=/tmp flush_interval=0.5ms",
         "error: -1003: flush_interval: '0.5ms' is below the minimum interval of 1ms"},
        {"sampler remove nosuch", "error: -2: no sampler named 'nosuch'"},
        {"store remove synthetic", "error: -2: no store named 'synthetic'"},
        {"sampler interval nosuch 1s", "error: -2: no sampler named 'nosuch'"},
        {"sampler interval synthetic 0.5ms",
         "error: -1003: interval: '0.5ms' is below the minimum interval of 1ms"},
        {"sampler interval off 300ms", "error: -1003: offset: '300ms' is not a duration below the interval"},
        {"transform interval x 1s",
         "error: -1003: a transform has no interval (it runs on every update of its inputs)"},
        {"producer add p 127.0.0.1:99999",
         "error: -1003: producers: address: '127.0.0.1:99999' has no port from 1 to 65535"},
        {"producer add p node1", "error: -1003: producers: address: 'node1' is not host:port"},
        {"producer add p 127.0.0.1:1 interval=1ns",
         "error: -1003: producers: interval: '1ns' is below the minimum interval of 1ms"},
        {"producer add p 127.0.0.1:1 mode=poll", "error: -1003: producers: mode: 'poll' is not pull or push"},
        {"producer add p 127.0.0.1:1 colour=red",
         "error: -1003: producers: colour: 'colour' is not a producer key"},
        {"producer remove p", "error: -2: no producer named 'p'"},
        {"producer interval p 1s", "error: -2: no producer named 'p'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_STR_EQ(ctl(d, cases[i].cmd), cases[i].want);
        CHECK_STR_EQ(ctl(d, "status"), before);
    }
    /* the set of the instance refused after open() (unknown key) is gone */
    CHECK(strobe__daemon_set_find(d, "n1/s") == NULL);
    strobe__daemon_free(d);
}

/* Producers by name: `name` in the file (default: the address), unique;
 * added, re-timed and removed at runtime (the daemon is not started:
 * no thread pulls). */
STROBE_TEST(producer_names)
{
    CHECK_STR_EQ(inproc_refusal("producers:\n  - address: 127.0.0.1:1\n  - address: 127.0.0.1:1\n", "p.yaml"),
                 "p.yaml:3: producers: address: '127.0.0.1:1' names a second producer (give each a distinct "
                 "'name')");
    CHECK_STR_EQ(inproc_refusal("producers:\n  - address: 127.0.0.1:1\n    name: a\n"
                                "  - address: 127.0.0.1:2\n    name: a\n",
                                "p.yaml"),
                 "p.yaml:5: producers: name: 'a' names a second producer (give each a distinct 'name')");
    struct strobe__daemon *d = inproc_daemon("producers:\n  - address: 127.0.0.1:1\n    name: a\n"
                                             "  - address: 127.0.0.1:1\n    name: b\n    timeout: 3s\n",
                                             "p.yaml");
    CHECK_STR_EQ(ctl(d, "status"), "producer a address=127.0.0.1:1 interval=1s mode=pull down sets=0\n"
                                   "producer b address=127.0.0.1:1 interval=1s mode=pull down sets=0\n");
    CHECK_STR_EQ(ctl(d, "producer add b 127.0.0.1:2"),
                 "error: -1003: producers: name: 'b' names a second producer (give each a distinct 'name')");
    CHECK_STR_EQ(ctl(d, "producer add c 127.0.0.1:2 mode=push interval=250ms"), "producer c added\n");
    CHECK_STR_EQ(ctl(d, "producer interval b 2m"), "producer b: interval 2m\n");
    CHECK_STR_EQ(ctl(d, "producer interval b 1ns"),
                 "error: -1003: producers: interval: '1ns' is below the minimum interval of 1ms");
    CHECK_STR_EQ(ctl(d, "producer remove a"), "producer a removed\n");
    CHECK_STR_EQ(ctl(d, "status"), "producer b address=127.0.0.1:1 interval=2m mode=pull down sets=0\n"
                                   "producer c address=127.0.0.1:2 interval=250ms mode=push down sets=0\n");
    strobe__daemon_free(d);
}

/* ---- real daemons ------------------------------------------------------------- */

/* Runs `strobe ctl [--secret-file secret] 127.0.0.1:port command`; its
 * output in *out (free it), its exit status returned. */
static int ctl_sh(char **out, const char *secret, int port, const char *command)
{
    char opt[4200] = "";
    if (secret)
        snprintf(opt, sizeof opt, "--secret-file '%s' ", secret);
    /* under TSan a process that started threads sleeps 1 s at exit */
    return strobe_test_sh(out,
                          "TSAN_OPTIONS=\"${TSAN_OPTIONS:+$TSAN_OPTIONS:}atexit_sleep_ms=0\" "
                          "'%s/strobe' ctl %s127.0.0.1:%d %s",
                          STROBE_BIN_DIR, opt, port, command);
}

static void ctl_ok(const char *secret, int port, const char *command, const char *want)
{
    char *out;
    int st = ctl_sh(&out, secret, port, command);
    if (st != 0 || strcmp(out, want) != 0)
        STROBE_FAIL("strobe ctl %s: status %d, output:\n%s\nexpected:\n%s", command, st, out, want);
    free(out);
}

static void ctl_refused(const char *secret, int port, const char *command, const char *want)
{
    char *out;
    CHECK_EQ_INT(ctl_sh(&out, secret, port, command), 1);
    CHECK_STR_EQ(out, want);
    free(out);
}

/* `strobe ls` of a daemon, one name per line ("" when it fails). */
static char *listing(const char *secret, int port)
{
    char *out;
    if (strobe_test_sh(&out, "'%s/strobe' ls --secret-file '%s' 127.0.0.1:%d", STROBE_BIN_DIR, secret,
                       port) != 0)
        out[0] = 0;
    return out;
}

/* Waits up to ms for `strobe ls` to print want. */
static void wait_listing(const char *secret, int port, const char *want, long ms)
{
    char *out = NULL;
    for (long t = 0; t <= ms; t += 100, sleep_ms(100)) {
        free(out);
        out = listing(secret, port);
        if (strcmp(out, want) == 0) {
            free(out);
            return;
        }
    }
    STROBE_FAIL("port %d lists:\n%s\nexpected after %ld ms:\n%s", port, out, ms, want);
}

/* m0 of set at port (the samples taken), -1 when not there */
/* A fresh scratch directory for a case (dir, 4096 bytes) with a shared
 * secret in dir/secret (its path in secret, 4200 bytes). */
static void scratch(const char *name, char *dir, char *secret)
{
    snprintf(dir, 4096, "%s", strobe_test_tmpdir(name));
    snprintf(secret, 4200, "%s/secret", dir);
    write_private(secret, "a shared secret\n");
}

/* Starts strobed `name` (also its producer name) listening on port, with
 * secret_file when secret is given, and the sections in `rest`. */
static pid_t start_node(const char *dir, const char *name, int port, const char *secret, const char *rest)
{
    char y[8192], sf[4300] = "";
    if (secret)
        snprintf(sf, sizeof sf, "  secret_file: %s\n", secret);
    snprintf(y, sizeof y, "daemon:\n  producer: %s\n  listen: 127.0.0.1:%d\n%s%s", name, port, sf, rest);
    return start_daemon(dir, name, y);
}

static long long m0_of(int port, const char *set)
{
    return served_value(port, "a shared secret", set, "m0", NULL);
}

/* The samples set took during window_ms fit interval_ms: at most one per
 * interval over the whole time the two reads spanned (plus the grid's
 * rounding), at least half of those fitting between them (a loaded
 * machine delays ticks; it does not take them twice). */
static void check_rate(int port, const char *set, long interval_ms, long window_ms)
{
    double t0 = (double)strobe__wall_ns() / 1e6;
    long long a = m0_of(port, set);
    double t1 = (double)strobe__wall_ns() / 1e6;
    sleep_ms(window_ms);
    double t2 = (double)strobe__wall_ns() / 1e6;
    long long b = m0_of(port, set);
    double t3 = (double)strobe__wall_ns() / 1e6;
    long long most = (long long)((t3 - t0) / (double)interval_ms) + 2;
    long long least = (long long)((t2 - t1) / (double)interval_ms / 2);
    if (a < 0 || b - a < least || b - a > most)
        STROBE_FAIL("%s at %ld ms: %lld samples in %.0f ms (from %lld), expected %lld to %lld", set,
                    interval_ms, b - a, t2 - t1, a, least, most);
}

/* Through the network: a sampler added makes its set appear in `strobe
 * ls` and removed disappear, its interval changes the sampling rate, a
 * csv store added writes rows; a refused command leaves status as it was. */
STROBE_TEST(runtime_add_remove)
{
    char dir[4096], secret[4200], cmd[8400], want[8400];
    scratch("ctl_run", dir, secret);
    int port = test_port(0);
    pid_t p = start_node(dir, "n1", port, secret, "samplers:\n  - plugin: synthetic\n    interval: 1s\n");
    wait_listing(secret, port, "n1/synthetic\n", 5000);

    ctl_ok(secret, port, "sampler add fast synthetic instance=n1/fast interval=100ms",
           "sampler fast added\n");
    wait_listing(secret, port, "n1/fast\nn1/synthetic\n", 3000);
    /* 100 ms: about 10 samples a second; then 500 ms: about 4 in 2 s,
     * where 100 ms would have taken 20 */
    check_rate(port, "n1/fast", 100, 1000);
    ctl_ok(secret, port, "sampler interval fast 500ms", "sampler fast: interval 500ms\n");
    check_rate(port, "n1/fast", 500, 2000);

    snprintf(cmd, sizeof cmd, "store add rows csv path=%s/csv sets=n1/fast flush_interval=100ms", dir);
    ctl_ok(secret, port, cmd, "store rows added\n");
    char *out = NULL;
    for (int t = 0; t < 50; t++, sleep_ms(100)) {
        free(out);
        strobe_test_sh(&out, "grep -c '^[0-9].*,n1,n1/fast,' '%s/csv/synthetic.csv' 2>/dev/null || true",
                       dir);
        if (atoi(out) >= 2)
            break;
    }
    if (atoi(out) < 2)
        STROBE_FAIL("rows of n1/fast after 5 s: %s", out);
    free(out);

    char status[4096];
    CHECK_EQ_INT(ctl_sh(&out, secret, port, "status"), 0);
    snprintf(status, sizeof status, "%s", out);
    free(out);
    CHECK_STR_EQ(status, "sampler synthetic plugin=synthetic interval=1s offset=0 sets=1\n"
                         "sampler fast plugin=synthetic interval=500ms offset=0 sets=1\n"
                         "store rows plugin=csv flush_interval=100ms sets=0\n");
    snprintf(want, sizeof want, "strobe: ctl: 127.0.0.1:%d: no sampler named 'slow'\n", port);
    ctl_refused(secret, port, "sampler remove slow", want);
    snprintf(want, sizeof want,
             "strobe: ctl: 127.0.0.1:%d: interval: '1ns' is below the minimum interval of 1ms\n", port);
    ctl_refused(secret, port, "sampler add slow synthetic instance=n1/slow interval=1ns", want);
    snprintf(want, sizeof want, "strobe: ctl: 127.0.0.1:%d: fast2: metrics: must be between 1 and 10000\n",
             port);
    ctl_refused(secret, port, "sampler add fast2 synthetic instance=n1/x metrics=0", want);
    ctl_ok(secret, port, "status", status);

    char *usage;
    CHECK_EQ_INT(ctl_sh(&usage, secret, port, ""), 2);
    CHECK_STR_EQ(usage, "strobe: ctl: which command? e.g. status (see 'strobe ctl --help')\n");
    free(usage);
    ctl_ok(secret, port, "store remove rows", "store rows removed\n");
    ctl_ok(secret, port, "sampler remove fast", "sampler fast removed\n");
    wait_listing(secret, port, "n1/synthetic\n", 3000);
    stop_clean(p, dir, "n1");
}

/* Control needs the secret: refused by a daemon without one, to a client
 * without it, and to one with another secret. */
STROBE_TEST(control_needs_the_secret)
{
    char dir[4096], secret[4200], other[4200], want[512];
    scratch("ctl_auth", dir, secret);
    snprintf(other, sizeof other, "%s/other", dir);
    write_private(other, "another secret\n");
    int open_port = test_port(0), port = test_port(1);
    pid_t p1 = start_node(dir, "open", open_port, NULL, "samplers:\n  - plugin: synthetic\n");
    pid_t p2 = start_node(dir, "closed", port, secret, "samplers:\n  - plugin: synthetic\n");
    wait_listing(secret, port, "closed/synthetic\n", 5000);
    for (int t = 0; t < 50 && served_value(open_port, NULL, "open/synthetic", "m0", NULL) < 0; t++)
        sleep_ms(100);

    snprintf(want, sizeof want,
             "strobe: ctl: 127.0.0.1:%d: runtime control needs a shared secret (daemon: secret_file)\n",
             open_port);
    ctl_refused(NULL, open_port, "sampler remove synthetic", want);
    snprintf(want, sizeof want, "strobe: ctl: 127.0.0.1:%d requires a shared secret (--secret-file)\n", port);
    ctl_refused(NULL, port, "sampler remove synthetic", want);
    snprintf(want, sizeof want, "strobe: ctl: 127.0.0.1:%d did not prove it knows the secret\n", port);
    ctl_refused(other, port, "sampler remove synthetic", want);
    /* nothing was removed */
    CHECK(served_value(open_port, NULL, "open/synthetic", "m0", NULL) >= 0);
    wait_listing(secret, port, "closed/synthetic\n", 0);
    CHECK_EQ_INT(
        strobe_test_sh(NULL, "grep -q 'refused a control request: no shared secret' '%s/open.log'", dir), 0);
    stop_clean(p1, dir, "open");
    stop_clean(p2, dir, "closed");
}

/* An aggregator given a producer at runtime mirrors its sets, keeps them
 * through an interval change, and drops them when the producer is removed. */
STROBE_TEST(producer_add_remove)
{
    char dir[4096], secret[4200], cmd[256], want[512];
    scratch("ctl_agg", dir, secret);
    int p1 = test_port(0), pa = test_port(1);
    pid_t d1 = start_node(dir, "n1", p1, secret, "samplers:\n  - plugin: synthetic\n    interval: 100ms\n");
    pid_t da = start_node(dir, "agg", pa, secret, "");
    wait_listing(secret, p1, "n1/synthetic\n", 5000);
    wait_listing(secret, pa, "", 5000);

    snprintf(cmd, sizeof cmd, "producer add n1 127.0.0.1:%d interval=100ms", p1);
    ctl_ok(secret, pa, cmd, "producer n1 added\n");
    wait_listing(secret, pa, "n1/synthetic\n", 3000);
    ctl_ok(secret, pa, "producer interval n1 200ms", "producer n1: interval 200ms\n");
    /* still mirrored, and still updated */
    long long a = m0_of(pa, "n1/synthetic");
    sleep_ms(1000);
    long long b = m0_of(pa, "n1/synthetic");
    if (a < 0 || b <= a)
        STROBE_FAIL("after the interval change the mirror went from %lld to %lld", a, b);
    char *out;
    CHECK_EQ_INT(ctl_sh(&out, secret, pa, "status"), 0);
    snprintf(want, sizeof want, "producer n1 address=127.0.0.1:%d interval=200ms mode=pull up sets=1\n", p1);
    CHECK_STR_EQ(out, want);
    free(out);
    snprintf(want, sizeof want, "strobe: ctl: 127.0.0.1:%d: no producer named 'n2'\n", pa);
    ctl_refused(secret, pa, "producer remove n2", want);
    ctl_ok(secret, pa, "producer remove n1", "producer n1 removed\n");
    wait_listing(secret, pa, "", 0);
    ctl_ok(secret, pa, "status", "");
    stop_clean(da, dir, "agg");
    stop_clean(d1, dir, "n1");
}

/* Churn while every thread runs: samplers at 10 ms added and removed on
 * a node, the aggregator's push-mode producer (a request held by the
 * node) re-timed, removed and added again, a store on the aggregator
 * added and removed. Under TSan a data race fails the daemons' exit
 * status; afterwards both serve what they should. */
STROBE_TEST(churn_under_load)
{
    char dir[4096], secret[4200], cmd[4400];
    scratch("ctl_churn", dir, secret);
    int p1 = test_port(0), pa = test_port(1);
    pid_t d1 = start_node(dir, "n1", p1, secret, "samplers:\n  - plugin: synthetic\n    interval: 10ms\n");
    pid_t da = start_node(dir, "agg", pa, secret, "");
    wait_listing(secret, p1, "n1/synthetic\n", 5000);
    snprintf(cmd, sizeof cmd, "producer add n1 127.0.0.1:%d mode=push interval=1s", p1);
    ctl_ok(secret, pa, cmd, "producer n1 added\n");
    wait_listing(secret, pa, "n1/synthetic\n", 3000);
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 3; i++) {
            char add[256], want[64];
            snprintf(add, sizeof add, "sampler add x%d synthetic instance=n1/x%d interval=10ms", i, i);
            snprintf(want, sizeof want, "sampler x%d added\n", i);
            ctl_ok(secret, p1, add, want);
        }
        snprintf(cmd, sizeof cmd, "store add rows csv path=%s/csv%d", dir, round);
        ctl_ok(secret, pa, cmd, "store rows added\n");
        ctl_ok(secret, pa, round % 2 ? "producer interval n1 1s" : "producer interval n1 500ms",
               round % 2 ? "producer n1: interval 1s\n" : "producer n1: interval 500ms\n");
        for (int i = 0; i < 3; i++) {
            char rm[64], want[64];
            snprintf(rm, sizeof rm, "sampler remove x%d", i);
            snprintf(want, sizeof want, "sampler x%d removed\n", i);
            ctl_ok(secret, p1, rm, want);
        }
        ctl_ok(secret, pa, "store remove rows", "store rows removed\n");
        ctl_ok(secret, pa, "producer remove n1", "producer n1 removed\n");
        snprintf(cmd, sizeof cmd, "producer add n1 127.0.0.1:%d mode=push interval=1s", p1);
        ctl_ok(secret, pa, cmd, "producer n1 added\n");
    }
    wait_listing(secret, p1, "n1/synthetic\n", 0);
    wait_listing(secret, pa, "n1/synthetic\n", 3000);
    stop_clean(da, dir, "agg");
    stop_clean(d1, dir, "n1");
}

STROBE_TEST_MAIN(STROBE_CASE(sampler_and_transform_add_remove), STROBE_CASE(store_add_remove),
                 STROBE_CASE(refused_commands_change_nothing), STROBE_CASE(producer_names),
                 STROBE_CASE(runtime_add_remove), STROBE_CASE(control_needs_the_secret),
                 STROBE_CASE(producer_add_remove), STROBE_CASE(churn_under_load))
