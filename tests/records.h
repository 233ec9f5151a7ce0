/* SPDX-License-Identifier: MIT */
/*
 * Real experiments for the analysis tests: running a fixture under
 * `strobe run` and opening what it wrote; finding and corrupting its
 * records, for the tests that check that bad input fails with one line
 * naming file, offset and problem. Header-only, like test.h; needs
 * strobe_analysis (decode.h, experiment.h).
 */
#ifndef STROBE_TESTS_RECORDS_H
#define STROBE_TESTS_RECORDS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/decode.h"
#include "analysis/experiment.h"
#include "test.h"

/* The experiment in `dir`; fails the test when it cannot be opened. */
static inline struct strobe_experiment *strobe_test_open_experiment(const char *dir)
{
    struct strobe_experiment *exp;
    struct strobe_errbuf eb = {""};
    if (strobe_experiment_open(dir, &exp, NULL, NULL, &eb) != 0)
        STROBE_FAIL("open %s: %s", dir, eb.msg);
    return exp;
}

/* Runs the test fixture PROG MODE (in STROBE_TEST_BIN_DIR) under `strobe
 * run OPTIONS` into DIR (dircap bytes: <tmpdir of NAME>/exp), its output
 * into OUTPUT (outcap bytes); fails the test unless it exits 0. Returns the
 * experiment. */
static inline struct strobe_experiment *strobe_test_run_fixture(char *dir, size_t dircap, char *output,
                                                                size_t outcap, const char *name,
                                                                const char *options, const char *prog,
                                                                const char *mode)
{
    snprintf(dir, dircap, "%s/exp", strobe_test_tmpdir(name));
    char *out;
    int rc = strobe_test_sh(&out, "%s/strobe run %s -o '%s' -- %s/%s %s", STROBE_BIN_DIR, options, dir,
                            STROBE_TEST_BIN_DIR, prog, mode);
    if (rc != 0)
        STROBE_FAIL("strobe run %s %s: exit %d\n%s", prog, mode, rc, out);
    snprintf(output, outcap, "%s", out);
    free(out);
    return strobe_test_open_experiment(dir);
}

/* Maps file `path` read-only (strobe__file_unmap undoes it); fails the
 * test when it cannot. */
static inline void strobe_test_map(const char *path, const uint8_t **buf, size_t *len)
{
    struct strobe_errbuf eb = {""};
    if (strobe__file_map(path, path, buf, len, &eb) != 0)
        STROBE_FAIL("%s", eb.msg);
}

/* Calls fn(ev, arg) for every record of stream `path`, in stream order;
 * fails the test when the stream cannot be decoded. */
static inline void strobe_test_each_record(const char *path,
                                           void (*fn)(const struct strobe__raw_event *ev, void *arg),
                                           void *arg)
{
    const uint8_t *buf;
    size_t len;
    strobe_test_map(path, &buf, &len);
    struct strobe_errbuf eb = {""};
    struct strobe__stream_decoder d;
    struct strobe__raw_event ev;
    int rc = strobe__stream_begin(&d, buf, len, path, &eb);
    while (rc >= 0 && (rc = strobe__stream_decode(&d, &ev, &eb)) == 1)
        fn(&ev, arg);
    if (rc < 0)
        STROBE_FAIL("%s", eb.msg);
    strobe__stream_end(&d);
    strobe__file_unmap(buf, len);
}

struct strobe_test_first {
    int kind;
    bool (*match)(const struct strobe__raw_event *ev);
    long off;
};

static inline void strobe_test_take_first(const struct strobe__raw_event *ev, void *arg)
{
    struct strobe_test_first *f = (struct strobe_test_first *)arg;
    if (f->off < 0 && ev->kind == f->kind && (!f->match || f->match(ev)))
        f->off = (long)ev->offset;
}

/* Offset of the first record of raw kind `kind` in stream `path` that
 * match accepts (NULL: any); fails the test when there is none, or when
 * the stream does not decode to its end. */
static inline long strobe_test_first_record(const char *path, int kind,
                                            bool (*match)(const struct strobe__raw_event *ev))
{
    struct strobe_test_first f = {kind, match, -1};
    strobe_test_each_record(path, strobe_test_take_first, &f);
    if (f.off < 0)
        STROBE_FAIL("%s: no record of kind %d", path, kind);
    return f.off;
}

/* Offset of the first defs record of `type` in the defs file `path` (its
 * first chunk); fails the test when there is none. */
static inline long strobe_test_first_def(const char *path, unsigned type)
{
    const uint8_t *buf;
    size_t len;
    strobe_test_map(path, &buf, &len);
    long off = -1;
    for (size_t o = 64; off < 0 && o < len && buf[o];) {
        const uint8_t *p = buf + o + 1;
        uint64_t n;
        if (strobe_uleb_get(&p, buf + len, &n) != 0)
            break;
        if (buf[o] == type)
            off = (long)o;
        o = (size_t)(p - buf) + n;
    }
    strobe__file_unmap(buf, len);
    if (off < 0)
        STROBE_FAIL("%s: no defs record of type %u", path, type);
    return off;
}

/* Overwrites the first payload byte (an op) of the EXT record at `offset`
 * of stream `path`: it follows b0, the 1..10-byte delta and the 1-byte
 * length. */
static inline void strobe_test_patch_ext_op(const char *path, long offset, unsigned byte)
{
    CHECK_EQ_INT(
        strobe_test_sh(NULL,
                       "f='%s'; i=$((%ld+1)); "
                       "while [ $(( $(od -An -tu1 -j$i -N1 \"$f\") & 128 )) -ne 0 ]; do i=$((i+1)); done; "
                       "printf '\\%03o' | dd of=\"$f\" bs=1 seek=$((i+2)) conv=notrunc 2>/dev/null",
                       path, offset, byte),
        0);
}

#endif
