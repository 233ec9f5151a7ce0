/* SPDX-License-Identifier: MIT */
/*
 * Synchronization interposer (sync.c): pthread mutexes, rwlocks, spin
 * locks, condition variables, barriers and POSIX semaphores, measured per
 * object and acquiring call path (profile SYNC slots), with a SYNC trace
 * record for every call that waited (format.h, STROBE_EXT_SYNC), and for
 * every call, with ordering tickets, in task-graph recording
 * (runtime.h: strobe__sync_all, strobe__sync_ticket).
 *
 * This header holds what the runtime context keeps for it: the real libc
 * entry points (resolved on first use) and the process-wide table of
 * release words through which a blocked acquirer learns who released the
 * object it waited for.
 */
#ifndef STROBE_CORE_SYNC_H
#define STROBE_CORE_SYNC_H

#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <time.h>

struct strobe__thread;
struct strobe__sync_stripe;

struct strobe__sync_real {
    int (*mutex_lock)(pthread_mutex_t *);
    int (*mutex_trylock)(pthread_mutex_t *);
    int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
    int (*mutex_unlock)(pthread_mutex_t *);
    int (*rwlock_rdlock)(pthread_rwlock_t *);
    int (*rwlock_tryrdlock)(pthread_rwlock_t *);
    int (*rwlock_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
    int (*rwlock_wrlock)(pthread_rwlock_t *);
    int (*rwlock_trywrlock)(pthread_rwlock_t *);
    int (*rwlock_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
    int (*rwlock_unlock)(pthread_rwlock_t *);
    int (*spin_lock)(pthread_spinlock_t *);
    int (*spin_trylock)(pthread_spinlock_t *);
    int (*spin_unlock)(pthread_spinlock_t *);
    int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
    int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
    int (*cond_signal)(pthread_cond_t *);
    int (*cond_broadcast)(pthread_cond_t *);
    int (*barrier_wait)(pthread_barrier_t *);
    int (*sem_wait)(sem_t *);
    int (*sem_trywait)(sem_t *);
    int (*sem_timedwait)(sem_t *, const struct timespec *);
    int (*sem_post)(sem_t *);
    /* libstrobe.so's own code: calls from there are the runtime's and are
     * passed straight on (its process lock, the publisher's condition
     * variable). 0/0 until computed. */
    uintptr_t text_lo, text_hi;
    struct strobe__sync_stripe *stripes; /* release words, allocated on first use */
};

/* Frees the thread's interposer state: when the thread is freed, and in a
 * fork child, whose profile (where its slots were) is new; the locks held
 * at fork() are forgotten, their unlocks in the child are passed on. */
void strobe__sync_free(struct strobe__thread *t);

/* Fork child: clears the release words, whose waiters were threads of
 * the parent. Async-signal-safe. */
void strobe__sync_after_fork_child(void);

#endif
