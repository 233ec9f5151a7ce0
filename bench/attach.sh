#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The attach part of `make bench` (docs/performance.md): what `strobe record
# --pid` costs a running program, and how well its profile agrees with
# `perf record -p` on the same program, in the same run.
#
#   bench/attach.sh BUILD_DIR
#
# Method:
#  * the program is tests/cli/attach_prog.c built plain by gcc -O2 (no frame
#    pointers, no -g): one thread loops in caller() -> hot() (~90 %) and
#    warm() (~10 %), and prints its loop iterations per second over a
#    window of SECS seconds, per wall second (what the recorder's work on
#    the program's CPU, the sample interrupts and stack copies, and other
#    load on that CPU take away) and per CPU second of the process (what
#    is charged to the program itself); pinned to CPU STROBE_BENCH_CPU
#    (default the last), the recorders to the others.
#  * configurations, interleaved per repetition: bare (the anchor),
#    `strobe record --pid` at 1 kHz, and `perf record -p` with the same
#    event, rate and stack copies (-e task-clock:u -c 1000000 --call-graph
#    dwarf,8192), each attached for the whole window; medians over the
#    repetitions: the program's throughput and its ratio to bare, the
#    recorder's own CPU time (user + system).
#  * agreement: the self share of hot and warm and the total share of
#    caller, from `strobe report --samples --format json` and from `perf
#    report` of the last repetition; and what each recorder's work costs
#    per sample there: strobe's unwinds as it records, perf's when `perf
#    report` reads the copies (its time is added).
# Environment: STROBE_BENCH_ATTACH_SECS (default 3), STROBE_BENCH_ATTACH_REPS
# (default 5), STROBE_BENCH_CPU.
BENCH_NAME=bench-attach
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/attach.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)/tests/cli/attach_prog.c
STROBE=$BUILD/bin/strobe
[ -x "$STROBE" ] || die "$STROBE: not built (run make first)"
command -v gcc >/dev/null || die "gcc is not installed"
SECS=${STROBE_BENCH_ATTACH_SECS:-3}
REPS=${STROBE_BENCH_ATTACH_REPS:-5}
CPU=${STROBE_BENCH_CPU:-$(($(nproc) - 1))}
case "$SECS$REPS$CPU" in *[!0-9]*) die "STROBE_BENCH_ATTACH_SECS/REPS and STROBE_BENCH_CPU must be numbers" ;; esac
OTHERS=$(seq 0 $(($(nproc) - 1)) | grep -vx "$CPU" | paste -sd, -)
[ -n "$OTHERS" ] || OTHERS=$CPU
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
PROG=$SCRATCH/attach_prog
gcc -O2 -pthread "$SRC" -o "$PROG"

PERF=$(command -v perf || true)
if [ -n "$PERF" ] && ! "$PERF" record -q -e task-clock:u -c 1000000 --call-graph dwarf,8192 -o "$SCRATCH/probe.data" -- true >/dev/null 2>&1; then
    echo "bench-attach: perf record cannot record here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?')): not compared"
    PERF=
elif [ -z "$PERF" ]; then
    echo "bench-attach: perf is not installed (Debian linux-perf): not compared"
fi

calc() { awk "BEGIN { print $* }"; } # arithmetic on decimals (no bc needed)

# one run of the program, attached to by RECORDER (none, strobe, perf):
# prints its iterations per wall and per CPU second and the recorder's
# CPU seconds
run() {
    local out=$SCRATCH/out pid cpu=0
    taskset -c "$CPU" "$PROG" 1 "$SECS" >"$out" &
    pid=$!
    until [ -s "$out" ]; do sleep 0.01; done # "ready": the window starts
    local TIMEFORMAT=%U+%S
    case $1 in
    strobe) rm -rf "$SCRATCH/e"; cpu=$({ time taskset -c "$OTHERS" "$STROBE" record --pid "$pid" -o "$SCRATCH/e" 2>/dev/null; } 2>&1) ;;
    strobe1) rm -rf "$SCRATCH/e1"; cpu=$({ time taskset -c "$OTHERS" "$STROBE" record -F 1 --pid "$pid" -o "$SCRATCH/e1" 2>/dev/null; } 2>&1) ;;
    perf) rm -f "$SCRATCH/perf.data"; cpu=$({ time taskset -c "$OTHERS" "$PERF" record -q -e task-clock:u -c 1000000 --call-graph dwarf,8192 \
        -p "$pid" -o "$SCRATCH/perf.data" >/dev/null 2>&1; } 2>&1) ;;
    esac
    wait "$pid"
    echo "$(tail -1 "$out") $(calc "$cpu")"
}
declare -a bare bare_c strobe strobe_c perf perf_c scpu pcpu s1cpu
for r in $(seq "$REPS"); do
    read -r v w _ <<<"$(run none)"; bare+=("$v"); bare_c+=("$w")
    read -r v w c <<<"$(run strobe)"; strobe+=("$v"); strobe_c+=("$w"); scpu+=("$c"); slast=$c
    read -r _ _ c <<<"$(run strobe1)"; s1cpu+=("$c")
    if [ -n "$PERF" ]; then
        read -r v w c <<<"$(run perf)"; perf+=("$v"); perf_c+=("$w"); pcpu+=("$c"); plast=$c
    fi
done
median() { printf '%s\n' "$@" | strobe_bench_median; }
B=$(median "${bare[@]}")
BC=$(median "${bare_c[@]}")
echo "bench-attach: attach_prog (gcc -O2, no frame pointers), 1 thread on CPU $CPU, recorders on CPU $OTHERS; ${SECS} s windows, medians of $REPS; $(strobe_bench_cpu_model)"
printf '  %-48s %8s %7s  %8s %7s  %s\n' "configuration" "iter/s" "vs bare" "iter/CPUs" "vs bare" "recorder CPU"
row() { # NAME WALL CPU RECORDER-CPU
    printf '  %-48s %8.1f %7.3f  %8.1f %7.3f  %s\n' "$1" "$2" "$(calc "$2 / $B")" "$3" "$(calc "$3 / $BC")" "$4"
}
row "bare" "$B" "$BC" ""
row "strobe record --pid (1 kHz, 8 KiB stacks)" "$(median "${strobe[@]}")" "$(median "${strobe_c[@]}")" \
    "$(printf '%.2f s' "$(median "${scpu[@]}")")"
if [ -n "$PERF" ]; then
    row "perf record -p (task-clock:u 1 kHz, dwarf,8192)" "$(median "${perf[@]}")" "$(median "${perf_c[@]}")" \
        "$(printf '%.2f s (+ perf report)' "$(median "${pcpu[@]}")")"
fi

S1=$(median "${s1cpu[@]}")
echo "  strobe record --pid -F 1 (start-up alone): $(printf '%.3f' "$S1") s of recorder CPU"

# agreement, last repetition
"$STROBE" report "$SCRATCH/e" --samples --format json | python3 -c '
import json, sys
s = json.load(sys.stdin)["samples"]
f = {x["name"]: x for x in s["functions"]}
n = s["samples"]
print(" ".join("%.1f" % (100.0 * f.get(k, {}).get(w, 0) / n) for k, w in (("hot", "self"), ("warm", "self"), ("caller", "total"))), n)
' >"$SCRATCH/strobe.shares"
read -r sh sw sc sn <"$SCRATCH/strobe.shares"
echo "  agreement (last repetition)      hot self  warm self  caller total  samples  recorder CPU per sample"
printf '  %-30s %8s%%  %8s%%  %11s%%  %7s  %.1f us (start-up not counted)\n' "strobe record --pid" "$sh" "$sw" "$sc" \
    "$sn" "$(calc "($slast - $S1) * 1000000 / $sn")"
if [ -n "$PERF" ]; then
    share() { # the share of symbol $2 in perf report's output $1 (first column)
        awk -v s="$2" '$NF == s { sub(/%/, "", $1); print $1; exit }' "$1"
    }
    "$PERF" report -i "$SCRATCH/perf.data" --stdio --no-children -s sym -q -g none 2>/dev/null >"$SCRATCH/self"
    TIMEFORMAT=%U+%S # the report that unwinds the copies: callers' totals
    rcpu=$({ time "$PERF" report -i "$SCRATCH/perf.data" --stdio --children -s sym -q -g none 2>/dev/null \
        >"$SCRATCH/children"; } 2>&1)
    pn=$("$PERF" report -i "$SCRATCH/perf.data" --stdio --no-children -q -g none -F overhead,sample,sym 2>/dev/null |
        awk '{ n += $2 } END { print n }')
    if [ "${pn:-0}" -gt 0 ]; then
        printf '  %-30s %8s%%  %8s%%  %11s%%  %7s  %.0f us (+ %.0f us perf report)\n' "perf record -p" \
            "$(share "$SCRATCH/self" hot)" "$(share "$SCRATCH/self" warm)" "$(share "$SCRATCH/children" caller)" \
            "$pn" "$(calc "$plast * 1000000 / $pn")" "$(calc "($rcpu) * 1000000 / $pn")"
    else # attached too late: the window is over before perf started on a busy host
        echo "  perf record -p: no samples in the last repetition (raise STROBE_BENCH_ATTACH_SECS)"
    fi
fi
