/* SPDX-License-Identifier: MIT */
/*
 * The transactional-memory workloads of `make bench` (docs/performance.md):
 *
 *   strobe-bench-tm KERNEL THREADS OPS
 *
 *   update  the update kernel of seed 000 (Listing 1) in C: each iteration
 *           adds re*f1 and re*f2 to two cells of a 2 x 1M array of doubles
 *           in one transaction (conflicts are very rare)
 *   bank    transfers between 1024 accounts, one in five to account 0 (hot)
 *   list    integer set as a sorted linked list, keys 0..255, 20% updates
 *   hash    integer set as a hash table of 4096 sorted lists, keys 0..65535,
 *           20% updates
 *
 * OPS operations are split evenly over THREADS threads, which start
 * together behind a barrier. The program checks its result (sums, total
 * balance, set size and order) and prints one line:
 *
 *   KERNEL THREADS OPS SECONDS OPS_PER_S RUNTIME
 *
 * where RUNTIME is the TM runtime the transactions ran on
 * (_ITM_libraryVersion). The same binary runs on GCC's libitm or, when
 * libstrobe-tm.so is preloaded, on strobe's STM.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *_ITM_libraryVersion(void);

static long ops_per_thread;
static int nthreads;
static pthread_barrier_t start_line;

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* ---- update kernel ---- */
#define CELLS (1 << 20)
static double rho[CELLS][2];

static void *update_worker(void *arg)
{
    long id = (long)arg;
    pthread_barrier_wait(&start_line);
    const double re = 1.0;
    for (long k = 0; k < ops_per_thread; k++) {
        long i = id * ops_per_thread + k;
        /* a quasi-random position in [0, CELLS - 1) with an exact
         * quarter fraction, so every sum is exact */
        double xa = (double)((i * 2654435761u) % (4u * (CELLS - 1))) / 4.0;
        int j1 = (int)xa, j2 = j1 + 1, ci = (int)(i & 1);
        double f2 = xa - j1, f1 = 1.0 - f2;
        __transaction_atomic {
            rho[j1][ci] += re * f1;
            rho[j2][ci] += re * f2;
        }
    }
    return NULL;
}

static int update_check(long ops)
{
    double sum = 0;
    for (long j = 0; j < CELLS; j++)
        sum += rho[j][0] + rho[j][1];
    return sum == (double)ops;
}

/* ---- bank ---- */
#define ACCOUNTS 1024
static long accounts[ACCOUNTS];

static void *bank_worker(void *arg)
{
    uint64_t s = 0x9e3779b97f4a7c15ull * ((uint64_t)(long)arg + 1);
    pthread_barrier_wait(&start_line);
    for (long k = 0; k < ops_per_thread; k++) {
        int a = (int)(next_rand(&s) % ACCOUNTS);
        int b = k % 5 == 0 ? 0 : (int)(next_rand(&s) % ACCOUNTS);
        long amount = (long)(next_rand(&s) % 100);
        __transaction_atomic {
            accounts[a] -= amount;
            accounts[b] += amount;
        }
    }
    return NULL;
}

static int bank_check(long ops)
{
    (void)ops;
    long sum = 0;
    for (int i = 0; i < ACCOUNTS; i++)
        sum += accounts[i];
    return sum == ACCOUNTS * 1000L;
}

/* ---- integer sets ---- */
struct node {
    long key;
    struct node *next;
};

#define BUCKETS_MAX 4096
static struct node *heads[BUCKETS_MAX]; /* sentinel nodes */
static int buckets;
static long key_range;
static long inserted[64], removed[64], initial_size;

__attribute__((transaction_safe)) static int set_insert(struct node *head, long key)
{
    struct node *prev = head, *cur = head->next;
    while (cur && cur->key < key) {
        prev = cur;
        cur = cur->next;
    }
    if (cur && cur->key == key)
        return 0;
    struct node *n = malloc(sizeof *n);
    n->key = key;
    n->next = cur;
    prev->next = n;
    return 1;
}

__attribute__((transaction_safe)) static int set_remove(struct node *head, long key)
{
    struct node *prev = head, *cur = head->next;
    while (cur && cur->key < key) {
        prev = cur;
        cur = cur->next;
    }
    if (!cur || cur->key != key)
        return 0;
    prev->next = cur->next;
    free(cur);
    return 1;
}

__attribute__((transaction_safe)) static int set_contains(struct node *head, long key)
{
    struct node *cur = head->next;
    while (cur && cur->key < key)
        cur = cur->next;
    return cur && cur->key == key;
}

static void *set_worker(void *arg)
{
    long id = (long)arg;
    uint64_t s = 0x2545f4914f6cdd1dull * ((uint64_t)id + 1);
    pthread_barrier_wait(&start_line);
    for (long k = 0; k < ops_per_thread; k++) {
        long key = (long)(next_rand(&s) % (uint64_t)key_range);
        struct node *head = heads[key % buckets];
        unsigned op = (unsigned)(next_rand(&s) % 10);
        int r;
        if (op == 0) {
            __transaction_atomic { r = set_insert(head, key); }
            inserted[id] += r;
        } else if (op == 1) {
            __transaction_atomic { r = set_remove(head, key); }
            removed[id] += r;
        } else {
            __transaction_atomic { r = set_contains(head, key); }
            (void)r;
        }
    }
    return NULL;
}

static void set_init(int nbuckets, long range)
{
    buckets = nbuckets;
    key_range = range;
    for (int b = 0; b < buckets; b++)
        heads[b] = calloc(1, sizeof(struct node));
    /* half of the keys present */
    for (long key = range - 2; key >= 0; key -= 2) {
        struct node *n = malloc(sizeof *n);
        n->key = key;
        n->next = heads[key % buckets]->next;
        heads[key % buckets]->next = n;
        initial_size++;
    }
}

static int set_check(long ops)
{
    (void)ops;
    long size = 0, expect = initial_size;
    for (int t = 0; t < nthreads; t++)
        expect += inserted[t] - removed[t];
    for (int b = 0; b < buckets; b++)
        for (struct node *n = heads[b]->next; n; n = n->next) {
            if (n->next && n->next->key <= n->key)
                return 0; /* not sorted, or a duplicate */
            size++;
        }
    return size == expect;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s update|bank|list|hash THREADS OPS\n", argv[0]);
        return 2;
    }
    const char *kernel = argv[1];
    nthreads = atoi(argv[2]);
    long ops = atol(argv[3]);
    if (nthreads < 1 || nthreads > 64 || ops < nthreads) {
        fprintf(stderr, "%s: THREADS must be 1..64 and OPS at least THREADS\n", argv[0]);
        return 2;
    }
    ops_per_thread = ops / nthreads;
    ops = ops_per_thread * nthreads;
    void *(*worker)(void *);
    int (*check)(long);
    if (strcmp(kernel, "update") == 0) {
        worker = update_worker;
        check = update_check;
    } else if (strcmp(kernel, "bank") == 0) {
        for (int i = 0; i < ACCOUNTS; i++)
            accounts[i] = 1000;
        worker = bank_worker;
        check = bank_check;
    } else if (strcmp(kernel, "list") == 0 || strcmp(kernel, "hash") == 0) {
        if (kernel[0] == 'l')
            set_init(1, 256);
        else
            set_init(BUCKETS_MAX, 65536);
        worker = set_worker;
        check = set_check;
    } else {
        fprintf(stderr, "%s: unknown kernel '%s'\n", argv[0], kernel);
        return 2;
    }
    pthread_barrier_init(&start_line, NULL, (unsigned)nthreads + 1);
    pthread_t t[64];
    for (long i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pthread_barrier_wait(&start_line);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    if (!check(ops)) {
        fprintf(stderr, "%s %s: WRONG RESULT\n", argv[0], kernel);
        return 1;
    }
    const char *rt = _ITM_libraryVersion();
    printf("%s %d %ld %.6f %.0f %s\n", kernel, nthreads, ops, secs, (double)ops / secs,
           strncmp(rt, "strobe-tm", 9) == 0 ? "strobe-tm" : "libitm");
    return 0;
}
