#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The live-monitoring part of `make bench` (docs/performance.md, "Live
# monitoring (strobed)"): what strobed costs per sampled set, per
# transform, and how many metric values one aggregator ingests.
#
#   bench/monitor/run.sh BUILD_DIR
#
# Method:
#  * sampling: strobe-bench-monitor (bench/monitor/monitor_bench.c) runs an
#    in-process daemon with only the meminfo (then vmstat) sampler and calls
#    strobe__daemon_sample_all() N times; anchors in the same process and
#    run: N pread()s of the same /proc file (the kernel's floor) and N naive
#    fopen/fscanf parses (a simple sampler). CPU time includes kernel time.
#  * transforms: the same program, synthetic sampler of 43 metrics alone,
#    with `rate`, and with rate -> window avg n=5; the added CPU per set is
#    the difference to the sampler alone within the same run.
#  * the csv store's flush: the same program ("store" mode), a synthetic
#    sampler of 43 metrics with a csv store that writes only at 64 KiB,
#    with a flush after every second of data (RATE rows) and with fsync:
#    true too, at RATE = 100 (a node) and 10000 rows/s (an aggregator of
#    1000 nodes x 10 sets at 1 s); files in a directory under the build
#    tree's bench/results (a disk, not /tmp, which may be a tmpfs).
#  * repetitions are interleaved and rotate the order of the
#    configurations; the table shows medians [min-max] over repetitions, and
#    ratios/differences are formed within a repetition before the median.
#  * message authentication: strobe-bench-monitor mac MAC_N ROT, REPS
#    repetitions: the CPU cost of sealing the UPDATE reply that carries
#    10,000 new values (100 sets x 100 metrics) with strobed's HMAC, against
#    building that reply and against AES-128/256-GCM over the same bytes
#    (the least a TLS record costs), as shares of a core at 1 M values/s.
#  * scale: strobe-bench-monitor scale N for N = 1,000, 5,000 and 10,000
#    synthetic samplers of 100 metrics (with one transform, so every update
#    is dispatched): the CPU time of one round, per instance and as a share
#    of a core at 1 s; linear when the per-instance cost stays flat.
#  * aggregation: K producer strobed processes (synthetic sets of M
#    metrics, sampled every INTERVAL) and one aggregator strobed pulling
#    them every INTERVAL, half an interval after the producers' grid, on
#    loopback. After a warm-up, two `strobe ls --json` snapshots of the
#    aggregator SECONDS apart: values = sum of data_gn increments x M;
#    the aggregator's CPU from /proc/PID/stat (utime + stime) over the same
#    span gives values per CPU second. The count assumes the aggregator
#    received every sample (true while it keeps up; a sample overwritten
#    before a pull would be counted but not ingested). With
#    STROBE_BENCH_MON_PERF=1 (default) one more, unmeasured run records
#    `perf record -g` of the aggregator and lists its top symbols.
#  * aggregator scale: the same topology with N/K sets per producer, all
#    sampled and pulled every second, for each N of AGG_SCALE: aggregator
#    CPU, resident memory of the aggregator and the largest producer
#    against the bytes of the sets they hold (strobe-bench-monitor
#    setbytes), failed rounds ("retrying" in the aggregator's log) and
#    SIGTERM-to-exit times (goals: 40,000 sets without a reconnect, RSS
#    <= 2x the sets' bytes, stop <= 2 s).
#
# Environment: STROBE_BENCH_MON_REPS (default 7), STROBE_BENCH_MON_SAMPLES
# (samples per configuration, default 20000), STROBE_BENCH_MON_AGG_REPS
# (default 3), STROBE_BENCH_MON_MAC_N (messages per configuration,
# default 2000), STROBE_BENCH_MON_SECONDS (default 10),
# STROBE_BENCH_MON_PRODUCERS (K, default 4), STROBE_BENCH_MON_SETS (sets
# per producer, default 50), STROBE_BENCH_MON_METRICS (M, default 100),
# STROBE_BENCH_MON_INTERVAL (default 10ms), STROBE_BENCH_MON_PERF,
# STROBE_BENCH_MON_AGG_SCALE (set counts, default "1000 10000 40000"),
# STROBE_BENCH_MON_AGG_SCALE_SECONDS (default 20).
# Results: BUILD_DIR/bench/results/monitor_raw.txt (every run) and
# monitor_table.txt. Nothing is written in the source tree.
BENCH_NAME=bench-monitor # prefix of its messages
. "$(dirname "$0")/../lib.sh" # strict mode; a failing command is reported (lib.sh)

[ $# -eq 1 ] || die "usage: bench/monitor/run.sh BUILD_DIR"
[ -d "$1" ] || die "$1: no such build directory (run cmake first)"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
PROG=$BUILD/bench/strobe-bench-monitor
STROBED=$BUILD/bin/strobed
STROBE=$BUILD/bin/strobe
for f in "$PROG" "$STROBED" "$STROBE"; do
    [ -x "$f" ] || die "$f: not built (run make first)"
done
command -v python3 >/dev/null || die "python3 not found (needed for the table)"
REPS=${STROBE_BENCH_MON_REPS:-7}
SAMPLES=${STROBE_BENCH_MON_SAMPLES:-20000}
AGG_REPS=${STROBE_BENCH_MON_AGG_REPS:-3}
MAC_N=${STROBE_BENCH_MON_MAC_N:-2000}
SECONDS_=${STROBE_BENCH_MON_SECONDS:-10}
K=${STROBE_BENCH_MON_PRODUCERS:-4}
SETS=${STROBE_BENCH_MON_SETS:-50}
M=${STROBE_BENCH_MON_METRICS:-100}
INTERVAL=${STROBE_BENCH_MON_INTERVAL:-10ms}
PERF=${STROBE_BENCH_MON_PERF:-1}
case "$REPS$SAMPLES$AGG_REPS$MAC_N$SECONDS_$K$SETS$M" in *[!0-9]*) die "STROBE_BENCH_MON_* counts must be numbers" ;; esac
case $INTERVAL in
*ms) IV_US=$((${INTERVAL%ms} * 1000)) ;;
*us) IV_US=${INTERVAL%us} ;;
*) die "STROBE_BENCH_MON_INTERVAL: give it in ms or us (e.g. 10ms)" ;;
esac
[ "$IV_US" -ge 2 ] || die "STROBE_BENCH_MON_INTERVAL too small"

RESULTS=$BUILD/bench/results
mkdir -p "$RESULTS"
RAW=$RESULTS/monitor_raw.txt
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench-monitor.XXXXXX")
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
: >"$RAW"

# ---- 1 and 2: sampling and transforms, in-process ---------------------------
echo "bench-monitor: $REPS repetitions x {meminfo, vmstat, transforms}, $SAMPLES samples per configuration" >&2
for rep in $(seq 1 "$REPS"); do
    for what in "sample meminfo" "sample vmstat" "xform"; do
        # shellcheck disable=SC2086 # what is two words on purpose
        "$PROG" $what "$SAMPLES" "$rep" | sed "s/^/rep=$rep /" >>"$RAW" || die "strobe-bench-monitor $what failed"
    done
done

STORE_DIR=$RESULTS/csv-store
echo "bench-monitor: $REPS repetitions x csv store flush at 100 and 10000 rows/s" >&2
for rep in $(seq 1 "$REPS"); do
    for rate in 100 10000; do
        rm -rf "$STORE_DIR" && mkdir -p "$STORE_DIR"
        "$PROG" store "$rate" "$STORE_DIR" "$rep" | sed "s/^store /rep=$rep store$rate /" >>"$RAW" ||
            die "strobe-bench-monitor store $rate failed"
    done
done
rm -rf "$STORE_DIR"

echo "bench-monitor: $REPS repetitions x message authentication (HMAC vs AES-GCM), $MAC_N messages" >&2
for rep in $(seq 1 "$REPS"); do
    "$PROG" mac "$MAC_N" "$rep" | sed "s/^/rep=$rep /" >>"$RAW" || die "strobe-bench-monitor mac failed"
done

# ---- 3: aggregator ingest on loopback ---------------------------------------
# Ports: a block of K+1 from the script's pid, so two runs rarely collide.
PORT0=$((24000 + ($$ % 500) * 10))
TCK=$(getconf CLK_TCK)

usec_now() {
    local t=$EPOCHREALTIME
    echo "${t/./}"
}

cpu_ticks() { # pid: utime + stime in clock ticks
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# sets and the sum of their data_gn at the aggregator
agg_gn() {
    "$STROBE" ls --json --timeout 2s "127.0.0.1:$((PORT0 + K))" 2>/dev/null |
        python3 -c 'import json, sys
d = json.load(sys.stdin)
s = [x for x in d["sets"] if "/syn" in x["instance"]]
print(len(s), sum(x["data_gn"] for x in s))' 2>/dev/null || echo "0 0"
}

# how many of the producers' sets the aggregator lists (names only: DIR)
# how many synthetic sets the daemon at port $1 lists (names only: DIR)
port_sets() {
    { "$STROBE" ls --timeout 5s "127.0.0.1:$1" 2>/dev/null || true; } | grep -c /syn || true
}

start_topology() {
    PIDS=()
    for i in $(seq 1 "$K"); do
        {
            printf 'daemon:\n  producer: p%d\n  listen: "127.0.0.1:%d"\n  log_level: warn\nsamplers:\n' "$i" $((PORT0 + i - 1))
            for j in $(seq 1 "$SETS"); do
                printf '  - plugin: synthetic\n    name: s%d\n    instance: p%d/syn%d\n    metrics: %d\n    interval: %s\n' \
                    "$j" "$i" "$j" "$M" "$INTERVAL"
            done
        } >"$WORK/p$i.yaml"
        "$STROBED" -c "$WORK/p$i.yaml" 2>>"$WORK/p$i.log" &
        PIDS+=($!)
    done
    # the aggregator starts once the producers serve (10,000 samplers take
    # seconds to start: its first rounds would time out against them)
    local n
    for i in $(seq 1 "$K"); do
        for _ in $(seq 1 600); do
            n=$(port_sets $((PORT0 + i - 1)))
            [ "$n" -eq "$SETS" ] && break
            sleep 0.1
        done
        [ "$n" -eq "$SETS" ] || die "producer p$i serves $n of $SETS sets after a minute (log: $WORK/p$i.log)"
    done
    {
        printf 'daemon:\n  producer: agg\n  listen: "127.0.0.1:%d"\n  log_level: warn\nproducers:\n' $((PORT0 + K))
        for i in $(seq 1 "$K"); do
            printf '  - address: "127.0.0.1:%d"\n    interval: %s\n    offset: %dus\n' $((PORT0 + i - 1)) "$INTERVAL" $((IV_US / 2))
        done
    } >"$WORK/agg.yaml"
    "$STROBED" -c "$WORK/agg.yaml" 2>>"$WORK/agg.log" &
    AGG=$!
    PIDS+=("$AGG")
    local want=$((K * SETS))
    for _ in $(seq 1 600); do
        n=$(port_sets $((PORT0 + K)))
        [ "$n" -eq "$want" ] && break
        sleep 0.1
    done
    [ "$n" -eq "$want" ] || die "aggregator sees $n of $want sets after a minute (logs: $WORK/*.log)"
    sleep 1 # warm-up: connections and mirrors settled
}

stop_topology() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    PIDS=()
}

echo "bench-monitor: aggregator, $AGG_REPS runs of ${SECONDS_}s: $K producers x $SETS sets x $M metrics every $INTERVAL" >&2
for rep in $(seq 1 "$AGG_REPS"); do
    start_topology
    prod0=0
    for p in "${PIDS[@]:0:$K}"; do prod0=$((prod0 + $(cpu_ticks "$p"))); done
    # a snapshot takes a while (the whole JSON of every set): its moment
    # is taken as the middle of the call
    c0=$(cpu_ticks "$AGG")
    ta=$(usec_now)
    read -r n0 g0 < <(agg_gn)
    tb=$(usec_now)
    sleep "$SECONDS_"
    tc=$(usec_now)
    read -r n1 g1 < <(agg_gn)
    td=$(usec_now)
    c1=$(cpu_ticks "$AGG")
    t0=$(((ta + tb) / 2))
    t1=$(((tc + td) / 2))
    prod1=0
    for p in "${PIDS[@]:0:$K}"; do prod1=$((prod1 + $(cpu_ticks "$p"))); done
    stop_topology
    [ "$n0" -eq "$n1" ] || die "the aggregator's sets changed during the run ($n0 -> $n1)"
    echo "rep=$rep agg sets=$n1 metrics=$M updates=$((g1 - g0)) elapsed_us=$((t1 - t0)) snapshot_us=$((tb - ta)) agg_cpu_us=$(((c1 - c0) * 1000000 / TCK)) producers_cpu_us=$(((prod1 - prod0) * 1000000 / TCK))" >>"$RAW"
done

PERF_TOP=$RESULTS/monitor_perf.txt
rm -f "$PERF_TOP"
if [ "$PERF" = 1 ] && command -v perf >/dev/null; then
    start_topology
    if perf record -q -g -o "$WORK/perf.data" -p "$AGG" -- sleep 5 >/dev/null 2>"$WORK/perf.log"; then
        # (reports go to files first: head in a pipeline would end perf
        # with SIGPIPE, which pipefail turns into a failure)
        perf report -i "$WORK/perf.data" --no-children --stdio --sort dso 2>/dev/null >"$WORK/dso.txt" || true
        perf report -i "$WORK/perf.data" --no-children --stdio --sort dso,sym 2>/dev/null >"$WORK/sym.txt" || true
        {
            echo "perf record -g of the aggregator (5 s, unmeasured run), self time by object:"
            awk '/^ +[0-9.]+%/ && n < 8 { print; n++ }' "$WORK/dso.txt"
            echo "top symbols:"
            awk '/^ +[0-9.]+%/ && n < 12 { print; n++ }' "$WORK/sym.txt"
            echo "top user-space symbols:"
            awk '/^ +[0-9.]+%/ && / \[\.\] / && n < 15 { print; n++ }' "$WORK/sym.txt"
        } >"$PERF_TOP"
    else
        echo "perf record failed: $(head -c 200 "$WORK/perf.log")" >"$PERF_TOP"
    fi
    stop_topology
fi

# ---- many sampler instances: the cost of one round, 1,000 to 10,000 ----
# (goal: linear in the instances; 10,000 x 100 metrics at 1 s <= 2 % of a core)
SCALE=$RESULTS/monitor_scale.txt
{
    echo "sampler scale (strobe-bench-monitor scale N 7: N synthetic samplers of 100 metrics and one transform,"
    echo "CPU time of one round sampling them all, median of 7; core % at a 1 s interval)"
    for n in 1000 5000 10000; do
        "$PROG" scale "$n" 7 || die "strobe-bench-monitor scale $n failed"
    done
} >"$SCALE"
awk '/instances=1000 / { split($4, a, "="); base = a[2] }
     /instances=10000 / { split($4, a, "="); split($5, c, "=");
         printf "per instance, 10000 vs 1000: %.2fx; 10000 instances at 1 s: %s %% of a core (goal <= 2: %s)\n",
             a[2] / base, c[2], c[2] <= 2 ? "PASS" : "MISS" }' "$SCALE" >>"$SCALE"

# ---- aggregator scale: CPU, memory, reconnects and stop time per set count ----
# (goals: 40,000 sets held without a reconnect, RSS <= 2x the sets' bytes,
# stop <= 2 s). K producers x N/K synthetic sets x M metrics sampled every
# second, the aggregator pulling every second; after all sets arrived and
# a warm-up, CPU over AGG_SCALE_SECONDS, then VmRSS/VmHWM, the "retrying"
# lines of the aggregator's log since it started (kept as
# monitor_agg_scale_N.log), and SIGTERM-to-exit of the aggregator, then of
# each producer.
vm_kb() { # pid field
    awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}
stop_us() { # pid: SIGTERM to exit, in us, into STOP_US (not in a subshell: wait needs the parent)
    local t0
    t0=$(usec_now)
    kill -TERM "$1"
    wait "$1" 2>/dev/null || true
    STOP_US=$(($(usec_now) - t0))
}
AGG_SCALE=${STROBE_BENCH_MON_AGG_SCALE:-1000 10000 40000}
AGG_SCALE_SECONDS=${STROBE_BENCH_MON_AGG_SCALE_SECONDS:-20}
for total in $AGG_SCALE "$AGG_SCALE_SECONDS"; do
    case $total in '' | *[!0-9]*) die "STROBE_BENCH_MON_AGG_SCALE*: '$total' is not a number" ;; esac
done
for total in $AGG_SCALE; do
    [ "$total" -ge "$K" ] || die "STROBE_BENCH_MON_AGG_SCALE: $total sets cannot be spread over $K producers"
done
echo "bench-monitor: aggregator scale, sets: $AGG_SCALE ($K producers, $M metrics, 1 s, ${AGG_SCALE_SECONDS}s)" >&2
for total in $AGG_SCALE; do
    SETS=$((total / K)) INTERVAL=1000ms IV_US=1000000
    setbytes=$("$PROG" setbytes "$M" "p$K/syn$SETS" | sed 's/^setbytes=\([0-9]*\).*/\1/')
    : >"$WORK/agg.log"
    start_topology
    sleep 2
    c0=$(cpu_ticks "$AGG")
    t0=$(usec_now)
    sleep "$AGG_SCALE_SECONDS"
    c1=$(cpu_ticks "$AGG")
    t1=$(usec_now)
    prss=0 phwm=0
    for p in "${PIDS[@]:0:$K}"; do
        r=$(vm_kb "$p" VmRSS) h=$(vm_kb "$p" VmHWM)
        [ "$r" -gt "$prss" ] && prss=$r
        [ "$h" -gt "$phwm" ] && phwm=$h
    done
    arss=$(vm_kb "$AGG" VmRSS) ahwm=$(vm_kb "$AGG" VmHWM)
    retries=$(grep -c 'retrying' "$WORK/agg.log" || true)
    stop_us "$AGG"
    astop=$STOP_US
    pstop=0
    for p in "${PIDS[@]:0:$K}"; do
        stop_us "$p"
        [ "$STOP_US" -gt "$pstop" ] && pstop=$STOP_US
    done
    PIDS=()
    cp "$WORK/agg.log" "$RESULTS/monitor_agg_scale_$total.log"
    echo "rep=1 aggscale $total sets=$total producers=$K metrics=$M setbytes=$setbytes elapsed_us=$((t1 - t0)) agg_cpu_us=$(((c1 - c0) * 1000000 / TCK)) agg_rss_kb=$arss agg_hwm_kb=$ahwm prod_rss_kb=$prss prod_hwm_kb=$phwm reconnects=$retries agg_stop_us=$astop prod_stop_us=$pstop" >>"$RAW"
done

# (application publishing overhead: bench/monitor/publish.sh, run next by
# `make bench`)

{
    printf 'date %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf 'cpu %s\n' "$(strobe_bench_cpu_model | tr ' ' '_')"
    printf 'nproc %s\n' "$(nproc)"
    printf 'kernel %s\n' "$(uname -r)"
} >>"$RAW"
python3 "$SRC/table.py" "$RAW" | tee "$RESULTS/monitor_table.txt"
[ ! -e "$PERF_TOP" ] || tee -a "$RESULTS/monitor_table.txt" <"$PERF_TOP"
tee -a "$RESULTS/monitor_table.txt" <"$SCALE"
