/* SPDX-License-Identifier: MIT */
/*
 * The C++ part of GCC's TM ABI: the transactional clones of the global
 * operators new and delete (`_ZGTt...`, which `g++ -fgnu-tm` calls for
 * `new` and `delete` inside atomic blocks) and the exception calls
 * (`_ITM_cxa_*`, `_ITM_commitTransactionEH`). Without them a C++ program
 * would run half on libitm, and two TM runtimes in one transaction corrupt
 * memory.
 *
 * Semantics are GCC's: memory from `new` is released if the attempt aborts
 * (or its nested block is cancelled); `delete` is deferred past the commit
 * like `free`; an exception object lives through three phases (allocated,
 * in flight, caught), each undone on abort; an exception that leaves an
 * atomic block commits it.
 *
 * libstrobe-tm is loaded into C programs too, so it must not depend on a
 * C++ runtime: everything of libstdc++/libsupc++ is a weak reference. It is
 * bound whenever these entry points can be called, since only a C++
 * program calls them.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unwind.h>

#include "tm/tx.h"

#define TM_ABI __attribute__((visibility("default")))

/* ---- the C++ runtime, weakly ---------------------------------------------
 * Mangled names of the replaceable global operators (x86-64: size_t is
 * `m`; std::align_val_t is passed as a size_t; a `const std::nothrow_t &`
 * as a pointer to an empty object). */

void *_Znwm(size_t);
void *_Znam(size_t);
void *_ZnwmRKSt9nothrow_t(size_t, const void *);
void *_ZnamRKSt9nothrow_t(size_t, const void *);
void *_ZnwmSt11align_val_t(size_t, size_t);
void *_ZnamSt11align_val_t(size_t, size_t);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t, size_t, const void *);
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t, size_t, const void *);
void _ZdlPv(void *);
void _ZdaPv(void *);
void _ZdlPvm(void *, size_t);
void _ZdaPvm(void *, size_t);
void _ZdlPvRKSt9nothrow_t(void *, const void *);
void _ZdaPvRKSt9nothrow_t(void *, const void *);
void _ZdlPvSt11align_val_t(void *, size_t);
void _ZdaPvSt11align_val_t(void *, size_t);
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *, size_t, const void *);
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *, size_t, const void *);
#pragma weak _Znwm
#pragma weak _Znam
#pragma weak _ZnwmRKSt9nothrow_t
#pragma weak _ZnamRKSt9nothrow_t
#pragma weak _ZnwmSt11align_val_t
#pragma weak _ZnamSt11align_val_t
#pragma weak _ZnwmSt11align_val_tRKSt9nothrow_t
#pragma weak _ZnamSt11align_val_tRKSt9nothrow_t
#pragma weak _ZdlPv
#pragma weak _ZdaPv
#pragma weak _ZdlPvm
#pragma weak _ZdaPvm
#pragma weak _ZdlPvRKSt9nothrow_t
#pragma weak _ZdaPvRKSt9nothrow_t
#pragma weak _ZdlPvSt11align_val_t
#pragma weak _ZdaPvSt11align_val_t
#pragma weak _ZdlPvSt11align_val_tRKSt9nothrow_t
#pragma weak _ZdaPvSt11align_val_tRKSt9nothrow_t

/* The Itanium C++ ABI's exception calls, and libsupc++'s per-thread
 * exception state (its layout is part of that ABI) and its rollback helper
 * for transactional memory. */
struct tm_cxa_eh_globals {
    void *caught_exceptions;
    unsigned int uncaught_exceptions;
};
void *__cxa_allocate_exception(size_t);
void __cxa_free_exception(void *);
__attribute__((noreturn)) void __cxa_throw(void *, void *, void (*)(void *));
void *__cxa_begin_catch(void *);
void __cxa_end_catch(void);
struct tm_cxa_eh_globals *__cxa_get_globals(void);
void __cxa_tm_cleanup(void *unthrown, void *in_flight, unsigned int caught);
#pragma weak __cxa_allocate_exception
#pragma weak __cxa_free_exception
#pragma weak __cxa_throw
#pragma weak __cxa_begin_catch
#pragma weak __cxa_end_catch
#pragma weak __cxa_get_globals
#pragma weak __cxa_tm_cleanup

static __attribute__((noreturn, cold)) void tm_cxx_missing(const char *name)
{
    fprintf(stderr, "strobe-tm: a transaction needs %s, but no C++ runtime in the process defines it\n",
            name);
    abort();
}

/* Only a C++ program calls into this file, so its runtime is there; a
 * clear line rather than a jump to address 0 if it somehow is not. */
#define TM_CXX_NEED(fn)                                                                                      \
    do {                                                                                                     \
        if (TM_UNLIKELY((fn) == NULL))                                                                       \
            tm_cxx_missing(#fn);                                                                             \
    } while (0)

/* ---- operator new and delete ---------------------------------------------
 * Each form of new records its block with the matching form of delete as
 * the release function; each form of delete hands the block to
 * strobe__tm_release. For the aligned forms the block's size field holds
 * the alignment instead: their release needs it, and the unsized aligned
 * delete is always a valid way to release (the sized one only lets the
 * allocator skip a look-up). */

static const char tm_nothrow; /* stands for std::nothrow: an empty object */

/* A release function (tm_release_fn) `name` that calls the C++ runtime's
 * operator `op` with the arguments `args` (p: the block; size: its size,
 * or its alignment for the aligned forms). */
#define TM_RELEASE_FN(name, op, args)                                                                        \
    static void name(void *p, size_t size)                                                                   \
    {                                                                                                        \
        (void)size;                                                                                          \
        TM_CXX_NEED(op);                                                                                     \
        op args;                                                                                             \
    }

TM_RELEASE_FN(tm_delete, _ZdlPv, (p))
TM_RELEASE_FN(tm_delete_array, _ZdaPv, (p))
TM_RELEASE_FN(tm_delete_sized, _ZdlPvm, (p, size))
TM_RELEASE_FN(tm_delete_array_sized, _ZdaPvm, (p, size))
TM_RELEASE_FN(tm_delete_nothrow, _ZdlPvRKSt9nothrow_t, (p, &tm_nothrow))
TM_RELEASE_FN(tm_delete_array_nothrow, _ZdaPvRKSt9nothrow_t, (p, &tm_nothrow))
TM_RELEASE_FN(tm_delete_aligned, _ZdlPvSt11align_val_t, (p, size))
TM_RELEASE_FN(tm_delete_array_aligned, _ZdaPvSt11align_val_t, (p, size))
TM_RELEASE_FN(tm_delete_aligned_nothrow, _ZdlPvSt11align_val_tRKSt9nothrow_t, (p, size, &tm_nothrow))
TM_RELEASE_FN(tm_delete_array_aligned_nothrow, _ZdaPvSt11align_val_tRKSt9nothrow_t, (p, size, &tm_nothrow))

/* A throwing operator new may throw std::bad_alloc through this frame
 * (cxx.c is compiled with -fexceptions); nothing is recorded then. */
static void *tm_new(void *p, size_t size, tm_release_fn release)
{
    strobe__tm_alloc_record(tm_tx(), p, size, release);
    return p;
}

TM_ABI void *_ZGTtnwm(size_t n)
{
    TM_CXX_NEED(_Znwm);
    return tm_new(_Znwm(n), n, tm_delete);
}

TM_ABI void *_ZGTtnam(size_t n)
{
    TM_CXX_NEED(_Znam);
    return tm_new(_Znam(n), n, tm_delete_array);
}

TM_ABI void *_ZGTtnwmRKSt9nothrow_t(size_t n, const void *nt)
{
    TM_CXX_NEED(_ZnwmRKSt9nothrow_t);
    return tm_new(_ZnwmRKSt9nothrow_t(n, nt), n, tm_delete_nothrow);
}

TM_ABI void *_ZGTtnamRKSt9nothrow_t(size_t n, const void *nt)
{
    TM_CXX_NEED(_ZnamRKSt9nothrow_t);
    return tm_new(_ZnamRKSt9nothrow_t(n, nt), n, tm_delete_array_nothrow);
}

TM_ABI void *_ZGTtnwmSt11align_val_t(size_t n, size_t align)
{
    TM_CXX_NEED(_ZnwmSt11align_val_t);
    return tm_new(_ZnwmSt11align_val_t(n, align), align, tm_delete_aligned);
}

TM_ABI void *_ZGTtnamSt11align_val_t(size_t n, size_t align)
{
    TM_CXX_NEED(_ZnamSt11align_val_t);
    return tm_new(_ZnamSt11align_val_t(n, align), align, tm_delete_array_aligned);
}

TM_ABI void *_ZGTtnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t align, const void *nt)
{
    TM_CXX_NEED(_ZnwmSt11align_val_tRKSt9nothrow_t);
    return tm_new(_ZnwmSt11align_val_tRKSt9nothrow_t(n, align, nt), align, tm_delete_aligned_nothrow);
}

TM_ABI void *_ZGTtnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t align, const void *nt)
{
    TM_CXX_NEED(_ZnamSt11align_val_tRKSt9nothrow_t);
    return tm_new(_ZnamSt11align_val_tRKSt9nothrow_t(n, align, nt), align, tm_delete_array_aligned_nothrow);
}

TM_ABI void _ZGTtdlPv(void *p)
{
    strobe__tm_release(tm_tx(), p, 0, tm_delete);
}

TM_ABI void _ZGTtdaPv(void *p)
{
    strobe__tm_release(tm_tx(), p, 0, tm_delete_array);
}

TM_ABI void _ZGTtdlPvm(void *p, size_t n)
{
    strobe__tm_release(tm_tx(), p, n, tm_delete_sized);
}

/* Not in libitm, although g++ 12 calls it for `delete[]` of objects with a
 * destructor: such programs link only against libstrobe-tm. */
TM_ABI void _ZGTtdaPvm(void *p, size_t n)
{
    strobe__tm_release(tm_tx(), p, n, tm_delete_array_sized);
}

TM_ABI void _ZGTtdlPvRKSt9nothrow_t(void *p, const void *nt)
{
    (void)nt;
    strobe__tm_release(tm_tx(), p, 0, tm_delete_nothrow);
}

TM_ABI void _ZGTtdaPvRKSt9nothrow_t(void *p, const void *nt)
{
    (void)nt;
    strobe__tm_release(tm_tx(), p, 0, tm_delete_array_nothrow);
}

/* libitm exports this one although C++ has no sized nothrow delete: the
 * unsized nothrow delete releases the block. */
TM_ABI void _ZGTtdlPvmRKSt9nothrow_t(void *p, size_t n, const void *nt)
{
    (void)n;
    (void)nt;
    strobe__tm_release(tm_tx(), p, 0, tm_delete_nothrow);
}

TM_ABI void _ZGTtdlPvSt11align_val_t(void *p, size_t align)
{
    strobe__tm_release(tm_tx(), p, align, tm_delete_aligned);
}

TM_ABI void _ZGTtdaPvSt11align_val_t(void *p, size_t align)
{
    strobe__tm_release(tm_tx(), p, align, tm_delete_array_aligned);
}

TM_ABI void _ZGTtdlPvmSt11align_val_t(void *p, size_t n, size_t align)
{
    (void)n;
    strobe__tm_release(tm_tx(), p, align, tm_delete_aligned);
}

TM_ABI void _ZGTtdaPvmSt11align_val_t(void *p, size_t n, size_t align)
{
    (void)n;
    strobe__tm_release(tm_tx(), p, align, tm_delete_array_aligned);
}

TM_ABI void _ZGTtdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt)
{
    (void)nt;
    strobe__tm_release(tm_tx(), p, align, tm_delete_aligned_nothrow);
}

TM_ABI void _ZGTtdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt)
{
    (void)nt;
    strobe__tm_release(tm_tx(), p, align, tm_delete_array_aligned_nothrow);
}

/* ---- exceptions ------------------------------------------------------------
 * An exception object thrown inside a transaction goes through three
 * phases, and an abort in each must leave no trace:
 *  1. allocated (_ITM_cxa_allocate_exception), not yet thrown, and
 *  2. in flight (_ITM_cxa_throw: libsupc++ counts it as uncaught), while
 *     the stack unwinds through cleanups inside the transaction: the
 *     object is an allocation of the attempt, freed on abort like memory
 *     from new. The uncaught count is restored from the checkpoint, which
 *     also covers a rethrow.
 *  3. caught (_ITM_cxa_begin_catch until _ITM_cxa_end_catch): from now on
 *     __cxa_end_catch frees it, so its allocation record is retired, and
 *     an abort ends the open catch handlers with __cxa_tm_cleanup (as
 *     __cxa_end_catch would, without destructors: the memory is being
 *     rolled back anyway).
 * Throws and catches nest properly inside atomic blocks (GCC wraps each
 * block in an exception region of its own), so counting the open catch
 * handlers is enough. An exception that leaves the block commits it
 * (_ITM_commitTransactionEH); if that commit fails, the attempt's
 * exception is undone with it and the block runs again. */

static __thread void *tm_cxx_in_flight __attribute__((tls_model("initial-exec")));

static void tm_cxx_free_exception(void *obj, size_t size)
{
    (void)size;
    __cxa_free_exception(obj);
}

/* The release function of an exception that has been caught: nothing,
 * as the catch handler frees it (or an abort's __cxa_tm_cleanup does). */
static void tm_cxx_caught(void *obj, size_t size)
{
    (void)obj;
    (void)size;
}

/* The allocation record, from entry `from` on, of the exception whose
 * unwind header is ue, or NULL if the transaction did not allocate it. A
 * C++ exception object directly follows its header, which ends with the
 * unwind header (Itanium C++ exception ABI, 2.2.1); a foreign or dependent
 * exception matches no record. */
static struct tm_block *tm_cxx_record_of(struct tm_tx *tx, void *ue, size_t from)
{
    void *obj = (struct _Unwind_Exception *)ue + 1;
    for (size_t i = tx->allocs.n; i-- > from;) {
        struct tm_block *b = &tx->allocs.v[i];
        if (b->p == obj && (b->release == tm_cxx_free_exception || b->release == tm_cxx_caught))
            return b;
    }
    return NULL;
}

TM_ABI void *_ITM_cxa_allocate_exception(size_t size)
{
    TM_CXX_NEED(__cxa_allocate_exception);
    void *obj = __cxa_allocate_exception(size);
    strobe__tm_alloc_record(tm_tx(), obj, size, tm_cxx_free_exception);
    return obj;
}

/* Called when the constructor of the exception object throws: like a
 * delete, the object is freed once the transaction commits (and by the
 * abort, as an allocation of the attempt, if it does not). */
TM_ABI void _ITM_cxa_free_exception(void *obj)
{
    strobe__tm_release(tm_tx(), obj, 0, tm_cxx_free_exception);
}

TM_ABI __attribute__((noreturn)) void _ITM_cxa_throw(void *obj, void *tinfo, void (*dest)(void *))
{
    TM_CXX_NEED(__cxa_throw);
    __cxa_throw(obj, tinfo, dest);
}

TM_ABI void *_ITM_cxa_begin_catch(void *ue)
{
    TM_CXX_NEED(__cxa_begin_catch);
    struct tm_tx *tx = tm_tx();
    struct tm_block *b = tm_cxx_record_of(tx, ue, 0);
    if (b != NULL)
        b->release = tm_cxx_caught;
    tx->cxx_catches++;
    return __cxa_begin_catch(ue);
}

TM_ABI void _ITM_cxa_end_catch(void)
{
    TM_CXX_NEED(__cxa_end_catch);
    tm_tx()->cxx_catches--;
    __cxa_end_catch();
}

/* The exception is passed so that a failed commit can undo it: a rethrow of
 * an exception caught in the attempt has no allocation record left. */
TM_ABI void _ITM_commitTransactionEH(void *ue)
{
    tm_cxx_in_flight = ue;
    strobe__tm_commit(tm_tx());
    tm_cxx_in_flight = NULL;
}

unsigned *strobe__tm_cxx_uncaught_counter(void)
{
    if (__cxa_get_globals == NULL)
        return NULL;
    struct tm_cxa_eh_globals *g = __cxa_get_globals();
    return g != NULL ? &g->uncaught_exceptions : NULL;
}

void strobe__tm_cxx_rollback(struct tm_tx *tx, const struct tm_checkpoint *cp)
{
    void *ue = tm_cxx_in_flight;
    if (ue != NULL) {
        /* A commit failed while this exception left the block. Allocated
         * and still recorded: the abort frees it with the other blocks.
         * Caught and rethrown in the attempt: freed here. Older than the
         * attempt (or thrown by uninstrumented code): left alone. */
        tm_cxx_in_flight = NULL;
        struct tm_block *b = tm_cxx_record_of(tx, ue, cp->nalloc);
        if (b != NULL && b->release == tm_cxx_caught && __cxa_tm_cleanup != NULL)
            __cxa_tm_cleanup(NULL, ue, 0);
    }
    uint32_t open = tx->cxx_catches - cp->ncatch;
    if (open != 0 && __cxa_tm_cleanup != NULL)
        __cxa_tm_cleanup(NULL, NULL, open);
    tx->cxx_catches = cp->ncatch;
    if (tx->cxx_uncaught != NULL)
        *tx->cxx_uncaught = cp->nuncaught;
}
