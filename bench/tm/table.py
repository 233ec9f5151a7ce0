#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Table of bench/tm/run.sh: reads tm_raw.tsv (rep, config, kernel, threads,
ops_per_s), prints medians with min-max, the strobe/libitm ratio and the
monitoring overhead computed within each repetition, and the goals of
docs/performance.md with PASS/MISS."""
import sys
from collections import defaultdict

from tmstats import LEVEL_LIMITS, med, per_rep_ratio, print_goals

runs = defaultdict(dict)  # (kernel, threads) -> {(config, rep): ops/s}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    rep, config, kernel, threads, ops = line.split("\t")
    runs[(kernel, int(threads))][(config, int(rep))] = float(ops)


def mops(v):
    return "%.2f" % (v / 1e6)


goals = []
print("Transactional memory: throughput in million transactions/s, median [min-max] over repetitions;")
print("strobe/libitm = ratio within each repetition (median [min-max]); same binary, libstrobe-tm.so preloaded or not\n")
print("%-8s %7s  %-22s %-22s %-22s" % ("kernel", "threads", "libitm Mtx/s", "strobe Mtx/s", "strobe/libitm"))
for kernel in ("update", "bank", "list", "hash"):
    for threads in (1, 2, 4):
        cell = runs.get((kernel, threads))
        if not cell:
            continue
        li = med([v for (c, r), v in cell.items() if c == "libitm"])
        st = med([v for (c, r), v in cell.items() if c == "strobe"])
        ra = med(per_rep_ratio(cell, "strobe", "libitm"))
        print("%-8s %7d  %-22s %-22s %-22s" % (
            kernel, threads,
            "%s [%s-%s]" % (mops(li[0]), mops(li[1]), mops(li[2])),
            "%s [%s-%s]" % (mops(st[0]), mops(st[1]), mops(st[2])),
            "%.2fx [%.2f-%.2f]" % ra))
        goals.append(("strobe vs libitm, %s, %d thread(s)" % (kernel, threads), ">= 1x", "%.2fx" % ra[0],
                      ra[0] >= 1.0))

print("\nMonitoring cost (2 threads, under strobe run --tm-monitor LEVEL): throughput relative to 'off';")
print("'stm' rows: the same with STROBE_TM_HTM=0, relative to 'off' on the STM. 'events' always runs on the")
print("STM, so its goal is judged against the STM's 'off'; the other levels' against the default 'off'")
print("%-8s %-4s %-8s %-22s %-22s" % ("kernel", "tm", "level", "Mtx/s", "vs off"))
for kernel in ("bank", "update"):
    cell = runs.get((kernel, 2), {})
    for kind, prefix in (("", "mon-"), ("stm", "stm-")):
        for level, limit in LEVEL_LIMITS:
            vals = [v for (c, r), v in cell.items() if c == prefix + level]
            if not vals:
                continue
            m = med(vals)
            rel = med(per_rep_ratio(cell, prefix + level, prefix + "off"))
            print("%-8s %-4s %-8s %-22s %-22s" % (kernel, kind or "-", level,
                                                  "%s [%s-%s]" % (mops(m[0]), mops(m[1]), mops(m[2])),
                                                  "%.3f [%.3f-%.3f]" % rel))
            if limit is not None and (level == "events") == (kind == "stm"):
                cost = 1.0 - rel[0]
                goals.append(("%s monitoring cost, %s, 2 threads%s" % (level, kernel, ", STM" if kind else ""),
                              "<= %d %%" % round(limit * 100), "%.1f %%" % (100 * cost), cost <= limit))

print_goals(goals)
