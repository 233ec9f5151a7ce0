/* SPDX-License-Identifier: MIT */
/*
 * Test program for `strobe run --publish`: 10 visits of the annotated
 * region "phase" and 3 of "io", then it holds still (argv[1] ms) so the
 * publisher can show the totals, then exits.
 */
#include <stdlib.h>
#include <strobe/strobe.h>
#include <time.h>

static strobe_region_t phase = STROBE_REGION_INIT("phase");
static strobe_region_t io = STROBE_REGION_INIT("io");

int main(int argc, char **argv)
{
    for (int i = 0; i < 10; i++) {
        strobe_region_enter(&phase);
        if (i % 4 == 0) {
            strobe_region_enter(&io);
            strobe_region_exit(&io);
        }
        strobe_region_exit(&phase);
    }
    long ms = argc > 1 ? atol(argv[1]) : 1000;
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
    return 0;
}
