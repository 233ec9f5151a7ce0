/* SPDX-License-Identifier: MIT */
/* test_instrument.c's directives. Usage: regions N. Each of the N rounds
 * enters `loop` once (begin/end around a loop), `single` once (a statement
 * without braces), `early` once (a statement left by return when k > 2),
 * `braced` once (_Pragma on a block); `ignored` is between off and on,
 * `macro` in an unused macro. */
#include <stdio.h>
#include <stdlib.h>

/* a directive in a macro's body is the macro's, not a region here */
#define MEASURED(stmt) _Pragma("strobe region(macro)") stmt

static int work(int n)
{
    int s = 0;
#pragma strobe region begin(loop)
    for (int i = 0; i < n; i++)
        s += i;
#pragma strobe region end(loop)
    return s;
}

static int early(int k)
{
    /* a comment between the directive and its statement */
#pragma strobe region(early)
    // and another
    if (k > 2)
        return k;
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10, total = 0;
    for (int k = 0; k < n; k++) {
        total += work(k);
#pragma strobe region(single)
        total++;
        total += early(k);
        _Pragma("strobe region(braced)")
        {
            total += 2;
        }
    }
#pragma strobe off
#pragma strobe region(ignored)
    total--;
#pragma strobe on
    printf("total %d line %d\n", total, __LINE__); /* LINE_MARK */
    return 0;
}
