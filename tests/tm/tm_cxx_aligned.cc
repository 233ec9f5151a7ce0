/* SPDX-License-Identifier: MIT */
/*
 * Over-aligned objects for test_tm_cxx.cc, in a file of their own: once
 * <new> is included (as any standard header does), g++ 12 no longer treats
 * the aligned forms of operator new as transaction-safe, but without it
 * they are, and their transactional clones are called. So this file
 * includes nothing.
 */
#include "tm/tm_cxx_aligned.h"

struct alignas(64) Wide {
    long v[8];
    Wide() : v{}
    {
    }
    explicit Wide(long x)
    {
        for (int i = 0; i < 8; i++)
            v[i] = x + i;
    }
};

Wide *wide_new(long k)
{
    return new Wide(k);
}

Wide *wide_new_array(long k)
{
    Wide *w = new Wide[2];
    w[1].v[7] = k;
    return w;
}

long wide_bad(const Wide *one, const Wide *two, long k)
{
    return (one->v[7] != k + 7) + (two[1].v[7] != k);
}

bool wide_aligned(const Wide *w)
{
    return (unsigned long)w % 64 == 0;
}

void wide_delete(Wide *one, Wide *two)
{
    delete one;
    delete[] two;
}
