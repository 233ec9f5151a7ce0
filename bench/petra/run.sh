#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The PETRA part of `make bench` (docs/petra-bench.md, docs/performance.md):
# throughput of PETRA's transactional structures against PMDK libpmemobj
# transactions under a reader-writer lock (the baseline of seed 002,
# section 5.3), both from petra-bench, in the same run.
#
#   bench/petra/run.sh BUILD_DIR
#
# Method:
#  * every point runs petra-bench once per engine, back to back, the order
#    alternating from point to point; each run makes a fresh heap file in a
#    scratch directory, prefills half of the key range (the same keys and
#    transactions for both engines, same --seed) and then runs SECONDS.
#  * workloads of the seed (Figure 5.5): lists and skiplists 40/40/20
#    insert/delete/find (write) and 10/10/80 (read); the map 40/30/10/20
#    insert/delete/update/find (write) and 10/10/5/75 (read); key range 10K
#    for the list, 1M for the skiplist and the map.
#  * matrix, chosen to fit ~6 minutes on 2 cores: the transaction-size
#    sweep 1, 2, 4, 8, 16 at 2 threads on the write mixes of all three
#    structures; the thread sweep 1, 2, 4, 8 at transaction sizes 1 and 4
#    on both mixes of all three structures.
#  * the pmemobj engine runs with PMEM_IS_PMEM_FORCE=1, so libpmemobj
#    persists with cache-line flushes and fences as PETRA does (without it
#    it would msync: a few hundred transactions per second).
#  * the table shows per point both throughputs (operations of committed
#    transactions per second), the ratio petra/pmemobj, both commit ratios
#    and flushes and fences per transaction of each engine. Goals, checked
#    at the end (PASS or MISS): petra >= 5x pmemobj on every write-dominated
#    point where both engines committed at least 100 transactions, and for
#    petra flushes/tx <= txsize + 1 and fences/tx == 1 on every point; and
#    every run's end-of-run check passed (each structure intact and holding
#    exactly the prefill plus committed INSERTs minus committed DELETEs).
#  * then every structure against both pmemobj baselines, with
#    repetitions: the seed's (`pmemobj`, one pool-wide lock) and the strong
#    one (`pmemobj-bucket`, a PMEMrwlock per bucket, for the map;
#    `pmemobj-node`, a PMEMrwlock per node, for the list and the skiplist),
#    write mix, txsize 1, 2, 4 at 1 and 2 threads, every engine REPS times
#    in rotating order; the table (baselines.py) shows per engine the median
#    ops/s and the min-max over the repetitions, and PETRA's ratio to each
#    baseline (ratio of the medians, min-max of the per-repetition ratios).
#    A failed run stops it.
# Environment: STROBE_BENCH_PETRA_SECONDS (per run, default 1),
# STROBE_BENCH_PETRA_SEED (default 1), STROBE_BENCH_PETRA_QUICK=1 (only the
# write mixes at 2 threads, txsize 1 and 4: a minute; no baselines phase),
# STROBE_BENCH_PETRA_REPS (repetitions of the baselines phase, default 3),
# STROBE_BENCH_PETRA_PHASES (`matrix baselines` by default; either alone
# runs only that phase).
# Results: BUILD_DIR/bench/results/petra_raw.txt (every run),
# petra_table.txt, petra_baselines_raw.txt, petra_baselines_table.txt.
# Nothing is written in the source tree.
BENCH_NAME=bench-petra # prefix of its messages
. "$(dirname "$0")/../lib.sh" # strict mode; a failing command is reported (lib.sh)

[ $# -eq 1 ] || die "usage: bench/petra/run.sh BUILD_DIR"
[ -d "$1" ] || die "$1: no such build directory (run cmake first)"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
PROG=$BUILD/bin/petra-bench
[ -x "$PROG" ] || die "$PROG: not built (run make first)"
command -v python3 >/dev/null || die "python3 not found (needed for the table)"
SECS=${STROBE_BENCH_PETRA_SECONDS:-1}
SEED=${STROBE_BENCH_PETRA_SEED:-1}
QUICK=${STROBE_BENCH_PETRA_QUICK:-0}
REPS=${STROBE_BENCH_PETRA_REPS:-3}
PHASES=${STROBE_BENCH_PETRA_PHASES:-matrix baselines}
case $SEED in *[!0-9]* | '') die "STROBE_BENCH_PETRA_SEED must be a number" ;; esac
case $REPS in *[!0-9]* | '' | 0) die "STROBE_BENCH_PETRA_REPS must be a number >= 1" ;; esac
for p in $PHASES; do
    case $p in matrix | baselines) ;; *) die "STROBE_BENCH_PETRA_PHASES: $p: expected matrix and/or baselines" ;; esac
done
case " $PHASES " in *" matrix "* | *" baselines "*) ;; *) die "STROBE_BENCH_PETRA_PHASES is empty" ;; esac
has_phase() { case " $PHASES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
ENGINES=$("$PROG" --help | sed -n 's/^engines built://p')
for e in petra pmemobj pmemobj-bucket pmemobj-node; do
    case " $ENGINES " in *" $e "*) ;; *) die "$PROG was built without the $e engine (engines:$ENGINES)" ;; esac
done

RESULTS=$BUILD/bench/results
mkdir -p "$RESULTS"
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench-petra.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

# point STRUCTURE MIX TXSIZE THREADS: both engines, appended to RAW
n_point=0
point() {
    local s=$1 m=$2 k=$3 t=$4 order e out
    if [ $((n_point % 2)) -eq 0 ]; then order="petra pmemobj"; else order="pmemobj petra"; fi
    n_point=$((n_point + 1))
    for e in $order; do
        # a run whose end-of-run check failed (check=FAIL) still has its
        # numbers: kept, and listed as a miss by the table
        if ! out=$(PMEM_IS_PMEM_FORCE=1 "$PROG" --engine "$e" --structure "$s" --mix "$m" --txsize "$k" \
            --threads "$t" --seconds "$SECS" --seed "$SEED" --dir "$SCRATCH" 2>"$SCRATCH/err"); then
            case $out in
            *check=FAIL*) echo "bench-petra: $(head -c 300 "$SCRATCH/err")" >&2 ;;
            *) die "petra-bench --engine $e --structure $s --mix $m --txsize $k --threads $t failed: $(head -c 300 "$SCRATCH/err")" ;;
            esac
        fi
        echo "$out" >>"$RAW"
    done
}

declare -A done_points=()
once() { # skip a point the other sweep already ran
    local key="$*"
    [ -z "${done_points[$key]:-}" ] || return 0
    done_points[$key]=1
    point "$@"
}

machine() { # the run's circumstances, appended to RAW
    printf '# date %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf '# cpu %s\n' "$(strobe_bench_cpu_model)"
    printf '# nproc %s\n' "$(nproc)"
    printf '# kernel %s\n' "$(uname -r)"
    printf '# loadavg at start %s, at end %s (other work on the machine skews the numbers)\n' "$LOAD0" "$(cut -d' ' -f1-3 /proc/loadavg)"
    printf '# filesystem %s\n' "$(df -T "$SCRATCH" | awk 'NR == 2 { print $2 }')"
}

if has_phase matrix; then
    RAW=$RESULTS/petra_raw.txt
    : >"$RAW"
    LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
    if [ "$QUICK" = 1 ]; then
        echo "bench-petra: quick: write mixes, 2 threads, txsize 1 and 4, ${SECS}s per run" >&2
        for s in list skiplist map; do
            for k in 1 4; do once "$s" write "$k" 2; done
        done
    else
        echo "bench-petra: txsize sweep (write, 2 threads) and thread sweep (txsize 1, 4), ${SECS}s per run, 2 engines" >&2
        for s in list skiplist map; do
            for k in 1 2 4 8 16; do once "$s" write "$k" 2; done
        done
        for s in list skiplist map; do
            for m in write read; do
                for k in 1 4; do
                    for t in 1 2 4 8; do once "$s" "$m" "$k" "$t"; done
                done
            done
        done
    fi
    machine >>"$RAW"
    python3 "$SRC/table.py" "$RAW" | tee "$RESULTS/petra_table.txt"
fi
[ "$QUICK" = 1 ] && exit 0
has_phase baselines || exit 0

# Every structure against both baselines: the seed's and the strong one of
# that structure (the map's lock per bucket, the list's and skiplist's lock
# per node), engines in rotating order.
echo "bench-petra: every structure against both baselines: write, txsize 1 2 4, threads 1 2, 3 engines x $REPS" >&2
RAW=$RESULTS/petra_baselines_raw.txt
: >"$RAW"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
rot=0
for s in list skiplist map; do
    if [ "$s" = map ]; then strong=pmemobj-bucket; else strong=pmemobj-node; fi
    for k in 1 2 4; do
        for t in 1 2; do
            for r in $(seq "$REPS"); do
                case $((rot % 3)) in
                0) order="petra pmemobj $strong" ;;
                1) order="pmemobj $strong petra" ;;
                *) order="$strong petra pmemobj" ;;
                esac
                rot=$((rot + 1))
                for e in $order; do
                    # a ratio to a broken baseline means nothing: a failed
                    # check stops the phase
                    out=$(PMEM_IS_PMEM_FORCE=1 "$PROG" --engine "$e" --structure "$s" --mix write --txsize "$k" \
                        --threads "$t" --seconds "$SECS" --seed "$SEED" --dir "$SCRATCH" 2>"$SCRATCH/err") ||
                        die "petra-bench --engine $e --structure $s --txsize $k --threads $t failed: $(head -c 300 "$SCRATCH/err") $out"
                    echo "$out" >>"$RAW"
                done
            done
        done
    done
done
{
    machine
    printf '# repetitions %s, %ss per run\n' "$REPS" "$SECS"
} >>"$RAW"
python3 "$SRC/baselines.py" "$RAW" | tee "$RESULTS/petra_baselines_table.txt"
