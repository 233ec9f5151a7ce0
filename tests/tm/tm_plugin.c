/* SPDX-License-Identifier: MIT */
/*
 * A -fgnu-tm shared object that test_tm_clones.c loads with dlopen while
 * other threads run transactions: its clone table is registered late.
 */
__attribute__((transaction_safe)) long strobe_test_plugin_scale(long x)
{
    return 3 * x + 1;
}
