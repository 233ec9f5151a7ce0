/* SPDX-License-Identifier: MIT */
/*
 * Aggregation: strobed pulls the published sets of other daemons
 * (`producers:` in the configuration), one thread per producer so that a
 * slow or dead producer never delays the others, and mirrors them into
 * its own registry where transforms, stores, the server and HTTP see
 * them like local sets. Modes: pull on the interval/offset grid, or push
 * on change (a long poll the producer answers as soon as a set changes).
 */
#ifndef STROBE_STROBED_AGGREGATOR_H
#define STROBE_STROBED_AGGREGATOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct strobe__daemon;
struct strobe__cfg;
struct strobe__aggregator;

int strobe__aggregators_new(struct strobe__daemon *d, const struct strobe__cfg *list, char *err,
                            size_t errlen);
int strobe__aggregators_start(struct strobe__daemon *d);
void strobe__aggregators_free(struct strobe__daemon *d);

/* Runtime control (caller holds d->ctl_lock, not d->lock); each returns
 * 0, or a negative code with one line in err and nothing changed
 * (-ENOENT: no producer of that name). add: entry is a mapping like one
 * of `producers:` (same checks and messages), taken over on success; the
 * producer is pulled from at once when the daemon runs. remove: its
 * thread ends, the sets mirrored from it leave the registry. interval:
 * the thread restarts with the new interval (and the timeout and
 * stale_after derived from it, unless they were given); the mirrored sets
 * stay. describe: one line per producer, "producer NAME address=A
 * interval=D mode=pull|push up|down sets=N". */
int strobe__aggregator_add(struct strobe__daemon *d, struct strobe__cfg *entry, char *err, size_t errlen);
int strobe__aggregator_remove(struct strobe__daemon *d, const char *name, char *err, size_t errlen);
int strobe__aggregator_interval(struct strobe__daemon *d, const char *name, const char *duration, char *err,
                                size_t errlen);
void strobe__aggregator_describe(struct strobe__daemon *d, FILE *out);

/* Liveness of producer `a` at wall time `now` (caller holds d->lock): its
 * address, whether its last round succeeded, the age of its last
 * successful round (since the aggregator started when none has), and
 * whether it has been down longer than its `stale_after`, when the sets
 * mirrored from it leave the exposition. */
struct strobe__producer_state {
    const char *address;
    int up;
    uint64_t age_ns;
    int stale;
};
void strobe__aggregator_state(const struct strobe__aggregator *a, uint64_t now,
                              struct strobe__producer_state *out);

#endif
