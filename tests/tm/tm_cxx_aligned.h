/* SPDX-License-Identifier: MIT */
/*
 * 64-byte-aligned objects created and destroyed in transactions
 * (tm_cxx_aligned.cc): aligned new, sized aligned delete, aligned new[] and
 * delete[].
 */
#ifndef STROBE_TESTS_TM_CXX_ALIGNED_H
#define STROBE_TESTS_TM_CXX_ALIGNED_H

struct Wide;
__attribute__((transaction_safe)) Wide *wide_new(long k);
__attribute__((transaction_safe)) Wide *wide_new_array(long k);
__attribute__((transaction_safe)) long wide_bad(const Wide *one, const Wide *two, long k);
__attribute__((transaction_safe)) void wide_delete(Wide *one, Wide *two);
__attribute__((transaction_safe)) bool wide_aligned(const Wide *w);

#endif
