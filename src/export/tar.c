/* SPDX-License-Identifier: MIT */
/*
 * ustar archive writer (see tar.h). Header layout (POSIX.1-1988, pax
 * "ustar Interchange Format"): 512-byte block, numeric fields as
 * NUL-terminated zero-padded octal, checksum = unsigned sum of all header
 * bytes with the checksum field taken as eight spaces.
 */
#include "export/tar.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#define USTAR_MAX_SIZE 077777777777ull /* 11 octal digits */

struct ustar_header {
    char name[100];
    char mode[8];
    char uid[8];
    char gid[8];
    char size[12];
    char mtime[12];
    char checksum[8];
    char typeflag;
    char linkname[100];
    char magic[6];
    char version[2];
    char uname[32];
    char gname[32];
    char devmajor[8];
    char devminor[8];
    char prefix[155];
    char pad[12];
};

_Static_assert(sizeof(struct ustar_header) == STROBE_TAR_BLOCK, "ustar header is one block");

/* width - 1 zero-padded octal digits and a NUL; callers keep value within
 * width - 1 digits (sizes go to a pax header, times are clamped). */
static void octal(char *field, size_t width, uint64_t value)
{
    size_t digits = width - 1;
    field[digits] = '\0';
    for (size_t i = digits; i-- > 0; value >>= 3)
        field[i] = (char)('0' + (value & 7));
}

static void fill_header(struct ustar_header *h, const char *name, char type, uint64_t size, long mtime)
{
    memset(h, 0, sizeof *h);
    strncpy(h->name, name, sizeof h->name - 1);
    octal(h->mode, sizeof h->mode, 0644);
    octal(h->uid, sizeof h->uid, 0);
    octal(h->gid, sizeof h->gid, 0);
    octal(h->size, sizeof h->size, size <= USTAR_MAX_SIZE ? size : 0);
    octal(h->mtime, sizeof h->mtime,
          mtime <= 0                         ? 0
          : (uint64_t)mtime > USTAR_MAX_SIZE ? USTAR_MAX_SIZE
                                             : (uint64_t)mtime);
    h->typeflag = type;
    memcpy(h->magic, "ustar", 6); /* "ustar\0" */
    memcpy(h->version, "00", 2);
    memset(h->checksum, ' ', sizeof h->checksum);
    unsigned sum = 0;
    const unsigned char *p = (const unsigned char *)h;
    for (size_t i = 0; i < sizeof *h; i++)
        sum += p[i];
    snprintf(h->checksum, sizeof h->checksum, "%06o", sum); /* "ddddd\0" then ' ' */
    h->checksum[7] = ' ';
}

static void pad_to_block(FILE *f, uint64_t size)
{
    static const char zeros[STROBE_TAR_BLOCK];
    size_t rest = (size_t)(size % STROBE_TAR_BLOCK);
    if (rest)
        fwrite(zeros, 1, STROBE_TAR_BLOCK - rest, f);
}

/* A pax extended header with one "size" record: "<len> size=<n>\n", where
 * <len> counts the whole record including its own digits. */
static void write_pax_size(struct strobe__tar *t, const char *name, uint64_t size)
{
    char record[64];
    int body = snprintf(record, sizeof record, " size=%" PRIu64 "\n", size);
    int len = body + 1;
    while (snprintf(NULL, 0, "%d", len) + body != len)
        len++;
    snprintf(record, sizeof record, "%d size=%" PRIu64 "\n", len, size);
    char pax_name[100];
    snprintf(pax_name, sizeof pax_name, "PaxHeader/%.80s", name);
    struct ustar_header h;
    fill_header(&h, pax_name, 'x', (uint64_t)len, t->mtime);
    fwrite(&h, 1, sizeof h, t->f);
    fwrite(record, 1, (size_t)len, t->f);
    pad_to_block(t->f, (uint64_t)len);
}

void strobe__tar_init(struct strobe__tar *t, FILE *f, long mtime)
{
    memset(t, 0, sizeof *t);
    t->f = f;
    t->mtime = mtime;
}

int strobe__tar_begin(struct strobe__tar *t, const char *name, uint64_t size)
{
    struct ustar_header h;
    if (strlen(name) >= sizeof h.name)
        return -ENAMETOOLONG;
    t->size = size;
    if (size > USTAR_MAX_SIZE)
        write_pax_size(t, name, size);
    fill_header(&h, name, '0', size, t->mtime);
    fwrite(&h, 1, sizeof h, t->f);
    return 0;
}

void strobe__tar_end(struct strobe__tar *t)
{
    pad_to_block(t->f, t->size);
}

void strobe__tar_finish(struct strobe__tar *t)
{
    static const char zeros[2 * STROBE_TAR_BLOCK];
    fwrite(zeros, 1, sizeof zeros, t->f);
}
