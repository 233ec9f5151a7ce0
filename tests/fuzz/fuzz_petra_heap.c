/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: opening (recovering) a PETRA heap file whose bytes were
 * damaged. A template heap is built once with the library (three
 * structures, committed descriptors in a log, a checkpoint snapshot); each
 * input is a list of patches applied to a copy of it:
 *   byte region, u16 offset within the region, byte length, bytes...
 * region % 6 picks the superblock, the structure table, the checkpoint
 * records, the descriptor logs, the current snapshot, or the whole file.
 * strobe_petra_open must then either fail with a reason, or succeed and
 * pass strobe_petra_verify; never crash or hang.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strobe/petra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[256];
static uint8_t *tmpl;
static size_t tmpl_size;

static void build_template(void)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/fuzz_petra.%d.heap", dir, (int)getpid());
    unlink(path);
    struct strobe_petra_options o = { .size = 12u << 20, .max_threads = 2, .log_bytes = 64 << 10 };
    strobe_petra *h;
    char why[256];
    if (strobe_petra_create(path, &o, &h, why, sizeof why))
        abort();
    int l = strobe_petra_structure_create(h, "list", STROBE_PETRA_LIST, 0);
    int s = strobe_petra_structure_create(h, "skip", STROBE_PETRA_SKIPLIST, 0);
    int m = strobe_petra_structure_create(h, "map", STROBE_PETRA_MAP, 64);
    strobe_petra_thread *t;
    strobe_petra_thread_attach(h, &t);
    for (uint64_t k = 1; k <= 40; k++) {
        struct strobe_petra_op ops[3] = { { STROBE_PETRA_INSERT, (uint8_t)l, k, k },
                                          { STROBE_PETRA_PUT, (uint8_t)s, k * 7, k },
                                          { STROBE_PETRA_PUT, (uint8_t)m, k * 13, k } };
        strobe_petra_execute(t, ops, 3);
        if (k == 20)
            strobe_petra_checkpoint(t); /* half in the snapshot, half in the log */
    }
    strobe_petra_thread_detach(t);
    /* leave the descriptors in the log: copy the file before close */
    int fd = open(path, O_RDONLY);
    tmpl_size = (size_t)lseek(fd, 0, SEEK_END);
    tmpl = malloc(tmpl_size);
    if (!tmpl || pread(fd, tmpl, tmpl_size, 0) != (ssize_t)tmpl_size)
        abort();
    close(fd);
    strobe_petra_close(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!tmpl)
        build_template();
    uint8_t *img = malloc(tmpl_size);
    memcpy(img, tmpl, tmpl_size);
    uint64_t snap_off;
    memcpy(&snap_off, tmpl + 8192 + 16, 8); /* the first record's snap_off */
    const uint64_t regions[6][2] = { { 0, 64 }, { 4096, 4096 }, { 8192, 128 }, { 65536, 128 << 10 },
                                     { snap_off, 4096 }, { 0, tmpl_size } };
    size_t i = 0;
    while (i + 4 <= size) {
        const uint64_t *r = regions[data[i] % 6];
        uint64_t off = r[0] + ((uint64_t)data[i + 1] | (uint64_t)data[i + 2] << 8) % r[1];
        size_t len = data[i + 3];
        i += 4;
        for (size_t k = 0; k < len && i < size && off + k < tmpl_size; k++, i++)
            img[off + k] = data[i];
    }
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, img, tmpl_size) != (ssize_t)tmpl_size)
        abort();
    close(fd);
    free(img);
    strobe_petra *h = NULL;
    char why[256] = "";
    int rc = strobe_petra_open(path, NULL, &h, why, sizeof why);
    if (rc) {
        if (!why[0] && rc != -12 /* ENOMEM */ && rc != -28 /* ENOSPC */)
            abort(); /* every refusal names its reason */
        return 0;
    }
    char vwhy[256];
    if (strobe_petra_verify(h, vwhy, sizeof vwhy)) {
        fprintf(stderr, "verify after open: %s\n", vwhy);
        abort();
    }
    strobe_petra_close(h);
    return 0;
}
