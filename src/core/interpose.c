/* SPDX-License-Identifier: MIT */
/*
 * C library functions the runtime interposes: thread creation, join and
 * exit (THREAD_CREATE/BEGIN/JOIN/END), fork() and vfork() (FORK; the
 * child's side is in runtime.c), exit() and __libc_start_main (the exit
 * status for PROCESS_END), dlopen (MODULE records of the objects it loads,
 * so that samples in them are symbolized even when none of their
 * functions is instrumented).
 *
 * Interposition works the same whether libstrobe.so is preloaded or linked
 * with -lstrobe: the program's references bind to the first definition in
 * the global lookup scope, which is ours in both cases, and ours call the
 * next one, found with dlsym(RTLD_NEXT) (libc, or a sanitizer runtime
 * loaded after us). An unversioned definition satisfies the program's
 * versioned references (pthread_create@GLIBC_2.34).
 *
 * Not seen: threads started by C11 thrd_create or by libc internally (they
 * are registered on their first event, with no parent), clone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/bb.h"
#include "core/hotpath.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/thread.h"
#include "core/util.h"
#include "strobe/strobe.h"

/* The next definition of `name`, resolved on first use: a wrapper can run
 * before the runtime's constructor (from another library's). Racing
 * threads store the same value; the atomics keep that well-defined. */
void *strobe__real(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (STROBE_UNLIKELY(!p)) {
        p = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    return p;
}

#define REAL(field, name) ((__typeof__(strobe__rt.field))strobe__real((void **)&strobe__rt.field, name))

/* Appends an EXT record with one uleb payload for the calling thread, at
 * time `now` (0: now). */
static void record_ext_u64(struct strobe__thread *t, unsigned type, uint64_t v, uint64_t now)
{
    uint8_t payload[10];
    size_t n = (size_t)(strobe_uleb_put(payload, v) - payload);
    strobe__busy_set(t, STROBE__BUSY_IN);
    strobe__ext_record(t, type, now ? now : strobe__now(t), payload, n);
    strobe__busy_clear(t, STROBE__BUSY_IN);
}

/* A THREAD_CREATE or THREAD_JOIN record of thread `index` with its
 * ticket (0: none; a ticketed record that was written is also marked in
 * the thread's block stream) at time `now` (0: now). */
static void record_thread_op(struct strobe__thread *t, unsigned type, uint32_t index, uint64_t ticket,
                             uint64_t now)
{
    uint8_t payload[20], *q = strobe_uleb_put(payload, index);
    q = strobe_uleb_put(q, ticket);
    strobe__busy_set(t, STROBE__BUSY_IN);
    if (strobe__ext_record(t, type, now ? now : strobe__now(t), payload, (size_t)(q - payload)) == 0 &&
        ticket)
        strobe__bb_mark(t, ticket);
    strobe__busy_clear(t, STROBE__BUSY_IN);
}

/* A ticket for thread t's create or join in task-graph recording (sync.c
 * records the other synchronization calls), else 0. */
static uint64_t thread_op_ticket(const struct strobe__thread *t)
{
    return (t->mode & STROBE__MODE_SYNC) && strobe__sync_all() ? strobe__sync_ticket() : 0;
}

/* ---- modules ---- */

void *strobe__real_dlopen(const char *file, int mode)
{
    return REAL(real_dlopen, "dlopen")(file, mode);
}

/* Not in a TSan build, where dlopen runs before TSan has set itself up
 * (as malloc does, malloc.c): modules loaded then are found at exit. */
#ifndef STROBE_TSAN
STROBE_API void *dlopen(const char *file, int mode)
{
    void *h = strobe__real_dlopen(file, mode);
    /* Not while this thread is inside the runtime (libdw's own dlopen in
     * symbols.c happens under the lock). */
    struct strobe__thread *t = strobe__tls.t;
    if (h && strobe__active() && !(t && (__atomic_load_n(&t->busy, __ATOMIC_RELAXED) & STROBE__BUSY_IN))) {
        if (t)
            strobe__busy_set(t, STROBE__BUSY_IN);
        pthread_mutex_lock(&strobe__rt.lock);
        strobe__modules_scan_locked();
        pthread_mutex_unlock(&strobe__rt.lock);
        if (t)
            strobe__busy_clear(t, STROBE__BUSY_IN);
    }
    return h;
}
#endif

/* ---- threads ---- */

#ifdef STROBE_TSAN
/* In a TSan build, this runtime's pthread_create may be called by TSan's
 * interceptor (when libtsan precedes libstrobe in the lookup order, as it
 * does in a program linked with -fsanitize=thread -lstrobe): the start
 * routine we are handed is then TSan's, which sets the new thread up for
 * TSan, and until it has run no instrumented code may run on the thread.
 * So the trampoline is not instrumented, touches nothing but TLS before
 * calling it, and the thread is attached on its first event instead
 * (strobe__thread_current). After the routine returns TSan still knows the
 * thread (it forgets it in a TLS destructor), so ending it here is safe. */
__attribute__((no_sanitize_thread)) static void *thread_trampoline(void *arg)
{
    struct strobe__thread *t = arg;
    strobe__tls.pending = t;
    void *ret = t->start(t->arg);
    if (strobe__tls.pending) /* no event at all: still give it its stream */
        strobe__thread_current();
    struct strobe__thread *self = strobe__tls.t;
    if (self)
        strobe__thread_end(self);
    return ret;
}
#else
/* Start routine of every thread created through pthread_create: attaches
 * the thread state the creator prepared, runs the program's routine and
 * ends the thread's measurement when it returns. */
static void *thread_trampoline(void *arg)
{
    struct strobe__thread *t = arg;
    void *(*start)(void *) = t->start;
    void *start_arg = t->arg;
    if (strobe__active() && strobe__tls.state == STROBE__TLS_NONE)
        strobe__thread_attach(t);
    else
        strobe__thread_free(t);
    void *ret = start(start_arg);
    struct strobe__thread *self = strobe__tls.t;
    if (self)
        strobe__thread_end(self);
    return ret;
}
#endif

STROBE_API int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                              void *arg)
{
    int (*real_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
        REAL(real_pthread_create, "pthread_create");
    if (!real_create)
        return EAGAIN;
    struct strobe__thread *parent = strobe__thread_current();
    /* a thread created while the runtime works for the caller is the
     * runtime's own (pause.c, in TSan builds) */
    if (!parent || !strobe__active() || (__atomic_load_n(&parent->busy, __ATOMIC_RELAXED) & STROBE__BUSY_IN))
        return real_create(thread, attr, start, arg);
    uint32_t index = atomic_fetch_add_explicit(&strobe__rt.next_index, 1, memory_order_relaxed);
    struct strobe__thread *child = strobe__thread_alloc(index, parent->index + 1);
    if (!child)
        return real_create(thread, attr, start, arg);
    child->start = start;
    child->arg = arg;
    /* Stamped before the child can run, so that no THREAD_BEGIN precedes
     * its THREAD_CREATE in time, nor any ticket of the child its ticket. */
    uint64_t ticket = thread_op_ticket(parent);
    uint64_t now = strobe__now(parent);
    int rc = real_create(thread, attr, thread_trampoline, child);
    if (rc != 0) {
        strobe__thread_free(child);
        return rc;
    }
    pthread_mutex_lock(&strobe__rt.lock);
    strobe__join_map_put(*thread, index);
    pthread_mutex_unlock(&strobe__rt.lock);
    if (strobe__tls.t == parent)
        record_thread_op(parent, STROBE_EXT_THREAD_CREATE, index, ticket, now);
    return 0;
}

/* After a join of `thread` returned: its THREAD_JOIN record, with a
 * ticket taken now, after the joined thread's last synchronization. */
static void record_join(pthread_t thread)
{
    struct strobe__thread *self = strobe__tls.t;
    uint64_t ticket = self ? thread_op_ticket(self) : 0;
    if (!strobe__active())
        return;
    uint32_t index;
    pthread_mutex_lock(&strobe__rt.lock);
    /* again under the lock: a process exit that summarized this thread
     * while it waited for the lock wants no record after the summary */
    bool known = strobe__active() && strobe__join_map_take(thread, &index);
    pthread_mutex_unlock(&strobe__rt.lock);
    struct strobe__thread *t = known ? strobe__thread_current() : NULL;
    if (t)
        record_thread_op(t, STROBE_EXT_THREAD_JOIN, index, ticket, 0);
}

STROBE_API int pthread_join(pthread_t thread, void **retval)
{
    int (*real_join)(pthread_t, void **) = REAL(real_pthread_join, "pthread_join");
    if (!real_join)
        return ENOSYS;
    int rc = real_join(thread, retval);
    if (rc == 0)
        record_join(thread);
    return rc;
}

STROBE_API int pthread_tryjoin_np(pthread_t thread, void **retval)
{
    int (*real_join)(pthread_t, void **) = REAL(real_pthread_tryjoin_np, "pthread_tryjoin_np");
    if (!real_join)
        return ENOSYS;
    int rc = real_join(thread, retval);
    if (rc == 0)
        record_join(thread);
    return rc;
}

STROBE_API int pthread_timedjoin_np(pthread_t thread, void **retval, const struct timespec *abstime)
{
    int (*real_join)(pthread_t, void **, const struct timespec *) =
        REAL(real_pthread_timedjoin_np, "pthread_timedjoin_np");
    if (!real_join)
        return ENOSYS;
    int rc = real_join(thread, retval, abstime);
    if (rc == 0)
        record_join(thread);
    return rc;
}

STROBE_API void pthread_exit(void *retval)
{
    void (*real_exit)(void *) = REAL(real_pthread_exit, "pthread_exit");
    struct strobe__thread *t = strobe__tls.t;
    if (t)
        strobe__thread_end(t);
    /* main() will not return: the process now ends when its last thread
     * does, "as if by exit(0)" (POSIX), which libc calls internally. An
     * explicit exit(N) by another thread overrides this. */
    if (strobe__gettid() == (uint64_t)getpid() &&
        !atomic_load_explicit(&strobe__rt.exit_known, memory_order_relaxed)) {
        atomic_store_explicit(&strobe__rt.exit_status, 0, memory_order_relaxed);
        atomic_store_explicit(&strobe__rt.exit_known, true, memory_order_release);
    }
    if (!real_exit)
        abort();
    real_exit(retval);
    __builtin_unreachable();
}

/* ---- processes ---- */

STROBE_API pid_t fork(void)
{
    pid_t (*real_fork)(void) = REAL(real_fork, "fork");
    if (!real_fork) {
        errno = ENOSYS;
        return -1;
    }
    /* The runtime's pthread_atfork handlers do the real work (runtime.c);
     * the parent only records the child's pid. */
    pid_t pid = real_fork();
    if (pid > 0 && strobe__active()) {
        struct strobe__thread *t = strobe__tls.t;
        if (t)
            record_ext_u64(t, STROBE_EXT_FORK, (uint64_t)pid, 0);
    }
    return pid;
}

/* vfork() is fork(). A vfork child shares its parent's memory, so what it
 * measured before its exec would land in the parent's streams and call
 * stacks: its calls charged to the parent, its frames left open there. A
 * program that keeps vfork's rules (the child only execs or _exits) sees
 * no difference but the copy of the page tables; the child becomes a
 * process of the experiment like a fork child. */
STROBE_API pid_t vfork(void)
{
    return fork();
}

STROBE_API void exit(int status)
{
    void (*real_exit)(int) = REAL(real_exit, "exit");
    atomic_store_explicit(&strobe__rt.exit_status, status, memory_order_relaxed);
    /* Pairs with the acquire load in the destructor (runtime.c). */
    atomic_store_explicit(&strobe__rt.exit_known, true, memory_order_release);
    if (!real_exit)
        _exit(status);
    real_exit(status);
    __builtin_unreachable();
}

/* main()'s return value is the exit status of most programs, and libc
 * passes it to its own exit() without going through ours: wrap main. */
static int main_wrapper(int argc, char **argv, char **envp)
{
    int status = strobe__rt.real_main(argc, argv, envp);
    atomic_store_explicit(&strobe__rt.exit_status, status, memory_order_relaxed);
    atomic_store_explicit(&strobe__rt.exit_known, true, memory_order_release);
    return status;
}

typedef int (*strobe__main_fn)(int, char **, char **);

STROBE_API int __libc_start_main(strobe__main_fn main_fn, int argc, char **argv, void (*init)(void),
                                 void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    int (*real_start)(strobe__main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *) =
        (int (*)(strobe__main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *))dlsym(
            RTLD_NEXT, "__libc_start_main");
    if (!real_start)
        abort();
    strobe__rt.real_main = main_fn;
    return real_start(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}
