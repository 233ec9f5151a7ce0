#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: what an uncontended pthread mutex lock+unlock pair costs
# through the runtime's lock interposer (src/core/sync.c) over bare glibc,
# both measured in the same process (bench/locks.c: alternating batches,
# medians over the rounds), pinned to one CPU. Goal (issue 14): at most
# 15 ns more. Then the same in a second process with task-graph recording
# (STROBE_LOCKS=all: every call a SYNC record with a ticket, issue 16),
# again against bare glibc in that process, with the trace bytes per pair.
#
#   bench/locks.sh BUILD_DIR
#
# Environment: STROBE_BENCH_LOCK_PAIRS (per batch, default 2000000),
# STROBE_BENCH_LOCK_PAIRS_ALL (per batch with task-graph recording, default
# a tenth: each pair writes two records), STROBE_BENCH_REPS (rounds,
# default 11), STROBE_BENCH_CPU (default the last CPU).
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
PAIRS_ALL=${STROBE_BENCH_LOCK_PAIRS_ALL:-$(((PAIRS + 9) / 10))}
case "$PAIRS_ALL" in '' | *[!0-9]*) die "STROBE_BENCH_LOCK_PAIRS_ALL must be a number" ;; esac
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

out=$(STROBE_EXPERIMENT_DIR=$SCRATCH/exp LD_PRELOAD=$LIB taskset -c "$CPU" "$PROG" "$PAIRS" "$REPS")
read -r _ bare _ inter _ diff _ ratio _ try <<<"$out"
echo "lock interposer: uncontended pthread_mutex_lock+unlock pair, medians of $REPS rounds of $PAIRS pairs"
printf '  bare glibc %s ns, through the interposer %s ns; per round +%s ns, x%s; goal <= +15 ns: %s\n' \
    "$bare" "$inter" "$diff" "$ratio" "$(awk -v d="$diff" 'BEGIN { print (d <= 15 ? "met" : "NOT met") }')"
printf '  bare glibc trylock+unlock pair %s ns (what trying a mutex first would cost instead of locking it)\n' "$try"

out=$(STROBE_EXPERIMENT_DIR=$SCRATCH/exp-all STROBE_LOCKS=all LD_PRELOAD=$LIB taskset -c "$CPU" "$PROG" "$PAIRS_ALL" "$REPS")
read -r _ bare_all _ all _ diff_all _ ratio_all _ <<<"$out"
bytes=$("$BUILD/bin/strobe" report "$SCRATCH/exp-all" --format json |
    python3 -c 'import json, sys; s = json.load(sys.stdin)["summary"]; print(s["trace_bytes"], s["events"], s["dropped"])')
read -r trace_bytes events dropped <<<"$bytes"
# every round: PAIRS_ALL interposed pairs of two records each (the bare
# batches are not seen); the rest are the thread's own few records
expect=$((2 * PAIRS_ALL * REPS))
[ "$dropped" -eq 0 ] && [ "$events" -ge "$expect" ] && [ "$events" -le $((expect + 16)) ] ||
    die "task-graph recording wrote $events events ($dropped dropped), expected $expect SYNC records and a few more"
echo "task-graph recording (STROBE_LOCKS=all): the same pair, every call a SYNC record with a ticket, medians of $REPS rounds of $PAIRS_ALL pairs"
awk -v b="$bare_all" -v a="$all" -v d="$diff_all" -v r="$ratio_all" -v dd="$diff" -v tb="$trace_bytes" -v n="$expect" 'BEGIN {
    printf "  bare glibc %s ns, recording every call %s ns; per round +%s ns, x%s; +%.2f ns over the default mode\n", b, a, d, r, d - dd
    printf "  trace %.1f bytes per pair (two records)\n", tb / (n / 2)
}'
