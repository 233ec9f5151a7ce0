/* SPDX-License-Identifier: MIT */
/*
 * A shared library traced at level BB (block ids only), as `strobe cc
 * --trace=bb` would emit it (bb_emit.h): one segment, local id 1, per
 * iteration of bb_lib_work. Its constructor registers before the
 * executable's, so its block is process-wide id 1.
 */
#include "bb_emit.h"

static uint32_t lib_base;
static const struct strobe_bb_block lib_blocks[] = {{0, 0, 0, 0, 1, 12}};
static const char *const lib_names[] = {"bb_lib_work", "bb_lib.c"};
static const struct strobe_bb_module lib_module = {
    STROBE_BB_ABI, STROBE_BB_LEVEL_BB, 1, 0, 2, 0, "bb_lib.c", lib_blocks, NULL, lib_names, &lib_base, NULL};

__attribute__((constructor)) static void lib_register(void)
{
    if (strobe_bb_register)
        strobe_bb_register(&lib_module);
}

int bb_lib_work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        struct bb_seg g;
        bb_begin(&g, &lib_base, 1, 0);
        s += i;
        bb_end(&g);
    }
    return s;
}
