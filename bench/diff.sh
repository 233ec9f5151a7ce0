#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`, comparison: what `strobe report --diff A B` costs against
# the anchor, the plain report of A alone, on two large experiments:
#
#   paths  bench/paths.c at depth STROBE_BENCH_DIFF_DEPTH (default 10:
#          88573 distinct call paths) on 2 threads, recorded twice; both
#          commands read the profile files (the default source), so this is
#          the cost of matching and merging large call trees;
#   trace  bench/calls.c, STROBE_BENCH_DIFF_CALLS calls per thread (default
#          5000000) on 2 threads (20 M events), recorded twice; both
#          commands rebuild the profile from the traces (--source trace),
#          the most a report reads.
# Each command runs STROBE_BENCH_DIFF_REPS times (default 5), interleaved
# with its anchor; the medians of wall time and their ratio are printed.
# Two experiments cost about twice one; more than that is the diff's own.
#
#   bench/diff.sh BUILD_DIR
# Results: the table on stdout and in BUILD_DIR/bench/results/diff.txt.
BENCH_NAME=bench-diff
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/diff.sh BUILD_DIR"
[ -d "$1" ] || die "$1: no such build directory (run cmake first)"
BUILD=$(cd "$1" && pwd)
RESULTS=$BUILD/bench/results
DEPTH=${STROBE_BENCH_DIFF_DEPTH:-10}
CALLS=${STROBE_BENCH_DIFF_CALLS:-5000000}
REPS=${STROBE_BENCH_DIFF_REPS:-5}
for v in "$DEPTH" "$CALLS" "$REPS"; do
    case "$v" in *[!0-9]* | "") die "STROBE_BENCH_DIFF_DEPTH, _CALLS and _REPS must be numbers" ;; esac
done
STROBE=$BUILD/bin/strobe
for f in "$STROBE" "$BUILD/bench/strobe-bench-paths" "$BUILD/bench/strobe-bench-calls"; do
    [ -x "$f" ] || die "$f missing: build first (cmake --build $BUILD)"
done
unset LD_PRELOAD
mkdir -p "$RESULTS"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench-diff.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# wall SECONDS of one run of CMD (its output discarded)
wall() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || die "$* failed"
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}

# measure NAME LABEL ARGS...: medians of `report A ARGS` and `report --diff A B ARGS`
measure() {
    local name=$1 label=$2 i
    shift 2
    : >"$WORK/$name.one"
    : >"$WORK/$name.diff"
    for ((i = 0; i < REPS; i++)); do
        wall "$STROBE" report "$WORK/$name-A" "$@" >>"$WORK/$name.one"
        wall "$STROBE" report --diff "$WORK/$name-A" "$WORK/$name-B" "$@" >>"$WORK/$name.diff"
    done
    local one diff
    one=$(strobe_bench_median <"$WORK/$name.one")
    diff=$(strobe_bench_median <"$WORK/$name.diff")
    printf '%-6s %-34s %10.3f %10.3f %6.2f\n' "$name" "$label" "$one" "$diff" "$(echo "$diff / $one" | bc -l)"
}

echo "bench/diff: recording" >&2
for s in A B; do
    "$STROBE" run -o "$WORK/paths-$s" -- "$BUILD/bench/strobe-bench-paths" "$DEPTH" 2 >/dev/null 2>&1
    "$STROBE" run -o "$WORK/trace-$s" -- "$BUILD/bench/strobe-bench-calls" "$CALLS" 2 >/dev/null 2>&1
done
paths=$("$STROBE" report --diff "$WORK/paths-A" "$WORK/paths-B" --format json | python3 -c \
    'import json, sys; print(len(json.load(sys.stdin)["paths"]))')
{
    echo "strobe report --diff A B vs strobe report A ($(date -u +%F), $(strobe_bench_cpu_model), $(nproc) CPUs," \
        "median of $REPS)"
    printf '%-6s %-34s %10s %10s %6s\n' case experiments "report s" "diff s" ratio
    measure paths "paths.c depth $DEPTH: $paths paths" --top 20
    measure trace "calls.c: $((CALLS * 4)) events" --source trace
} | tee "$RESULTS/diff.txt"
