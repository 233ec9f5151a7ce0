/* SPDX-License-Identifier: MIT */
/*
 * A -fgnu-tm program for the `strobe run --tm` tests: 100 transactions,
 * then it prints which TM runtime it ran on (_ITM_libraryVersion) and the
 * counter.
 */
#include <stdio.h>

const char *_ITM_libraryVersion(void);

static long counter;

int main(void)
{
    for (int i = 0; i < 100; i++)
        __transaction_atomic { counter++; }
    printf("%s %ld\n", _ITM_libraryVersion(), counter);
    return 0;
}
