#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Table of bench/monitor/run.sh: reads monitor_raw.txt (lines of
"rep=R <mode> <config> key=value ..."), prints medians [min-max] over the
repetitions, ratios and differences formed within each repetition, and the
goals of docs/performance.md ("Live monitoring") with PASS/MISS."""
import statistics
import sys
from collections import defaultdict

rows = defaultdict(list)  # (mode, config) -> [{key: value}] in repetition order
info = {}
for line in open(sys.argv[1]).read().splitlines():
    f = line.split()
    if not f:
        continue
    if not f[0].startswith("rep="):
        info[f[0]] = " ".join(f[1:]).replace("_", " ")
        continue
    kv = dict(x.split("=", 1) for x in f if "=" in x)
    config = f[2] if len(f) > 2 and "=" not in f[2] else ""
    rows[(f[1], config)].append({k: float(v) for k, v in kv.items()})


def med(values):
    return statistics.median(values), min(values), max(values)


def cell(key, mode, config, fmt="%.2f"):
    m = med([r[key] for r in rows[(mode, config)]])
    return (fmt + " [" + fmt + "-" + fmt + "]") % m, m[0]


goals = []
print("Live monitoring (strobed): CPU per sample (user + kernel), median [min-max] over %d repetitions"
      % len(rows[("meminfo", "strobe")]))
print("\nSampling, us per sample of one set (floor = pread of the file; naive = fopen/fscanf/fclose)")
print("%-8s %8s  %-20s %-20s %-20s %-12s %-20s %-20s" % ("set", "metrics", "floor", "naive", "strobe",
                                                          "user/sys", "strobe/naive", "strobe/floor"))
for name in ("meminfo", "vmstat"):
    if not rows[(name, "strobe")]:
        continue
    fl, _ = cell("us", name, "floor")
    nv, _ = cell("us", name, "naive")
    st, st_med = cell("us", name, "strobe")
    user = statistics.median(r["user_us"] for r in rows[(name, "strobe")])
    sys_ = statistics.median(r["sys_us"] for r in rows[(name, "strobe")])
    rn, _ = cell("strobe/naive", name, "ratios", "%.3f")
    rf, _ = cell("strobe/floor", name, "ratios", "%.3f")
    metrics = int(rows[(name, "ratios")][0]["metrics"])
    floor_med = statistics.median(r["us"] for r in rows[(name, "floor")])
    print("%-8s %8d  %-20s %-20s %-20s %-12s %-20s %-20s" % (name, metrics, fl, nv, st,
                                                              "%.1f/%.1f" % (user, sys_), rn, rf))
    goals.append(("CPU per sample, %s set" % name, "<= 10 us", "%.2f us (floor %.2f)" % (st_med, floor_med),
                  st_med <= 10.0))

if rows[("xform", "base")]:
    print("\nTransforms on a synthetic set of 43 metrics, us per sample")
    print("%-28s %-20s" % ("configuration", "us per sample"))
    for config, label in (("base", "sampler alone"), ("rate", "+ rate"), ("chain", "+ rate -> window avg n=5")):
        print("%-28s %-20s" % (label, cell("us", "xform", config)[0]))
    print("%-28s %-20s" % ("added by rate", cell("rate-base_us", "xform", "ratios")[0]))
    print("%-28s %-20s" % ("added by window after rate", cell("window-rate_us", "xform", "ratios")[0]))
    print("%-28s %-20s" % ("added by the chain", cell("chain-base_us", "xform", "ratios")[0]))
    for key, label in (("rate-base_us", "rate"), ("window-rate_us", "window avg n=5")):
        m = statistics.median(r[key] for r in rows[("xform", "ratios")])
        goals.append(("added CPU per set, %s transform" % label, "<= 1 us", "%.2f us" % m, m <= 1.0))

for rate in (100, 10000):
    mode = "store%d" % rate
    if not rows[(mode, "flush")]:
        continue
    print("\ncsv store at %d rows/s (synthetic set of 43 metrics), us per row, CPU / wall" % rate)
    for config, label in (("nostore", "sampler alone"), ("buffered", "+ csv, written at 64 KiB"),
                          ("flush", "+ csv, flushed every second"), ("fsync", "+ csv, flushed + fsync")):
        print("%-30s %-20s %-20s" % (label, cell("us", mode, config)[0], cell("wall_us", mode, config)[0]))
    print("%-30s %s" % ("flush: CPU us per second", cell("flush-buffered_us_per_s", mode, "ratios", "%.0f")[0]))
    print("%-30s %s" % ("flush+fsync: CPU us per second", cell("fsync-buffered_us_per_s", mode, "ratios", "%.0f")[0]))
    print("%-30s %s" % ("flush+fsync: wall us per second",
                        cell("fsync-buffered_wall_us_per_s", mode, "ratios", "%.0f")[0]))

if rows[("mac", "hmac")]:
    r0 = rows[("mac", "ratios")][0]
    print("\nMessage authentication: an UPDATE reply of %d new values (%d bytes, %.2f per value),"
          " us per message and %% of a core at 1 M values/s" % (r0["values"], r0["bytes"], r0["bytes_per_value"]))
    for config, label in (("serve", "building the reply (anchor)"), ("hmac", "HMAC-SHA256 (strobed)"),
                          ("gcm128", "AES-128-GCM (TLS record)"), ("gcm256", "AES-256-GCM (TLS record)")):
        print("%-30s %-24s %s" % (label, cell("us", "mac", config)[0],
                                  cell(config + "_core_pct", "mac", "ratios", "%.2f")[0]))
    for key in ("hmac/gcm128", "hmac/gcm256", "hmac/serve"):
        print("%-30s %s" % (key, cell(key, "mac", "ratios", "%.3f")[0]))

agg = rows[("agg", "")]
if agg:
    r0 = agg[0]
    print("\nAggregator ingest on loopback: %d sets x %d metrics, %d runs" % (r0["sets"], r0["metrics"], len(agg)))
    per_s = [r["updates"] * r["metrics"] / (r["elapsed_us"] / 1e6) for r in agg]
    per_cpu = [r["updates"] * r["metrics"] / (r["agg_cpu_us"] / 1e6) if r["agg_cpu_us"] else float("inf")
               for r in agg]
    busy = [r["agg_cpu_us"] / r["elapsed_us"] for r in agg]
    prod = [r["producers_cpu_us"] / r["elapsed_us"] for r in agg]
    print("%-34s %s" % ("metric values/s (wall)", "%.3g [%.3g-%.3g]" % med(per_s)))
    print("%-34s %s" % ("metric values per aggregator CPU-s", "%.3g [%.3g-%.3g]" % med(per_cpu)))
    print("%-34s %s" % ("aggregator CPU (of one core)", "%.1f %% [%.1f-%.1f]" % tuple(100 * x for x in med(busy))))
    print("%-34s %s" % ("producers' CPU, all K together", "%.1f %% [%.1f-%.1f]" % tuple(100 * x for x in med(prod))))
    m = statistics.median(per_cpu)
    goals.append(("aggregator ingest, values per CPU-second", ">= 2e6", "%.3g" % m, m >= 2e6))

scale = sorted((int(config), r[0]) for (mode, config), r in rows.items() if mode == "aggscale")
if scale:
    print("\nAggregator scale: sets of %d metrics (%d bytes each) from %d producers, every second"
          % (scale[0][1]["metrics"], scale[0][1]["setbytes"], scale[0][1]["producers"]))
    print("%-7s %-10s %-10s %-18s %-18s %-18s %-10s %-9s %-9s" % (
        "sets", "sets MB", "agg CPU", "agg RSS (x sets)", "agg peak (x)", "producer RSS (x)",
        "reconnect", "agg stop", "prod stop"))
    for total, r in scale:
        mb = r["sets"] * r["setbytes"] / 1e6
        pmb = mb / r["producers"]
        agg_x = r["agg_rss_kb"] * 1024 / 1e6 / mb
        prod_x = r["prod_rss_kb"] * 1024 / 1e6 / pmb
        print("%-7d %-10.1f %-10s %-18s %-18s %-18s %-10d %-9s %-9s" % (
            total, mb, "%.2f %%" % (100 * r["agg_cpu_us"] / r["elapsed_us"]),
            "%.0f MB (%.2f)" % (r["agg_rss_kb"] * 1024 / 1e6, agg_x),
            "%.0f MB (%.2f)" % (r["agg_hwm_kb"] * 1024 / 1e6, r["agg_hwm_kb"] * 1024 / 1e6 / mb),
            "%.0f MB (%.2f)" % (r["prod_rss_kb"] * 1024 / 1e6, prod_x),
            r["reconnects"], "%.3f s" % (r["agg_stop_us"] / 1e6), "%.3f s" % (r["prod_stop_us"] / 1e6)))
    total, r = scale[-1]
    mb = r["sets"] * r["setbytes"] / 1e6
    goals.append(("%d sets held without a reconnect" % total, "0", "%d" % r["reconnects"], r["reconnects"] == 0))
    agg_x = r["agg_rss_kb"] * 1024 / 1e6 / mb
    goals.append(("aggregator RSS / sets' bytes, %d sets" % total, "<= 2", "%.2f" % agg_x, agg_x <= 2))
    stop = max(r["agg_stop_us"], r["prod_stop_us"]) / 1e6
    goals.append(("stop after SIGTERM, %d sets" % total, "<= 2 s", "%.3f s" % stop, stop <= 2))

print("\n%-44s %-9s %-24s %s" % ("goal", "target", "measured", "result"))
for name, target, shown, ok in goals:
    print("%-44s %-9s %-24s %s" % (name, target, shown, "PASS" if ok else "MISS"))
print("\n" + "; ".join("%s: %s" % kv for kv in info.items()))
