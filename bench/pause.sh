#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: what an instrumented call costs while recording is paused
# (strobe run --delay/--duration/--toggle-signal, strobe_pause(); the hooks
# only count the frame, src/core/hotpath.h), against the same call not
# instrumented at all and against it recorded; and recorded into the
# flight recorder's rings (strobe run --max-size) against the usual
# streams. The workload of run.sh
# (bench/calls.c: a loop calling an empty noinline function), pinned to
# one CPU, in three configurations per round, interleaved:
#   plain      strobe-bench-calls-plain (no -finstrument-functions)
#   empty      strobe-bench-calls with its empty hooks (cyg_null.c): the
#              least any hook can cost, a call and a return
#   paused     strobe-bench-calls under the runtime, STROBE_DELAY=1h (paused
#              from start to end)
#   recording  strobe-bench-calls under the runtime (trace and profile)
#   ring       the same with STROBE_MAX_SIZE=$STROBE_BENCH_RING (default 4M:
#              the 10 M calls' ~40 MB of trace go round it ~10 times)
# ns per call = loop time / calls; ratios are taken within each round,
# then the medians printed.
#
#   bench/pause.sh BUILD_DIR
#
# Environment: STROBE_BENCH_CALLS (default 10000000), STROBE_BENCH_REPS
# (rounds, default 7), STROBE_BENCH_CPU (default the last CPU).
BENCH_NAME=bench-pause
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/pause.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
B=$BUILD/bench
LIB=$BUILD/lib/libstrobe.so
for f in "$B/strobe-bench-calls" "$B/strobe-bench-calls-plain" "$LIB"; do
    [ -e "$f" ] || die "$f missing: build first (cmake --build $BUILD)"
done
CALLS=${STROBE_BENCH_CALLS:-10000000}
REPS=${STROBE_BENCH_REPS:-7}
CPU=${STROBE_BENCH_CPU:-$(($(nproc) - 1))}
RING=${STROBE_BENCH_RING:-4M}
case "$CALLS$REPS$CPU" in *[!0-9]*) die "STROBE_BENCH_CALLS/REPS/CPU must be numbers" ;; esac
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

loop_ns() { # the loop time the workload prints
    sed -n 's/.* loop_ns=\([0-9]*\).*/\1/p' <<<"$1" | head -1
}
run() { # configuration -> loop ns
    local out
    case $1 in
    plain) out=$(taskset -c "$CPU" "$B/strobe-bench-calls-plain" "$CALLS" 1 "$CPU") ;;
    empty) out=$(taskset -c "$CPU" "$B/strobe-bench-calls" "$CALLS" 1 "$CPU") ;;
    paused) out=$(STROBE_DELAY=1h STROBE_EXPERIMENT_DIR=$SCRATCH/p$r LD_PRELOAD=$LIB \
        taskset -c "$CPU" "$B/strobe-bench-calls" "$CALLS" 1 "$CPU") ;;
    recording) out=$(STROBE_EXPERIMENT_DIR=$SCRATCH/r$r LD_PRELOAD=$LIB \
        taskset -c "$CPU" "$B/strobe-bench-calls" "$CALLS" 1 "$CPU") ;;
    ring) out=$(STROBE_MAX_SIZE=$RING STROBE_EXPERIMENT_DIR=$SCRATCH/g$r LD_PRELOAD=$LIB \
        taskset -c "$CPU" "$B/strobe-bench-calls" "$CALLS" 1 "$CPU") ;;
    esac
    loop_ns "$out"
}
: >"$SCRATCH/rows"
for ((r = 1; r <= REPS; r++)); do
    p=$(run plain)
    e=$(run empty)
    q=$(run paused)
    w=$(run recording)
    g=$(run ring)
    rm -rf "$SCRATCH/p$r" "$SCRATCH/r$r" "$SCRATCH/g$r"
    # ns per event (2 a call) added to the bare loop: recording, ring, and their ratio
    awk -v p="$p" -v e="$e" -v q="$q" -v w="$w" -v g="$g" -v n="$CALLS" \
        'BEGIN { printf "%.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f\n", p / n, e / n, q / n, w / n,
                 q / p, q / e, w / q, g / n, (w - p) / (2 * n), (g - p) / (2 * n), (g - p) / (w - p) }' \
        >>"$SCRATCH/rows"
done
med() { cut -d' ' -f"$1" "$SCRATCH/rows" | strobe_bench_median; }
echo "paused recording: ns per call of an empty function, medians of $REPS rounds of $CALLS calls (CPU $CPU)"
printf '  %-34s %7s ns\n' "not instrumented" "$(med 1)"
printf '  %-34s %7s ns\n' "instrumented, empty hooks" "$(med 2)"
printf '  %-34s %7s ns  x%s the uninstrumented call, x%s the empty hooks\n' "instrumented, paused" "$(med 3)" \
    "$(med 5)" "$(med 6)"
printf '  %-34s %7s ns  x%s the paused call\n' "instrumented, recording" "$(med 4)" "$(med 7)"
printf '  %-34s %7s ns\n' "instrumented, ring of $RING" "$(med 8)"
echo "flight recorder: ns per event over the bare loop, same rounds"
printf '  %-34s %7s ns\n' "usual streams" "$(med 9)"
printf '  %-34s %7s ns  x%s the usual streams\n' "ring of $RING (--max-size)" "$(med 10)" "$(med 11)"
