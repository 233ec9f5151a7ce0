/* SPDX-License-Identifier: MIT */
/*
 * Chunked, memory-mapped output file: the one way the runtime writes
 * `defs` and `t<N>.evt` (format.h, "chunks").
 *
 * The file grows one chunk at a time: the chunk's blocks are allocated
 * (fallocate, or ftruncate where that is unsupported) and the chunk is
 * mapped MAP_SHARED, so every byte stored into it is in the page cache at
 * once and survives the process being killed; there is no write(2) and
 * no buffer to flush. Chunk 0 stays mapped for the life of the file
 * because it holds the header, whose `dropped` counter is updated live;
 * any other chunk is unmapped when the writer moves past it. A record
 * never straddles a chunk: the writer simply moves on and leaves the rest
 * of the chunk as it was allocated, zero, which is the padding readers
 * skip. Allocating blocks up front also means a full disk shows up here,
 * as a failed chunk switch (counted as dropped events), rather than as a
 * SIGBUS in the measured program when a page of a sparse file is touched.
 *
 * Page faults: the first store to each page of a shared file mapping
 * traps into the kernel (to mark it dirty), about 2 ns per event when
 * spread over a trace. A writer that fills chunks quickly therefore
 * prefaults each new one writable with a single madvise call
 * (strobe__mfile_prefault); chunk 0 is left alone, so a short-lived thread
 * does not pay for (and write back) a whole chunk of zeros.
 *
 * A size limit (0 = none) caps the file: the last chunk is cut short to end
 * exactly at the limit.
 *
 * Not thread-safe: each file has one writer at a time (the owning thread
 * for a stream, the process lock holder for defs). Async-signal-safe
 * (system calls only).
 */
#ifndef STROBE_CORE_MFILE_H
#define STROBE_CORE_MFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/format.h"

struct strobe__mfile {
    int fd; /* -1 when not open */
    uint32_t chunk_size;
    uint64_t limit;                 /* maximum file size in bytes, 0 = none */
    struct strobe_file_header *hdr; /* chunk 0 */
    uint8_t *chunk;                 /* current chunk (== hdr for chunk 0) */
    uint64_t chunk_index;
    size_t chunk_len; /* bytes mapped for the current chunk */
    bool last;        /* the current chunk ends at the limit */
    uint64_t nchunks; /* chunks the file has */
};

/* Creates NAME (O_EXCL) in directory DIRFD with its header and maps chunk
 * 0. Returns 0 and sets *pos to the first record byte, or a negative errno
 * (nothing is left open). */
int strobe__mfile_create(struct strobe__mfile *f, int dirfd, const char *name, const char *magic,
                         uint32_t chunk_size, uint64_t limit, uint32_t thread_index, uint64_t start_ticks,
                         uint8_t **pos);

static inline uint8_t *strobe__mfile_end(const struct strobe__mfile *f)
{
    return f->chunk + f->chunk_len;
}

/* Moves to the next chunk; what is left of the current one stays zero.
 * Returns 0 and *pos, or STROBE_ERR_LIMIT when the limit leaves no room for
 * another chunk, or a negative errno (disk full, out of address space);
 * the current chunk stays in place on failure. */
int strobe__mfile_next(struct strobe__mfile *f, uint8_t **pos);

/* Moves to chunk `index` (< nchunks), which the file already has, to
 * write it again (a ring): *pos is its first byte, after the header for
 * chunk 0. Returns 0 or a negative errno (the current chunk stays). */
int strobe__mfile_goto(struct strobe__mfile *f, uint64_t index, uint8_t **pos);

/* Makes every page of the current chunk present and writable at once. */
void strobe__mfile_prefault(struct strobe__mfile *f);

/* Byte offset of pos (inside the current chunk) in the file. */
uint64_t strobe__mfile_offset(const struct strobe__mfile *f, const uint8_t *pos);

/* Normal end: truncates the file to the data written (pos), unmaps and
 * closes. */
void strobe__mfile_close(struct strobe__mfile *f, const uint8_t *pos);

/* Unmaps and closes without touching the file: used by the child of a
 * fork(), whose inherited mappings belong to the parent's files. */
void strobe__mfile_abandon(struct strobe__mfile *f);

#endif
