#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`, HTML report: what `strobe report --format html` costs on a
# 100 M-event trace and what the page costs the browser, against the
# Chrome trace export of the same trace (the anchor: the file a user would
# otherwise load into Perfetto or chrome://tracing).
#
#   bench/report_html.sh BUILD_DIR
#
# The trace: bench/calls.c on 2 threads under `strobe run`,
# STROBE_BENCH_HTML_CALLS calls per thread (default 25000000: 100 M
# enter/exit events, the tightest spacing a trace can have).
# Measured, once each (every run reads 100 M events; repetitions would
# take minutes):
#   report   wall and CPU (user + system) time and max RSS of the whole `strobe report DIR --format
#            html -o FILE` (/usr/bin/time), and the page's size;
#   open     the time from loading the page to its data-ready="1" (every
#            view drawn) in headless Chromium, from file://, measured by
#            tests/report/html_check.py (which also fails on a console
#            error or a network request);
#   anchor   `strobe export DIR --format chrome`: wall and CPU time, size (about
#            150 bytes per event: 15 GB here; STROBE_BENCH_HTML_ANCHOR=0
#            skips it).
# Goals (issue 15, docs/report-html.md): page <= 10 MB, open < 3 s.
# Results: the table on stdout and in BUILD_DIR/bench/results/report_html.txt.
BENCH_NAME=bench-report-html # prefix of its messages
. "$(dirname "$0")/lib.sh" # strict mode; a failing command is reported (lib.sh)

[ $# -eq 1 ] || die "usage: bench/report_html.sh BUILD_DIR"
[ -d "$1" ] || die "$1: no such build directory (run cmake first)"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
RESULTS=$BUILD/bench/results
CALLS=${STROBE_BENCH_HTML_CALLS:-25000000}
ANCHOR=${STROBE_BENCH_HTML_ANCHOR:-1}
case "$CALLS" in *[!0-9]* | "") die "STROBE_BENCH_HTML_CALLS must be a number" ;; esac
STROBE=$BUILD/bin/strobe
CALLS_BIN=$BUILD/bench/strobe-bench-calls
for f in "$STROBE" "$CALLS_BIN"; do
    [ -x "$f" ] || die "$f missing: build first (cmake --build $BUILD)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time not found (Debian package time)"
command -v python3 >/dev/null || die "python3 not found (needed for the table)"
unset LD_PRELOAD

mkdir -p "$RESULTS"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench-report-html.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# timed OUT_PREFIX CMD...: runs CMD, leaves "wall_s maxrss_kb cpu_s" in OUT_PREFIX.time
timed() {
    local out=$1
    shift
    /usr/bin/time -f '%e %M %U %S' -o "$out.time" "$@" >"$out.log" 2>&1 || die "$* failed: $(tail -c 300 "$out.log")"
    awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }' "$out.time" >"$out.t" && mv "$out.t" "$out.time"
}

echo "bench/report_html: recording $((CALLS * 4)) events" >&2
timed "$WORK/run" "$STROBE" run -o "$WORK/exp" -- "$CALLS_BIN" "$CALLS" 2
events=$("$STROBE" report "$WORK/exp" --format json | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["events"])')

echo "bench/report_html: strobe report --format html" >&2
timed "$WORK/html" "$STROBE" report "$WORK/exp" --format html -o "$WORK/page.html"
read -r html_s html_kb html_cpu <"$WORK/html.time"
html_bytes=$(stat -c %s "$WORK/page.html")

# tests/report/html_check.py: time from loading the page to data-ready="1"
# in headless Chromium over the DevTools pipe; exit 2 = no Chromium.
open_ms=-
rc=0
python3 "$SRC/../tests/report/html_check.py" "$WORK/page.html" --timeout 120 >"$WORK/check.json" 2>&1 || rc=$?
case $rc in
0) open_ms=$(python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["ready_ms"]))' "$WORK/check.json") ;;
2) open_ms=- ;;
*) open_ms=failed ;;
esac

chrome_s=- chrome_bytes=- chrome_cpu=-
if [ "$ANCHOR" != 0 ]; then
    echo "bench/report_html: anchor: strobe export --format chrome" >&2
    timed "$WORK/chrome" "$STROBE" export "$WORK/exp" --format chrome -o "$WORK/trace.json"
    read -r chrome_s _ chrome_cpu <"$WORK/chrome.time"
    chrome_bytes=$(stat -c %s "$WORK/trace.json")
    rm -f "$WORK/trace.json"
fi

python3 - "$events" "$html_s" "$html_kb" "$html_bytes" "$open_ms" "$chrome_s" "$chrome_bytes" \
    "$html_cpu" "$chrome_cpu" "$WORK/check.json" <<'EOF' |
import sys

events, html_s, html_kb, html_bytes, open_ms, chrome_s, chrome_bytes, html_cpu, chrome_cpu, check = sys.argv[1:]
events, html_s, html_kb, html_bytes, html_cpu = int(events), float(html_s), int(html_kb), int(html_bytes), float(html_cpu)
print("HTML report (bench/report_html.sh): %s events (bench/calls.c, 2 threads)" % format(events, ","))
print("%-38s %9s %9s %12s %10s" % ("", "wall", "CPU", "size", "max RSS"))
print("%-38s %8.1fs %8.1fs %9.2f MB %7d MB" % ("strobe report --format html", html_s, html_cpu, html_bytes / 1e6,
                                              html_kb // 1024))
if chrome_s != "-":
    chrome_s, chrome_bytes, chrome_cpu = float(chrome_s), int(chrome_bytes), float(chrome_cpu)
    print("%-38s %8.1fs %8.1fs %9.2f MB" % ("anchor: strobe export --format chrome", chrome_s, chrome_cpu,
                                           chrome_bytes / 1e6))
    print("html / chrome: wall %.2fx, CPU %.2fx, size %.5fx (1/%.0f)" % (
        html_s / chrome_s, html_cpu / chrome_cpu, html_bytes / chrome_bytes, chrome_bytes / html_bytes))
else:
    print("anchor: not run (STROBE_BENCH_HTML_ANCHOR=0)")
size_ok = html_bytes <= 10e6
print("page size %.2f MB: goal <= 10 MB %s" % (html_bytes / 1e6, "met" if size_ok else "MISSED"))
if open_ms == "-":
    print("page open: not measured (no Chromium)")
elif open_ms == "failed":
    print("page open: FAILED: " + open(check).read()[-600:])
else:
    print("page open (load to data-ready, headless Chromium, html_check.py): %d ms: goal < 3000 ms %s" %
          (int(open_ms), "met" if int(open_ms) < 3000 else "MISSED"))
EOF
    tee "$RESULTS/report_html.txt"
grep -q "MISSED\|FAILED" "$RESULTS/report_html.txt" && exit 1
exit 0
