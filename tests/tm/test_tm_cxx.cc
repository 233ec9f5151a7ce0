/* SPDX-License-Identifier: MIT */
/*
 * Tests of the C++ part of libstrobe-tm's TM ABI (src/tm/cxx.c): this file
 * is compiled with g++ -fgnu-tm and linked with -lstrobe-tm. Containers of
 * objects are built with new and torn down with delete inside
 * transactions, exceptions leave atomic blocks and are caught inside them,
 * at 1, 2 and 4 threads, and attempts are aborted on purpose in each phase
 * of an exception's life. Results are exact; memory is compared before and
 * after (the ASan build's leak checker sees the rest).
 *
 * GCC 12 crashes compiling a throw written directly in a try block inside
 * an atomic block, so the throws are in transaction_safe functions.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <exception>
#include <stdexcept>

#include "strobe/tm.h"
#include "test.h"
#include "tm/tm_cxx_aligned.h"

#define PURE __attribute__((transaction_pure))
#define SAFE __attribute__((transaction_safe))

extern "C" void _ITM_abortTransaction(uint32_t reason);
extern "C" size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

/* False, but not known to the compiler: a block that tests it may cancel,
 * so even alone it runs with an undo log and can be aborted. */
bool never;

/* Aborts and restarts the running attempt while *tries <= n (*tries is
 * not transactional: it counts attempts). */
PURE static void abort_first(int *tries, int n)
{
    if (++*tries <= n)
        _ITM_abortTransaction(2 /* userRetry */);
}

PURE static int uncaught_now(void)
{
    return std::uncaught_exceptions();
}

static size_t bytes_in_use(void)
{
    if (__sanitizer_get_current_allocated_bytes != NULL)
        return __sanitizer_get_current_allocated_bytes();
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

struct worker {
    pthread_t t;
    int id;
    void (*fn)(int);
};

static pthread_barrier_t start_line;
static long warm_up;

/* Each thread runs one transaction first, so that the STM knows them all
 * (none runs alone) before any starts its work. */
static void *worker_main(void *arg)
{
    worker *w = static_cast<worker *>(arg);
    __transaction_atomic { warm_up++; }
    pthread_barrier_wait(&start_line);
    w->fn(w->id);
    return NULL;
}

/* Runs fn(0..n-1) on n threads; prints the rollbacks they caused (how
 * much of the abort paths the run took: not deterministic). */
static void run_threads(int n, void (*fn)(int))
{
    worker w[8];
    CHECK_EQ_INT(pthread_barrier_init(&start_line, NULL, (unsigned)n), 0);
    for (int i = 0; i < n; i++) {
        w[i].id = i;
        w[i].fn = fn;
        CHECK_EQ_INT(pthread_create(&w[i].t, NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < n; i++)
        CHECK_EQ_INT(pthread_join(w[i].t, NULL), 0);
    pthread_barrier_destroy(&start_line);
    strobe_tm_report_t r;
    CHECK_EQ_INT(strobe_tm_get_all_stats(&r), 0);
    printf("%d threads: %lu transactions, %lu rollbacks, %lu serialized\n", n, r.total_transactions,
           r.total_rollbacks, r.total_serialized_jmv + r.total_serialized_maxrb + r.total_serialized_other);
}

/* ---- a sorted set of nodes: new and delete ---------------------------------
 * Each node new[]s an array in its constructor and delete[]s it in its
 * destructor; `delete node` is a sized delete. A walk checks every node's
 * contents, so a node read after its memory went back to malloc shows. */

static long constructed, destroyed; /* written in transactions only */

struct Node {
    long key;
    long check[3];
    long *extra;
    Node *next;
    Node(long k, Node *n) : key(k), next(n)
    {
        for (int i = 0; i < 3; i++)
            check[i] = k * (i + 1);
        extra = new long[2];
        extra[0] = k;
        extra[1] = -k;
        constructed++;
    }
    ~Node()
    {
        delete[] extra;
        destroyed++;
    }
};

static Node *set_head;

SAFE static bool set_insert(long k)
{
    Node **pp = &set_head;
    while (*pp != NULL && (*pp)->key < k)
        pp = &(*pp)->next;
    if (*pp != NULL && (*pp)->key == k)
        return false;
    *pp = new Node(k, *pp);
    return true;
}

SAFE static bool set_erase(long k)
{
    Node **pp = &set_head;
    while (*pp != NULL && (*pp)->key < k)
        pp = &(*pp)->next;
    if (*pp == NULL || (*pp)->key != k)
        return false;
    Node *n = *pp;
    *pp = n->next;
    delete n;
    return true;
}

SAFE static long set_bad_nodes(void)
{
    long bad = 0;
    for (Node *n = set_head; n != NULL; n = n->next)
        if (n->check[0] != n->key || n->check[2] != 3 * n->key || n->extra[0] != n->key ||
            n->extra[1] != -n->key)
            bad++;
    return bad;
}

#define SET_OPS 20000
#define SET_KEYS 128
static std::atomic<long> set_size, set_keysum, set_bad;

static void set_worker(int id)
{
    unsigned seed = 17u * (unsigned)id + 1;
    long size = 0, sum = 0, bad = 0;
    for (int i = 0; i < SET_OPS; i++) {
        long k = rand_r(&seed) % SET_KEYS;
        int op = rand_r(&seed) % 3;
        bool done = false;
        long b = 0;
        if (op == 0) {
            __transaction_atomic { done = set_insert(k); }
            if (done) {
                size++;
                sum += k;
            }
        } else if (op == 1) {
            __transaction_atomic { done = set_erase(k); }
            if (done) {
                size--;
                sum -= k;
            }
        } else {
            __transaction_atomic { b = set_bad_nodes(); }
            bad += b;
        }
    }
    set_size += size;
    set_keysum += sum;
    set_bad += bad;
}

static void run_set(int threads)
{
    run_threads(threads, set_worker);
    long n = 0, sum = 0, last = -1;
    for (Node *p = set_head; p != NULL; p = p->next) {
        CHECK(p->key > last);
        CHECK_EQ_INT(p->extra[0], p->key);
        last = p->key;
        n++;
        sum += p->key;
    }
    CHECK_EQ_INT(set_bad.load(), 0);
    CHECK_EQ_INT(n, set_size.load());
    CHECK_EQ_INT(sum, set_keysum.load());
    CHECK_EQ_INT(constructed - destroyed, n);
    while (set_head != NULL) {
        long k = set_head->key;
        __transaction_atomic { set_erase(k); }
    }
    CHECK_EQ_INT(constructed, destroyed);
}

STROBE_TEST(set_new_delete_1)
{
    run_set(1);
}

STROBE_TEST(set_new_delete_2)
{
    run_set(2);
}

STROBE_TEST(set_new_delete_4)
{
    run_set(4);
}

/* ---- a stack of packs: arrays and over-aligned objects ---------------------
 * new Item[n] (a class with a destructor: an array cookie, sized delete[]),
 * new char[n] (unsized delete[]), 64-byte-aligned objects and arrays
 * (tm_cxx_aligned.cc) and ::operator new/delete called by name (unsized
 * delete). */

static long items_made, items_gone; /* written in transactions only */

struct Item {
    long v;
    Item() : v(0) { items_made++; }
    ~Item() { items_gone++; }
};

struct Pack {
    long key;
    size_t n;
    Item *items;
    char *bytes;
    Wide *wide;
    Wide *wides;
    long *raw;
    Pack *next;
};

static Pack *stack_top;

SAFE static Pack *pack_make(long k)
{
    Pack *p = new Pack;
    p->key = k;
    p->n = 1 + (size_t)k % 5;
    p->items = new Item[p->n];
    for (size_t i = 0; i < p->n; i++)
        p->items[i].v = k;
    p->bytes = new char[24];
    for (int i = 0; i < 24; i++)
        p->bytes[i] = (char)(k + i);
    p->wide = wide_new(k);
    p->wides = wide_new_array(k);
    p->raw = static_cast<long *>(::operator new(sizeof(long)));
    *p->raw = k;
    return p;
}

/* Frees the pack; returns the number of inconsistencies found in it. */
SAFE static long pack_free(Pack *p)
{
    long bad = 0;
    for (size_t i = 0; i < p->n; i++)
        bad += p->items[i].v != p->key;
    bad += p->bytes[23] != (char)(p->key + 23);
    bad += wide_bad(p->wide, p->wides, p->key);
    bad += *p->raw != p->key;
    delete[] p->items;
    delete[] p->bytes;
    wide_delete(p->wide, p->wides);
    ::operator delete(p->raw);
    delete p;
    return bad;
}

SAFE static bool pack_aligned(const Pack *p)
{
    return wide_aligned(p->wide) && wide_aligned(p->wides);
}

#define PACK_OPS 10000
static std::atomic<long> packs_live, packs_bad;

static void pack_worker(int id)
{
    unsigned seed = 31u * (unsigned)id + 7;
    long live = 0, bad = 0;
    for (int i = 0; i < PACK_OPS; i++) {
        long k = rand_r(&seed) % 1000;
        if (rand_r(&seed) % 2 == 0) {
            bool aligned;
            __transaction_atomic {
                Pack *p = pack_make(k);
                aligned = pack_aligned(p); /* once pushed, another thread may free it */
                p->next = stack_top;
                stack_top = p;
            }
            bad += !aligned;
            live++;
        } else {
            long b = -1;
            __transaction_atomic {
                Pack *p = stack_top;
                if (p != NULL) {
                    stack_top = p->next;
                    b = pack_free(p);
                }
            }
            if (b >= 0) {
                bad += b;
                live--;
            }
        }
    }
    packs_live += live;
    packs_bad += bad;
}

static void run_packs(int threads)
{
    run_threads(threads, pack_worker);
    long n = 0, items = 0;
    for (Pack *p = stack_top; p != NULL; p = p->next) {
        n++;
        items += (long)p->n;
    }
    CHECK_EQ_INT(packs_bad.load(), 0);
    CHECK_EQ_INT(n, packs_live.load());
    CHECK_EQ_INT(items_made - items_gone, items);
    long bad = 0;
    while (stack_top != NULL) {
        __transaction_atomic {
            Pack *p = stack_top;
            stack_top = p->next;
            bad += pack_free(p);
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(items_made, items_gone);
}

STROBE_TEST(arrays_aligned_1)
{
    run_packs(1);
}

STROBE_TEST(arrays_aligned_2)
{
    run_packs(2);
}

STROBE_TEST(arrays_aligned_4)
{
    run_packs(4);
}

/* ---- aborted attempts give their memory back ------------------------------ */

/* A second thread that has used transactions and stays alive: the main
 * thread then no longer runs alone, so its transactions take the STM's
 * ordinary path rather than the single-thread one. */
static std::atomic<int> bystander_stop;
static long bystander_x;

static void *bystander(void *arg)
{
    (void)arg;
    __transaction_atomic { bystander_x++; }
    while (!bystander_stop.load())
        usleep(1000);
    return NULL;
}

struct bystander_thread {
    pthread_t t;
    bool on;
    explicit bystander_thread(bool start) : t(), on(start)
    {
        bystander_stop = 0;
        if (on)
            CHECK_EQ_INT(pthread_create(&t, NULL, bystander, NULL), 0);
        while (on && __atomic_load_n(&bystander_x, __ATOMIC_RELAXED) == 0)
            ;
    }
    ~bystander_thread()
    {
        bystander_stop = 1;
        if (on)
            pthread_join(t, NULL);
    }
};

#define ABORT_LOOPS 2000

static void run_aborted_allocations(bool not_alone)
{
    bystander_thread other(not_alone);
    size_t before = bytes_in_use();
    for (int i = 0; i < ABORT_LOOPS; i++) {
        int tries = 0;
        __transaction_atomic {
            if (never)
                __transaction_cancel;
            Pack *p = pack_make(i);
            p->next = stack_top;
            stack_top = p;
            abort_first(&tries, 2);
        }
        CHECK_EQ_INT(tries, 3);
    }
    long n = 0, items = 0;
    for (Pack *p = stack_top; p != NULL; p = p->next) {
        n++;
        items += (long)p->n;
    }
    CHECK_EQ_INT(n, ABORT_LOOPS);
    CHECK_EQ_INT(items_made - items_gone, items); /* aborted constructions are undone */
    while (stack_top != NULL) {
        __transaction_atomic {
            Pack *p = stack_top;
            stack_top = p->next;
            pack_free(p);
        }
    }
    CHECK_EQ_INT(items_made, items_gone);
    /* 4000 aborted packs of about 400 bytes each would stay behind */
    size_t after = bytes_in_use();
    CHECK(after < before + 256 * 1024);
}

STROBE_TEST(aborted_allocations_released_alone)
{
    run_aborted_allocations(false);
}

STROBE_TEST(aborted_allocations_released_stm)
{
    run_aborted_allocations(true);
}

/* ---- exceptions: an abort in each phase ------------------------------------ */

struct Boom {
    int code;
    /* aborts the first `fail` attempts while the exception object is being
     * built: allocated, not yet thrown */
    SAFE Boom(int c, int *tries, int fail) : code(c) { abort_first(tries, fail); }
};

SAFE static void throw_boom(int code, int *tries, int fail)
{
    throw Boom(code, tries, fail);
}

/* Aborts the first `fail` attempts from its destructor: run while the
 * stack unwinds, with the exception in flight. Records the uncaught count
 * it sees, which must be 1 on every attempt. */
struct Guard {
    int *tries, fail, *seen;
    SAFE ~Guard()
    {
        *seen = uncaught_now();
        abort_first(tries, fail);
    }
};

#define PHASE_LOOPS 300

static void check_clean_exception_state(void)
{
    CHECK_EQ_INT(std::uncaught_exceptions(), 0);
    CHECK(std::current_exception() == nullptr);
}

/* Where in an exception's life the first two attempts abort. */
enum phase { ALLOCATED, IN_FLIGHT, CAUGHT };

/* Throws Boom(i) in a transaction and catches it there, aborting the
 * first two attempts at `where`; returns the code caught. */
static long abort_in_phase(enum phase where, int i, int *tries)
{
    long got = -1;
    int seen = -1, no_fail = 0;
    __transaction_atomic {
        if (never)
            __transaction_cancel;
        try {
            Guard g = {where == IN_FLIGHT ? tries : &no_fail, where == IN_FLIGHT ? 2 : 0, &seen};
            throw_boom(i, where == ALLOCATED ? tries : &no_fail, where == ALLOCATED ? 2 : 0);
        } catch (const Boom &b) {
            got = b.code;
            if (where == CAUGHT)
                abort_first(tries, 2);
        }
    }
    CHECK_EQ_INT(seen, 1);
    return got;
}

/* Runs phase(i, &tries) for i = 0..PHASE_LOOPS-1 with another thread
 * alive, so that the transactions take the STM's ordinary path. Each call
 * must take three attempts and return the code it caught, i; memory must
 * not grow. */
static void run_phase(enum phase where, long (*phase)(enum phase where, int i, int *tries))
{
    bystander_thread other(true);
    size_t before = bytes_in_use();
    long sum = 0;
    for (int i = 0; i < PHASE_LOOPS; i++) {
        int tries = 0;
        sum += phase(where, i, &tries);
        CHECK_EQ_INT(tries, 3);
        check_clean_exception_state();
    }
    CHECK_EQ_INT(sum, (long)PHASE_LOOPS * (PHASE_LOOPS - 1) / 2);
    CHECK(bytes_in_use() < before + 64 * 1024);
}

STROBE_TEST(abort_while_exception_allocated)
{
    run_phase(ALLOCATED, abort_in_phase);
}

STROBE_TEST(abort_while_exception_in_flight)
{
    run_phase(IN_FLIGHT, abort_in_phase);
}

STROBE_TEST(abort_while_exception_caught)
{
    run_phase(CAUGHT, abort_in_phase);
}

/* The exception leaves the block after two attempts aborted during the
 * unwinding: the third commits, its write stays, and the exception is
 * caught outside, once. */
static long leaving_count;

static long leaving_phase(enum phase where, int i, int *tries)
{
    (void)where;
    long got = -1;
    int seen = -1, no_fail = 0;
    try {
        __transaction_atomic {
            if (never)
                __transaction_cancel;
            Guard g = {tries, 2, &seen};
            leaving_count++;
            throw_boom(i, &no_fail, 0);
        }
    } catch (const Boom &b) {
        got = b.code;
    }
    CHECK_EQ_INT(seen, 1);
    return got;
}

STROBE_TEST(abort_then_exception_leaves_block)
{
    run_phase(IN_FLIGHT, leaving_phase);
    CHECK_EQ_INT(leaving_count, PHASE_LOOPS);
}

/* __transaction_cancel of a nested block from inside a catch handler: the
 * nested block's allocation and catch are undone, the outer block goes on. */
static long nest_outer, nest_inner, nest_after;
static Node *nest_node;

STROBE_TEST(cancel_nested_block_in_catch)
{
    size_t before = bytes_in_use();
    for (int i = 0; i < PHASE_LOOPS; i++) {
        int no_fail = 0;
        __transaction_atomic {
            nest_outer++;
            __transaction_atomic {
                try {
                    throw_boom(i, &no_fail, 0);
                } catch (const Boom &b) {
                    nest_node = new Node(b.code, NULL);
                    nest_inner++;
                    __transaction_cancel;
                }
            }
            nest_after++;
        }
        check_clean_exception_state();
    }
    CHECK_EQ_INT(nest_outer, PHASE_LOOPS);
    CHECK_EQ_INT(nest_inner, 0);
    CHECK_EQ_INT(nest_after, PHASE_LOOPS);
    CHECK(nest_node == NULL);
    CHECK_EQ_INT(constructed, 0);
    CHECK(bytes_in_use() < before + 64 * 1024);
}

/* ---- exceptions under contention ------------------------------------------ */

#define EH_OPS 6000
static long eh_counter, eh_sum, eh_plain, eh_slots[4];
static std::atomic<long> eh_boom, eh_range, eh_bad;

SAFE static void maybe_throw(int i)
{
    if (i % 3 == 0) {
        int no_fail = 0;
        throw_boom(i, &no_fail, 0);
    }
    if (i % 3 == 1)
        throw std::out_of_range("strobe");
}

/* Every block throws out of itself two times in three (a Boom or a
 * std::out_of_range, whose transactional clones are libstdc++'s): each
 * commits, so every increment stays. */
static void eh_leave_worker(int id)
{
    long boom = 0, range = 0, bad = 0;
    for (int i = 0; i < EH_OPS; i++) {
        try {
            __transaction_atomic {
                eh_counter++;
                eh_slots[id]++;
                maybe_throw(i);
            }
        } catch (const Boom &b) {
            bad += b.code != i;
            boom++;
        } catch (const std::out_of_range &e) {
            bad += strcmp(e.what(), "strobe") != 0;
            range++;
        }
        bad += std::uncaught_exceptions() != 0;
    }
    eh_boom += boom;
    eh_range += range;
    eh_bad += bad;
}

static void run_eh_leave(int threads)
{
    run_threads(threads, eh_leave_worker);
    CHECK_EQ_INT(eh_bad.load(), 0);
    CHECK_EQ_INT(eh_counter, (long)threads * EH_OPS);
    for (int i = 0; i < threads; i++)
        CHECK_EQ_INT(eh_slots[i], EH_OPS);
    CHECK_EQ_INT(eh_boom.load(), (long)threads * (EH_OPS / 3));
    CHECK_EQ_INT(eh_range.load(), (long)threads * (EH_OPS / 3));
    check_clean_exception_state();
}

STROBE_TEST(exception_leaves_block_1)
{
    run_eh_leave(1);
}

STROBE_TEST(exception_leaves_block_2)
{
    run_eh_leave(2);
}

STROBE_TEST(exception_leaves_block_4)
{
    run_eh_leave(4);
}

/* Keeps the locks of the running attempt a little longer, so that other
 * threads meet them. */
PURE static void linger(void)
{
    for (volatile int i = 0; i < 300; i++)
        ;
}

/* Thrown and caught inside the block; the handler writes shared data and
 * lingers, so conflicts abort attempts with a catch handler open. */
static void eh_inside_worker(int id)
{
    (void)id;
    for (int i = 0; i < EH_OPS; i++) {
        __transaction_atomic {
            try {
                maybe_throw(i);
                eh_plain++;
            } catch (const Boom &b) {
                eh_sum += b.code;
                linger();
            } catch (const std::out_of_range &) {
                /* not e.what(): libstdc++ registers no clone table, so a
                 * virtual call of its clones fails (on libitm too) */
                eh_counter++;
            }
        }
    }
}

static void run_eh_inside(int threads)
{
    long sum = 0;
    for (int i = 0; i < EH_OPS; i += 3)
        sum += i;
    run_threads(threads, eh_inside_worker);
    CHECK_EQ_INT(eh_sum, threads * sum);
    CHECK_EQ_INT(eh_counter, (long)threads * (EH_OPS / 3));
    CHECK_EQ_INT(eh_plain, (long)threads * (EH_OPS / 3));
    check_clean_exception_state();
}

STROBE_TEST(exception_caught_inside_1)
{
    run_eh_inside(1);
}

STROBE_TEST(exception_caught_inside_2)
{
    run_eh_inside(2);
}

STROBE_TEST(exception_caught_inside_4)
{
    run_eh_inside(4);
}

/* ---- one runtime ----------------------------------------------------------- */

/* Every TM symbol of this program binds to libstrobe-tm: none to libitm,
 * which -fgnu-tm links too (the dynamic linker's own account). */
STROBE_TEST(nothing_binds_to_libitm)
{
    char *out = NULL;
    int st = strobe_test_sh(&out, "LD_DEBUG=bindings /proc/%d/exe exception_caught_inside_2", (int)getpid());
    CHECK_EQ_INT(st, 0);
    CHECK_CONTAINS(out, "to " STROBE_LIB_DIR "/libstrobe-tm.so");
    CHECK_CONTAINS(out, "`_ITM_cxa_begin_catch'");
    for (const char *p = out; (p = strstr(p, "binding file ")) != NULL; p++) {
        const char *eol = strchr(p, '\n');
        const char *to = strstr(p, " to ");
        if (to != NULL && (eol == NULL || to < eol) && strncmp(to, " to /", 5) == 0 &&
            strstr(to, "libitm") != NULL && (eol == NULL || strstr(to, "libitm") < eol))
            STROBE_FAIL("bound to libitm: %.*s", (int)(eol != NULL ? eol - p : 200), p);
    }
    free(out);
}

STROBE_TEST_MAIN(STROBE_CASE(set_new_delete_1), STROBE_CASE(set_new_delete_2), STROBE_CASE(set_new_delete_4),
                 STROBE_CASE(arrays_aligned_1), STROBE_CASE(arrays_aligned_2), STROBE_CASE(arrays_aligned_4),
                 STROBE_CASE(aborted_allocations_released_alone),
                 STROBE_CASE(aborted_allocations_released_stm),
                 STROBE_CASE(abort_while_exception_allocated), STROBE_CASE(abort_while_exception_in_flight),
                 STROBE_CASE(abort_while_exception_caught), STROBE_CASE(abort_then_exception_leaves_block),
                 STROBE_CASE(cancel_nested_block_in_catch), STROBE_CASE(exception_leaves_block_1),
                 STROBE_CASE(exception_leaves_block_2), STROBE_CASE(exception_leaves_block_4),
                 STROBE_CASE(exception_caught_inside_1), STROBE_CASE(exception_caught_inside_2),
                 STROBE_CASE(exception_caught_inside_4), STROBE_CASE(nothing_binds_to_libitm))
