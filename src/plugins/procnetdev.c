/* SPDX-License-Identifier: MIT */
/*
 * `procnetdev` sampler: /proc/net/dev, sixteen u64 counters per network
 * interface, named "<iface>.rx_bytes", "<iface>.tx_colls" and so on. The
 * interfaces are fixed when the sampler starts (a set's layout cannot
 * change): those listed in `interfaces`, or every interface in the file
 * then except lo. An interface that is not in the file at a sample (it was
 * removed, or was listed but never existed) has its sixteen metrics marked
 * invalid until it is back. A sample is one pread() of the kept-open file
 * and one pass that expects the interfaces in the order of the last
 * sample, looking a name up only when the order changed.
 *   keys: component_id (meta metric, default 0), instance (set name),
 *         path (default /proc/net/dev; tests use fixture copies),
 *         interfaces (list of names; default all present at start but lo)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugins/plugins.h"
#include "plugins/procfile.h"

#define NCOUNTERS 16
#define MAX_IFACES 4000 /* 16 metrics each stays below STROBE_SET_MAX_METRICS */

/* The kernel's column order: eight receive, eight transmit counters. */
static const char *const counter_names[NCOUNTERS] = {
    "rx_bytes", "rx_packets", "rx_errs", "rx_drop", "rx_fifo", "rx_frame", "rx_compressed", "rx_multicast",
    "tx_bytes", "tx_packets", "tx_errs", "tx_drop", "tx_fifo", "tx_colls", "tx_carrier",    "tx_compressed",
};

struct procnetdev {
    const struct strobe_plugin_host *h;
    struct strobe__procfile file;
    strobe_set *set;
    size_t n; /* interfaces; interface i has metrics 1 + 16 i ... */
    char **names;
    size_t *nlen;
    unsigned char *seen; /* per interface, this sample */
};

/* One interface line "  name: n1 n2 ... n16". Returns the start of the
 * next line; *name and *nlen are the interface (nlen 0 for header lines) and
 * *nvals the numbers parsed into v. */
static const char *parse_line(const char *p, const char *end, const char **name, size_t *nlen,
                              uint64_t v[NCOUNTERS], int *nvals)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    *nlen = 0;
    *nvals = 0;
    /* the header lines have '|' and no ':' before it */
    const char *colon = memchr(p, ':', (size_t)(le - p));
    if (!colon)
        return le + 1;
    const char *q = p;
    while (q < colon && (*q == ' ' || *q == '\t'))
        q++;
    *name = q;
    *nlen = (size_t)(colon - q);
    q = colon + 1;
    for (int k = 0; k < NCOUNTERS; k++) {
        while (q < le && (*q == ' ' || *q == '\t'))
            q++;
        const char *d = q;
        uint64_t x = 0;
        while (q < le && *q >= '0' && *q <= '9')
            x = x * 10 + (uint64_t)(*q++ - '0');
        if (q == d)
            break;
        v[k] = x;
        ++*nvals;
    }
    return le + 1;
}

static int add_iface(struct procnetdev *s, const char *name, size_t nlen)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->nlen[i] == nlen && memcmp(s->names[i], name, nlen) == 0)
            return -EEXIST;
    if (s->n == MAX_IFACES)
        return STROBE_ERR_LIMIT;
    char **names = realloc(s->names, (s->n + 1) * sizeof *names);
    if (names)
        s->names = names;
    size_t *lens = realloc(s->nlen, (s->n + 1) * sizeof *lens);
    if (lens)
        s->nlen = lens;
    char *nm = strndup(name, nlen);
    if (!names || !lens || !nm) {
        free(nm);
        return -ENOMEM;
    }
    s->names[s->n] = nm;
    s->nlen[s->n++] = nlen;
    return 0;
}

static int iface_name_ok(const char *name)
{
    /* what a /proc/net/dev line can carry: no blanks, no ':' */
    if (!*name)
        return 0;
    for (const char *p = name; *p; p++)
        if (*p == ':' || *p == ' ' || *p == '\t' || (unsigned char)*p < 0x20)
            return 0;
    return 1;
}

static void free_procnetdev(struct procnetdev *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    free(s->nlen);
    free(s->seen);
    strobe__procfile_close(&s->file);
    free(s);
}

static int open_procnetdev(const struct strobe_plugin_host *h, void **state)
{
    struct procnetdev *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->h = h;
    uint64_t comp;
    const char *const *list;
    size_t nlist;
    strobe_schema *sc = NULL;
    const char *instance = h->cfg_str(h, "instance");
    const char *path = h->cfg_str(h, "path");
    const char *file = path ? path : "/proc/net/dev";
    int rc;
    if ((rc = h->cfg_u64(h, "component_id", 0, &comp)) < 0 ||
        (rc = h->cfg_list(h, "interfaces", &list, &nlist)) < 0)
        goto fail;
    for (size_t i = 0; i < nlist; i++) {
        if (!iface_name_ok(list[i])) {
            rc = h->cfg_error(h, "interfaces", "'%s' is not an interface name", list[i]);
            goto fail;
        }
        if ((rc = add_iface(s, list[i], strlen(list[i]))) == -EEXIST) {
            rc = h->cfg_error(h, "interfaces", "'%s' is listed twice", list[i]);
            goto fail;
        } else if (rc == STROBE_ERR_LIMIT) {
            rc = h->cfg_error(h, "interfaces", "more than %d interfaces", MAX_IFACES);
            goto fail;
        } else if (rc < 0) {
            goto fail;
        }
    }
    if ((rc = strobe__procfile_open(&s->file, h, file)) < 0)
        goto fail;
    ssize_t len = strobe__procfile_read(&s->file);
    if (len < 0) {
        rc = (int)len;
        h->log(h, STROBE_LOG_ERROR, "%s: %s", file, strerror((int)-len));
        goto fail;
    }
    if (!nlist) {
        const char *p = s->file.buf, *end = s->file.buf + len, *name;
        size_t nlen;
        uint64_t v[NCOUNTERS];
        int nv;
        while (p < end) {
            p = parse_line(p, end, &name, &nlen, v, &nv);
            if (!nlen || (nlen == 2 && memcmp(name, "lo", 2) == 0))
                continue;
            rc = add_iface(s, name, nlen);
            if (rc == STROBE_ERR_LIMIT) {
                h->log(h, STROBE_LOG_WARN,
                       "%s: more than %d interfaces; list the ones to "
                       "sample in `interfaces`",
                       file, MAX_IFACES);
                break;
            }
            if (rc < 0 && rc != -EEXIST)
                goto fail;
        }
        if (!s->n)
            h->log(h, STROBE_LOG_WARN, "%s: no interface but lo; the set has no counters", file);
    }
    if (!(s->seen = calloc(s->n + 1, 1))) {
        rc = -ENOMEM;
        goto fail;
    }
    if ((rc = strobe_schema_new("procnetdev", &sc)) < 0)
        goto fail;
    strobe_schema_add(sc, "component_id", NULL, STROBE_MT_U64, 1, STROBE_METRIC_META);
    for (size_t i = 0; i < s->n && rc >= 0; i++)
        for (int k = 0; k < NCOUNTERS && rc >= 0; k++) {
            char name[STROBE_SET_NAME_MAX + 1];
            if ((size_t)snprintf(name, sizeof name, "%s.%s", s->names[i], counter_names[k]) >= sizeof name) {
                rc = h->cfg_error(h, "interfaces", "interface name '%s' too long", s->names[i]);
                goto fail;
            }
            rc = strobe_schema_add(sc, name, k == 0 || k == 8 ? "B" : NULL, STROBE_MT_U64, 1, STROBE_METRIC_COUNTER);
        }
    if (rc >= 0)
        rc = strobe_set_new(sc, h->producer, instance, &s->set);
    strobe_schema_free(sc);
    sc = NULL;
    if (rc < 0) {
        if (rc == -EINVAL)
            rc = h->cfg_error(h, "instance", "not a set name");
        goto fail;
    }
    strobe_set_u64(s->set, 0, 0, comp);
    /* nothing sampled yet */
    for (uint32_t i = 1; i < strobe_set_card(s->set); i++)
        strobe_set_valid(s->set, i, 0);
    if ((rc = h->set_add(h, s->set, STROBE_SET_PUBLISH)) < 0) {
        strobe_set_free(s->set);
        goto fail;
    }
    *state = s;
    return 0;
fail:
    strobe_schema_free(sc);
    free_procnetdev(s);
    return rc;
}

static int sample_procnetdev(void *state, uint64_t now_ns)
{
    struct procnetdev *s = state;
    strobe_set *set = s->set;
    strobe_set_begin(set);
    ssize_t len = strobe__procfile_read(&s->file);
    if (len < 0) {
        for (uint32_t i = 1; i < strobe_set_card(set); i++)
            strobe_set_valid(set, i, 0);
        strobe_set_end(set);
        s->h->set_updated(s->h, set);
        return (int)len;
    }
    memset(s->seen, 0, s->n);
    const char *p = s->file.buf, *end = s->file.buf + len, *name;
    size_t nlen, expect = 0;
    uint64_t v[NCOUNTERS];
    int nv, bad = 0;
    while (p < end) {
        p = parse_line(p, end, &name, &nlen, v, &nv);
        if (!nlen)
            continue;
        size_t i = expect;
        if (i >= s->n || s->nlen[i] != nlen || memcmp(s->names[i], name, nlen) != 0) {
            for (i = 0; i < s->n; i++)
                if (s->nlen[i] == nlen && memcmp(s->names[i], name, nlen) == 0)
                    break;
            if (i == s->n)
                continue; /* not sampled */
        }
        expect = i + 1;
        uint32_t m = 1 + (uint32_t)i * NCOUNTERS;
        if (nv < NCOUNTERS) {
            bad = 1; /* leave it unseen: invalid */
            continue;
        }
        for (uint32_t k = 0; k < NCOUNTERS; k++)
            strobe_set_u64(set, m + k, 0, v[k]);
        s->seen[i] = 1;
    }
    for (size_t i = 0; i < s->n; i++)
        for (uint32_t k = 0; k < NCOUNTERS; k++)
            strobe_set_valid(set, 1 + (uint32_t)i * NCOUNTERS + k, s->seen[i]);
    strobe_set_end(set);
    s->h->set_updated(s->h, set);
    return bad ? STROBE_ERR_FORMAT : 0;
}

static void close_procnetdev(void *state)
{
    free_procnetdev(state);
}

const struct strobe_plugin strobe__plugin_procnetdev = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_SAMPLER,
    .name = "procnetdev",
    .summary = "/proc/net/dev: 16 counters per interface as <iface>.rx_bytes, ...",
    .open = open_procnetdev,
    .sample = sample_procnetdev,
    .close = close_procnetdev,
};
