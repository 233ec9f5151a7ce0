/* SPDX-License-Identifier: MIT */
/* Helpers shared by the store plugins (store_common.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugins/store_common.h"

int strobe__store_filter_read(const struct strobe_plugin_host *h, struct strobe__store_filter *f)
{
    int rc = h->cfg_list(h, "sets", &f->sets, &f->nsets);
    return rc < 0 ? rc : h->cfg_list(h, "schemas", &f->schemas, &f->nschemas);
}

int strobe__store_glob_match(const char *const *globs, size_t n, const char *name)
{
    if (!n)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (fnmatch(globs[i], name, 0) == 0)
            return 1;
    return 0;
}

int strobe__store_filter_match(const struct strobe__store_filter *f, const strobe_set *set)
{
    return strobe__store_glob_match(f->sets, f->nsets, strobe_set_instance(set)) &&
           strobe__store_glob_match(f->schemas, f->nschemas, strobe_set_schema_name(set));
}

int strobe__store_parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, yes[i]) == 0 || strcmp(s, no[i]) == 0) {
            *out = strcmp(s, yes[i]) == 0;
            return 0;
        }
    }
    return STROBE_ERR_SYNTAX;
}

int strobe__store_make_dir(const char *dir)
{
    char *p = strdup(dir);
    if (!p)
        return -ENOMEM;
    int rc = 0;
    for (char *q = p + 1;; q++) {
        if (*q != '/' && *q)
            continue;
        char c = *q;
        *q = 0;
        if (mkdir(p, 0755) < 0 && errno != EEXIST) {
            rc = -errno;
            break;
        }
        *q = c;
        if (!c)
            break;
    }
    free(p);
    struct stat st;
    if (rc == 0 && (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)))
        rc = -ENOTDIR;
    return rc;
}
