#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`, `strobe merge` and the clock offsets behind it:
#  1. What measuring the clock offsets costs at MPI_Init and MPI_Finalize
#     (src/adapters/mpi/clocks.c: ping-pongs of each rank with rank 0):
#     the ranks test program (tests/adapters/mpi/rank_prog.c, a little work
#     per rank, no messages) under `strobe run --mpi` with 2 and 4 ranks
#     (4 oversubscribes this 2-CPU machine), STROBE_BENCH_REPS runs each
#     (default 7); libstrobe-mpi times the measurement itself and prints it
#     with STROBE_MPI_VERBOSE=1. Medians, in µs: rank 0 (it serves every
#     rank in turn, and waits for the last one to arrive) and the others
#     (their own round trips, after waiting for rank 0 to be ready; at
#     MPI_Init with the collective check that every rank is measured and
#     the duplicate of MPI_COMM_WORLD); then the median error bound the
#     report states (half the shortest round trip, largest over the ranks).
#  2. How fast `strobe merge` puts two experiments together: two runs of
#     bench/calls.c (STROBE_BENCH_MERGE_CALLS calls, default 10000000, so
#     about 2 x 21 MB of trace), merged STROBE_BENCH_REPS times, against the
#     anchor `cp -r` of the same two directories in the same run (the
#     least any merge that copies must cost): MB of input per second and
#     the ratio.
#
#   bench/merge.sh BUILD_DIR
BENCH_NAME=bench-merge
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/merge.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
STROBE=$BUILD/bin/strobe
CALLS=$BUILD/bench/strobe-bench-calls
REPS=${STROBE_BENCH_REPS:-7}
NCALLS=${STROBE_BENCH_MERGE_CALLS:-10000000}
case "$REPS$NCALLS" in *[!0-9]*) die "STROBE_BENCH_REPS/MERGE_CALLS must be numbers" ;; esac
[ -x "$STROBE" ] && [ -x "$CALLS" ] || die "$STROBE or $CALLS missing: build first"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
echo "strobe merge and clock offsets; $(strobe_bench_cpu_model), $(nproc) CPUs, medians of $REPS runs"

# 1. the clock offsets
RANK_PROG=$BUILD/bin/rank_prog
if [ -x "$RANK_PROG" ] && [ -e "$BUILD/lib/libstrobe-mpi.so" ] && command -v mpirun >/dev/null; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    printf '  %5s %-13s %14s %14s\n' ranks "at" "rank 0 us" "others us"
    for np in 2 4; do
        : >"$SCRATCH/offsets.$np"
        for ((r = 0; r < REPS; r++)); do
            STROBE_MPI_VERBOSE=1 "$STROBE" run -o "$SCRATCH/exp" --mpi -- mpirun -np "$np" "$RANK_PROG" \
                >"$SCRATCH/log" 2>&1 || true
            grep -o 'rank [0-9]*: clock offsets at MPI_[A-Za-z]* took [0-9.]*' "$SCRATCH/log" \
                >>"$SCRATCH/offsets.$np" || die "no clock offsets measured with $np ranks: $(tail -3 "$SCRATCH/log")"
            # the offsets' error bound (half the shortest round trip), largest over the ranks
            "$STROBE" report "$SCRATCH/exp" --format json | python3 -c \
                'import json,sys; print(max(p["clock_bound_ns"] for p in json.load(sys.stdin)["processes"]))' \
                >>"$SCRATCH/bound.$np"
            rm -rf "$SCRATCH/exp"
        done
        for at in MPI_Init MPI_Finalize; do
            r0=$(awk -v a="$at" '$2 == "0:" && $6 == a { print $8 }' "$SCRATCH/offsets.$np" | strobe_bench_median)
            rk=$(awk -v a="$at" '$2 != "0:" && $6 == a { print $8 }' "$SCRATCH/offsets.$np" | strobe_bench_median)
            printf '  %5d %-13s %14.1f %14.1f\n' "$np" "$at" "$r0" "$rk"
        done
        printf '  %5d bound of the offsets: %s ns\n' "$np" "$(strobe_bench_median <"$SCRATCH/bound.$np")"
    done
else
    echo "  clock offsets: not measured (no libstrobe-mpi, mpirun or the rank_prog test program in $BUILD)"
fi

# 2. merge speed
for x in a b; do
    "$STROBE" run -o "$SCRATCH/$x" -- "$CALLS" "$NCALLS" 1 >/dev/null 2>&1
done
bytes=$(du -sb "$SCRATCH/a" "$SCRATCH/b" | awk '{ s += $1 } END { print s }')
for ((r = 0; r < REPS; r++)); do
    t0=$(date +%s%N)
    mkdir "$SCRATCH/copy.tmp"
    cp -r "$SCRATCH/a" "$SCRATCH/b" "$SCRATCH/copy.tmp"
    t1=$(date +%s%N)
    "$STROBE" merge "$SCRATCH/a" "$SCRATCH/b" -o "$SCRATCH/out" >/dev/null
    t2=$(date +%s%N)
    echo "$((t1 - t0))" >>"$SCRATCH/cp.ns"
    echo "$((t2 - t1))" >>"$SCRATCH/merge.ns"
    rm -rf "$SCRATCH/copy.tmp" "$SCRATCH/out"
done
cp_ns=$(strobe_bench_median <"$SCRATCH/cp.ns")
merge_ns=$(strobe_bench_median <"$SCRATCH/merge.ns")
awk -v b="$bytes" -v c="$cp_ns" -v m="$merge_ns" 'BEGIN {
    printf "  merge of 2 x %.1f MB: cp -r %.1f ms (%.0f MB/s), strobe merge %.1f ms (%.0f MB/s), merge/cp %.2f\n",
        b / 2e6, c / 1e6, b / c * 1e3, m / 1e6, b / m * 1e3, m / c }'
