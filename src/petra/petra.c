/* SPDX-License-Identifier: MIT */
/* Public API of libstrobe-petra (include/strobe/petra.h): lifetime of a
 * heap, structures, thread handles, and the calls that forward to tx.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "petra/checkpoint.h"
#include "petra/ebr.h"
#include "petra/heap.h"
#include "petra/pmem.h"
#include "petra/tx.h"

static struct strobe_petra *alloc_heap(const char *path, int powerfail, char *why, size_t why_len)
{
    if (!path || strlen(path) >= sizeof((struct strobe_petra *)0)->path) {
        strobe__petra_why(why, why_len, "bad path");
        return NULL;
    }
    struct strobe_petra *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    strcpy(h->path, path);
    h->fd = -1;
    h->powerfail = powerfail;
    h->flush_kind = strobe__pmem_detect();
    pthread_mutex_init(&h->lock, NULL);
    pthread_mutex_init(&h->ckpt_lock, NULL);
    pthread_mutex_init(&h->ckpt_wait_lock, NULL);
    pthread_cond_init(&h->ckpt_cond, NULL);
    atomic_store(&h->next_txid, 1);
    atomic_store(&h->retired_below, 1);
    return h;
}

static int alloc_threads(struct strobe_petra *h, unsigned max_threads)
{
    h->threads = aligned_alloc(64, ((max_threads + 1) * sizeof *h->threads + 63) & ~(size_t)63);
    if (!h->threads)
        return -ENOMEM;
    memset(h->threads, 0, (max_threads + 1) * sizeof *h->threads);
    for (unsigned i = 0; i <= max_threads; i++) {
        struct strobe_petra_thread *t = &h->threads[i];
        t->h = h;
        t->slot = i;
        t->log_wrap = UINT64_MAX;
        t->rng = 0x9E3779B97F4A7C15ull * (i + 1) | 1;
        pthread_mutex_init(&t->dirty_lock, NULL);
    }
    return 0;
}

static void free_heap(struct strobe_petra *h)
{
    if (h->threads) {
        for (unsigned i = 0; i <= h->max_threads; i++) {
            strobe__ebr_free_lists(&h->threads[i]);
            strobe__pmem_pending_free(&h->threads[i]);
            pthread_mutex_destroy(&h->threads[i].dirty_lock);
            free(h->threads[i].dirty);
        }
        free(h->threads);
    }
    strobe__heap_unmap(h);
    free(h->chunk_use);
    pthread_mutex_destroy(&h->lock);
    pthread_mutex_destroy(&h->ckpt_lock);
    pthread_mutex_destroy(&h->ckpt_wait_lock);
    pthread_cond_destroy(&h->ckpt_cond);
    free(h);
}

STROBE_API int strobe_petra_create(const char *path, const struct strobe_petra_options *opt,
                                   strobe_petra **out, char *why, size_t why_len)
{
    struct strobe_petra *h = alloc_heap(path, opt && opt->powerfail, why, why_len);
    if (!h)
        return path ? -ENOMEM : -EINVAL;
    unsigned threads = opt && opt->max_threads ? opt->max_threads : 16;
    int rc = threads > 255 ? -EINVAL : alloc_threads(h, threads);
    if (rc) {
        strobe__petra_why(why, why_len, "max_threads must be 1..255");
        free_heap(h);
        return rc;
    }
    h->max_threads = threads;
    rc = strobe__heap_create(h, opt, why, why_len);
    if (!rc) {
        h->chunk_use = calloc(h->nchunks, 1);
        rc = h->chunk_use ? strobe__ckpt_run(h, &h->threads[h->max_threads]) : -ENOMEM;
        if (rc)
            strobe__petra_why(why, why_len, "%s: initial checkpoint: %s", path, strobe_strerror(rc));
    }
    if (!rc)
        rc = strobe__ckpt_start(h);
    if (rc) {
        if (h->base)
            unlink(path);
        free_heap(h);
        return rc;
    }
    *out = h;
    return 0;
}

STROBE_API int strobe_petra_open(const char *path, const struct strobe_petra_options *opt,
                                 strobe_petra **out, char *why, size_t why_len)
{
    struct strobe_petra *h = alloc_heap(path, opt && opt->powerfail, why, why_len);
    if (!h)
        return path ? -ENOMEM : -EINVAL;
    h->salvage = opt && opt->salvage;
    int rc = strobe__heap_open(h, why, why_len);
    if (!rc) {
        unsigned threads = h->max_threads;
        h->max_threads = 0;
        rc = alloc_threads(h, threads);
        h->max_threads = threads;
    }
    if (!rc) {
        h->chunk_use = calloc(h->nchunks, 1);
        rc = h->chunk_use ? strobe__recover(h, why, why_len) : -ENOMEM;
    }
    if (!rc)
        rc = strobe__ckpt_start(h);
    if (rc) {
        free_heap(h);
        return rc;
    }
    *out = h;
    return 0;
}

STROBE_API int strobe_petra_close(strobe_petra *h)
{
    if (!h)
        return 0;
    for (unsigned i = 0; i < h->max_threads; i++)
        if (h->threads[i].attached)
            return -EBUSY;
    strobe__ckpt_stop(h);
    int rc = strobe__ckpt_run(h, &h->threads[h->max_threads]);
    free_heap(h);
    return rc;
}

STROBE_API int strobe_petra_structure_create(strobe_petra *h, const char *name,
                                             enum strobe_petra_kind kind, uint32_t buckets)
{
    if (!h || !name || !name[0] || strlen(name) > STROBE_PETRA_NAME_MAX || kind < STROBE_PETRA_LIST ||
        kind > STROBE_PETRA_MAP)
        return -EINVAL;
    if (kind == STROBE_PETRA_MAP) {
        if (!buckets)
            buckets = 65536;
        if (buckets > (1u << 24))
            return -EINVAL;
        uint32_t p = 1;
        while (p < buckets)
            p <<= 1;
        buckets = p;
    } else {
        buckets = 1;
    }
    /* The checkpoint lock keeps walks away from a half-built structure and
     * serialises use of the checkpointer's handle for the flushes. */
    pthread_mutex_lock(&h->ckpt_lock);
    int id = -1, rc = 0;
    for (int i = 0; i < STROBE_PETRA_MAX_STRUCTURES; i++) {
        if (h->structs[i].used) {
            if (!strcmp(h->structs[i].name, name)) {
                rc = -EEXIST;
                break;
            }
        } else if (id < 0) {
            id = i;
        }
    }
    if (!rc && id < 0)
        rc = STROBE_ERR_LIMIT;
    if (!rc) {
        struct petra_struct *ps = &h->structs[id];
        ps->kind = kind;
        ps->buckets = buckets;
        ps->height = kind == STROBE_PETRA_SKIPLIST ? PETRA_MAX_LEVEL : 1;
        memset(ps->name, 0, sizeof ps->name);
        strcpy(ps->name, name);
        struct strobe_petra_thread *t = &h->threads[h->max_threads];
        rc = strobe__ckpt_build_heads(t, ps);
        if (!rc)
            rc = strobe__heap_table_write(h, t, id);
        if (!rc)
            atomic_store_explicit(&ps->used, 1, memory_order_release);
    }
    pthread_mutex_unlock(&h->ckpt_lock);
    return rc ? rc : id;
}

STROBE_API int strobe_petra_structure_find(const strobe_petra *h, const char *name)
{
    if (!h || !name)
        return -EINVAL;
    for (int i = 0; i < STROBE_PETRA_MAX_STRUCTURES; i++)
        if (h->structs[i].used && !strcmp(h->structs[i].name, name))
            return i;
    return -ENOENT;
}

STROBE_API int strobe_petra_structure_info(const strobe_petra *h, int id, const char **name,
                                           enum strobe_petra_kind *kind)
{
    if (!h || id < 0 || id >= STROBE_PETRA_MAX_STRUCTURES || !h->structs[id].used)
        return -ENOENT;
    if (name)
        *name = h->structs[id].name;
    if (kind)
        *kind = h->structs[id].kind;
    return 0;
}

STROBE_API int strobe_petra_thread_attach(strobe_petra *h, strobe_petra_thread **out)
{
    if (!h || !out)
        return -EINVAL;
    pthread_mutex_lock(&h->lock);
    int rc = -EBUSY;
    for (unsigned i = 0; i < h->max_threads; i++) {
        if (!h->threads[i].attached) {
            h->threads[i].attached = 1;
            h->threads[i].help_depth = 0;
            *out = &h->threads[i];
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&h->lock);
    return rc;
}

STROBE_API void strobe_petra_thread_detach(strobe_petra_thread *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->h->lock);
    t->attached = 0;
    pthread_mutex_unlock(&t->h->lock);
}

STROBE_API int strobe_petra_execute(strobe_petra_thread *t, struct strobe_petra_op *ops, unsigned n)
{
    if (!t || !ops)
        return -EINVAL;
    return strobe__tx_execute(t, ops, n);
}

STROBE_API int strobe_petra_get(strobe_petra_thread *t, int structure, uint64_t key, uint64_t *value)
{
    if (!t)
        return -EINVAL;
    return strobe__tx_get(t, structure, key, value);
}

STROBE_API int strobe_petra_foreach(strobe_petra_thread *t, int structure,
                                    int (*fn)(void *arg, uint64_t key, uint64_t value), void *arg)
{
    if (!t || !fn)
        return -EINVAL;
    return strobe__tx_foreach(t, structure, fn, arg);
}

STROBE_API int strobe_petra_checkpoint(strobe_petra_thread *t)
{
    if (!t)
        return -EINVAL;
    return strobe__ckpt_run(t->h, t);
}

STROBE_API void strobe_petra_stats_get(const strobe_petra *h, struct strobe_petra_stats *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i <= h->max_threads; i++) {
        struct strobe_petra_thread *t = &h->threads[i];
#define SUM(f) out->f += atomic_load_explicit(&t->f, memory_order_relaxed)
        SUM(committed);
        SUM(aborted);
        SUM(ops_committed);
        SUM(tx_flushes);
        SUM(tx_fences);
        SUM(ckpt_flushes);
        SUM(ckpt_fences);
#undef SUM
        out->live_descriptor_bytes += atomic_load_explicit(&t->log_used_pub, memory_order_relaxed);
    }
    out->checkpoints = atomic_load(&((struct strobe_petra *)h)->checkpoints);
    out->recovered_descriptors = h->recovered_descriptors;
    out->recovery_ns = h->recovery_ns;
}

STROBE_API const char *strobe_petra_flush_instruction(void)
{
    return strobe__pmem_name(strobe__pmem_detect());
}
