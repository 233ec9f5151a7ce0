#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Basic-block and memory tracing, and task-graph construction (part of
# `make bench`; docs/performance.md, "Block and memory tracing"): SPLASH-3
# programs at 2 threads built with `strobe cc --trace=...` and run under
# `strobe run`, against the same programs built with plain clang and with
# clang's sanitizer-coverage callbacks recording the same data (the anchor
# for the instrumentation method), in the same run.
#
#   STROBE_SPLASH3_DIR=DIR bench/bbtrace.sh BUILD_DIR
#
# DIR is a checkout of github.com/SakalisC/Splash-3 (its top folder or its
# codes/ folder), kept outside the repository. Without STROBE_SPLASH3_DIR
# the script prints one line and ends successfully.
#
# Builds (SPLASH-3's own makefiles and m4 pthread macros, into
# BUILD_DIR/bench/bbtrace, with SPLASH-3's CFLAGS: -O2 -g ...):
#   plain   clang
#   func    strobe cc --trace=func (function enter/exit only)
#   bb      strobe cc --trace=bb   (block ids)
#   bbmem   strobe cc --trace=bb,mem (block ids and memory addresses)
#   sancov  clang -fsanitize-coverage=trace-pc-guard,trace-loads,trace-stores
#           with bench/sancov_trace.c's callbacks linked in
# Configurations: each build run as it is (plain, sancov: its callbacks
# write their files), func/bb/bbmem under `strobe run -o EXP --`, and
# bbmem also without strobe ("bbmem_bare": the inline code writes into the
# cursor's scratch area; what the instrumentation costs without the
# runtime and the stream's pages).
#
# Measured per run: the program's own time (libstrobe-bench-lifetime.so,
# bench/lifetime.c, preloaded) and the whole command's wall time (start-up
# and `strobe run`'s wait at exit included); the bytes of the block streams
# (t*.bb) and of the whole experiment; blocks and memory events (elided
# ones included) from `strobe report --format json`; for sancov the bytes
# it wrote and the accesses it recorded. Slowdown = time / plain time of
# the same repetition; medians [min-max] over STROBE_BENCH_BBTRACE_REPS
# (default 3) interleaved repetitions whose configuration order rotates;
# geomean over the programs of the median slowdowns.
#
# Task graph, over the largest bbmem experiment of the last repetition:
# its construction, `strobe taskgraph EXP --format text` (the summaries),
# STROBE_BENCH_BBTRACE_TG_REPS (default 3) times: events per CPU second
# (user + system; every event the builder decodes: block events, the
# memory accesses it rebuilds, event records) and per wall second, peak
# RSS (/usr/bin/time), medians; and once the whole graph as JSON
# (`--format json`: every task and edge), its time and size, and the
# events the builder says it read (taskgraph.events).
#
# STROBE_BENCH_BBTRACE_PROGS (space-separated names, default all) limits the
# programs, for debugging.
# Results: BUILD_DIR/bench/results/bbtrace_raw.tsv (every run),
# bbtrace_taskgraph.tsv, bbtrace_table.txt and bbtrace_table.md.
BENCH_NAME=bench-bbtrace # prefix of its messages
. "$(dirname "$0")/lib.sh" # strict mode; a failing command is reported (lib.sh)

[ $# -eq 1 ] || die "usage: STROBE_SPLASH3_DIR=DIR bench/bbtrace.sh BUILD_DIR"
optional_sources STROBE_SPLASH3_DIR "block and memory tracing on SPLASH-3" \
    "fetch github.com/SakalisC/Splash-3 outside the repository and point STROBE_SPLASH3_DIR at it"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
S3=$(splash3_codes "$STROBE_SPLASH3_DIR") || exit 1
STROBE=$BUILD/bin/strobe
LIFETIME=$BUILD/bench/libstrobe-bench-lifetime.so
SANCOV_LIB=$BUILD/bench/libstrobe-bench-sancov.a
for f in "$STROBE" "$LIFETIME" "$SANCOV_LIB"; do [ -e "$f" ] || die "$f: not built (run make first)"; done
for c in m4 make clang python3 /usr/bin/time; do command -v "$c" >/dev/null || die "$c not found (make deps installs it)"; done
REPS=${STROBE_BENCH_BBTRACE_REPS:-3}
TG_REPS=${STROBE_BENCH_BBTRACE_TG_REPS:-3}
case "$REPS/$TG_REPS" in *[!0-9/]* | 0/* | */0 | /* | */) die "STROBE_BENCH_BBTRACE_REPS and _TG_REPS must be numbers >= 1" ;; esac
THREADS=2

RESULTS=$BUILD/bench/results
WORK=$BUILD/bench/bbtrace
mkdir -p "$RESULTS" "$WORK"
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench-bbtrace.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

# name, folder under codes/, executable, arguments (-p: threads), stdin.
# Sizes: the plain programs run about 0.3-1 s on the 2-core development
# machine; the block streams of bbmem are then 1-4 GB.
ALL_PROGS="fft lu radix ocean water barnes"
PROGS=${STROBE_BENCH_BBTRACE_PROGS:-$ALL_PROGS}
declare -A DIR=([fft]=kernels/fft [lu]=kernels/lu/contiguous_blocks [radix]=kernels/radix
    [ocean]=apps/ocean/contiguous_partitions [water]=apps/water-nsquared [barnes]=apps/barnes)
declare -A EXE=([fft]=FFT [lu]=LU [radix]=RADIX [ocean]=OCEAN [water]=WATER-NSQUARED [barnes]=BARNES)
declare -A ARGS=([fft]="-p$THREADS -m20" [lu]="-p$THREADS -n1024" [radix]="-p$THREADS -n4194304"
    [ocean]="-p$THREADS -n514" [water]="" [barnes]="")
for p in $PROGS; do [ -n "${DIR[$p]:-}" ] || die "STROBE_BENCH_BBTRACE_PROGS: unknown program $p (known: $ALL_PROGS)"; done
# water-nsquared reads its parameters on stdin (SPLASH-3's input with 1000
# molecules, 3 steps, THREADS processors); barnes too (its input with 16384
# bodies and THREADS processors)
declare -A INPUT=([water]=$SCRATCH/water.in [barnes]=$SCRATCH/barnes.in)
awk -v t="$THREADS" 'NR == 1 { $2 = 1000 } NR == 3 { $1 = t } { print }' "$S3/${DIR[water]}/input" >"$SCRATCH/water.in"
awk -v t="$THREADS" 'NR == 2 { $0 = 16384 } { line[NR] = $0 } END { line[NR] = t; for (i = 1; i <= NR; i++) print line[i] }' \
    "$S3/${DIR[barnes]}/input" >"$SCRATCH/barnes.in"

# ---- build -------------------------------------------------------------------
CFLAGS_BASE=$(sed -n '/^CFLAGS := /{s///p;q}' "$S3/Makefile.config")
[ -n "$CFLAGS_BASE" ] || die "$S3/Makefile.config: no 'CFLAGS := ' line"
declare -A BUILT # build -> "ok" or why not
declare -A CCOF=([plain]=clang [func]="$STROBE cc --trace=func" [bb]="$STROBE cc --trace=bb"
    [bbmem]="$STROBE cc --trace=bb,mem" [sancov]=clang)
BUILDS="plain func bb bbmem sancov"
# strobe cc before --trace existed instrumented functions only: that build
# is func, and bb/bbmem cannot be built
echo 'int main(void) { return 0; }' >"$SCRATCH/probe.c"
if ! "$STROBE" cc --trace=bb,mem -c "$SCRATCH/probe.c" -o "$SCRATCH/probe.o" >"$SCRATCH/probe.log" 2>&1; then
    CCOF[func]="$STROBE cc"
    BUILT[bb]="strobe cc --trace=bb,mem cannot compile: $(head -1 "$SCRATCH/probe.log")"
    BUILT[bbmem]=${BUILT[bb]}
fi
dirs=()
for p in $PROGS; do dirs+=("${DIR[$p]}"); done
for b in $BUILDS; do
    [ -z "${BUILT[$b]:-}" ] || continue
    flags=$CFLAGS_BASE ldflags=-lm
    if [ "$b" = sancov ]; then
        flags="$flags -fsanitize-coverage=trace-pc-guard,trace-loads,trace-stores"
        ldflags="-lm $SANCOV_LIB"
    fi
    echo "bench-bbtrace: building {$PROGS} with ${CCOF[$b]} ($b)" >&2
    splash3_build "$S3" "$WORK/$b" "$SCRATCH/make.log" CC="${CCOF[$b]}" CFLAGS="$flags" LDFLAGS="$ldflags" -- "${dirs[@]}"
    BUILT[$b]=ok
done

# ---- one run -----------------------------------------------------------------
RAW=$RESULTS/bbtrace_raw.tsv
printf 'rep\tprogram\tconfig\tprogram_ns\tprogram_cpu_ns\tcommand_ns\tbb_bytes\texperiment_bytes\tblocks\tmemory_events\tstatus\n' >"$RAW"

usec_now() {
    local t=$EPOCHREALTIME
    echo "${t/./}"
}

sum_sizes() { # dir find-args...: total size in bytes of the matching files
    local d=$1
    shift
    find "$d" -type f "$@" -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# blocks_of EXP: "BLOCKS MEMORY_EVENTS" from strobe report's blocks summary
blocks_of() {
    "$STROBE" report "$1" --format json 2>"$SCRATCH/report.err" | python3 -c '
import json, sys
b = json.load(sys.stdin).get("blocks")
if not b:
    sys.exit("no blocks summary in strobe report --format json")
print(b["blocks"], b["reads"] + b["writes"])'
}

KEEP=""       # the largest bbmem experiment of the last repetition
KEEP_BYTES=0
run_one() { # rep program config
    local rep=$1 p=$2 cfg=$3
    local build=${cfg%_bare}
    local exe=$WORK/$build/${DIR[$p]}/${EXE[$p]} out=$SCRATCH/out-$p-$cfg
    local -a args
    read -r -a args <<<"${ARGS[$p]}"
    local -a cmd=("$exe" "${args[@]}") env=()
    case $cfg in
    func | bb | bbmem) cmd=("$STROBE" run -o "$out" -- "${cmd[@]}") ;;
    sancov)
        mkdir -p "$out"
        env=(STROBE_BENCH_SANCOV_DIR="$out")
        ;;
    esac
    rm -rf "$SCRATCH/lifetime"
    local status=ok t0 t1
    t0=$(usec_now)
    # water-nsquared opens random.in in its working directory
    (cd "$(dirname "$exe")" && env "${env[@]}" STROBE_TRACE_LIMIT=0 STROBE_BENCH_LIFETIME="$SCRATCH/lifetime" \
        LD_PRELOAD="$LIFETIME" "${cmd[@]}" <"${INPUT[$p]:-/dev/null}" >"$SCRATCH/stdout" 2>"$SCRATCH/stderr") ||
        status="exit status $?: $(tail -c 200 "$SCRATCH/stderr" | tr '\t\n' '  ')"
    t1=$(usec_now)
    local prog_ns prog_cpu_ns
    read -r prog_ns prog_cpu_ns < <(awk -v n="${EXE[$p]}" '$1 == n { v = $2 " " $3 } END { print v }' \
        "$SCRATCH/lifetime" 2>/dev/null || true)
    [ -n "$prog_ns" ] || [ "$status" != ok ] || status="no lifetime line for ${EXE[$p]}"
    local bb_bytes=- exp_bytes=- blocks=- mem=-
    if [ "$status" = ok ]; then
        case $cfg in
        func | bb | bbmem)
            exp_bytes=$(sum_sizes "$out")
            bb_bytes=$(sum_sizes "$out" -name 't*.bb')
            if [ "$cfg" != func ]; then
                local counts
                if counts=$(blocks_of "$out"); then
                    read -r blocks mem <<<"$counts"
                else
                    status="strobe report: $(head -c 200 "$SCRATCH/report.err" | tr '\t\n' '  ')"
                fi
            fi
            ;;
        sancov)
            local acc bytes
            read -r _ acc _ bytes <"$out/counts" || status="no counts written by the sancov callbacks"
            exp_bytes=$(sum_sizes "$out" -name 't*.bin')
            [ "$exp_bytes" = "$bytes" ] || status="sancov wrote $exp_bytes bytes but counted $bytes"
            bb_bytes=$exp_bytes mem=$acc blocks=$(((bytes - 8 * acc) / 4))
            ;;
        esac
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$p" "$cfg" "${prog_ns:--}" "${prog_cpu_ns:--}" \
        "$(((t1 - t0) * 1000))" "$bb_bytes" "$exp_bytes" "$blocks" "$mem" "$status" >>"$RAW"
    if [ "$cfg" = bbmem ] && [ "$rep" = "$REPS" ] && [ "$status" = ok ] && [ "$exp_bytes" -gt "$KEEP_BYTES" ]; then
        [ -z "$KEEP" ] || rm -rf "$KEEP"
        KEEP=$SCRATCH/keep-$p
        KEEP_BYTES=$exp_bytes
        mv "$out" "$KEEP"
    fi
    rm -rf "$out"
}

CONFIGS=()
for c in plain func bb bbmem bbmem_bare sancov; do
    if [ "${BUILT[${c%_bare}]}" = ok ]; then
        CONFIGS+=("$c")
    else
        for p in $PROGS; do
            printf '1\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$p" "$c" "${BUILT[${c%_bare}]}" >>"$RAW"
        done
    fi
done
echo "bench-bbtrace: SPLASH-3 from $S3: $REPS repetitions x {$PROGS} x {${CONFIGS[*]}}, $THREADS threads" >&2
n=${#CONFIGS[@]}
for rep in $(seq 1 "$REPS"); do
    for p in $PROGS; do
        for i in $(seq 0 $((n - 1))); do
            run_one "$rep" "$p" "${CONFIGS[$(((i + rep) % n))]}"
        done
    done
    echo "bench-bbtrace: repetition $rep/$REPS done" >&2
done

# ---- task graph --------------------------------------------------------------
TG=$RESULTS/bbtrace_taskgraph.tsv
printf 'program\trep\ttg_events\trecorded_events\tseconds\tcpu_seconds\tpeak_rss_kb\tbytes\tjson_seconds\tjson_bytes\tstatus\n' >"$TG"
if [ -z "$KEEP" ]; then
    printf -- '-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tno bbmem experiment recorded\n' >>"$TG"
else
    p=${KEEP##*/keep-}
    # recorded: block events + memory events (the run's row) + the records
    # of the event streams (strobe report's summary), all of which the
    # builder decodes
    recorded=$(awk -F'\t' -v r="$REPS" -v p="$p" '$1 == r && $2 == p && $3 == "bbmem" { print $9 + $10 }' "$RAW")
    evt=$("$STROBE" report "$KEEP" --format json | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["events"])')
    recorded=$((recorded + evt))
    # the whole graph as JSON, once (a GB for barnes: read by a stream for
    # the summary's first member rather than parsed whole)
    json_secs=- json_bytes=- tg_events=- json_status=ok
    if /usr/bin/time -f '%e' -o "$SCRATCH/time" "$STROBE" taskgraph "$KEEP" --format json \
        -o "$SCRATCH/taskgraph.json" >"$SCRATCH/tg.log" 2>&1; then
        json_secs=$(tail -1 "$SCRATCH/time")
        json_bytes=$(stat -c %s "$SCRATCH/taskgraph.json")
        tg_events=$(grep -a -A1 '^  "taskgraph": {$' "$SCRATCH/taskgraph.json" |
            sed -n 's/^ *"events": \([0-9]*\),$/\1/p')
        [ -n "$tg_events" ] || json_status="no taskgraph.events in the JSON of strobe taskgraph"
    else
        json_status="strobe taskgraph --format json failed: $(tail -c 200 "$SCRATCH/tg.log" | tr '\t\n' '  ')"
    fi
    rm -f "$SCRATCH/taskgraph.json"
    for rep in $(seq 1 "$TG_REPS"); do
        status=$json_status secs=- cpu=- rss=-
        if /usr/bin/time -f '%e %U %S %M' -o "$SCRATCH/time" "$STROBE" taskgraph "$KEEP" --format text \
            -o "$SCRATCH/taskgraph.txt" >"$SCRATCH/tg.log" 2>&1; then
            read -r secs user sys rss < <(tail -1 "$SCRATCH/time")
            cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
        else
            status="strobe taskgraph failed: $(tail -c 200 "$SCRATCH/tg.log" | tr '\t\n' '  ')"
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "$rep" "$tg_events" "$recorded" "$secs" \
            "$cpu" "$rss" "$KEEP_BYTES" "$json_secs" "$json_bytes" "$status" >>"$TG"
    done
fi

{
    printf 'date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf 'cpu\t%s\n' "$(strobe_bench_cpu_model)"
    printf 'nproc\t%s\n' "$(nproc)"
    printf 'load\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
    printf 'threads\t%s\n' "$THREADS"
    printf 'splash3\t%s (%s)\n' "$S3" "$(git -C "$S3" rev-parse --short HEAD 2>/dev/null || echo "not a git checkout")"
    printf 'clang\t%s\n' "$(clang --version | sed -n 1p)"
    for p in $PROGS; do
        printf 'command.%s\t%s %s\n' "$p" "${EXE[$p]}" "${ARGS[$p]:-< $(basename "${INPUT[$p]}")}"
    done
} >"$RESULTS/bbtrace_info.tsv"
python3 "$SRC/bbtrace_table.py" "$RESULTS" | tee "$RESULTS/bbtrace_table.txt"
