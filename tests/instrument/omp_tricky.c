/* SPDX-License-Identifier: MIT */
/*
 * Layouts that break text-level instrumenters (tests/instrument/
 * test_directives.c, tricky_layouts): directives made by macros, comments
 * between a directive and its statement (one holding a brace), unbraced
 * statements, a directive continued over two lines, _Pragma inline,
 * default(none) (the instrumentation names no variable inside), a strobe
 * off zone opened by a _Pragma ending in a blank. With
 * -DUNUSED_AT_MARK, a warning (an error at -Werror) at M_UNUSED must name
 * this file and line.
 */
#include <omp.h>
#include <stdio.h>

#define PARALLEL _Pragma("omp parallel num_threads(2)")
#define PRAGMA(x) _Pragma(#x)

int main(void)
{
    int n = 0, m = 0, k = 0;
    PARALLEL /* M_MACRO */
    {
        PRAGMA(omp critical) /* M_STRINGIZED */
        n++;
#pragma omp barrier
#pragma omp single /* a comment with a } brace */
        /* and one between the directive and its statement } */
        m++;
    }
#pragma omp parallel for num_threads(2) default(none) \
    reduction(+ : k) /* M_CONTINUED */
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 3; j++)
            k += j;
    _Pragma("omp parallel num_threads(2) default(none) shared(k)") /* M_INLINE */
    {
#ifdef UNUSED_AT_MARK
        int unused; /* M_UNUSED */
#endif
        _Pragma("omp atomic") k++;
    }
    /* not measured: an off zone whose directive ends in a blank */
    omp_lock_t lock;
    omp_init_lock(&lock);
    _Pragma("strobe off ")
    omp_set_lock(&lock);
    omp_unset_lock(&lock);
#pragma omp parallel num_threads(2)
    {
    }
    _Pragma("strobe on")
    omp_destroy_lock(&lock);
    printf("n %d m %d k %d\n", n, m, k);
    return 0;
}
