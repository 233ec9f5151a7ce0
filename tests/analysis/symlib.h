/* SPDX-License-Identifier: MIT */
/* Interface of the shared library used by the symbol-resolution test. */
int symlib_square(int x);
