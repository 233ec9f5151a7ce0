#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: what the runtime side of block tracing (src/core/bb.c) adds
# to the inline records of `strobe cc --trace=bb,mem` code: segments of 7
# bytes written through the thread's cursor into its block stream t0.bb,
# with its chunk switches (strobe_bb_refill), against the same segments
# into a warm private buffer in the same process (bench/bb_refill.c:
# alternating batches, medians over the rounds), pinned to one CPU; with
# the default 1 MiB chunks and with 64 KiB ones, and without the runtime
# (the scratch area).
#
#   bench/bb_refill.sh BUILD_DIR
#
# Environment: STROBE_BENCH_BB_SEGMENTS (per batch, default 4000000),
# STROBE_BENCH_REPS (rounds, default 11), STROBE_BENCH_CPU (default the
# last CPU).
BENCH_NAME=bench-bb-refill
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/bb_refill.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
PROG=$BUILD/bench/strobe-bench-bb-refill
LIB=$BUILD/lib/libstrobe.so
[ -x "$PROG" ] && [ -e "$LIB" ] || die "$PROG or $LIB missing: build first (cmake --build $BUILD)"
SEGS=${STROBE_BENCH_BB_SEGMENTS:-4000000}
REPS=${STROBE_BENCH_REPS:-11}
CPU=${STROBE_BENCH_CPU:-$(($(nproc) - 1))}
case "$SEGS$REPS$CPU" in *[!0-9]*) die "STROBE_BENCH_BB_SEGMENTS/REPS/CPU must be numbers" ;; esac
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

echo "block streams: ns per 7-byte segment through the cursor vs a warm private buffer (x), medians of $REPS rounds of $SEGS"
row() { # label, then the program's output
    read -r _ anchor _ cursor _ ratio _ refills _ us <<<"$2"
    printf '  %-26s private %6s ns  cursor %7s ns  x%-6s  %6s refills of %9s us\n' "$1" "$anchor" "$cursor" "$ratio" \
        "$refills" "$us"
}
row "no runtime (scratch area)" "$(taskset -c "$CPU" "$PROG" "$SEGS" "$REPS")"
for chunk in 1048576 65536; do
    out=$(STROBE_CHUNK_SIZE=$chunk STROBE_TRACE_LIMIT=0 STROBE_EXPERIMENT_DIR=$SCRATCH/exp$chunk LD_PRELOAD=$LIB \
        taskset -c "$CPU" "$PROG" "$SEGS" "$REPS")
    row "t0.bb, $((chunk / 1024)) KiB chunks" "$out"
done
