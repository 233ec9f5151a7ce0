#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The influx store's part of `make bench` (docs/performance.md, "InfluxDB
# store"): values per second per core of the line-protocol encoder alone
# and of the store into a real InfluxDB 1.x (Debian package influxdb).
#
#   bench/influx/run.sh BUILD_DIR
#
# Method:
#  * influxd is started here, in a scratch directory under the build tree's
#    bench/results (a disk, not /tmp), on a free loopback port, with the
#    RPC service on another free port and everything else off; it is killed
#    when the script ends by any path. One database, created through /query.
#  * encode: strobe-bench-influx encode 100 100 100 (1 M values: 100 sets
#    of 100 u64 metrics, 100 rounds): the encoder's CPU time and, in the
#    same process and round, the anchor's (one snprintf per value, no
#    escaping); values/s per core of both and their ratio.
#  * store: strobe-bench-influx store (the same 1 M values through an
#    in-process daemon with an influx store, batch_values 10000, plain
#    and gzip): values/s per core of the strobed side (the CPU time of its
#    process: encoding, queueing on disk, the sender thread with libcurl)
#    and end to end (wall time until InfluxDB answered every batch), and
#    influxd's CPU over the same run (from /proc/PID/stat).
#  * REPS repetitions (STROBE_BENCH_INFLUX_REPS, default 5), the
#    configurations' order rotating; medians [min-max], the ratios formed
#    within a repetition before the median.
set -euo pipefail
build=$(cd "$1" && pwd)
bin=$build/bench/strobe-bench-influx
reps=${STROBE_BENCH_INFLUX_REPS:-5}
if [ ! -x /usr/bin/influxd ]; then
    echo "bench/influx: /usr/bin/influxd not found: install the Debian package influxdb" >&2
    exit 1
fi
work=$build/bench/results/influx
rm -rf "$work"
mkdir -p "$work"
read -r port rpc < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
cat > "$work/influxd.conf" <<CONF
reporting-disabled = true
bind-address = "127.0.0.1:$rpc"
[meta]
  dir = "$work/meta"
  logging-enabled = false
[data]
  dir = "$work/data"
  wal-dir = "$work/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[subscriber]
  enabled = false
[continuous_queries]
  enabled = false
[http]
  bind-address = "127.0.0.1:$port"
  log-enabled = false
  pprof-enabled = false
[logging]
  level = "warn"
  suppress-logo = true
CONF
/usr/bin/influxd -config "$work/influxd.conf" >"$work/influxd.log" 2>&1 &
influxd=$!
trap 'kill $influxd 2>/dev/null; wait $influxd 2>/dev/null || true' EXIT
for _ in $(seq 300); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/ping" && break
    sleep 0.1
done
curl -sf -o /dev/null -XPOST "http://127.0.0.1:$port/query" --data-urlencode 'q=CREATE DATABASE bench'

influxd_cpu() { awk '{print $14 + $15}' "/proc/$influxd/stat"; }
hz=$(getconf CLK_TCK)
out=$work/runs.txt
: >"$out"
configs=(encode plain gzip)
for ((r = 0; r < reps; r++)); do
    for ((k = 0; k < ${#configs[@]}; k++)); do
        c=${configs[$(((k + r) % ${#configs[@]}))]}
        if [ "$c" = encode ]; then
            echo "rep=$r $("$bin" encode 100 100 100)" >>"$out"
            continue
        fi
        gz=false
        [ "$c" = gzip ] && gz=true
        curl -sf -o /dev/null -XPOST "http://127.0.0.1:$port/query" --data-urlencode 'q=DROP SERIES FROM bench'
        t0=$(influxd_cpu)
        line=$("$bin" store "http://127.0.0.1:$port" bench "$work/queue-$c" $gz 100 100 100)
        t1=$(influxd_cpu)
        echo "rep=$r $c $line influxd_ns=$(((t1 - t0) * 1000000000 / hz))" >>"$out"
    done
done
python3 - "$out" <<'PY'
import re, statistics, sys
runs = [dict(re.findall(r"(\w+)=(\d+)", l)) | {"kind": l.split()[1]} for l in open(sys.argv[1])]
def med(xs):
    return f"{statistics.median(xs):.3g} [{min(xs):.3g}-{max(xs):.3g}]"
enc = [r for r in runs if r["kind"] == "encode"]
v = lambda r: int(r["values"])
print("InfluxDB store (bench/influx/run.sh), 1 M values per run (100 sets x 100 u64 metrics x 100 rounds)")
print(f"  encoder alone      {med([v(r) / int(r['encoder_ns']) * 1e3 for r in enc])} M values/s per core")
print(f"  anchor (snprintf)  {med([v(r) / int(r['naive_ns']) * 1e3 for r in enc])} M values/s per core")
print(f"  encoder / anchor   {med([int(r['naive_ns']) / int(r['encoder_ns']) for r in enc])} x faster")
print(f"  line protocol      {int(enc[0]['bytes']) / v(enc[0]):.1f} bytes per value, "
      f"{int(enc[0]['zbytes']) / v(enc[0]):.1f} with zlib level 1 ({int(enc[0]['bytes']) / int(enc[0]['zbytes']):.1f}x less)")
for kind in ("plain", "gzip"):
    st = [r for r in runs if r["kind"] == kind]
    if not st:
        continue
    print(f"  store, {kind:5}  strobed side {med([v(r) / int(r['cpu_ns']) * 1e3 for r in st])} M values/s per core,"
          f" end to end {med([v(r) / int(r['wall_ns']) * 1e3 for r in st])} M values/s,"
          f" influxd {med([v(r) / max(int(r['influxd_ns']), 1) * 1e3 for r in st])} M values/s per core")
    # the store's CPU per value against the encoder's, same repetition
    ratio = [int(s["cpu_ns"]) / int(e["encoder_ns"]) for s in st for e in enc if s["rep"] == e["rep"]]
    print(f"  store, {kind:5}  strobed-side CPU / encoder CPU {med(ratio)}")
PY
