#!/bin/sh
# SPDX-License-Identifier: MIT
# `make report-screenshot`: the picture of docs/report-html.md. Measures
# examples/demo with `strobe run`, writes its HTML report and has headless
# Chromium (tests/report/html_check.py, which also fails on any console
# error or network request) take a screenshot of it into
# docs/report-html.png. Usage: scripts/report-screenshot.sh [BUILD_DIR]
set -eu
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
demo="$build/examples/demo"
[ -x "$demo" ] || demo="$build/bin/demo"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bin/strobe" run -o "$tmp/exp" -- "$demo" >/dev/null
"$build/bin/strobe" report "$tmp/exp" --format html -o "$tmp/demo-report.html"
python3 "$src/tests/report/html_check.py" "$tmp/demo-report.html" --width 1280 --height 1800 \
    --screenshot "$src/docs/report-html.png" >"$tmp/check.json" || {
    cat "$tmp/check.json" >&2
    exit 1
}
echo "docs/report-html.png: $(wc -c <"$src/docs/report-html.png") bytes"
