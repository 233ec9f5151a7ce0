#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: how fast `strobe report --blame` attributes samples to
# variables (src/analysis/blame.c, docs/blame.md). Goal (issue 18): at least
# 1 M samples per second. Three workloads, each timed against an anchor in
# the same run (medians of STROBE_BENCH_REPS, default 3; wall time of the
# whole command):
#  * a sampled run of a hot loop (tests/analysis/blame_hot_prog.c with a
#    blame unit attached, `strobe run --sample=10000` for about
#    STROBE_BENCH_BLAME_SECONDS CPU seconds, default 30): `--blame` against
#    `--samples`, which builds the same sample model;
#  * sample lists of STROBE_BENCH_BLAME_LINES lines (default 1000000) of
#    that program's 6 stacks, and of random 1-6-frame stacks (nearly all
#    distinct): `--blame --sample-list` against the plain report of the
#    same experiment.
#
#   bench/blame_attribution.sh BUILD_DIR
BENCH_NAME=bench-blame
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: bench/blame_attribution.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
STROBE=$BUILD/bin/strobe
[ -x "$STROBE" ] || die "$STROBE missing: build first (cmake --build $BUILD)"
REPS=${STROBE_BENCH_REPS:-3}
SECONDS_CPU=${STROBE_BENCH_BLAME_SECONDS:-30}
LINES=${STROBE_BENCH_BLAME_LINES:-1000000}
case "$REPS$SECONDS_CPU$LINES" in *[!0-9]*) die "STROBE_BENCH_REPS/BLAME_SECONDS/BLAME_LINES must be numbers" ;; esac
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH"

# the program and its unit (the lines of blame_hot_prog.c)
cc -g -O0 -o hot "$SRC/tests/analysis/blame_hot_prog.c" -lm
printf 'strobe-blame\t1\t0\nfile\t0\t%s\nfunc\t0\tmain\t0\t11\n' "$SRC/tests/analysis/blame_hot_prog.c" >unit.txt
printf 'var\t0\t-\tglobal\tglobal\t-\tacc\tdouble\t0\t9\nvar\t1\t-\tglobal\tglobal\t-\tbuf\tchar [4096]\t0\t10\n' >>unit.txt
printf 'var\t2\t0\tlocal\t-\t-\ti\tlong\t0\t14\nloc\t0\t14\t0\t0,1,2\nloc\t0\t15\t0\t0\nloc\t0\t16\t0\t1\nend\n' >>unit.txt
objcopy --add-section .strobe_blame=unit.txt --set-section-flags .strobe_blame=contents,readonly hot
# 10 to 20 M iterations per CPU second of sin + memset(4096) on the reference machine
"$STROBE" run --sample=10000 -o run -- ./hot $((SECONDS_CPU * 15000000)) 2>/dev/null

# median wall seconds of REPS runs of "$@" (stdout discarded)
median() {
    local i t
    for ((i = 0; i < REPS; i++)); do
        /usr/bin/time -f '%e' -o time.txt "$@" >/dev/null 2>&1 || die "$* failed"
        cat time.txt
    done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

python3 - "$LINES" <<'EOF'
import random, sys
n = int(sys.argv[1])
random.seed(1)
same = ["blame_hot_prog.c:%d" % l for l in (13, 14, 15, 16, 18)] + ["libm.so.6+0x1000 < blame_hot_prog.c:15"]
with open("same.list", "w") as f:
    for i in range(n):
        f.write("1 %s\n" % same[i % len(same)])
frames = ["blame_hot_prog.c:%d" % l for l in range(11, 20)] + ["libc.so.6+0x%x" % (0x1000 + 16 * i) for i in range(40)]
with open("distinct.list", "w") as f:
    for i in range(n):
        f.write("1 %s\n" % " < ".join(random.choice(frames) for _ in range(random.randint(1, 6))))
EOF

samples=$("$STROBE" report run --blame --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["blame"]["samples"])')
# the count before "distinct stacks" in the section's header
stacks_of() { awk '/distinct stacks/ { for (i = 2; i <= NF; i++) if ($i == "distinct") print $(i - 1) }'; }
stacks=$("$STROBE" report run --blame | stacks_of)
t_samples=$(median "$STROBE" report run --samples)
t_blame=$(median "$STROBE" report run --blame)
t_plain=$(median "$STROBE" report run)
t_same=$(median "$STROBE" report run --blame --sample-list same.list)
t_distinct=$(median "$STROBE" report run --blame --sample-list distinct.list)
d_stacks=$("$STROBE" report run --blame --sample-list distinct.list | stacks_of)

rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.2f M samples/s", (t > 0 ? n / t / 1e6 : 0) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "x%.2f", (b > 0 ? a / b : 0) }'; }
goal() { awk -v n="$1" -v t="$2" 'BEGIN { print (t > 0 && n / t >= 1e6 ? "met" : "NOT met") }'; }
echo "blame attribution (strobe report --blame), medians of $REPS, $(strobe_bench_cpu_model)"
printf '  sampled run, %s samples, %s distinct stacks: --blame %s s (%s), --samples %s s: %s; goal >= 1 M/s: %s\n' \
    "$samples" "$stacks" "$t_blame" "$(rate "$samples" "$t_blame")" "$t_samples" "$(ratio "$t_blame" "$t_samples")" \
    "$(goal "$samples" "$t_blame")"
printf '  sample list, %s lines of 6 stacks: %s s (%s), plain report %s s: %s; goal: %s\n' \
    "$LINES" "$t_same" "$(rate "$LINES" "$t_same")" "$t_plain" "$(ratio "$t_same" "$t_plain")" \
    "$(goal "$LINES" "$t_same")"
printf '  sample list, %s lines of %s distinct stacks: %s s (%s), plain report %s s: %s; goal: %s\n' \
    "$LINES" "$d_stacks" "$t_distinct" "$(rate "$LINES" "$t_distinct")" "$t_plain" "$(ratio "$t_distinct" "$t_plain")" \
    "$(goal "$LINES" "$t_distinct")"
