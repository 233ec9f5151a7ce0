#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns the runs recorded by bench/run.sh into the `make bench` table.

Usage: table.py RESULTS_DIR   (reads raw.tsv, info.tsv, export.tsv there)

Prints the human table on stdout and writes RESULTS_DIR/latest.txt, the
same numbers as tab-separated lines:
    info    KEY     VALUE
    METRIC  CONFIG  THREADS  MEDIAN  MIN  MAX  N
    goal    NAME    TARGET   MEASURED  RESULT
with METRIC one of ns_per_event, ns_per_call (bare loop only), lttng_ratio
(fastest LTTng-UST configuration of the same repetition / this one),
uftrace_ratio (uftrace of the same repetition / this one),
bytes_per_event, kernel_ns_per_event and minor_faults_per_1000_events
(during the loop, from getrusage), cpu_share (the threads' CPU time over
their loop time: below 1, they waited for a CPU), cpu_ns_per_event (as
ns_per_event, with CPU times instead of loop times), wall_s; MIN/MAX/N are
over the repetitions.

It also writes RESULTS_DIR/table.md, the main table in Markdown for
docs/performance.md.

Every number comes from the files of this run: nothing is hard-coded but
the goals. A ratio is computed inside each repetition (both sides measured
minutes apart at most, under the same machine load), then the median of the
per-repetition ratios is reported.
"""
import os
import statistics
import sys

LABELS = {
    "plain": "bare loop, no -finstrument-functions",
    "null": "-finstrument-functions, empty hooks",
    "strobe_trace": "strobe trace      (STROBE_PROFILE=0)",
    "strobe_profile": "strobe profile    (STROBE_TRACE=0)",
    "strobe_both": "strobe trace+profile",
    "strobe_trace_mono": "strobe trace,   STROBE_CLOCK=monotonic",
    "strobe_profile_mono": "strobe profile, STROBE_CLOCK=monotonic",
    "lttng_tp": "LTTng-UST, own tracepoint provider",
    "lttng_fast": "LTTng-UST, liblttng-ust-cyg-profile-fast",
    "lttng_verbose": "LTTng-UST, liblttng-ust-cyg-profile",
    "otf2": "OTF2 EvtWriter, written directly",
    "uftrace": "uftrace record",
}
ORDER = list(LABELS)
LTTNG = ["lttng_tp", "lttng_fast", "lttng_verbose"]
THREADS = ["1", "2"]


def read_tsv(path):
    with open(path) as f:
        lines = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    head = lines[0]
    return [dict(zip(head, row)) for row in lines[1:]]


def read_info(path):
    """KEY<TAB>VALUE lines -> dict"""
    info = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("\t")
            info[k] = v
    return info


def fmt(v, digits=1):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.{digits}f}"


def cell_range(s, digits=1, unit="", sep="–"):
    """median[unit] [min SEP max] of a summary(), or -"""
    return f"{fmt(s[0], digits)}{unit} [{fmt(s[1], digits)}{sep}{fmt(s[2], digits)}]" if s else "-"


def open_results(script, info_name, raw_name):
    """RESULTS_DIR from the command line, its info file (dict) and its
    raw runs (list of dicts)"""
    if len(sys.argv) != 2:
        sys.exit(f"usage: {script} RESULTS_DIR")
    res = sys.argv[1]
    return res, read_info(os.path.join(res, info_name)), read_tsv(os.path.join(res, raw_name))


def summary(values):
    """(median, min, max, n) of a list, or None when it is empty."""
    if not values:
        return None
    return (statistics.median(values), min(values), max(values), len(values))


def main():
    res, info, runs = open_results("table.py", "info.tsv", "raw.tsv")
    export = read_tsv(os.path.join(res, "export.tsv"))[0]

    ok = {}  # (rep, config, threads) -> run
    failures = {}
    for r in runs:
        key = (r["rep"], r["config"], r["threads"])
        if r["status"] == "ok":
            r["loops"] = [int(x) for x in r["loop_ns"].split(",")]
            ok[key] = r
        else:
            failures.setdefault(r["config"], []).append(r["status"])
    reps = sorted({r["rep"] for r in runs}, key=int)

    # Per-repetition values.
    ns_ev = {}  # (config, threads) -> {rep: ns/event}
    per_call = {}
    bytes_ev = {}
    wall = {}
    sys_ev = {}  # kernel ns per event during the loop
    share = {}  # (config, threads) -> [CPU time / loop time] per repetition
    cpu_ev = {}  # ns/event from CPU times
    faults = {}  # minor page faults per 1000 events during the loop
    discarded = {}
    for (rep, cfg, th), r in ok.items():
        calls = int(r["calls_per_thread"])
        wall.setdefault((cfg, th), []).append(int(r["wall_ns"]) / 1e9)
        cpus = [int(x) for x in r["cpu_ns"].split(",")] if r.get("cpu_ns", "-") not in ("-", "") else None
        if cpus:
            share.setdefault((cfg, th), []).append(sum(cpus) / sum(r["loops"]))
        if cfg == "plain":
            per_call.setdefault(("plain", th), {})[rep] = statistics.mean(r["loops"]) / calls
            continue
        base = ok.get((rep, "plain", th))
        if base is None or base["calls_per_thread"] != r["calls_per_thread"]:
            continue
        delta = statistics.mean(r["loops"]) - statistics.mean(base["loops"])
        ns_ev.setdefault((cfg, th), {})[rep] = delta / (2 * calls)
        if cpus and base.get("cpu_ns", "-") not in ("-", ""):
            base_cpu = statistics.mean(int(x) for x in base["cpu_ns"].split(","))
            cpu_ev.setdefault((cfg, th), []).append((statistics.mean(cpus) - base_cpu) / (2 * calls))
        if r.get("sys_us", "-") not in ("-", ""):
            sys_us = [int(x) for x in r["sys_us"].split(",")]
            sys_ev.setdefault((cfg, th), []).append(statistics.mean(sys_us) * 1000 / (2 * calls))
            flt = [int(x) for x in r["minflt"].split(",")]
            faults.setdefault((cfg, th), []).append(statistics.mean(flt) * 1000 / (2 * calls))
        events = 2 * calls * len(r["loops"])
        lost = int(r["discarded"]) if r["discarded"] not in ("-", "") else 0
        if lost:
            discarded.setdefault((cfg, th), []).append(lost)
        # strobe: records counted in the trace; LTTng: sent minus discarded.
        recorded = int(r["recorded"]) if r["recorded"] not in ("-", "") else events - lost
        if r["bytes"] not in ("-", "") and recorded > 0:
            bytes_ev.setdefault((cfg, th), []).append(int(r["bytes"]) / recorded)

    def anchor_ratios(anchors):
        """(config, threads) -> [fastest of anchors / config] per repetition"""
        ratios = {}
        for th in THREADS:
            for rep in reps:
                lt = [ns_ev[(c, th)][rep] for c in anchors if rep in ns_ev.get((c, th), {})]
                if not lt:
                    continue
                best = min(lt)
                for cfg in ORDER:
                    v = ns_ev.get((cfg, th), {}).get(rep)
                    if v is not None and v > 0:
                        ratios.setdefault((cfg, th), []).append(best / v)
        return ratios

    ratio = anchor_ratios(LTTNG)
    uf_ratio = anchor_ratios(["uftrace"])

    def stat(table, cfg, th):
        v = table.get((cfg, th))
        if isinstance(v, dict):
            v = list(v.values())
        return summary(v or [])

    out = []
    w = out.append
    calls = int(info["calls"])
    w("strobe bench: cost of one timestamped function enter/exit event")
    w(f"date {info['date']}; CPU {info['cpu']}, nproc {info['nproc']}, clocksource {info['clocksource']}, "
      f"kernel {info['kernel']}")
    w(f"compiler {info['compiler']}; LTTng-UST {info['lttng_version']}, OTF2 {info['otf2_version']}, "
      f"uftrace {info['uftrace_version']}; strobe clock: {info.get('strobe_clock', '-')}")
    if info.get("strobe_env", "-").strip() not in ("", "-"):
        w(f"strobe settings from the environment: {info['strobe_env'].strip()}")
    w(f"workload: empty noinline function called {calls} times per run = {2 * calls} events; "
      f"1 thread pinned to CPU {info['cpu_pin']}, or 2 threads x {calls // 2} calls (unpinned)")
    w(f"{info['reps']} interleaved repetitions; median [min-max] over repetitions; "
      "ns/event = (loop time - bare loop time of the same repetition) / events per thread")
    w("LTTng/x = fastest LTTng-UST configuration of the same repetition / this configuration (median); "
      "uftrace/x likewise")
    w(f"machine during the run: load average {info.get('load', '-')}, CPUs busy {info.get('busy_pct', '-')} %, "
      f"stolen by the hypervisor {info.get('steal_pct', '-')} %; threads per core {info.get('threads_per_core', '-')}")
    w("")
    hdr = (f"{'configuration':<42} {'1 thread: ns/event':>18} {'[min-max]':>13} {'LTTng/x':>7} {'uftr/x':>6} "
           f"{'CPU%':>4}  {'2 threads: ns/event':>19} {'[min-max]':>13} {'LTTng/x':>7} {'uftr/x':>6} {'CPU%':>4}  "
           f"{'B/event':>7} {'kernel':>6} {'wall s':>6}")
    w(hdr)
    w("-" * len(hdr))
    notes = []
    md = ["| configuration | 1 thread ns/event | LTTng/x | uftrace/x | CPU % | 2 threads ns/event | LTTng/x "
          "| uftrace/x | CPU % | B/event | kernel | wall s |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for cfg in ORDER:
        status = info.get(f"status.{cfg}", "ok")
        label = LABELS[cfg]
        if status != "ok":
            w(f"{label:<42} n/a: {status}")
            md.append(f"| {' '.join(label.split())} | n/a: {status} |||||||||||")
            continue
        cells = []
        md_cells = []
        for th in THREADS:
            s = stat(per_call if cfg == "plain" else ns_ev, cfg, th)
            # no ratio for the bare loop (ns per call) nor for the empty
            # hooks (a near-zero cost: the ratio would be noise)
            anchored = cfg not in ("plain", "null")
            rs = stat(ratio, cfg, th) if anchored else None
            us = stat(uf_ratio, cfg, th) if anchored else None
            if s is None:
                cells.append(f"{'failed':>18} {'':>13} {'':>7} {'':>6} {'':>4}")
                md_cells.append("failed | | |")
                continue
            sh = stat(share, cfg, th)
            shtext = f"{100 * sh[0]:.0f}" if sh else "-"
            digits = 2 if cfg in ("plain", "null") else 1
            value = fmt(s[0], digits) + (" /call" if cfg == "plain" else "")
            rtext = (fmt(rs[0], 2) + "x") if rs else "-"
            utext = (fmt(us[0], 2) + "x") if us else "-"
            cells.append(f"{value:>18} {'[' + fmt(s[1], digits) + '-' + fmt(s[2], digits) + ']':>13} "
                         f"{rtext:>7} {utext:>6} {shtext:>4}")
            md_cells.append(f"{value} [{fmt(s[1], digits)}–{fmt(s[2], digits)}] | {rtext.replace('x', '×')} | "
                            f"{utext.replace('x', '×')} | {shtext}")
            if sh and sh[0] < 0.9 and cfg != "plain":
                c = stat(cpu_ev, cfg, th)
                notes.append(f"{cfg}, {th} thread(s): the threads had a CPU for {100 * sh[0]:.0f} % of their loop "
                             f"time (median): they waited for one, so ns/event is inflated; by CPU time "
                             f"{fmt(c[0]) if c else '-'} ns/event")
        b = stat(bytes_ev, cfg, "1")
        k = stat(sys_ev, cfg, "1")
        wl = stat(wall, cfg, "1")
        tail = [fmt(b[0], 2) if b else "-", fmt(k[0]) if k else "-", fmt(wl[0], 2) if wl else "-"]
        w(f"{label:<42} {cells[0]}  {' ' + cells[1]} {tail[0]:>8} {tail[1]:>6} {tail[2]:>6}")
        md.append(f"| {' '.join(label.split())} | {md_cells[0]} | {md_cells[1]} | {' | '.join(tail)} |")
        if cfg in failures:
            notes.append(f"{cfg}: {len(failures[cfg])} failed run(s), first: {failures[cfg][0]}")
        for th in THREADS:
            if (cfg, th) in discarded:
                d = discarded[(cfg, th)]
                notes.append(f"{cfg}, {th} thread(s): events lost in {len(d)} run(s), up to {max(d)} "
                             f"({100.0 * max(d) / (2 * calls):.2f}%); B/event counts recorded events only")

    w("")
    if export["status"] == "ok":
        b = int(export["bytes"])
        w(f"strobe trace (1 thread, last repetition) exported with `strobe export --format otf2`: "
          f"{b} bytes of OTF2 .evt = {b / (2 * calls):.2f} B/event of the workload "
          f"({export['events_in_defs']} events in the OTF2 definitions), export took "
          f"{int(export['export_ns']) / 1e9:.1f} s")
    else:
        w(f"strobe trace -> OTF2 export: n/a: {export['status']}")
    w("B/event: 1-thread run; strobe t*.evt, OTF2 *.evt, LTTng CTF stream files (no metadata, no index), "
      "uftrace <tid>.dat.")
    w("CPU%: the threads' CPU time over their loop time (median): below 100, they waited for a CPU.")
    w("kernel: ns/event of the 1-thread loop spent in the kernel (getrusage, tick-based accounting: approximate). "
      "wall s: whole process incl. start-up and exit, 1 thread.")
    for n in notes:
        w("note: " + n)

    # Goals.
    goals = []

    def goal(name, target_text, value, unit, passed):
        if value is None:
            goals.append((name, target_text, "n/a", "N/A"))
        else:
            goals.append((name, target_text, f"{fmt(value, 2)}{unit}", "PASS" if passed(value) else "MISS"))

    for th in THREADS:
        s = stat(ns_ev, "strobe_trace", th)
        goal(f"strobe trace mode, {th} thread(s), ns/event", "<= 15", s and s[0], " ns", lambda v: v <= 15)
    for th in THREADS:
        s = stat(ns_ev, "strobe_profile", th)
        goal(f"strobe profile mode, {th} thread(s), ns/event", "<= 25", s and s[0], " ns", lambda v: v <= 25)
    for th in THREADS:
        s = stat(ratio, "strobe_trace", th)
        goal(f"strobe trace mode vs fastest LTTng-UST, {th} thread(s)", ">= 4x", s and s[0], "x",
             lambda v: v >= 4)
    for th in THREADS:
        s = stat(bytes_ev, "strobe_trace", th)
        goal(f"strobe trace size, {th} thread(s), bytes/event", "<= 3", s and s[0], " B", lambda v: v <= 3)
    w("")
    w(f"{'goal':<52} {'target':>8} {'measured':>10}  result")
    for name, target, measured, result in goals:
        w(f"{name:<52} {target:>8} {measured:>10}  {result}")
    print("\n".join(out))
    # The same runs by CPU time (see the CPU% note above).
    md += ["", "| configuration | 1 thread ns/event by CPU time | CPU % | 2 threads ns/event by CPU time | CPU % |",
           "|---|---|---|---|---|"]
    for cfg in ORDER:
        if info.get(f"status.{cfg}", "ok") != "ok" or cfg == "plain":
            continue
        row = []
        for th in THREADS:
            c, sh = stat(cpu_ev, cfg, th), stat(share, cfg, th)
            row.append(f"{cell_range(c, 2 if cfg == 'null' else 1)} | {f'{100 * sh[0]:.0f}' if sh else '-'}")
        md.append(f"| {' '.join(LABELS[cfg].split())} | {row[0]} | {row[1]} |")
    with open(os.path.join(res, "table.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    with open(os.path.join(res, "latest.txt"), "w") as f:
        f.write("# strobe bench results (bench/run.sh); format: see bench/table.py\n")
        for k, v in info.items():
            f.write(f"info\t{k}\t{v}\n")
        for metric, table in (("ns_per_call", per_call), ("ns_per_event", ns_ev), ("lttng_ratio", ratio),
                              ("uftrace_ratio", uf_ratio),
                              ("bytes_per_event", bytes_ev), ("kernel_ns_per_event", sys_ev),
                              ("minor_faults_per_1000_events", faults), ("cpu_share", share),
                              ("cpu_ns_per_event", cpu_ev), ("wall_s", wall)):
            for cfg in ORDER:
                for th in THREADS:
                    s = stat(table, cfg, th)
                    if s:
                        f.write(f"{metric}\t{cfg}\t{th}\t{s[0]:.4g}\t{s[1]:.4g}\t{s[2]:.4g}\t{s[3]}\n")
        if export["status"] == "ok":
            f.write(f"bytes_per_event\tstrobe_otf2_export\t1\t{int(export['bytes']) / (2 * calls):.4g}"
                    f"\t-\t-\t1\n")
        for name, target, measured, result in goals:
            f.write(f"goal\t{name}\t{target}\t{measured}\t{result}\n")


if __name__ == "__main__":
    main()
