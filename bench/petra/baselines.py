#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Table of the baselines phase of bench/petra/run.sh: per structure and point (txsize, threads)
# the median ops/s of each engine with its min-max over the repetitions, and PETRA's ratio to
# each pmemobj baseline (ratio of the medians; min-max of the per-repetition ratios,
# repetition i of each engine paired). The baselines: the seed's (pmemobj, one pool-wide
# rwlock) and the strong one of the structure (pmemobj-bucket for the map, pmemobj-node for
# the list and the skiplist).
import statistics
import sys

from table import fmt_rate, heading

STRONG = {"list": "pmemobj-node", "skiplist": "pmemobj-node", "map": "pmemobj-bucket"}
LOCKS = {"pmemobj-node": "PMEMrwlock per node", "pmemobj-bucket": "PMEMrwlock per bucket"}


def parse(path):
    runs, meta = {}, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("#"):
                meta.append(line[1:].strip())
            elif line:
                d = dict(kv.split("=", 1) for kv in line.split())
                key = (int(d["txsize"]), int(d["threads"]))
                per = runs.setdefault(d["structure"], {}).setdefault(key, {})
                per.setdefault(d["engine"], []).append(float(d["ops_per_s"]))
    return runs, meta


def spread(v):
    return "%s [%s-%s]" % (fmt_rate(statistics.median(v)), fmt_rate(min(v)), fmt_rate(max(v))) if v else "n/a"


def ratio(p, b):
    per = [x / y for x, y in zip(p, b) if y > 0]
    if not per or statistics.median(b) == 0:
        return "n/a"
    return "%.2f [%.2f-%.2f]" % (statistics.median(p) / statistics.median(b), min(per), max(per))


def main():
    runs, meta = parse(sys.argv[1])
    heading("PETRA vs pmemobj (pool-wide rwlock) and the strong pmemobj baseline of each structure, "
            "write mix", meta,
            "ops/s: median over the repetitions [min-max]; ratio: petra median / baseline median "
            "[min-max of per-repetition ratios]")
    for structure in ("list", "skiplist", "map"):
        if structure not in runs:
            continue
        strong = STRONG[structure]
        print()
        print("%s: strong baseline %s (%s)" % (structure, strong, LOCKS[strong]))
        hdr = "%3s %3s | %-24s | %-24s | %-24s | %-19s | %-19s" % (
            "K", "thr", "petra", "pmemobj", strong, "petra/pmemobj", "petra/" + strong)
        print(hdr)
        print("-" * len(hdr))
        for key, r in sorted(runs[structure].items()):
            p = r.get("petra", [])
            print("%3d %3d | %-24s | %-24s | %-24s | %-19s | %-19s" % (
                key + (spread(p), spread(r.get("pmemobj", [])), spread(r.get(strong, [])),
                       ratio(p, r.get("pmemobj", [])), ratio(p, r.get(strong, [])))))


if __name__ == "__main__":
    main()
