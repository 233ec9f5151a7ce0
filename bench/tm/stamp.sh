#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The STAMP part of the transactional-memory bench (docs/performance.md):
# strobe's STM against GCC's libitm on the eight STAMP applications, the
# cost of strobe's TM monitoring levels on them, and crash counts.
#
#   STROBE_STAMP_DIR=/path/to/stamp_c bench/tm/stamp.sh BUILD_DIR
#
# STAMP is not part of strobe. STROBE_STAMP_DIR names the stamp_c folder of
# the public mfs409/transmem repository (the GCC-TM port of STAMP, C,
# `gcc -fgnu-tm`); without it the script says so in one line and exits 0.
#
# Method:
#  * the folder is copied to BUILD_DIR/bench/stamp/src (the user's folder
#    is never written) and built there with `make BITS=64` (the port's own
#    makefiles: -O2 -g -fgnu-tm, linked with -litm) after two edits:
#    - yada/element.h: element_isSkinny is declared transaction_safe
#      (TM_SAFE), as its definition in element.c is; without it gcc stops
#      with "conflicting types for element_isSkinny";
#    - Makefile.common links one more object into every application,
#      lib/strobe_runtime.c (written by this script): at exit it prints
#      "tm-runtime: " and _ITM_libraryVersion() of the runtime the program's
#      TM calls bound to, so every run proves which runtime it ran on.
#  * inputs the port does not ship (kmeans points, labyrinth maze, yada
#    mesh) are generated once by bench/tm/stamp_inputs.py (fixed seeds) in
#    BUILD_DIR/bench/stamp/inputs. Inputs are between STAMP's "simulator"
#    and "non-simulator" sizes so that a run takes about 0.2-1 s on libitm
#    (see APPS below).
#  * "libitm" runs the binary as it is; "strobe" runs the same binary with
#    LD_PRELOAD=BUILD_DIR/lib/libstrobe-tm.so (monitoring off: no `strobe
#    run`). Every run records the time the application reports itself
#    ("Time = X": the parallel phase, without input reading and set-up) and
#    the wall time of the whole command. Apps at 1, 2 and 4 threads;
#    repetitions interleaved (rep 1 of everything, then rep 2, ...) and the
#    order strobe/libitm alternates per repetition. Throughput ratio
#    strobe/libitm = libitm time / strobe time within a repetition; median
#    [min-max]; PASS when the median is >= 1.
#  * monitoring: every app at 2 threads under `strobe run --tm --tm-monitor
#    LEVEL` for each LEVEL of off, counters, stats, events that this strobe
#    accepts (a rejected level is skipped with a note); cost = level time /
#    off time - 1 within a repetition.
#  * crashes: every app at 2 and 4 threads, STROBE_BENCH_STAMP_CRASH_RUNS
#    runs on strobe (LD_PRELOAD, monitoring off) and on libitm, alternated;
#    a run that dies by a signal, exits non-zero or times out counts.
#    A throughput or monitoring run that fails is recorded, kept out of the
#    ratios and counted in the table.
# Environment: STROBE_STAMP_DIR, STROBE_BENCH_TM_REPS (default 5),
# STROBE_BENCH_STAMP_CRASH_RUNS (default 20), STROBE_BENCH_STAMP_APPS (apps
# to run, default all eight), STROBE_BENCH_STAMP_TIMEOUT (seconds per run,
# default 120).
# Results: BUILD_DIR/bench/results/stamp_raw.tsv (every run) and
# stamp_table.txt.
BENCH_NAME=bench-tm-stamp # prefix of its messages
. "$(dirname "$0")/../lib.sh" # strict mode; a failing command is reported (lib.sh)

[ $# -eq 1 ] || die "usage: STROBE_STAMP_DIR=DIR bench/tm/stamp.sh BUILD_DIR"
optional_sources STROBE_STAMP_DIR STAMP "fetch mfs409/transmem and point it at its stamp_c folder"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
STAMP=$(cd "$STROBE_STAMP_DIR" && pwd) || die "STROBE_STAMP_DIR=$STROBE_STAMP_DIR: no such folder"
[ -f "$STAMP/Makefile.common" ] && [ -f "$STAMP/yada/element.h" ] ||
    die "$STAMP: not the stamp_c folder of mfs409/transmem (no Makefile.common or yada/element.h)"
STM=$BUILD/lib/libstrobe-tm.so
STROBE=$BUILD/bin/strobe
for f in "$STM" "$STROBE"; do
    [ -e "$f" ] || die "$f: not built (run make first)"
done
REPS=${STROBE_BENCH_TM_REPS:-5}
CRASH_RUNS=${STROBE_BENCH_STAMP_CRASH_RUNS:-20}
TIMEOUT=${STROBE_BENCH_STAMP_TIMEOUT:-120}
WORK=$BUILD/bench/stamp
IN=$WORK/inputs
BIN=$WORK/src/obj64
RESULTS=$BUILD/bench/results
mkdir -p "$RESULTS" "$IN"
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench-stamp.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

# Arguments per application (-tN is appended). STAMP's README inputs, scaled
# between its simulator and non-simulator sizes.
declare -A APPS=(
    [bayes]="-v32 -r1024 -n4 -p40 -i2 -e8 -s1"
    [genome]="-g8192 -s32 -n1048576"
    [intruder]="-a10 -l16 -n131072 -s1"
    [kmeans]="-m15 -n15 -T0.00001 -i $IN/kmeans-n65536-d32-c16.txt"
    [labyrinth]="-i $IN/labyrinth-x128-y128-z5-n256.txt"
    [ssca2]="-s17 -i1.0 -u1.0 -l3 -p3"
    [vacation]="-n2 -q90 -u98 -r65536 -T131072"
    [yada]="-a25 -i $IN/yada-m150"
)
ORDER=${STROBE_BENCH_STAMP_APPS:-bayes genome intruder kmeans labyrinth ssca2 vacation yada}
for app in $ORDER; do
    [ -n "${APPS[$app]:-}" ] || die "STROBE_BENCH_STAMP_APPS: unknown application '$app'"
done

# ---- build ------------------------------------------------------------------
echo "bench-tm-stamp: building STAMP from $STAMP in $WORK/src" >&2
rm -rf "$WORK/src"
cp -R "$STAMP" "$WORK/src"
rm -rf "$WORK/src/obj32" "$WORK/src/obj64"
sed -i 's/^element_isSkinny (element_t\* elementPtr);/TM_SAFE\n&/' "$WORK/src/yada/element.h"
[ "$(grep -B1 '^element_isSkinny (element_t\* elementPtr);' "$WORK/src/yada/element.h" | sed -n 1p)" = TM_SAFE ] ||
    die "yada/element.h: element_isSkinny declaration not found (another STAMP version?)"
sed -i 's/^OFILES *= \$(patsubst %, \$(ODIR)\/%.o, \$(SRCS) \$(LIBSRCS))$/& $(ODIR)\/strobe_runtime.o/' \
    "$WORK/src/Makefile.common"
grep -q 'strobe_runtime.o' "$WORK/src/Makefile.common" || die "Makefile.common: OFILES line not found"
cat > "$WORK/src/lib/strobe_runtime.c" <<'EOF'
/* Added by strobe's bench/tm/stamp.sh: names the TM runtime at exit. */
#include <stdio.h>
const char *_ITM_libraryVersion(void);
__attribute__((destructor)) static void strobe_bench_runtime(void)
{
    fprintf(stderr, "tm-runtime: %s\n", _ITM_libraryVersion());
}
EOF
make -C "$WORK/src" -j2 BITS=64 $ORDER > "$WORK/build.log" 2>&1 || die "STAMP build failed: see $WORK/build.log"
for app in $ORDER; do
    [ -x "$BIN/$app/$app" ] || die "$BIN/$app/$app: not built (see $WORK/build.log)"
done

# ---- inputs -----------------------------------------------------------------
[ -s "$IN/kmeans-n65536-d32-c16.txt" ] ||
    python3 "$SRC/stamp_inputs.py" kmeans "$IN/kmeans-n65536-d32-c16.txt" 65536 32 16
[ -s "$IN/labyrinth-x128-y128-z5-n256.txt" ] ||
    python3 "$SRC/stamp_inputs.py" labyrinth "$IN/labyrinth-x128-y128-z5-n256.txt" 128 128 5 256
[ -s "$IN/yada-m150.ele" ] || python3 "$SRC/stamp_inputs.py" yada "$IN/yada-m150" 150

# ---- runs -------------------------------------------------------------------
RAW=$RESULTS/stamp_raw.tsv
printf 'phase\trep\tconfig\tapp\tthreads\tstatus\tapp_s\twall_s\n' > "$RAW"

# run PHASE REP CONFIG APP THREADS: one run, appended to RAW. A run that
# fails is recorded with its status (exit=N, signal=N, timeout); a run that
# succeeds on the wrong runtime stops the bench.
run() {
    local phase=$1 rep=$2 config=$3 app=$4 threads=$5 rc=0 want status t0 t1 rt time
    local -a cmd=("$BIN/$app/$app" ${APPS[$app]} "-t$threads")
    # the { } 2>/dev/null keeps bash's "Segmentation fault" job notices out
    t0=$EPOCHREALTIME
    case $config in
    libitm)
        want=libitm
        { timeout -k 5 "$TIMEOUT" "${cmd[@]}" > "$SCRATCH/out" 2>&1; } 2> /dev/null || rc=$?
        ;;
    strobe)
        want=strobe-tm
        { timeout -k 5 "$TIMEOUT" env LD_PRELOAD="$STM" "${cmd[@]}" > "$SCRATCH/out" 2>&1; } 2> /dev/null || rc=$?
        ;;
    mon-*)
        want=strobe-tm
        rm -rf "$SCRATCH/exp"
        { timeout -k 5 "$TIMEOUT" "$STROBE" run --tm --tm-monitor "${config#mon-}" -o "$SCRATCH/exp" -- \
            "${cmd[@]}" > "$SCRATCH/out" 2>&1; } 2> /dev/null || rc=$?
        ;;
    esac
    t1=$EPOCHREALTIME
    time=$(sed -n '/^[[:space:]]*Time[[:space:]]*=[[:space:]]*\([0-9.e+-]*\).*/{s//\1/p;q}' "$SCRATCH/out")
    rt=$(sed -n '/^tm-runtime: /{s///p;q}' "$SCRATCH/out")
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        status=timeout
    elif [ "$rc" -gt 128 ]; then
        status=signal=$((rc - 128))
    elif [ "$rc" -ne 0 ]; then
        status=exit=$rc
    elif [ -z "$time" ]; then
        status=no-time
    else
        status=ok
        case $want:$rt in
        strobe-tm:strobe-tm*) ;;
        libitm:strobe-tm* | libitm: | strobe-tm:*)
            die "$config run of $app -t$threads ran on '${rt:-?}', not $want"
            ;;
        esac
    fi
    if [ "$status" != ok ] && [ "$phase" != crash ]; then
        cp "$SCRATCH/out" "$RESULTS/stamp_failed_${phase}_${config}_${app}_t${threads}_r${rep}.txt"
        echo "bench-tm-stamp: $config $app -t$threads (rep $rep) failed: $status" >&2
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$phase" "$rep" "$config" "$app" "$threads" "$status" \
        "${time:-}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')" >> "$RAW"
}

# pair PHASE REP APP THREADS: libitm and strobe, the order alternating with REP
pair() {
    if [ $(($2 % 2)) -eq 0 ]; then
        run "$1" "$2" libitm "$3" "$4"
        run "$1" "$2" strobe "$3" "$4"
    else
        run "$1" "$2" strobe "$3" "$4"
        run "$1" "$2" libitm "$3" "$4"
    fi
}

LEVELS=()
for level in off counters stats events; do
    rm -rf "$SCRATCH/exp"
    if "$STROBE" run --tm --tm-monitor "$level" -o "$SCRATCH/exp" -- /bin/true > /dev/null 2>&1; then
        LEVELS+=("$level")
    else
        echo "bench-tm-stamp: strobe run rejects --tm-monitor $level: level not measured" >&2
        printf 'note\t0\tmon-%s\t-\t2\trejected\t\t0\n' "$level" >> "$RAW"
    fi
done

echo "bench-tm-stamp: apps $ORDER; $REPS repetitions; monitoring levels ${LEVELS[*]}; $CRASH_RUNS crash runs" >&2
for rep in $(seq 1 "$REPS"); do
    for app in $ORDER; do
        for threads in 1 2 4; do
            pair tp "$rep" "$app" "$threads"
        done
        # rotate the levels so that none always runs first
        for i in "${!LEVELS[@]}"; do
            run mon "$rep" "mon-${LEVELS[$(((i + rep) % ${#LEVELS[@]}))]}" "$app" 2
        done
    done
    echo "bench-tm-stamp: repetition $rep/$REPS done" >&2
done
for app in $ORDER; do
    for threads in 2 4; do
        for i in $(seq 1 "$CRASH_RUNS"); do
            pair crash "$i" "$app" "$threads"
        done
    done
    echo "bench-tm-stamp: crash runs of $app done" >&2
done

python3 "$SRC/stamp_table.py" "$RAW" | tee "$RESULTS/stamp_table.txt"
