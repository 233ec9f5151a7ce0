/* SPDX-License-Identifier: MIT */
/*
 * A shared object loaded with dlopen() by prog_dlopen.c, compiled with
 * -finstrument-functions: its functions show up only after start-up, so
 * the runtime must describe the new module (MODULE record) when their
 * first event arrives. plugin_work(n) calls plugin_leaf n times.
 */
#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE void plugin_leaf(unsigned long x)
{
    sink += x;
}

NOINLINE void plugin_work(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        plugin_leaf(i);
}
