/* SPDX-License-Identifier: MIT */
/*
 * Blue Gene/Q compatibility: IBM's TM/SE monitoring API names
 * (TmReport_t, tm_get_stats, tm_get_all_stats, SeReport_t,
 * se_get_all_stats) on top of <strobe/tm.h>, so BG/Q-era measurement code
 * compiles unchanged against libstrobe-tm. Header-only.
 */
#ifndef STROBE_BGQ_TM_H
#define STROBE_BGQ_TM_H

#include "strobe/tm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TmReport_s {
    unsigned long hwThreadId;
    unsigned long totalTransactions;
    unsigned long totalRollbacks;
    unsigned long totalSerializedJMV;
    unsigned long totalSerializedMAXRB;
    unsigned long totalSerializedOTHER;
} TmReport_t;

typedef struct SeReport_s {
    unsigned long totalNONSpecCommitted;
    unsigned long totalSpecCommitted;
    unsigned long totalRollbacks;
    unsigned long totalSerializedJMV;
    unsigned long totalSerializedMAXRB;
    unsigned long totalSerializedOTHER;
} SeReport_t;

static inline void strobe__bgq_tm_copy(TmReport_t *out, const strobe_tm_report_t *r)
{
    out->hwThreadId = r->hw_thread_id;
    out->totalTransactions = r->total_transactions;
    out->totalRollbacks = r->total_rollbacks;
    out->totalSerializedJMV = r->total_serialized_jmv;
    out->totalSerializedMAXRB = r->total_serialized_maxrb;
    out->totalSerializedOTHER = r->total_serialized_other;
}

static inline void tm_get_stats(TmReport_t *stats)
{
    strobe_tm_report_t r;
    strobe_tm_get_stats(&r);
    strobe__bgq_tm_copy(stats, &r);
}

static inline void tm_get_all_stats(TmReport_t *stats)
{
    strobe_tm_report_t r;
    strobe_tm_get_all_stats(&r);
    strobe__bgq_tm_copy(stats, &r);
}

static inline void se_get_all_stats(SeReport_t *stats)
{
    strobe_se_report_t r;
    strobe_se_get_all_stats(&r);
    stats->totalNONSpecCommitted = r.total_nonspec_committed;
    stats->totalSpecCommitted = r.total_spec_committed;
    stats->totalRollbacks = r.total_rollbacks;
    stats->totalSerializedJMV = r.total_serialized_jmv;
    stats->totalSerializedMAXRB = r.total_serialized_maxrb;
    stats->totalSerializedOTHER = r.total_serialized_other;
}

#ifdef __cplusplus
}
#endif

#endif /* STROBE_BGQ_TM_H */
