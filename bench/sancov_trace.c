/* SPDX-License-Identifier: MIT */
/*
 * The anchor of bench/bbtrace.sh: basic-block and memory tracing the way a
 * tool gets it from clang without a pass of its own, through
 * -fsanitize-coverage=trace-pc-guard,trace-loads,trace-stores. These are
 * its callbacks; they record what `strobe cc --trace=bb,mem` records (which
 * block ran, then the address of each of its loads and stores, in program
 * order) into a per-thread buffer written to a per-thread file, so the
 * ratio of the two runs measures the instrumentation method (a call per
 * block and per access against strobe's inline stores), not a difference
 * in the work done. Linked into the program (libstrobe-bench-sancov.a),
 * never instrumented itself.
 *
 * Records, little-endian, told apart by their lowest bit:
 *   block   4 bytes: guard id << 1 | 1 (ids 1..n over the process's modules)
 *   access  8 bytes: address << 8 | log2(size) << 2 | store << 1 (user-space
 *           addresses have 48 bits)
 * No delta encoding or elision: what a callback sees is one access, with no
 * view of the block's other accesses.
 *
 * STROBE_BENCH_SANCOV_DIR names the folder of the files (t<tid>.bin, and
 * `counts`: "accesses N bytes N" of the whole process, written at exit);
 * without it the buffer is reused and nothing is written. Buffers are
 * flushed when full, at thread exit and (the main thread's) at exit.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUFFER_BYTES (4u << 20)

struct sancov_thread {
    uint8_t *pos; /* next record */
    uint8_t *end; /* a record that does not fit before it: flush */
    uint8_t *buf;
    uint64_t accesses;
    int fd; /* -1: nothing written */
};

static __thread struct sancov_thread self;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t total_accesses, total_bytes;
static _Atomic uint32_t next_guard;

static void flush(struct sancov_thread *t)
{
    size_t n = (size_t)(t->pos - t->buf);
    atomic_fetch_add(&total_bytes, n);
    for (uint8_t *p = t->buf; t->fd >= 0 && n > 0;) {
        ssize_t w = write(t->fd, p, n);
        if (w <= 0) {
            perror("sancov_trace: write");
            abort(); /* an anchor that lost data would measure less work */
        }
        p += w;
        n -= (size_t)w;
    }
    t->pos = t->buf;
}

static void thread_end(void *arg)
{
    struct sancov_thread *t = arg;
    flush(t);
    atomic_fetch_add(&total_accesses, t->accesses);
    if (t->fd >= 0)
        close(t->fd);
    free(t->buf);
}

static void make_exit_key(void)
{
    if (pthread_key_create(&exit_key, thread_end))
        abort();
}

__attribute__((noinline)) static void refill(void)
{
    struct sancov_thread *t = &self;
    if (t->buf) {
        flush(t);
        return;
    }
    t->buf = malloc(BUFFER_BYTES);
    if (!t->buf)
        abort();
    t->pos = t->buf;
    t->end = t->buf + BUFFER_BYTES - 8;
    t->fd = -1;
    const char *dir = getenv("STROBE_BENCH_SANCOV_DIR");
    if (dir && *dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/t%d.bin", dir, (int)gettid());
        t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (t->fd < 0) {
            perror(path);
            abort();
        }
    }
    /* the main thread ends through exit(), which runs no key destructor:
     * sancov_exit flushes it */
    pthread_once(&exit_key_once, make_exit_key);
    if (getpid() != gettid())
        pthread_setspecific(exit_key, t);
}

__attribute__((destructor)) static void sancov_exit(void)
{
    if (self.buf)
        thread_end(&self);
    self = (struct sancov_thread){0};
    const char *dir = getenv("STROBE_BENCH_SANCOV_DIR");
    if (!dir || !*dir)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/counts", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "accesses %llu bytes %llu\n", (unsigned long long)atomic_load(&total_accesses),
            (unsigned long long)atomic_load(&total_bytes));
    fclose(f);
}

static inline void put(uint64_t v, unsigned bytes)
{
    if (__builtin_expect(self.pos >= self.end, 0))
        refill();
    memcpy(self.pos, &v, 8); /* room for 8 is always left: one store */
    self.pos += bytes;
}

void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop)
{
    if (start == stop || *start)
        return;
    for (uint32_t *g = start; g < stop; g++)
        *g = atomic_fetch_add(&next_guard, 1) + 1;
}

void __sanitizer_cov_trace_pc_guard(uint32_t *guard)
{
    put((uint64_t)*guard << 1 | 1, 4);
}

static inline void record_access(const void *addr, unsigned log2_size, unsigned store)
{
    self.accesses++;
    put((uint64_t)(uintptr_t)addr << 8 | log2_size << 2 | store << 1, 8);
}

void __sanitizer_cov_load1(uint8_t *addr)
{
    record_access(addr, 0, 0);
}
void __sanitizer_cov_load2(uint16_t *addr)
{
    record_access(addr, 1, 0);
}
void __sanitizer_cov_load4(uint32_t *addr)
{
    record_access(addr, 2, 0);
}
void __sanitizer_cov_load8(uint64_t *addr)
{
    record_access(addr, 3, 0);
}
void __sanitizer_cov_load16(__int128 *addr)
{
    record_access(addr, 4, 0);
}
void __sanitizer_cov_store1(uint8_t *addr)
{
    record_access(addr, 0, 1);
}
void __sanitizer_cov_store2(uint16_t *addr)
{
    record_access(addr, 1, 1);
}
void __sanitizer_cov_store4(uint32_t *addr)
{
    record_access(addr, 2, 1);
}
void __sanitizer_cov_store8(uint64_t *addr)
{
    record_access(addr, 3, 1);
}
void __sanitizer_cov_store16(__int128 *addr)
{
    record_access(addr, 4, 1);
}
