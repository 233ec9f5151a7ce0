/* SPDX-License-Identifier: MIT */
/*
 * `shm` sampler: the sets that applications publish through the POSIX
 * shared-memory index (include/strobe/shm.h, seed 002 chapter 4). At
 * every sample it rescans the index (cheap when its generation did not
 * change), keeps one daemon-owned copy ("box") per published set and
 * fills it with a consistent snapshot of the application's values, so
 * the server, aggregators, transforms and stores never read application
 * memory directly and an application cannot change a set under them.
 *   keys: index (default $STROBE_SHM_INDEX or strobe-<uid>),
 *         timeout (writer silence after which a set is dropped; default
 *         30s, 0 = only dead writer processes), publish (default true)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/plugins.h"
#include "strobe/shm.h"

struct box {
    strobe_set *copy;
    uint64_t data_gn, meta_gn;
    int seen;
};

struct shm_sampler {
    const struct strobe_plugin_host *h;
    strobe_shm_reader *reader;
    struct box *boxes;
    size_t n, cap;
    unsigned flags;
    int warned;
    void *buf;
    size_t bufcap;
};

static int open_shm(const struct strobe_plugin_host *h, void **state)
{
    struct shm_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->h = h;
    uint64_t timeout;
    const char *index = h->cfg_str(h, "index");
    const char *publish = h->cfg_str(h, "publish");
    int rc = h->cfg_duration(h, "timeout", 30000000000ull, &timeout);
    s->flags = STROBE_SET_PUBLISH;
    if (rc == 0 && publish) {
        if (!strcmp(publish, "false") || !strcmp(publish, "no"))
            s->flags = 0;
        else if (strcmp(publish, "true") && strcmp(publish, "yes"))
            rc = h->cfg_error(h, "publish", "'%s' is not true or false", publish);
    }
    if (rc == 0 && (rc = strobe_shm_reader_open(index, timeout, &s->reader)) < 0)
        h->log(h, STROBE_LOG_ERROR, "shared-memory index %s: %s%s", index ? index : "(default)",
               strobe_strerror(rc),
               rc == -EINVAL ? " (STROBE_SHM_CAPACITY must be a number of entries from 1 to 65536)" : "");
    if (rc < 0) {
        free(s);
        return rc;
    }
    *state = s;
    return 0;
}

static struct box *find_box(struct shm_sampler *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(strobe_set_instance(s->boxes[i].copy), name))
            return &s->boxes[i];
    return NULL;
}

static struct box *new_box(struct shm_sampler *s, const strobe_set *app)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        struct box *b = realloc(s->boxes, cap * sizeof *b);
        if (!b)
            return NULL;
        s->boxes = b;
        s->cap = cap;
    }
    size_t ml;
    const void *meta = strobe_set_meta(app, &ml);
    strobe_set *copy;
    if (strobe_set_from_meta(meta, ml, &copy) < 0)
        return NULL;
    if (s->h->set_add(s->h, copy, s->flags) < 0) {
        /* a name clash with another source: the daemon logged it */
        strobe_set_free(copy);
        return NULL;
    }
    s->h->log(s->h, STROBE_LOG_INFO, "application set %s appeared", strobe_set_instance(copy));
    s->boxes[s->n] = (struct box){ copy, 0, strobe_set_meta_gn(app), 0 };
    return &s->boxes[s->n++];
}

static void drop_box(struct shm_sampler *s, size_t i)
{
    s->h->log(s->h, STROBE_LOG_INFO, "application set %s is gone", strobe_set_instance(s->boxes[i].copy));
    s->h->set_remove(s->h, s->boxes[i].copy);
    s->boxes[i] = s->boxes[--s->n];
}

static int sample_shm(void *state, uint64_t now_ns)
{
    struct shm_sampler *s = state;
    int changed;
    int rc = strobe_shm_reader_scan(s->reader, &changed);
    if (rc < 0 && rc != STROBE_ERR_FORMAT)
        return rc;
    if (rc == STROBE_ERR_FORMAT && !s->warned++)
        s->h->log(s->h, STROBE_LOG_WARN, "skipped a corrupt entry of the shared-memory index");
    for (size_t i = 0; i < s->n; i++)
        s->boxes[i].seen = 0;
    uint32_t n = strobe_shm_reader_count(s->reader);
    for (uint32_t k = 0; k < n; k++) {
        strobe_set *app = strobe_shm_reader_set(s->reader, k);
        struct box *b = find_box(s, strobe_set_instance(app));
        if (b && strobe_set_schema_sum(b->copy) != strobe_set_schema_sum(app)) {
            /* the label was reused with another schema */
            drop_box(s, (size_t)(b - s->boxes));
            b = NULL;
        }
        if (!b && !(b = new_box(s, app)))
            continue;
        b->seen = 1;
        uint64_t mgn = strobe_set_meta_gn(app);
        if (mgn != b->meta_gn) {
            size_t ml;
            const void *meta = strobe_set_meta(app, &ml);
            if (strobe_set_apply_meta(b->copy, meta, ml) == 0)
                b->meta_gn = mgn;
        }
        uint64_t dgn = strobe_set_data_gn(app);
        if (dgn == b->data_gn)
            continue;
        size_t dl;
        strobe_set_data(app, &dl);
        if (dl > s->bufcap) {
            void *nb = realloc(s->buf, dl);
            if (!nb)
                return -ENOMEM;
            s->buf = nb;
            s->bufcap = dl;
        }
        /* an inconsistent copy (the writer stayed inside a transaction)
         * is still delivered, flagged inconsistent, like LDMS does */
        if (strobe_set_snapshot_data(app, s->buf, dl) == -ENOSPC ||
            strobe_set_apply_data(b->copy, s->buf, dl) < 0)
            continue;
        b->data_gn = dgn;
        s->h->set_updated(s->h, b->copy);
    }
    for (size_t i = s->n; i-- > 0;)
        if (!s->boxes[i].seen)
            drop_box(s, i);
    return 0;
}

static void close_shm(void *state)
{
    struct shm_sampler *s = state;
    strobe_shm_reader_close(s->reader);
    free(s->boxes);
    free(s->buf);
    free(s);
}

const struct strobe_plugin strobe__plugin_shm = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_SAMPLER,
    .name = "shm",
    .summary = "sets published by applications through the shared-memory index",
    .open = open_shm,
    .sample = sample_shm,
    .close = close_shm,
};
