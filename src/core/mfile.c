/* SPDX-License-Identifier: MIT */
/* Chunked memory-mapped output files (see mfile.h). */
#define _GNU_SOURCE
#include "core/mfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "strobe/strobe.h"

/* Makes the file at least `size` bytes long with blocks allocated for
 * [from, size). fallocate is preferred (see mfile.h for why); file systems
 * without it get a sparse file. */
static int extend(int fd, uint64_t from, uint64_t size)
{
    if (fallocate(fd, 0, (off_t)from, (off_t)(size - from)) == 0)
        return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS)
        return -errno;
    if (ftruncate(fd, (off_t)size) != 0)
        return -errno;
    return 0;
}

/* Length of chunk `index` under the limit, 0 when it would start at or
 * beyond the limit. */
static size_t chunk_length(const struct strobe__mfile *f, uint64_t index)
{
    uint64_t start = index * f->chunk_size;
    if (f->limit == 0)
        return f->chunk_size;
    if (start >= f->limit)
        return 0;
    uint64_t left = f->limit - start;
    return left < f->chunk_size ? (size_t)left : f->chunk_size;
}

static int map_chunk(struct strobe__mfile *f, uint64_t index, uint8_t **out, size_t *len)
{
    size_t n = chunk_length(f, index);
    if (n == 0)
        return STROBE_ERR_LIMIT;
    uint64_t start = index * f->chunk_size;
    int rc = extend(f->fd, start, start + n);
    if (rc)
        return rc;
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, (off_t)start);
    if (p == MAP_FAILED)
        return -errno;
    *out = p;
    *len = n;
    return 0;
}

int strobe__mfile_create(struct strobe__mfile *f, int dirfd, const char *name, const char *magic,
                         uint32_t chunk_size, uint64_t limit, uint32_t thread_index, uint64_t start_ticks,
                         uint8_t **pos)
{
    memset(f, 0, sizeof *f);
    f->chunk_size = chunk_size;
    f->limit = limit;
    f->fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f->fd < 0) {
        f->fd = -1;
        return -errno;
    }
    uint8_t *p;
    size_t len;
    int rc = map_chunk(f, 0, &p, &len);
    if (rc) {
        close(f->fd);
        unlinkat(dirfd, name, 0);
        f->fd = -1;
        return rc;
    }
    f->hdr = (struct strobe_file_header *)p;
    f->chunk = p;
    f->chunk_index = 0;
    f->chunk_len = len;
    f->last = chunk_length(f, 1) == 0;
    f->nchunks = 1;
    struct strobe_file_header *h = f->hdr;
    h->version = STROBE_FORMAT_VERSION;
    h->header_size = sizeof *h;
    h->chunk_size = chunk_size;
    h->thread_index = thread_index;
    h->start_ticks = start_ticks;
    h->dropped = 0;
    h->limit_bytes = limit;
    /* The magic goes last: a reader that sees it sees a complete header
     * (x86 stores reach the page cache in program order; the fence keeps
     * the compiler from reordering). */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(h->magic, magic, sizeof h->magic);
    *pos = p + sizeof *h;
    return 0;
}

int strobe__mfile_next(struct strobe__mfile *f, uint8_t **pos)
{
    if (f->last)
        return STROBE_ERR_LIMIT;
    uint8_t *p;
    size_t len;
    int rc = map_chunk(f, f->chunk_index + 1, &p, &len);
    if (rc)
        return rc;
    if (f->chunk_index != 0)
        munmap(f->chunk, f->chunk_len);
    f->chunk = p;
    f->chunk_index++;
    f->chunk_len = len;
    f->last = chunk_length(f, f->chunk_index + 1) == 0;
    if (f->nchunks < f->chunk_index + 1)
        f->nchunks = f->chunk_index + 1;
    *pos = p;
    return 0;
}

int strobe__mfile_goto(struct strobe__mfile *f, uint64_t index, uint8_t **pos)
{
    uint8_t *p = (uint8_t *)f->hdr;
    size_t len = chunk_length(f, index);
    if (index != 0) {
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, (off_t)(index * f->chunk_size));
        if (p == MAP_FAILED)
            return -errno;
    }
    if (f->chunk_index != 0)
        munmap(f->chunk, f->chunk_len);
    f->chunk = p;
    f->chunk_index = index;
    f->chunk_len = len;
    *pos = index == 0 ? p + sizeof *f->hdr : p;
    return 0;
}

void strobe__mfile_prefault(struct strobe__mfile *f)
{
#ifdef MADV_POPULATE_WRITE
    /* Kernels before 5.14 refuse it: pages then fault in one at a time. */
    madvise(f->chunk, f->chunk_len, MADV_POPULATE_WRITE);
#else
    (void)f;
#endif
}

uint64_t strobe__mfile_offset(const struct strobe__mfile *f, const uint8_t *pos)
{
    return f->chunk_index * f->chunk_size + (uint64_t)(pos - f->chunk);
}

void strobe__mfile_close(struct strobe__mfile *f, const uint8_t *pos)
{
    if (f->fd < 0)
        return;
    uint64_t used = strobe__mfile_offset(f, pos);
    if (f->chunk_index != 0)
        munmap(f->chunk, f->chunk_len);
    munmap(f->hdr, chunk_length(f, 0));
    /* Drop the zero tail of the last chunk; failure only leaves a longer
     * file, which readers accept. A ring written again from its start
     * keeps its later chunks. */
    if (f->chunk_index + 1 == f->nchunks) {
        int unused = ftruncate(f->fd, (off_t)used);
        (void)unused;
    }
    close(f->fd);
    f->fd = -1;
    f->hdr = NULL;
    f->chunk = NULL;
}

void strobe__mfile_abandon(struct strobe__mfile *f)
{
    if (f->fd < 0)
        return;
    if (f->chunk_index != 0)
        munmap(f->chunk, f->chunk_len);
    munmap(f->hdr, chunk_length(f, 0));
    close(f->fd);
    f->fd = -1;
    f->hdr = NULL;
    f->chunk = NULL;
}
