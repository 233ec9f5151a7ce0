/* SPDX-License-Identifier: MIT */
/* Flight-recorder dumps (see dump.h). */
#define _GNU_SOURCE
#include "core/dump.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/runtime.h"
#include "core/thread.h"
#include "core/util.h"

#define COPY_BUF (1u << 20)

/* Zeroes what follows the last complete record of [p, end): the chunk a
 * thread is writing. Its records are complete up to the first zero byte:
 * each record's first byte is stored last, and the copy reads upwards, so
 * a first byte seen set comes with the rest of its record. */
static void cut_partial(uint8_t *p, uint8_t *end)
{
    while (p < end && *p) {
        const uint8_t *q = p + 1;
        uint64_t v;
        unsigned b0 = *p, kind = b0 >> 6;
        if (kind == STROBE_EV_EXT) {
            if (strobe_uleb_get(&q, end, &v) || strobe_uleb_get(&q, end, &v) || v > (uint64_t)(end - q))
                break;
            q += v;
        } else if (((b0 & 0x20) && strobe_uleb_get(&q, end, &v)) ||
                   (kind == STROBE_EV_ENTER && strobe_uleb_get(&q, end, &v))) {
            break;
        }
        p = (uint8_t *)q;
    }
    memset(p, 0, (size_t)(end - p));
}

/* Copies `len` bytes of fd into NAME in dirfd; for a stream, the chunk
 * `current` (of chunk_size bytes) is cut after its last complete record. */
static int copy_file(int fd, uint64_t len, int dirfd, const char *name, uint8_t *buf, size_t cap,
                     uint32_t chunk_size, int64_t current)
{
    int out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (out < 0)
        return -errno;
    int rc = 0;
    for (uint64_t off = 0; off < len && rc == 0;) {
        size_t n = len - off < cap ? (size_t)(len - off) : cap;
        if (chunk_size && n > chunk_size)
            n = chunk_size; /* one chunk at a time */
        ssize_t r = pread(fd, buf, n, (off_t)off);
        if (r <= 0) {
            rc = r < 0 ? -errno : 0;
            break;
        }
        if (chunk_size && current >= 0 && off / chunk_size == (uint64_t)current)
            cut_partial(buf + (off == 0 ? sizeof(struct strobe_file_header) : 0), buf + r);
        if (write(out, buf, (size_t)r) != r)
            rc = -EIO;
        off += (uint64_t)r;
    }
    close(out);
    return rc;
}

static uint64_t file_size(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

int strobe__flight_dump(void)
{
    static unsigned ndumps; /* the control thread's only */
    struct strobe__runtime *rt = &strobe__rt;
    char dir[PATH_MAX + 64], num[24], name[40];
    strobe__concat(dir, sizeof dir, rt->exp_dir, "/dump-", strobe__fmt_u64(num, ++ndumps), (char *)NULL);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) /* other processes of the run dump there too */
        return -errno;
    strobe__concat(dir, sizeof dir, dir, "/", rt->proc_name, (char *)NULL);
    if (mkdir(dir, 0777) != 0)
        return -errno;
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    size_t cap = rt->cfg.chunk_size > COPY_BUF ? rt->cfg.chunk_size : COPY_BUF; /* a whole chunk at once */
    uint8_t *buf = strobe__pages_alloc(cap);
    if (dirfd < 0 || !buf) {
        if (dirfd >= 0)
            close(dirfd);
        return -ENOMEM;
    }
    int rc = 0;
    pthread_mutex_lock(&rt->lock);
    if (rt->defs.fd >= 0)
        rc = copy_file(rt->defs.fd, strobe__mfile_offset(&rt->defs, rt->defs_pos), dirfd, "defs", buf, cap, 0, -1);
    for (struct strobe__thread *t = rt->threads; t && rc == 0; t = t->next) {
        strobe__fmt_u64(num, t->index);
        if (t->evt.fd >= 0) {
            strobe__concat(name, sizeof name, "t", num, ".evt", (char *)NULL);
            rc = copy_file(t->evt.fd, t->evt.nchunks * t->evt.chunk_size, dirfd, name, buf, cap, t->evt.chunk_size,
                           (int64_t)t->evt.chunk_index);
        }
        if (rc == 0 && t->prof.fd >= 0) {
            strobe__concat(name, sizeof name, "t", num, ".prof", (char *)NULL);
            rc = copy_file(t->prof.fd, file_size(t->prof.fd), dirfd, name, buf, cap, 0, -1);
        }
    }
    pthread_mutex_unlock(&rt->lock);
    strobe__pages_free(buf, cap);
    close(dirfd);
    return rc;
}
