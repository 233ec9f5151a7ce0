#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Table of the baselines phase of bench/petra/run.sh: per point (txsize, threads) the median
# ops/s of each engine with its min-max over the repetitions, and PETRA's
# ratio to each pmemobj baseline (ratio of the medians; min-max of the
# per-repetition ratios, repetition i of each engine paired).
import statistics
import sys

from table import fmt_rate, heading

ENGINES = ("petra", "pmemobj", "pmemobj-bucket")


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
                runs.setdefault(key, {}).setdefault(d["engine"], []).append(float(d["ops_per_s"]))
    return runs, meta


def main():
    runs, meta = parse(sys.argv[1])
    heading("PETRA map vs pmemobj (pool-wide rwlock) and pmemobj-bucket (PMEMrwlock per bucket), write mix",
            meta, "ops/s: median over the repetitions [min-max]; ratio: petra median / baseline median "
            "[min-max of per-repetition ratios]")
    hdr = "%3s %3s | %-24s | %-24s | %-24s | %-19s | %-19s" % (
        "K", "thr", "petra", "pmemobj", "pmemobj-bucket", "petra/pmemobj", "petra/pmemobj-bucket")
    print(hdr)
    print("-" * len(hdr))
    for key in sorted(runs):
        r = runs[key]
        cells = []
        for e in ENGINES:
            v = r.get(e, [])
            cells.append("%s [%s-%s]" % (fmt_rate(statistics.median(v)), fmt_rate(min(v)), fmt_rate(max(v)))
                         if v else "n/a")
        ratios = []
        for base in ENGINES[1:]:
            p, b = r.get("petra", []), r.get(base, [])
            per = [x / y for x, y in zip(p, b) if y > 0]
            ratios.append("%.2f [%.2f-%.2f]" % (statistics.median(p) / statistics.median(b), min(per), max(per))
                          if per else "n/a")
        print("%3d %3d | %-24s | %-24s | %-24s | %-19s | %-19s" % (key + tuple(cells) + tuple(ratios)))


if __name__ == "__main__":
    main()
