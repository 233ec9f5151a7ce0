/* SPDX-License-Identifier: MIT */
/*
 * Encodes the experiment described in make_experiment.h record by record
 * with the layout of src/common/format.h.
 */
#include "make_experiment.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/format.h"

#define CHUNK 4096u

struct buf {
    uint8_t data[CHUNK];
    size_t len;
    uint64_t last_ticks; /* event streams: time of the previous record */
};

static void put(struct buf *b, const void *p, size_t n)
{
    if (b->len + n > sizeof b->data)
        abort(); /* the test experiment fits one chunk by construction */
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void put_uleb(struct buf *b, uint64_t v)
{
    uint8_t tmp[10];
    put(b, tmp, (size_t)(strobe_uleb_put(tmp, v) - tmp));
}

static void put_str(struct buf *b, const char *s)
{
    put_uleb(b, strlen(s));
    put(b, s, strlen(s));
}

static void put_header(struct buf *b, const char *magic, uint32_t thread, uint64_t start_ticks)
{
    struct strobe_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, magic, 8);
    h.version = STROBE_FORMAT_VERSION;
    h.header_size = sizeof h;
    h.chunk_size = CHUNK;
    h.thread_index = thread;
    h.start_ticks = start_ticks;
    put(b, &h, sizeof h); /* the test runs on little-endian hosts only */
    b->last_ticks = start_ticks;
}

/* ---- definitions ---- */

static void def(struct buf *b, int type, const struct buf *payload)
{
    uint8_t t = (uint8_t)type;
    put(b, &t, 1);
    put_uleb(b, payload->len);
    put(b, payload->data, payload->len);
}

static void def_region(struct buf *b, uint64_t id, const char *name, const char *file, unsigned line)
{
    struct buf p = {.len = 0};
    put_uleb(&p, id);
    put_uleb(&p, STROBE_REGION_USER);
    put_uleb(&p, 0); /* annotations have no address */
    put_str(&p, name);
    put_str(&p, file);
    put_uleb(&p, line);
    def(b, STROBE_DEF_REGION, &p);
}

/* ---- event records ---- */

static uint64_t delta(struct buf *b, uint64_t abs_ticks)
{
    uint64_t d = abs_ticks - b->last_ticks;
    b->last_ticks = abs_ticks;
    return d;
}

static void ev_basic(struct buf *b, int kind, uint64_t t, const uint64_t *region)
{
    uint64_t d = delta(b, t);
    uint8_t b0 = (uint8_t)(kind << 6 | (d >= 32 ? 0x20 : 0) | (d & 31));
    put(b, &b0, 1);
    if (d >= 32)
        put_uleb(b, d >> 5);
    if (region)
        put_uleb(b, *region);
}

static void ev_enter(struct buf *b, uint64_t t, uint64_t region)
{
    ev_basic(b, STROBE_EV_ENTER, t, &region);
}

static void ev_exit(struct buf *b, uint64_t t)
{
    ev_basic(b, STROBE_EV_EXIT, t, NULL);
}

static void ev_enter_same(struct buf *b, uint64_t t)
{
    ev_basic(b, STROBE_EV_ENTER_SAME, t, NULL);
}

static void ev_ext(struct buf *b, int type, uint64_t t, const struct buf *payload)
{
    uint8_t b0 = (uint8_t)type; /* kk = 0 */
    put(b, &b0, 1);
    put_uleb(b, delta(b, t));
    put_uleb(b, payload->len);
    put(b, payload->data, payload->len);
}

static void ev_ext_ulebs(struct buf *b, int type, uint64_t t, int n, const uint64_t *v)
{
    struct buf p = {.len = 0};
    for (int i = 0; i < n; i++)
        put_uleb(&p, v[i]);
    ev_ext(b, type, t, &p);
}

static void ev_metric(struct buf *b, uint64_t t, uint64_t metric, int64_t value)
{
    uint64_t v[2] = {metric, strobe_zigzag(value)};
    ev_ext_ulebs(b, STROBE_EXT_METRIC, t, 2, v);
}

static void ev_tm(struct buf *b, uint64_t t, int n, const uint64_t *v)
{
    ev_ext_ulebs(b, STROBE_EXT_TM, t, n, v);
}

static int write_file(const char *dir, const char *name, const struct buf *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -errno;
    /* Whole chunks, zero-padded, as the runtime's mapped files are. */
    static const uint8_t zeros[CHUNK];
    size_t pad = CHUNK - b->len % CHUNK;
    int ok = fwrite(b->data, 1, b->len, f) == b->len && fwrite(zeros, 1, pad, f) == pad;
    if (fclose(f) != 0 || !ok)
        return -EIO;
    return 0;
}

/* The experiment directory, its meta file and proc-PID; returns 0 or -errno. */
static int make_dirs(const char *dir, unsigned pid, const char *command, const char *extra_meta,
                     char proc[4096])
{
    snprintf(proc, 4096, "%s/proc-%u", dir, pid);
    if ((mkdir(dir, 0777) != 0 && errno != EEXIST) || mkdir(proc, 0777) != 0)
        return -errno;
    char meta[4096];
    snprintf(meta, sizeof meta, "%s/meta", dir);
    FILE *f = fopen(meta, "w");
    if (!f)
        return -errno;
    /* docs/cli.md: one "key: value" per line */
    fprintf(f, "strobe_version: 0.1.0\ncommand: %s\nhost: testhost\n%s", command, extra_meta);
    if (fclose(f) != 0)
        return -EIO;
    return 0;
}

/* The PROCESS and CLOCK_SYNC records of a MONOTONIC process started at S. */
static void def_process(struct buf *defs, unsigned pid, const char *exe, uint64_t S)
{
    struct buf p = {.len = 0};
    put_uleb(&p, pid);
    put_uleb(&p, 1); /* ppid */
    put_uleb(&p, STROBE_CLOCK_MONOTONIC);
    put_uleb(&p, 1700000000000000000ull); /* realtime at start */
    put_str(&p, exe);
    put_str(&p, ""); /* not created by fork */
    def(defs, STROBE_DEF_PROCESS, &p);
    memset(&p, 0, sizeof p);
    put_uleb(&p, S);
    put_uleb(&p, S); /* monotonic: ticks are ns */
    def(defs, STROBE_DEF_CLOCK_SYNC, &p);
}

int make_experiment(const char *dir)
{
    const uint64_t S = EXPERIMENT_START_TICKS;
    char proc[4096];
    int rc = make_dirs(dir, EXPERIMENT_PID, "./demo --size 3", "", proc);
    if (rc)
        return rc;

    /* defs */
    static struct buf defs, p;
    memset(&defs, 0, sizeof defs);
    put_header(&defs, STROBE_MAGIC_DEFS, 0, 0);
    def_process(&defs, EXPERIMENT_PID, "/usr/bin/demo", S);
    def_region(&defs, 0, "main", "demo.c", 10);
    def_region(&defs, 1, "compute", "demo.c", 20);
    def_region(&defs, 2, EXPERIMENT_ODD_NAME, "", 0);
    memset(&p, 0, sizeof p);
    put_uleb(&p, 0);
    put_str(&p, "bytes");
    put_str(&p, "B");
    def(&defs, STROBE_DEF_METRIC, &p);
    memset(&p, 0, sizeof p);
    put_uleb(&p, S + 6200);
    put_uleb(&p, strobe_zigzag(0));
    def(&defs, STROBE_DEF_PROCESS_END, &p);

    /* t0: main thread */
    static struct buf t0;
    memset(&t0, 0, sizeof t0);
    put_header(&t0, STROBE_MAGIC_EVENTS, 0, S);
    ev_ext_ulebs(&t0, STROBE_EXT_THREAD_BEGIN, S, 2, (uint64_t[]){EXPERIMENT_PID, 0});
    ev_enter(&t0, S + 100, 0);
    ev_enter(&t0, S + 200, 1);
    ev_exit(&t0, S + 500);
    ev_metric(&t0, S + 550, 0, 100);
    ev_enter_same(&t0, S + 600);
    ev_exit(&t0, S + 700);
    ev_ext_ulebs(&t0, STROBE_EXT_THREAD_CREATE, S + 800, 1, (uint64_t[]){1});
    ev_enter(&t0, S + 900, 2);
    ev_exit(&t0, S + 1000);
    ev_ext_ulebs(&t0, STROBE_EXT_THREAD_JOIN, S + 5000, 1, (uint64_t[]){1});
    ev_exit(&t0, S + 6000);
    ev_ext_ulebs(&t0, STROBE_EXT_THREAD_END, S + 6100, 7, (uint64_t[]){5, 1, 2048, 10, 0, 1, 2});

    /* t1: worker created by t0 */
    static struct buf t1;
    memset(&t1, 0, sizeof t1);
    put_header(&t1, STROBE_MAGIC_EVENTS, 1, S + 850);
    ev_ext_ulebs(&t1, STROBE_EXT_THREAD_BEGIN, S + 850, 2, (uint64_t[]){EXPERIMENT_PID + 1, 0 + 1});
    ev_enter(&t1, S + 900, 1);
    ev_metric(&t1, S + 910, 0, -7);
    ev_exit(&t1, S + 1300);
    ev_enter(&t1, S + 1350, 1);
    ev_exit(&t1, S + 1370);
    ev_ext_ulebs(&t1, STROBE_EXT_THREAD_END, S + 1450, 7, (uint64_t[]){0, 0, 2048, 1, 0, 1, 0});

    if ((rc = write_file(proc, "defs", &defs)) < 0 || (rc = write_file(proc, "t0.evt", &t0)) < 0 ||
        (rc = write_file(proc, "t1.evt", &t1)) < 0)
        return rc;
    return 0;
}

int make_tm_experiment(const char *dir, const char *extra_meta, int events)
{
    const uint64_t S = EXPERIMENT_START_TICKS;
    char proc[4096];
    int rc = make_dirs(dir, TM_EXPERIMENT_PID, "./tm", extra_meta, proc);
    if (rc)
        return rc;
    static struct buf defs, p, t0, t1;
    memset(&defs, 0, sizeof defs);
    put_header(&defs, STROBE_MAGIC_DEFS, 0, 0);
    def_process(&defs, TM_EXPERIMENT_PID, "/usr/bin/tm", S);
    memset(&p, 0, sizeof p);
    put_uleb(&p, 0);
    put_uleb(&p, STROBE_REGION_TM_ATOMIC);
    put_uleb(&p, 0x1000); /* the site */
    put_str(&p, "");
    put_str(&p, "");
    put_uleb(&p, 0);
    def(&defs, STROBE_DEF_REGION, &p);
    memset(&p, 0, sizeof p);
    put_uleb(&p, S + 1200);
    put_uleb(&p, strobe_zigzag(0));
    def(&defs, STROBE_DEF_PROCESS_END, &p);

    memset(&t0, 0, sizeof t0);
    put_header(&t0, STROBE_MAGIC_EVENTS, 0, S);
    ev_ext_ulebs(&t0, STROBE_EXT_THREAD_BEGIN, S, 2, (uint64_t[]){TM_EXPERIMENT_PID, 0});
    if (events)
        ev_tm(&t0, S + 5, 2, (uint64_t[]){STROBE_TM_LOGGING, 3});
    ev_enter(&t0, S + 100, 0);
    if (events) {
        ev_tm(&t0, S + 150, 3, (uint64_t[]){STROBE_TM_ABORT, STROBE_TM_ABORT_READ_CONFLICT, 0});
        ev_tm(&t0, S + 160, 2, (uint64_t[]){STROBE_TM_START, 2});
    }
    ev_exit(&t0, S + 200);
    ev_enter_same(&t0, S + 300);
    ev_exit(&t0, S + 400);
    ev_ext_ulebs(&t0, STROBE_EXT_THREAD_CREATE, S + 500, 1, (uint64_t[]){1});
    ev_ext_ulebs(&t0, STROBE_EXT_THREAD_JOIN, S + 900, 1, (uint64_t[]){1});
    ev_tm(&t0, S + 1000, 16,
          (uint64_t[]){STROBE_TM_COUNTS, 0, 0x1000, 753000, 10, 0, 1, 0, 0, 6, 6, 4, 0, 0, 0, 0});
    ev_tm(&t0, S + 1000, 20,
          (uint64_t[]){STROBE_TM_COUNTS, 1, 0x2000, 5, 5, 0, 0, 0, 1, 10, 1, 2, 1, 1, 0, 0, 9, 9, 7, 7});
    ev_ext_ulebs(&t0, STROBE_EXT_THREAD_END, S + 1100, 7, (uint64_t[]){1, 0, 1024, 0, 0, 0, 0});

    memset(&t1, 0, sizeof t1);
    put_header(&t1, STROBE_MAGIC_EVENTS, 1, S + 450);
    ev_ext_ulebs(&t1, STROBE_EXT_THREAD_BEGIN, S + 450, 2, (uint64_t[]){TM_EXPERIMENT_PID + 1, 0 + 1});
    ev_ext_ulebs(&t1, STROBE_EXT_THREAD_END, S + 800, 7, (uint64_t[]){0, 0, 1024, 0, 0, 0, 0});

    if ((rc = write_file(proc, "defs", &defs)) < 0 || (rc = write_file(proc, "t0.evt", &t0)) < 0 ||
        (rc = write_file(proc, "t1.evt", &t1)) < 0)
        return rc;
    return 0;
}
