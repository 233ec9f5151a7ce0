#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: the cost of directive instrumentation per OpenMP construct
# event (docs/instrument.md, docs/performance.md) and the instrumenters'
# speed. bench/omp_constructs.c (many small parallel regions, each with a
# loop, master, critical, atomic, barrier and single) is built with gcc -O2
# -fopenmp four ways in the same run:
#   bare         uninstrumented (the anchor);
#   strobe-null  `strobe instrument`, run without strobe's runtime (the
#                weak references are null, each event is a test and a branch);
#   strobe-run   `strobe instrument`, run under `strobe run` (profile and
#                trace recorded);
#   opari2-null  OPARI2 2.0.7 with the null POMP2 library bench/pomp2_null.c
#                (the second anchor: the cost of OPARI2's instrumentation
#                without any measurement system).
# ns/event = (CPU time of the loop - bare's) / construct events, CPU time
# of the process as bench/openmp.sh measures it, medians of the repetitions,
# which alternate the configurations. OMP_NUM_THREADS=2 (libgomp's default
# active waiting: a waiting thread's spin is CPU time too).
# Instrumentation speed: lines/s of `strobe instrument` (a libclang parse
# and the rewrite) and of `opari2` on a generated OpenMP C file, wall time,
# medians.
#
#   bench/instrument.sh BUILD_DIR
#
# Environment: STROBE_BENCH_REPS (default 5), STROBE_BENCH_OMP_REGIONS
# (parallel regions per run, default 100000), STROBE_BENCH_INST_FUNCS
# (functions of the generated file, 20 lines each, default 500).
BENCH_NAME=bench-instrument
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/instrument.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
STROBE=$BUILD/bin/strobe
[ -x "$STROBE" ] || die "$STROBE missing: build first"
command -v gcc >/dev/null || die "gcc not found"
REPS=${STROBE_BENCH_REPS:-5}
N=${STROBE_BENCH_OMP_REGIONS:-100000}
FUNCS=${STROBE_BENCH_INST_FUNCS:-500}
case "$REPS$N$FUNCS" in *[!0-9]*) die "STROBE_BENCH_REPS/OMP_REGIONS/INST_FUNCS must be numbers" ;; esac
HAVE_OPARI2=yes
command -v opari2 >/dev/null && command -v opari2-config >/dev/null || HAVE_OPARI2=no
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
CFLAGS=(-O2 -fopenmp -I"$SRC/../include")

# ---- the builds -------------------------------------------------------------
cp "$SRC/omp_constructs.c" "$W/"
gcc "${CFLAGS[@]}" "$W/omp_constructs.c" -o "$W/bare"
"$STROBE" instrument "$W/omp_constructs.c" -o "$W/strobe.c" -- -fopenmp
gcc "${CFLAGS[@]}" "$W/strobe.c" -o "$W/strobe"
configs=(bare strobe-null strobe-run)
if [ "$HAVE_OPARI2" = yes ]; then
    (cd "$W" && opari2 omp_constructs.c opari2.c)
    gcc "${CFLAGS[@]}" -c "$W/opari2.c" -o "$W/opari2.o"
    gcc "${CFLAGS[@]}" -c "$SRC/pomp2_null.c" -o "$W/pomp2_null.o"
    opari2_link "$W/opari2" "$W/pomp2_null.o" "$W/opari2.o"
    configs+=(opari2-null)
else
    echo "$BENCH_NAME: opari2 not installed (scripts/install-deps.sh): the OPARI2 rows are skipped"
fi

# ---- per construct event ----------------------------------------------------
CPUS=$(nproc) # before OMP_NUM_THREADS, which nproc obeys
export OMP_NUM_THREADS=2
run() { # config rep: "cpu_ns events check" into W/config.rep
    local line
    case $1 in
    bare) line=$("$W/bare" "$N") ;;
    strobe-null) line=$("$W/strobe" "$N") ;;
    strobe-run) line=$("$STROBE" run -o "$W/exp" -- "$W/strobe" "$N" 2>/dev/null) ;;
    opari2-null) line=$("$W/opari2" "$N") ;;
    esac
    rm -rf "$W/exp"
    echo "$line" | sed -n 's/^cpu_ns=\([0-9]*\) events=\([0-9]*\) check=\([0-9]*\)$/\1 \2 \3/p' >"$W/$1.$2"
    [ -s "$W/$1.$2" ] || die "$1: unexpected output: ${line:0:100}"
}
nc=${#configs[@]}
for ((r = 0; r < REPS; r++)); do
    for ((k = 0; k < nc; k++)); do run "${configs[$(((k + r) % nc))]}" "$r"; done
done
checks=$(cat "$W"/*.[0-9]* | awk '{ print $3 }' | sort -u | wc -l)
[ "$checks" = 1 ] || die "the builds print different checksums"

cpu() { cat "$W/$1".[0-9]* | awk '{ print $1 }' | strobe_bench_median; }
EVENTS=$(awk '{ print $2; exit }' "$W/bare.0")
bare=$(cpu bare)
echo "Directive instrumentation: $N parallel regions x 2 threads, $EVENTS construct events, gcc -O2 -fopenmp, CPU time, medians of $REPS runs; $(strobe_bench_cpu_model), $CPUS CPUs"
printf '  %-12s %12s %14s %10s %12s\n' config "ns/event" "added ns/event" "x bare" "x opari2-null"
onull=-
[ "$HAVE_OPARI2" = no ] || onull=$(cpu opari2-null)
for c in "${configs[@]}"; do
    awk -v n="$c" -v t="$(cpu "$c")" -v b="$bare" -v o="$onull" -v e="$EVENTS" 'BEGIN {
        add = (t - b) / e
        printf "  %-12s %12.1f %14.1f %10.2f", n, t / e, add, t / b
        if (o == "-") printf " %12s\n", "-"; else printf " %12.2f\n", t / o }'
done

# ---- instrumentation speed --------------------------------------------------
GEN=$W/gen.c
{
    echo '#include <stdio.h>'
    for ((f = 0; f < FUNCS; f++)); do
        cat <<EOT
long f$f(long *a, int n)
{
    long s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < n; i++)
        s += a[i] * $f;
#pragma omp parallel
    {
#pragma omp critical
        s++;
#pragma omp barrier
#pragma omp single
        { a[0] += s; }
#pragma omp atomic
        a[1] += 1;
    }
    /* f$f: $((f % 7)) */
    return s;
}
EOT
    done
} >"$GEN"
LINES=$(wc -l <"$GEN")
secs() { # command...: wall seconds
    local t0=$EPOCHREALTIME
    "$@" >/dev/null 2>&1 || die "$1 failed on the generated file"
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }'
}
speed() { # name command...: lines/s, medians
    local name=$1
    shift
    for ((r = 0; r < REPS; r++)); do secs "$@"; done | strobe_bench_median |
        awk -v n="$name" -v l="$LINES" '{ printf "  %-20s %10.3f s %12.0f lines/s\n", n, $1, l / $1 }'
}
echo "Instrumentation speed: generated file of $LINES lines, $((FUNCS * 6)) OpenMP directives, wall time, medians of $REPS runs"
speed "strobe instrument" "$STROBE" instrument "$GEN" -o "$W/gen.strobe.c" -- -fopenmp
[ "$HAVE_OPARI2" = no ] || speed opari2 opari2 "$GEN" "$W/gen.opari2.c"

# ---- a real OpenMP program: XSBench ------------------------------------------
# XSBench (github.com/ANL-CESAR/XSBench, its openmp-threading version),
# fetched outside the repository: every file instrumented, built with its
# own flags (-std=gnu99 -O3 -fopenmp), run bare, instrumented without the
# runtime and under `strobe run`, alternated; the same checksum each time.
# STROBE_XSBENCH_ARGS (default "-s small -p 100000 -t 2") sizes the run.
optional_sources STROBE_XSBENCH_DIR "instrumentation of XSBench" \
    "fetch github.com/ANL-CESAR/XSBench outside the repository and point STROBE_XSBENCH_DIR at it"
XS=$STROBE_XSBENCH_DIR/openmp-threading
[ -f "$XS/Simulation.c" ] || die "STROBE_XSBENCH_DIR=$STROBE_XSBENCH_DIR: no openmp-threading/Simulation.c"
read -r -a XARGS <<<"${STROBE_XSBENCH_ARGS:--s small -p 100000 -t 2}"
mkdir -p "$W/xs"
t0=$EPOCHREALTIME
for f in "$XS"/*.c; do
    "$STROBE" instrument "$f" -o "$W/xs/${f##*/}" -- -std=gnu99 -fopenmp -I"$XS" || die "instrumenting $f failed"
done
XLINES=$(cat "$XS"/*.c "$XS"/*.h | wc -l)
XSECS=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
gcc -std=gnu99 -O3 -fopenmp "$XS"/*.c -o "$W/xs-bare" -lm
gcc -std=gnu99 -O3 -fopenmp -I"$XS" -I"$SRC/../include" "$W"/xs/*.c -o "$W/xs-strobe" -lm
xs_run() { # config rep: "seconds checksum" into W/xs-config.rep
    local t0=$EPOCHREALTIME out
    # XSBench exits with status 1 when the checksum is not the one of its
    # default sizes: the checksums are compared below instead
    case $1 in
    bare) out=$("$W/xs-bare" "${XARGS[@]}") || true ;;
    strobe-null) out=$("$W/xs-strobe" "${XARGS[@]}") || true ;;
    strobe-run) out=$("$STROBE" run -o "$W/xexp" -- "$W/xs-strobe" "${XARGS[@]}" 2>/dev/null) || true ;;
    esac
    rm -rf "$W/xexp"
    local sum
    sum=$(echo "$out" | sed -n 's/^Verification checksum: \([0-9]*\).*/\1/p')
    [ -n "$sum" ] || die "XSBench ($1) printed no checksum"
    awk -v a="$t0" -v b="$EPOCHREALTIME" -v s="$sum" 'BEGIN { print b - a, s }' >"$W/xs-$1.$2"
}
xconfigs=(bare strobe-null strobe-run)
for ((r = 0; r < REPS; r++)); do
    for ((k = 0; k < 3; k++)); do xs_run "${xconfigs[$(((k + r) % 3))]}" "$r"; done
done
[ "$(cat "$W"/xs-*.[0-9]* | awk '{ print $2 }' | sort -u | wc -l)" = 1 ] ||
    die "XSBench: the builds print different checksums"
xsecs() { cat "$W/xs-$1".[0-9]* | awk '{ print $1 }' | strobe_bench_median; }
xbare=$(xsecs bare)
echo "XSBench ($XLINES lines in $(ls "$XS"/*.c | wc -l) files, instrumented in ${XSECS} s), ${XARGS[*]}, whole command wall time, medians of $REPS runs; the same checksum in every run"
for c in "${xconfigs[@]}"; do
    awk -v n="$c" -v t="$(xsecs "$c")" -v b="$xbare" 'BEGIN { printf "  %-12s %8.3f s %8.3fx bare\n", n, t, t / b }'
done
