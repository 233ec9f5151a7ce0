#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns the runs recorded by bench/real.sh into its table.

Usage: real_table.py RESULTS_DIR   (reads real_raw.tsv and real_info.tsv)

Prints the table on stdout and writes RESULTS_DIR/real_table.md (the same
in Markdown, for docs/performance.md). Per program and tool: the program's
own time and the whole command's (seconds), the slowdown over the plain
build, the events recorded, the program's CPU time, and the CPU time per
event above the plain build and above the instrumented build run with no
tool; each ratio or difference is formed within a repetition, then the
median [min-max] over repetitions is shown.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from table import cell_range, fmt, open_results, summary  # noqa: E402

TOOLS = ["strobe", "uftrace"]


def main():
    res, info, runs = open_results("real_table.py", "real_info.tsv", "real_raw.tsv")
    ok = {(r["rep"], r["program"], r["config"]): r for r in runs if r["status"] == "ok"}
    failed = [r for r in runs if r["status"] != "ok"]
    programs = list(dict.fromkeys(r["program"] for r in runs))
    reps = sorted({r["rep"] for r in runs}, key=int)

    def per_rep(program, fn):
        vals = []
        for rep in reps:
            v = fn(rep)
            if v is not None:
                vals.append(v)
        return summary(vals)

    def prog_s(rep, program, cfg, key="program_ns"):
        r = ok.get((rep, program, cfg))
        return int(r[key]) / 1e9 if r else None

    out = []
    w = out.append
    w("strobe bench, real programs: SPLASH-3 at " + info["threads"] + " threads, plain / strobe run / uftrace record")
    w(f"date {info['date']}; CPU {info['cpu']}, nproc {info['nproc']}; uftrace {info['uftrace']}; "
      f"sources {info['splash3']}")
    w("prog s: the program's own time (start to exit); cmd s: the whole command, incl. the tool's work after "
      "the program exits;")
    w("slowdown = prog s / plain prog s; events = enter + exit "
      "(strobe: trace records; uftrace: 2 x calls in `uftrace report`)")
    w("CPU s: the program's CPU time, all threads; ns/event: CPU time added per event (all threads), over the "
      "plain build (the tool plus what -finstrument-functions costs) and over the instrumented build with no tool "
      "(the tool alone)")
    w("median [min-max] over repetitions, ratios within a repetition")
    w("")
    md = ["| program | plain s | instrumented, no tool s | tool | events | prog s | slowdown | cmd s | CPU s "
          "| ns/event over plain | ns/event over instrumented |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    hdr = (f"{'program':<8} {'plain s':>8} {'instr s':>8}  {'tool':<8} {'events':>11} {'prog s':>8} "
           f"{'slowdown':>22} {'cmd s':>8} {'CPU s':>7} {'ns/ev over plain':>20} {'over instr':>20}")
    w(hdr)
    w("-" * len(hdr))
    for p in programs:
        plain = per_rep(p, lambda rep: prog_s(rep, p, "plain"))
        instr = per_rep(p, lambda rep: prog_s(rep, p, "instr"))
        first = True
        for tool in TOOLS:
            if not any(k[1] == p and k[2] == tool for k in ok) and not any(
                    r["program"] == p and r["config"] == tool for r in runs):
                continue

            def slow(rep, tool=tool):
                a, b = prog_s(rep, p, tool), prog_s(rep, p, "plain")
                return a / b if a is not None and b else None

            def nsev(rep, base, tool=tool):
                a, b = prog_s(rep, p, tool, "program_cpu_ns"), prog_s(rep, p, base, "program_cpu_ns")
                r = ok.get((rep, p, tool))
                if a is None or b is None or r["events"] in ("-", "", "0"):
                    return None
                return (a - b) * 1e9 / int(r["events"])

            ev = per_rep(p, lambda rep, tool=tool: int(ok[(rep, p, tool)]["events"])
                         if (rep, p, tool) in ok and ok[(rep, p, tool)]["events"] not in ("-", "") else None)
            pt = per_rep(p, lambda rep, tool=tool: prog_s(rep, p, tool))
            ct = per_rep(p, lambda rep, tool=tool: int(ok[(rep, p, tool)]["command_ns"]) / 1e9
                         if (rep, p, tool) in ok else None)
            sd = per_rep(p, slow)
            ne = per_rep(p, lambda rep, tool=tool: nsev(rep, "plain", tool))
            ni = per_rep(p, lambda rep, tool=tool: nsev(rep, "instr", tool))
            cpu = per_rep(p, lambda rep, tool=tool: prog_s(rep, p, tool, "program_cpu_ns"))
            lead = (p, fmt(plain[0], 2) if plain else "-", fmt(instr[0], 2) if instr else "-") if first else ("", "", "")
            first = False
            evs = f"{ev[0]:.0f}" if ev else "-"
            w(f"{lead[0]:<8} {lead[1]:>8} {lead[2]:>8}  {tool:<8} {evs:>11} {fmt(pt[0], 2) if pt else '-':>8} "
              f"{cell_range(sd, 2, 'x', '-'):>22} {fmt(ct[0], 2) if ct else '-':>8} {fmt(cpu[0], 2) if cpu else '-':>7} "
              f"{cell_range(ne, 1, sep='-'):>20} {cell_range(ni, 1, sep='-'):>20}")
            md.append(f"| {lead[0]} | {lead[1]} | {lead[2]} | {tool} | {evs} | {cell_range(pt, 2)} | "
                      f"{cell_range(sd, 2, '×')} | {cell_range(ct, 2)} | {cell_range(cpu, 2)} | "
                      f"{cell_range(ne, 1)} | {cell_range(ni, 1)} |")
    # strobe's own estimate of its overhead against the CPU time it added
    # over the instrumented build (the tool alone), within a repetition
    w("")
    w("strobe's overhead estimate (strobe report: events x cost per event calibrated at start-up) / the CPU time "
      "strobe added over the instrumented build")
    md.append("")
    md.append("| program | estimated overhead s | CPU time added s | estimate / measured |")
    md.append("|---|---|---|---|")
    for p in programs:
        def est(rep):
            r = ok.get((rep, p, "strobe"))
            return int(r["estimate_ns"]) / 1e9 if r and r.get("estimate_ns", "-") not in ("-", "") else None

        def added(rep):
            a, b = prog_s(rep, p, "strobe", "program_cpu_ns"), prog_s(rep, p, "instr", "program_cpu_ns")
            return a - b if a is not None and b is not None else None

        def ratio(rep):
            e, a = est(rep), added(rep)
            return e / a if e is not None and a else None

        e, a, r = per_rep(p, est), per_rep(p, added), per_rep(p, ratio)
        w(f"{p:<8} estimate {cell_range(e, 3, sep='-'):>20} s   added {cell_range(a, 3, sep='-'):>20} s   "
          f"est/measured {cell_range(r, 2, 'x', '-'):>20}")
        md.append(f"| {p} | {cell_range(e, 3)} | {cell_range(a, 3)} | {cell_range(r, 2, '×')} |")
    for r in failed:
        w(f"note: {r['program']} {r['config']} repetition {r['rep']} failed: {r['status']}")
    print("\n".join(out))
    with open(os.path.join(res, "real_table.md"), "w") as f:
        f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
