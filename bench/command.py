#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the user of `strobe run` waits for and is told (make bench).

For the workload of bench/run.sh (bench/calls.c: one empty function called
N times on 1 thread), sized to give traces of about 10 MB, 100 MB and 1 GB:

  exit wait   from the program's last instruction (it prints CLOCK_MONOTONIC
              as its final act) to `strobe run` returning: the runtime's
              exit work, the launcher reading the experiment back and
              printing its line. The anchor, in the same repetition, is the
              same wait for the program run without strobe.
  estimate    the overhead `strobe report` estimates (events recorded and
              dropped x the cost per event calibrated at start-up) against
              the slowdown measured in the same repetition (loop time under
              strobe minus loop time of the uninstrumented build): ratio.
  agreement   the largest difference, over every call path, between the
              inclusive time of the profile files and of the trace replay
              (`strobe report --source profile|trace --format json`).

Usage: bench/command.py BUILD_DIR   (STROBE_BENCH_REPS, default 3;
STROBE_BENCH_SIZES, default "10 100 1000" MB). Medians are printed; a
machine-readable copy goes to BUILD_DIR/bench/results/command.tsv.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BYTES_PER_CALL = 2.1  # 2 events of ~1.05 bytes each (measured on this workload)


def die(msg):
    print("bench/command.py: " + msg, file=sys.stderr)
    sys.exit(1)


def run_timed(cmd, env):
    """Runs cmd; returns (its stdout, ns from the program's last
    timestamp to cmd's return)."""
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    back = time.monotonic_ns()
    if p.returncode != 0:
        die("`%s` exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    end = [l for l in p.stdout.splitlines() if l.startswith("end_ns=")]
    if not end:
        die("`%s` printed no end_ns= line (an old build of bench/calls.c?)" % " ".join(cmd))
    return p.stdout, back - int(end[-1].split("=")[1])


def loop_ns(out):
    for f in out.split():
        if f.startswith("loop_ns="):
            return int(f.split("=")[1].split(",")[0])
    die("no loop_ns in: " + out)


def report_json(strobe, exp, source):
    p = subprocess.run([strobe, "report", exp, "--format", "json", "--source", source],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        die("strobe report --source %s: %s" % (source, p.stderr.strip()))
    return json.loads(p.stdout)


def incl_by_path(d):
    names = {r["id"]: r["name"] for r in d["regions"]}
    path, incl = {}, {}
    for n in d["calltree"]:
        if n["parent"] is None:
            path[n["id"]] = ""
            continue
        path[n["id"]] = path[n["parent"]] + "/" + names[n["region"]]
        incl[path[n["id"]]] = n["incl_ns"]
    return incl


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        die("usage: bench/command.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    strobe = os.path.join(build, "bin", "strobe")
    calls_bin = os.path.join(build, "bench", "strobe-bench-calls")
    plain_bin = os.path.join(build, "bench", "strobe-bench-calls-plain")
    for f in (strobe, calls_bin, plain_bin):
        if not os.path.exists(f):
            die(f + " missing: build first")
    reps = int(os.environ.get("STROBE_BENCH_REPS", "3"))
    sizes = [int(x) for x in os.environ.get("STROBE_BENCH_SIZES", "10 100 1000").split()]
    env = dict(os.environ, STROBE_TRACE_LIMIT="4G")
    rows = []
    with tempfile.TemporaryDirectory(prefix="strobe-bench-command-") as tmp:
        for mb in sizes:
            calls = int(mb * 1e6 / BYTES_PER_CALL)
            waits, anchors, ratios, agree, trace_mb = [], [], [], [], []
            for rep in range(reps):
                exp = os.path.join(tmp, "exp-%d-%d" % (mb, rep))
                out, wait = run_timed([strobe, "run", "-o", exp, "--", calls_bin, str(calls), "1"], env)
                pout, pwait = run_timed([plain_bin, str(calls), "1"], env)
                waits.append(wait)
                anchors.append(pwait)
                prof = report_json(strobe, exp, "profile")
                trace = report_json(strobe, exp, "trace")
                measured = loop_ns(out) - loop_ns(pout)
                ratios.append(prof["summary"]["overhead_ns"] / measured)
                trace_mb.append(prof["summary"]["trace_bytes"] / 1e6)
                a, b = incl_by_path(prof), incl_by_path(trace)
                worst = 0.0
                for k in a:
                    hi = max(a[k], b.get(k, 0))
                    if hi:
                        worst = max(worst, abs(a[k] - b.get(k, 0)) / hi)
                agree.append(worst)
                subprocess.run(["rm", "-rf", exp])
            med = statistics.median
            rows.append((mb, med(trace_mb), calls, med(waits) / 1e6, med(anchors) / 1e6, med(ratios),
                         max(agree) * 100))
    print("\nstrobe run, whole command (bench/command.py; medians of %d repetitions)" % reps)
    print("  %9s %12s %14s %14s %12s %12s" % ("trace", "events", "exit wait", "without strobe",
                                             "est/measured", "prof~trace"))
    lines = ["trace_mb\tevents\texit_wait_ms\tplain_wait_ms\testimate_ratio\tmax_incl_diff_pct"]
    for mb, tmb, calls, w, pw, r, ag in rows:
        print("  %6.0f MB %12d %11.1f ms %11.1f ms %11.2fx %10.3f %%" % (tmb, 2 * calls, w, pw, r, ag))
        lines.append("%.1f\t%d\t%.2f\t%.2f\t%.3f\t%.4f" % (tmb, 2 * calls, w, pw, r, ag))
    res = os.path.join(build, "bench", "results")
    os.makedirs(res, exist_ok=True)
    with open(os.path.join(res, "command.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
