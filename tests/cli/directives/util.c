/* SPDX-License-Identifier: MIT */
/* A user region in the second file of the program strobe cc instruments
 * (tests/cli/test_cc.c, directives). */
#include "util.h"

int work(int n)
{
    int s = 0;
#pragma strobe region(work_loop)
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}
