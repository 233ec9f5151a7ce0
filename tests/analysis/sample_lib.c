/* SPDX-License-Identifier: MIT */
/*
 * The uninstrumented hot function of the sampling tests (test_samples.c),
 * in a shared library linked by sample_prog and dlopen'ed by it. The
 * whole loop is on the line marked HOT, which the test finds in this
 * file: every sample taken in it must resolve there. sample_spin_hidden
 * spins in a static function, which a stripped copy of the library has no
 * symbol for. sample_spin_inline spins in a function inlined into it (at
 * the line marked CALL), which only DWARF knows.
 */
double sample_spin(long n);
double sample_spin_hidden(long n);
double sample_spin_inline(long n);

double sample_spin(long n)
{
    double x = 1.0;
    /* the loop stays on one line */
    /* clang-format off */
    for (long i = 0; i < n; i++) x = x * 1.0000001 + 0.5; /* HOT */
    /* clang-format on */
    return x;
}

__attribute__((noinline)) static double hidden_spin(long n)
{
    double x = 2.0;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 0.25;
    return x;
}

double sample_spin_hidden(long n)
{
    return hidden_spin(n) + 1.0;
}

static inline __attribute__((always_inline)) double inlined_spin(long n)
{
    double x = 3.0;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 0.125;
    return x;
}

double sample_spin_inline(long n)
{
    return inlined_spin(n) * 2.0; /* CALL */
}
