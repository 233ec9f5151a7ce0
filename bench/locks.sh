#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: what an uncontended pthread mutex lock+unlock pair costs
# through the runtime's lock interposer (src/core/sync.c) over bare glibc,
# both measured in the same process (bench/locks.c: alternating batches,
# medians over the rounds), pinned to one CPU. Goal (issue 14): at most
# 15 ns more.
#
#   bench/locks.sh BUILD_DIR
#
# Environment: STROBE_BENCH_LOCK_PAIRS (per batch, default 2000000),
# STROBE_BENCH_REPS (rounds, default 11), STROBE_BENCH_CPU (default the
# last CPU).
BENCH_NAME=bench-locks
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/locks.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
PROG=$BUILD/bench/strobe-bench-locks
LIB=$BUILD/lib/libstrobe.so
[ -x "$PROG" ] && [ -e "$LIB" ] || die "$PROG or $LIB missing: build first (cmake --build $BUILD)"
PAIRS=${STROBE_BENCH_LOCK_PAIRS:-2000000}
REPS=${STROBE_BENCH_REPS:-11}
CPU=${STROBE_BENCH_CPU:-$(($(nproc) - 1))}
case "$PAIRS$REPS$CPU" in *[!0-9]*) die "STROBE_BENCH_LOCK_PAIRS/REPS/CPU must be numbers" ;; esac
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

out=$(STROBE_EXPERIMENT_DIR=$SCRATCH/exp LD_PRELOAD=$LIB taskset -c "$CPU" "$PROG" "$PAIRS" "$REPS")
read -r _ bare _ inter _ diff _ ratio _ try <<<"$out"
echo "lock interposer: uncontended pthread_mutex_lock+unlock pair, medians of $REPS rounds of $PAIRS pairs"
printf '  bare glibc %s ns, through the interposer %s ns; per round +%s ns, x%s; goal <= +15 ns: %s\n' \
    "$bare" "$inter" "$diff" "$ratio" "$(awk -v d="$diff" 'BEGIN { print (d <= 15 ? "met" : "NOT met") }')"
printf '  bare glibc trylock+unlock pair %s ns (what trying a mutex first would cost instead of locking it)\n' "$try"
