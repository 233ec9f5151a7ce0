/* SPDX-License-Identifier: MIT */
/*
 * Minimal POSIX.1-1988 "ustar" archive writer: regular files only, written
 * sequentially to a stdio stream (Cube's .cubex container). A member whose
 * size does not fit the 11 octal digits of the ustar size field (>= 8 GiB)
 * is preceded by a POSIX.1-2001 pax extended header carrying "size", which
 * GNU tar, bsdtar, Python's tarfile and CubeLib all read.
 *
 * Usage: tar_begin(name, size), write exactly `size` bytes to the stream,
 * tar_end(); tar_finish() writes the two zero blocks that end an archive.
 * The stream is only written sequentially (a pipe or /dev/stdout works).
 * Errors surface through ferror() on the stream, except where a function
 * returns -errno.
 */
#ifndef STROBE_EXPORT_TAR_H
#define STROBE_EXPORT_TAR_H

#include <stdint.h>
#include <stdio.h>

#define STROBE_TAR_BLOCK 512u

struct strobe__tar {
    FILE *f;
    long mtime;    /* modification time written into every header */
    uint64_t size; /* declared size of the current member */
};

void strobe__tar_init(struct strobe__tar *t, FILE *f, long mtime);
/* name must be shorter than 100 bytes (Cube member names are). */
int strobe__tar_begin(struct strobe__tar *t, const char *name, uint64_t size);
/* Pads the member to a block boundary. */
void strobe__tar_end(struct strobe__tar *t);
void strobe__tar_finish(struct strobe__tar *t);

#endif
