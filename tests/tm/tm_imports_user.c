/* SPDX-License-Identifier: MIT */
/*
 * A library built against a TM ABI entry point that nothing provides, for
 * test_tm_imports.c: it loads (the call binds lazily) but would fail when
 * called.
 */
void _ITM_strobeTestMissing(void);
void tm_imports_call_missing(void);

void tm_imports_call_missing(void)
{
    _ITM_strobeTestMissing();
}
