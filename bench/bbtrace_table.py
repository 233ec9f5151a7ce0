#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns the runs recorded by bench/bbtrace.sh into its table.

Usage: bbtrace_table.py RESULTS_DIR
       (reads bbtrace_raw.tsv, bbtrace_taskgraph.tsv and bbtrace_info.tsv)

Prints the table on stdout and writes RESULTS_DIR/bbtrace_table.md (the
same in Markdown, for docs/performance.md). Per program and configuration:
the program's own time and the whole command's (seconds), the slowdown of
each over the plain build's in the same repetition, the trace's bytes per
memory event and per block event, and its size; then the geomean over the
programs of the median slowdowns, the goals, and the task-graph build.
The goals are reported (PASS/MISS), not enforced: a loaded machine would
fail them.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from table import cell_range, fmt, open_results, read_tsv, summary  # noqa: E402

LABELS = {
    "plain": "clang -O2",
    "func": "strobe cc --trace=func, strobe run",
    "bb": "strobe cc --trace=bb, strobe run",
    "bbmem": "strobe cc --trace=bb,mem, strobe run",
    "bbmem_bare": "strobe cc --trace=bb,mem, no strobe run",
    "sancov": "clang sancov callbacks (anchor)",
}
GOAL_SLOWDOWN = 2.0
GOAL_BYTES_PER_MEM = 3.0
GOAL_TG_EVENTS_PER_S = 50e6


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def main():
    res, info, runs = open_results("bbtrace_table.py", "bbtrace_info.tsv", "bbtrace_raw.tsv")
    ok = {(r["rep"], r["program"], r["config"]): r for r in runs if r["status"] == "ok"}
    programs = list(dict.fromkeys(r["program"] for r in runs))
    configs = [c for c in LABELS if any(r["config"] == c for r in runs)]
    reps = sorted({r["rep"] for r in runs}, key=int)

    def val(rep, p, cfg, key, scale=1.0):
        r = ok.get((rep, p, cfg))
        if r is None or r[key] in ("-", ""):
            return None
        return int(r[key]) / scale

    def over(p, fn):
        return summary([v for v in (fn(rep) for rep in reps) if v is not None])

    def ratio(p, cfg, key, base="plain"):
        def one(rep):
            a, b = val(rep, p, cfg, key), val(rep, p, base, key)
            return a / b if a is not None and b else None
        return over(p, one)

    out, md = [], []
    w = out.append
    w(f"strobe bench, block and memory tracing: SPLASH-3 at {info['threads']} threads")
    w(f"date {info['date']}; CPU {info['cpu']}, nproc {info['nproc']}, load {info['load']}; {info['clang']}; "
      f"sources {info['splash3']}")
    w("prog s: the program's own time (start to exit); cmd s: the whole command (start-up and strobe run's wait "
      "at exit); slowdown: over clang -O2, same repetition")
    w("CPU slowdown: the same with the program's CPU time (all threads; less sensitive to other work on the "
      "machine, blind to waiting for the disk)")
    w("B/mem: bytes of the block streams per memory event (elided ones counted); B/block: per block event; "
      "median [min-max] over repetitions")
    w("")
    hdr = (f"{'program':<7} {'config':<11} {'prog s':>6} {'slowdown':>20} {'CPU slowdown':>20} {'cmd s':>6} "
           f"{'cmd slowdown':>20} "
           f"{'blocks':>11} {'mem events':>11} {'B/mem':>6} {'B/block':>7} {'trace MB':>9}")
    w(hdr)
    w("-" * len(hdr))
    md.append("| program | configuration | prog s | slowdown | CPU slowdown | cmd s | cmd slowdown | blocks "
              "| memory events | B/mem event | B/block event | trace MB |")
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    medians = {c: [] for c in configs}
    cpu_medians = {c: [] for c in configs}
    bytes_per_mem = []
    notes = []
    for p in programs:
        for cfg in configs:
            rows = [r for r in runs if r["program"] == p and r["config"] == cfg]
            if not any(r["status"] == "ok" for r in rows):
                why = rows[0]["status"] if rows else "not run"
                w(f"{p:<7} {cfg:<11} {why}")
                md.append(f"| {p} | {LABELS[cfg]} | {why} ||||||||||")
                continue
            pt = over(p, lambda rep: val(rep, p, cfg, "program_ns", 1e9))
            ct = over(p, lambda rep: val(rep, p, cfg, "command_ns", 1e9))
            sd = ratio(p, cfg, "program_ns")
            cd = ratio(p, cfg, "command_ns")
            cpu = ratio(p, cfg, "program_cpu_ns")
            if sd:
                medians[cfg].append(sd[0])
            if cpu:
                cpu_medians[cfg].append(cpu[0])
            blocks = over(p, lambda rep: val(rep, p, cfg, "blocks"))
            mem = over(p, lambda rep: val(rep, p, cfg, "memory_events"))
            bpm = over(p, lambda rep: (val(rep, p, cfg, "bb_bytes") / val(rep, p, cfg, "memory_events"))
                       if val(rep, p, cfg, "memory_events") else None)
            bpb = over(p, lambda rep: (val(rep, p, cfg, "bb_bytes") / val(rep, p, cfg, "blocks"))
                       if val(rep, p, cfg, "blocks") else None)
            size = over(p, lambda rep: val(rep, p, cfg, "experiment_bytes", 1e6))
            if cfg == "bbmem" and bpm:
                bytes_per_mem.append((p, bpm[0]))
            cnt = (lambda s: f"{s[0]:.0f}" if s else "-")
            w(f"{p:<7} {cfg:<11} {fmt(pt[0], 2) if pt else '-':>6} {cell_range(sd, 2, 'x', '-'):>20} "
              f"{cell_range(cpu, 2, 'x', '-'):>20} {fmt(ct[0], 2) if ct else '-':>6} {cell_range(cd, 2, 'x', '-'):>20} {cnt(blocks):>11} "
              f"{cnt(mem):>11} {fmt(bpm[0], 2) if bpm else '-':>6} {fmt(bpb[0], 2) if bpb else '-':>7} "
              f"{fmt(size[0], 1) if size else '-':>9}")
            md.append(f"| {p} | {LABELS[cfg]} | {cell_range(pt, 2)} | {cell_range(sd, 2, '×')} | "
                      f"{cell_range(cpu, 2, '×')} | "
                      f"{cell_range(ct, 2)} | {cell_range(cd, 2, '×')} | {cnt(blocks)} | {cnt(mem)} | "
                      f"{fmt(bpm[0], 2) if bpm else '-'} | {fmt(bpb[0], 2) if bpb else '-'} | "
                      f"{fmt(size[0], 1) if size else '-'} |")
            for r in rows:
                if r["status"] != "ok":
                    notes.append(f"note: {p} {cfg} repetition {r['rep']} failed: {r['status']}")
    w("")
    md.append("")
    md.append("| configuration | geomean slowdown | geomean CPU slowdown | programs |")
    md.append("|---|---|---|---|")
    for cfg in configs:
        g, gc = geomean(medians[cfg]), geomean(cpu_medians[cfg])
        if cfg == "plain" or g is None:
            continue
        w(f"geomean slowdown {cfg:<11} {fmt(g, 2)}x, CPU {fmt(gc, 2)}x over {len(medians[cfg])} programs "
          f"({LABELS[cfg]})")
        md.append(f"| {LABELS[cfg]} | {fmt(g, 2)}× | {fmt(gc, 2)}× | {len(medians[cfg])} |")
    # the anchor: sancov callbacks / strobe's inline code, per program, same repetition
    anchor = []
    for p in programs:
        r = ratio(p, "sancov", "program_ns", base="bbmem")
        if r:
            anchor.append(r[0])
    if anchor:
        w(f"sancov callbacks / strobe bb,mem (program time, same repetition): geomean {fmt(geomean(anchor), 2)}x")
    w("")
    gs = geomean(medians.get("bbmem", []))
    worst = max(bytes_per_mem, key=lambda x: x[1]) if bytes_per_mem else None
    goals = [
        ("bb,mem slowdown, geomean", f"<= {GOAL_SLOWDOWN}x", f"{fmt(gs, 2)}x" if gs else "-",
         "-" if gs is None else ("PASS" if gs <= GOAL_SLOWDOWN else "MISS")),
        ("bytes per memory event, worst program", f"<= {GOAL_BYTES_PER_MEM}",
         f"{fmt(worst[1], 2)} ({worst[0]})" if worst else "-",
         "-" if worst is None else ("PASS" if worst[1] <= GOAL_BYTES_PER_MEM else "MISS")),
    ]
    tg = read_tsv(os.path.join(res, "bbtrace_taskgraph.tsv"))
    tg_ok = [t for t in tg if t["status"] == "ok"]
    ok = [t for t in tg_ok if float(t["cpu_seconds"]) > 0 and float(t["seconds"]) > 0]
    md.append("")
    if ok:
        cpu_rate = summary([int(t["recorded_events"]) / float(t["cpu_seconds"]) for t in ok])
        wall_rate = summary([int(t["recorded_events"]) / float(t["seconds"]) for t in ok])
        rss = summary([int(t["peak_rss_kb"]) / 1024 for t in tg_ok])
        t0 = tg_ok[0]
        line = (f"task graph (strobe taskgraph --format text) of {t0['program']} bb,mem "
                f"({int(t0['bytes']) / 1e6:.0f} MB, {int(t0['recorded_events'])} events recorded, "
                f"{int(t0['tg_events'])} of them block events and event records): "
                f"{cell_range(summary([float(t['cpu_seconds']) for t in ok]), 2)} s of CPU, "
                f"{cell_range(summary([float(t['seconds']) for t in ok]), 2)} s wall: "
                f"{cell_range(tuple(v / 1e6 for v in cpu_rate[:3]) + cpu_rate[3:], 1)} M events per CPU second "
                f"({wall_rate[0] / 1e6:.1f} M per wall second), peak RSS {cell_range(rss, 1)} MiB; "
                f"the whole graph as JSON: {float(t0['json_seconds']):.2f} s wall, "
                f"{int(t0['json_bytes']) / 1e6:.0f} MB")
        w(line)
        md.append(line)
        # the builder decodes every event recorded: blocks, the memory
        # accesses it rebuilds for the sharing analysis, event records
        goals.append(("task graph build, per CPU second", f">= {GOAL_TG_EVENTS_PER_S / 1e6:.0f} M events/s",
                      f"{cpu_rate[0] / 1e6:.1f} M/s", "PASS" if cpu_rate[0] >= GOAL_TG_EVENTS_PER_S else "MISS"))
    else:
        line = "task graph: " + (tg[0]["status"] if tg and tg[0]["status"] != "ok" else
                                 "not measured" if not tg else "too fast to time (0.00 s of CPU)")
        w(line)
        md.append(line)
    w("")
    md.append("")
    md.append("| goal | target | measured | result |")
    md.append("|---|---|---|---|")
    for g in goals:
        w(f"goal {g[0]:<38} {g[1]:<18} {g[2]:<20} {g[3]}")
        md.append(f"| {g[0]} | {g[1]} | {g[2]} | {g[3]} |")
    out.extend(notes)
    print("\n".join(out))
    with open(os.path.join(res, "bbtrace_table.md"), "w") as f:
        f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
