/* SPDX-License-Identifier: MIT */
/* The memory view of a `--malloc` experiment (see malloc.h). */
#include "analysis/malloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/decode.h"
#include "common/format.h"
#include "strobe/strobe.h"

/* The child of merged node `parent` for global region `region`, or STROBE_NONE. */
static uint32_t child_of(const struct strobe_profile *prof, uint32_t parent, uint32_t region)
{
    if (parent == STROBE_NONE)
        return STROBE_NONE;
    for (uint32_t c = prof->nodes[parent].first_child; c != STROBE_NONE; c = prof->nodes[c].next_sibling)
        if (prof->nodes[c].region == region)
            return c;
    return STROBE_NONE;
}

/* A thread's profile file, mapped, for slot -> call path. */
struct prof_map {
    uint32_t thread; /* STROBE_NONE: nothing mapped */
    void *map;
    size_t len;
    struct strobe__prof_view view;
};

static void prof_unmap(struct prof_map *pm)
{
    if (pm->map)
        munmap(pm->map, pm->len);
    pm->map = NULL;
    pm->thread = STROBE_NONE;
}

static int prof_map(const struct strobe_experiment *exp, uint32_t thread, struct prof_map *pm,
                    struct strobe_errbuf *eb)
{
    if (pm->thread == thread)
        return 0;
    prof_unmap(pm);
    const char *path = exp->threads[thread].profile_path;
    const char *name = path + strlen(exp->dir) + 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return strobe__error(eb, -errno, "%s: %s", name, strerror(errno));
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? 0 : -errno;
    if (rc == 0 && st.st_size > 0) {
        pm->len = (size_t)st.st_size;
        pm->map = mmap(NULL, pm->len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (pm->map == MAP_FAILED) {
            pm->map = NULL;
            rc = -errno;
        }
    }
    close(fd);
    if (rc)
        return strobe__error(eb, rc, "%s: %s", name, strerror(-rc));
    if ((rc = strobe__prof_check(pm->map, pm->len, name, &pm->view, eb))) {
        prof_unmap(pm);
        return rc;
    }
    pm->thread = thread;
    return 0;
}

/* The merged node of profile slot `slot` of `thread` (checked by
 * strobe__prof_check: parents are earlier node slots). */
static int node_of_slot(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                        uint32_t thread, uint32_t slot, struct prof_map *pm, uint32_t *out,
                        struct strobe_errbuf *eb)
{
    *out = 0;
    if (slot == STROBE_NONE)
        return 0;
    int rc = prof_map(exp, thread, pm, eb);
    if (rc)
        return rc;
    const struct strobe_process_info *p = &exp->processes[exp->threads[thread].process];
    const char *name = exp->threads[thread].profile_path + strlen(exp->dir) + 1;
    if (slot >= pm->view.hdr.slot_count)
        return strobe__error(eb, STROBE_ERR_FORMAT,
                             "%s: slot %u of a MALLOC LIVE record is past its %u slots", name, slot,
                             pm->view.hdr.slot_count);
    uint32_t depth = 0, *path = malloc(sizeof *path * (slot + 1));
    if (!path)
        return -ENOMEM;
    for (uint32_t s = slot; s != 0;) {
        struct strobe_prof_node n;
        memcpy(&n, pm->view.slots + (size_t)s * 64, sizeof n);
        if (n.tag != STROBE_SLOT_NODE || n.region >= p->region_map_len) {
            free(path);
            return strobe__error(eb, STROBE_ERR_FORMAT,
                                 "%s: slot %u of a MALLOC LIVE record is not a call path", name, slot);
        }
        path[depth++] = p->region_map[n.region];
        s = n.parent;
    }
    uint32_t node = 0;
    while (depth > 0 && node != STROBE_NONE)
        node = child_of(prof, node, path[--depth]);
    free(path);
    *out = node;
    return 0;
}

/* The path entry of `node`, added when new (paths is indexed by node; the
 * last entry stands for STROBE_NONE). */
static struct strobe_malloc_path *path_at(struct strobe_malloc_path *byn, size_t nnodes, uint32_t node)
{
    struct strobe_malloc_path *p = &byn[node == STROBE_NONE ? nnodes : node];
    p->node = node;
    return p;
}

static uint32_t find_metric(const struct strobe_experiment *exp, const char *name)
{
    for (size_t m = 0; m < exp->nmetrics; m++)
        if (strcmp(exp->metrics[m].name, name) == 0 && strcmp(exp->metrics[m].unit, "bytes") == 0)
            return (uint32_t)m;
    return STROBE_NONE;
}

static int cmp_path(const void *a, const void *b)
{
    const struct strobe_malloc_path *x = a, *y = b;
    if (x->alloc_bytes != y->alloc_bytes)
        return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int cmp_leak_key(const void *a, const void *b)
{
    const struct strobe_malloc_leak *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int cmp_leak(const void *a, const void *b)
{
    const struct strobe_malloc_leak *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return cmp_leak_key(a, b);
}

static int cmp_live(const void *a, const void *b)
{
    const struct strobe_malloc_live *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static int cmp_large(const void *a, const void *b)
{
    const struct strobe_malloc_large *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* The ALLOC events of one thread's stream, with the call path of each. */
static int read_large(const struct strobe_experiment *exp, const struct strobe_profile *prof, uint32_t thread,
                      struct strobe_malloc_model *m, size_t *cap, struct strobe_errbuf *eb)
{
    struct strobe_stream_iter *it;
    int rc = strobe_stream_open(exp, thread, &it, eb);
    if (rc)
        return rc;
    uint32_t *stack = NULL;
    size_t depth = 0, scap = 0;
    struct strobe_event ev;
    while ((rc = strobe_stream_next(it, &ev, eb)) == 1) {
        if (ev.type == STROBE_EVENT_ENTER || ev.type == STROBE_EVENT_INHERIT) {
            if (depth == scap) {
                scap = scap ? 2 * scap : 64;
                uint32_t *s = realloc(stack, scap * sizeof *s);
                if (!s) {
                    rc = -ENOMEM;
                    break;
                }
                stack = s;
            }
            stack[depth] = child_of(prof, depth ? stack[depth - 1] : 0, ev.region);
            depth++;
        } else if (ev.type == STROBE_EVENT_EXIT && depth > 0) {
            depth--;
        } else if (ev.type == STROBE_EVENT_ALLOC) {
            if (m->nlarge == *cap) {
                *cap = *cap ? 2 * *cap : 64;
                void *l = realloc(m->large, *cap * sizeof *m->large);
                if (!l) {
                    rc = -ENOMEM;
                    break;
                }
                m->large = l;
            }
            m->large[m->nlarge++] =
                (struct strobe_malloc_large){ev.time_ns,        thread,        depth ? stack[depth - 1] : 0,
                                             ev.alloc_op,       ev.alloc_call, ev.address,
                                             (uint64_t)ev.value};
        }
    }
    free(stack);
    strobe_stream_close(it);
    return rc < 0 ? rc : 0;
}

int strobe_malloc_model_build(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                              struct strobe_malloc_model **out, struct strobe_errbuf *eb)
{
    *out = NULL;
    bool on = false;
    for (size_t p = 0; p < exp->nprocesses; p++)
        on |= exp->processes[p].malloc.on;
    if (!on)
        return -ENOENT;
    struct strobe_malloc_model *m = calloc(1, sizeof *m);
    struct strobe_malloc_path *byn = calloc(prof->nnodes + 1, sizeof *byn);
    struct prof_map pm = {.thread = STROBE_NONE};
    int rc = m && byn ? 0 : -ENOMEM;
    uint32_t ma = find_metric(exp, STROBE_MALLOC_METRIC_ALLOC),
             mf = find_metric(exp, STROBE_MALLOC_METRIC_FREE);
    for (uint32_t n = 0; n < prof->nnodes && rc == 0; n++) {
        const struct strobe_metric_stats *ms = prof->nodes[n].metrics;
        if (!ms)
            continue;
        if (ma != STROBE_NONE && ms[ma].count) {
            struct strobe_malloc_path *p = path_at(byn, prof->nnodes, n);
            p->allocs += ms[ma].count;
            p->alloc_bytes += (uint64_t)ms[ma].sum;
        }
        if (mf != STROBE_NONE && ms[mf].count) {
            struct strobe_malloc_path *p = path_at(byn, prof->nnodes, n);
            p->frees += ms[mf].count;
            p->freed_bytes += (uint64_t)ms[mf].sum;
        }
    }
    /* by thread, so each profile file is mapped once */
    struct strobe_malloc_live *live = NULL;
    if (rc == 0 && exp->nmalloc_live &&
        (!(m->leaks = calloc(exp->nmalloc_live, sizeof *m->leaks)) ||
         !(live = malloc(exp->nmalloc_live * sizeof *live))))
        rc = -ENOMEM;
    if (live) {
        memcpy(live, exp->malloc_live, exp->nmalloc_live * sizeof *live);
        qsort(live, exp->nmalloc_live, sizeof *live, cmp_live);
    }
    for (size_t i = 0; i < exp->nmalloc_live && rc == 0; i++) {
        const struct strobe_malloc_live *l = &live[i];
        uint32_t node;
        if ((rc = node_of_slot(exp, prof, l->thread, l->slot, &pm, &node, eb)))
            break;
        struct strobe_malloc_path *p = path_at(byn, prof->nnodes, node);
        p->live_blocks += l->blocks;
        p->live_bytes += l->bytes;
        m->leaks[m->nleaks++] = (struct strobe_malloc_leak){l->thread, node, l->blocks, l->bytes};
    }
    free(live);
    /* one row per thread and merged path (slots of a thread are distinct
     * paths, but the root and paths the tree lacks can repeat) */
    if (m->nleaks)
        qsort(m->leaks, m->nleaks, sizeof *m->leaks, cmp_leak_key);
    size_t rows = 0;
    for (size_t i = 0; i < m->nleaks; i++) {
        struct strobe_malloc_leak *r = rows ? &m->leaks[rows - 1] : NULL;
        if (r && r->thread == m->leaks[i].thread && r->node == m->leaks[i].node) {
            r->blocks += m->leaks[i].blocks;
            r->bytes += m->leaks[i].bytes;
        } else {
            m->leaks[rows++] = m->leaks[i];
        }
    }
    m->nleaks = rows;
    prof_unmap(&pm);
    size_t cap = 0;
    for (uint32_t t = 0; t < exp->nthreads && rc == 0; t++)
        if (exp->threads[t].stream_path && exp->processes[exp->threads[t].process].malloc.on)
            rc = read_large(exp, prof, t, m, &cap, eb);
    if (rc == 0 && !(m->paths = calloc(prof->nnodes + 1, sizeof *m->paths)))
        rc = -ENOMEM;
    for (size_t n = 0; n <= prof->nnodes && rc == 0; n++) {
        const struct strobe_malloc_path *p = &byn[n];
        if (!(p->allocs || p->frees || p->live_blocks))
            continue;
        m->paths[m->npaths++] = *p;
        m->allocs += p->allocs;
        m->alloc_bytes += p->alloc_bytes;
        m->frees += p->frees;
        m->freed_bytes += p->freed_bytes;
        m->live_blocks += p->live_blocks;
        m->live_bytes += p->live_bytes;
    }
    free(byn);
    if (rc) {
        if (rc == -ENOMEM)
            strobe__error(eb, rc, "%s: out of memory", exp->dir);
        strobe_malloc_model_free(m);
        return rc;
    }
    qsort(m->paths, m->npaths, sizeof *m->paths, cmp_path);
    if (m->nleaks)
        qsort(m->leaks, m->nleaks, sizeof *m->leaks, cmp_leak);
    if (m->nlarge)
        qsort(m->large, m->nlarge, sizeof *m->large, cmp_large);
    *out = m;
    return 0;
}

void strobe_malloc_model_free(struct strobe_malloc_model *m)
{
    if (!m)
        return;
    free(m->paths);
    free(m->leaks);
    free(m->large);
    free(m);
}
