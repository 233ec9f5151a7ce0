/* SPDX-License-Identifier: MIT */
/*
 * Builds the synchronization model (locks.h) from the SYNC slots of the
 * threads' profile files: one entry per slot (thread, object, call path),
 * sorted so that the entries of one row are adjacent, then merged.
 */
#define _GNU_SOURCE
#include "analysis/locks.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/decode.h"
#include "analysis/symbols.h"
#include "common/format.h"
#include "strobe/strobe.h"

struct entry {
    uint32_t process, kind, thread, depth;
    uint64_t object;
    uint32_t *path;
    uint64_t acquisitions, contended, wait_ns, max_wait_ns, hold_ns, hold_samples;
};

struct builder {
    const struct strobe_experiment *exp;
    struct strobe_errbuf *eb;
    struct entry *e;
    size_t n, cap;
};

static uint64_t ticks_ns(const struct strobe_process_info *p, uint64_t ticks)
{
    return (uint64_t)llround((double)ticks * p->ns_per_tick);
}

/* The call path of node slot `node` as global region ids, outermost
 * first. Slots were validated (parents point backwards to node slots). */
static int path_of(struct builder *b, const struct strobe__prof_view *v, const struct strobe_process_info *p,
                   const char *name, uint32_t node, struct entry *e)
{
    uint32_t depth = 0;
    struct strobe_prof_node n;
    for (uint32_t s = node; s != 0; s = n.parent, depth++)
        memcpy(&n, v->slots + (size_t)s * 64, sizeof n);
    e->depth = depth;
    e->path = depth ? malloc(depth * sizeof *e->path) : NULL;
    if (depth && !e->path)
        return -ENOMEM;
    for (uint32_t s = node, i = depth; s != 0; s = n.parent) {
        memcpy(&n, v->slots + (size_t)s * 64, sizeof n);
        if (n.region >= p->region_map_len || p->region_map[n.region] == STROBE_NONE)
            return strobe__error(b->eb, STROBE_ERR_FORMAT,
                                 "%s: offset %zu: slot %u: region id %u not defined in %s/defs", name,
                                 64 + (size_t)s * 64, s, n.region, p->dir);
        e->path[--i] = p->region_map[n.region];
    }
    return 0;
}

static int from_file(struct builder *b, uint32_t thread)
{
    const struct strobe_experiment *exp = b->exp;
    const struct strobe_thread_info *t = &exp->threads[thread];
    const struct strobe_process_info *p = &exp->processes[t->process];
    const char *name = t->profile_path + strlen(exp->dir) + 1;
    const uint8_t *buf;
    size_t len;
    int rc = strobe__file_map(t->profile_path, name, &buf, &len, b->eb);
    if (rc)
        return rc;
    struct strobe__prof_view v;
    rc = strobe__prof_check(buf, len, name, &v, b->eb);
    for (uint32_t i = 1; rc == 0 && i < v.hdr.slot_count; i++) {
        struct strobe_prof_sync s;
        memcpy(&s, v.slots + (size_t)i * 64, sizeof s);
        if (s.tag != STROBE_SLOT_SYNC || s.acquisitions == 0)
            continue;
        if (b->n == b->cap) {
            size_t cap = b->cap ? 2 * b->cap : 64;
            struct entry *e = realloc(b->e, cap * sizeof *e);
            if (!e) {
                rc = -ENOMEM;
                break;
            }
            b->e = e;
            b->cap = cap;
        }
        struct entry *e = &b->e[b->n];
        *e = (struct entry){.process = t->process,
                            .kind = s.kind,
                            .thread = thread,
                            .object = s.object,
                            .acquisitions = s.acquisitions,
                            .contended = s.contended,
                            .wait_ns = ticks_ns(p, s.wait_ticks),
                            .max_wait_ns = ticks_ns(p, s.max_wait_ticks),
                            .hold_samples = s.hold_samples};
        if (s.hold_samples)
            e->hold_ns = (uint64_t)llround((double)ticks_ns(p, s.hold_ticks) * (double)s.acquisitions /
                                           (double)s.hold_samples);
        if ((rc = path_of(b, &v, p, name, s.node, e)) != 0) {
            free(e->path);
            break;
        }
        b->n++;
    }
    strobe__file_unmap(buf, len);
    return rc;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

/* Barriers group by object alone (then thread, to count each thread's
 * episodes); everything else by object and call path. */
static int cmp_entry(const void *pa, const void *pb)
{
    const struct entry *a = pa, *b = pb;
    int c = cmp_u64(a->process, b->process);
    if (!c)
        c = cmp_u64(a->kind, b->kind);
    if (!c)
        c = cmp_u64(a->object, b->object);
    if (!c && a->kind == STROBE_SYNC_BARRIER_OBJ)
        c = cmp_u64(a->thread, b->thread);
    for (uint32_t i = 0; !c && i < a->depth && i < b->depth; i++)
        c = cmp_u64(a->path[i], b->path[i]);
    if (!c)
        c = cmp_u64(a->depth, b->depth);
    if (!c)
        c = cmp_u64(a->thread, b->thread);
    return c;
}

static bool same_row(const struct entry *a, const struct entry *b)
{
    if (a->process != b->process || a->kind != b->kind || a->object != b->object)
        return false;
    if (a->kind == STROBE_SYNC_BARRIER_OBJ)
        return true;
    return a->depth == b->depth &&
           (a->depth == 0 || memcmp(a->path, b->path, a->depth * sizeof *a->path) == 0);
}

static int cmp_row(const void *pa, const void *pb)
{
    const struct strobe_lock_row *a = pa, *b = pb;
    int c = cmp_u64(b->wait_ns, a->wait_ns);
    if (!c)
        c = cmp_u64(b->acquisitions, a->acquisitions);
    if (!c)
        c = cmp_u64(a->process, b->process);
    return c ? c : cmp_u64(a->object, b->object);
}

static int cmp_barrier(const void *pa, const void *pb)
{
    const struct strobe_barrier_row *a = pa, *b = pb;
    int c = cmp_u64(b->wait_ns, a->wait_ns);
    if (!c)
        c = cmp_u64(a->process, b->process);
    return c ? c : cmp_u64(a->object, b->object);
}

/* Merges the sorted entries into rows; the rows take over the paths. */
static int merge(struct builder *b, struct strobe_lock_model *m)
{
    m->rows = calloc(b->n ? b->n : 1, sizeof *m->rows);
    m->barriers = calloc(b->n ? b->n : 1, sizeof *m->barriers);
    if (!m->rows || !m->barriers)
        return -ENOMEM;
    for (size_t i = 0, j; i < b->n; i = j) {
        for (j = i + 1; j < b->n && same_row(&b->e[i], &b->e[j]); j++)
            ;
        const struct entry *e0 = &b->e[i];
        if (e0->kind == STROBE_SYNC_BARRIER_OBJ) {
            struct strobe_barrier_row *r = &m->barriers[m->nbarriers++];
            r->process = e0->process;
            r->object = e0->object;
            for (size_t k = i; k < j; k++) {
                const struct entry *e = &b->e[k];
                /* one thread's entries are adjacent: its episodes are their sum */
                uint64_t mine = e->acquisitions;
                for (size_t l = k; l > i && b->e[l - 1].thread == e->thread; l--)
                    mine += b->e[l - 1].acquisitions;
                if (mine > r->episodes)
                    r->episodes = mine;
                r->nthreads += k == i || b->e[k - 1].thread != e->thread;
                r->waits += e->acquisitions;
                r->wait_ns += e->wait_ns;
                if (e->max_wait_ns > r->max_wait_ns)
                    r->max_wait_ns = e->max_wait_ns;
            }
            continue;
        }
        struct strobe_lock_row *r = &m->rows[m->nrows++];
        r->process = e0->process;
        r->kind = e0->kind;
        r->object = e0->object;
        r->path = e0->path;
        r->depth = e0->depth;
        b->e[i].path = NULL;
        r->threads = malloc((j - i) * sizeof *r->threads);
        if (!r->threads)
            return -ENOMEM;
        for (size_t k = i; k < j; k++) {
            const struct entry *e = &b->e[k];
            r->acquisitions += e->acquisitions;
            r->contended += e->contended;
            r->wait_ns += e->wait_ns;
            if (e->max_wait_ns > r->max_wait_ns)
                r->max_wait_ns = e->max_wait_ns;
            r->hold_ns += e->hold_ns;
            r->hold_samples += e->hold_samples;
            r->threads[r->nthreads++] = (struct strobe_lock_thread){e->thread, e->acquisitions};
        }
    }
    qsort(m->rows, m->nrows, sizeof *m->rows, cmp_row);
    qsort(m->barriers, m->nbarriers, sizeof *m->barriers, cmp_barrier);
    return 0;
}

/* Names the objects of process `proc` that lie in a module (globals). */
static int name_objects(struct builder *b, struct strobe_lock_model *m, uint32_t proc)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nrows; i++)
        n += m->rows[i].process == proc;
    for (size_t i = 0; i < m->nbarriers; i++)
        n += m->barriers[i].process == proc;
    if (n == 0)
        return 0;
    const struct strobe_experiment *exp = b->exp;
    char *path = NULL, *shown = NULL;
    if (asprintf(&path, "%s/%s/defs", exp->dir, exp->processes[proc].dir) < 0 ||
        asprintf(&shown, "%s/defs", exp->processes[proc].dir) < 0) {
        free(path);
        return -ENOMEM;
    }
    uint64_t *addrs = malloc(n * sizeof *addrs);
    char **names = calloc(n, sizeof *names);
    const uint8_t *buf = NULL;
    size_t len = 0;
    struct strobe__defs d = {0};
    int rc = addrs && names ? strobe__file_map(path, shown, &buf, &len, b->eb) : -ENOMEM;
    if (rc == 0) {
        rc = strobe__defs_decode(buf, len, shown, &d, b->eb);
        strobe__file_unmap(buf, len);
    }
    size_t k = 0;
    for (size_t i = 0; i < m->nrows; i++)
        if (m->rows[i].process == proc)
            addrs[k++] = m->rows[i].object;
    for (size_t i = 0; i < m->nbarriers; i++)
        if (m->barriers[i].process == proc)
            addrs[k++] = m->barriers[i].object;
    if (rc == 0)
        rc = strobe__symbols_name_objects(&d, addrs, n, names);
    k = 0;
    for (size_t i = 0; i < m->nrows; i++)
        if (m->rows[i].process == proc)
            m->rows[i].name = names[k++];
    for (size_t i = 0; i < m->nbarriers; i++)
        if (m->barriers[i].process == proc)
            m->barriers[i].name = names[k++];
    strobe__defs_free(&d);
    free(names);
    free(addrs);
    free(path);
    free(shown);
    return rc;
}

int strobe_lock_model_build(const struct strobe_experiment *exp, struct strobe_lock_model **out,
                            struct strobe_errbuf *eb)
{
    struct strobe_lock_model *m = calloc(1, sizeof *m);
    struct builder b = {.exp = exp, .eb = eb};
    int rc = m ? 0 : -ENOMEM;
    for (uint32_t t = 0; rc == 0 && t < exp->nthreads; t++) {
        if (!exp->threads[t].profile_path)
            continue;
        m->profiled_threads++;
        rc = from_file(&b, t);
    }
    if (rc == 0) {
        if (b.n) /* b.e is NULL when empty */
            qsort(b.e, b.n, sizeof *b.e, cmp_entry);
        rc = merge(&b, m);
    }
    for (uint32_t p = 0; rc == 0 && p < exp->nprocesses; p++)
        rc = name_objects(&b, m, p);
    for (size_t i = 0; i < b.n; i++)
        free(b.e[i].path);
    free(b.e);
    if (rc) {
        if (rc == -ENOMEM)
            strobe__error(eb, rc, "out of memory");
        strobe_lock_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

void strobe_lock_model_free(struct strobe_lock_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nrows; i++) {
        free(m->rows[i].name);
        free(m->rows[i].path);
        free(m->rows[i].threads);
    }
    for (size_t i = 0; i < m->nbarriers; i++)
        free(m->barriers[i].name);
    free(m->rows);
    free(m->barriers);
    free(m);
}
