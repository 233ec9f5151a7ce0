/* SPDX-License-Identifier: MIT */
/* Small deterministic mixing and random-number functions shared by PETRA
 * and its tools: not cryptographic, chosen for speed and reproducibility. */
#ifndef STROBE_COMMON_RNG_H
#define STROBE_COMMON_RNG_H

#include <stdint.h>

/* splitmix64's finalizer: a bijective mix of all 64 bits (PETRA's map
 * bucket hash; petra-bench's baseline uses the same one for fairness). */
static inline uint64_t strobe__mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* splitmix64 step: seeds the generator below from any value. */
static inline uint64_t strobe__splitmix64(uint64_t x)
{
    return strobe__mix64(x + 0x9e3779b97f4a7c15ull);
}

/* xorshift64*: *s must not be 0. */
static inline uint64_t strobe__xorshift64s(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

#endif
