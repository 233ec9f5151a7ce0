#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The transactional-memory part of `make bench` (docs/performance.md):
# throughput of strobe's STM against GCC's libitm on the same binary, and
# the cost of strobe's TM monitoring levels.
#
#   bench/tm/run.sh BUILD_DIR
#
# Method:
#  * strobe-bench-tm (bench/tm/tm_bench.c) is an ordinary -fgnu-tm program
#    linked with libitm. "libitm" runs it as it is; "strobe" runs it with
#    libstrobe-tm.so preloaded. Each run prints the runtime its transactions
#    ran on (_ITM_libraryVersion) and the script refuses a run on the wrong
#    one. Each run checks its own result (sums, balance, set size and
#    order) and fails otherwise.
#  * kernels update, bank, list, hash at 1, 2 and 4 threads; repetitions are
#    interleaved (rep 1 of everything, then rep 2, ...); the ratio
#    strobe/libitm is computed within each repetition and the median is
#    reported with its min-max.
#  * monitoring: bank and update at 2 threads under `strobe run
#    --tm-monitor off|counters|stats|events` (the experiment goes to a scratch
#    directory); throughput relative to "off" in the same repetition. Each
#    level also runs with STROBE_TM_HTM=0 ("stm-"): where the processor has
#    RTM, "off", "counters" and "stats" use hardware transactions and
#    "events" cannot, so its cost is judged against "off" on the STM.
# Environment: STROBE_BENCH_TM_REPS (default 5), STROBE_BENCH_TM_OPS
# (operations per run, default 1000000).
# Results: BUILD_DIR/bench/results/tm_raw.tsv (every run) and tm_table.txt.
BENCH_NAME=bench-tm # prefix of its messages
. "$(dirname "$0")/../lib.sh" # strict mode; a failing command is reported (lib.sh)

[ $# -eq 1 ] || die "usage: bench/tm/run.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
PROG=$BUILD/bench/strobe-bench-tm
STM=$BUILD/lib/libstrobe-tm.so
STROBE=$BUILD/bin/strobe
for f in "$PROG" "$STM" "$STROBE"; do
    [ -e "$f" ] || die "$f: not built (run make first)"
done
REPS=${STROBE_BENCH_TM_REPS:-5}
OPS=${STROBE_BENCH_TM_OPS:-1000000}
RESULTS=$BUILD/bench/results
mkdir -p "$RESULTS"
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench-tm.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
RAW=$RESULTS/tm_raw.tsv
printf 'rep\tconfig\tkernel\tthreads\tops_per_s\n' > "$RAW"

# run REP CONFIG KERNEL THREADS: one run, appended to RAW
run() {
    local rep=$1 config=$2 kernel=$3 threads=$4 out want
    case $config in
    libitm)
        want=libitm
        out=$("$PROG" "$kernel" "$threads" "$OPS") || die "$kernel $threads on libitm failed"
        ;;
    strobe)
        want=strobe-tm
        out=$(LD_PRELOAD=$STM "$PROG" "$kernel" "$threads" "$OPS") || die "$kernel $threads on strobe failed"
        ;;
    mon-* | stm-*)
        # stm-LEVEL: the same on the STM alone (no hardware transactions)
        want=strobe-tm
        level=${config#*-}
        htm=1
        [ "${config%%-*}" = stm ] && htm=0
        rm -rf "$SCRATCH/exp"
        out=$(STROBE_TM_HTM=$htm "$STROBE" run --tm-monitor "$level" -o "$SCRATCH/exp" -- "$PROG" "$kernel" \
            "$threads" "$OPS" 2>/dev/null) || die "$kernel $threads under strobe run --tm-monitor $level failed"
        out=$(echo "$out" | grep "^$kernel ")
        ;;
    esac
    set -- $out
    [ "${6:-}" = "$want" ] || die "$config run of $kernel ran on '${6:-?}', not $want"
    printf '%s\t%s\t%s\t%s\t%s\n' "$rep" "$config" "$kernel" "$threads" "$5" >> "$RAW"
}

echo "bench-tm: $REPS repetitions, $OPS operations per run" >&2
for rep in $(seq 1 "$REPS"); do
    for kernel in update bank list hash; do
        for threads in 1 2 4; do
            # alternate the order so neither runtime always runs first
            if [ $((rep % 2)) -eq 0 ]; then
                run "$rep" libitm "$kernel" "$threads"
                run "$rep" strobe "$kernel" "$threads"
            else
                run "$rep" strobe "$kernel" "$threads"
                run "$rep" libitm "$kernel" "$threads"
            fi
        done
    done
    for kernel in bank update; do
        for level in off counters stats events; do
            run "$rep" "mon-$level" "$kernel" 2
            run "$rep" "stm-$level" "$kernel" 2
        done
    done
    echo "bench-tm: repetition $rep/$REPS done" >&2
done

python3 "$SRC/table.py" "$RAW" | tee "$RESULTS/tm_table.txt"

# STAMP's applications (bench/tm/stamp.sh): only when STROBE_STAMP_DIR names
# the stamp_c folder of mfs409/transmem; otherwise it says so in one line.
"$SRC/stamp.sh" "$BUILD"
