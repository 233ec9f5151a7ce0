#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The allocation-tracking part of `make bench` (docs/performance.md): what
# the runtime's malloc interposer adds per malloc+free pair, measured on
# the same binary in the same run.
#
#   bench/malloc/run.sh BUILD_DIR
#
# Method:
#  * strobe-bench-malloc (bench/malloc/malloc_bench.c) runs malloc(64) +
#    free pairs in a loop and prints ns per pair; it is run bare (no
#    runtime: the anchor), with libstrobe.so preloaded and tracking off
#    (the interposer's pass-through), and with STROBE_MALLOC=1 (`strobe run
#    --malloc`); at 1 thread (pinned to STROBE_BENCH_CPU, default the last
#    CPU) and 2 threads (not pinned; each thread runs the pairs).
#  * repetitions are interleaved (rep 1 of every configuration, then rep
#    2, ...); per repetition the difference to the bare run is taken, the
#    table shows the medians (and min-max), per pair and per call (pair / 2).
# Environment: STROBE_BENCH_MALLOC_PAIRS (per thread, default 10000000),
# STROBE_BENCH_MALLOC_REPS (default 5), STROBE_BENCH_CPU.
# Results: BUILD_DIR/bench/results/malloc_raw.tsv and malloc_table.txt.
BENCH_NAME=bench-malloc # prefix of its messages
. "$(dirname "$0")/../lib.sh" # strict mode; a failing command is reported (lib.sh)

[ $# -eq 1 ] || die "usage: bench/malloc/run.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
PROG=$BUILD/bench/strobe-bench-malloc
LIB=$BUILD/lib/libstrobe.so
for f in "$PROG" "$LIB"; do
    [ -e "$f" ] || die "$f: not built (run make first)"
done
PAIRS=${STROBE_BENCH_MALLOC_PAIRS:-10000000}
REPS=${STROBE_BENCH_MALLOC_REPS:-5}
NCPU=$(nproc)
CPU=${STROBE_BENCH_CPU:-$((NCPU - 1))}
case "$PAIRS$REPS$CPU" in *[!0-9]*) die "STROBE_BENCH_MALLOC_PAIRS/REPS and STROBE_BENCH_CPU must be numbers" ;; esac
RESULTS=$BUILD/bench/results
mkdir -p "$RESULTS"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
RAW=$RESULTS/malloc_raw.tsv
printf 'rep\tthreads\tconfig\tns_per_pair\n' >"$RAW"

run() { # threads config -> ns per pair
    local threads=$1 config=$2 pin=()
    [ "$threads" -gt 1 ] || pin=(taskset -c "$CPU")
    rm -rf "$SCRATCH/exp"
    case $config in
    bare) "${pin[@]}" "$PROG" "$PAIRS" 64 "$threads" ;;
    off) env LD_PRELOAD="$LIB" STROBE_EXPERIMENT_DIR="$SCRATCH/exp" "${pin[@]}" "$PROG" "$PAIRS" 64 "$threads" ;;
    on) env LD_PRELOAD="$LIB" STROBE_MALLOC=1 STROBE_EXPERIMENT_DIR="$SCRATCH/exp" "${pin[@]}" "$PROG" "$PAIRS" 64 "$threads" ;;
    esac
}

command -v taskset >/dev/null || die "taskset not found (util-linux)"
for rep in $(seq "$REPS"); do
    for threads in 1 2; do
        for config in bare off on; do
            printf '%s\t%s\t%s\t%s\n' "$rep" "$threads" "$config" "$(run "$threads" "$config")" >>"$RAW"
        done
    done
done

python3 - "$RAW" <<'PY' | tee "$RESULTS/malloc_table.txt"
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
ns = {}
for rep, threads, config, v in rows:
    ns[(int(rep), int(threads), config)] = float(v)
reps = sorted({k[0] for k in ns})
print("malloc interposition: malloc(64)+free pairs, ns per pair (median of %d, min-max)" % len(reps))
print("%-8s %-34s %10s %20s %14s" % ("threads", "configuration", "ns/pair", "added ns/pair", "added ns/call"))
for threads in (1, 2):
    bare = [ns[(r, threads, "bare")] for r in reps]
    print("%-8d %-34s %10.1f %20s %14s" % (threads, "bare (glibc)", statistics.median(bare), "-", "-"))
    for config, label in (("off", "libstrobe.so, tracking off"), ("on", "libstrobe.so, STROBE_MALLOC=1")):
        v = [ns[(r, threads, config)] for r in reps]
        d = [ns[(r, threads, config)] - ns[(r, threads, "bare")] for r in reps]
        print("%-8d %-34s %10.1f %9.1f (%5.1f-%5.1f) %14.1f" % (threads, label, statistics.median(v),
              statistics.median(d), min(d), max(d), statistics.median(d) / 2))
PY
