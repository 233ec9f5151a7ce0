# SPDX-License-Identifier: MIT
"""Statistics shared by the tables of bench/tm (table.py for the kernels,
stamp_table.py for STAMP): median with min-max, ratios taken within one
repetition, and the PASS/MISS list of goals."""
import statistics

# Monitoring levels and the throughput each may cost over "off" (goals of
# docs/performance.md: counters <= 2 %, stats <= 10 %, events <= 15 %).
LEVEL_LIMITS = (("off", None), ("counters", 0.02), ("stats", 0.10), ("events", 0.15))


def med(values):
    """(median, min, max) of a non-empty list."""
    return statistics.median(values), min(values), max(values)


def per_rep_ratio(cell, num, den):
    """cell maps (config, rep) to a value; returns value(num)/value(den) for
    every repetition that has both, in repetition order."""
    reps = sorted({r for (c, r) in cell if c == num} & {r for (c, r) in cell if c == den})
    return [cell[(num, r)] / cell[(den, r)] for r in reps]


def print_goals(goals):
    """goals: (name, target, shown, ok) tuples; prints one PASS/MISS line each."""
    print("\n%-52s %-8s %-9s %s" % ("goal", "target", "measured", "result"))
    for name, target, shown, ok in goals:
        print("%-52s %-8s %-9s %s" % (name, target, shown, "PASS" if ok else "MISS"))
