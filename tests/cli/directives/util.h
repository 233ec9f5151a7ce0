/* SPDX-License-Identifier: MIT */
/* Found by a quoted #include next to the sources (tests/cli/test_cc.c). */
int work(int n);
