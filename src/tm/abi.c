/* SPDX-License-Identifier: MIT */
/*
 * The GCC TM ABI entry points other than begin and the barriers: commit,
 * abort/cancel, irrevocability, user commit/undo actions, transactional
 * allocation, clone tables and the informational calls.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tm/abi.h"
#include "tm/tx.h"

#define TM_ABI __attribute__((visibility("default")))

TM_ABI void _ITM_commitTransaction(void)
{
    strobe__tm_commit(tm_tx());
}

TM_ABI void _ITM_abortTransaction(uint32_t reason)
{
    strobe__tm_cancel(tm_tx(), reason);
}

TM_ABI void _ITM_changeTransactionMode(int mode)
{
    (void)mode; /* the ABI defines only modeSerialIrrevocable */
    strobe__tm_go_irrevocable(tm_tx(), TM_SERIAL_JMV);
}

TM_ABI int _ITM_inTransaction(void)
{
    struct tm_tx *tx = strobe__tm_self;
    if (tx == NULL || tx->nesting == 0)
        return ITM_OUTSIDE_TRANSACTION;
    return tx->mode == TM_MODE_IRREVOCABLE ? ITM_IN_IRREVOCABLE_TRANSACTION : ITM_IN_RETRYABLE_TRANSACTION;
}

TM_ABI itm_transaction_id_t _ITM_getTransactionId(void)
{
    struct tm_tx *tx = strobe__tm_self;
    return tx == NULL || tx->nesting == 0 ? ITM_NO_TRANSACTION_ID : tx->id;
}

TM_ABI int _ITM_versionCompatible(int version)
{
    return version == 1;
}

TM_ABI const char *_ITM_libraryVersion(void)
{
    return "strobe-tm " STROBE_VERSION_STRING ", GCC TM ABI 1";
}

TM_ABI void _ITM_error(const void *srcloc, int code)
{
    (void)srcloc;
    fprintf(stderr, "strobe-tm: unrecoverable error %d reported by the program\n", code);
    abort();
}

/* A hint that the program no longer needs transactional access to the
 * range; nothing to do for this STM. */
TM_ABI void _ITM_dropReferences(void *p, size_t n)
{
    (void)p;
    (void)n;
}

TM_ABI void _ITM_addUserCommitAction(itm_user_commit_fn fn, itm_transaction_id_t resume, void *arg)
{
    (void)resume;
    struct tm_tx *tx = tm_tx();
    struct tm_action a = {fn, arg};
    tm_vec_push(tx->commit_actions, a);
}

TM_ABI void _ITM_addUserUndoAction(itm_user_undo_fn fn, void *arg)
{
    struct tm_tx *tx = tm_tx();
    if (tx->mode == TM_MODE_IRREVOCABLE)
        return; /* cannot be undone any more */
    struct tm_action a = {fn, arg};
    tm_vec_push(tx->undo, a);
}

/* ---- allocation ----------------------------------------------------------
 * Memory allocated in a transaction is freed if it aborts; memory freed in
 * a transaction is freed only after it commits (strobe__tm_release). */

static void tm_free(void *p, size_t size)
{
    (void)size;
    free(p);
}

TM_ABI void *_ITM_malloc(size_t n)
{
    void *p = malloc(n);
    strobe__tm_alloc_record(tm_tx(), p, n, tm_free);
    return p;
}

TM_ABI void *_ITM_calloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    strobe__tm_alloc_record(tm_tx(), p, n * size, tm_free);
    return p;
}

TM_ABI void _ITM_free(void *p)
{
    strobe__tm_release(tm_tx(), p, 0, tm_free);
}

/* ---- clone tables ----------------------------------------------------------
 * crtbegin.o registers each loaded object's .tm_clone_table (pairs of
 * original function, transactional clone) through these calls, at start-up
 * and at dlopen/dlclose. Every indirect call inside a transaction looks its
 * callee up (in vacation, a third of all cycles went to a linear scan under
 * a lock), so lookups read an immutable open-addressing index of all
 * registered pairs without any lock or write. A registration builds a new
 * index under the runtime's mutex and publishes it; the replaced index is
 * kept (chained to the new one), never freed, because a lookup on another
 * thread may still be reading it. There are as many as registrations. */

struct tm_clone_table {
    const struct itm_clone_pair *pairs;
    size_t n;
    struct tm_clone_table *next;
};

struct tm_clone_index {
    unsigned bits;                /* 2^bits slots, at most half of them used */
    struct itm_clone_pair *slots; /* orig NULL: empty */
    struct tm_clone_index *older; /* replaced indexes, kept alive */
};

static __attribute__((noreturn, cold)) void tm_clone_oom(void)
{
    fprintf(stderr, "strobe-tm: out of memory registering a clone table\n");
    abort();
}

/* Rebuilds the index from the registered tables (reg_mutex held). */
static void tm_clone_reindex(void)
{
    size_t n = 0;
    for (struct tm_clone_table *t = strobe__tm_rt.clone_tables; t != NULL; t = t->next)
        n += t->n;
    unsigned bits = 4;
    while (((size_t)1 << bits) < 2 * n)
        bits++;
    struct tm_clone_index *ix = malloc(sizeof *ix);
    struct itm_clone_pair *slots = calloc((size_t)1 << bits, sizeof *slots);
    if (ix == NULL || slots == NULL)
        tm_clone_oom();
    size_t mask = ((size_t)1 << bits) - 1;
    /* newest table first: a function registered twice maps to its newest clone */
    for (struct tm_clone_table *t = strobe__tm_rt.clone_tables; t != NULL; t = t->next)
        for (size_t i = 0; i < t->n; i++) {
            size_t h = tm_hash((uintptr_t)t->pairs[i].orig, bits);
            while (slots[h].orig != NULL && slots[h].orig != t->pairs[i].orig)
                h = (h + 1) & mask;
            if (slots[h].orig == NULL)
                slots[h] = t->pairs[i];
        }
    ix->bits = bits;
    ix->slots = slots;
    ix->older = atomic_load_explicit(&strobe__tm_rt.clone_index, memory_order_relaxed);
    /* release: a lookup that sees the index sees its slots */
    atomic_store_explicit(&strobe__tm_rt.clone_index, ix, memory_order_release);
}

TM_ABI void _ITM_registerTMCloneTable(void *table, size_t n)
{
    struct tm_clone_table *t = malloc(sizeof *t);
    if (t == NULL)
        tm_clone_oom();
    t->pairs = table;
    t->n = n;
    pthread_mutex_lock(&strobe__tm_rt.reg_mutex);
    t->next = strobe__tm_rt.clone_tables;
    strobe__tm_rt.clone_tables = t;
    tm_clone_reindex();
    pthread_mutex_unlock(&strobe__tm_rt.reg_mutex);
}

TM_ABI void _ITM_deregisterTMCloneTable(void *table)
{
    pthread_mutex_lock(&strobe__tm_rt.reg_mutex);
    for (struct tm_clone_table **p = &strobe__tm_rt.clone_tables; *p != NULL; p = &(*p)->next) {
        if ((*p)->pairs == table) {
            struct tm_clone_table *dead = *p;
            *p = dead->next;
            free(dead);
            tm_clone_reindex();
            break;
        }
    }
    pthread_mutex_unlock(&strobe__tm_rt.reg_mutex);
}

void *strobe__tm_clone_of(const void *fn)
{
    const struct tm_clone_index *ix = atomic_load_explicit(&strobe__tm_rt.clone_index, memory_order_acquire);
    if (ix == NULL || fn == NULL)
        return NULL;
    size_t mask = ((size_t)1 << ix->bits) - 1;
    for (size_t h = tm_hash((uintptr_t)fn, ix->bits);; h = (h + 1) & mask) {
        if (ix->slots[h].orig == fn)
            return ix->slots[h].clone;
        if (ix->slots[h].orig == NULL)
            return NULL;
    }
}

/* Indirect call in a __transaction_relaxed: without a clone the callee
 * runs uninstrumented, so the transaction must become irrevocable. */
TM_ABI void *_ITM_getTMCloneOrIrrevocable(void *fn)
{
    void *clone = strobe__tm_clone_of(fn);
    if (clone != NULL)
        return clone;
    strobe__tm_go_irrevocable(tm_tx(), TM_SERIAL_JMV);
    return fn;
}

/* Indirect call in a __transaction_atomic: the callee was declared
 * transaction_safe, so a missing clone is a broken program. */
TM_ABI void *_ITM_getTMCloneSafe(void *fn)
{
    void *clone = strobe__tm_clone_of(fn);
    if (clone == NULL) {
        fprintf(stderr, "strobe-tm: indirect call in a transaction to %p, which has no transactional clone\n",
                fn);
        abort();
    }
    return clone;
}
