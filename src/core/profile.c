/* SPDX-License-Identifier: MIT */
/* Call-path profile slots in t<N>.prof (see profile.h). */
#define _GNU_SOURCE
#include "core/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/runtime.h"
#include "core/thread.h"
#include "core/util.h"

#define SLOT_SIZE 64u
#define FIRST_FILE_SLOTS 63u      /* header + 63 slots = one 4 KiB page */
#define MAX_GROW_SLOTS (1u << 16) /* grow by at most 4 MiB at a time */

_Static_assert(sizeof(struct strobe_prof_header) == SLOT_SIZE, "slot 0 starts one slot in");

static uint64_t file_bytes(uint32_t slots)
{
    return (uint64_t)(slots + 1) * SLOT_SIZE;
}

/* Gives the file room for `slots` slots (see mfile.c for fallocate). */
static int grow_file(int fd, uint32_t from_slots, uint32_t slots)
{
    uint64_t from = file_bytes(from_slots), to = file_bytes(slots);
    if (fallocate(fd, 0, (off_t)from, (off_t)(to - from)) == 0)
        return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS)
        return -errno;
    return ftruncate(fd, (off_t)to) == 0 ? 0 : -errno;
}

static void node_init(struct strobe_prof_node *n, uint32_t parent, uint32_t region, uint32_t next_sibling)
{
    n->tag = STROBE_SLOT_NODE;
    n->parent = parent;
    n->region = region;
    n->first_child = STROBE_PROF_NONE;
    n->next_sibling = next_sibling;
    n->first_metric = STROBE_PROF_NONE;
    n->visits = 0;
    n->incl_ticks = 0;
    n->min_ticks = UINT64_MAX;
    n->max_ticks = 0;
    n->sumsq_ticks = 0;
}

void strobe__prof_overflow(struct strobe__thread *t)
{
    if (t->prof.hdr)
        t->prof.hdr->flags |= STROBE_PROF_OVERFLOW;
}

/* Index of a fresh slot (not yet published), or STROBE_PROF_NONE when the
 * limit or the disk is reached. */
static uint32_t slot_alloc(struct strobe__thread *t)
{
    struct strobe__profile *p = &t->prof;
    uint32_t n = p->hdr->slot_count;
    if (n >= p->max_slots) {
        strobe__prof_overflow(t);
        return STROBE_PROF_NONE;
    }
    if (n >= p->file_slots) {
        uint32_t step = p->file_slots + 1 < MAX_GROW_SLOTS ? p->file_slots + 1 : MAX_GROW_SLOTS;
        uint32_t want = p->max_slots - p->file_slots < step ? p->max_slots : p->file_slots + step;
        if (grow_file(p->fd, p->file_slots, want) != 0) {
            strobe__prof_overflow(t);
            return STROBE_PROF_NONE;
        }
        p->file_slots = want;
    }
    return n;
}

/* Makes the slot filled at index n visible to readers. */
static void slot_publish(struct strobe__thread *t, uint32_t n)
{
    __atomic_store_n(&t->prof.hdr->slot_count, n + 1, __ATOMIC_RELEASE);
}

int strobe__profile_open(struct strobe__thread *t)
{
    struct strobe__profile *p = &t->prof;
    char name[40], num[24];
    strobe__concat(name, sizeof name, "t", strobe__fmt_u64(num, t->index), ".prof", (char *)NULL);
    uint64_t limit = strobe__rt.cfg.profile_limit;
    uint64_t max_slots = limit / SLOT_SIZE - 1;
    if (max_slots > UINT32_MAX - 1)
        max_slots = UINT32_MAX - 1;
    p->max_slots = (uint32_t)max_slots;
    p->map_len = (size_t)file_bytes(p->max_slots);
    p->fd = openat(strobe__rt.proc_fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (p->fd < 0) {
        p->fd = -1;
        return -errno;
    }
    p->file_slots = FIRST_FILE_SLOTS < p->max_slots ? FIRST_FILE_SLOTS : p->max_slots;
    int rc = grow_file(p->fd, 0, p->file_slots);
    void *m = MAP_FAILED;
    if (rc == 0) {
        /* Reserve the whole limit; pages past the end of the file are never
         * touched before the file has grown over them. */
        m = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, p->fd, 0);
        if (m == MAP_FAILED)
            rc = -errno;
    }
    if (rc) {
        close(p->fd);
        unlinkat(strobe__rt.proc_fd, name, 0);
        p->fd = -1;
        return rc;
    }
    struct strobe_prof_header *h = m;
    p->hdr = h;
    h->version = STROBE_FORMAT_VERSION;
    h->header_size = sizeof *h;
    h->slot_size = SLOT_SIZE;
    h->thread_index = t->index;
    h->flags = 0;
    t->slots = (struct strobe_prof_node *)(h + 1);
    node_init(&t->slots[0], STROBE_PROF_NONE, STROBE_PROF_NO_REGION, STROBE_PROF_NONE);
    slot_publish(t, 0);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(h->magic, STROBE_MAGIC_PROFILE, sizeof h->magic);
    t->stack[0].node = &t->slots[0];
    return 0;
}

struct strobe_prof_node *strobe__prof_child(struct strobe__thread *t, struct strobe_prof_node *parent,
                                            uint32_t id)
{
    if (parent == &t->overflow_node)
        return parent;
    struct strobe_prof_node *s = t->slots;
    uint32_t prev = STROBE_PROF_NONE;
    for (uint32_t ci = parent->first_child; ci != STROBE_PROF_NONE; ci = s[ci].next_sibling) {
        if (s[ci].region == id) {
            if (prev != STROBE_PROF_NONE) { /* move to front */
                s[prev].next_sibling = s[ci].next_sibling;
                s[ci].next_sibling = parent->first_child;
                parent->first_child = ci;
            }
            return &s[ci];
        }
        prev = ci;
    }
    uint32_t n = slot_alloc(t);
    if (n == STROBE_PROF_NONE)
        return &t->overflow_node;
    node_init(&s[n], (uint32_t)(parent - s), id, parent->first_child);
    slot_publish(t, n);
    parent->first_child = n;
    return &s[n];
}

void strobe__prof_metric(struct strobe__thread *t, struct strobe_prof_node *node, uint32_t metric,
                         int64_t value)
{
    strobe__prof_metric_samples(t, node, metric, 1, value, value, value);
}

void strobe__prof_metric_samples(struct strobe__thread *t, struct strobe_prof_node *node, uint32_t metric,
                                 uint64_t count, int64_t sum, int64_t min, int64_t max)
{
    if (node == &t->overflow_node)
        return;
    struct strobe_prof_metric *m = NULL;
    for (uint32_t mi = node->first_metric; mi != STROBE_PROF_NONE;) {
        struct strobe_prof_metric *x = (struct strobe_prof_metric *)&t->slots[mi];
        if (x->metric == metric) {
            m = x;
            break;
        }
        mi = x->next;
    }
    if (!m) {
        uint32_t n = slot_alloc(t);
        if (n == STROBE_PROF_NONE)
            return;
        m = (struct strobe_prof_metric *)&t->slots[n];
        memset(m, 0, sizeof *m);
        m->tag = STROBE_SLOT_METRIC;
        m->node = (uint32_t)(node - t->slots);
        m->metric = metric;
        m->next = node->first_metric;
        m->min = INT64_MAX;
        m->max = INT64_MIN;
        slot_publish(t, n);
        node->first_metric = n;
    }
    m->count += count;
    m->sum = (int64_t)((uint64_t)m->sum + (uint64_t)sum); /* wraps instead of UB */
    if (min < m->min)
        m->min = min;
    if (max > m->max)
        m->max = max;
}

struct strobe_prof_sync *strobe__prof_sync_slot(struct strobe__thread *t, struct strobe_prof_node *node,
                                                uint64_t object, uint32_t kind)
{
    uint32_t n = slot_alloc(t);
    if (n == STROBE_PROF_NONE)
        return NULL;
    struct strobe_prof_sync *s = (struct strobe_prof_sync *)&t->slots[n];
    memset(s, 0, sizeof *s);
    s->tag = STROBE_SLOT_SYNC;
    s->node = node == &t->overflow_node ? 0 : (uint32_t)(node - t->slots);
    s->kind = kind;
    s->object = object;
    slot_publish(t, n);
    return s;
}

void strobe__profile_close(struct strobe__thread *t)
{
    struct strobe__profile *p = &t->prof;
    if (p->fd < 0)
        return;
    uint32_t used = p->hdr->slot_count;
    __atomic_store_n(&p->hdr->flags, p->hdr->flags | STROBE_PROF_ENDED, __ATOMIC_RELEASE);
    munmap(p->hdr, p->map_len);
    int unused = ftruncate(p->fd, (off_t)((uint64_t)used * SLOT_SIZE + SLOT_SIZE));
    (void)unused; /* a longer file (zero slots past slot_count) is still valid */
    close(p->fd);
    p->fd = -1;
    p->hdr = NULL;
    t->slots = NULL;
}

void strobe__profile_abandon(struct strobe__thread *t)
{
    struct strobe__profile *p = &t->prof;
    if (p->fd < 0)
        return;
    munmap(p->hdr, p->map_len);
    close(p->fd);
    p->fd = -1;
    p->hdr = NULL;
    t->slots = NULL;
}
