/* SPDX-License-Identifier: MIT */
/* PIE executable of the symbol-resolution test: a static function and a
 * call into a shared library. test_analysis.c asserts the declaration
 * lines: local_sum on line 10, main on line 19. */
#include <stdio.h>

#include "symlib.h"

static __attribute__((noinline))
int local_sum(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += symlib_square(i);
    return s;
}

int
main(void)
{
    printf("%d\n", local_sum(4));
    return 0;
}
