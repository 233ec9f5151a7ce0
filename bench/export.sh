#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`, exports: the size (bytes per event) and the speed (events
# per second) of every trace export format, each on the same recorded
# experiment, with the ratio of its size to the OTF2 archive's (the anchor)
# of that experiment.
#
#   bench/export.sh BUILD_DIR
#
# Experiments, recorded once with `strobe run` from the build tree:
#   calls    bench/calls.c on 2 threads (STROBE_BENCH_EXPORT_CALLS calls per
#            thread, default 1000000: 4 M enter/exit events, the tightest
#            spacing a trace can have)
#   tm_bank  examples/tm/bank.c under `strobe run --tm-monitor events`
#            (atomic blocks as regions plus every TM attempt): the only kind
#            of experiment the Paraver export accepts; skipped with one line
#            when GCC's -fgnu-tm was not available
#   paths    bench/paths.c on 4 threads, depth STROBE_BENCH_EXPORT_DEPTH
#            (default 10: 88,573 distinct call paths on every thread),
#            exported to the profile formats only, Cube4 (the anchor) and
#            pprof
# Per format: bytes = every file the export writes; events = the
# experiment's recorded events (`strobe report --format json`); time = the
# median wall time of STROBE_BENCH_EXPORT_REPS (default 3) runs of
# `strobe export` (reading the experiment included, as a user sees it).
# The size ratio is to the OTF2 archive of the same experiment, or for
# `paths` to its Cube4 file.
#
# Official-schema check: with STROBE_PERFETTO_DIR set to a checkout of
# github.com/google/perfetto, the Perfetto export of `calls` is decoded by
# `protoc --decode=perfetto.protos.Trace` with that checkout's
# protos/perfetto/trace/perfetto_trace.proto, and must decode without error
# and without a field the official schema does not know. Unset, one line
# says it was not done.
#
# Results: the table on stdout and in BUILD_DIR/bench/results/export.txt,
# the numbers in export-formats.tsv. Nothing is written in the source tree.
BENCH_NAME=bench-export # prefix of its messages
. "$(dirname "$0")/lib.sh" # strict mode; a failing command is reported (lib.sh)

[ $# -eq 1 ] || die "usage: bench/export.sh BUILD_DIR"
[ -d "$1" ] || die "$1: no such build directory (run cmake first)"
BUILD=$(cd "$1" && pwd)
RESULTS=$BUILD/bench/results
CALLS=${STROBE_BENCH_EXPORT_CALLS:-1000000}
REPS=${STROBE_BENCH_EXPORT_REPS:-3}
DEPTH=${STROBE_BENCH_EXPORT_DEPTH:-10}
case "$CALLS$REPS$DEPTH" in *[!0-9]*) die "STROBE_BENCH_EXPORT_CALLS/REPS/DEPTH must be numbers" ;; esac
[ "$REPS" -ge 1 ] || die "STROBE_BENCH_EXPORT_REPS must be >= 1"
STROBE=$BUILD/bin/strobe
CALLS_BIN=$BUILD/bench/strobe-bench-calls
PATHS_BIN=$BUILD/bench/strobe-bench-paths
BANK=$BUILD/examples/tm_bank
for f in "$STROBE" "$CALLS_BIN" "$PATHS_BIN"; do
    [ -x "$f" ] || die "$f missing: build first (cmake --build $BUILD)"
done
command -v python3 >/dev/null || die "python3 not found (needed for the table)"
unset LD_PRELOAD

mkdir -p "$RESULTS"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench-export.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'echo "bench/export: stopped: line $LINENO: $BASH_COMMAND failed" >&2' ERR
TSV=$RESULTS/export-formats.tsv
printf 'experiment\tformat\tstatus\tevents\tbytes\texport_ns\n' >"$TSV"

ns_now() { date +%s%N; }

# record NAME STROBE-RUN-ARGS... : the experiment in $WORK/NAME, or a line
# in the TSV saying why not (returns 1).
record() {
    local name=$1
    shift
    if ! "$STROBE" run -o "$WORK/$name" "$@" >"$WORK/$name.log" 2>&1; then
        printf '%s\t-\t%s\t-\t-\t-\n' "$name" "strobe run failed: $(tail -c 200 "$WORK/$name.log" | tr '\t\n' '  ')" >>"$TSV"
        return 1
    fi
}

events_of() {
    "$STROBE" report "$1" --format json | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["events"])'
}

# export_one NAME FORMAT EVENTS: REPS exports, median time, size of the output.
export_one() {
    local name=$1 fmt=$2 events=$3 out=$WORK/$1.$2 times=() rep t0 t1 bytes f
    for rep in $(seq 1 "$REPS"); do
        rm -rf "$out" "$out".prv "$out".pcf "$out".row
        t0=$(ns_now)
        if ! "$STROBE" export "$WORK/$name" --format "$fmt" -o "$out" >"$WORK/export.log" 2>&1; then
            printf '%s\t%s\t%s\t%s\t-\t-\n' "$name" "$fmt" "export failed: $(head -c 200 "$WORK/export.log" | tr '\t\n' '  ')" \
                "$events" >>"$TSV"
            return 0
        fi
        t1=$(ns_now)
        times+=($((t1 - t0)))
    done
    # apparent sizes of the file, the OTF2 directory or OUT.{prv,pcf,row}
    local paths=()
    for f in "$out" "$out".prv "$out".pcf "$out".row; do [ -e "$f" ] && paths+=("$f"); done
    bytes=$(du -cb "${paths[@]}" | awk 'END { print $1 }')
    printf '%s\t%s\tok\t%s\t%s\t%s\n' "$name" "$fmt" "$events" "$bytes" \
        "$(printf '%s\n' "${times[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')" >>"$TSV"
}

FORMATS="otf2 chrome perfetto paraver"
PATHS_LINE="paths: not recorded"
echo "bench/export: recording; $REPS exports per format" >&2
if record calls -- "$CALLS_BIN" "$CALLS" 2; then
    ev=$(events_of "$WORK/calls")
    for fmt in otf2 chrome perfetto; do export_one calls "$fmt" "$ev"; done
    printf 'calls	paraver	n/a (Paraver takes only --tm-monitor events experiments: see tm_bank)	-	-	-
' >>"$TSV"
fi
if [ ! -x "$BANK" ]; then
    printf 'tm_bank\t-\tnot built (%s missing: no -fgnu-tm at configure time)\t-\t-\t-\n' "$BANK" >>"$TSV"
elif record tm_bank --tm-monitor events -- "$BANK"; then
    ev=$(events_of "$WORK/tm_bank")
    for fmt in $FORMATS; do export_one tm_bank "$fmt" "$ev"; done
fi
if record paths -- "$PATHS_BIN" "$DEPTH" 4; then
    ev=$(events_of "$WORK/paths")
    for fmt in cubex pprof; do export_one paths "$fmt" "$ev"; done
    PATHS_LINE="paths: $("$STROBE" report "$WORK/paths" --format json |
        python3 -c 'import json, sys; print(len(json.load(sys.stdin)["calltree"]) - 1)') call paths x 4 threads"
fi

# ---- the Perfetto export against the official schema -------------------------
SCHEMA_LINE="Perfetto official schema: not checked (set STROBE_PERFETTO_DIR to a google/perfetto checkout)"
if [ -n "${STROBE_PERFETTO_DIR:-}" ]; then
    proto=protos/perfetto/trace/perfetto_trace.proto
    if [ ! -f "$STROBE_PERFETTO_DIR/$proto" ]; then
        SCHEMA_LINE="Perfetto official schema: FAILED: $STROBE_PERFETTO_DIR/$proto not found"
    elif ! command -v protoc >/dev/null; then
        SCHEMA_LINE="Perfetto official schema: not checked: protoc not installed (Debian protobuf-compiler)"
    elif [ ! -f "$WORK/calls.perfetto" ]; then
        SCHEMA_LINE="Perfetto official schema: not checked: no Perfetto export of calls"
    elif protoc --proto_path="$STROBE_PERFETTO_DIR" --decode=perfetto.protos.Trace "$proto" \
        <"$WORK/calls.perfetto" >"$WORK/decoded.txt" 2>"$WORK/protoc.log"; then
        packets=$(grep -c '^packet {' "$WORK/decoded.txt" || true)
        # protoc prints a field the schema does not define by its number
        unknown=$(grep -cE '^ *[0-9]+: ' "$WORK/decoded.txt" || true)
        rev=$(git -C "$STROBE_PERFETTO_DIR" rev-parse --short HEAD 2>/dev/null ||
            git --git-dir="$STROBE_PERFETTO_DIR" rev-parse --short HEAD 2>/dev/null || echo "unknown revision")
        if [ "$unknown" -eq 0 ]; then
            SCHEMA_LINE="Perfetto official schema ($rev): ok, $packets packets decoded, no unknown field"
        else
            SCHEMA_LINE="Perfetto official schema ($rev): FAILED: $unknown fields unknown to the schema"
        fi
    else
        SCHEMA_LINE="Perfetto official schema: FAILED: protoc: $(head -c 200 "$WORK/protoc.log" | tr '\n' ' ')"
    fi
fi

python3 - "$TSV" "$SCHEMA_LINE" "$PATHS_LINE" <<'EOF' | tee "$RESULTS/export.txt"
import sys

rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
print("Exports (bench/export.sh): size and speed of each format on the same experiment")
print("%-8s %-9s %10s %12s %8s %10s %8s" % ("exp.", "format", "events", "bytes", "B/event", "M events/s", "vs anchor"))
# the anchor: OTF2 for the traces, Cube4 for the profile-only experiment
anchor = {r[0]: int(r[4]) for r in rows if r[1] == "otf2" and r[2] == "ok"}
anchor.update({r[0]: int(r[4]) for r in rows if r[1] == "cubex" and r[2] == "ok" and r[0] not in anchor})
for exp, fmt, status, events, size, ns in rows:
    if status != "ok":
        print("%-8s %-9s %s" % (exp, fmt, status))
        continue
    events, size, ns = int(events), int(size), int(ns)
    ratio = "%.2fx" % (size / anchor[exp]) if exp in anchor else "-"
    print("%-8s %-9s %10d %12d %8.2f %10.2f %8s" % (exp, fmt, events, size, size / events, events / ns * 1e3, ratio))
print(sys.argv[3])
print(sys.argv[2])
EOF
case "$SCHEMA_LINE" in *FAILED*) exit 1 ;; esac
