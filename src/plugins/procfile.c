/* SPDX-License-Identifier: MIT */
/* Whole-file reads of /proc files for the samplers (procfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugins/procfile.h"

#define FILE_CAP_MAX (64u << 20) /* give up growing beyond this */

int strobe__procfile_open(struct strobe__procfile *f, const struct strobe_plugin_host *h, const char *path)
{
    f->cap = 16 * 1024;
    if (!(f->buf = malloc(f->cap)))
        return -ENOMEM;
    if ((f->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        int e = errno;
        h->log(h, STROBE_LOG_ERROR, "%s: %s", path, strerror(e));
        free(f->buf);
        f->buf = NULL;
        return -e;
    }
    return 0;
}

ssize_t strobe__procfile_read(struct strobe__procfile *f)
{
    for (;;) {
        ssize_t n = pread(f->fd, f->buf, f->cap - 1, 0);
        if (n < 0)
            return -errno;
        /* a full buffer may mean a longer file (/proc/stat grows with
         * CPUs and interrupt lines): read again with twice the room */
        if ((size_t)n < f->cap - 1 || f->cap >= FILE_CAP_MAX) {
            f->buf[n] = 0;
            return n;
        }
        char *b = realloc(f->buf, f->cap * 2);
        if (!b)
            return -ENOMEM;
        f->buf = b;
        f->cap *= 2;
    }
}

void strobe__procfile_close(struct strobe__procfile *f)
{
    if (!f->buf)
        return;
    close(f->fd);
    free(f->buf);
    f->buf = NULL;
}
