#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Real public programs (part of `make bench`; docs/performance.md, "Real
# programs (SPLASH-3)"): SPLASH-3 kernels and applications at 2 threads,
# run plain, under `strobe run` and under `uftrace record`, in the same run.
#
#   STROBE_SPLASH3_DIR=DIR bench/real.sh BUILD_DIR
#
# DIR is a checkout of github.com/SakalisC/Splash-3 (its top folder or its
# codes/ folder), kept outside the repository. Without STROBE_SPLASH3_DIR
# the script prints one line and ends successfully.
#
# Method:
#  * the programs are built twice from DIR into BUILD_DIR/bench/splash3
#    with SPLASH-3's own Makefiles and m4 macros (pthreads): as shipped
#    ("plain") and with -finstrument-functions added (both tools trace
#    that binary);
#  * configurations: plain, instrumented with no tool, `strobe run -o EXP
#    -- PROG` (defaults: trace and profile) and `uftrace record
#    --no-libcall -d DIR PROG`;
#  * two times per run: the program's own, from start to exit
#    (libstrobe-bench-lifetime.so, bench/lifetime.c, preloaded), and the
#    whole command's, which includes whatever the tool does after the
#    program ends; and the program's CPU time (all its threads);
#  * events = enter + exit records: for strobe the records of its t*.evt
#    streams counted by strobe-bench-count-events; for uftrace twice the
#    calls `uftrace report` lists (its "linux:schedule" rows, which are
#    scheduler events, left out);
#  * strobe's overhead estimate (`strobe report`: events recorded and
#    dropped x the cost per event calibrated at start-up) against the CPU
#    time strobe added over the instrumented build: est/measured;
#  * slowdown = program time / plain program time; ns/event = the
#    program's CPU time (all threads) added per event, over the plain build
#    and over the instrumented build with no tool (the tool alone); CPU
#    time, because two threads share the wall clock and other work on the
#    machine makes them wait; all formed within a repetition;
#    medians [min-max] over STROBE_BENCH_REAL_REPS (default 3) interleaved
#    repetitions whose configuration order rotates.
# Results: BUILD_DIR/bench/results/real_raw.tsv (every run), real_table.txt
# and real_table.md.
BENCH_NAME=bench-real # prefix of its messages
. "$(dirname "$0")/lib.sh" # strict mode; a failing command is reported (lib.sh)

[ $# -eq 1 ] || die "usage: STROBE_SPLASH3_DIR=DIR bench/real.sh BUILD_DIR"
optional_sources STROBE_SPLASH3_DIR SPLASH-3 \
    "fetch github.com/SakalisC/Splash-3 outside the repository and point STROBE_SPLASH3_DIR at it"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
S3=$(splash3_codes "$STROBE_SPLASH3_DIR") || exit 1
STROBE=$BUILD/bin/strobe
LIFETIME=$BUILD/bench/libstrobe-bench-lifetime.so
COUNT=$BUILD/bench/strobe-bench-count-events
for f in "$STROBE" "$LIFETIME" "$COUNT"; do [ -e "$f" ] || die "$f: not built (run make first)"; done
for c in m4 make gcc python3; do command -v "$c" >/dev/null || die "$c not found (make deps installs it)"; done
HAVE_UFTRACE=1
command -v uftrace >/dev/null || HAVE_UFTRACE=0
REPS=${STROBE_BENCH_REAL_REPS:-3}
case $REPS in *[!0-9]* | '' | 0) die "STROBE_BENCH_REAL_REPS must be a number >= 1" ;; esac
THREADS=2

RESULTS=$BUILD/bench/results
WORK=$BUILD/bench/splash3
mkdir -p "$RESULTS"
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench-real.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

# name, folder under codes/, executable, arguments (-p: threads). barnes
# reads its parameters on stdin: SPLASH-3's `input` with 8192 bodies (line
# 2) and THREADS processors (last line). Sizes: the plain programs run
# about 0.3-1 s, traced ones a few seconds.
PROGS="fft lu radix barnes"
declare -A DIR=([fft]=kernels/fft [lu]=kernels/lu/contiguous_blocks [radix]=kernels/radix [barnes]=apps/barnes)
declare -A EXE=([fft]=FFT [lu]=LU [radix]=RADIX [barnes]=BARNES)
declare -A ARGS=([fft]="-p$THREADS -m22" [lu]="-p$THREADS -n1024" [radix]="-p$THREADS -n8388608" [barnes]="")

# ---- build -------------------------------------------------------------------
CFLAGS_BASE=$(sed -n '/^CFLAGS := /{s///p;q}' "$S3/Makefile.config")
[ -n "$CFLAGS_BASE" ] || die "$S3/Makefile.config: no 'CFLAGS := ' line"
for variant in plain instr; do
    flags=$CFLAGS_BASE
    [ "$variant" = instr ] && flags="$flags -finstrument-functions"
    dirs=()
    for p in $PROGS; do dirs+=("${DIR[$p]}"); done
    splash3_build "$S3" "$WORK/$variant" "$SCRATCH/make.log" CFLAGS="$flags" -- "${dirs[@]}"
done
awk -v t="$THREADS" 'NR == 2 { $0 = 8192 } { line[NR] = $0 } END { line[NR] = t; for (i = 1; i <= NR; i++) print line[i] }' \
    "$S3/${DIR[barnes]}/input" >"$SCRATCH/barnes.in"

# ---- one run -----------------------------------------------------------------
RAW=$RESULTS/real_raw.tsv
printf 'rep\tprogram\tconfig\tprogram_ns\tprogram_cpu_ns\tcommand_ns\tevents\tstatus\testimate_ns\n' >"$RAW"

usec_now() {
    local t=$EPOCHREALTIME
    echo "${t/./}"
}

run_one() { # rep program config
    local rep=$1 p=$2 cfg=$3
    local variant=instr
    [ "$cfg" = plain ] && variant=plain
    local exe=$WORK/$variant/${DIR[$p]}/${EXE[$p]} out=$SCRATCH/out-$cfg
    local in=/dev/null
    [ "$p" = barnes ] && in=$SCRATCH/barnes.in
    local -a args
    read -r -a args <<<"${ARGS[$p]}"
    local -a cmd=("$exe" "${args[@]}")
    case $cfg in
    strobe) cmd=("$STROBE" run -o "$out" -- "${cmd[@]}") ;;
    uftrace) cmd=(uftrace record --no-libcall -d "$out" "${cmd[@]}") ;;
    esac
    rm -rf "$out" "$SCRATCH/lifetime"
    local status=ok t0 t1
    t0=$(usec_now)
    STROBE_BENCH_LIFETIME=$SCRATCH/lifetime LD_PRELOAD=$LIFETIME "${cmd[@]}" <"$in" >"$SCRATCH/stdout" \
        2>"$SCRATCH/stderr" || status="exit status $?: $(tail -c 200 "$SCRATCH/stderr" | tr '\t\n' '  ')"
    t1=$(usec_now)
    local prog_ns prog_cpu_ns
    read -r prog_ns prog_cpu_ns < <(awk -v n="${EXE[$p]}" '$1 == n { v = $2 " " $3 } END { print v }' \
        "$SCRATCH/lifetime" 2>/dev/null || true)
    [ -n "$prog_ns" ] || [ "$status" != ok ] || status="no lifetime line for ${EXE[$p]}"
    local events=- estimate=-
    if [ "$status" = ok ]; then
        case $cfg in
        strobe)
            local counted
            counted=$(find "$out" -type f -name 't*.evt' -print0 | xargs -0 -r "$COUNT" 2>&1) ||
                status="trace unreadable: ${counted:0:200}"
            events=$(echo "$counted" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(enter|exit)=/) { sub(/^[a-z]+=/, "", $i); s += $i } } END { print s + 0 }')
            # the overhead strobe report estimates (events x the cost per
            # event calibrated at start-up), to hold against the CPU time
            # measured (real_table.py)
            estimate=$("$STROBE" report "$out" --format json 2>"$SCRATCH/report.err" |
                python3 -c 'import json,sys; v=json.load(sys.stdin)["summary"]["overhead_ns"]; print("-" if v is None else v)') ||
                status="strobe report failed: $(head -c 200 "$SCRATCH/report.err")"
            ;;
        uftrace)
            events=$(uftrace report -d "$out" --no-pager -f call 2>"$SCRATCH/report.err" |
                awk '$1 ~ /^[0-9]+$/ && $2 !~ /^linux:/ { s += $1 } END { print 2 * s }') ||
                status="uftrace report failed: $(head -c 200 "$SCRATCH/report.err")"
            ;;
        esac
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$p" "$cfg" "${prog_ns:--}" "${prog_cpu_ns:--}" \
        "$(((t1 - t0) * 1000))" "$events" "$status" "$estimate" >>"$RAW"
    rm -rf "$out"
}

CONFIGS=(plain instr strobe)
[ "$HAVE_UFTRACE" = 1 ] && CONFIGS+=(uftrace)
echo "bench-real: SPLASH-3 from $S3: $REPS repetitions x {$PROGS} x {${CONFIGS[*]}}, $THREADS threads" >&2
n=${#CONFIGS[@]}
for rep in $(seq 1 "$REPS"); do
    for p in $PROGS; do
        for i in $(seq 0 $((n - 1))); do
            run_one "$rep" "$p" "${CONFIGS[$(((i + rep) % n))]}"
        done
    done
    echo "bench-real: repetition $rep/$REPS done" >&2
done

{
    printf 'date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf 'cpu\t%s\n' "$(strobe_bench_cpu_model)"
    printf 'nproc\t%s\n' "$(nproc)"
    printf 'threads\t%s\n' "$THREADS"
    printf 'splash3\t%s\n' "$S3"
    printf 'uftrace\t%s\n' "$([ "$HAVE_UFTRACE" = 1 ] && uftrace --version 2>/dev/null | awk 'NR == 1 { print $2 }' || echo "not installed")"
    for p in $PROGS; do printf 'command.%s\t%s %s\n' "$p" "${EXE[$p]}" "${ARGS[$p]:-< input (8192 bodies, $THREADS processors)}"; done
} >"$RESULTS/real_info.tsv"
python3 "$SRC/real_table.py" "$RESULTS" | tee "$RESULTS/real_table.txt"
