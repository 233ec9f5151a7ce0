/* SPDX-License-Identifier: MIT */
/*
 * libstrobe-bench-cyg-null.so: empty __cyg_profile_func_enter/exit hooks, the
 * "instrumented, no tool" baseline of `make bench`.
 *
 * Why a shared library and not weak definitions inside the benchmark
 * executable: the dynamic linker searches the global scope in the order
 * executable, LD_PRELOAD objects, then DT_NEEDED libraries. A definition in
 * the executable, weak or not, is found first, and the link editor has
 * already bound the executable's own calls to it directly (no PLT), so a
 * preloaded tool (libstrobe.so, liblttng-ust-cyg-profile*.so, uftrace's
 * libmcount) would never be called. With the hooks left undefined in the
 * executable and defined here, each instrumented call goes through the PLT,
 * and a preloaded library's definition comes before this one in the lookup
 * order, so it interposes. bench/run.sh checks this with LD_DEBUG=bindings
 * before measuring each preloaded tool.
 *
 * Thread-safe and async-signal-safe (they do nothing).
 */

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_enter(void *this_fn,
                                                                                             void *call_site)
{
    (void)this_fn;
    (void)call_site;
}

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_exit(void *this_fn,
                                                                                            void *call_site)
{
    (void)this_fn;
    (void)call_site;
}
