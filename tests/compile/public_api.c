/* SPDX-License-Identifier: MIT */
/* Compiles every public header as strict C11; runs without libstrobe (the
 * handles are plain data). */
#include <strobe/adapter.h>
#include <strobe/bgq_tm.h>
#include <strobe/petra.h>
#include <strobe/shm.h>
#include <strobe/strobe.h>
#include <strobe/tm.h>

static strobe_region_t region = STROBE_REGION_INIT("compile");
static strobe_metric_t metric = STROBE_METRIC_INIT("bytes", "B");

int main(void)
{
    return (region.id == 0 && metric.id == 0 && STROBE_ERR_FORMAT < 0) ? 0 : 1;
}
