/* SPDX-License-Identifier: MIT */
/*
 * libstrobe-bench-cyg-otf2.so: __cyg_profile_func_enter/exit hooks that
 * write OTF2 Enter/Leave records directly with libotf2's EvtWriter, one
 * writer (location) per thread, timestamps from rdtsc (clock_gettime on
 * other architectures). This is the "why not just write OTF2?" anchor of
 * `make bench`: the same workload, hooks and timestamp source as a strobe
 * trace, but OTF2's own event encoding and buffering (1 MiB chunks,
 * flushed to the POSIX substrate when full).
 *
 * Preload it on strobe-bench-calls with STROBE_BENCH_OTF2_DIR=<dir>; the
 * archive is <dir>/traces.otf2 plus <dir>/traces/<location>.evt. The
 * definitions (clock, one region per function address, one location per
 * thread) are written when the process exits; regions are named by
 * address ("0x401136"): symbol lookup is not what this anchor measures.
 *
 * Thread-safety: the hooks use only the calling thread's writer; creating a
 * writer and registering a new function address take one mutex. Threads
 * still running after exit() started are no longer recorded. Not
 * async-signal-safe (neither is libotf2).
 */
#define _GNU_SOURCE
#include <otf2/OTF2_Pthread_Locks.h>
#include <otf2/otf2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define NOINST __attribute__((no_instrument_function))
#define HOOK __attribute__((visibility("default"), no_instrument_function))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MAX_THREADS 1024
#define MAX_REGIONS 4096

static OTF2_Archive *archive;
/* 1 between the constructor and the destructor. Relaxed: it only tells
 * hooks to stop touching writers once exit() runs; the writers themselves
 * are only ever used by their own thread. */
static atomic_int recording;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static OTF2_EvtWriter *writers[MAX_THREADS]; /* index = location id; under lock */
static unsigned writer_count;
static void *region_addr[MAX_REGIONS]; /* index = region id; under lock */
static unsigned region_count;
static uint64_t start_ticks, start_mono_ns, start_real_ns;

static __thread OTF2_EvtWriter *tls_writer __attribute__((tls_model("initial-exec")));
static __thread void *tls_last_fn __attribute__((tls_model("initial-exec")));
static __thread uint32_t tls_last_region __attribute__((tls_model("initial-exec")));

static NOINST uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline NOINST uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return clock_ns(CLOCK_MONOTONIC);
#endif
}

static NOINST OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc, void *caller,
                                       bool final)
{
    return OTF2_FLUSH;
}

static NOINST OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc)
{
    return ticks();
}

static const OTF2_FlushCallbacks flush_callbacks = {pre_flush, post_flush};

/* First event of a thread: create its writer. Returns NULL when not
 * recording or out of locations. */
static NOINST __attribute__((noinline)) OTF2_EvtWriter *writer_slow(void)
{
    OTF2_EvtWriter *w = NULL;
    if (!atomic_load_explicit(&recording, memory_order_relaxed))
        return NULL;
    pthread_mutex_lock(&lock);
    if (writer_count < MAX_THREADS) {
        w = OTF2_Archive_GetEvtWriter(archive, writer_count);
        if (w)
            writers[writer_count++] = w;
    }
    pthread_mutex_unlock(&lock);
    tls_writer = w;
    return w;
}

/* Region id of a function address the calling thread has not seen last. */
static NOINST __attribute__((noinline)) uint32_t region_slow(void *fn)
{
    uint32_t id = MAX_REGIONS - 1; /* shared overflow region */
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < region_count; i++)
        if (region_addr[i] == fn) {
            id = i;
            goto found;
        }
    if (region_count < MAX_REGIONS - 1) {
        id = region_count++;
        region_addr[id] = fn;
    }
found:
    pthread_mutex_unlock(&lock);
    tls_last_fn = fn;
    tls_last_region = id;
    return id;
}

static inline NOINST uint32_t region_of(void *fn)
{
    return fn == tls_last_fn ? tls_last_region : region_slow(fn);
}

HOOK void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
    OTF2_EvtWriter *w = tls_writer;
    if (UNLIKELY(!atomic_load_explicit(&recording, memory_order_relaxed)))
        return;
    if (UNLIKELY(!w) && !(w = writer_slow()))
        return;
    OTF2_EvtWriter_Enter(w, NULL, ticks(), region_of(this_fn));
}

HOOK void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
    OTF2_EvtWriter *w = tls_writer;
    if (UNLIKELY(!atomic_load_explicit(&recording, memory_order_relaxed)))
        return;
    if (UNLIKELY(!w) && !(w = writer_slow()))
        return;
    OTF2_EvtWriter_Leave(w, NULL, ticks(), region_of(this_fn));
}

static NOINST __attribute__((constructor)) void otf2_bench_open(void)
{
    const char *dir = getenv("STROBE_BENCH_OTF2_DIR");
    if (!dir || !*dir) {
        fprintf(stderr, "strobe-bench-cyg-otf2: STROBE_BENCH_OTF2_DIR not set; not recording\n");
        return;
    }
    archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive || OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_SetSerialCollectiveCallbacks(archive) != OTF2_SUCCESS ||
        OTF2_Pthread_Archive_SetLockingCallbacks(archive, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_OpenEvtFiles(archive) != OTF2_SUCCESS) {
        fprintf(stderr, "strobe-bench-cyg-otf2: cannot create OTF2 archive in %s\n", dir);
        return;
    }
    start_real_ns = clock_ns(CLOCK_REALTIME);
    start_mono_ns = clock_ns(CLOCK_MONOTONIC);
    start_ticks = ticks();
    atomic_store_explicit(&recording, 1, memory_order_relaxed);
}

static NOINST __attribute__((destructor)) void otf2_bench_close(void)
{
    if (!atomic_load_explicit(&recording, memory_order_relaxed))
        return;
    atomic_store_explicit(&recording, 0, memory_order_relaxed);
    uint64_t end_ticks = ticks(), end_mono_ns = clock_ns(CLOCK_MONOTONIC);
    uint64_t ticks_per_s = 1000000000u;
    if (end_mono_ns > start_mono_ns)
        ticks_per_s =
            (uint64_t)((double)(end_ticks - start_ticks) * 1e9 / (double)(end_mono_ns - start_mono_ns));

    pthread_mutex_lock(&lock);
    static uint64_t events[MAX_THREADS];
    for (unsigned i = 0; i < writer_count; i++) {
        OTF2_EvtWriter_GetNumberOfEvents(writers[i], &events[i]);
        OTF2_Archive_CloseEvtWriter(archive, writers[i]);
    }
    OTF2_Archive_CloseEvtFiles(archive);

    /* Empty local definitions: readers expect one file per location. */
    OTF2_Archive_OpenDefFiles(archive);
    for (unsigned i = 0; i < writer_count; i++) {
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(archive, i);
        if (dw)
            OTF2_Archive_CloseDefWriter(archive, dw);
    }
    OTF2_Archive_CloseDefFiles(archive);

    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(archive);
    OTF2_GlobalDefWriter_WriteClockProperties(g, ticks_per_s, start_ticks, end_ticks - start_ticks,
                                              start_real_ns);
    /* Strings: 0 "", 1 "machine", 2 "process", then threads, then regions. */
    char name[64];
    uint32_t s = 0;
    OTF2_GlobalDefWriter_WriteString(g, s++, "");
    OTF2_GlobalDefWriter_WriteString(g, s++, "machine");
    OTF2_GlobalDefWriter_WriteString(g, s++, "process");
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 2, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
    for (unsigned i = 0; i < writer_count; i++) {
        snprintf(name, sizeof name, "thread %u", i);
        OTF2_GlobalDefWriter_WriteString(g, s, name);
        OTF2_GlobalDefWriter_WriteLocation(g, i, s++, OTF2_LOCATION_TYPE_CPU_THREAD, events[i], 0);
    }
    unsigned nregions = region_count;
    if (nregions == MAX_REGIONS - 1)
        nregions = MAX_REGIONS; /* the overflow region may have been used */
    for (unsigned i = 0; i < nregions; i++) {
        if (i < region_count)
            snprintf(name, sizeof name, "%p", region_addr[i]);
        else
            snprintf(name, sizeof name, "(other functions)");
        OTF2_GlobalDefWriter_WriteString(g, s, name);
        OTF2_GlobalDefWriter_WriteRegion(g, i, s, s, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER,
                                         OTF2_REGION_FLAG_NONE, 0, 0, 0);
        s++;
    }
    OTF2_Archive_CloseGlobalDefWriter(archive, g);
    OTF2_Archive_Close(archive);
    archive = NULL;
    pthread_mutex_unlock(&lock);
}
