/* SPDX-License-Identifier: MIT */
/*
 * Finding and corrupting records of real experiment files, for the tests
 * that check that bad input fails with one line naming file, offset and
 * problem. Header-only, like test.h; needs strobe_analysis (decode.h).
 */
#ifndef STROBE_TESTS_RECORDS_H
#define STROBE_TESTS_RECORDS_H

#include <stdbool.h>

#include "analysis/decode.h"
#include "test.h"

/* Maps file `path` read-only (strobe__file_unmap undoes it); fails the
 * test when it cannot. */
static inline void strobe_test_map(const char *path, const uint8_t **buf, size_t *len)
{
    struct strobe_errbuf eb = {""};
    if (strobe__file_map(path, path, buf, len, &eb) != 0)
        STROBE_FAIL("%s", eb.msg);
}

/* Offset of the first record of raw kind `kind` in stream `path` that
 * match accepts (NULL: any); fails the test when there is none. */
static inline long strobe_test_first_record(const char *path, int kind,
                                            bool (*match)(const struct strobe__raw_event *ev))
{
    const uint8_t *buf;
    size_t len;
    strobe_test_map(path, &buf, &len);
    struct strobe_errbuf eb = {""};
    struct strobe__stream_decoder d;
    struct strobe__raw_event ev;
    long off = -1;
    int rc = strobe__stream_begin(&d, buf, len, path, &eb);
    while (off < 0 && rc >= 0 && (rc = strobe__stream_decode(&d, &ev, &eb)) == 1)
        if (ev.kind == kind && (!match || match(&ev)))
            off = (long)ev.offset;
    strobe__stream_end(&d);
    strobe__file_unmap(buf, len);
    if (off < 0)
        STROBE_FAIL("%s: no record of kind %d", path, kind);
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
