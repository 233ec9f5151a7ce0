/* SPDX-License-Identifier: MIT */
/*
 * Builds the synchronization model (locks.h) from the SYNC slots of the
 * threads' profile files: one entry per slot (thread, object, call path),
 * sorted so that the entries of one row are adjacent, then merged. The
 * sites come from the SYNC wait records of the traces, per process: their
 * return addresses resolved once each, a wait charged to its first frame
 * outside the runtime, then merged per (object, site).
 */
#define _GNU_SOURCE
#include "analysis/locks.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/decode.h"
#include "analysis/keymap.h"
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
    const char *name = strobe__shown_path(exp, t->profile_path);
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

/* Names the objects of process `proc` (its defs d) that lie in a module
 * (globals). */
static int name_objects(struct strobe_lock_model *m, uint32_t proc, const struct strobe__defs *d)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nrows; i++)
        n += m->rows[i].process == proc;
    for (size_t i = 0; i < m->nbarriers; i++)
        n += m->barriers[i].process == proc;
    if (n == 0)
        return 0;
    uint64_t *addrs = malloc(n * sizeof *addrs);
    char **names = calloc(n, sizeof *names);
    if (!addrs || !names) {
        free(addrs);
        free(names);
        return -ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < m->nrows; i++)
        if (m->rows[i].process == proc)
            addrs[k++] = m->rows[i].object;
    for (size_t i = 0; i < m->nbarriers; i++)
        if (m->barriers[i].process == proc)
            addrs[k++] = m->barriers[i].object;
    int rc = strobe__symbols_name_objects(d, addrs, n, names);
    k = 0;
    for (size_t i = 0; i < m->nrows; i++)
        if (m->rows[i].process == proc)
            m->rows[i].name = names[k++];
    for (size_t i = 0; i < m->nbarriers; i++)
        if (m->barriers[i].process == proc)
            m->barriers[i].name = names[k++];
    free(names);
    free(addrs);
    return rc;
}

/* ---- waits by call site (traces) ---- */

struct wait_rec {
    uint64_t object, site; /* site: a return address, then its loc index */
    uint32_t kind;
    uint64_t wait_ns;
    uint32_t first, n; /* frames in the pool */
};

struct site_builder {
    struct wait_rec *w;
    size_t nw, wcap;
    uint64_t *pool; /* return addresses minus one: the calls */
    size_t npool, pcap;
};

static uint32_t wait_kind(uint64_t op)
{
    switch (op) {
    case STROBE_SYNC_ACQUIRE_MUTEX:
        return STROBE_SYNC_MUTEX;
    case STROBE_SYNC_ACQUIRE_READ:
    case STROBE_SYNC_ACQUIRE_WRITE:
        return STROBE_SYNC_RWLOCK;
    case STROBE_SYNC_ACQUIRE_SPIN:
        return STROBE_SYNC_SPIN;
    case STROBE_SYNC_ACQUIRE_SEM:
        return STROBE_SYNC_SEM;
    case STROBE_SYNC_COND_WAIT:
        return STROBE_SYNC_COND;
    case STROBE_SYNC_BARRIER:
        return STROBE_SYNC_BARRIER_OBJ;
    default:
        return 0; /* releases, and timeouts (no acquisition) */
    }
}

/* The waits of thread t's stream that carry frames. */
static int read_waits(const struct strobe_experiment *exp, uint32_t t, struct site_builder *sb,
                      struct strobe_errbuf *eb)
{
    const struct strobe_thread_info *ti = &exp->threads[t];
    const struct strobe_process_info *p = &exp->processes[ti->process];
    const char *shown = strobe__shown_path(exp, ti->stream_path);
    const uint8_t *buf = NULL;
    size_t len = 0;
    int rc = strobe__file_map(ti->stream_path, shown, &buf, &len, eb);
    if (rc)
        return rc;
    struct strobe__stream_decoder d;
    struct strobe__raw_event ev;
    if ((rc = strobe__stream_begin(&d, buf, len, shown, eb)) == 0) {
        while ((rc = strobe__stream_decode(&d, &ev, eb)) == 1) {
            uint32_t kind = ev.kind == STROBE__RAW_SYNC ? wait_kind(ev.id) : 0;
            /* task-graph recording also writes the acquisitions that did
             * not wait (wait 0): they are no waits (the profile counts them) */
            if (!kind || ev.nframes == 0 || (ev.id <= STROBE_SYNC_ACQUIRE_SEM && ev.sync_args[0] == 0))
                continue;
            if (strobe__grow((void **)&sb->w, &sb->wcap, sb->nw + 1, sizeof *sb->w) ||
                strobe__grow((void **)&sb->pool, &sb->pcap, sb->npool + ev.nframes, sizeof *sb->pool)) {
                rc = -ENOMEM;
                break;
            }
            sb->w[sb->nw++] = (struct wait_rec){
                (uint64_t)ev.value, 0, kind, ticks_ns(p, ev.sync_args[0]), (uint32_t)sb->npool, ev.nframes};
            for (uint32_t i = 0; i < ev.nframes; i++)
                sb->pool[sb->npool++] = d.frames[i] - 1;
        }
        strobe__stream_end(&d);
    }
    strobe__file_unmap(buf, len);
    return rc < 0 ? rc : 0;
}

static int cmp_addr(const void *a, const void *b)
{
    return cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

static int cmp_wait(const void *a, const void *b)
{
    const struct wait_rec *x = a, *y = b;
    int c = cmp_u64(x->object, y->object);
    if (c == 0)
        c = cmp_u64(x->kind, y->kind);
    return c ? c : cmp_u64(x->site, y->site);
}

static int cmp_site(const void *a, const void *b)
{
    const struct strobe_lock_site *x = a, *y = b;
    int c = cmp_u64(y->wait_ns, x->wait_ns);
    if (c == 0)
        c = cmp_u64(x->process, y->process);
    if (c == 0)
        c = cmp_u64(x->object, y->object);
    return c ? c : strcmp(x->function, y->function);
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* The sites of process proc's waits (its defs d), appended to m->sites. */
static int sites_of(const struct strobe_experiment *exp, uint32_t proc, const struct strobe__defs *d,
                    struct strobe_lock_model *m, struct strobe_errbuf *eb)
{
    struct site_builder sb = {0};
    int rc = 0;
    for (uint32_t t = 0; rc == 0 && t < exp->nthreads; t++)
        if (exp->threads[t].process == proc && exp->threads[t].stream_path)
            rc = read_waits(exp, t, &sb, eb);
    if (rc || sb.nw == 0) {
        free(sb.w);
        free(sb.pool);
        return rc;
    }
    /* every distinct call once */
    uint64_t *addrs = malloc(sb.npool * sizeof *addrs);
    struct strobe__code_loc *locs = NULL;
    size_t na = 0;
    rc = addrs ? 0 : -ENOMEM;
    if (rc == 0) {
        memcpy(addrs, sb.pool, sb.npool * sizeof *addrs);
        qsort(addrs, sb.npool, sizeof *addrs, cmp_addr);
        for (size_t i = 0; i < sb.npool; i++)
            if (na == 0 || addrs[na - 1] != addrs[i])
                addrs[na++] = addrs[i];
        if (!(locs = calloc(na, sizeof *locs)))
            rc = -ENOMEM;
    }
    if (rc == 0)
        rc = strobe__symbols_code(d, addrs, na, locs);
    /* each wait's site: its first call outside the runtime (the
     * outermost one when all are inside) */
    for (size_t i = 0; rc == 0 && i < sb.nw; i++) {
        struct wait_rec *w = &sb.w[i];
        size_t at = 0;
        for (uint32_t k = 0; k < w->n; k++) {
            const uint64_t *a = bsearch(&sb.pool[w->first + k], addrs, na, sizeof *addrs, cmp_addr);
            at = (size_t)(a - addrs);
            if (!strobe__is_runtime_module(locs[at].module))
                break;
        }
        w->site = at;
    }
    size_t first = m->nsites;
    if (rc == 0) {
        qsort(sb.w, sb.nw, sizeof *sb.w, cmp_wait);
        for (size_t i = 0; rc == 0 && i < sb.nw; i++) {
            const struct wait_rec *w = &sb.w[i];
            struct strobe_lock_site *s = m->nsites > first ? &m->sites[m->nsites - 1] : NULL;
            const struct wait_rec *prev = i ? &sb.w[i - 1] : NULL;
            if (!prev || prev->object != w->object || prev->kind != w->kind || prev->site != w->site) {
                struct strobe_lock_site *v = realloc(m->sites, (m->nsites + 1) * sizeof *v);
                if (!v) {
                    rc = -ENOMEM;
                    break;
                }
                m->sites = v;
                const struct strobe__code_frame *f = &locs[w->site].frames[0];
                s = &m->sites[m->nsites++];
                *s = (struct strobe_lock_site){.process = proc,
                                               .kind = w->kind,
                                               .object = w->object,
                                               .function = dup_or_empty(f->name),
                                               .file = dup_or_empty(f->file),
                                               .line = f->line};
                if (!s->function || !s->file)
                    rc = -ENOMEM;
            }
            s->waits++;
            s->wait_ns += w->wait_ns;
            if (w->wait_ns > s->max_wait_ns)
                s->max_wait_ns = w->wait_ns;
        }
    }
    /* the objects' symbols */
    size_t ns = m->nsites - first;
    uint64_t *objs = rc == 0 && ns ? malloc(ns * sizeof *objs) : NULL;
    char **names = rc == 0 && ns ? calloc(ns, sizeof *names) : NULL;
    if (rc == 0 && ns && (!objs || !names))
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < ns; i++)
        objs[i] = m->sites[first + i].object;
    if (rc == 0 && ns && (rc = strobe__symbols_name_objects(d, objs, ns, names)) == 0)
        for (size_t i = 0; i < ns; i++)
            m->sites[first + i].name = names[i];
    free(objs);
    free(names);
    for (size_t i = 0; locs && i < na; i++)
        strobe__code_loc_free(&locs[i]);
    free(locs);
    free(addrs);
    free(sb.w);
    free(sb.pool);
    return rc;
}

/* false when process proc's traces can hold no wait record: each of its
 * traced threads has a profile file (so its waits are in the rows) and
 * no row or barrier of the process waited. */
static bool may_have_waits(const struct strobe_experiment *exp, const struct strobe_lock_model *m, uint32_t proc)
{
    for (uint32_t t = 0; t < exp->nthreads; t++)
        if (exp->threads[t].process == proc && exp->threads[t].stream_path && !exp->threads[t].profile_path)
            return true;
    for (size_t i = 0; i < m->nrows; i++)
        if (m->rows[i].process == proc && (m->rows[i].contended || m->rows[i].wait_ns))
            return true;
    for (size_t i = 0; i < m->nbarriers; i++)
        if (m->barriers[i].process == proc && (m->barriers[i].waits || m->barriers[i].wait_ns))
            return true;
    return false;
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
    /* each process's defs once: the objects' names, the sites (a pass
     * over its traces, skipped when they cannot hold a wait: every traced
     * thread has a profile and it counted no wait in the process) */
    for (uint32_t p = 0; rc == 0 && p < exp->nprocesses; p++) {
        struct strobe__defs d = {0};
        if ((rc = strobe__process_defs(exp, p, &d, eb)) == 0 && (rc = name_objects(m, p, &d)) == 0 &&
            may_have_waits(exp, m, p))
            rc = sites_of(exp, p, &d, m, eb);
        strobe__defs_free(&d);
    }
    if (rc == 0 && m->nsites)
        qsort(m->sites, m->nsites, sizeof *m->sites, cmp_site);
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
    for (size_t i = 0; i < m->nsites; i++) {
        free(m->sites[i].name);
        free(m->sites[i].function);
        free(m->sites[i].file);
    }
    free(m->sites);
    free(m->rows);
    free(m->barriers);
    free(m);
}
