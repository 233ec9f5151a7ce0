/* SPDX-License-Identifier: MIT */
/* The second module of test_bbpass.c's bb_two.c. */
int twice(int x)
{
    return 2 * x;
}
