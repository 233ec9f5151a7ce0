/* SPDX-License-Identifier: MIT */
/*
 * `petra` store: the latest value and a bounded history (a ring of the
 * last `history` samples) of every numeric metric, kept durably and
 * transactionally in a PETRA heap (include/strobe/petra.h;
 * docs/petra-store.md gives the key layout and the guarantees).
 *
 * Each element of a numeric data metric is a stored metric named
 * "instance/metric" ("instance/metric[j]" for array elements). One
 * sample of one metric is one set of five PUTs (latest value, latest
 * timestamp, sample count, ring slot timestamp, ring slot value) that is
 * never split across transactions; up to three metrics share one
 * transaction (15 of its 16 operations). A metric's first sample commits
 * together with the INSERT of its descriptor into `store.names` (and its
 * name chunks when they fit), so a reader never sees a name without data
 * or data without a name. When update() returns 0 every metric of that
 * sample of the set is durable (strobe_petra_execute returned 0 for it):
 * the store logs "ack INSTANCE data_gn N ts T" at debug level then.
 *
 * Invariants (checked by tests/plugins/test_petra_store.c after SIGKILLs):
 *   - latest (value, ts) equals ring[(seq - 1) % history];
 *   - the ring holds samples seq - min(seq, history) + 1 .. seq;
 *   - an id in store.names has all its name chunks and at least one sample.
 *
 * One process writes a heap at a time: petra locks the file at open
 * (strobe_petra_open) and the store refuses to start when another
 * process holds it. The daemon serialises plugin calls, so the one
 * attached petra thread handle is never used by two threads at once.
 *
 *   keys: path (heap file; required), size (bytes when created, e.g. 64M;
 *         default petra's), history (ring slots per new metric, 1..65536;
 *         default 64), sets (globs on instance names), metrics (globs on
 *         metric names).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/size.h"
#include "plugins/petra_layout.h"
#include "plugins/plugins.h"
#include "plugins/store_common.h"

#define OPS_PER_SAMPLE 5u
#define HISTORY_DEFAULT 64u
#define SIZE_MIN (64ull << 20)

/* One stored metric as the store knows it. */
struct pst_metric {
    char *name;
    size_t len;
    uint64_t hash;    /* strobe__pst_hash(name): the in-memory table's key too */
    uint64_t id;      /* its id in the heap, or the free id it will get */
    uint64_t seq;     /* samples committed */
    uint64_t last_ts; /* timestamp of the last committed sample */
    struct strobe__pst_desc d;
    uint64_t queued; /* the update (pst.updates) that last queued a sample */
    int in_heap;     /* names[id] committed */
    int clash;       /* stored with another type: skipped (logged once) */
};

/* A data element (metric i, element j) of a set's layout that is stored. */
struct pst_elem {
    uint32_t i, j;
    struct pst_metric *m;
};

/* The stored elements of one set layout (instance + schema checksum). */
struct pst_set {
    char *instance;
    uint64_t sum;
    struct pst_elem *e;
    size_t n;
};

/* A sample of one metric queued in the current transaction. */
struct pst_pending {
    struct pst_metric *m;
    uint64_t ts;
};

struct pst {
    const struct strobe_plugin_host *h;
    struct strobe__pst heap;
    char *path;
    uint64_t history;
    const char *const *sets, *const *metrics;
    size_t nsets, nmetrics;
    struct pst_metric **table; /* open addressing on hash; cap a power of two */
    struct pst_metric **byid;  /* the same metrics by id (same cap) */
    size_t nmet, cap;
    size_t npending_new; /* metrics not yet in the heap (their ids are claimed) */
    struct pst_set **cache;
    size_t ncache;
    struct strobe_petra_op ops[STROBE_PETRA_MAX_OPS];
    unsigned nops;
    struct pst_pending pend[STROBE_PETRA_MAX_OPS];
    unsigned npend;
    uint64_t updates; /* update() calls: tells metrics queued in this one */
    uint64_t committed, skipped, errors;
};

/* ---- metrics ------------------------------------------------------------------- */

static void byid_put(struct pst_metric **t, size_t cap, struct pst_metric *m)
{
    size_t k = m->id & (cap - 1);
    while (t[k])
        k = (k + 1) & (cap - 1);
    t[k] = m;
}

static int table_grow(struct pst *s)
{
    size_t cap = s->cap ? s->cap * 2 : 256;
    struct pst_metric **t = calloc(cap, sizeof *t), **b = calloc(cap, sizeof *b);
    if (!t || !b) {
        free(t);
        free(b);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->cap; i++) {
        struct pst_metric *m = s->table[i];
        if (!m)
            continue;
        size_t k = m->hash & (cap - 1);
        while (t[k])
            k = (k + 1) & (cap - 1);
        t[k] = m;
        byid_put(b, cap, m);
    }
    free(s->table);
    free(s->byid);
    s->table = t;
    s->byid = b;
    s->cap = cap;
    return 0;
}

/* Is id claimed by a metric that is not in the heap yet? (One that is
 * has names[id], so the heap already says the id is taken.) */
static int id_claimed(const struct pst *s, uint64_t id)
{
    if (!s->npending_new)
        return 0;
    for (size_t k = id & (s->cap - 1); s->byid[k]; k = (k + 1) & (s->cap - 1))
        if (s->byid[k]->id == id && !s->byid[k]->in_heap)
            return 1;
    return 0;
}

/* Find the metric in the heap, or pick the free id it will get: the first
 * free id of its probe sequence that no other new metric has claimed. */
static int metric_resolve(struct pst *s, struct pst_metric *m, enum strobe_metric_type type)
{
    uint64_t id = 0;
    struct strobe__pst_desc d;
    int rc;
    for (;;) {
        rc = strobe__pst_lookup(&s->heap, m->name, m->len, &id, &d);
        if (rc != -ENOENT || !id_claimed(s, id))
            break;
        id = strobe__pst_probe_next(id);
    }
    m->id = id;
    if (rc == -ENOENT) {
        m->d.type = type;
        m->d.name_len = (uint32_t)m->len;
        m->d.history = (uint32_t)s->history;
        s->npending_new++;
        return 0;
    }
    if (rc < 0)
        return rc;
    m->d = d;
    m->in_heap = 1;
    int sid = s->heap.sid[STROBE__PST_LATEST];
    if ((rc = strobe_petra_get(s->heap.t, sid, strobe__pst_key(id, STROBE__PST_LATEST_SEQ), &m->seq)) < 0 ||
        (rc = strobe_petra_get(s->heap.t, sid, strobe__pst_key(id, STROBE__PST_LATEST_TS), &m->last_ts)) < 0)
        return rc == -ENOENT ? STROBE_ERR_FORMAT : rc;
    if (d.type != type) {
        m->clash = 1;
        s->h->log(s->h, STROBE_LOG_WARN, "%s: stored as %s, now %s: not stored", m->name,
                  strobe_metric_type_name(d.type), strobe_metric_type_name(type));
    }
    return 0;
}

static int metric_get(struct pst *s, const char *name, enum strobe_metric_type type, struct pst_metric **out)
{
    size_t len = strlen(name);
    uint64_t hash = strobe__pst_hash(name, len);
    if (s->cap) {
        for (size_t k = hash & (s->cap - 1); s->table[k]; k = (k + 1) & (s->cap - 1)) {
            struct pst_metric *m = s->table[k];
            if (m->hash == hash && m->len == len && memcmp(m->name, name, len) == 0) {
                *out = m;
                return 0;
            }
        }
    }
    if (len > STROBE__PST_NAME_MAX)
        return -ENAMETOOLONG;
    if ((s->nmet + 1) * 2 > s->cap && table_grow(s) < 0)
        return -ENOMEM;
    struct pst_metric *m = calloc(1, sizeof *m);
    if (!m || !(m->name = strdup(name))) {
        free(m);
        return -ENOMEM;
    }
    m->len = len;
    m->hash = hash;
    int rc = metric_resolve(s, m, type);
    if (rc < 0) {
        if (!m->in_heap && m->d.name_len)
            s->npending_new--;
        free(m->name);
        free(m);
        return rc;
    }
    size_t k = hash & (s->cap - 1);
    while (s->table[k])
        k = (k + 1) & (s->cap - 1);
    s->table[k] = m;
    byid_put(s->byid, s->cap, m);
    s->nmet++;
    *out = m;
    return 0;
}

/* The stored elements of set's layout, built on first sight. */
static int set_cache(struct pst *s, const strobe_set *set, struct pst_set **out)
{
    const char *inst = strobe_set_instance(set);
    uint64_t sum = strobe_set_schema_sum(set);
    for (size_t k = 0; k < s->ncache; k++) {
        if (s->cache[k]->sum == sum && strcmp(s->cache[k]->instance, inst) == 0) {
            *out = s->cache[k];
            return 0;
        }
    }
    struct pst_set **v = realloc(s->cache, (s->ncache + 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    s->cache = v;
    struct pst_set *ps = calloc(1, sizeof *ps);
    if (!ps || !(ps->instance = strdup(inst))) {
        free(ps);
        return -ENOMEM;
    }
    ps->sum = sum;
    size_t total = 0;
    for (uint32_t i = 0; i < strobe_set_card(set); i++)
        total += strobe_set_metric_count(set, i);
    int rc = 0;
    if (total && !(ps->e = calloc(total, sizeof *ps->e)))
        rc = -ENOMEM;
    char name[2 * STROBE_SET_NAME_MAX + 32];
    for (uint32_t i = 0; rc == 0 && i < strobe_set_card(set); i++) {
        enum strobe_metric_type t = strobe_set_metric_type(set, i);
        const char *mn = strobe_set_metric_name(set, i);
        /* char metrics are not numbers; meta metrics (component_id) are
         * not samples */
        if (t == STROBE_MT_CHAR || (strobe_set_metric_flags(set, i) & STROBE_METRIC_META) ||
            !strobe__store_glob_match(s->metrics, s->nmetrics, mn))
            continue;
        int array = (strobe_set_metric_flags(set, i) & STROBE_METRIC_ARRAY) != 0;
        for (uint32_t j = 0; rc == 0 && j < strobe_set_metric_count(set, i); j++) {
            if (array)
                snprintf(name, sizeof name, "%s/%s[%" PRIu32 "]", inst, mn, j);
            else
                snprintf(name, sizeof name, "%s/%s", inst, mn);
            struct pst_metric *m;
            if ((rc = metric_get(s, name, t, &m)) == 0)
                ps->e[ps->n++] = (struct pst_elem){i, j, m};
            else
                s->h->log(s->h, STROBE_LOG_ERROR, "%s: %s", name, strobe_strerror(rc));
        }
    }
    if (rc < 0) {
        /* built again at the next update; the metrics found stay known */
        free(ps->e);
        free(ps->instance);
        free(ps);
        return rc;
    }
    s->cache[s->ncache++] = ps;
    *out = ps;
    return 0;
}

/* ---- transactions -------------------------------------------------------------- */

static void op(struct pst *s, uint8_t type, int structure, uint64_t key, uint64_t value)
{
    s->ops[s->nops++] = (struct strobe_petra_op){
        .type = type, .structure = (uint8_t)s->heap.sid[structure], .key = key, .value = value};
}

/* Run the queued operations as one transaction; on commit, advance the
 * in-memory state of the metrics in it (only then: a failed transaction
 * left nothing in the heap). */
static int commit(struct pst *s)
{
    if (!s->nops)
        return 0;
    int rc = strobe_petra_execute(s->heap.t, s->ops, s->nops);
    if (rc == 0) {
        s->committed++;
        for (unsigned k = 0; k < s->npend; k++) {
            struct pst_metric *m = s->pend[k].m;
            m->seq++;
            m->last_ts = s->pend[k].ts;
            if (!m->in_heap) {
                m->in_heap = 1;
                s->npending_new--;
            }
        }
    }
    s->nops = 0;
    s->npend = 0;
    return rc;
}

/* Name chunks [from, to) of m as PUTs. */
static void name_chunks(struct pst *s, struct pst_metric *m, uint32_t from, uint32_t to)
{
    for (uint32_t c = from; c < to; c++) {
        uint64_t w = 0;
        for (uint32_t b = 0; b < 8 && c * 8 + b < m->len; b++)
            w |= (uint64_t)(unsigned char)m->name[c * 8 + b] << (8 * b);
        op(s, STROBE_PETRA_PUT, STROBE__PST_STRINGS, strobe__pst_key(m->id, c), w);
    }
}

/* Queue one sample of m (bits at ts), committing first when it would not
 * fit the current transaction. A new metric's sample goes with its
 * descriptor INSERT (and its name when the chunks fit); longer names are
 * written first by transactions of their own, unreachable until the
 * INSERT commits (a crash leaves them as garbage that the metric's next
 * attempt overwrites). */
static int queue_sample(struct pst *s, struct pst_metric *m, uint64_t bits, uint64_t ts)
{
    unsigned need = OPS_PER_SAMPLE;
    uint32_t chunks = 0, inline_chunks = 0;
    if (!m->in_heap) {
        chunks = (uint32_t)((m->len + 7) / 8);
        inline_chunks = chunks <= STROBE_PETRA_MAX_OPS - OPS_PER_SAMPLE - 1 ? chunks : 0;
        need += 1 + inline_chunks;
    }
    int rc;
    if ((s->nops + need > STROBE_PETRA_MAX_OPS || (!m->in_heap && !inline_chunks)) && (rc = commit(s)) < 0)
        return rc;
    if (!m->in_heap && !inline_chunks) {
        for (uint32_t c = 0; c < chunks; c += STROBE_PETRA_MAX_OPS) {
            name_chunks(s, m, c, chunks - c < STROBE_PETRA_MAX_OPS ? chunks : c + STROBE_PETRA_MAX_OPS);
            if ((rc = commit(s)) < 0)
                return rc;
        }
    }
    if (!m->in_heap) {
        op(s, STROBE_PETRA_INSERT, STROBE__PST_NAMES, m->id, strobe__pst_desc_pack(&m->d));
        name_chunks(s, m, 0, inline_chunks);
    }
    uint64_t seq = m->seq + 1;
    uint32_t slot = (uint32_t)((seq - 1) % m->d.history);
    op(s, STROBE_PETRA_PUT, STROBE__PST_LATEST, strobe__pst_key(m->id, STROBE__PST_LATEST_VALUE), bits);
    op(s, STROBE_PETRA_PUT, STROBE__PST_LATEST, strobe__pst_key(m->id, STROBE__PST_LATEST_TS), ts);
    op(s, STROBE_PETRA_PUT, STROBE__PST_LATEST, strobe__pst_key(m->id, STROBE__PST_LATEST_SEQ), seq);
    op(s, STROBE_PETRA_PUT, STROBE__PST_RING_TS, strobe__pst_key(m->id, slot), ts);
    op(s, STROBE_PETRA_PUT, STROBE__PST_RING_VALUE, strobe__pst_key(m->id, slot), bits);
    s->pend[s->npend++] = (struct pst_pending){m, ts};
    return 0;
}

/* The stored 64-bit pattern of element j of metric i: integers widened
 * (signed ones sign-extended), reals as the bits of the double. */
static uint64_t value_bits(const strobe_set *set, uint32_t i, uint32_t j)
{
    switch (strobe_set_metric_type(set, i)) {
    case STROBE_MT_S8:
    case STROBE_MT_S16:
    case STROBE_MT_S32:
    case STROBE_MT_S64:
        return (uint64_t)strobe_set_get_s64(set, i, j);
    case STROBE_MT_F32:
    case STROBE_MT_D64: {
        double v = strobe_set_get_d64(set, i, j);
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        return b;
    }
    default:
        return strobe_set_get_u64(set, i, j);
    }
}

static int update_petra(void *state, const strobe_set *set)
{
    struct pst *s = state;
    if (!strobe__store_glob_match(s->sets, s->nsets, strobe_set_instance(set)))
        return 0;
    if (!strobe_set_is_consistent(set)) {
        s->skipped++;
        return 0;
    }
    struct pst_set *ps;
    s->updates++;
    int rc = set_cache(s, set, &ps);
    uint64_t ts = strobe_set_timestamp(set);
    for (size_t k = 0; rc == 0 && k < ps->n; k++) {
        struct pst_elem *e = &ps->e[k];
        /* invalid values are not samples; the same transaction seen twice
         * (same timestamp) is stored once */
        if (e->m->clash || !strobe_set_is_valid(set, e->i) || (e->m->seq && e->m->last_ts == ts))
            continue;
        /* two elements of one set with one name (a scalar "x[0]" next to
         * an array "x"): the first wins; one sample per metric per update */
        if (e->m->queued == s->updates)
            continue;
        e->m->queued = s->updates;
        rc = queue_sample(s, e->m, value_bits(set, e->i, e->j), ts);
    }
    if (rc == 0)
        rc = commit(s);
    if (rc < 0) {
        /* what was queued is dropped: none of it is in the heap */
        s->nops = 0;
        s->npend = 0;
        if (!s->errors++ || rc == -ENOSPC)
            s->h->log(s->h, STROBE_LOG_ERROR, "%s: %s: %s", s->path, strobe_set_instance(set),
                      strobe_strerror(rc));
        return rc;
    }
    s->h->log(s->h, STROBE_LOG_DEBUG, "ack %s data_gn %" PRIu64 " ts %" PRIu64, strobe_set_instance(set),
              strobe_set_data_gn(set), ts);
    return 0;
}

/* Every committed transaction is already durable: nothing to flush. */
static int flush_petra(void *state)
{
    (void)state;
    return 0;
}

static void close_petra(void *state)
{
    struct pst *s = state;
    if (s->heap.heap) {
        struct strobe_petra_stats st;
        strobe_petra_stats_get(s->heap.heap, &st);
        s->h->log(s->h, STROBE_LOG_INFO,
                  "%s: %" PRIu64 " transaction(s) committed, %" PRIu64 " checkpoint(s); %" PRIu64
                  " set update(s) skipped (inconsistent)",
                  s->path, s->committed, st.checkpoints, s->skipped);
        int rc = strobe__pst_close(&s->heap);
        if (rc < 0)
            s->h->log(s->h, STROBE_LOG_ERROR, "%s: close: %s", s->path, strobe_strerror(rc));
    }
    if (s->errors)
        s->h->log(s->h, STROBE_LOG_WARN, "%" PRIu64 " update(s) failed", s->errors);
    for (size_t i = 0; i < s->cap; i++)
        if (s->table[i]) {
            free(s->table[i]->name);
            free(s->table[i]);
        }
    for (size_t k = 0; k < s->ncache; k++) {
        free(s->cache[k]->instance);
        free(s->cache[k]->e);
        free(s->cache[k]);
    }
    free(s->table);
    free(s->byid);
    free(s->cache);
    free(s->path);
    free(s);
}

static int open_petra(const struct strobe_plugin_host *h, void **state)
{
    struct pst *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->h = h;
    const char *path = h->cfg_str(h, "path");
    const char *sz = h->cfg_str(h, "size");
    uint64_t size = 0;
    int rc;
    if ((rc = h->cfg_list(h, "sets", &s->sets, &s->nsets)) < 0 ||
        (rc = h->cfg_list(h, "metrics", &s->metrics, &s->nmetrics)) < 0 ||
        (rc = h->cfg_u64(h, "history", HISTORY_DEFAULT, &s->history)) < 0)
        goto fail;
    if (!path || !*path) {
        rc = h->cfg_error(h, NULL, "`path` (the heap file) is required");
        goto fail;
    }
    if (sz && strobe__parse_size(sz, &size) < 0) {
        rc = h->cfg_error(h, "size", "'%s' is not a size (e.g. 64M, 1G)", sz);
        goto fail;
    }
    /* below this, petra's checkpoints (new bucket arrays and checkpoint
     * blocks next to the old ones, in 1 MiB chunks) can run out of space
     * after a few restarts even when the store holds almost nothing */
    if (sz && size < SIZE_MIN) {
        rc = h->cfg_error(h, "size", "'%s' is too small: at least 64M", sz);
        goto fail;
    }
    if (s->history < 1 || s->history > STROBE__PST_HISTORY_MAX) {
        rc = h->cfg_error(h, "history", "must be between 1 and %u", STROBE__PST_HISTORY_MAX);
        goto fail;
    }
    if (!(s->path = strdup(path))) {
        rc = -ENOMEM;
        goto fail;
    }
    /* petra locks the heap itself: a second store or daemon on the file
     * is refused, naming the holder's pid */
    char why[320];
    rc = strobe__pst_open(path, 1, size, 0, &s->heap, why, sizeof why);
    if (rc < 0) {
        h->log(h, STROBE_LOG_ERROR, "%s: %s", path, why);
        goto fail;
    }
    *state = s;
    return 0;
fail:
    if (s->heap.heap)
        strobe__pst_close(&s->heap);
    free(s->path);
    free(s);
    return rc;
}

const struct strobe_plugin strobe__plugin_petra = {
    .abi = STROBE_PLUGIN_ABI,
    .kind = STROBE_PLUGIN_STORE,
    .name = "petra",
    .summary = "latest value and last N samples of each metric in a durable PETRA heap",
    .open = open_petra,
    .update = update_petra,
    .flush = flush_petra,
    .close = close_petra,
};
