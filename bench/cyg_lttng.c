/* SPDX-License-Identifier: MIT */
/*
 * libstrobe-bench-cyg-lttng.so: __cyg_profile_func_enter/exit hooks that
 * emit the strobe_bench:func_entry / func_exit LTTng-UST tracepoints of
 * cyg_lttng_tp.h. Preloaded (LD_PRELOAD) on strobe-bench-calls, exactly like
 * liblttng-ust-cyg-profile-fast.so; this library holds the tracepoint
 * definitions and the probes, so it needs nothing else at run time but
 * liblttng-ust and an lttng-sessiond with an active session that enabled
 * `strobe_bench:*` (bench/run.sh sets that up).
 *
 * The hooks are thread-safe (LTTng-UST's per-CPU ring buffers).
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "cyg_lttng_tp.h"

#define HOOK __attribute__((visibility("default"), no_instrument_function))

HOOK void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
    (void)call_site;
    lttng_ust_tracepoint(strobe_bench, func_entry, this_fn);
}

HOOK void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
    (void)call_site;
    lttng_ust_tracepoint(strobe_bench, func_exit, this_fn);
}
