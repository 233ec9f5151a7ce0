/* SPDX-License-Identifier: MIT */
/* Shared library of the symbol-resolution test; test_analysis.c asserts
 * the declaration lines below (symlib_square on line 7). */
#include "symlib.h"

__attribute__((noinline))
int symlib_square(int x)
{
    return x * x;
}
