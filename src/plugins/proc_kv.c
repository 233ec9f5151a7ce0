/* SPDX-License-Identifier: MIT */
/*
 * `meminfo` and `vmstat` samplers: /proc files of "name value [unit]"
 * lines. The schema is the file's own list of names, read at start; each
 * sample is one read of the kept-open file (procfile.h) and a single pass that
 * expects the lines in the same order (falling back to a name lookup when
 * the kernel's order differs), so a sample costs a few microseconds.
 *   keys: component_id (meta metric, default 0), instance (set name),
 *         path (default /proc/meminfo or /proc/vmstat; tests use copies)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/plugins.h"
#include "plugins/procfile.h"

struct proc_kv {
    const struct strobe_plugin_host *h;
    struct strobe__procfile file;
    strobe_set *set;
    uint32_t n;     /* data metrics (index i + 1 in the set) */
    char **names;
    size_t *nlen;
};

/* One line: name, value, optional unit. Returns the pointer after the
 * line, or NULL at the end. */
static char *parse_line(char *p, char *end, char **name, size_t *nlen, uint64_t *value, char **unit,
                        int *ok)
{
    if (p >= end)
        return NULL;
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *le = nl ? nl : end;
    *ok = 0;
    *name = p;
    char *q = p;
    while (q < le && *q != ':' && *q != ' ' && *q != '\t')
        q++;
    *nlen = (size_t)(q - p);
    if (q < le && *q == ':')
        q++;
    while (q < le && (*q == ' ' || *q == '\t'))
        q++;
    uint64_t v = 0;
    char *digits = q;
    while (q < le && *q >= '0' && *q <= '9')
        v = v * 10 + (uint64_t)(*q++ - '0');
    *value = v;
    while (q < le && *q == ' ')
        q++;
    *unit = q < le ? q : NULL;
    if (*unit)
        *le = 0; /* the unit is the rest of the line */
    *ok = *nlen > 0 && q > digits;
    return le + 1;
}

static int open_kv(const struct strobe_plugin_host *h, void **state, const char *schema_name,
                   const char *default_path)
{
    struct proc_kv *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->h = h;
    uint64_t comp;
    int rc = h->cfg_u64(h, "component_id", 0, &comp);
    const char *instance = h->cfg_str(h, "instance");
    const char *path = h->cfg_str(h, "path");
    strobe_schema *sc = NULL;
    if (rc < 0)
        goto fail;
    if ((rc = strobe__procfile_open(&s->file, h, path ? path : default_path)) < 0)
        goto fail;
    ssize_t len = strobe__procfile_read(&s->file);
    if (len < 0) {
        rc = (int)len;
        goto fail;
    }
    if ((rc = strobe_schema_new(schema_name, &sc)) < 0)
        goto fail;
    strobe_schema_add(sc, "component_id", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META);
    size_t lines = 1;
    for (ssize_t i = 0; i < len; i++)
        lines += s->file.buf[i] == '\n';
    s->names = calloc(lines, sizeof *s->names);
    s->nlen = calloc(lines, sizeof *s->nlen);
    if (!s->names || !s->nlen) {
        rc = -ENOMEM;
        goto fail;
    }
    char *p = s->file.buf, *end = s->file.buf + len, *name, *unit;
    size_t nlen;
    uint64_t v;
    int ok;
    while ((p = parse_line(p, end, &name, &nlen, &v, &unit, &ok))) {
        if (!ok)
            continue;
        char *nm = strndup(name, nlen);
        if (!nm) {
            rc = -ENOMEM;
            goto fail;
        }
        /* "kB" in meminfo; strobe_schema_add rejects duplicates, which
         * the kernel never writes */
        rc = strobe_schema_add(sc, nm, unit ? unit : "", STROBE_MT_U64, 1, 0);
        if (rc < 0) {
            free(nm);
            continue;
        }
        s->names[s->n] = nm;
        s->nlen[s->n++] = nlen;
    }
    if ((rc = strobe_set_new(sc, h->producer, instance, &s->set)) < 0) {
        if (rc == -EINVAL)
            rc = h->cfg_error(h, "instance", "not a set name");
        goto fail;
    }
    strobe_schema_free(sc);
    sc = NULL;
    strobe_set_u64(s->set, 0, 0, comp);
    if ((rc = h->set_add(h, s->set, STROBE_SET_PUBLISH)) < 0) {
        strobe_set_free(s->set);
        s->set = NULL;
        goto fail;
    }
    *state = s;
    return 0;
fail:
    strobe_schema_free(sc);
    for (uint32_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    free(s->nlen);
    strobe__procfile_close(&s->file);
    free(s);
    return rc;
}

static int sample_kv(void *state, uint64_t now_ns)
{
    struct proc_kv *s = state;
    strobe_set_begin(s->set);
    ssize_t len = strobe__procfile_read(&s->file);
    if (len < 0) {
        strobe_set_end(s->set);
        return (int)len;
    }
    char *p = s->file.buf, *end = s->file.buf + len, *name, *unit;
    size_t nlen;
    uint64_t v;
    int ok;
    uint32_t i = 0;
    while ((p = parse_line(p, end, &name, &nlen, &v, &unit, &ok))) {
        if (!ok)
            continue;
        uint32_t k = i;
        if (k >= s->n || nlen != s->nlen[k] || memcmp(name, s->names[k], nlen)) {
            /* out of order (or a line the kernel added since): look it up */
            for (k = 0; k < s->n; k++)
                if (nlen == s->nlen[k] && !memcmp(name, s->names[k], nlen))
                    break;
            if (k == s->n)
                continue;
        }
        strobe_set_u64(s->set, k + 1, 0, v);
        i = k + 1;
    }
    strobe_set_end(s->set);
    s->h->set_updated(s->h, s->set);
    return 0;
}

static void close_kv(void *state)
{
    struct proc_kv *s = state;
    for (uint32_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    free(s->nlen);
    strobe__procfile_close(&s->file);
    free(s);
}

static int open_meminfo(const struct strobe_plugin_host *h, void **state)
{
    return open_kv(h, state, "meminfo", "/proc/meminfo");
}

static int open_vmstat(const struct strobe_plugin_host *h, void **state)
{
    return open_kv(h, state, "vmstat", "/proc/vmstat");
}

const struct strobe_plugin strobe__plugin_meminfo = {
    .abi = STROBE_PLUGIN_ABI, .kind = STROBE_PLUGIN_SAMPLER, .name = "meminfo",
    .summary = "/proc/meminfo, one u64 metric per line (kB)",
    .open = open_meminfo, .sample = sample_kv, .close = close_kv,
};

const struct strobe_plugin strobe__plugin_vmstat = {
    .abi = STROBE_PLUGIN_ABI, .kind = STROBE_PLUGIN_SAMPLER, .name = "vmstat",
    .summary = "/proc/vmstat, one u64 metric per line",
    .open = open_vmstat, .sample = sample_kv, .close = close_kv,
};
