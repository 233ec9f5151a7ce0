/* SPDX-License-Identifier: MIT */
/*
 * Memory reclamation of libstrobe-tm: a block freed by a committed
 * transaction must not go back to malloc while a concurrent transaction
 * that may still read it is running. Each case runs one writer that
 * unlinks and frees nodes of a shared list in transactions, against
 * readers that walk the whole list in transactions. Every node carries a
 * magic word where glibc (and ASan) put their own data when the block is
 * freed, so a reader that reaches a freed node sees it at once: the STM
 * promises that a transaction never sees an inconsistent state (opacity),
 * so a reader inside a transaction must never meet a bad magic word.
 *
 * Rounds: 25, or STROBE_TM_RECLAIM_ROUNDS (the TSan build uses fewer:
 * everything runs 10-50 times slower there); STROBE_TM_STRESS_SECONDS=S
 * runs each case for S seconds instead (the `make tm-stress` target).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "strobe/tm.h"
#include "test.h"

#define PURE __attribute__((transaction_pure))
#define MAGIC 0x5eedf00dcafe1234ull
#define LEN 4       /* nodes on the list between operations */
#define READERS 2
#define OPS 4000    /* writer operations per round */

struct node {
    uint64_t magic; /* first: where a freed chunk gets allocator data */
    struct node *next;
    long val;
};

static struct node *head;
static _Atomic long bad_reads;
static _Atomic int writer_done;

PURE static void saw_bad(void)
{
    atomic_fetch_add_explicit(&bad_reads, 1, memory_order_relaxed);
}

PURE static int writing(void)
{
    return !atomic_load_explicit(&writer_done, memory_order_relaxed);
}

static struct node *node_new(long val, struct node *next)
{
    struct node *n = malloc(sizeof *n);
    CHECK(n != NULL);
    n->magic = MAGIC;
    n->val = val;
    n->next = next;
    return n;
}

/* Walks the list in one transaction; returns its length, or -1 when a node
 * was freed memory. */
static long walk(void)
{
    long len = 0;
    __transaction_atomic {
        len = 0;
        for (struct node *n = head; n != NULL; n = n->next) {
            if (n->magic != MAGIC) {
                saw_bad();
                len = -1;
                break;
            }
            len++;
        }
    }
    return len;
}

static _Atomic long bad_lengths;

static void *reader(void *arg)
{
    (void)arg;
    while (writing()) {
        long len = walk();
        if (len >= 0 && (len < LEN || len > LEN + 1))
            atomic_fetch_add_explicit(&bad_lengths, 1, memory_order_relaxed);
    }
    return NULL;
}

/* The writer's operations, one per case. Each keeps LEN nodes on the list
 * afterwards. */

/* push a new top, then pop the top and free it */
static void op_stack(long i)
{
    struct node *n = node_new(i, NULL);
    __transaction_atomic {
        n->next = head;
        head = n;
    }
    __transaction_atomic {
        struct node *t = head;
        head = t->next;
        free(t);
    }
}

/* replace the second node by a new one, freeing the old */
static void op_middle(long i)
{
    __transaction_atomic {
        struct node *a = head;
        struct node *old = a->next;
        struct node *n = malloc(sizeof *n);
        n->magic = MAGIC;
        n->val = i;
        n->next = old->next;
        a->next = n;
        free(old);
    }
}

/* the free happens in nested blocks: flattened, and with a checkpoint of
 * its own (the block can cancel) */
static void op_nested(long i)
{
    __transaction_atomic {
        struct node *t = head;
        struct node *n = malloc(sizeof *n);
        n->magic = MAGIC;
        n->val = i;
        n->next = t->next;
        head = n;
        __transaction_atomic {
            if (i < 0)
                __transaction_cancel;
            __transaction_atomic { free(t); }
        }
    }
}

/* a nested block frees the top and is cancelled: the free must not happen
 * (the node stays on the list); then the top is replaced for real */
static void op_cancelled_free(long i)
{
    __transaction_atomic {
        struct node *t = head;
        __transaction_atomic {
            head = t->next;
            free(t);
            __transaction_cancel;
        }
        if (head != t || t->magic != MAGIC)
            saw_bad();
    }
    op_nested(i);
}

static void list_reset(void)
{
    while (head != NULL) {
        struct node *n = head;
        head = n->next;
        free(n);
    }
    for (long i = 0; i < LEN; i++)
        head = node_new(i, head);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run_case(void (*op)(long))
{
    const char *s = getenv("STROBE_TM_STRESS_SECONDS");
    double seconds = s != NULL && *s != '\0' ? atof(s) : 0;
    double end = now_s() + seconds;
    const char *rounds_env = getenv("STROBE_TM_RECLAIM_ROUNDS");
    long want = rounds_env != NULL && *rounds_env != '\0' ? atol(rounds_env) : 25;
    long rounds = 0;
    do {
        list_reset();
        atomic_store(&writer_done, 0);
        pthread_t r[READERS];
        for (int i = 0; i < READERS; i++)
            CHECK_EQ_INT(pthread_create(&r[i], NULL, reader, NULL), 0);
        for (long i = 0; i < OPS; i++)
            op(i);
        atomic_store(&writer_done, 1);
        for (int i = 0; i < READERS; i++)
            CHECK_EQ_INT(pthread_join(r[i], NULL), 0);
        CHECK_EQ_INT(atomic_load(&bad_reads), 0);
        CHECK_EQ_INT(atomic_load(&bad_lengths), 0);
        CHECK_EQ_INT(walk(), LEN);
        rounds++;
    } while (seconds > 0 ? now_s() < end : rounds < want);
    list_reset();
    strobe_tm_report_t r;
    CHECK_EQ_INT(strobe_tm_get_all_stats(&r), 0);
    CHECK(r.total_transactions > 0);
}

STROBE_TEST(stack_pop_free)
{
    run_case(op_stack);
}

STROBE_TEST(middle_node_free)
{
    run_case(op_middle);
}

STROBE_TEST(nested_free)
{
    run_case(op_nested);
}

STROBE_TEST(cancelled_free_keeps_node)
{
    run_case(op_cancelled_free);
}

STROBE_TEST_MAIN(STROBE_CASE(stack_pop_free), STROBE_CASE(middle_node_free), STROBE_CASE(nested_free),
                 STROBE_CASE(cancelled_free_keeps_node))
