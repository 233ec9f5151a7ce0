#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: data-centric blame (docs/blame.md, docs/performance.md).
#  1. The analysis' compile cost: clang-14 -g -c at -O0 and -O2 with the
#     plugin and STROBE_CC_BLAME=1 against the same compile without the
#     plugin (the anchor, same run), CPU time (user + sys) of the compiler,
#     medians of the repetitions, which alternate the two; the difference
#     per 10 kLOC (non-blank lines of the sources). On a generated file
#     (one long function with branches, 300 small ones, 3600 lines), and on
#     CLOMP and XSBench when their sources are there.
#  2. On real programs, built with `strobe cc --trace=func -fopenmp` at -O0
#     and -O2 and run under `strobe run --sample` with OpenMP's active wait
#     (libomp's default: idle workers spin, and are sampled, in the runtime)
#     and its passive wait, STROBE_BENCH_BLAME_RUNS times each (default 3,
#     the median run shown): the share of the samples
#     in unknown data (goal <= 10 %; HPCToolkit's data-centric view leaves
#     95-97 % of CLOMP's cost unknown) and the top-3 variables.
#       CLOMP 1.2 (LLNL), STROBE_CLOMP_DIR: a folder with clomp.c (e.g. from
#         github.com/cea-hpc/pcvs-benchmarks, OpenMP/CLOMP), run as
#         `clomp 2 1 16 400 32 1 10` (STROBE_CLOMP_ARGS);
#       XSBench, STROBE_XSBENCH_DIR (as bench/instrument.sh), run as
#         `XSBench -s small -p 50000 -t 2` (STROBE_XSBENCH_BLAME_ARGS).
#  The attribution's speed is bench/blame_attribution.sh's.
#
#   bench/blame.sh BUILD_DIR
#
# Environment: STROBE_BENCH_REPS (default 5), STROBE_BENCH_BLAME_RUNS.
BENCH_NAME=bench-blame
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/blame.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
STROBE=$BUILD/bin/strobe
PLUGIN=$BUILD/lib/strobe/libstrobe-cc.so
[ -x "$STROBE" ] || die "$STROBE missing: build first"
if [ ! -f "$PLUGIN" ]; then
    echo "$BENCH_NAME: $PLUGIN missing (strobe built without LLVM 14): blame not measured"
    exit 0
fi
command -v clang-14 >/dev/null || die "clang-14 not found"
REPS=${STROBE_BENCH_REPS:-5}
RUNS=${STROBE_BENCH_BLAME_RUNS:-3}
case "$REPS$RUNS" in *[!0-9]* | "") die "STROBE_BENCH_REPS/BLAME_RUNS must be numbers" ;; esac
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "$BENCH_NAME: $(strobe_bench_cpu_model), $(nproc) CPUs, $(date -u +%F)"

# ---- 1. compile cost ---------------------------------------------------------
python3 - "$W/gen.c" <<'EOF'
import sys
lines = ['#include <stdlib.h>', 'double g[100];', 'double big(double *x, int n)', '{',
         '    double acc = 0, t[64];']
for i in range(3000):
    if i % 10 == 0:
        lines.append(f'    if (x[{i % 50}] > {i}) acc += t[{i % 64}];')
    else:
        lines.append(f'    t[{i % 64}] = x[{i % 50}] * {i} + acc; g[{i % 100}] += t[{(i + 3) % 64}];')
lines += ['    return acc;', '}']
for f in range(300):
    lines.append(f'static int f{f}(int *p, int n) {{ int s = 0; for (int i = 0; i < n; i++) '
                 f'{{ s += p[i] * {f}; p[i] = s; }} return s; }}')
lines.append('int main(void)\n{\n    int a[10] = {0}, s = 0;')
lines += [f'    s += f{f}(a, 10);' for f in range(300)]
lines += ['    return s + (int)big(g, 3) > 0 ? 0 : 1;', '}']
open(sys.argv[1], 'w').write('\n'.join(lines) + '\n')
EOF

cpu() { # the compiler's user + sys CPU seconds for: cpu OUTFILE CMD...
    local out=$1
    shift
    /usr/bin/time -f "%U %S" -o "$out.t" "$@" >/dev/null 2>"$out.err" || {
        tail -5 "$out.err" >&2
        die "$* failed"
    }
    awk '{ printf "%.3f\n", $1 + $2 }' "$out.t"
}

# compile_cost NAME FLAGS... -- FILES...: one line per -O level
compile_cost() {
    local name=$1 f o r loc
    shift
    local -a flags=()
    while [ "$1" != -- ]; do
        flags+=("$1")
        shift
    done
    shift
    loc=$(cat "$@" | grep -c '[^[:space:]]')
    local -a files=()
    for f in "$@"; do files+=("$(realpath "$f")"); done
    mkdir -p "$W/objs"
    for o in -O0 -O2; do
        : >"$W/base" && : >"$W/blame"
        # one compiler command for all files (objects in $W/objs): its CPU
        # time is that of every compile
        for r in $(seq "$REPS"); do
            (cd "$W/objs" && cpu "$W/c" clang-14 "$o" -g "${flags[@]}" -c "${files[@]}") >>"$W/base"
            (cd "$W/objs" && cpu "$W/c" env STROBE_CC_BLAME=1 clang-14 "$o" -g "${flags[@]}" -fpass-plugin="$PLUGIN" \
                -c "${files[@]}") >>"$W/blame"
        done
        local mb mx
        mb=$(strobe_bench_median <"$W/base")
        mx=$(strobe_bench_median <"$W/blame")
        awk -v n="$name" -v o="$o" -v loc="$loc" -v b="$mb" -v x="$mx" 'BEGIN {
            printf "  %-8s %s %6d lines  clang %6.2f s  with blame %6.2f s  (+%4.1f %%)  analysis %5.2f s per 10 kLOC\n",
                n, o, loc, b, x, (x - b) / b * 100, (x - b) / loc * 10000 }'
    done
}

echo "1. compile cost of the analysis (CPU s, median of $REPS)"
compile_cost generated -- "$W/gen.c"
if [ -n "${STROBE_CLOMP_DIR:-}" ]; then
    [ -f "$STROBE_CLOMP_DIR/clomp.c" ] || die "STROBE_CLOMP_DIR=$STROBE_CLOMP_DIR: no clomp.c"
    compile_cost CLOMP -fopenmp -- "$STROBE_CLOMP_DIR/clomp.c"
fi
if [ -n "${STROBE_XSBENCH_DIR:-}" ]; then
    XS=$STROBE_XSBENCH_DIR/openmp-threading
    [ -f "$XS/Simulation.c" ] || die "STROBE_XSBENCH_DIR=$STROBE_XSBENCH_DIR: no openmp-threading/Simulation.c"
    compile_cost XSBench -fopenmp -std=gnu99 -- "$XS"/*.c
fi

# ---- 2. unknown data and top variables on real programs -----------------------
# real_run NAME OPT POLICY EXE ARGS...: RUNS runs under OMP_WAIT_POLICY=POLICY;
# the unknown share's median and range, and the median run's top-3
real_run() {
    local name=$1 o=$2 policy=$3 exe=$4 r
    shift 4
    for r in $(seq "$RUNS"); do
        local exp=$W/exp-$name$o-$policy-$r
        rm -rf "$exp"
        # XSBench exits 1 when its checksum is not the one of its default
        # size: the run counts when it left an experiment
        OMP_WAIT_POLICY=$policy "$STROBE" run --sample -o "$exp" -- "$exe" "$@" >"$W/run.out" 2>&1 || true
        [ -f "$exp/meta" ] || {
            tail -5 "$W/run.out" >&2
            die "$name $o: strobe run failed"
        }
        "$STROBE" report "$exp" --blame --format json >"$W/blame-$r.json"
        rm -rf "$exp"
    done
    python3 - "$name" "$o" "$policy" "$W"/blame-*.json <<'EOF'
import json, sys
runs = sorted((json.load(open(f))['blame'] for f in sys.argv[4:]), key=lambda b: b['unknown']['percent'])
b = runs[len(runs) // 2]
why = ', '.join(f'{k} {v}' for k, v in b['unknown']['by_reason'].items() if v)
print(f"  {sys.argv[1]:8s} {sys.argv[2]} {sys.argv[3]:7s} {b['samples']:6d} samples  unknown {b['unknown']['percent']:5.1f} %"
      f" (runs {runs[0]['unknown']['percent']:.1f}-{runs[-1]['unknown']['percent']:.1f} %; {why})"
      f"  caller unknown {b['caller_unknown']}")
for v in [v for v in b['variables'] if v['parent'] is None][:3]:
    where = f"{v['function']}()" if v['function'] else 'global'
    print(f"      {v['percent']:5.1f} %  {v['name']} ({v['type']}, {v['kind']}, {where})")
EOF
    rm -f "$W"/blame-*.json
}

echo "2. unknown data and top-3 variables (strobe run --sample, 1000 Hz; median of $RUNS runs)"
if [ -n "${STROBE_CLOMP_DIR:-}" ]; then
    read -r -a CARGS <<<"${STROBE_CLOMP_ARGS:-2 1 16 400 32 1 10}"
    for o in -O0 -O2; do
        "$STROBE" cc --trace=func -fopenmp "$o" "$STROBE_CLOMP_DIR/clomp.c" -o "$W/clomp$o" -lm
        for p in active passive; do
            real_run CLOMP "$o" "$p" "$W/clomp$o" "${CARGS[@]}"
        done
    done
else
    echo "  STROBE_CLOMP_DIR is not set: CLOMP not measured (fetch github.com/cea-hpc/pcvs-benchmarks outside the repository and point STROBE_CLOMP_DIR at its OpenMP/CLOMP folder)"
fi
if [ -n "${STROBE_XSBENCH_DIR:-}" ]; then
    read -r -a XARGS <<<"${STROBE_XSBENCH_BLAME_ARGS:--s small -p 50000 -t 2}"
    for o in -O0 -O2; do
        "$STROBE" cc --trace=func -fopenmp -std=gnu99 "$o" "$XS"/*.c -o "$W/xs$o" -lm
        for p in active passive; do
            real_run XSBench "$o" "$p" "$W/xs$o" "${XARGS[@]}"
        done
    done
else
    echo "  STROBE_XSBENCH_DIR is not set: XSBench not measured (fetch github.com/ANL-CESAR/XSBench outside the repository and point STROBE_XSBENCH_DIR at it)"
fi
