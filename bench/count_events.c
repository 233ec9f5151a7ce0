/* SPDX-License-Identifier: MIT */
/*
 * strobe-bench-count-events: counts the records of strobe event streams
 * (t<N>.evt, src/common/format.h), so that `make bench` divides trace bytes
 * by the events strobe really recorded and notices a runtime that drops or
 * loses events instead of trusting the workload's call count. It is a
 * minimal, independent reader of the format: it does not use the analysis
 * library, so a bug there cannot hide a bug in the writer (or vice versa).
 *
 * Usage: strobe-bench-count-events FILE.evt...
 *        strobe-bench-count-events --clock DEFS
 * The first form prints one line:
 *   files=F enter=E exit=X ext=T dropped=D
 * where enter counts ENTER and ENTER_SAME records, ext the EXT records and
 * dropped the sum of the headers' `dropped` fields. The second prints the
 * clock of the process (`tsc` or `monotonic`, from its PROCESS definition),
 * so the table can say what the timestamps cost. Exits 1 with a message
 * naming the file and offset when a file is not well formed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/format.h"

struct counts {
    uint64_t enter, exit, ext, dropped;
};

static int fail(const char *path, size_t off, const char *what)
{
    fprintf(stderr, "strobe-bench-count-events: %s: offset %zu: %s\n", path, off, what);
    return -1;
}

/* Walks one mapped stream; adds to *c. Returns 0 or -1 (message printed). */
static int count_stream(const char *path, const uint8_t *data, size_t size, struct counts *c)
{
    struct strobe_file_header h;
    if (size < sizeof h)
        return fail(path, 0, "shorter than the 64-byte header");
    memcpy(&h, data, sizeof h);
    if (memcmp(h.magic, STROBE_MAGIC_EVENTS, 8) != 0)
        return fail(path, 0, "not a strobe event stream (bad magic)");
    if (h.version != STROBE_FORMAT_VERSION || h.header_size != sizeof h)
        return fail(path, 8, "unsupported version or header size");
    uint64_t chunk = h.chunk_size;
    if (chunk < STROBE_CHUNK_SIZE_MIN || chunk > STROBE_CHUNK_SIZE_MAX || (chunk & (chunk - 1)))
        return fail(path, 16, "bad chunk size");
    c->dropped += h.dropped;

    size_t pos = sizeof h;
    while (pos < size) {
        size_t chunk_end = (pos / chunk + 1) * chunk;
        if (chunk_end > size)
            chunk_end = size;
        uint8_t b0 = data[pos];
        if (b0 == 0) { /* padding: the stream goes on at the next chunk, if anywhere */
            size_t next = (pos / chunk + 1) * chunk;
            if (next >= size || data[next] == 0)
                return 0;
            pos = next;
            continue;
        }
        const uint8_t *p = data + pos + 1, *end = data + chunk_end;
        uint64_t v;
        unsigned kind = b0 >> 6;
        if (kind == STROBE_EV_EXT) {
            uint64_t len;
            if (strobe_uleb_get(&p, end, &v) || strobe_uleb_get(&p, end, &len) || len > (uint64_t)(end - p))
                return fail(path, pos, "truncated EXT record");
            p += len;
            c->ext++;
        } else {
            if ((b0 & 0x20) && strobe_uleb_get(&p, end, &v))
                return fail(path, pos, "truncated time delta");
            if (kind == STROBE_EV_ENTER && strobe_uleb_get(&p, end, &v))
                return fail(path, pos, "truncated region id");
            if (kind == STROBE_EV_EXIT)
                c->exit++;
            else
                c->enter++;
        }
        pos = (size_t)(p - data);
    }
    return 0;
}

/* Finds the PROCESS record of a mapped defs file and prints its clock. */
static int print_clock(const char *path, const uint8_t *data, size_t size)
{
    struct strobe_file_header h;
    if (size < sizeof h)
        return fail(path, 0, "shorter than the 64-byte header");
    memcpy(&h, data, sizeof h);
    if (memcmp(h.magic, STROBE_MAGIC_DEFS, 8) != 0 || h.version != STROBE_FORMAT_VERSION)
        return fail(path, 0, "not a strobe defs file of this version");
    uint64_t chunk = h.chunk_size;
    if (chunk < STROBE_CHUNK_SIZE_MIN || chunk > STROBE_CHUNK_SIZE_MAX || (chunk & (chunk - 1)))
        return fail(path, 16, "bad chunk size");
    size_t pos = sizeof h;
    while (pos < size) {
        size_t next = (pos / chunk + 1) * chunk;
        const uint8_t *end = data + (next < size ? next : size);
        if (data[pos] == 0) {
            if (next >= size || data[next] == 0)
                break;
            pos = next;
            continue;
        }
        const uint8_t *p = data + pos + 1;
        uint64_t len, pid, ppid, kind;
        if (strobe_uleb_get(&p, end, &len) || len > (uint64_t)(end - p))
            return fail(path, pos, "truncated definition record");
        if (data[pos] == STROBE_DEF_PROCESS) {
            const uint8_t *q = p, *qend = p + len;
            if (strobe_uleb_get(&q, qend, &pid) || strobe_uleb_get(&q, qend, &ppid) ||
                strobe_uleb_get(&q, qend, &kind))
                return fail(path, pos, "truncated PROCESS record");
            printf("%s\n", kind == STROBE_CLOCK_TSC         ? "tsc"
                           : kind == STROBE_CLOCK_MONOTONIC ? "monotonic"
                                                            : "unknown");
            return 0;
        }
        pos = (size_t)(p + len - data);
    }
    return fail(path, pos, "no PROCESS definition");
}

int main(int argc, char **argv)
{
    struct counts c = {0};
    int clock_mode = argc == 3 && strcmp(argv[1], "--clock") == 0;
    if (argc < 2 || (strcmp(argv[1], "--clock") == 0 && !clock_mode)) {
        fprintf(stderr, "usage: %s FILE.evt... | --clock DEFS\n", argv[0]);
        return 2;
    }
    if (clock_mode) {
        int fd = open(argv[2], O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
            fprintf(stderr, "strobe-bench-count-events: %s: %s\n", argv[2],
                    fd < 0 ? strerror(errno) : "empty");
            return 1;
        }
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            fprintf(stderr, "strobe-bench-count-events: %s: mmap: %s\n", argv[2], strerror(errno));
            return 1;
        }
        int rc = print_clock(argv[2], m, (size_t)st.st_size);
        munmap(m, (size_t)st.st_size);
        close(fd);
        return rc ? 1 : 0;
    }
    for (int i = 1; i < argc; i++) {
        int fd = open(argv[i], O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            fprintf(stderr, "strobe-bench-count-events: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        if (st.st_size > 0) {
            void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (m == MAP_FAILED) {
                fprintf(stderr, "strobe-bench-count-events: %s: mmap: %s\n", argv[i], strerror(errno));
                return 1;
            }
            int rc = count_stream(argv[i], m, (size_t)st.st_size, &c);
            munmap(m, (size_t)st.st_size);
            if (rc != 0)
                return 1;
        }
        close(fd);
    }
    printf("files=%d enter=%llu exit=%llu ext=%llu dropped=%llu\n", argc - 1, (unsigned long long)c.enter,
           (unsigned long long)c.exit, (unsigned long long)c.ext, (unsigned long long)c.dropped);
    return 0;
}
