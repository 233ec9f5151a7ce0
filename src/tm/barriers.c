/* SPDX-License-Identifier: MIT */
/*
 * The load/store barriers GCC emits for memory accessed inside a
 * transaction: _ITM_R<kind><type> / _ITM_W<kind><type> for every type of
 * the ABI, the undo-log calls _ITM_L<type> for locals of the function
 * holding the transaction, and the memcpy/memmove/memset variants.
 *
 * The read kinds (plain, RaR read-after-read, RaW read-after-write, RfW
 * read-for-write) and write kinds (plain, WaR, WaW) are hints an STM may
 * exploit; this one treats them alike, which is always correct. All work
 * is split into pieces that do not cross an 8-byte word, each handled by
 * strobe__tm_load / strobe__tm_store (one lock per word).
 */
#include <complex.h>
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "tm/tx.h"

#define TM_ABI __attribute__((visibility("default")))

/* Copies n bytes from transactional memory at src to private dst. */
static void tm_read_bytes(struct tm_tx *tx, void *dst, const void *src, size_t n)
{
    uintptr_t a = (uintptr_t)src;
    uint8_t *d = dst;
    while (n > 0) {
        size_t k = 8 - (a & 7);
        if (k > n)
            k = n;
        uint64_t v = strobe__tm_load(tx, (const void *)a, (unsigned)k);
        memcpy(d, &v, k); /* little-endian: the low k bytes */
        a += k;
        d += k;
        n -= k;
    }
}

/* Copies n private bytes at src to transactional memory at dst. */
static void tm_write_bytes(struct tm_tx *tx, void *dst, const void *src, size_t n)
{
    uintptr_t a = (uintptr_t)dst;
    const uint8_t *s = src;
    while (n > 0) {
        size_t k = 8 - (a & 7);
        if (k > n)
            k = n;
        uint64_t v = 0;
        memcpy(&v, s, k);
        strobe__tm_store(tx, (void *)a, v, (unsigned)k);
        a += k;
        s += k;
        n -= k;
    }
}

/* Scalar types: one word access when the value does not cross a word. */
#define TM_SCALAR_BARRIERS(T, NAME)                                                                \
    static inline T tm_read_##NAME(const T *p)                                                     \
    {                                                                                              \
        struct tm_tx *tx = tm_tx();                                                                \
        T v;                                                                                       \
        if (sizeof(T) <= 8 && ((uintptr_t)p & 7) + sizeof(T) <= 8) {                               \
            uint64_t w = strobe__tm_load(tx, p, sizeof(T));                                        \
            memcpy(&v, &w, sizeof(T));                                                             \
        } else {                                                                                   \
            tm_read_bytes(tx, &v, p, sizeof(T));                                                   \
        }                                                                                          \
        return v;                                                                                  \
    }                                                                                              \
    static inline void tm_write_##NAME(T *p, T v)                                                  \
    {                                                                                              \
        struct tm_tx *tx = tm_tx();                                                                \
        if (sizeof(T) <= 8 && ((uintptr_t)p & 7) + sizeof(T) <= 8) {                               \
            uint64_t w = 0;                                                                        \
            memcpy(&w, &v, sizeof(T));                                                             \
            strobe__tm_store(tx, p, w, sizeof(T));                                                 \
        } else {                                                                                   \
            tm_write_bytes(tx, p, &v, sizeof(T));                                                  \
        }                                                                                          \
    }                                                                                              \
    TM_ABI T _ITM_R##NAME(const T *p) { return tm_read_##NAME(p); }                                \
    TM_ABI T _ITM_RaR##NAME(const T *p) { return tm_read_##NAME(p); }                              \
    TM_ABI T _ITM_RaW##NAME(const T *p) { return tm_read_##NAME(p); }                              \
    TM_ABI T _ITM_RfW##NAME(const T *p) { return tm_read_##NAME(p); }                              \
    TM_ABI void _ITM_W##NAME(T *p, T v) { tm_write_##NAME(p, v); }                                 \
    TM_ABI void _ITM_WaR##NAME(T *p, T v) { tm_write_##NAME(p, v); }                               \
    TM_ABI void _ITM_WaW##NAME(T *p, T v) { tm_write_##NAME(p, v); }                               \
    TM_ABI void _ITM_L##NAME(const T *p) { tm_log(tm_tx(), p, sizeof(T)); }

/* _ITM_L*: the compiler accesses a local of the transaction's function
 * directly and asks only that its old value come back on abort. */
static void tm_log(struct tm_tx *tx, const void *p, size_t n)
{
    if (tx->mode == TM_MODE_IRREVOCABLE || tx->mode == TM_MODE_HTM)
        return;
    uintptr_t a = (uintptr_t)p;
    while (n > 0) {
        size_t k = 8 - (a & 7);
        if (k > n)
            k = n;
        uint64_t old = 0;
        memcpy(&old, (const void *)a, k);
        struct tm_undo u = {a, old, (uint32_t)k};
        tm_vec_push(tx->log, u);
        a += k;
        n -= k;
    }
}

typedef float _Complex tm_cf;
typedef double _Complex tm_cd;
typedef long double _Complex tm_ce;

TM_SCALAR_BARRIERS(uint8_t, U1)
TM_SCALAR_BARRIERS(uint16_t, U2)
TM_SCALAR_BARRIERS(uint32_t, U4)
TM_SCALAR_BARRIERS(uint64_t, U8)
TM_SCALAR_BARRIERS(float, F)
TM_SCALAR_BARRIERS(double, D)
TM_SCALAR_BARRIERS(long double, E)
TM_SCALAR_BARRIERS(tm_cf, CF)
TM_SCALAR_BARRIERS(tm_cd, CD)
TM_SCALAR_BARRIERS(tm_ce, CE)
TM_SCALAR_BARRIERS(__m64, M64)
TM_SCALAR_BARRIERS(__m128, M128)

/* __m256 is passed in a ymm register, so these functions need AVX; they
 * are only called by code built for AVX. */
#pragma GCC push_options
#pragma GCC target("avx")
TM_SCALAR_BARRIERS(__m256, M256)
#pragma GCC pop_options

TM_ABI void _ITM_LB(const void *p, size_t n)
{
    tm_log(tm_tx(), p, n);
}

/* ---- memcpy / memmove / memset ------------------------------------------
 * Names: R<x>W<y>, x/y = n (not transactional), t (transactional), taR /
 * taW (transactional, after read/write: hints). */

enum { TM_N = 0, TM_T = 1 };

static void tm_copy(void *dst, const void *src, size_t n, int rt, int wt, int move)
{
    struct tm_tx *tx = tm_tx();
    uint8_t buf[256];
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    /* An overlapping move copies backwards when the destination is above
     * the source, so every byte is read before it is overwritten. */
    int backwards = move && d > s && d < s + n;
    size_t done = 0;
    while (done < n) {
        size_t k = n - done < sizeof buf ? n - done : sizeof buf;
        size_t off = backwards ? n - done - k : done;
        if (rt)
            tm_read_bytes(tx, buf, (const void *)(s + off), k);
        else
            memcpy(buf, (const void *)(s + off), k);
        if (wt)
            tm_write_bytes(tx, (void *)(d + off), buf, k);
        else
            memcpy((void *)(d + off), buf, k);
        done += k;
    }
}

#define TM_COPY(OP, MOVE, RNAME, RT, WNAME, WT)                                                    \
    TM_ABI void _ITM_##OP##R##RNAME##W##WNAME(void *d, const void *s, size_t n)                    \
    {                                                                                              \
        tm_copy(d, s, n, RT, WT, MOVE);                                                            \
    }
#define TM_COPY_ALL(OP, MOVE)                                                                      \
    TM_COPY(OP, MOVE, n, TM_N, t, TM_T)                                                            \
    TM_COPY(OP, MOVE, n, TM_N, taR, TM_T)                                                          \
    TM_COPY(OP, MOVE, n, TM_N, taW, TM_T)                                                          \
    TM_COPY(OP, MOVE, t, TM_T, n, TM_N)                                                            \
    TM_COPY(OP, MOVE, t, TM_T, t, TM_T)                                                            \
    TM_COPY(OP, MOVE, t, TM_T, taR, TM_T)                                                          \
    TM_COPY(OP, MOVE, t, TM_T, taW, TM_T)                                                          \
    TM_COPY(OP, MOVE, taR, TM_T, n, TM_N)                                                          \
    TM_COPY(OP, MOVE, taR, TM_T, t, TM_T)                                                          \
    TM_COPY(OP, MOVE, taR, TM_T, taR, TM_T)                                                        \
    TM_COPY(OP, MOVE, taR, TM_T, taW, TM_T)                                                        \
    TM_COPY(OP, MOVE, taW, TM_T, n, TM_N)                                                          \
    TM_COPY(OP, MOVE, taW, TM_T, t, TM_T)                                                          \
    TM_COPY(OP, MOVE, taW, TM_T, taR, TM_T)                                                        \
    TM_COPY(OP, MOVE, taW, TM_T, taW, TM_T)

TM_COPY_ALL(memcpy, 0)
TM_COPY_ALL(memmove, 1)

static void tm_set(void *dst, int c, size_t n)
{
    uint8_t buf[256];
    memset(buf, c, sizeof buf);
    struct tm_tx *tx = tm_tx();
    for (size_t done = 0; done < n;) {
        size_t k = n - done < sizeof buf ? n - done : sizeof buf;
        tm_write_bytes(tx, (uint8_t *)dst + done, buf, k);
        done += k;
    }
}

TM_ABI void _ITM_memsetW(void *d, int c, size_t n)
{
    tm_set(d, c, n);
}
TM_ABI void _ITM_memsetWaR(void *d, int c, size_t n)
{
    tm_set(d, c, n);
}
TM_ABI void _ITM_memsetWaW(void *d, int c, size_t n)
{
    tm_set(d, c, n);
}
