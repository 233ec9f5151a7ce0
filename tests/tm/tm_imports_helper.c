/* SPDX-License-Identifier: MIT */
/*
 * Programs for test_tm_imports.c, one per IMPORTS_* variant (see
 * tests/tm/CMakeLists.txt for how each is linked). Each prints "ran" if it
 * gets to main: the start-up check must stop those that would mix TM
 * runtimes or miss an entry point, and let the others run.
 */
#include <stdio.h>

#if defined(IMPORTS_FAKE)
void _ITM_strobeTestOnly(void); /* defined by libtm_fake_itm.so only */
#elif defined(IMPORTS_MISSING)
void tm_imports_call_missing(void); /* libtm_imports_user.so: calls an entry point defined nowhere */
#elif defined(IMPORTS_WEAK)
void _ITM_strobeTestWeak(void) __attribute__((weak)); /* defined nowhere, tested */
#endif

int main(int argc, char **argv)
{
    (void)argv;
    printf("ran\n");
#if defined(IMPORTS_FAKE)
    if (argc > 1)
        _ITM_strobeTestOnly();
#elif defined(IMPORTS_MISSING)
    if (argc > 1)
        tm_imports_call_missing();
#elif defined(IMPORTS_WEAK)
    if (_ITM_strobeTestWeak != NULL)
        _ITM_strobeTestWeak();
#endif
    (void)argc;
    return 0;
}
