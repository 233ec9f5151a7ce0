/* SPDX-License-Identifier: MIT */
/*
 * A /proc file kept open by a sampler and read whole at every sample with
 * one pread() into a buffer that grows when the file fills it (the
 * samplers' shared way of reading /proc; procfile.c).
 */
#ifndef STROBE_PLUGINS_PROCFILE_H
#define STROBE_PLUGINS_PROCFILE_H

#include <sys/types.h>

#include "strobe/plugin.h"

struct strobe__procfile {
    int fd;
    char *buf; /* NULL until opened */
    size_t cap;
};

/* Opens path with a 16 KiB buffer; on failure logs "path: reason" through
 * the host and returns -errno. A zeroed struct is "not open". */
int strobe__procfile_open(struct strobe__procfile *f, const struct strobe_plugin_host *h, const char *path);
/* Reads the whole file into f->buf, NUL-terminated (up to 64 MiB): the
 * length, or -errno. */
ssize_t strobe__procfile_read(struct strobe__procfile *f);
/* Closes and frees; harmless on a zeroed or already closed struct. */
void strobe__procfile_close(struct strobe__procfile *f);

#endif
