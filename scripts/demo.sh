#!/bin/sh
# SPDX-License-Identifier: MIT
# `make demo`: measures examples/demo with `strobe run`, prints its
# report and writes its HTML report demo-report.html. Usage: scripts/demo.sh [BUILD_DIR]  (default: build). The
# experiment is written to ./strobe-demo-<timestamp>/ and kept, so it can be
# explored further (strobe report --threads, strobe export).
set -eu
build=${1:-build}
strobe="$build/bin/strobe"
demo="$build/examples/demo"
[ -x "$demo" ] || demo="$build/bin/demo"
for f in "$strobe" "$demo"; do
    if [ ! -x "$f" ]; then
        echo "demo: $f: not built (run 'make' first)" >&2
        exit 1
    fi
done
exp="strobe-demo-$(date +%Y%m%d-%H%M%S)"
n=0
while [ -e "$exp" ]; do
    n=$((n + 1))
    exp="strobe-demo-$(date +%Y%m%d-%H%M%S)-$n"
done
"$strobe" run -o "$exp" -- "$demo"
"$strobe" report "$exp"
"$strobe" report "$exp" --format html -o demo-report.html
echo
echo "HTML report: $(pwd)/demo-report.html (open it in any browser)"
echo "experiment kept in $exp/ (try: $strobe report $exp --threads; $strobe export $exp --format chrome -o demo.json)"
