#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Micro-benchmark of the pass of `strobe cc --trace=bb[,mem]` alone (no
# strobe runtime: tests/cc/bbrt.c keeps the stream in a 64 MiB memory ring,
# BBRT_WRAP), on bench/bbpass/kernel.c: the same source built with plain
# clang -O2 (the anchor), --trace=bb and --trace=bb,mem; CPU times (user +
# system), repetitions interleaved, medians, ratios to the anchor of the
# same repetition; then
# one decoded run: memory events per function and the address bytes per
# event (elided and constant addresses count as events of 0 bytes).
#
#   bench/bbpass.sh BUILD_DIR
# Environment: STROBE_BENCH_SCALE (kernel repetitions, default 40),
# STROBE_BENCH_REPS (default 5). The real benchmark of issue 16 (kernels
# under strobe run) is bench/taskgraph or bench/bbtrace.
BENCH_NAME=bbpass
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/bbpass.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
SCALE=${STROBE_BENCH_SCALE:-40}
REPS=${STROBE_BENCH_REPS:-5}
[ -e "$BUILD/lib/strobe/libstrobe-cc.so" ] || die "$BUILD/lib/strobe/libstrobe-cc.so missing (needs llvm-14-dev; build first)"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
clang -O2 -c -I"$SRC/src" "$SRC/tests/cc/bbrt.c" -o "$W/bbrt.o"
clang -O2 "$SRC/bench/bbpass/kernel.c" -o "$W/plain"
"$BUILD/bin/strobe" cc --trace=bb -O2 "$SRC/bench/bbpass/kernel.c" "$W/bbrt.o" -o "$W/bb"
"$BUILD/bin/strobe" cc --trace=bb,mem -O2 "$SRC/bench/bbpass/kernel.c" "$W/bbrt.o" -o "$W/mem"

cpu_us() { # prints the CPU time (user + system, microseconds) of one run of $1:
    # on a shared machine it is steadier than the wall time
    /usr/bin/time -f "%U %S" -o "$W/t" env BBRT_WRAP=1 "$W/$1" "$SCALE" >/dev/null
    awk '{ printf "%d\n", ($1 + $2) * 1e6 }' "$W/t"
}
for r in $(seq "$REPS"); do
    p=$(cpu_us plain); b=$(cpu_us bb); m=$(cpu_us mem)
    echo "$p $b $m"
done > "$W/times"
python3 - "$W/times" <<'PY'
import statistics, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1])]
med = lambda xs: statistics.median(xs)
print("build        median CPU s   ratio to plain (median of per-repetition ratios)")
for i, name in enumerate(["plain -O2", "--trace=bb", "--trace=bb,mem"]):
    print(f"{name:14} {med([r[i] for r in rows]) / 1e6:8.3f}       {med([r[i] / r[0] for r in rows]):.2f}x")
PY
BBRT_OUT="$W/decoded" "$W/mem" 1 >/dev/null
awk '$1 == "bytes" { e += $3; b += $4; printf "%-10s %9d memory events %9d bytes %.2f bytes/event\n", $2, $3, $4, $4 / $3 }
     END { printf "%-10s %9d memory events %9d bytes %.2f bytes/event\n", "all", e, b, b / e }' "$W/decoded"
