/* SPDX-License-Identifier: MIT */
/*
 * libstrobe-ompt.so, the OpenMP adapter: an OpenMP 5 tool (OMPT) that
 * `strobe run --openmp` preloads next to libstrobe.so. LLVM's libomp looks
 * up ompt_start_tool in the process when it initialises; this one asks
 * for callbacks that record the constructs as regions of the calling
 * thread (include/strobe/adapter.h), named by the return address of the
 * runtime call that began them and resolved offline like atomic blocks
 * ("omp parallel@main", file:line of the pragma). docs/openmp.md says what
 * is recorded and why.
 *
 * With task-graph recording on (strobe_sync_recording: `strobe run
 * --taskgraph`, or code of `strobe cc --trace=bb`) it also reports the
 * synchronization of the constructs (adapter.h, "Synchronization for the
 * task graph"): each parallel region's fork and its team threads' begin,
 * its barriers, numbered per region, whose last one is the join, and the
 * acquisitions and releases of critical sections and OpenMP locks (it
 * interposes __kmpc_end_critical and omp_unset_lock to record their
 * releases in time).
 *
 * GCC's libgomp has no OMPT: a program that loads it gets one notice on
 * stderr instead of a silent empty profile.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include STROBE_OMPT_HEADER /* omp-tools.h of clang (CMakeLists.txt) */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/format.h"
#include "strobe/adapter.h"

#define TOOL_API __attribute__((visibility("default")))

/* Where this thread waits, from the begin of a wait to its end: the end
 * callback of an implicit barrier may carry no code address, and a thread
 * waits in one place at a time. */
static __thread uintptr_t waiting_at;

/* The worksharing constructs and critical sections this thread is in,
 * innermost last: their end comes from another runtime call (another
 * address) than their begin, and they nest. Deeper nesting than this is
 * not recorded. */
#define MAX_OPEN 16
static __thread struct {
    uintptr_t addr;
    unsigned kind;
} open_constructs[MAX_OPEN];
static __thread unsigned nopen;

static void enter(const void *addr, unsigned kind)
{
    if (addr)
        strobe_code_region_enter((uintptr_t)addr, kind);
}

static void leave(const void *addr, unsigned kind)
{
    if (addr)
        strobe_code_region_exit((uintptr_t)addr, kind);
}

static void push(const void *addr, unsigned kind)
{
    if (nopen < MAX_OPEN) {
        open_constructs[nopen].addr = (uintptr_t)addr;
        open_constructs[nopen].kind = kind;
        enter(addr, kind);
    }
    nopen++; /* past the end too, so that the pops match */
}

static void pop(unsigned kind)
{
    if (nopen == 0)
        return;
    nopen--;
    if (nopen < MAX_OPEN && open_constructs[nopen].kind == kind)
        leave((const void *)open_constructs[nopen].addr, kind);
}

/* A parallel region this thread forked, which its data points to: its
 * address (the implicit tasks and barriers of the region are named after
 * it) and its team id for the task graph (0: not recorded). The team's
 * threads read it when their implicit task begins, before the region can
 * end, so it lives in the forking thread's storage, innermost last. */
struct forked {
    const void *codeptr;
    uint64_t team;
};
static __thread struct forked forked[MAX_OPEN];
static __thread unsigned nforked;

/* The teams this thread works in (its implicit tasks), innermost last:
 * the team id and the barriers it has passed in the region, which number
 * the region's barrier episodes alike on every thread. */
static __thread struct {
    uint64_t team, barriers;
} teams[MAX_OPEN];
static __thread unsigned nteams;

/* When the current barrier wait (0: not recorded) or mutex request began. */
static __thread uint64_t barrier_since, mutex_since;

/* Task-graph recording of releases. libomp reports a critical section's
 * or lock's release after the lock is free, when another thread may
 * already have acquired it (and taken its ticket): so the release is
 * recorded before, in __kmpc_end_critical and omp_unset_lock, which this
 * library interposes (it is preloaded), and the callback records only
 * what they did not. The critical sections this thread holds, innermost
 * last: their lock (0: acquisition not recorded) and whether its release
 * was recorded. */
static __thread struct {
    uintptr_t lock;
    int released;
} criticals[MAX_OPEN];
static __thread unsigned ncriticals;
/* the lock omp_unset_lock recorded the release of, until the callback */
static __thread uintptr_t unset_early;

/* The OpenMP runtime's functions, resolved when this library is loaded
 * (check_runtime: the program's libraries are loaded by then; GCC's
 * libgomp has omp_unset_lock too), read-only afterwards */
static void (*real_end_critical)(void *, int32_t, void *);
static void (*real_unset_lock)(void *);

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *parallel,
                              unsigned int requested, int flags, const void *codeptr)
{
    (void)task, (void)frame, (void)flags;
    parallel->ptr = NULL;
    if (nforked < MAX_OPEN) {
        struct forked *f = &forked[nforked];
        f->codeptr = codeptr;
        f->team = 0;
        strobe_sync_fork((uintptr_t)codeptr, requested, &f->team);
        parallel->ptr = f;
    }
    nforked++;
    enter(codeptr, STROBE_REGION_OMP_PARALLEL);
}

static void on_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags, const void *codeptr)
{
    (void)task, (void)flags;
    const struct forked *f = parallel ? parallel->ptr : NULL;
    leave(codeptr ? codeptr : f ? f->codeptr : NULL, STROBE_REGION_OMP_PARALLEL);
    if (nforked > 0)
        nforked--;
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel, ompt_data_t *task,
                             unsigned int team_size, unsigned int index, int flags)
{
    static strobe_metric_t threads = STROBE_METRIC_INIT(STROBE_OMP_TEAM_SIZE_METRIC, "threads");
    if (flags & ompt_task_initial)
        return; /* the program's initial task: not a construct */
    if (endpoint == ompt_scope_begin) {
        /* the end callback may come without the parallel region's data */
        const struct forked *f = parallel ? parallel->ptr : NULL;
        task->ptr = f ? (void *)f->codeptr : NULL;
        if (nteams < MAX_OPEN) {
            teams[nteams].team = f ? f->team : 0;
            teams[nteams].barriers = 0;
        }
        nteams++;
        if (f && f->team && index > 0)
            strobe_sync_team_begin(f->team, index, team_size);
        /* once per region, on the thread that forked it, while the
         * parallel region is its innermost: sum / visits = mean team size */
        if (index == 0)
            strobe_metric_add(&threads, team_size);
        enter(task->ptr, STROBE_REGION_OMP_IMPLICIT_TASK);
    } else {
        leave(task->ptr, STROBE_REGION_OMP_IMPLICIT_TASK);
        if (nteams > 0)
            nteams--;
    }
}

/* Explicit tasks. A task's data holds the address of the construct that
 * created it with the top bit set, which tells it from an implicit task
 * (whose data is its parallel region's address). */
#define EXPLICIT_TASK (UINT64_C(1) << 63)

/* The explicit tasks this thread runs, innermost last. A task that waits
 * (taskwait, taskyield) runs others on the same thread, nested in it, and
 * resumes when they end; so the tasks of a thread nest like calls. An
 * untied task resumed on another thread is charged to the first one. */
static __thread ompt_data_t *running[MAX_OPEN];
static __thread unsigned nrunning;

static void on_task_create(ompt_data_t *encountering, const ompt_frame_t *frame, ompt_data_t *task, int flags,
                           int has_dependences, const void *codeptr)
{
    (void)encountering, (void)frame, (void)has_dependences;
    if ((flags & ompt_task_explicit) && codeptr)
        task->value = (uint64_t)(uintptr_t)codeptr | EXPLICIT_TASK;
}

static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next)
{
    if (prior && (prior->value & EXPLICIT_TASK) && status != ompt_task_yield && status != ompt_task_switch &&
        nrunning > 0 && (nrunning > MAX_OPEN || running[nrunning - 1] == prior)) {
        /* it ran to its end (complete, cancel, or detach: the body is done) */
        if (--nrunning < MAX_OPEN)
            leave((const void *)(uintptr_t)(prior->value & ~EXPLICIT_TASK), STROBE_REGION_OMP_TASK);
    }
    if (next && (next->value & EXPLICIT_TASK) &&
        !(nrunning > 0 && nrunning <= MAX_OPEN && running[nrunning - 1] == next)) {
        /* it starts (a task it ran nested in ended and it resumes: it is
         * the innermost already) */
        if (nrunning < MAX_OPEN) {
            running[nrunning] = next;
            enter((const void *)(uintptr_t)(next->value & ~EXPLICIT_TASK), STROBE_REGION_OMP_TASK);
        }
        nrunning++;
    }
}

static unsigned work_kind(ompt_work_t wstype)
{
    switch (wstype) {
    case ompt_work_loop:
    case ompt_work_distribute:
    case ompt_work_taskloop:
        return STROBE_REGION_OMP_LOOP;
    case ompt_work_sections:
        return STROBE_REGION_OMP_SECTIONS;
    case ompt_work_single_executor:
        return STROBE_REGION_OMP_SINGLE;
    default:
        return 0; /* the other threads of a single, workshare: nothing of their own */
    }
}

static void on_work(ompt_work_t wstype, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel,
                    ompt_data_t *task, uint64_t count, const void *codeptr)
{
    (void)parallel, (void)task, (void)count;
    unsigned kind = work_kind(wstype);
    if (!kind)
        return;
    if (endpoint == ompt_scope_begin)
        push(codeptr, kind);
    else
        pop(kind);
}

static void on_sync_wait(ompt_sync_region_t sync, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel,
                         ompt_data_t *task, const void *codeptr)
{
    (void)parallel;
    /* waiting for tasks; the tasks the thread runs meanwhile nest in it */
    if (sync == ompt_sync_region_taskwait || sync == ompt_sync_region_taskgroup) {
        if (endpoint == ompt_scope_begin)
            push(codeptr, STROBE_REGION_OMP_WAIT);
        else
            pop(STROBE_REGION_OMP_WAIT);
        return;
    }
    /* then barriers only: reductions are not barriers */
    if (sync != ompt_sync_region_barrier && sync != ompt_sync_region_barrier_implicit &&
        sync != ompt_sync_region_barrier_explicit && sync != ompt_sync_region_barrier_implementation &&
        sync != ompt_sync_region_barrier_implicit_workshare &&
        sync != ompt_sync_region_barrier_implicit_parallel)
        return;
    if (endpoint == ompt_scope_begin) {
        /* an implicit barrier without an address of its own belongs to the
         * implicit task's parallel region */
        waiting_at = (uintptr_t)(codeptr ? codeptr : task ? task->ptr : NULL);
        enter((const void *)waiting_at, STROBE_REGION_OMP_BARRIER);
        barrier_since = 0;
        if (nteams > 0 && nteams <= MAX_OPEN && teams[nteams - 1].team) {
            teams[nteams - 1].barriers++;
            strobe_sync_team_arrive(teams[nteams - 1].team, waiting_at, &barrier_since);
        }
    } else {
        leave((const void *)waiting_at, STROBE_REGION_OMP_BARRIER);
        if (barrier_since && nteams > 0 && nteams <= MAX_OPEN)
            strobe_sync_team_barrier(teams[nteams - 1].team, teams[nteams - 1].barriers, barrier_since,
                                     waiting_at);
        barrier_since = 0;
        waiting_at = 0;
    }
}

static int is_recorded_mutex(ompt_mutex_t kind)
{
    return kind == ompt_mutex_critical || kind == ompt_mutex_lock || kind == ompt_mutex_nest_lock ||
           kind == ompt_mutex_ordered;
}

static void on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl, ompt_wait_id_t wait_id,
                             const void *codeptr)
{
    (void)hint, (void)impl, (void)wait_id;
    if (!is_recorded_mutex(kind))
        return;
    mutex_since = strobe_sync_recording() ? strobe_adapter_ticks() : 0;
    waiting_at = (uintptr_t)codeptr;
    enter(codeptr, STROBE_REGION_OMP_WAIT);
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr)
{
    if (!is_recorded_mutex(kind))
        return;
    leave((const void *)waiting_at, STROBE_REGION_OMP_WAIT);
    waiting_at = 0;
    if (kind == ompt_mutex_critical)
        push(codeptr, STROBE_REGION_OMP_CRITICAL);
    /* inside the critical section's region: the task graph's lock row
     * names its source line. The object is libomp's lock (an OpenMP
     * lock's is the omp_lock_t) */
    int recorded =
        mutex_since && strobe_sync_acquired((uintptr_t)wait_id, mutex_since, (uintptr_t)codeptr) == 0;
    mutex_since = 0;
    if (kind == ompt_mutex_critical) {
        if (ncriticals < MAX_OPEN) {
            criticals[ncriticals].lock = recorded ? (uintptr_t)wait_id : 0;
            criticals[ncriticals].released = 0;
        }
        ncriticals++;
    }
}

static void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr)
{
    (void)codeptr;
    if (kind == ompt_mutex_critical) {
        if (ncriticals > 0 && --ncriticals < MAX_OPEN && criticals[ncriticals].lock &&
            !criticals[ncriticals].released)
            strobe_sync_released(criticals[ncriticals].lock);
        pop(STROBE_REGION_OMP_CRITICAL);
    } else if (kind == ompt_mutex_lock && unset_early == (uintptr_t)wait_id) {
        unset_early = 0; /* recorded by omp_unset_lock */
    } else if (is_recorded_mutex(kind)) {
        /* late: an acquisition by another thread in between may have
         * taken its ticket first (docs/openmp.md) */
        strobe_sync_released((uintptr_t)wait_id);
    }
}

/* The end of a critical section (clang's call): its release is recorded
 * before the lock is freed. */
TOOL_API void __kmpc_end_critical(void *loc, int32_t gtid, void *crit)
{
    if (ncriticals > 0 && ncriticals <= MAX_OPEN && criticals[ncriticals - 1].lock &&
        !criticals[ncriticals - 1].released)
        criticals[ncriticals - 1].released = strobe_sync_released(criticals[ncriticals - 1].lock) == 0;
    void (*real)(void *, int32_t, void *) =
        real_end_critical ? real_end_critical
                          : (void (*)(void *, int32_t, void *))dlsym(RTLD_NEXT, "__kmpc_end_critical");
    real(loc, gtid, crit);
}

/* omp_unset_lock: likewise (the lock is its wait id). */
TOOL_API void omp_unset_lock(void *lock)
{
    if (strobe_sync_released((uintptr_t)lock) == 0)
        unset_early = (uintptr_t)lock;
    void (*real)(void *) =
        real_unset_lock ? real_unset_lock : (void (*)(void *))dlsym(RTLD_NEXT, "omp_unset_lock");
    real(lock);
}

static int tool_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data)
{
    (void)device, (void)tool_data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set)
        return 0;
    static const struct {
        ompt_callbacks_t event;
        ompt_callback_t fn;
    } callbacks[] = {
        {ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin},
        {ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end},
        {ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task},
        {ompt_callback_task_create, (ompt_callback_t)on_task_create},
        {ompt_callback_task_schedule, (ompt_callback_t)on_task_schedule},
        {ompt_callback_work, (ompt_callback_t)on_work},
        {ompt_callback_sync_region_wait, (ompt_callback_t)on_sync_wait},
        {ompt_callback_mutex_acquire, (ompt_callback_t)on_mutex_acquire},
        {ompt_callback_mutex_acquired, (ompt_callback_t)on_mutex_acquired},
        {ompt_callback_mutex_released, (ompt_callback_t)on_mutex_released},
    };
    for (size_t i = 0; i < sizeof callbacks / sizeof callbacks[0]; i++)
        if (set(callbacks[i].event, callbacks[i].fn) == ompt_set_error)
            fprintf(stderr,
                    "strobe: --openmp: the OpenMP runtime refused callback %d; some constructs are "
                    "not measured\n",
                    (int)callbacks[i].event);
    return 1; /* stay active */
}

static void tool_finalize(ompt_data_t *tool_data)
{
    (void)tool_data;
}

TOOL_API ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
    (void)omp_version, (void)runtime_version;
    static ompt_start_tool_result_t result = {tool_initialize, tool_finalize, {0}};
    return &result;
}

static int find_libgomp(struct dl_phdr_info *info, size_t size, void *found)
{
    (void)size;
    const char *base = strrchr(info->dlpi_name, '/');
    if (strncmp(base ? base + 1 : info->dlpi_name, "libgomp.so", 10) == 0)
        *(int *)found = 1;
    return 0;
}

__attribute__((constructor)) static void check_runtime(void)
{
    int gomp = 0;
    real_end_critical = (void (*)(void *, int32_t, void *))dlsym(RTLD_NEXT, "__kmpc_end_critical");
    real_unset_lock = (void (*)(void *))dlsym(RTLD_NEXT, "omp_unset_lock");
    dl_iterate_phdr(find_libgomp, &gomp);
    if (gomp)
        fprintf(
            stderr,
            "strobe: --openmp: the program uses GCC's libgomp, which has no OMPT interface: its "
            "OpenMP constructs are not measured through OMPT (build it with clang -fopenmp, or instrument "
            "its directives: strobe instrument, strobe cc; docs/openmp.md)\n");
}
