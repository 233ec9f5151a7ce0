#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Table of bench/tm/stamp.sh: reads stamp_raw.tsv (phase, rep, config, app,
threads, status, app_s, wall_s) and prints, for the STAMP applications, the
strobe/libitm throughput ratio (from the time each application reports, and
from the wall time of the whole command), the monitoring cost per level and
the crash counts, then the goals of docs/performance.md with PASS/MISS.
Ratios are taken within each repetition; median [min-max] over repetitions.
Failed runs are left out of the ratios and counted."""
import sys
from collections import Counter, defaultdict

from tmstats import LEVEL_LIMITS, med, per_rep_ratio, print_goals

APPS = ("bayes", "genome", "intruder", "kmeans", "labyrinth", "ssca2", "vacation", "yada")

app_s = defaultdict(dict)  # (phase, app, threads) -> {(config, rep): seconds}
wall_s = defaultdict(dict)
failed = defaultdict(Counter)  # (phase, app, threads) -> {config: failed runs}
statuses = defaultdict(Counter)  # (app, threads, config) -> {status: runs}, crash phase
rejected = []
for line in open(sys.argv[1]).read().splitlines()[1:]:
    phase, rep, config, app, threads, status, t_app, t_wall = line.split("\t")
    if phase == "note":
        rejected.append(config[len("mon-"):])
        continue
    key = (phase, app, int(threads))
    if phase == "crash":
        statuses[(app, int(threads), config)][status] += 1
    elif status == "ok":
        app_s[key][(config, int(rep))] = float(t_app)
        wall_s[key][(config, int(rep))] = float(t_wall)
    else:
        failed[key][config] += 1


def span(m, fmt):
    return (fmt + " [" + fmt + "-" + fmt + "]") % m


goals = []
print("STAMP: time each application reports (its parallel phase), median [min-max] in seconds; same binary on")
print("libitm and with libstrobe-tm.so preloaded (monitoring off). strobe/libitm = libitm time / strobe time")
print("within each repetition (throughput ratio, > 1 is faster); 'wall' = the same from whole-command wall time\n")
print("%-9s %3s  %-24s %-24s %-20s %-20s %s" % ("app", "thr", "libitm s", "strobe s", "strobe/libitm",
                                               "wall strobe/libitm", "failed"))
for app in APPS:
    for threads in (1, 2, 4):
        cell = app_s.get(("tp", app, threads))
        if not cell:
            continue
        li = [v for (c, r), v in cell.items() if c == "libitm"]
        st = [v for (c, r), v in cell.items() if c == "strobe"]
        ra = per_rep_ratio(cell, "libitm", "strobe")
        wa = per_rep_ratio(wall_s[("tp", app, threads)], "libitm", "strobe")
        fails = failed[("tp", app, threads)]
        print("%-9s %3d  %-24s %-24s %-20s %-20s %s" % (
            app, threads, span(med(li), "%.3f") if li else "-", span(med(st), "%.3f") if st else "-",
            span(med(ra), "%.2f") if ra else "-", span(med(wa), "%.2f") if wa else "-",
            ", ".join("%s %d" % kv for kv in sorted(fails.items())) or "0"))
        if ra:
            goals.append(("STAMP strobe vs libitm, %s, %d thread(s)" % (app, threads), ">= 1x",
                          "%.2fx" % med(ra)[0], med(ra)[0] >= 1.0))

print("\nMonitoring cost on STAMP (2 threads, strobe run --tm --tm-monitor LEVEL): application time, and")
print("cost = level time / off time - 1 within each repetition, median [min-max]")
if rejected:
    print("(levels rejected by this strobe run, not measured: %s)" % ", ".join(rejected))
print("%-9s %-9s %-24s %-24s %s" % ("app", "level", "time s", "cost vs off", "failed"))
for app in APPS:
    cell = app_s.get(("mon", app, 2))
    if not cell:
        continue
    for level, limit in LEVEL_LIMITS:
        vals = [v for (c, r), v in cell.items() if c == "mon-" + level]
        if not vals:
            continue
        cost = [v - 1.0 for v in per_rep_ratio(cell, "mon-" + level, "mon-off")]
        shown = span(tuple(100 * v for v in med(cost)), "%+.1f%%") if cost else "-"
        print("%-9s %-9s %-24s %-24s %d" % (app, level, span(med(vals), "%.3f"), "(reference)" if level == "off" else shown,
                                            failed[("mon", app, 2)]["mon-" + level]))
        if limit is not None and cost:
            goals.append(("STAMP %s monitoring cost, %s, 2 threads" % (level, app),
                          "<= %d %%" % round(100 * limit), "%.1f %%" % (100 * med(cost)[0]), med(cost)[0] <= limit))

print("\nCrashes: runs that died by a signal, exited non-zero or timed out (strobe: LD_PRELOAD, monitoring off)")
print("%-9s %3s  %-36s %s" % ("app", "thr", "crashes", "how"))
for app in APPS:
    for threads in (2, 4):
        runs = {c: statuses.get((app, threads, c)) for c in ("strobe", "libitm")}
        if not any(runs.values()):
            continue
        shown, bad = {}, {}
        for c, st in runs.items():
            st = st or Counter()
            bad[c] = sum(n for s, n in st.items() if s != "ok")
            shown[c] = "%d/%d" % (bad[c], sum(st.values()))
        how = "; ".join("%s %s x%d" % (c, s, n) for c in ("strobe", "libitm")
                        for s, n in sorted((runs[c] or {}).items()) if s != "ok")
        print("%-9s %3d  %-36s %s" % (app, threads, "crashes strobe %s libitm %s" % (shown["strobe"], shown["libitm"]),
                                     how))
        goals.append(("STAMP no crash on strobe, %s, %d threads" % (app, threads), "0",
                      shown["strobe"], bad["strobe"] == 0))

print_goals(goals)
