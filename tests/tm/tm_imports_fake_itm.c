/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for another TM runtime, for test_tm_imports.c: it defines an
 * ABI entry point that libstrobe-tm does not.
 */
void _ITM_strobeTestOnly(void);

void _ITM_strobeTestOnly(void)
{
}
