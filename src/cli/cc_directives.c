/* SPDX-License-Identifier: MIT */
/*
 * `strobe cc`'s directive step (cc_directives.h). A source is parsed only
 * when its text mentions a pragma (or, with -fopenmp, an OpenMP lock
 * call), so files without directives cost nothing. libclang gets the
 * arguments that change how the file parses (include paths, macros, the
 * language standard, OpenMP and TM), not the compiler's others, which it
 * may not know. A file libclang cannot parse is compiled as it is, with
 * one line saying its directives are not measured.
 */
#define _GNU_SOURCE
#include "cli/cc_directives.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "export/output.h"
#include "strobe/strobe.h"
#ifdef STROBE_HAVE_INSTRUMENT
#include "instrument/instrument.h"
#endif

/* Options whose value is the next argument. */
static bool takes_value(const char *a)
{
    static const char *const opts[] = {
        "-o",  "-I",  "-D", "-U", "-include", "-imacros",       "-isystem",    "-iquote", "-idirafter", "-MF",
        "-MT", "-MQ", "-x", "-L", "-Xlinker", "-Xpreprocessor", "-Xassembler", "-T",      "-aux-info",  "-z"};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        if (strcmp(a, opts[i]) == 0)
            return true;
    return false;
}

/* Whether the argument changes how a file parses (kept for libclang);
 * *value: the next argument goes too. */
static bool parse_arg(const char *a, bool *value)
{
    static const char *const sep[] = {"-I",       "-D",       "-U",      "-include",
                                      "-imacros", "-isystem", "-iquote", "-idirafter"};
    static const char *const prefix[] = {"-I", "-D", "-U", "-std=", "-fopenmp", "-O", "-isystem", "-iquote"};
    static const char *const whole[] = {"-fgnu-tm", "-ansi",           "-m32",          "-m64",
                                        "-pthread", "-funsigned-char", "-fsigned-char", "-nostdinc"};
    *value = false;
    for (size_t i = 0; i < sizeof sep / sizeof *sep; i++)
        if (strcmp(a, sep[i]) == 0)
            return *value = true;
    for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++)
        if (strncmp(a, prefix[i], strlen(prefix[i])) == 0)
            return true;
    for (size_t i = 0; i < sizeof whole / sizeof *whole; i++)
        if (strcmp(a, whole[i]) == 0)
            return true;
    return false;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* The whole text of the file at path (NULL: unreadable or empty). */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t cap = 0;
    if (getdelim(&text, &cap, 0, f) <= 0) {
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}

/* Whether the file's text may hold a directive (a cheap look before a
 * parse): "pragma" (#pragma, _Pragma), or with OpenMP a lock call. */
static bool may_hold_directive(const char *path, bool omp)
{
    char *text = read_text(path);
    bool yes = text && (strstr(text, "pragma") || (omp && strstr(text, "omp_set_")));
    free(text);
    return yes;
}

static char *own(struct strobe__cc_copies *c, char *s)
{
    if (!s)
        return NULL;
    char **o = realloc(c->owned, (c->nowned + 1) * sizeof *o);
    if (!o) {
        free(s);
        return NULL;
    }
    c->owned = o;
    c->owned[c->nowned++] = s;
    return s;
}

/* strobe's include folder: next to the installed program, else the
 * source tree this strobe was built from. */
static char *include_dir(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        char *dir = NULL, probe[PATH_MAX + 64];
        if (asprintf(&dir, "%s/../" STROBE_INSTALL_INCLUDEDIR, exe) >= 0) {
            snprintf(probe, sizeof probe, "%s/strobe/strobe.h", dir);
            if (access(probe, R_OK) == 0)
                return dir;
            free(dir);
        }
    }
    return strdup(STROBE_SOURCE_INCLUDEDIR);
}

/* The dependency files the compiler writes for `src` (-MD/-MMD, -MF). */
static int note_deps(struct strobe__cc_copies *c, char **args, size_t n, size_t first, const char *src)
{
    bool md = false;
    const char *mf = NULL, *out = NULL;
    for (size_t i = first; i < n; i++) {
        if (strcmp(args[i], "-MD") == 0 || strcmp(args[i], "-MMD") == 0)
            md = true;
        else if (strcmp(args[i], "-MF") == 0 && i + 1 < n)
            mf = args[i + 1];
        else if (strcmp(args[i], "-o") == 0 && i + 1 < n)
            out = args[i + 1];
    }
    if (!md && !mf)
        return 0;
    char *d = NULL;
    if (mf)
        d = strdup(mf);
    else {
        /* gcc and clang: the object's name with .d, else the source's
         * base name with .d in the current folder */
        const char *base = out ? out : strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
        const char *dot = strrchr(base, '.');
        if (asprintf(&d, "%.*s.d", (int)(dot && !strchr(dot, '/') ? (size_t)(dot - base) : strlen(base)),
                     base) < 0)
            d = NULL;
    }
    for (size_t i = 0; d && i < c->ndeps; i++)
        if (strcmp(c->deps[i], d) == 0) { /* one file for several sources (-MF) */
            free(d);
            return 0;
        }
    char **nd = d ? realloc(c->deps, (c->ndeps + 1) * sizeof *nd) : NULL;
    if (!nd) {
        free(d);
        return -ENOMEM;
    }
    c->deps = nd;
    c->deps[c->ndeps++] = d;
    return 0;
}

#ifdef STROBE_HAVE_INSTRUMENT
/* Instruments src into the folder; 0 (*copy set, or NULL when libclang
 * could not parse it), or an exit status after saying why. */
static int instrument_one(const char *cmd, struct strobe__cc_copies *c, const char *src,
                          const char *const *pargs, int npargs, char **copy)
{
    const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
    char *sub = NULL;
    *copy = NULL;
    /* one folder per source: two sources may share a base name */
    if (asprintf(&sub, "%s/%zu", c->dir, c->n) < 0 || mkdir(sub, 0700) != 0 ||
        asprintf(copy, "%s/%s", sub, base) < 0) {
        strobe__cli_say("%s: %s: cannot make a copy to instrument: %s", cmd, src, strerror(errno));
        free(sub);
        return STROBE_EXIT_FAILURE;
    }
    free(sub);
    struct strobe_errbuf eb = {""};
    int rc = strobe__instrument_file(src, *copy, pargs, npargs, &eb);
    if (rc == STROBE_ERR_SYNTAX) {
        strobe__cli_say("%s: %s", cmd, eb.msg);
        free(*copy);
        *copy = NULL;
        return STROBE_EXIT_USAGE;
    }
    if (rc) {
        strobe__cli_say("%s: %s: directives not measured, compiled as it is (%s)", cmd, src,
                        eb.msg[0] ? eb.msg : strobe_strerror(rc));
        free(*copy);
        *copy = NULL;
    }
    return 0;
}
#endif

int strobe__cc_directives(const char *cmd, char **args, size_t *n, size_t first, struct strobe__cc_copies *c)
{
    size_t end = *n;
    bool omp = false;
    for (size_t i = first; i < end; i++) {
        if (strcmp(args[i], "-x") == 0)
            return 0; /* a language of the user's choice: the file names say nothing */
        omp |= strncmp(args[i], "-fopenmp", 8) == 0;
    }
    const char **pargs = calloc(end + 1, sizeof *pargs);
    if (!pargs) {
        strobe__cli_say("%s: out of memory", cmd);
        return STROBE_EXIT_FAILURE;
    }
    int npargs = 0;
    for (size_t i = first; i < end; i++) {
        bool value;
        if (parse_arg(args[i], &value)) {
            pargs[npargs++] = args[i];
            if (value && i + 1 < end)
                pargs[npargs++] = args[++i];
        } else if (takes_value(args[i])) {
            i++;
        }
    }
    int rc = 0;
    bool added = false;
    for (size_t i = first; i < end && rc == 0; i++) {
        if (takes_value(args[i])) {
            i++;
            continue;
        }
        const char *src = args[i];
        if (src[0] == '-' || !ends_with(src, ".c") || !may_hold_directive(src, omp))
            continue;
#ifdef STROBE_HAVE_INSTRUMENT
        if (!c->dir) {
            const char *tmp = getenv("TMPDIR");
            char *dir = NULL;
            if (asprintf(&dir, "%s/strobe-cc.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0 || !mkdtemp(dir)) {
                strobe__cli_say("%s: cannot make a temporary folder: %s", cmd, strerror(errno));
                free(dir);
                rc = STROBE_EXIT_FAILURE;
                break;
            }
            c->dir = dir;
        }
        char *copy;
        rc = instrument_one(cmd, c, src, pargs, npargs, &copy);
        if (rc || !copy)
            continue;
        struct strobe__cc_copy *f = realloc(c->files, (c->n + 1) * sizeof *f);
        char *orig = strdup(src), *dir = strdup(src), *slash;
        if (!f || !orig || !dir || note_deps(c, args, end, first, src) != 0) {
            if (f)
                c->files = f;
            free(orig), free(dir), free(copy);
            strobe__cli_say("%s: out of memory", cmd);
            rc = STROBE_EXIT_FAILURE;
            break;
        }
        c->files = f;
        c->files[c->n++] = (struct strobe__cc_copy){orig, copy};
        args[i] = copy;
        /* quoted #includes of the original's folder, searched before the
         * user's -iquote folders as the original's own folder would be:
         * in front of the user's arguments */
        slash = strrchr(dir, '/');
        if (slash)
            slash[slash == dir] = 0;
        else
            strcpy(dir, ".");
        memmove(args + first + 2, args + first, (*n - first) * sizeof *args);
        args[first] = "-iquote";
        args[first + 1] = own(c, dir) ? dir : ".";
        *n += 2;
        end += 2;
        i += 2;
        added = true;
#else
        strobe__cli_say("%s: %s: directives not measured: strobe was built without libclang 14 (Debian "
                        "libclang-14-dev)",
                        cmd, src);
#endif
    }
    if (rc == 0 && added) {
        char *inc = own(c, include_dir()), *flag = NULL;
        if (inc && asprintf(&flag, "-I%s", inc) >= 0 && own(c, flag))
            args[(*n)++] = flag;
    }
    free(pargs);
    return rc;
}

/* Rewrites the dependency file at path (all or nothing) so that it names
 * the originals instead of the copies, in one pass over its text. */
static void fix_deps(const char *path, const struct strobe__cc_copies *c)
{
    char *text = read_text(path);
    bool names_copy = false;
    for (size_t i = 0; text && i < c->n; i++)
        names_copy |= strstr(text, c->files[i].copy) != NULL;
    struct strobe__out_file o;
    struct strobe_errbuf eb;
    if (names_copy && strobe__out_file_open(&o, path, &eb) == 0) {
        for (const char *p = text; *p;) {
            size_t i = 0;
            while (i < c->n && strncmp(p, c->files[i].copy, strlen(c->files[i].copy)) != 0)
                i++;
            if (i < c->n) {
                fputs(c->files[i].orig, o.f);
                p += strlen(c->files[i].copy);
            } else {
                fputc(*p++, o.f);
            }
        }
        strobe__out_file_commit(&o, &eb); /* a failure leaves the compiler's file */
    }
    free(text);
}

void strobe__cc_directives_done(struct strobe__cc_copies *c)
{
    for (size_t d = 0; d < c->ndeps; d++) {
        fix_deps(c->deps[d], c);
        free(c->deps[d]);
    }
    free(c->deps);
    if (c->dir)
        strobe__remove_tree(c->dir);
    for (size_t i = 0; i < c->n; i++) {
        free(c->files[i].orig);
        free(c->files[i].copy);
    }
    free(c->files);
    for (size_t i = 0; i < c->nowned; i++)
        free(c->owned[i]);
    free(c->owned);
    free(c->dir);
}
