/* SPDX-License-Identifier: MIT */
/* Region include/exclude filter: parser and matcher (see filter.h). */
#include "common/filter.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strobe/strobe.h"

struct rule {
    bool include;
    char *glob;
};

struct strobe_filter {
    struct rule *rules;
    size_t nrules;
};

static int add_rule(struct strobe_filter *f, bool include, const char *glob, size_t len)
{
    struct rule *r = realloc(f->rules, (f->nrules + 1) * sizeof *r);
    if (!r)
        return -ENOMEM;
    f->rules = r;
    r[f->nrules].include = include;
    r[f->nrules].glob = strndup(glob, len);
    if (!r[f->nrules].glob)
        return -ENOMEM;
    f->nrules++;
    return 0;
}

int strobe__filter_parse(const char *text, size_t len, const char *origin,
                         struct strobe_filter **out, char *err, size_t errlen)
{
    struct strobe_filter *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    const char *p = text, *end = text + len;
    unsigned lineno = 0;
    int rc = 0;
    while (p < end && rc == 0) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        lineno++;
        const char *q = p;
        p = eol + 1;
        /* words: keyword then globs; '#' starts a comment */
        const char *words[2] = { 0 };
        size_t wlen[2] = { 0 };
        int nwords = 0;
        bool include = false;
        while (q < eol && rc == 0) {
            while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
                q++;
            if (q >= eol || *q == '#')
                break;
            const char *w = q;
            while (q < eol && *q != ' ' && *q != '\t' && *q != '\r')
                q++;
            if (memchr(w, '\0', (size_t)(q - w))) {
                snprintf(err, errlen, "%s:%u: NUL byte in rule", origin, lineno);
                rc = STROBE_ERR_SYNTAX;
                break;
            }
            if (nwords == 0) {
                words[0] = w;
                wlen[0] = (size_t)(q - w);
                if (wlen[0] == 7 && !memcmp(w, "include", 7))
                    include = true;
                else if (wlen[0] == 7 && !memcmp(w, "exclude", 7))
                    include = false;
                else {
                    snprintf(err, errlen, "%s:%u: unknown keyword '%.*s' (expected include or exclude)",
                             origin, lineno, (int)(wlen[0] > 40 ? 40 : wlen[0]), w);
                    rc = STROBE_ERR_SYNTAX;
                    break;
                }
                nwords = 1;
            } else {
                rc = add_rule(f, include, w, (size_t)(q - w));
                nwords = 2;
            }
        }
        if (rc == 0 && nwords == 1) {
            snprintf(err, errlen, "%s:%u: '%.*s' needs at least one glob", origin, lineno,
                     (int)wlen[0], words[0]);
            rc = STROBE_ERR_SYNTAX;
        }
    }
    if (rc) {
        if (rc == -ENOMEM)
            snprintf(err, errlen, "%s: out of memory", origin);
        strobe__filter_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int strobe__filter_load(const char *path, struct strobe_filter **out, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(fp);
                snprintf(err, errlen, "%s: out of memory", path);
                return -ENOMEM;
            }
            buf = nb;
        }
        size_t n = fread(buf + len, 1, cap - len, fp);
        len += n;
        if (n == 0)
            break;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) {
        free(buf);
        snprintf(err, errlen, "%s: read error", path);
        return -EIO;
    }
    int rc = strobe__filter_parse(buf ? buf : "", len, path, out, err, errlen);
    free(buf);
    return rc;
}

bool strobe__filter_match(const struct strobe_filter *f, const char *name)
{
    bool measured = true;
    for (size_t i = 0; i < f->nrules; i++)
        if (fnmatch(f->rules[i].glob, name, 0) == 0)
            measured = f->rules[i].include;
    return measured;
}

static bool glob_special(char c)
{
    return c == '\\' || c == '*' || c == '?' || c == '[';
}

int strobe__filter_exact_glob(const char *name, char **glob)
{
    size_t specials = 0;
    if (!*name)
        return STROBE_ERR_SYNTAX;
    for (const char *p = name; *p; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            return STROBE_ERR_SYNTAX;
        specials += glob_special(*p);
    }
    if (!glob)
        return 0;
    char *g = malloc(strlen(name) + specials + 2), *o = g;
    if (!g)
        return -ENOMEM;
    if (*name == '#')
        *o++ = '\\';
    for (const char *p = name; *p; p++) {
        if (glob_special(*p))
            *o++ = '\\';
        *o++ = *p;
    }
    *o = 0;
    *glob = g;
    return 0;
}

void strobe__filter_free(struct strobe_filter *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nrules; i++)
        free(f->rules[i].glob);
    free(f->rules);
    free(f);
}
