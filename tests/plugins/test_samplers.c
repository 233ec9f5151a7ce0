/* SPDX-License-Identifier: MIT */
/*
 * The procstat and procnetdev samplers, run in an in-process daemon built
 * from YAML text: exact values against the fixture files in
 * tests/plugins/fixtures (copied to a scratch directory and rewritten in
 * place, as the kernel does, to model a CPU going offline and an interface
 * going away), and a plausibility check against the real /proc files.
 */
#include <unistd.h>

#include "strobed/config.h"
#include "strobed/daemon.h"
#include "strobed/inproc.h"
#include "test.h"

#define FIXTURES STROBE_SOURCE_DIR "/tests/plugins/fixtures"

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        STROBE_FAIL("cannot open %s", path);
    char *buf = malloc(1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* Rewrites path in place (same inode: the sampler keeps it open). */
static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        STROBE_FAIL("cannot write %s", path);
}

static void install_fixture(const char *fixture, const char *to)
{
    char from[4096];
    snprintf(from, sizeof from, "%s/%s", FIXTURES, fixture);
    char *t = read_text(from);
    write_text(to, t);
    free(t);
}

static struct strobe__daemon *daemon_from(const char *yaml)
{
    return inproc_daemon(yaml, "test.yaml");
}

/* Expect configuration text to be refused, with `what` in the message. */
static void daemon_refuses(const char *yaml, const char *what)
{
    CHECK_CONTAINS(inproc_refusal(yaml, "test.yaml"), what);
}

static strobe_set *find_set(struct strobe__daemon *d, const char *instance)
{
    pthread_mutex_lock(&d->lock);
    struct strobe__set_entry *e = strobe__daemon_set_find(d, instance);
    pthread_mutex_unlock(&d->lock);
    if (!e)
        STROBE_FAIL("no set %s", instance);
    return e->set;
}

static int metric(const strobe_set *set, const char *name)
{
    int i = strobe_set_metric_index(set, name);
    if (i < 0)
        STROBE_FAIL("no metric %s in %s", name, strobe_set_instance(set));
    return i;
}

static uint64_t get(const strobe_set *set, const char *name, uint32_t j)
{
    int i = metric(set, name);
    if (!strobe_set_is_valid(set, (uint32_t)i))
        STROBE_FAIL("%s is invalid", name);
    return strobe_set_get_u64(set, (uint32_t)i, j);
}

static int valid(const strobe_set *set, const char *name)
{
    return strobe_set_is_valid(set, (uint32_t)metric(set, name));
}

static const char *const fields[10] = {"user", "nice",    "system", "idle",  "iowait",
                                       "irq",  "softirq", "steal",  "guest", "guest_nice"};

static void check_cpu(const strobe_set *set, uint32_t slot, const uint64_t want[10])
{
    for (int f = 0; f < 10; f++)
        if (get(set, fields[f], slot) != want[f])
            STROBE_FAIL("%s[%u] = %" PRIu64 ", expected %" PRIu64, fields[f], slot, get(set, fields[f], slot),
                        want[f]);
}

STROBE_TEST(procstat_fixture)
{
    const char *dir = strobe_test_tmpdir("procstat_fixture");
    char path[4200], yaml[8400];
    snprintf(path, sizeof path, "%s/stat", dir);
    install_fixture("stat_2cpu", path);
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: node1}\n"
             "samplers:\n"
             "  - plugin: procstat\n"
             "    path: %s\n"
             "    component_id: 12\n",
             path);
    struct strobe__daemon *d = daemon_from(yaml);
    strobe_set *set = find_set(d, "node1/procstat");
    CHECK_STR_EQ(strobe_set_schema_name(set), "procstat");
    CHECK_EQ_INT(strobe_set_metric_count(set, (uint32_t)metric(set, "user")), 3);
    CHECK_EQ_INT(strobe_set_metric_count(set, (uint32_t)metric(set, "cpu_online")), 3);
    CHECK_STR_EQ(strobe_set_metric_unit(set, (uint32_t)metric(set, "idle")), "ticks");
    CHECK_EQ_U64(get(set, "component_id", 0), 12);
    /* counts since boot are counters (Prometheus type counter), the rest not */
    static const char *const counters[] = {"user", "idle", "intr", "ctxt", "processes"};
    static const char *const gauges[] = {"cpu_online", "btime", "procs_running", "procs_blocked"};
    for (size_t k = 0; k < 5; k++)
        CHECK(strobe_set_metric_flags(set, (uint32_t)metric(set, counters[k])) & STROBE_METRIC_COUNTER);
    for (size_t k = 0; k < 4; k++)
        CHECK(!(strobe_set_metric_flags(set, (uint32_t)metric(set, gauges[k])) & STROBE_METRIC_COUNTER));

    strobe__daemon_sample_all(d, 1);
    CHECK(strobe_set_is_consistent(set));
    CHECK_EQ_U64(strobe_set_data_gn(set), 1);
    static const uint64_t total[10] = {1000, 20, 300, 40000, 50, 6, 7, 8, 9, 10};
    static const uint64_t cpu0[10] = {400, 10, 100, 20000, 20, 3, 4, 5, 6, 7};
    static const uint64_t cpu1[10] = {600, 10, 200, 20000, 30, 3, 3, 3, 3, 3};
    check_cpu(set, 0, total);
    check_cpu(set, 1, cpu0);
    check_cpu(set, 2, cpu1);
    for (uint32_t k = 0; k < 3; k++)
        CHECK_EQ_U64(get(set, "cpu_online", k), 1);
    CHECK_EQ_U64(get(set, "intr", 0), 123456);
    CHECK_EQ_U64(get(set, "ctxt", 0), 987654);
    CHECK_EQ_U64(get(set, "btime", 0), 1700000000);
    CHECK_EQ_U64(get(set, "processes", 0), 4321);
    CHECK_EQ_U64(get(set, "procs_running", 0), 3);
    CHECK_EQ_U64(get(set, "procs_blocked", 0), 1);

    /* cpu1 goes offline: its line disappears */
    install_fixture("stat_cpu1_offline", path);
    strobe__daemon_sample_all(d, 2);
    CHECK_EQ_U64(strobe_set_data_gn(set), 2);
    static const uint64_t total2[10] = {1100, 21, 350, 40500, 51, 7, 8, 9, 10, 11};
    static const uint64_t cpu0b[10] = {500, 11, 150, 20500, 21, 4, 5, 6, 7, 8};
    static const uint64_t zero[10] = {0};
    check_cpu(set, 0, total2);
    check_cpu(set, 1, cpu0b);
    check_cpu(set, 2, zero);
    CHECK_EQ_U64(get(set, "cpu_online", 0), 1);
    CHECK_EQ_U64(get(set, "cpu_online", 1), 1);
    CHECK_EQ_U64(get(set, "cpu_online", 2), 0);
    CHECK_EQ_U64(get(set, "intr", 0), 130000);
    CHECK_EQ_U64(get(set, "ctxt", 0), 990000);
    CHECK_EQ_U64(get(set, "processes", 0), 4400);
    CHECK_EQ_U64(get(set, "procs_running", 0), 2);
    CHECK_EQ_U64(get(set, "procs_blocked", 0), 0);

    /* and comes back */
    install_fixture("stat_2cpu", path);
    strobe__daemon_sample_all(d, 3);
    check_cpu(set, 2, cpu1);
    CHECK_EQ_U64(get(set, "cpu_online", 2), 1);
    strobe__daemon_free(d);
}

/* An older kernel without steal/guest/guest_nice, a missing scalar line,
 * more CPU slots than lines (the `cpus` key), and a CPU beyond them. */
STROBE_TEST(procstat_short_lines)
{
    const char *dir = strobe_test_tmpdir("procstat_short_lines");
    char path[4200], yaml[8400];
    snprintf(path, sizeof path, "%s/stat", dir);
    write_text(path, "cpu  10 1 2 30 4 5 6\n"
                     "cpu0 10 1 2 30 4 5 6\n"
                     "intr 99\n"
                     "ctxt 7\n"
                     "btime 1600000000\n"
                     "processes 5\n"
                     "procs_running 1\n");
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: node1}\n"
             "samplers:\n"
             "  - {plugin: procstat, path: %s, cpus: 4, instance: node1/stat}\n",
             path);
    struct strobe__daemon *d = daemon_from(yaml);
    strobe_set *set = find_set(d, "node1/stat");
    CHECK_EQ_INT(strobe_set_metric_count(set, (uint32_t)metric(set, "user")), 5);
    strobe__daemon_sample_all(d, 1);
    CHECK_EQ_U64(get(set, "user", 0), 10);
    CHECK_EQ_U64(get(set, "softirq", 1), 6);
    CHECK(!valid(set, "steal"));
    CHECK(!valid(set, "guest"));
    CHECK(!valid(set, "guest_nice"));
    CHECK(!valid(set, "procs_blocked"));
    CHECK_EQ_U64(get(set, "procs_running", 0), 1);
    static const uint64_t online[5] = {1, 1, 0, 0, 0};
    for (uint32_t k = 0; k < 5; k++)
        CHECK_EQ_U64(get(set, "cpu_online", k), online[k]);

    /* cpu9 does not fit the five slots: ignored, the rest still sampled */
    write_text(path, "cpu  1 2 3 4 5 6 7 8 9 10\n"
                     "cpu0 1 2 3 4 5 6 7 8 9 10\n"
                     "cpu9 1 2 3 4 5 6 7 8 9 10\n"
                     "intr 1\nctxt 2\nbtime 3\nprocesses 4\nprocs_running 5\nprocs_blocked 6\n");
    strobe__daemon_sample_all(d, 2);
    CHECK_EQ_U64(get(set, "guest_nice", 0), 10);
    CHECK_EQ_U64(get(set, "guest_nice", 1), 10);
    CHECK_EQ_U64(get(set, "procs_blocked", 0), 6);
    CHECK_EQ_U64(get(set, "cpu_online", 4), 0);
    strobe__daemon_free(d);
}

/* A file larger than the first read buffer (a long intr line, as on
 * machines with many interrupt sources) and lines that are not /proc/stat
 * syntax: the parser grows its buffer and skips what it does not know. */
STROBE_TEST(procstat_big_and_junk)
{
    const char *dir = strobe_test_tmpdir("procstat_big_and_junk");
    char path[4200], yaml[8400];
    snprintf(path, sizeof path, "%s/stat", dir);
    size_t cap = 200000, n = 0;
    char *text = malloc(cap);
    n += (size_t)snprintf(text + n, cap - n,
                          "cpu  1 2 3 4 5 6 7 8 9 10\ncpux 9 9\ncpu0 1 2 3 4 5 6 7 8 9 10\n"
                          "\x01\x02junk\n\ncpu\nintr 77");
    while (n < 150000)
        n += (size_t)snprintf(text + n, cap - n, " 12345");
    n += (size_t)snprintf(text + n, cap - n, "\nctxt 8\nbtime\nprocesses x\nprocs_running 3");
    write_text(path, text);
    free(text);
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: node1}\n"
             "samplers:\n"
             "  - {plugin: procstat, path: %s}\n",
             path);
    struct strobe__daemon *d = daemon_from(yaml);
    strobe_set *set = find_set(d, "node1/procstat");
    CHECK_EQ_INT(strobe_set_metric_count(set, (uint32_t)metric(set, "user")), 2);
    strobe__daemon_sample_all(d, 1);
    CHECK_EQ_U64(get(set, "guest_nice", 0), 10);
    CHECK_EQ_U64(get(set, "system", 1), 3);
    CHECK_EQ_U64(get(set, "intr", 0), 77);
    CHECK_EQ_U64(get(set, "ctxt", 0), 8);
    CHECK_EQ_U64(get(set, "procs_running", 0), 3); /* last line, no newline */
    CHECK(!valid(set, "btime"));
    CHECK(!valid(set, "processes"));
    CHECK(!valid(set, "procs_blocked"));
    strobe__daemon_free(d);
}

STROBE_TEST(procstat_real)
{
    struct strobe__daemon *d = daemon_from("daemon: {producer: node1}\n"
                                           "samplers:\n"
                                           "  - plugin: procstat\n");
    strobe_set *set = find_set(d, "node1/procstat");
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    CHECK(strobe_set_metric_count(set, (uint32_t)metric(set, "user")) >= (uint32_t)conf + 1);
    strobe__daemon_sample_all(d, 1);
    CHECK(get(set, "user", 0) + get(set, "idle", 0) > 0);
    CHECK(get(set, "user", 0) >= get(set, "user", 1));
    CHECK_EQ_U64(get(set, "cpu_online", 0), 1);
    CHECK(get(set, "btime", 0) > 1000000000u);
    CHECK(get(set, "ctxt", 0) > 0);
    CHECK(get(set, "processes", 0) > 0);
    CHECK(get(set, "procs_running", 0) >= 1);
    uint64_t idle = get(set, "idle", 0);
    usleep(20000);
    strobe__daemon_sample_all(d, 2);
    CHECK(get(set, "idle", 0) >= idle);
    strobe__daemon_free(d);
}

static const char *const counters[16] = {
    "rx_bytes", "rx_packets", "rx_errs", "rx_drop", "rx_fifo", "rx_frame", "rx_compressed", "rx_multicast",
    "tx_bytes", "tx_packets", "tx_errs", "tx_drop", "tx_fifo", "tx_colls", "tx_carrier",    "tx_compressed",
};

static uint64_t counter(const strobe_set *set, const char *iface, int k)
{
    char name[128];
    snprintf(name, sizeof name, "%s.%s", iface, counters[k]);
    return get(set, name, 0);
}

static int iface_valid(const strobe_set *set, const char *iface)
{
    int n = 0;
    for (int k = 0; k < 16; k++) {
        char name[128];
        snprintf(name, sizeof name, "%s.%s", iface, counters[k]);
        n += valid(set, name);
    }
    if (n != 0 && n != 16)
        STROBE_FAIL("%s: %d of 16 counters valid", iface, n);
    return n == 16;
}

STROBE_TEST(procnetdev_fixture)
{
    const char *dir = strobe_test_tmpdir("procnetdev_fixture");
    char path[4200], yaml[8400];
    snprintf(path, sizeof path, "%s/dev", dir);
    install_fixture("netdev_eth0_lo", path);
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: node1}\n"
             "samplers:\n"
             "  - {plugin: procnetdev, path: %s}\n",
             path);
    struct strobe__daemon *d = daemon_from(yaml);
    strobe_set *set = find_set(d, "node1/procnetdev");
    /* default: every interface but lo */
    CHECK_EQ_INT(strobe_set_card(set), 1 + 16);
    CHECK(strobe_set_metric_index(set, "lo.rx_bytes") < 0);
    CHECK_STR_EQ(strobe_set_metric_unit(set, (uint32_t)metric(set, "eth0.tx_bytes")), "B");
    CHECK(!iface_valid(set, "eth0")); /* not sampled yet */
    strobe__daemon_sample_all(d, 1);
    static const uint64_t eth0[16] = {UINT64_MAX, 2007, 1, 2, 3, 4, 5, 6, 91601, 1207, 7, 8, 9, 10, 11, 12};
    for (int k = 0; k < 16; k++)
        CHECK_EQ_U64(counter(set, "eth0", k), eth0[k]);

    /* eth0 goes away */
    install_fixture("netdev_lo", path);
    strobe__daemon_sample_all(d, 2);
    CHECK(!iface_valid(set, "eth0"));
    /* and comes back */
    install_fixture("netdev_eth0_lo", path);
    strobe__daemon_sample_all(d, 3);
    CHECK(iface_valid(set, "eth0"));
    CHECK_EQ_U64(counter(set, "eth0", 15), 12);
    strobe__daemon_free(d);
}

STROBE_TEST(procnetdev_listed)
{
    const char *dir = strobe_test_tmpdir("procnetdev_listed");
    char path[4200], yaml[8400];
    snprintf(path, sizeof path, "%s/dev", dir);
    install_fixture("netdev_eth0_lo", path);
    snprintf(yaml, sizeof yaml,
             "daemon: {producer: node1}\n"
             "samplers:\n"
             "  - plugin: procnetdev\n"
             "    path: %s\n"
             "    interfaces: [wlan0, lo, eth0]\n",
             path);
    struct strobe__daemon *d = daemon_from(yaml);
    strobe_set *set = find_set(d, "node1/procnetdev");
    CHECK_EQ_INT(strobe_set_card(set), 1 + 3 * 16);
    /* listed order is the metric order */
    CHECK_EQ_INT(metric(set, "wlan0.rx_bytes"), 1);
    CHECK_EQ_INT(metric(set, "lo.rx_bytes"), 17);
    CHECK_EQ_INT(metric(set, "eth0.tx_compressed"), 48);
    strobe__daemon_sample_all(d, 1);
    CHECK(!iface_valid(set, "wlan0"));
    CHECK(iface_valid(set, "lo"));
    CHECK(iface_valid(set, "eth0"));
    static const uint64_t lo[16] = {46728, 232, 0, 0, 0, 0, 0, 0, 46728, 232, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < 16; k++)
        CHECK_EQ_U64(counter(set, "lo", k), lo[k]);
    CHECK_EQ_U64(counter(set, "eth0", 9), 1207);
    install_fixture("netdev_lo", path);
    strobe__daemon_sample_all(d, 2);
    CHECK(!iface_valid(set, "eth0"));
    CHECK_EQ_U64(counter(set, "lo", 0), 50000);
    CHECK_EQ_U64(counter(set, "lo", 9), 240);
    strobe__daemon_free(d);
}

STROBE_TEST(procnetdev_real)
{
    struct strobe__daemon *d = daemon_from("daemon: {producer: node1}\n"
                                           "samplers:\n"
                                           "  - {plugin: procnetdev, interfaces: lo}\n");
    strobe_set *set = find_set(d, "node1/procnetdev");
    strobe__daemon_sample_all(d, 1);
    CHECK(iface_valid(set, "lo"));
    /* packets carry at least as many bytes as there are packets */
    CHECK(counter(set, "lo", 0) >= counter(set, "lo", 1));
    strobe__daemon_free(d);

    /* the default list: every interface there but lo */
    d = daemon_from("daemon: {producer: node1}\nsamplers:\n  - plugin: procnetdev\n");
    set = find_set(d, "node1/procnetdev");
    strobe__daemon_sample_all(d, 1);
    CHECK(strobe_set_metric_index(set, "lo.rx_bytes") < 0);
    for (uint32_t i = 1; i < strobe_set_card(set); i++)
        CHECK(strobe_set_is_valid(set, i));
    strobe__daemon_free(d);
}

STROBE_TEST(config_errors)
{
    char yaml[8192];
    snprintf(yaml, sizeof yaml, "samplers:\n  - {plugin: procstat, path: %s/stat_2cpu, pth: x}\n", FIXTURES);
    daemon_refuses(yaml, "pth: unknown key for plugin procstat");
    daemon_refuses("samplers:\n  - {plugin: procstat, path: /nonexistent/stat}\n", "cannot start");
    snprintf(yaml, sizeof yaml,
             "samplers:\n  - {plugin: procnetdev, path: %s/netdev_lo, interfaces: [lo, lo]}\n", FIXTURES);
    daemon_refuses(yaml, "test.yaml:2: procnetdev: interfaces: 'lo' is listed twice");
    snprintf(yaml, sizeof yaml,
             "samplers:\n  - {plugin: procnetdev, path: %s/netdev_lo, interfaces: ['a:b']}\n", FIXTURES);
    daemon_refuses(yaml, "test.yaml:2: procnetdev: interfaces: 'a:b' is not an interface name");
}

STROBE_TEST_MAIN(STROBE_CASE(procstat_fixture), STROBE_CASE(procstat_short_lines),
                 STROBE_CASE(procstat_big_and_junk), STROBE_CASE(procstat_real),
                 STROBE_CASE(procnetdev_fixture), STROBE_CASE(procnetdev_listed),
                 STROBE_CASE(procnetdev_real), STROBE_CASE(config_errors))
