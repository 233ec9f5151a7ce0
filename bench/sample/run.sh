#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The sampling part of `make bench` (docs/performance.md): what `strobe run
# --sample` costs a CPU-bound program, against the same program bare and
# under `perf record -F 1000 -g`, in the same run.
#
#   bench/sample/run.sh BUILD_DIR
#
# Method:
#  * strobe-bench-sample (bench/sample/sample_bench.c) descends 20 frames
#    and runs a dependent floating-point chain there (ITER iterations),
#    printing the thread CPU ns of that phase (what the signals and the
#    handler add shows there; a busy host's steal time does not); pinned
#    to STROBE_BENCH_CPU (default the last CPU), `strobe run` and perf run
#    beside it.
#  * configurations, interleaved per repetition: bare (the anchor),
#    `strobe run --sample` (1 kHz) with the default CPU-time timers and
#    with STROBE_SAMPLE_SOURCE=perf, --sample=10000 with the perf source
#    (to time a signal: the extra time over bare divided by the signals
#    handled; the timers' signals are too few for that, the tick caps
#    them), and
#    `perf record -F 1000 -g` when perf can record here (one line says so
#    otherwise); medians over the repetitions.
#  * the stack walk alone at 20 frames: libunwind's unw_step loop,
#    unw_backtrace (what the sampler's handler uses) and a frame-pointer
#    walk, in one process.
# Environment: STROBE_BENCH_SAMPLE_ITER (default 600000000, about 1 s),
# STROBE_BENCH_SAMPLE_REPS (default 5), STROBE_BENCH_CPU.
BENCH_NAME=bench-sample
. "$(dirname "$0")/../lib.sh"

[ $# -eq 1 ] || die "usage: bench/sample/run.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
PROG=$BUILD/bench/strobe-bench-sample
STROBE=$BUILD/bin/strobe
for f in "$PROG" "$STROBE" "$BUILD/lib/libstrobe.so"; do
    [ -e "$f" ] || die "$f: not built (run make first)"
done
ITER=${STROBE_BENCH_SAMPLE_ITER:-600000000}
REPS=${STROBE_BENCH_SAMPLE_REPS:-5}
CPU=${STROBE_BENCH_CPU:-$(($(nproc) - 1))}
case "$ITER$REPS$CPU" in *[!0-9]*) die "STROBE_BENCH_SAMPLE_ITER/REPS and STROBE_BENCH_CPU must be numbers" ;; esac
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

PERF=$(command -v perf || true)
if [ -n "$PERF" ] && ! "$PERF" record -q -F 1000 -g -o "$SCRATCH/probe.data" -- true >/dev/null 2>&1; then
    echo "bench-sample: perf record cannot record here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?')): not compared"
    PERF=
elif [ -z "$PERF" ]; then
    echo "bench-sample: perf is not installed (Debian linux-perf): not compared"
fi

cpu() { awk '{ print $4 }'; } # the thread CPU ns of the work phase: steal time of a busy host excluded
records() { # DIR: the SAMPLE records (signals handled) of the experiment
    "$STROBE" report "$1" --samples --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"]["records"])'
}
sampled() { # SOURCE HZ: wall ns of one sampled run, then its records
    rm -rf "$SCRATCH/e"
    local w
    w=$(STROBE_SAMPLE_SOURCE=$1 "$STROBE" run --sample="$2" -o "$SCRATCH/e" -- taskset -c "$CPU" "$PROG" work "$ITER" 2>/dev/null | cpu)
    echo "$w $(records "$SCRATCH/e")"
}
declare -a bare s1k p1k p10k pn10k perf
for r in $(seq "$REPS"); do
    bare+=("$(taskset -c "$CPU" "$PROG" work "$ITER" | cpu)")
    read -r w _ <<<"$(sampled timer 1000)"; s1k+=("$w")
    read -r w _ <<<"$(sampled perf 1000)"; p1k+=("$w")
    read -r w n <<<"$(sampled perf 10000)"; p10k+=("$w"); pn10k+=("$n")
    if [ -n "$PERF" ]; then
        perf+=("$("$PERF" record -q -F 1000 -g -o "$SCRATCH/perf.data" -- taskset -c "$CPU" "$PROG" work "$ITER" 2>/dev/null | cpu)")
    fi
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
B=$(median "${bare[@]}")
S1=$(median "${s1k[@]}")
P1=$(median "${p1k[@]}")
P10=$(median "${p10k[@]}")
PN10=$(median "${pn10k[@]}")
echo "sampling: a CPU-bound program 20 frames deep, thread CPU time of its work phase, medians of $REPS runs (CPU $CPU)"
awk -v b="$B" -v s="$S1" 'BEGIN { printf "  CPU time: bare %.1f ms; strobe run --sample (1 kHz, CPU-time timers) %.1f ms: slowdown %+.2f %% (goal <= 1 %%: %s)\n", b / 1e6, s / 1e6, 100 * (s - b) / b, (100 * (s - b) / b <= 1 ? "met" : "NOT met") }'
awk -v b="$B" -v s="$P1" 'BEGIN { printf "  STROBE_SAMPLE_SOURCE=perf --sample (1 kHz) %.1f ms: slowdown %+.2f %%\n", s / 1e6, 100 * (s - b) / b }'
awk -v b="$B" -v s="$P10" -v n="$PN10" 'BEGIN { printf "  STROBE_SAMPLE_SOURCE=perf --sample=10000 %.1f ms, %d signals: %.2f us per signal (kernel delivery, stack walk, record)\n", s / 1e6, n, (s - b) / n / 1e3 }'
if [ -n "$PERF" ]; then
    P=$(median "${perf[@]}")
    awk -v b="$B" -v p="$P" -v s="$S1" 'BEGIN { printf "  perf record -F 1000 -g %.1f ms: slowdown %+.2f %%; strobe / perf time x%.3f\n", p / 1e6, 100 * (p - b) / b, s / p }'
fi
walks=$(taskset -c "$CPU" "$PROG" walk 100000)
read -r _ step _ fs _ _ bt _ bf _ _ fp _ ff _ <<<"$(head -1 <<<"$walks")"
read -r _ sig _ _ p90 _ nw _ _ again _ <<<"$(tail -1 <<<"$walks")"
echo "  stack walk at $bf frames: unw_backtrace $bt ns (the sampler's), unw_step loop $step ns, frame pointers $fp ns ($ff frames)"
echo "  unw_backtrace from a SIGPROF handler at 20 frames: median $sig ns, 90th percentile $p90 ns ($nw signals); the same walk repeated at once: median $again ns"
