#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: values per second per core that strobed's remote_write
# store sends into VictoriaMetrics and into Prometheus 2.42 (its
# remote-write receiver), both started here on loopback in a scratch
# directory, against two anchors in the same process and run: the updates
# alone, and the /metrics text of the same values (one scrape per round).
# bench/monitor/remote_write_bench.c says what each configuration measures.
# Goal (issue 21): at least 1 M values/s into remote-write.
#
#   bench/monitor/remote_write.sh BUILD_DIR
#
# Environment: STROBE_BENCH_RW_SETS (default 100), STROBE_BENCH_RW_METRICS
# (default 100), STROBE_BENCH_RW_ROUNDS (default 100: 1 M values per
# configuration), STROBE_BENCH_REPS (default 3), STROBE_BENCH_RW_BATCH
# (batch_values, default 5000).
BENCH_NAME=bench-remote-write
. "$(dirname "$0")/../lib.sh"

[ $# -eq 1 ] || die "usage: bench/monitor/remote_write.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
PROG=$BUILD/bench/strobe-bench-remote-write
[ -x "$PROG" ] || die "$PROG missing: build first (cmake --build $BUILD), with STROBE_WITH_REMOTE_WRITE=ON"
for b in victoria-metrics:victoria-metrics prometheus:prometheus; do
    command -v "${b%%:*}" >/dev/null || die "${b%%:*} missing (Debian package ${b#*:}; make deps installs it)"
done
SETS=${STROBE_BENCH_RW_SETS:-100}
METRICS=${STROBE_BENCH_RW_METRICS:-100}
ROUNDS=${STROBE_BENCH_RW_ROUNDS:-100}
REPS=${STROBE_BENCH_REPS:-3}
case "$SETS$METRICS$ROUNDS$REPS" in *[!0-9]*) die "STROBE_BENCH_RW_* and STROBE_BENCH_REPS must be numbers" ;; esac
SCRATCH=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_ready() { # URL WHAT
    for _ in $(seq 300); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$1")" = 200 ] && return 0
        sleep 0.1
    done
    die "$2 did not answer at $1"
}
VM_PORT=$(free_port)
victoria-metrics -storageDataPath="$SCRATCH/vm" -httpListenAddr="127.0.0.1:$VM_PORT" >"$SCRATCH/vm.log" 2>&1 &
pids+=($!)
VM_PID=$!
PROM_PORT=$(free_port)
printf 'global:\n  scrape_interval: 1m\n' >"$SCRATCH/prometheus.yml"
prometheus --web.enable-remote-write-receiver --config.file="$SCRATCH/prometheus.yml" \
    --web.listen-address="127.0.0.1:$PROM_PORT" --storage.tsdb.path="$SCRATCH/prom" >"$SCRATCH/prom.log" 2>&1 &
pids+=($!)
PROM_PID=$!
wait_ready "http://127.0.0.1:$VM_PORT/health" victoria-metrics
wait_ready "http://127.0.0.1:$PROM_PORT/-/ready" prometheus

for rep in $(seq 0 $((REPS - 1))); do
    "$PROG" "$SETS" "$METRICS" "$ROUNDS" "$SCRATCH/q" "$rep" "http://127.0.0.1:$VM_PORT/api/v1/write" "$VM_PID" \
        "http://127.0.0.1:$PROM_PORT/api/v1/write" "$PROM_PID"
done >"$SCRATCH/raw.txt"

# everything arrived: every series, and every sample of metric m0
query() { # PORT PROMQL: the value of a one-element result, 0 if empty
    curl -gs "http://127.0.0.1:$1/api/v1/query" --data-urlencode "query=$2" |
        python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)'
}
for rep in $(seq 0 $((REPS - 1))); do
    for q in "vm $VM_PORT" "prom $PROM_PORT"; do
        set -- $q
        sel="instance=~\"bench/$1$rep/.*\""
        got=$(query "$2" "count({__name__=~\"strobe_bench_m.*\",$sel})")
        [ "$got" = $((SETS * METRICS)) ] || die "$1 (run $rep): $got series arrived, expected $((SETS * METRICS))"
        if [ "$1" = vm ]; then # (its queries leave out the last 30 s: -search.latencyOffset)
            got=$(curl -gs "http://127.0.0.1:$2/api/v1/export" --data-urlencode "match[]=strobe_bench_m0{$sel}" |
                python3 -c 'import json, sys; print(sum(len(json.loads(l)["values"]) for l in sys.stdin))')
        else
            got=$(query "$2" "sum(count_over_time(strobe_bench_m0{$sel}[1h]))")
        fi
        [ "$got" = $((SETS * ROUNDS)) ] || die "$1 (run $rep): $got samples of m0 arrived, expected $((SETS * ROUNDS))"
    done
done

python3 - "$SCRATCH/raw.txt" "$SETS" "$METRICS" "$ROUNDS" "$REPS" "$(strobe_bench_cpu_model)" "$(nproc)" <<'PY'
import statistics, sys
raw, sets, metrics, rounds, reps, cpu, ncpu = sys.argv[1:]
rows = {}
for line in open(raw):
    name, *kv = line.split()
    d = {k: float(v) for k, v in (x.split("=") for x in kv)}
    rows.setdefault(name, []).append(d)
med = lambda name, key: statistics.median(r[key] for r in rows[name])
values = med("nostore", "values")
base = med("nostore", "thread_ns")
print(f"remote_write store: {int(sets)} sets x {int(metrics)} u64 metrics x {int(rounds)} rounds = {int(values)} values "
      f"per configuration, medians of {reps} runs; {cpu}, {ncpu} CPUs")
print(f"  updates alone (anchor): {base / values:.1f} ns/value")
expo = med("exposition", "thread_ns") - base
print(f"  /metrics text of the same values (one scrape per round): {expo / values:.1f} ns/value over the anchor, "
      f"{values / expo * 1e9 / 1e6:.2f} M values/s per core")
for name, label in (("vm", "VictoriaMetrics"), ("prom", "Prometheus 2.42")):
    enc = med(name, "thread_ns") - base
    proc = med(name, "process_ns") - base
    wall = med(name, "wall_ns")
    recv = med(name, "receiver_ns")
    print(f"  into {label}: encode+compress+queue {enc / values:.1f} ns/value ({values / enc * 1e9 / 1e6:.2f} M values/s per core, "
          f"x{enc / expo:.2f} the /metrics text); with sending {proc / values:.1f} ns/value "
          f"({values / proc * 1e9 / 1e6:.2f} M values/s per core of strobed, goal >= 1: {'met' if values / proc >= 1e6 / 1e9 else 'NOT met'}); "
          f"delivered in {wall / 1e9:.2f} s wall ({values / wall * 1e9 / 1e6:.2f} M values/s); "
          f"the receiver used {recv / values:.0f} ns/value ({values / recv * 1e9 / 1e6:.2f} M values/s per core)")
PY
