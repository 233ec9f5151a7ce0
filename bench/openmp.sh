#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: the cost of the OpenMP adapter per parallel region and per
# barrier, bare (the anchor), under `strobe run --openmp` and under
# `strobe run --openmp --taskgraph` (each region a FORK record, each
# barrier an ARRIVE and a BARRIER record with tickets; docs/openmp.md).
# bench/omp_regions.c, built with clang -fopenmp, runs N regions with 0
# and with 10 barriers each and prints the CPU time of its loop per
# region; a barrier's cost is the difference / 10. A team of one thread:
# with several spinning threads on a shared machine the time depends on
# the scheduler more than on the recording. The repetitions alternate the
# configurations; medians.
#
#   bench/openmp.sh BUILD_DIR
#
# Environment: STROBE_BENCH_REPS (default 5), STROBE_BENCH_OMP_REGIONS
# (default 100000).
BENCH_NAME=bench-openmp
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/openmp.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
STROBE=$BUILD/bin/strobe
[ -x "$STROBE" ] || die "$STROBE missing: build first"
if [ ! -e "$BUILD/lib/libstrobe-ompt.so" ] || ! command -v clang >/dev/null; then
    echo "$BENCH_NAME: no libstrobe-ompt.so or no clang (omp-tools.h, libomp-dev): the OpenMP adapter not measured"
    exit 0
fi
REPS=${STROBE_BENCH_REPS:-5}
N=${STROBE_BENCH_OMP_REGIONS:-100000}
case "$REPS$N" in *[!0-9]*) die "STROBE_BENCH_REPS/OMP_REGIONS must be numbers" ;; esac
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
PROG=$SCRATCH/omp_regions
clang -O2 -fopenmp "$(dirname "$0")/omp_regions.c" -o "$PROG"
CPUS=$(nproc) # before OMP_NUM_THREADS, which nproc obeys
export OMP_NUM_THREADS=1

run() { # config barriers rep: ns per region into SCRATCH/config.barriers.rep
    local out=$SCRATCH/$1.$2.$3
    case $1 in
    bare) "$PROG" "$N" "$2" >"$out" ;;
    openmp) "$STROBE" run --openmp -o "$SCRATCH/exp" -- "$PROG" "$N" "$2" >"$out" 2>/dev/null ;;
    taskgraph) "$STROBE" run --openmp --taskgraph -o "$SCRATCH/exp" -- "$PROG" "$N" "$2" >"$out" 2>/dev/null ;;
    esac
    rm -rf "$SCRATCH/exp"
}

configs=(bare openmp taskgraph)
for ((r = 0; r < REPS; r++)); do
    for ((k = 0; k < 3; k++)); do
        for b in 0 10; do
            run "${configs[$(((k + r) % 3))]}" "$b" "$r"
        done
    done
done

median() { # files: the median of their numbers
    cat "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "OpenMP adapter: $N parallel regions (team of 1) with 0 and 10 barriers, CPU time of the loop, medians of $REPS runs; $(strobe_bench_cpu_model), $CPUS CPUs"
printf '  %-22s %14s %14s %12s\n' config "ns/region" "ns/barrier" "region x bare"
bare_r=$(median "$SCRATCH"/bare.0.*)
bare_b=$(awk -v a="$(median "$SCRATCH"/bare.10.*)" -v z="$bare_r" 'BEGIN { print (a - z) / 10 }')
for c in "${configs[@]}"; do
    r0=$(median "$SCRATCH/$c".0.*)
    bar=$(awk -v a="$(median "$SCRATCH/$c".10.*)" -v z="$r0" 'BEGIN { print (a - z) / 10 }')
    name=$c
    [ "$c" = openmp ] && name="--openmp"
    [ "$c" = taskgraph ] && name="--openmp --taskgraph"
    awk -v n="$name" -v r="$r0" -v b="$bar" -v br="$bare_r" \
        'BEGIN { printf "  %-22s %14.1f %14.1f %12.2f\n", n, r, b, r / br }'
done
