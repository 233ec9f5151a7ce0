#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Application publishing overhead (part of `make bench`; docs/performance.md,
# "Live monitoring (strobed)"): the same annotated program
# (publish_app.c, ~7 s of CPU in 64 regions) under `strobe run` without
# publishing, and with --publish at 1 Hz and at 10 Hz, while a strobed with
# the shm sampler reads the shared-memory index at the same rate in every
# configuration. Repetitions interleave the three configurations and
# rotate their order; the overhead is (configuration - baseline) /
# baseline within a repetition, reported as the median over repetitions,
# for the process CPU time (all threads, the publisher's included) and for
# the wall time.
#
#   bench/monitor/publish.sh BUILD_DIR
#
# Environment: STROBE_BENCH_PUB_REPS (default 5), STROBE_BENCH_PUB_ITERS
# (region visits, default 20000: ~7 s of CPU, so the publisher's start-up
# (thread, first publication, ~1-2 ms) weighs as little as in a real run). Results: BUILD_DIR/bench/results/
# publish_raw.txt and publish_table.txt.
BENCH_NAME=bench-publish # prefix of its messages
. "$(dirname "$0")/../lib.sh" # strict mode; a failing command is reported (lib.sh)
[ $# -eq 1 ] || die "usage: bench/monitor/publish.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
APP=$BUILD/bench/strobe-bench-publish-app
STROBE=$BUILD/bin/strobe
STROBED=$BUILD/bin/strobed
for f in "$APP" "$STROBE" "$STROBED"; do [ -x "$f" ] || die "$f: not built (run make first)"; done
REPS=${STROBE_BENCH_PUB_REPS:-5}
ITERS=${STROBE_BENCH_PUB_ITERS:-20000}
RESULTS=$BUILD/bench/results
mkdir -p "$RESULTS"
RAW=$RESULTS/publish_raw.txt
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench-publish.XXXXXX")
export STROBE_SHM_INDEX=strobe-bench-publish-$$
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
: >"$RAW"

run() { # NAME INTERVAL_S PUBLISH
    local name=$1 iv=$2 pub=$3
    "$STROBED" --sample shm --interval "${iv}s" --producer bench 2>"$WORK/strobed.log" &
    local sd=$!
    sleep 0.2
    local flags=()
    [ "$pub" = 1 ] && flags=(--publish)
    local out
    out=$(STROBE_PUBLISH_INTERVAL=$iv "$STROBE" run "${flags[@]}" --no-trace -o "$WORK/exp-$name-$RANDOM" -- \
        "$APP" "$ITERS" 2>/dev/null)
    kill "$sd"; wait "$sd" 2>/dev/null || true
    echo "$name $out" >>"$RAW"
}

configs=("base1 1 0" "pub1 1 1" "base10 0.1 0" "pub10 0.1 1")
for ((rep = 0; rep < REPS; rep++)); do
    for ((k = 0; k < ${#configs[@]}; k++)); do
        c=${configs[$(((k + rep) % ${#configs[@]}))]}
        # shellcheck disable=SC2086
        run $c
    done
    echo "rep $rep" >>"$RAW"
done

python3 - "$RAW" <<'PY' | tee "$RESULTS/publish_table.txt"
import statistics, sys
reps, cur = [], {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "rep":
        reps.append(cur); cur = {}
    else:
        cur[f[0]] = (float(f[2]), float(f[4]), float(f[6]))  # wall, cpu, publisher cpu
def med(xs): return statistics.median(xs)
print("application publishing overhead (median over %d repetitions; base = strobe run without --publish)" % len(reps))
print("publisher = CPU of the runtime's publisher thread / CPU of the same run (exact);")
print("A/B = CPU and wall of the publishing run vs the baseline run (noisy: two runs)")
print("%-6s %10s %10s %12s %12s %12s" % ("rate", "base cpu", "pub cpu", "publisher", "A/B cpu", "A/B wall"))
for hz, b, p in (("1 Hz", "base1", "pub1"), ("10 Hz", "base10", "pub10")):
    own = [r[p][2] / r[p][1] * 100 for r in reps]
    cpu = [(r[p][1] - r[b][1]) / r[b][1] * 100 for r in reps]
    wall = [(r[p][0] - r[b][0]) / r[b][0] * 100 for r in reps]
    print("%-6s %9.3fs %9.3fs %11.4f%% %+11.3f%% %+11.3f%%   [A/B cpu %+.2f..%+.2f%%]" % (
        hz, med([r[b][1] for r in reps]), med([r[p][1] for r in reps]), med(own), med(cpu), med(wall),
        min(cpu), max(cpu)))
PY
