/* SPDX-License-Identifier: MIT */
/*
 * The annotation API, linked with -lstrobe (no preload, no compiler
 * instrumentation). Regions and visits:
 *
 *   outer 1
 *     block 1         (the STROBE_REGION_BEGIN/END macros)
 *     inner 10        metric bytes (unit B): values 0..9 -> count 10, sum 45,
 *                                            min 0, max 9
 *     rec   5         recursion rec > rec > rec > rec > rec, one per level
 *   metric items (no unit) on outer: -3 once
 *
 * `core_prog_annotate thread` then also runs a second thread (created with
 * pthread_create, which the linked runtime interposes too): inner 3.
 *
 * `core_prog_annotate adapter` runs, on a second thread, the adapters'
 * counting per call path (adapter.h):
 *   outer > inner > inner, left open, then rewound to outer's path;
 *   outer > the code region of adapter_thread (kind TM_ATOMIC): 7 visits
 *     and metric items: count 3, sum 12, min 1, max 8, added by a hook at
 *     the thread's end.
 *
 * Prints "active 1" and "dir <experiment dir>" (or "active 0", "dir (none)"
 * with STROBE_ENABLE=0), and checks every return code (exit status 1 on a
 * failure).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strobe/adapter.h>
#include <strobe/strobe.h>

static strobe_metric_t bytes = STROBE_METRIC_INIT("bytes", "B");
static strobe_metric_t items = STROBE_METRIC_INIT("items", "");
static strobe_region_t rec_region = STROBE_REGION_INIT("rec");
static strobe_region_t outer = STROBE_REGION_INIT("outer");
static strobe_region_t inner = STROBE_REGION_INIT("inner");

static int active;

/* Every call returns 0 when measuring, STROBE_ERR_DISABLED otherwise. */
#define MUST(x)                                                                                              \
    do {                                                                                                     \
        int rc_ = (x);                                                                                       \
        if (rc_ != (active ? 0 : STROBE_ERR_DISABLED)) {                                                     \
            fprintf(stderr, "%s: %s\n", #x, strobe_strerror(rc_));                                           \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static void rec(int n)
{
    MUST(strobe_region_enter(&rec_region));
    if (n > 1)
        rec(n - 1);
    MUST(strobe_region_exit(&rec_region));
}

static void *second_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        MUST(strobe_region_enter(&inner));
        MUST(strobe_region_exit(&inner));
    }
    return NULL;
}

static __thread uint64_t counted_path;

static void *adapter_thread(void *arg);

/* the thread-end hook: its counts into its profile */
static void add_counts(int process_exit)
{
    (void)process_exit;
    if (counted_path == 0)
        return;
    struct strobe_metric_samples m = {&items, 3, 12, 1, 8};
    MUST(strobe_code_region_count(counted_path, (uintptr_t)adapter_thread,
                                  2 /* STROBE_REGION_TM_ATOMIC (format.h) */, 7, &m, 1));
    counted_path = 0;
}

static void *adapter_thread(void *arg)
{
    (void)arg;
    MUST(strobe_adapter_at_thread_end(add_counts));
    MUST(strobe_region_enter(&outer));
    uint64_t path = strobe_adapter_path();
    if (path == 0)
        exit(1);
    MUST(strobe_region_enter(&inner));
    MUST(strobe_region_enter(&inner));
    MUST(strobe_adapter_rewind(path));
    if (strobe_adapter_path() != path)
        exit(1);
    counted_path = path;
    MUST(strobe_region_exit(&outer));
    return NULL;
}

int main(int argc, char **argv)
{
    active = strobe_is_active();
    printf("active %d\n", active);
    const char *dir = strobe_experiment_dir();
    printf("dir %s\n", dir ? dir : "(none)");
    MUST(strobe_region_enter(&outer));
    STROBE_REGION_BEGIN(block);
    STROBE_REGION_END(block);
    for (int i = 0; i < 10; i++) {
        MUST(strobe_region_enter(&inner));
        MUST(strobe_metric_add(&bytes, i));
        MUST(strobe_region_exit(&inner));
    }
    MUST(strobe_metric_add(&items, -3));
    rec(5);
    MUST(strobe_region_exit(&outer));
    if (argc > 1 && strcmp(argv[1], "adapter") == 0) {
        pthread_t th;
        if (pthread_create(&th, NULL, adapter_thread, NULL) != 0 || pthread_join(th, NULL) != 0)
            return 1;
    }
    if (argc > 1 && strcmp(argv[1], "thread") == 0) {
        pthread_t th;
        if (pthread_create(&th, NULL, second_thread, NULL) != 0 || pthread_join(th, NULL) != 0)
            return 1;
    }
    return 0;
}
