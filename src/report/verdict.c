/* SPDX-License-Identifier: MIT */
/* The verdict on an atomic block (see verdict.h, docs/tm.md "Verdict"). */
#include "report/verdict.h"

void strobe__tm_verdict(const struct strobe_tm_cell *c, bool times, struct strobe__tm_verdict *out)
{
    uint64_t attempts = c->transactions + c->rollbacks, spent = c->committed_ns + c->aborted_ns;
    uint64_t ser = c->serialized[0] + c->serialized[1] + c->serialized[2];
    out->rollback_rate = attempts ? (double)c->rollbacks / (double)attempts : 0;
    /* cancelled attempts are the program's choice, not a conflict */
    out->wasted = !times ? -1 : spent ? (double)(c->aborted_ns - c->cancelled_ns) / (double)spent : 0;
    out->serialized = c->transactions ? (double)ser / (double)c->transactions : 0;
    if (c->transactions == 0) {
        out->grade = STROBE__TM_NONE;
        out->grade_name = "none";
        out->summary = "no completed transaction";
        out->advice = "Nothing to judge: the block's transactions never completed";
    } else if (out->rollback_rate >= STROBE__TM_POOR_ROLLBACK_RATE || out->wasted >= STROBE__TM_POOR_WASTED) {
        out->grade = STROBE__TM_CONTENTION;
        out->grade_name = "contention";
        out->summary = "contention too high for TM";
        out->advice = "Most of the work is redone; a lock, smaller transactions or less shared data written "
                      "would serve better";
    } else if (out->serialized >= STROBE__TM_POOR_SERIALIZED) {
        out->grade = STROBE__TM_SERIALIZATION;
        out->grade_name = "serialization";
        out->summary = "serialization dominates";
        /* the first cause that holds the most transactions names the fix */
        int top = 0;
        for (int k = 1; k < STROBE_TM_NSERIAL; k++)
            if (c->serialized[k] > c->serialized[top])
                top = k;
        static const char *const why[STROBE_TM_NSERIAL] = {
            "Its transactions run irrevocably (I/O or calls without a transactional clone), which stops "
            "every "
            "other thread; move that part out of the block",
            "Its transactions reach the rollback limit and then run alone; contention is too high for TM "
            "here",
            "Its transactions run serialized, which stops every other thread"};
        out->advice = why[top];
    } else if (out->rollback_rate < STROBE__TM_GOOD_ROLLBACK_RATE && out->wasted < STROBE__TM_GOOD_WASTED &&
               out->serialized < STROBE__TM_GOOD_SERIALIZED) {
        out->grade = STROBE__TM_GOOD;
        out->grade_name = "good";
        out->summary = "TM works well";
        out->advice = "Conflicts are rare; compare the block's time with a lock or atomic version to see "
                      "whether TM pays off";
    } else {
        out->grade = STROBE__TM_FAIR;
        out->grade_name = "fair";
        out->summary = "TM works, conflicts cost some work";
        out->advice = "Smaller transactions or less shared data written would cut the conflicts";
    }
}
