/* SPDX-License-Identifier: MIT */
/* Epoch-based reclamation (see ebr.h). All epoch accesses are seq_cst: the
 * announcement store in enter must be ordered before the loads of the
 * structure that follow, and against the epoch check in try_advance. */
#include "petra/ebr.h"

#include <sched.h>
#include <stdlib.h>

#include "petra/heap.h"

static unsigned nthreads(const struct strobe_petra *h) { return h->max_threads + 1; }

/* Advance the global epoch if every thread inside a critical section has
 * announced the current one. */
static int try_advance(struct strobe_petra *h)
{
    uint64_t e = atomic_load(&h->epoch);
    for (unsigned i = 0; i < nthreads(h); i++) {
        uint64_t s = atomic_load(&h->threads[i].ebr_state);
        if ((s & 1) && (s >> 1) != e)
            return 0;
    }
    atomic_compare_exchange_strong(&h->epoch, &e, e + 1);
    return 1;
}

static void free_bucket(struct strobe_petra_thread *t, unsigned b)
{
    struct petra_limbo *l = &t->limbo[b];
    for (size_t i = 0; i < l->n; i++)
        strobe__arena_free(t, l->obj[i], l->cls[i]);
    l->n = 0;
}

/* Free the buckets whose epoch is at least two behind the global one. */
static void collect(struct strobe_petra_thread *t)
{
    uint64_t e = atomic_load(&t->h->epoch);
    for (unsigned b = 0; b < 3; b++)
        if (t->limbo[b].n && t->limbo_epoch[b] + 2 <= e)
            free_bucket(t, b);
}

void strobe__ebr_enter(struct strobe_petra_thread *t)
{
    uint64_t e = atomic_load(&t->h->epoch);
    atomic_store(&t->ebr_state, (e << 1) | 1);
}

void strobe__ebr_exit(struct strobe_petra_thread *t)
{
    atomic_store_explicit(&t->ebr_state, 0, memory_order_release);
}

void strobe__ebr_retire(struct strobe_petra_thread *t, pref obj, unsigned cls)
{
    uint64_t e = atomic_load(&t->h->epoch);
    unsigned b = (unsigned)(e % 3);
    struct petra_limbo *l = &t->limbo[b];
    if (l->n && t->limbo_epoch[b] != e) {
        /* this bucket holds epoch e-3 or older: safe to free now */
        free_bucket(t, b);
    }
    t->limbo_epoch[b] = e;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        pref *o = realloc(l->obj, cap * sizeof *o);
        uint8_t *c = o ? realloc(l->cls, cap) : NULL;
        if (!o || !c) {
            /* Out of memory for bookkeeping: leak the object rather than
             * free it early (verify would report it). */
            if (o)
                l->obj = o;
            return;
        }
        l->obj = o;
        l->cls = c;
        l->cap = cap;
    }
    l->obj[l->n] = obj;
    l->cls[l->n] = (uint8_t)cls;
    l->n++;
    if ((l->n & 63) == 0) {
        try_advance(t->h);
        collect(t);
    }
}

void strobe__ebr_synchronize(struct strobe_petra *h)
{
    uint64_t target = atomic_load(&h->epoch) + 2;
    while (atomic_load(&h->epoch) < target)
        if (!try_advance(h))
            sched_yield();
}

void strobe__ebr_drain(struct strobe_petra_thread *t)
{
    for (unsigned b = 0; b < 3; b++)
        free_bucket(t, b);
}

void strobe__ebr_free_lists(struct strobe_petra_thread *t)
{
    for (unsigned b = 0; b < 3; b++) {
        free(t->limbo[b].obj);
        free(t->limbo[b].cls);
        t->limbo[b] = (struct petra_limbo){ 0 };
    }
}
