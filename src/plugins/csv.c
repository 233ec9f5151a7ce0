/* SPDX-License-Identifier: MIT */
/*
 * `csv` store: one CSV file per schema, one row per set update, in the
 * spirit of LDMS store_csv (docs/plugins.md, "csv", gives the format
 * exactly). The file for schema S is <path>/S.csv; a set whose schema is
 * called S but has another layout (another schema checksum) than the one
 * first seen under that name since the store started goes to
 * <path>/S-<8 hex>.csv, the first 8 of the checksum's 16 hex digits, so
 * the columns of a file never change meaning.
 *
 * Rows are built in a scratch buffer, appended whole to a per-file
 * user-space buffer and written with write(2) when it holds 64 KiB, when
 * the file rolls and at flush(), which the daemon calls every
 * flush_interval (default 1 s); with `fsync: true` flush() and a roll also
 * fsync(2) what was written, so the rows reach the disk, not only the page
 * cache, before the next flush interval. A row is never cut: when a write fails
 * (disk full, I/O error) the file is truncated back to the end of the last
 * row that was written completely, the rows that were not are dropped and
 * counted, and the error is logged once until writes succeed again. A
 * file that exists when the store first opens it is renamed aside like a
 * rolled file, so a new header never lands in the middle of an old file.
 *   keys: path (directory, created if missing; required),
 *         sets (globs on instance names; default all),
 *         schemas (globs on schema names; default all),
 *         roll_bytes (size: 100000, 64k, 64M, 1G; 0 = never),
 *         roll_interval (duration; 0 = never), header (true/false),
 *         fsync (true/false, default false).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/size.h"
#include "plugins/plugins.h"
#include "plugins/store_common.h"

#define WRITE_AT (64u * 1024) /* pending bytes that trigger a write */

/* A growable byte string. */
struct csv_buf {
    char *p;
    size_t len, cap;
};

static int buf_reserve(struct csv_buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + more)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p)
        return -ENOMEM;
    b->p = p;
    b->cap = cap;
    return 0;
}

static int buf_put(struct csv_buf *b, const char *s, size_t n)
{
    if (buf_reserve(b, n) < 0)
        return -ENOMEM;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return 0;
}

static int buf_putc(struct csv_buf *b, char c)
{
    return buf_put(b, &c, 1);
}

/* RFC 4180: a field with a comma, quote or line break is enclosed in
 * quotes, inner quotes doubled; `always` quotes regardless, for char
 * metrics, so that an empty string ("") differs from an invalid value (). */
static int buf_field(struct csv_buf *b, const char *s, int always)
{
    if (!always && !s[strcspn(s, ",\"\r\n")])
        return buf_put(b, s, strlen(s));
    int rc = buf_putc(b, '"');
    for (const char *q; rc == 0 && (q = strchr(s, '"')); s = q + 1)
        if ((rc = buf_put(b, s, (size_t)(q - s) + 1)) == 0)
            rc = buf_putc(b, '"');
    if (rc == 0)
        rc = buf_put(b, s, strlen(s));
    return rc ? rc : buf_putc(b, '"');
}

static int buf_u64(struct csv_buf *b, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do
        tmp[sizeof tmp - ++n] = (char)('0' + v % 10);
    while ((v /= 10));
    return buf_put(b, tmp + sizeof tmp - n, n);
}

/* One output file (one schema layout). */
struct csv_file {
    char *schema;
    uint64_t sum;
    char *path;
    int fd;             /* -1: not open (not yet, rolled, or broken) */
    struct csv_buf out; /* complete rows (and a header) not yet written */
    size_t header_end;  /* bytes of `out` that are the header, 0 if none */
    size_t *row_end;    /* end offset in `out` of each pending row */
    size_t rows, rowcap;
    uint64_t size;      /* bytes in the file on disk */
    uint64_t nrows;     /* rows in the current file, on disk or pending */
    uint64_t first_sec; /* timestamp (s) of its first row: the roll suffix */
    uint64_t bucket;    /* roll_interval period of its first row */
    int unsynced;       /* bytes were written since the last fsync */
    int failing;        /* an error was logged; log again only on recovery */
    uint64_t lost;      /* rows dropped during the current failure */
};

struct csv {
    const struct strobe_plugin_host *h;
    char *dir;
    struct strobe__store_filter filter;
    uint64_t roll_bytes, roll_ns;
    int header, fsync;
    struct csv_file **files;
    size_t nfiles;
    struct csv_buf row;
    uint64_t errors, dropped, skipped;
};

/* ---- files ---------------------------------------------------------------------- */

static void file_free(struct csv_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    free(f->schema);
    free(f->path);
    free(f->out.p);
    free(f->row_end);
    free(f);
}

static void note_error(struct csv *s, struct csv_file *f, const char *what, int err)
{
    s->errors++;
    if (!f->failing)
        s->h->log(s->h, STROBE_LOG_ERROR, "%s: %s: %s; rows are dropped (and counted) until it works again",
                  f->path, what, strerror(err));
    f->failing = 1;
}

static void drop_pending(struct csv *s, struct csv_file *f, size_t from_row)
{
    uint64_t n = f->rows - from_row;
    s->dropped += n;
    f->lost += n;
    f->nrows -= n;
    f->rows = from_row;
}

/* Write the pending bytes. On failure the file is cut back to the last
 * row boundary that reached it, so it only ever holds whole rows. */
static int file_write(struct csv *s, struct csv_file *f)
{
    if (!f->out.len)
        return 0;
    size_t off = 0;
    int err = 0;
    while (off < f->out.len) {
        ssize_t n = write(f->fd, f->out.p + off, f->out.len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = n < 0 ? errno : EIO;
            break;
        }
        off += (size_t)n;
    }
    if (!err) {
        f->unsynced = 1;
        f->size += off;
        f->out.len = 0;
        f->header_end = 0;
        f->rows = 0;
        if (f->failing) {
            s->h->log(s->h, STROBE_LOG_INFO, "%s: writing again; %" PRIu64 " row(s) were lost", f->path,
                      f->lost);
            f->failing = 0;
            f->lost = 0;
        }
        return 0;
    }
    size_t keep = off >= f->header_end ? f->header_end : 0, r = 0;
    while (r < f->rows && f->row_end[r] <= off)
        keep = f->row_end[r++];
    note_error(s, f, "write", err);
    drop_pending(s, f, r);
    if (off > keep && ftruncate(f->fd, (off_t)(f->size + keep)) < 0) {
        /* a torn row stays; never append after it: the next open renames
         * this file aside */
        s->h->log(s->h, STROBE_LOG_ERROR, "%s: cannot cut a partly written row: %s", f->path,
                  strerror(errno));
        close(f->fd);
        f->fd = -1;
    }
    f->unsynced = 1;
    f->size += keep;
    f->out.len = 0;
    f->header_end = 0;
    f->rows = 0;
    return -err;
}

/* Write the pending bytes and, with `fsync: true`, push them to the disk. */
static int file_sync(struct csv *s, struct csv_file *f)
{
    int rc = file_write(s, f);
    if (s->fsync && f->fd >= 0 && f->unsynced) {
        if (fsync(f->fd) < 0) {
            int e = errno;
            note_error(s, f, "fsync", e);
            return rc ? rc : -e;
        }
        f->unsynced = 0;
    }
    return rc;
}

/* Rename an existing file aside as <path>.<sec>, .<sec>.1, ... */
static int rename_aside(struct csv *s, struct csv_file *f, uint64_t sec)
{
    size_t cap = strlen(f->path) + 48;
    char *to = malloc(cap);
    if (!to)
        return -ENOMEM;
    int rc = -EEXIST;
    for (unsigned k = 0; k < 1000 && rc == -EEXIST; k++) {
        if (k)
            snprintf(to, cap, "%s.%" PRIu64 ".%u", f->path, sec, k);
        else
            snprintf(to, cap, "%s.%" PRIu64, f->path, sec);
        if (access(to, F_OK) == 0)
            continue;
        rc = rename(f->path, to) < 0 ? -errno : 0;
    }
    if (rc < 0)
        note_error(s, f, "rename", -rc);
    free(to);
    return rc;
}

static void file_close(struct csv *s, struct csv_file *f)
{
    if (f->fd >= 0) {
        file_sync(s, f);
        if (f->fd >= 0 && close(f->fd) < 0)
            note_error(s, f, "close", errno);
    }
    f->fd = -1;
    f->size = 0;
    f->nrows = 0;
}

static int file_roll(struct csv *s, struct csv_file *f)
{
    file_close(s, f);
    return rename_aside(s, f, f->first_sec);
}

/* Open a fresh file at f->path; an existing non-empty one is renamed
 * aside under its modification time. */
static int file_open(struct csv *s, struct csv_file *f)
{
    struct stat st;
    if (stat(f->path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        int rc = rename_aside(s, f, (uint64_t)st.st_mtime);
        if (rc < 0)
            return rc;
    }
    f->fd = open(f->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (f->fd < 0) {
        int e = errno;
        note_error(s, f, "open", e);
        return -e;
    }
    f->size = 0;
    f->nrows = 0;
    return 0;
}

static int header_line(struct csv_buf *b, const strobe_set *set)
{
    int rc = buf_put(b, "#time,producer,instance", 23);
    char name[STROBE_SET_NAME_MAX + 16];
    for (uint32_t i = 0; rc == 0 && i < strobe_set_card(set); i++) {
        const char *m = strobe_set_metric_name(set, i);
        int expand = (strobe_set_metric_flags(set, i) & STROBE_METRIC_ARRAY) &&
                     strobe_set_metric_type(set, i) != STROBE_MT_CHAR;
        uint32_t n = expand ? strobe_set_metric_count(set, i) : 1;
        for (uint32_t j = 0; rc == 0 && j < n; j++) {
            if (expand)
                snprintf(name, sizeof name, "%s[%" PRIu32 "]", m, j);
            if ((rc = buf_putc(b, ',')) == 0)
                rc = buf_field(b, expand ? name : m, 0);
        }
    }
    return rc ? rc : buf_putc(b, '\n');
}

static struct csv_file *file_for(struct csv *s, const strobe_set *set)
{
    const char *schema = strobe_set_schema_name(set);
    uint64_t sum = strobe_set_schema_sum(set);
    int taken = 0;
    for (size_t i = 0; i < s->nfiles; i++) {
        struct csv_file *f = s->files[i];
        if (strcmp(f->schema, schema) != 0)
            continue;
        if (f->sum == sum)
            return f;
        taken = 1;
    }
    struct csv_file **v = realloc(s->files, (s->nfiles + 1) * sizeof *v);
    if (!v)
        return NULL;
    s->files = v;
    struct csv_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->fd = -1;
    f->sum = sum;
    size_t cap = strlen(s->dir) + strlen(schema) + 16;
    if (!(f->path = malloc(cap)) || !(f->schema = strdup(schema))) {
        file_free(f);
        return NULL;
    }
    if (taken)
        snprintf(f->path, cap, "%s/%s-%08" PRIx32 ".csv", s->dir, schema, (uint32_t)(sum >> 32));
    else
        snprintf(f->path, cap, "%s/%s.csv", s->dir, schema);
    s->files[s->nfiles++] = f;
    return f;
}

/* ---- rows ------------------------------------------------------------------------ */

static int row_line(struct csv_buf *b, const strobe_set *set)
{
    uint64_t ts = strobe_set_timestamp(set);
    char tmp[64];
    int n =
        snprintf(tmp, sizeof tmp, "%" PRIu64 ".%06" PRIu64 ",", ts / 1000000000u, ts % 1000000000u / 1000u);
    int rc = buf_put(b, tmp, (size_t)n);
    if (rc == 0 && (rc = buf_field(b, strobe_set_producer(set), 0)) == 0 && (rc = buf_putc(b, ',')) == 0)
        rc = buf_field(b, strobe_set_instance(set), 0);
    for (uint32_t i = 0; rc == 0 && i < strobe_set_card(set); i++) {
        enum strobe_metric_type t = strobe_set_metric_type(set, i);
        int valid = strobe_set_is_valid(set, i);
        if (t == STROBE_MT_CHAR) {
            if ((rc = buf_putc(b, ',')) == 0 && valid)
                rc = buf_field(b, strobe_set_get_str(set, i), 1);
            continue;
        }
        uint32_t cnt = strobe_set_metric_count(set, i);
        for (uint32_t j = 0; rc == 0 && j < cnt; j++) {
            if ((rc = buf_putc(b, ',')) || !valid)
                continue;
            switch (t) {
            case STROBE_MT_S8:
            case STROBE_MT_S16:
            case STROBE_MT_S32:
            case STROBE_MT_S64: {
                int64_t v = strobe_set_get_s64(set, i, j);
                if (v < 0 && (rc = buf_putc(b, '-')) == 0)
                    rc = buf_u64(b, (uint64_t)0 - (uint64_t)v);
                else if (v >= 0)
                    rc = buf_u64(b, (uint64_t)v);
                break;
            }
            case STROBE_MT_F32:
            case STROBE_MT_D64:
                /* shortest text that reads back as the same value */
                if ((rc = strobe_set_format_value(set, i, j, tmp, sizeof tmp)) == 0)
                    rc = buf_put(b, tmp, strlen(tmp));
                break;
            default:
                rc = buf_u64(b, strobe_set_get_u64(set, i, j));
                break;
            }
        }
    }
    return rc ? rc : buf_putc(b, '\n');
}

static int append_row(struct csv *s, struct csv_file *f, const strobe_set *set)
{
    uint64_t ts = strobe_set_timestamp(set);
    uint64_t pending = f->out.len;
    if (f->nrows && s->roll_ns && ts / s->roll_ns != f->bucket)
        file_roll(s, f);
    else if (f->nrows && s->roll_bytes && f->size + pending + s->row.len > s->roll_bytes)
        file_roll(s, f);
    if (f->fd < 0 && file_open(s, f) < 0) {
        s->dropped++;
        f->lost++;
        return 0;
    }
    int rc = 0;
    if (s->header && f->size == 0 && f->out.len == 0) {
        /* a new file, or one whose header was lost to a failed write */
        if ((rc = header_line(&f->out, set)) < 0)
            return rc;
        f->header_end = f->out.len;
    }
    if (f->rows == f->rowcap) {
        size_t cap = f->rowcap ? f->rowcap * 2 : 64;
        size_t *v = realloc(f->row_end, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        f->row_end = v;
        f->rowcap = cap;
    }
    if ((rc = buf_put(&f->out, s->row.p, s->row.len)) < 0)
        return rc;
    f->row_end[f->rows++] = f->out.len;
    if (!f->nrows++) {
        f->first_sec = ts / 1000000000u;
        f->bucket = s->roll_ns ? ts / s->roll_ns : 0;
    }
    if (f->out.len >= WRITE_AT)
        file_write(s, f);
    return 0;
}

static int update_csv(void *state, const strobe_set *set)
{
    struct csv *s = state;
    if (!strobe__store_filter_match(&s->filter, set))
        return 0;
    if (!strobe_set_is_consistent(set)) {
        /* half-written (or never written) data is not a row */
        s->skipped++;
        return 0;
    }
    struct csv_file *f = file_for(s, set);
    if (!f)
        return -ENOMEM;
    s->row.len = 0;
    int rc = row_line(&s->row, set);
    if (rc == 0)
        rc = append_row(s, f, set);
    if (rc < 0) {
        s->errors++;
        s->dropped++;
    }
    return rc;
}

static int flush_csv(void *state)
{
    struct csv *s = state;
    int rc = 0;
    for (size_t i = 0; i < s->nfiles; i++) {
        struct csv_file *f = s->files[i];
        if (f->fd >= 0) {
            int r = file_sync(s, f);
            if (r < 0 && rc == 0)
                rc = r;
        }
    }
    return rc;
}

static void close_csv(void *state)
{
    struct csv *s = state;
    for (size_t i = 0; i < s->nfiles; i++) {
        file_close(s, s->files[i]);
        file_free(s->files[i]);
    }
    if (s->errors)
        s->h->log(s->h, STROBE_LOG_WARN, "%" PRIu64 " error(s), %" PRIu64 " row(s) dropped", s->errors,
                  s->dropped);
    free(s->files);
    free(s->row.p);
    free(s->dir);
    free(s);
}

static int open_csv(const struct strobe_plugin_host *h, void **state)
{
    struct csv *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->h = h;
    s->header = 1;
    const char *dir = h->cfg_str(h, "path");
    const char *rb = h->cfg_str(h, "roll_bytes");
    const char *hd = h->cfg_str(h, "header");
    const char *fs = h->cfg_str(h, "fsync");
    int rc;
    if ((rc = strobe__store_filter_read(h, &s->filter)) < 0 ||
        (rc = h->cfg_duration(h, "roll_interval", 0, &s->roll_ns)) < 0)
        goto fail;
    if (!dir || !*dir) {
        rc = h->cfg_error(h, NULL, "`path` (the output directory) is required");
        goto fail;
    }
    if (rb && strobe__parse_size(rb, &s->roll_bytes) < 0) {
        rc = h->cfg_error(h, "roll_bytes", "'%s' is not a size (e.g. 100000, 64k, 64M, 1G)", rb);
        goto fail;
    }
    if (hd && strobe__store_parse_bool(hd, &s->header) < 0) {
        rc = h->cfg_error(h, "header", "'%s': expected true or false", hd);
        goto fail;
    }
    if (fs && strobe__store_parse_bool(fs, &s->fsync) < 0) {
        rc = h->cfg_error(h, "fsync", "'%s': expected true or false", fs);
        goto fail;
    }
    if ((rc = strobe__store_make_dir(dir)) < 0) {
        h->log(h, STROBE_LOG_ERROR, "%s: %s", dir, strerror(-rc));
        goto fail;
    }
    if (!(s->dir = strdup(dir))) {
        rc = -ENOMEM;
        goto fail;
    }
    *state = s;
    return 0;
fail:
    free(s);
    return rc;
}

const struct strobe_plugin strobe__plugin_csv = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_STORE,
    .name = "csv",
    .summary = "one CSV file per schema, one row per update, rolled by size or time",
    .open = open_csv,
    .update = update_csv,
    .flush = flush_csv,
    .close = close_csv,
};
