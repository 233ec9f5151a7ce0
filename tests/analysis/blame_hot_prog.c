/* SPDX-License-Identifier: MIT */
/* The sampled fixture of test_blame: a hot loop whose time is in libm and
 * libc (no blame table there: their samples go to the calling line) and in
 * its own lines. Its unit is written by the test, keyed by these lines:
 * keep every line where it is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
double acc;
static char buf[4096];
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    for (long i = 0; i < n; i++) {
        acc += sin((double)i);
        memset(buf, (int)i, sizeof buf);
    }
    return acc > 1e300;
}
