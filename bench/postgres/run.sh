#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The PostgreSQL part of `make bench` (docs/performance.md, "PostgreSQL
# store"): values per second per core that strobed's postgres store puts
# into PostgreSQL, and the two table designs it was chosen from.
#
#   bench/postgres/run.sh BUILD_DIR
#
# Method: a PostgreSQL 15 server of the script's own (initdb in a temporary
# directory, as `nobody` when run as root, default settings: fsync and
# synchronous_commit on, listening on a unix socket there only). REPS
# repetitions, each of
#  * strobe-bench-postgres store: the store in an in-process daemon, ROWS
#    updates of 100 u64 metrics (10 sets), until the server committed all;
#  * strobe-bench-postgres design: the same values by raw COPY into a wide
#    table (one row per update, the store's design) and a narrow one (one
#    row per value), text and binary COPY, the order rotated by repetition.
# values_per_core_s = values / (CPU seconds of the client + of the server
# backend): what a core of this machine turns into stored values, both
# ends counted. The table gives medians [min-max] over the repetitions;
# each design's ratio to wide-text is formed within a repetition first.
#
# Environment: STROBE_BENCH_PG_REPS (default 5), STROBE_BENCH_PG_ROWS
# (updates per configuration, default 20000, i.e. 2 M values).
# Results: BUILD_DIR/bench/results/postgres_raw.txt and postgres_table.txt.
BENCH_NAME=bench-postgres
. "$(dirname "$0")/../lib.sh"

[ $# -eq 1 ] || die "usage: bench/postgres/run.sh BUILD_DIR"
[ -d "$1" ] || die "$1: no such build directory (run cmake first)"
BUILD=$(cd "$1" && pwd)
PROG=$BUILD/bench/strobe-bench-postgres
if [ ! -x "$PROG" ]; then
    echo "bench-postgres: $PROG not built (STROBE_WITH_POSTGRES=OFF?): not measured"
    exit 0
fi
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/postgres" ] || die "no PostgreSQL 15 server in $PGBIN (Debian package postgresql-15)"
REPS=${STROBE_BENCH_PG_REPS:-5}
ROWS=${STROBE_BENCH_PG_ROWS:-20000}
case "$REPS$ROWS" in *[!0-9]*) die "STROBE_BENCH_PG_* must be numbers" ;; esac

RESULTS=$BUILD/bench/results
mkdir -p "$RESULTS"
RAW=$RESULTS/postgres_raw.txt
TABLE=$RESULTS/postgres_table.txt
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench-pg.XXXXXX")
AS=()
if [ "$(id -u)" -eq 0 ]; then
    chown nobody: "$WORK"
    AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
cleanup() {
    "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
"${AS[@]}" "$PGBIN/initdb" -D "$WORK/data" -U postgres -A trust -E UTF8 --locale=C >"$WORK/initdb.log" 2>&1 ||
    die "initdb failed: $(tail -n 3 "$WORK/initdb.log")"
"${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/data" -l "$WORK/server.log" -w \
    -o "-k $WORK -p 5432 -c listen_addresses=''" start >/dev/null || die "postgres did not start: $(tail -n 3 "$WORK/server.log")"
CONNINFO="host=$WORK port=5432 user=postgres dbname=postgres"
QUEUE=$RESULTS/postgres-queue # a disk, not /tmp (a tmpfs, maybe)

: >"$RAW"
echo "bench-postgres: $REPS repetitions x {store, 4 designs}, $ROWS updates of 100 values each" >&2
for rep in $(seq 1 "$REPS"); do
    rm -rf "$QUEUE"
    "$PROG" store "$CONNINFO" "$ROWS" "$QUEUE" 2>>"$WORK/store.log" | sed "s/^/rep=$rep /" >>"$RAW" ||
        die "strobe-bench-postgres store failed: $(tail -n 3 "$WORK/store.log")"
    "$PROG" design "$CONNINFO" "$ROWS" "$rep" | sed "s/^/rep=$rep /" >>"$RAW" ||
        die "strobe-bench-postgres design failed"
done
rm -rf "$QUEUE"

python3 - "$RAW" "$(date -u +%Y-%m-%d)" "$(strobe_bench_cpu_model)" "$(nproc)" >"$TABLE" <<'EOF'
import re, statistics, sys
raw, day, cpu, ncpu = sys.argv[1:]
runs = {}
for line in open(raw):
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    words = [w for w in line.split() if "=" not in w]
    runs.setdefault(f["rep"], {})[f"{words[0]} {words[1]}"] = f
configs = list(next(iter(runs.values())).keys())
def med(xs):
    return f"{statistics.median(xs):,.0f} [{min(xs):,.0f}-{max(xs):,.0f}]"
print(f"PostgreSQL 15, {day}, {cpu} ({ncpu} cores), {len(runs)} repetitions")
print(f"{'configuration':<22} {'values/s per core':>34} {'values/s (wall)':>34} {'vs wide-text':>14}")
for c in configs:
    pc = [float(r[c]["values_per_core_s"]) for r in runs.values()]
    wall = [float(r[c]["values_per_s"]) for r in runs.values()]
    ratio = [float(r[c]["values_per_core_s"]) / float(r["design wide-text"]["values_per_core_s"]) for r in runs.values()]
    print(f"{c:<22} {med(pc):>34} {med(wall):>34} {statistics.median(ratio):>13.2f}x")
EOF
cat "$TABLE"
