#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: chunked traces (docs/formats/trace.md, "Chunked streams";
# docs/cli.md, "Reading chunks alone", "Splitting an export").
#
#   bench/chunks.sh BUILD_DIR
#
# 1. Writer: what the CHUNK record at every chunk switch costs. The
#    workload of run.sh (bench/calls.c: a loop calling an empty noinline
#    function, STROBE_BENCH_CALLS calls, default 10000000), pinned to one
#    CPU, recorded by BUILD_DIR's libstrobe.so ("after") and, when
#    STROBE_BENCH_BASE_LIB names the libstrobe.so of a build without
#    chunked streams, by that one ("before"); each at the default chunk
#    size (1 MiB) and at the smallest (4 KiB: 256 times as many chunk
#    switches, the cost magnified). Rounds interleave the configurations;
#    ns per event = (loop time - the uninstrumented loop's) / events,
#    bytes per event = t0.evt's size / events; ratios after/before are
#    taken within each round, then the medians printed.
# 2. Export: the same workload recorded once with STROBE_BENCH_CHUNKS_EVENTS
#    / 2 calls (default 10^7 calls: 2*10^7 events), exported to Perfetto in
#    one file and split with --chunk-size STROBE_BENCH_CHUNKS_PART (default
#    64M), and to Chrome JSON (STROBE_BENCH_CHUNKS_CHROME_CALLS calls,
#    default 10^6: 2 GB of JSON for 10^7) likewise: wall time and peak RSS
#    (/usr/bin/time), medians of STROBE_BENCH_REPS rounds (default 3 here),
#    the split's ratio to the one file within each round.
# Environment: STROBE_BENCH_CALLS, STROBE_BENCH_REPS, STROBE_BENCH_CPU
# (default the last CPU), STROBE_BENCH_BASE_LIB, STROBE_BENCH_CHUNKS_EVENTS,
# STROBE_BENCH_CHUNKS_CHROME_CALLS, STROBE_BENCH_CHUNKS_PART.
BENCH_NAME=bench-chunks
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/chunks.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
B=$BUILD/bench
LIB=$BUILD/lib/libstrobe.so
STROBE=$BUILD/bin/strobe
for f in "$B/strobe-bench-calls" "$B/strobe-bench-calls-plain" "$LIB" "$STROBE" /usr/bin/time; do
    [ -e "$f" ] || die "$f missing: build first (cmake --build $BUILD)"
done
BASE=${STROBE_BENCH_BASE_LIB:-}
[ -z "$BASE" ] || [ -e "$BASE" ] || die "STROBE_BENCH_BASE_LIB=$BASE: no such file"
CALLS=${STROBE_BENCH_CALLS:-10000000}
REPS=${STROBE_BENCH_REPS:-3}
CPU=${STROBE_BENCH_CPU:-$(($(nproc) - 1))}
EVENTS=${STROBE_BENCH_CHUNKS_EVENTS:-20000000}
CHROME_CALLS=${STROBE_BENCH_CHUNKS_CHROME_CALLS:-1000000}
PART=${STROBE_BENCH_CHUNKS_PART:-64M}
case "$CALLS$REPS$CPU$EVENTS$CHROME_CALLS" in *[!0-9]*) die "STROBE_BENCH_* must be numbers" ;; esac
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
unset LD_PRELOAD STROBE_CHUNK_SIZE

loop_ns() { # the loop time the workload prints
    sed -n 's/.* loop_ns=\([0-9]*\).*/\1/p' <<<"$1" | head -1
}
record() { # library chunk-size -> "loop-ns bytes-of-t0.evt"
    local dir=$SCRATCH/rec out
    rm -rf "$dir"
    out=$(STROBE_CHUNK_SIZE=$2 STROBE_EXPERIMENT_DIR=$dir LD_PRELOAD=$1 \
        taskset -c "$CPU" "$B/strobe-bench-calls" "$CALLS" 1 "$CPU")
    echo "$(loop_ns "$out") $(stat -c %s "$dir"/proc-*/t0.evt)"
    rm -rf "$dir"
}

# ---- 1. writer ----
libs=("$LIB")
[ -z "$BASE" ] || libs+=("$BASE")
: >"$SCRATCH/writer"
for ((r = 1; r <= REPS; r++)); do
    p=$(loop_ns "$(taskset -c "$CPU" "$B/strobe-bench-calls-plain" "$CALLS" 1 "$CPU")")
    row=""
    for cs in 1M 4K; do
        for lib in "${libs[@]}"; do
            read -r ns bytes <<<"$(record "$lib" "$cs")"
            row+="$(awk -v w="$ns" -v p="$p" -v b="$bytes" -v n="$CALLS" \
                'BEGIN { printf "%.4f %.4f ", (w - p) / (2 * n), b / (2 * n) }')"
        done
    done
    echo "$row" >>"$SCRATCH/writer"
done
med() { cut -d' ' -f"$1" "$2" | strobe_bench_median; }
ratio() { # column a / column b within each round, median
    awk -v a="$1" -v b="$2" '{ printf "%.3f\n", $a / $b }' "$3" | strobe_bench_median
}
echo "chunked streams, writer: ns and bytes per event over the bare loop, medians of $REPS rounds of $CALLS calls (CPU $CPU)"
if [ -z "$BASE" ]; then
    printf '  %-26s %8s ns/event %7s B/event\n' "chunks of 1 MiB" "$(med 1 "$SCRATCH/writer")" "$(med 2 "$SCRATCH/writer")"
    printf '  %-26s %8s ns/event %7s B/event\n' "chunks of 4 KiB" "$(med 3 "$SCRATCH/writer")" "$(med 4 "$SCRATCH/writer")"
    echo "  STROBE_BENCH_BASE_LIB is not set: no build without chunked streams to compare with"
else
    for k in 0 1; do
        c=$((4 * k + 1))
        cs=$([ $k = 0 ] && echo "1 MiB" || echo "4 KiB")
        printf '  chunks of %-6s before %8s ns/event %7s B/event  after %8s ns/event %7s B/event  after/before x%s ns, x%s B\n' \
            "$cs" "$(med $((c + 2)) "$SCRATCH/writer")" "$(med $((c + 3)) "$SCRATCH/writer")" \
            "$(med $c "$SCRATCH/writer")" "$(med $((c + 1)) "$SCRATCH/writer")" \
            "$(ratio $c $((c + 2)) "$SCRATCH/writer")" "$(ratio $((c + 1)) $((c + 3)) "$SCRATCH/writer")"
    done
fi

# ---- 2. export in one file vs in parts ----
timed() { # command... -> "seconds peak-RSS-KiB"
    /usr/bin/time -f '%e %M' -o "$SCRATCH/time" "$@" >/dev/null 2>&1 || die "$* failed"
    cat "$SCRATCH/time"
}
export_rounds() { # format ext calls -> rows "one-s one-kib split-s split-kib parts"
    local fmt=$1 ext=$2 calls=$3 exp=$SCRATCH/exp_$1
    rm -rf "$exp"
    STROBE_EXPERIMENT_DIR=$exp LD_PRELOAD=$LIB "$B/strobe-bench-calls" "$calls" 1 "$CPU" >/dev/null
    : >"$SCRATCH/export_$fmt"
    for ((r = 1; r <= REPS; r++)); do
        one=$(timed "$STROBE" export "$exp" --format "$fmt" -o "$SCRATCH/one.$ext")
        size=$(stat -c %s "$SCRATCH/one.$ext")
        rm -f "$SCRATCH/one.$ext"
        split=$(timed "$STROBE" export "$exp" --format "$fmt" -o "$SCRATCH/part.$ext" --chunk-size "$PART")
        parts=$(ls "$SCRATCH"/part-*."$ext" | wc -l)
        rm -f "$SCRATCH"/part-*."$ext"
        echo "$one $split $parts $size" >>"$SCRATCH/export_$fmt"
    done
    rm -rf "$exp"
    local f=$SCRATCH/export_$fmt
    printf '  %-8s %9s events  one file %7s s %7s MiB RSS (%s MiB)  %s parts %7s s %7s MiB RSS  split/one x%s time, x%s RSS\n' \
        "$fmt" "$((2 * calls))" "$(med 1 "$f")" "$(awk '{ printf "%.1f\n", $2 / 1024 }' "$f" | strobe_bench_median)" \
        "$(awk '{ printf "%.0f\n", $6 / 1048576 }' "$f" | strobe_bench_median)" "$(med 5 "$f")" "$(med 3 "$f")" \
        "$(awk '{ printf "%.1f\n", $4 / 1024 }' "$f" | strobe_bench_median)" \
        "$(ratio 3 1 "$f")" "$(ratio 4 2 "$f")"
}
echo "chunked exports: strobe export in one file vs --chunk-size $PART, wall time and peak RSS, medians of $REPS rounds"
export_rounds perfetto pftrace $((EVENTS / 2))
export_rounds chrome json "$CHROME_CALLS"
