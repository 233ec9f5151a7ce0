/* SPDX-License-Identifier: MIT */
/*
 * All-or-nothing output for the exporters. An export is written under a
 * temporary name next to OUT (same directory, so the final rename is atomic)
 * and only renamed to OUT when complete: a failed or interrupted export
 * never leaves a partial OUT behind, and an existing OUT is only replaced by
 * a complete new one.
 *
 * Not thread-safe for one object; different objects may be used in
 * different threads. Errors: 0 or -errno with a one-line message naming OUT.
 */
#ifndef STROBE_EXPORT_OUTPUT_H
#define STROBE_EXPORT_OUTPUT_H

#include <stdio.h>

#include "analysis/experiment.h"

/* A regular file: OUT is replaced atomically on commit. A symbolic link
 * OUT keeps pointing to the (replaced) file it names. An OUT that exists
 * and is not a regular file (/dev/stdout, a FIFO) is written directly:
 * renaming over a device node would replace the device. */
struct strobe__out_file {
    char *name; /* OUT, for messages */
    char *path; /* the file to replace (OUT, or the target of a link) */
    char *tmp;  /* the temporary name being written, NULL when direct */
    FILE *f;    /* fully buffered stream on tmp (or on OUT when direct) */
};

/* Creates the temporary file. On failure nothing is left behind. */
int strobe__out_file_open(struct strobe__out_file *o, const char *path, struct strobe_errbuf *eb);
/* Flushes, checks every write made through o->f, fsyncs and renames to OUT.
 * Calls strobe__out_file_abort() itself when it fails. */
int strobe__out_file_commit(struct strobe__out_file *o, struct strobe_errbuf *eb);
/* Closes and removes the temporary file; safe to call twice. */
void strobe__out_file_abort(struct strobe__out_file *o);

/* A directory: OUT must not exist or be an empty directory (a non-empty
 * one is refused rather than deleted: it may hold anything). */
struct strobe__out_dir {
    char *path; /* OUT */
    char *tmp;  /* the temporary directory being filled */
};

int strobe__out_dir_open(struct strobe__out_dir *o, const char *path, struct strobe_errbuf *eb);
/* Renames the temporary directory to OUT (removing an empty OUT first). */
int strobe__out_dir_commit(struct strobe__out_dir *o, struct strobe_errbuf *eb);
/* Removes the temporary directory and everything in it. */
void strobe__out_dir_abort(struct strobe__out_dir *o);

/* Removes the folder at path and everything in it (symbolic links are
 * removed, not followed). Only for a folder the caller made. */
void strobe__remove_tree(const char *path);

#endif
