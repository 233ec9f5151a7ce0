#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs every libFuzzer target of BUILD_DIR (a -DSTROBE_FUZZ=ON clang build)
# for SECONDS each, starting from a scratch copy of its seed corpus so new
# inputs do not land in the repository. Exits non-zero on the first crash,
# naming the input that reproduces it.
set -eu
build=${1:?usage: fuzz.sh BUILD_DIR SECONDS}
seconds=${2:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/strobe-fuzz.XXXXXX")
status=0
for t in stream blocks defs prof meta filter mpi_query set proto_reply proto_request config petra_heap instrument; do
    bin="$build/bin/fuzz_$t"
    [ -x "$bin" ] || { echo "fuzz.sh: $bin not built (configure with -DSTROBE_FUZZ=ON)" >&2; exit 2; }
    mkdir -p "$work/$t" "$work/$t.crash"
    cp "$src/tests/fuzz/corpus/$t/"* "$work/$t/"
    if "$bin" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/$t.crash/" \
        "$work/$t" >"$work/$t.log" 2>&1; then
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
        echo "fuzz_$t: ${execs:-?} inputs in ${seconds}s, no crash"
    else
        echo "fuzz_$t: CRASH, reproducer in $work/$t.crash/ (log: $work/$t.log)" >&2
        status=1
    fi
done
[ "$status" -eq 0 ] && rm -rf "$work"
exit "$status"
