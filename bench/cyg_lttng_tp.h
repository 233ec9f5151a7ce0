/* SPDX-License-Identifier: MIT */
/*
 * LTTng-UST 2.13 tracepoint provider `strobe_bench` used by cyg_lttng.c:
 * func_entry and func_exit events, each carrying the address of the
 * function as a 64-bit integer (like lttng_ust_cyg_profile_fast, whose exit
 * event carries nothing, and lttng_ust_cyg_profile, which adds the call
 * site). This is the "write your own tracepoint provider" way of tracing
 * function entry and exit with LTTng-UST, measured next to the two
 * provider libraries that ship with LTTng-UST.
 *
 * The header is read several times by <lttng/tracepoint-event.h>; the guard
 * below is the multi-read idiom LTTng-UST requires.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER strobe_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./cyg_lttng_tp.h"

#if !defined(STROBE_BENCH_CYG_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define STROBE_BENCH_CYG_LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(strobe_bench, func_entry, LTTNG_UST_TP_ARGS(void *, func_addr),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(unsigned long, addr,
                                                                           (unsigned long)func_addr)))

LTTNG_UST_TRACEPOINT_EVENT(strobe_bench, func_exit, LTTNG_UST_TP_ARGS(void *, func_addr),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(unsigned long, addr,
                                                                           (unsigned long)func_addr)))

#endif /* STROBE_BENCH_CYG_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
