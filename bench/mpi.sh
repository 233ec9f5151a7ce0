#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: the cost of `strobe run --mpi` on a real MPI benchmark, the
# OSU micro-benchmarks' osu_latency (ping-pong, one-way latency per message
# size) with 2 ranks under Open MPI's mpirun, in three configurations of
# the same run: bare (the anchor), under `strobe run` without --mpi (the
# runtime preloaded, nothing of the uninstrumented program recorded) and
# with --mpi (every MPI call a region, every message a record). The
# repetitions alternate the configurations; the table has medians and the
# ratios to the anchor. The last --mpi run is also reported and exported
# to OTF2, so the run is checked end to end (messages in the report, MPI
# events in otf2-print).
#
#   bench/mpi.sh BUILD_DIR
#
# The OSU sources are not in the repository: fetch and build them
# elsewhere (docs/mpi.md, "Benchmark"), and point STROBE_OSU_DIR at the
# build (the folder holding mpi/pt2pt/osu_latency). Environment:
# STROBE_BENCH_REPS (default 5), STROBE_BENCH_OSU_ITERS (iterations per
# size, default 2000).
BENCH_NAME=bench-mpi
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/mpi.sh BUILD_DIR"
optional_sources STROBE_OSU_DIR "the OSU latency benchmark under strobe run --mpi" \
    "build the OSU micro-benchmarks with Open MPI's mpicc and point STROBE_OSU_DIR at them: docs/mpi.md"
BUILD=$(cd "$1" && pwd)
STROBE=$BUILD/bin/strobe
OSU=$STROBE_OSU_DIR/mpi/pt2pt/osu_latency
[ -x "$STROBE" ] && [ -e "$BUILD/lib/libstrobe-mpi.so" ] || die "$STROBE or libstrobe-mpi.so missing: build first"
[ -x "$OSU" ] || die "$OSU: not found (STROBE_OSU_DIR=$STROBE_OSU_DIR: build the OSU benchmarks there)"
REPS=${STROBE_BENCH_REPS:-5}
ITERS=${STROBE_BENCH_OSU_ITERS:-2000}
case "$REPS$ITERS" in *[!0-9]*) die "STROBE_BENCH_REPS/OSU_ITERS must be numbers" ;; esac
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
# Open MPI refuses root without both variables
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN=$(command -v mpirun)

run() { # config rep: osu_latency's "size latency" lines into SCRATCH/config.rep
    local out=$SCRATCH/$1.$2
    case $1 in
    bare) "$MPIRUN" -np 2 "$OSU" -i "$ITERS" >"$out.log" 2>&1 ;;
    runtime) "$STROBE" run -o "$SCRATCH/exp-$1-$2" -- "$MPIRUN" -np 2 "$OSU" -i "$ITERS" >"$out.log" 2>&1 ;;
    mpi) "$STROBE" run -o "$SCRATCH/exp-$1-$2" --mpi -- "$MPIRUN" -np 2 "$OSU" -i "$ITERS" >"$out.log" 2>&1 ;;
    esac
    grep -E '^[0-9]+ +[0-9.]+$' "$out.log" >"$out" || die "$1: osu_latency printed no results: $(tail -3 "$out.log")"
    [ "$1" = mpi ] || rm -rf "$SCRATCH/exp-$1-$2"
}

configs=(bare runtime mpi)
for ((r = 0; r < REPS; r++)); do
    for ((k = 0; k < 3; k++)); do
        run "${configs[$(((k + r) % 3))]}" "$r"
    done
done

echo "OSU osu_latency, 2 ranks, Open MPI $(mpirun --version 2>/dev/null | awk 'NR == 1 { print $NF }'), $ITERS iterations per size, medians of $REPS runs; $(strobe_bench_cpu_model), $(nproc) CPUs"
printf '  %8s %12s %12s %12s %10s %10s %12s\n' bytes "bare us" "runtime us" "--mpi us" runtime/bare "mpi/bare" "mpi-bare ns"
for size in 0 1 8 64 512 1024 4096 65536 1048576; do
    for c in "${configs[@]}"; do
        # shellcheck disable=SC2046
        eval "$c=$(awk -v s="$size" '$1 == s { print $2 }' "$SCRATCH/$c".* | sort -g |
            awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')"
    done
    # shellcheck disable=SC2154
    awk -v s="$size" -v b="$bare" -v r="$runtime" -v m="$mpi" \
        'BEGIN { printf "  %8d %12.2f %12.2f %12.2f %10.2f %10.2f %12.0f\n", s, b, r, m, r / b, m / b, (m - b) * 1000 }'
done

# end to end: the last --mpi run's report and OTF2 export
exp=$SCRATCH/exp-mpi-$((REPS - 1))
"$STROBE" report "$exp" | awk '/^MPI \(/ { print "  report: " $0 }'
"$STROBE" export "$exp" --format otf2 -o "$SCRATCH/otf2" >/dev/null 2>&1
printf '  otf2-print: %s MPI_SEND, %s MPI_RECV events\n' \
    "$(otf2-print "$SCRATCH/otf2/traces.otf2" | grep -c '^MPI_SEND ')" \
    "$(otf2-print "$SCRATCH/otf2/traces.otf2" | grep -c '^MPI_RECV ')"
