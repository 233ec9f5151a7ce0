/* SPDX-License-Identifier: MIT */
/*
 * The csv store, run in an in-process daemon built from YAML text. The
 * tests make sets with the set API, register and update them the way a
 * sampler would (under d->lock), flush, and compare the files byte for
 * byte with the format in docs/plugins.md: header, number formats, empty
 * fields for invalid values, RFC 4180 quoting, rolling by size and by
 * time, the checksum-suffixed file for a clashing schema, filters, and a
 * disk that is full.
 */
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include "plugins/store_sets.h"
#include "strobed/config.h"
#include "strobed/daemon.h"
#include "test.h"

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

static void check_file(const char *dir, const char *name, const char *want)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *got = read_text(path);
    if (strcmp(got, want) != 0)
        STROBE_FAIL("%s:\n--- got\n%s--- expected\n%s---", path, got, want);
    free(got);
}

/* Number of entries in dir (to see no stray files were made). */
static int count_files(const char *dir)
{
    char *out;
    CHECK(strobe_test_sh(&out, "ls -A '%s' | wc -l", dir) == 0);
    int n = atoi(out);
    free(out);
    return n;
}

#define SEC 1000000000ull

STROBE_TEST(all_types)
{
    const char *dir = strobe_test_tmpdir("all_types");
    struct strobe__daemon *d =
        daemon_from("daemon: {producer: node1}\nstores:\n  - {plugin: csv, path: %s}\n", dir);
    strobe_schema *sc;
    strobe_set *set;
    CHECK(strobe_schema_new("t", &sc) == 0);
    CHECK(strobe_schema_add(sc, "component_id", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META) == 0);
    CHECK(strobe_schema_add(sc, "a", NULL, STROBE_MT_U64, 1, 0) == 1);
    CHECK(strobe_schema_add(sc, "b", NULL, STROBE_MT_S32, 1, 0) == 2);
    CHECK(strobe_schema_add(sc, "c", NULL, STROBE_MT_D64, 1, 0) == 3);
    CHECK(strobe_schema_add(sc, "arr", NULL, STROBE_MT_U16, 3, STROBE_METRIC_ARRAY) == 4);
    CHECK(strobe_schema_add(sc, "name", NULL, STROBE_MT_CHAR, 8, 0) == 5);
    CHECK(strobe_schema_add(sc, "odd,name", NULL, STROBE_MT_S64, 1, 0) == 6);
    CHECK(strobe_schema_add(sc, "one", NULL, STROBE_MT_F32, 1, STROBE_METRIC_ARRAY) == 7);
    CHECK(strobe_set_new(sc, "node1", NULL, &set) == 0);
    strobe_schema_free(sc);
    pthread_mutex_lock(&d->lock);
    CHECK(strobe__daemon_set_add(d, set, STROBE_SET_PUBLISH, NULL) == 0);
    /* a set never written is not consistent: no row */
    strobe__daemon_set_updated(d, set);

    strobe_set_u64(set, 0, 0, 7);
    strobe_set_begin(set);
    strobe_set_u64(set, 1, 0, UINT64_MAX);
    strobe_set_s64(set, 2, 0, -5);
    strobe_set_d64(set, 3, 0, 0.1);
    for (uint32_t j = 0; j < 3; j++)
        strobe_set_u64(set, 4, j, j + 1);
    strobe_set_str(set, 5, "x,\"y");
    strobe_set_s64(set, 6, 0, INT64_MIN);
    strobe_set_d64(set, 7, 0, 1.5);
    strobe_set_end_at(set, 1700000000123456789ull, 10);
    strobe__daemon_set_updated(d, set);

    /* invalid values are empty fields, an empty string is "" */
    strobe_set_begin(set);
    strobe_set_u64(set, 1, 0, 0);
    strobe_set_valid(set, 2, 0);
    strobe_set_d64(set, 3, 0, -2.5e-300);
    strobe_set_valid(set, 4, 0);
    strobe_set_str(set, 5, "");
    strobe_set_valid(set, 7, 0);
    strobe_set_end_at(set, 1700000001000000999ull, 10);
    strobe__daemon_set_updated(d, set);

    strobe_set_begin(set);
    strobe_set_valid(set, 5, 0);
    strobe_set_end_at(set, 1700000002000001000ull, 10);
    strobe__daemon_set_updated(d, set);
    pthread_mutex_unlock(&d->lock);

    /* nothing reaches the file before a flush (64 KiB buffer) */
    check_file(dir, "t.csv", "");
    flush_stores(d);
    const char *want =
        "#time,producer,instance,component_id,a,b,c,arr[0],arr[1],arr[2],name,\"odd,name\",one[0]\n"
        "1700000000.123456,node1,node1/t,7,18446744073709551615,-5,0.1,1,2,3,\"x,\"\"y\","
        "-9223372036854775808,1.5\n"
        "1700000001.000000,node1,node1/t,7,0,,-2.5e-300,,,,\"\",-9223372036854775808,\n"
        "1700000002.000001,node1,node1/t,7,0,,-2.5e-300,,,,,-9223372036854775808,\n";
    check_file(dir, "t.csv", want);
    strobe__daemon_free(d);
    check_file(dir, "t.csv", want);
    CHECK_EQ_INT(count_files(dir), 1);
}

static const char *const one_metric[] = {"v", NULL};

static void rows(struct strobe__daemon *d, strobe_set *set, const uint64_t *secs, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        uint64_t v = k + 1;
        update(d, set, secs[k] * SEC, &v, 1);
    }
}

STROBE_TEST(roll_bytes)
{
    const char *dir = strobe_test_tmpdir("roll_bytes");
    /* header "#time,producer,instance,v\n" is 26 bytes, each row
     * "1700000000.000000,node1,node1/r,1\n" 34: two rows fit 100 bytes
     * (94), a third would not (128) */
    struct strobe__daemon *d = daemon_from(
        "daemon: {producer: node1}\nstores:\n  - {plugin: csv, path: %s, roll_bytes: 100}\n", dir);
    strobe_set *set = add_set(d, "r", "node1/r", one_metric);
    static const uint64_t secs[] = {1700000000, 1700000001, 1700000002, 1700000003, 1700000004};
    rows(d, set, secs, 5);
    flush_stores(d);
    check_file(dir, "r.csv.1700000000",
               "#time,producer,instance,v\n"
               "1700000000.000000,node1,node1/r,1\n"
               "1700000001.000000,node1,node1/r,2\n");
    check_file(dir, "r.csv.1700000002",
               "#time,producer,instance,v\n"
               "1700000002.000000,node1,node1/r,3\n"
               "1700000003.000000,node1,node1/r,4\n");
    check_file(dir, "r.csv",
               "#time,producer,instance,v\n"
               "1700000004.000000,node1,node1/r,5\n");
    CHECK_EQ_INT(count_files(dir), 3);
    strobe__daemon_free(d);

    /* a row larger than roll_bytes still goes whole into a file of its
     * own; a second roll in the same second gets a .1 suffix */
    dir = strobe_test_tmpdir("roll_bytes_small");
    d = daemon_from("daemon: {producer: node1}\n"
                    "stores:\n  - {plugin: csv, path: %s, roll_bytes: 10, header: false}\n",
                    dir);
    set = add_set(d, "r", "node1/r", one_metric);
    static const uint64_t same[] = {1700000000, 1700000000, 1700000000};
    rows(d, set, same, 3);
    strobe__daemon_free(d);
    check_file(dir, "r.csv.1700000000", "1700000000.000000,node1,node1/r,1\n");
    check_file(dir, "r.csv.1700000000.1", "1700000000.000000,node1,node1/r,2\n");
    check_file(dir, "r.csv", "1700000000.000000,node1,node1/r,3\n");
    CHECK_EQ_INT(count_files(dir), 3);
}

STROBE_TEST(roll_interval)
{
    const char *dir = strobe_test_tmpdir("roll_interval");
    struct strobe__daemon *d = daemon_from(
        "daemon: {producer: node1}\nstores:\n  - {plugin: csv, path: %s, roll_interval: 10s}\n", dir);
    strobe_set *set = add_set(d, "r", "node1/r", one_metric);
    /* periods are aligned to multiples of 10 s since the epoch */
    static const uint64_t secs[] = {1700000005, 1700000009, 1700000010, 1700000035};
    rows(d, set, secs, 4);
    strobe__daemon_free(d);
    check_file(dir, "r.csv.1700000005",
               "#time,producer,instance,v\n"
               "1700000005.000000,node1,node1/r,1\n"
               "1700000009.000000,node1,node1/r,2\n");
    check_file(dir, "r.csv.1700000010",
               "#time,producer,instance,v\n"
               "1700000010.000000,node1,node1/r,3\n");
    check_file(dir, "r.csv",
               "#time,producer,instance,v\n"
               "1700000035.000000,node1,node1/r,4\n");
    CHECK_EQ_INT(count_files(dir), 3);
}

STROBE_TEST(schema_clash)
{
    const char *dir = strobe_test_tmpdir("schema_clash");
    struct strobe__daemon *d =
        daemon_from("daemon: {producer: node1}\nstores:\n  - {plugin: csv, path: %s}\n", dir);
    static const char *const m1[] = {"x", NULL}, *const m2[] = {"y", "z", NULL};
    strobe_set *a = add_set(d, "t", "node1/a", m1);
    strobe_set *b = add_set(d, "t", "node1/b", m2);
    strobe_set *a2 = add_set(d, "t", "node2/a", m1);
    CHECK(strobe_set_schema_sum(a) != strobe_set_schema_sum(b));
    uint64_t v[2] = {1, 2};
    update(d, a, 1 * SEC, v, 1);
    update(d, b, 2 * SEC, v, 2);
    update(d, a2, 3 * SEC, v, 1);
    char other[64];
    snprintf(other, sizeof other, "t-%08x.csv", (unsigned)(strobe_set_schema_sum(b) >> 32));
    strobe__daemon_free(d);
    check_file(dir, "t.csv",
               "#time,producer,instance,x\n"
               "1.000000,node1,node1/a,1\n"
               "3.000000,node1,node2/a,1\n");
    check_file(dir, other,
               "#time,producer,instance,y,z\n"
               "2.000000,node1,node1/b,1,2\n");
    CHECK_EQ_INT(count_files(dir), 2);
}

STROBE_TEST(filters)
{
    const char *dir = strobe_test_tmpdir("filters");
    struct strobe__daemon *d = daemon_from("daemon: {producer: node1}\n"
                                           "stores:\n"
                                           "  - plugin: csv\n"
                                           "    path: %s/sub/dir\n"
                                           "    sets: ['*/keep*', node1/also]\n"
                                           "    schemas: [s1, 's[3]']\n"
                                           "    header: false\n",
                                           dir);
    strobe_set *k1 = add_set(d, "s1", "node1/keep1", one_metric);
    strobe_set *k2 = add_set(d, "s2", "node1/keep2", one_metric); /* schema filtered out */
    strobe_set *k3 = add_set(d, "s3", "node1/also", one_metric);
    strobe_set *k4 = add_set(d, "s1", "node1/drop", one_metric); /* instance filtered out */
    uint64_t v = 5;
    update(d, k1, SEC, &v, 1);
    update(d, k2, SEC, &v, 1);
    update(d, k3, SEC, &v, 1);
    update(d, k4, SEC, &v, 1);
    strobe__daemon_free(d);
    char sub[4400];
    snprintf(sub, sizeof sub, "%s/sub/dir", dir);
    check_file(sub, "s1.csv", "1.000000,node1,node1/keep1,5\n");
    check_file(sub, "s3.csv", "1.000000,node1,node1/also,5\n");
    CHECK_EQ_INT(count_files(sub), 2);
}

/* A file left from an earlier run is renamed aside under its mtime. */
STROBE_TEST(existing_file)
{
    const char *dir = strobe_test_tmpdir("existing_file");
    char path[4400];
    snprintf(path, sizeof path, "%s/r.csv", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs("old\n", f) >= 0 && fclose(f) == 0);
    struct utimbuf ut = {1600000000, 1600000000};
    CHECK(utime(path, &ut) == 0);
    struct strobe__daemon *d =
        daemon_from("daemon: {producer: node1}\nstores:\n  - {plugin: csv, path: %s}\n", dir);
    strobe_set *set = add_set(d, "r", "node1/r", one_metric);
    uint64_t v = 1;
    update(d, set, SEC, &v, 1);
    strobe__daemon_free(d);
    check_file(dir, "r.csv.1600000000", "old\n");
    check_file(dir, "r.csv", "#time,producer,instance,v\n1.000000,node1,node1/r,1\n");
}

/* Writes that fail (ENOSPC from /dev/full) are logged once, counted, and
 * never crash the daemon; the other files keep working. */
STROBE_TEST(disk_full)
{
    const char *dir = strobe_test_tmpdir("disk_full");
    char path[4400], log[4400];
    snprintf(path, sizeof path, "%s/full.csv", dir);
    snprintf(log, sizeof log, "%s/../disk_full.log", dir);
    unlink(log);
    CHECK(symlink("/dev/full", path) == 0);
    struct strobe__daemon *d = daemon_from("daemon: {producer: node1, log_file: %s}\n"
                                           "stores:\n  - {plugin: csv, path: %s}\n",
                                           log, dir);
    strobe_set *full = add_set(d, "full", "node1/full", one_metric);
    strobe_set *ok = add_set(d, "ok", "node1/ok", one_metric);
    for (uint64_t k = 1; k <= 3; k++) {
        update(d, full, k * SEC, &k, 1);
        update(d, ok, k * SEC, &k, 1);
        flush_stores(d);
    }
    /* enough rows to pass the write threshold between flushes */
    for (uint64_t k = 0; k < 5000; k++)
        update(d, full, 10 * SEC, &k, 1);
    strobe__daemon_free(d);
    check_file(dir, "ok.csv",
               "#time,producer,instance,v\n"
               "1.000000,node1,node1/ok,1\n"
               "2.000000,node1,node1/ok,2\n"
               "3.000000,node1,node1/ok,3\n");
    char *text = read_text(log);
    int n = 0;
    for (const char *p = text; (p = strstr(p, "No space left on device")); p++)
        n++;
    if (n != 1)
        STROBE_FAIL("ENOSPC logged %d times:\n%s", n, text);
    CHECK_CONTAINS(text, "row(s) dropped");
    CHECK_CONTAINS(text, "5003 row(s) dropped");
    free(text);
}

STROBE_TEST(config_errors)
{
    static const char *const bad[][2] = {
        {"{plugin: csv}", "path"},
        {"{plugin: csv, path: %s, roll_bytes: 12X}", "roll_bytes"},
        {"{plugin: csv, path: %s, roll_interval: soon}", "roll_interval"},
        {"{plugin: csv, path: %s, header: maybe}", "header"},
        {"{plugin: csv, path: %s, rollbytes: 1}", "rollbytes: unknown key"},
    };
    const char *dir = strobe_test_tmpdir("config_errors");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char entry[4400], yaml[8192], err[1024] = "";
        snprintf(entry, sizeof entry, bad[i][0], dir);
        snprintf(yaml, sizeof yaml, "stores:\n  - %s\n", entry);
        struct strobe__cfg *cfg;
        struct strobe__daemon *d;
        CHECK(strobe__cfg_parse(yaml, strlen(yaml), "test.yaml", &cfg, err, sizeof err) == 0);
        if (strobe__daemon_new(cfg, &d, err, sizeof err) == 0)
            STROBE_FAIL("accepted %s", entry);
        if (i == 4)
            CHECK_CONTAINS(err, bad[i][1]);
        strobe__cfg_free(cfg);
    }
}

STROBE_TEST_MAIN(STROBE_CASE(all_types), STROBE_CASE(roll_bytes), STROBE_CASE(roll_interval),
                 STROBE_CASE(schema_clash), STROBE_CASE(filters), STROBE_CASE(existing_file),
                 STROBE_CASE(disk_full), STROBE_CASE(config_errors))
