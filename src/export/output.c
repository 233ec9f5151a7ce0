/* SPDX-License-Identifier: MIT */
/*
 * Temporary-name-then-rename output files and directories (see output.h).
 */
#define _GNU_SOURCE
#include "export/output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_BUFFER_SIZE (1u << 20)

/* "<path>.tmp-<pid>-<n>" for the first n that does not exist yet, created by
 * make (O_EXCL file or mkdir). Returns 0, or -errno from make. */
static int make_temp(const char *path, char **tmp_out, int (*make)(const char *, void *), void *arg)
{
    size_t len = strlen(path) + 64;
    char *tmp = malloc(len);
    if (!tmp)
        return -ENOMEM;
    for (unsigned n = 0; n < 1000; n++) {
        snprintf(tmp, len, "%s.tmp-%ld-%u", path, (long)getpid(), n);
        int rc = make(tmp, arg);
        if (rc == 0) {
            *tmp_out = tmp;
            return 0;
        }
        if (rc != -EEXIST) {
            free(tmp);
            return rc;
        }
    }
    free(tmp);
    return -EEXIST;
}

static int make_file(const char *tmp, void *arg)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return -errno;
    *(int *)arg = fd;
    return 0;
}

static int make_dir(const char *tmp, void *arg)
{
    (void)arg;
    return mkdir(tmp, 0777) == 0 ? 0 : -errno;
}

int strobe__out_file_open(struct strobe__out_file *o, const char *path, struct strobe_errbuf *eb)
{
    memset(o, 0, sizeof *o);
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return strobe__error(eb, -EISDIR, "%s: is a directory", path);
    int direct = exists && !S_ISREG(st.st_mode);
    /* Replace the file a symbolic link points to, not the link. */
    char *target = direct ? NULL : realpath(path, NULL);
    o->path = target ? target : strdup(path);
    o->name = strdup(path);
    if (!o->path || !o->name) {
        strobe__out_file_abort(o);
        return strobe__error(eb, -ENOMEM, "%s: out of memory", path);
    }
    int fd = -1, rc;
    if (direct) {
        fd = open(path, O_WRONLY | O_CLOEXEC);
        rc = fd < 0 ? -errno : 0;
    } else {
        rc = make_temp(o->path, &o->tmp, make_file, &fd);
    }
    if (rc < 0) {
        strobe__out_file_abort(o);
        return strobe__error(eb, rc, "%s: cannot create: %s", path, strerror(-rc));
    }
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        rc = -errno;
        close(fd);
        strobe__out_file_abort(o);
        return strobe__error(eb, rc, "%s: cannot create: %s", path, strerror(-rc));
    }
    setvbuf(o->f, NULL, _IOFBF, OUT_BUFFER_SIZE);
    return 0;
}

int strobe__out_file_commit(struct strobe__out_file *o, struct strobe_errbuf *eb)
{
    int rc = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        rc = -(errno ? errno : EIO);
    else if (o->tmp && fsync(fileno(o->f)) != 0)
        rc = -errno;
    if (rc == 0) {
        FILE *f = o->f;
        o->f = NULL;
        if (fclose(f) != 0)
            rc = -errno;
        else if (o->tmp && rename(o->tmp, o->path) != 0)
            rc = -errno;
    }
    if (rc < 0) {
        strobe__error(eb, rc, "%s: cannot write: %s", o->name, strerror(-rc));
        strobe__out_file_abort(o);
        return rc;
    }
    free(o->tmp);
    free(o->path);
    free(o->name);
    o->tmp = o->path = o->name = NULL;
    return 0;
}

void strobe__out_file_abort(struct strobe__out_file *o)
{
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    free(o->name);
    memset(o, 0, sizeof *o);
}

/* 1 = path is a directory without entries, 0 = it is not, -errno = error. */
static int is_empty_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return errno == ENOTDIR ? 0 : -errno;
    int empty = 1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            empty = 0;
            break;
        }
    }
    closedir(d);
    return empty;
}

/* 0 when OUT may be created or replaced, else -errno with a message. */
static int check_dir_target(const char *path, struct strobe_errbuf *eb)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        return strobe__error(eb, -errno, "%s: %s", path, strerror(errno));
    }
    int empty = S_ISDIR(st.st_mode) ? is_empty_dir(path) : 0;
    if (empty < 0)
        return strobe__error(eb, empty, "%s: %s", path, strerror(-empty));
    if (!empty)
        return strobe__error(eb, -EEXIST, "%s: already exists and is not an empty directory", path);
    return 0;
}

int strobe__out_dir_open(struct strobe__out_dir *o, const char *path, struct strobe_errbuf *eb)
{
    memset(o, 0, sizeof *o);
    int rc = check_dir_target(path, eb);
    if (rc < 0)
        return rc;
    o->path = strdup(path);
    if (!o->path)
        return strobe__error(eb, -ENOMEM, "%s: out of memory", path);
    rc = make_temp(path, &o->tmp, make_dir, NULL);
    if (rc < 0) {
        free(o->path);
        o->path = NULL;
        return strobe__error(eb, rc, "%s: cannot create: %s", path, strerror(-rc));
    }
    return 0;
}

int strobe__out_dir_commit(struct strobe__out_dir *o, struct strobe_errbuf *eb)
{
    int rc = check_dir_target(o->path, eb);
    if (rc == 0 && rmdir(o->path) != 0 && errno != ENOENT)
        rc = strobe__error(eb, -errno, "%s: cannot replace: %s", o->path, strerror(errno));
    if (rc == 0 && rename(o->tmp, o->path) != 0)
        rc = strobe__error(eb, -errno, "%s: cannot create: %s", o->path, strerror(errno));
    if (rc < 0) {
        strobe__out_dir_abort(o);
        return rc;
    }
    free(o->tmp);
    free(o->path);
    o->tmp = o->path = NULL;
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    remove(path);
    return 0;
}

void strobe__remove_tree(const char *path)
{
    /* FTW_PHYS: never follow symbolic links */
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void strobe__out_dir_abort(struct strobe__out_dir *o)
{
    /* Only ever called on the directory this module created, so deleting
     * its whole tree is safe. */
    if (o->tmp)
        strobe__remove_tree(o->tmp);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
}
