/* SPDX-License-Identifier: MIT */
/*
 * Indirect calls inside transactions: the STM maps each callee to its
 * transactional clone through the clone tables that every -fgnu-tm object
 * registers at load time (docs/tm.md). Checks many functions through one
 * index, concurrent lookups, and a table registered by dlopen while other
 * threads are inside transactions.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#include "strobe/tm.h"
#include "test.h"

#define SAFE __attribute__((transaction_safe, noinline))
typedef long (*fn_t)(long) __attribute__((transaction_safe));

/* 64 distinct functions: f<k>(x) = x + k */
#define F(k) SAFE static long f##k(long x) { return x + k; }
#define F8(k) F(k##0) F(k##1) F(k##2) F(k##3) F(k##4) F(k##5) F(k##6) F(k##7)
F8(1) F8(2) F8(3) F8(4) F8(5) F8(6) F8(7) F8(8)
#define P8(k) f##k##0, f##k##1, f##k##2, f##k##3, f##k##4, f##k##5, f##k##6, f##k##7
static fn_t fns[64] = {P8(1), P8(2), P8(3), P8(4), P8(5), P8(6), P8(7), P8(8)};
static long offsets[64];

static long total;
static _Atomic int stop;

/* calls every function once, indirectly, in one transaction */
static void call_all(void)
{
    __transaction_atomic {
        for (int k = 0; k < 64; k++)
            total = fns[k](total);
    }
}

STROBE_TEST(indirect_calls_reach_every_clone)
{
    long want = 0;
    for (int k = 0; k < 64; k++) {
        offsets[k] = fns[k](0);
        want += offsets[k];
    }
    total = 0;
    for (int i = 0; i < 100; i++)
        call_all();
    CHECK_EQ_INT(total, 100 * want);
}

static void *caller(void *arg)
{
    long *calls = arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        call_all();
        (*calls)++;
    }
    return NULL;
}

STROBE_TEST(dlopen_registers_clones_while_running)
{
    long want = 0;
    for (int k = 0; k < 64; k++)
        want += fns[k](0);
    total = 0;
    pthread_t t[2];
    long calls[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        CHECK_EQ_INT(pthread_create(&t[i], NULL, caller, &calls[i]), 0);
    /* loaded while the callers run transactions with indirect calls */
    void *h = dlopen(STROBE_TEST_BIN_DIR "/libstrobe_test_tm_plugin.so", RTLD_NOW);
    CHECK(h != NULL);
    fn_t scale = (fn_t)dlsym(h, "strobe_test_plugin_scale");
    CHECK(scale != NULL);
    long r = 0;
    for (long i = 0; i < 1000; i++)
        __transaction_atomic { r = scale(r) % 1000003; }
    long seq = 0;
    for (long i = 0; i < 1000; i++)
        seq = (3 * seq + 1) % 1000003;
    CHECK_EQ_INT(r, seq);
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        CHECK_EQ_INT(pthread_join(t[i], NULL), 0);
    CHECK_EQ_INT(total, (calls[0] + calls[1]) * want);
    CHECK_EQ_INT(dlclose(h), 0);
    /* the local tables are still registered after the plugin's went away */
    total = 0;
    call_all();
    CHECK_EQ_INT(total, want);
}

STROBE_TEST_MAIN(STROBE_CASE(indirect_calls_reach_every_clone), STROBE_CASE(dlopen_registers_clones_while_running))
