#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: measures what one timestamped function enter/exit event
# costs with strobe and with the tools it competes with, on one workload
# (bench/calls.c: a loop calling an empty noinline function), and prints a
# table with the goals of docs/performance.md next to the results.
#
#   bench/run.sh BUILD_DIR
#
# Method (docs/performance.md explains why):
#  * every configuration runs the same -finstrument-functions binary; only
#    the preloaded hook library differs (strobe, LTTng-UST, OTF2, uftrace),
#    plus the same source built without instrumentation (the bare loop);
#    strobe runs with its default clock (the TSC) and with the peers' one
#    (STROBE_CLOCK=monotonic);
#  * ns/event = (loop time - bare loop time of the same repetition)
#               / events per thread, per thread, averaged over threads;
#    the same from the threads' CPU times, with their CPU share (CPU time
#    / loop time), shows what waiting for a CPU added;
#  * repetitions are interleaved (rep 1 of every configuration, then rep 2,
#    ...), the configuration order rotates from one repetition to the next,
#    and the table shows medians; a ratio to an anchor is computed within
#    each repetition, then the median is taken;
#  * the single-threaded run is pinned to one CPU (STROBE_BENCH_CPU, default
#    the last one), leaving the other CPU(s) to tracer daemons; the
#    2-thread run is not pinned.
# Environment: STROBE_BENCH_CALLS (calls per run, default 10000000; the
# 2-thread run gives each thread half), STROBE_BENCH_REPS (default 5),
# STROBE_BENCH_CPU, STROBE_BENCH_ONLY (space-separated configurations, for
# debugging; the bare loop always runs).
#
# Results: the table on stdout and in BUILD_DIR/bench/results/table.txt;
# machine-readable medians in BUILD_DIR/bench/results/latest.txt (TSV), every
# single run in raw.tsv. Nothing is written in the source tree.
#
# LTTng: needs a session daemon; if none runs, one is started with
# `lttng-sessiond --daemonize --no-kernel` and stopped again at the end.
# Every LTTng run gets its own session (output in the scratch directory,
# channel of 8 x 4 MiB sub-buffers per CPU, discard mode), created before
# the program starts and destroyed after it ends; discarded events are
# reported.
BENCH_NAME=bench # prefix of its messages
. "$(dirname "$0")/lib.sh" # strict mode; a failing command is reported (lib.sh)

[ $# -eq 1 ] || die "usage: bench/run.sh BUILD_DIR"
[ -d "$1" ] || die "$1: no such build directory (run cmake first)"
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
B=$BUILD/bench
RESULTS=$B/results
CALLS=${STROBE_BENCH_CALLS:-10000000}
REPS=${STROBE_BENCH_REPS:-5}
NCPU=$(nproc)
CPU=${STROBE_BENCH_CPU:-$((NCPU - 1))}
case "$CALLS$REPS$CPU" in *[!0-9]*) die "STROBE_BENCH_CALLS/REPS/CPU must be numbers" ;; esac
{ [ "$REPS" -ge 1 ] && [ "$CALLS" -ge 2 ]; } || die "need STROBE_BENCH_REPS >= 1 and STROBE_BENCH_CALLS >= 2"
[ "$CPU" -lt "$NCPU" ] || die "STROBE_BENCH_CPU=$CPU but this machine has $NCPU CPUs"
for f in strobe-bench-calls strobe-bench-calls-plain libstrobe-bench-cyg-null.so; do
    [ -e "$B/$f" ] || die "$B/$f missing: build first (cmake --build $BUILD)"
done
command -v python3 >/dev/null || die "python3 not found (needed for the table)"

# The runs must not inherit a preload; strobe settings from the caller's
# environment (STROBE_CLOCK=monotonic, ...) are kept on purpose and shown in
# the table header.
unset LD_PRELOAD
STROBE_ENV=$(env | grep '^STROBE_' | grep -v '^STROBE_BENCH_' | sort | tr '\n' ' ' || true)

mkdir -p "$RESULTS"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strobe-bench.XXXXXX")
STARTED_SESSIOND=""
SESSION=""

cleanup() {
    if [ -n "$SESSION" ]; then
        lttng destroy "$SESSION" >/dev/null 2>&1 || true
    fi
    if [ -n "$STARTED_SESSIOND" ]; then
        kill "$STARTED_SESSIOND" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# ---- what is available ------------------------------------------------------
STROBE_CONFIGS="strobe_trace strobe_profile strobe_both strobe_trace_mono strobe_profile_mono"
CONFIGS="plain null $STROBE_CONFIGS lttng_tp lttng_fast lttng_verbose otf2 uftrace"
declare -A STATUS # configuration -> "ok" or why it cannot run
declare -A PRELOAD
declare -A LTTNG_EVENTS

library_path() { # prints the path ld.so uses for a library soname, or nothing
    # (awk reads to the end: exiting early would kill ldconfig with SIGPIPE)
    ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n && !found { print $NF; found = 1 }'
}

for c in $CONFIGS; do STATUS[$c]=ok; done

# strobe: the runtime is preloaded from the build tree.
LIBSTROBE=$BUILD/lib/libstrobe.so
if [ ! -e "$LIBSTROBE" ]; then
    for c in $STROBE_CONFIGS; do STATUS[$c]="not built ($LIBSTROBE missing)"; done
fi
for c in $STROBE_CONFIGS; do PRELOAD[$c]=$LIBSTROBE; done
STROBE_CLI=$BUILD/bin/strobe

PRELOAD[otf2]=$B/libstrobe-bench-cyg-otf2.so
[ -e "${PRELOAD[otf2]}" ] || STATUS[otf2]="not built (${PRELOAD[otf2]} missing)"

PRELOAD[lttng_tp]=$B/libstrobe-bench-cyg-lttng.so
LTTNG_EVENTS[lttng_tp]='strobe_bench:*'
PRELOAD[lttng_fast]=$(library_path liblttng-ust-cyg-profile-fast.so.1)
LTTNG_EVENTS[lttng_fast]='lttng_ust_cyg_profile_fast:*'
PRELOAD[lttng_verbose]=$(library_path liblttng-ust-cyg-profile.so.1)
LTTNG_EVENTS[lttng_verbose]='lttng_ust_cyg_profile:*'
[ -e "${PRELOAD[lttng_tp]}" ] || STATUS[lttng_tp]="not built (liblttng-ust-dev missing at configure time)"
[ -n "${PRELOAD[lttng_fast]}" ] || STATUS[lttng_fast]="liblttng-ust-cyg-profile-fast.so.1 not installed (liblttng-ust1)"
[ -n "${PRELOAD[lttng_verbose]}" ] || STATUS[lttng_verbose]="liblttng-ust-cyg-profile.so.1 not installed (liblttng-ust1)"

lttng_reason=""
if ! command -v lttng >/dev/null || ! command -v lttng-sessiond >/dev/null; then
    lttng_reason="lttng-tools not installed"
elif ! lttng list >/dev/null 2>&1; then
    # No session daemon for this user: start one (user space only).
    if lttng-sessiond --daemonize --no-kernel >"$WORK/sessiond.log" 2>&1; then
        if [ "$(id -u)" -eq 0 ]; then pidfile=/var/run/lttng/lttng-sessiond.pid; else pidfile=${LTTNG_HOME:-$HOME}/.lttng/lttng-sessiond.pid; fi
        STARTED_SESSIOND=$(cat "$pidfile" 2>/dev/null || true)
        lttng list >/dev/null 2>&1 || lttng_reason="lttng-sessiond started but does not answer"
    else
        lttng_reason="lttng-sessiond cannot start: $(head -c 200 "$WORK/sessiond.log" | tr '\n' ' ')"
    fi
fi
if [ -n "$lttng_reason" ]; then
    for c in lttng_tp lttng_fast lttng_verbose; do
        [ "${STATUS[$c]}" = ok ] && STATUS[$c]=$lttng_reason
    done
fi

command -v uftrace >/dev/null || STATUS[uftrace]="uftrace not installed"

if [ -n "${STROBE_BENCH_ONLY:-}" ]; then
    for c in $CONFIGS; do
        case " plain $STROBE_BENCH_ONLY " in *" $c "*) ;; *) STATUS[$c]="skipped (STROBE_BENCH_ONLY)" ;; esac
    done
fi

# A preloaded hook library only measures anything if the executable's calls
# to __cyg_profile_func_enter/exit bind to it and not to the empty hooks of
# libstrobe-bench-cyg-null.so (see bench/cyg_null.c): check with the
# dynamic linker's own trace before measuring.
check_binding() { # config
    local lib=${PRELOAD[$1]} log=$WORK/bindings.log
    LD_DEBUG=bindings LD_PRELOAD=$lib STROBE_EXPERIMENT_DIR=$WORK/bind-strobe \
        STROBE_BENCH_OTF2_DIR=$WORK/bind-otf2 "$B/strobe-bench-calls" 1 1 >/dev/null 2>"$log" || true
    rm -rf "$WORK/bind-strobe" "$WORK/bind-otf2"
    local real
    real=$(readlink -f "$lib")
    if ! grep "strobe-bench-calls \[0\] to " "$log" | grep "normal symbol \`__cyg_profile_func_enter'" |
        grep -e "to $lib " -e "to $real " >/dev/null; then
        STATUS[$1]="hooks do not bind to $(basename "$lib") (LD_DEBUG=bindings)"
    fi
}
for c in $STROBE_CONFIGS lttng_tp lttng_fast lttng_verbose otf2; do
    [ "${STATUS[$c]}" = ok ] && check_binding "$c"
done

# ---- one measured run -------------------------------------------------------
RAW=$RESULTS/raw.tsv
printf 'rep\tconfig\tthreads\tcalls_per_thread\tloop_ns\tsys_us\tminflt\tcpu_ns\twall_ns\tbytes\trecorded\tdiscarded\tstatus\n' >"$RAW"
KEEP_STROBE_DIR="" # the 1-thread trace of the last repetition, for the export

sum_sizes() { # dir find-args...: total size in bytes of the matching files
    local d=$1
    shift
    { find "$d" -type f "$@" -printf '%s\n' 2>/dev/null || true; } | awk '{ s += $1 } END { printf "%d\n", s }'
}

usec_now() { # microseconds since the epoch
    local t=$EPOCHREALTIME
    echo "${t/./}"
}

run_one() { # rep config threads
    local rep=$1 cfg=$2 threads=$3
    local calls=$CALLS cpu=$CPU
    if [ "$threads" -gt 1 ]; then
        calls=$((CALLS / threads))
        cpu=-1
    fi
    local out=$WORK/out-$cfg-$threads
    rm -rf "$out"
    local -a cmd=(env "$B/strobe-bench-calls" "$calls" "$threads" "$cpu")
    case $cfg in
    plain) cmd=("$B/strobe-bench-calls-plain" "$calls" "$threads" "$cpu") ;;
    null) cmd=("${cmd[@]:1}") ;;
    strobe_trace) cmd=(env STROBE_EXPERIMENT_DIR="$out" STROBE_PROFILE=0 LD_PRELOAD="$LIBSTROBE" "${cmd[@]:1}") ;;
    strobe_profile) cmd=(env STROBE_EXPERIMENT_DIR="$out" STROBE_TRACE=0 LD_PRELOAD="$LIBSTROBE" "${cmd[@]:1}") ;;
    strobe_both) cmd=(env STROBE_EXPERIMENT_DIR="$out" LD_PRELOAD="$LIBSTROBE" "${cmd[@]:1}") ;;
    # The peers' clock: LTTng-UST and uftrace time events with
    # clock_gettime(CLOCK_MONOTONIC), strobe by default with rdtsc.
    strobe_trace_mono) cmd=(env STROBE_EXPERIMENT_DIR="$out" STROBE_PROFILE=0 STROBE_CLOCK=monotonic
        LD_PRELOAD="$LIBSTROBE" "${cmd[@]:1}") ;;
    strobe_profile_mono) cmd=(env STROBE_EXPERIMENT_DIR="$out" STROBE_TRACE=0 STROBE_CLOCK=monotonic
        LD_PRELOAD="$LIBSTROBE" "${cmd[@]:1}") ;;
    otf2) cmd=(env STROBE_BENCH_OTF2_DIR="$out" LD_PRELOAD="${PRELOAD[otf2]}" "${cmd[@]:1}") ;;
    lttng_*) cmd=(env LD_PRELOAD="${PRELOAD[$cfg]}" "${cmd[@]:1}") ;;
    uftrace) cmd=(uftrace record --no-libcall -d "$out" "${cmd[@]:1}") ;;
    esac

    local status=ok discarded=- bytes=-
    if [ "${cfg#lttng_}" != "$cfg" ]; then
        SESSION=strobe-bench-$$-$cfg-$threads-$rep
        if ! { lttng create "$SESSION" --output="$out" &&
            lttng enable-channel -u -s "$SESSION" --subbuf-size=4M --num-subbuf=8 bench &&
            lttng enable-event -u -s "$SESSION" -c bench "${LTTNG_EVENTS[$cfg]}" &&
            lttng start "$SESSION"; } >"$WORK/lttng.log" 2>&1; then
            status="lttng session setup failed: $(grep -m1 -i error "$WORK/lttng.log" | tr '\t' ' ')"
        fi
    fi

    local line="" t0 t1
    t0=$(usec_now)
    if [ "$status" = ok ]; then
        line=$("${cmd[@]}" 2>"$WORK/stderr") || status="exit status $?: $(head -c 200 "$WORK/stderr" | tr '\t\n' '  ')"
    fi
    t1=$(usec_now)

    if [ -n "$SESSION" ]; then
        lttng stop "$SESSION" >/dev/null 2>&1 || true
        discarded=$(lttng list "$SESSION" 2>/dev/null | awk '/Discarded events:/ { s += $3 } END { printf "%d\n", s }')
        lttng destroy "$SESSION" >/dev/null 2>&1 || true
        SESSION=""
    fi

    local loop sys_us minflt cpu_ns
    loop=$(echo "$line" | sed -n 's/.* loop_ns=\([0-9,]*\).*/\1/p')
    sys_us=$(echo "$line" | sed -n 's/.* sys_us=\([0-9,]*\).*/\1/p')
    minflt=$(echo "$line" | sed -n 's/.* minflt=\([0-9,]*\).*/\1/p')
    cpu_ns=$(echo "$line" | sed -n 's/.* cpu_ns=\([0-9,]*\).*/\1/p')
    if [ "$status" = ok ] && ! [[ $loop =~ ^[0-9]+(,[0-9]+)*$ ]]; then
        status="unexpected output: ${line:0:100}"
    fi
    local recorded=-
    if [ "$status" = ok ]; then
        case $cfg in
        strobe_trace | strobe_both | strobe_trace_mono)
            bytes=$(sum_sizes "$out" -name 't*.evt')
            # Count what strobe really recorded (an independent reader of
            # src/common/format.h) instead of trusting the call count.
            local counted
            if ! counted=$(find "$out" -type f -name 't*.evt' -print0 | xargs -0 -r "$B/strobe-bench-count-events" 2>&1); then
                status="trace unreadable: $(echo "${counted:0:200}" | tr '\t\n' '  ')"
            elif [ -z "$counted" ]; then
                status="no t*.evt trace written under STROBE_EXPERIMENT_DIR"
            else
                local enter exit
                enter=$(echo "$counted" | sed -n 's/.* enter=\([0-9]*\).*/\1/p')
                exit=$(echo "$counted" | sed -n 's/.* exit=\([0-9]*\).*/\1/p')
                recorded=$((enter + exit))
                discarded=$((2 * calls * threads - recorded))
                [ "$discarded" -ge 0 ] || discarded=0
            fi
            ;;
        strobe_profile | strobe_profile_mono)
            [ -n "$(find "$out" -type f -name 't*.prof' -print -quit 2>/dev/null)" ] ||
                status="no t*.prof profile written under STROBE_EXPERIMENT_DIR"
            ;;
        otf2) bytes=$(sum_sizes "$out" -name '*.evt') ;;
        lttng_*) bytes=$(sum_sizes "$out" ! -name metadata ! -path '*/index/*') ;;
        uftrace) bytes=$(sum_sizes "$out" -regex '.*/[0-9]+\.dat') ;;
        esac
        if [ "$bytes" = 0 ]; then
            status="no trace data written"
        fi
        if [ "${cfg%_mono}" != "$cfg" ]; then
            local defs clk
            defs=$(find "$out" -type f -name defs -print -quit)
            clk=$("$B/strobe-bench-count-events" --clock "$defs" 2>&1) || true
            [ "$clk" = monotonic ] || status="STROBE_CLOCK=monotonic run recorded clock '${clk:0:100}'"
        fi
        # Runs that lost a few events are kept (table.py notes them); a tool
        # that recorded less than 90% of the events is not measured at all.
        if [ "$discarded" != - ] && [ $((discarded * 10)) -gt $((2 * calls * threads)) ]; then
            status="lost $discarded of $((2 * calls * threads)) events"
        fi
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$cfg" "$threads" "$calls" "${loop:--}" \
        "${sys_us:--}" "${minflt:--}" "${cpu_ns:--}" "$(((t1 - t0) * 1000))" "$bytes" "$recorded" "$discarded" "$status" >>"$RAW"

    if [ "$cfg" = strobe_trace ] && [ "$threads" = 1 ] && [ "$rep" = "$REPS" ] && [ "$status" = ok ]; then
        mv "$out" "$WORK/strobe-keep"
        KEEP_STROBE_DIR=$WORK/strobe-keep
    fi
    rm -rf "$out"
}

# ---- the measurement --------------------------------------------------------
# Anything else the CPUs did meanwhile (other processes, the hypervisor's
# other guests) weighs on the 2-thread run most: recorded, not corrected.
cpu_jiffies() { # "busy steal total" of all CPUs from /proc/stat
    awk '$1 == "cpu" { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, $9, t }' /proc/stat
}
LOAD0=$(cut -d' ' -f1 /proc/loadavg)
read -r BUSY0 STEAL0 TOTAL0 <<<"$(cpu_jiffies)"
RUN_CONFIGS=""
for c in $CONFIGS; do [ "${STATUS[$c]}" = ok ] && RUN_CONFIGS="$RUN_CONFIGS $c"; done
read -r -a run_list <<<"$RUN_CONFIGS"
echo "bench: $REPS repetitions x ${#run_list[@]} configurations x {1, 2} threads, $CALLS calls per run" >&2
for rep in $(seq 1 "$REPS"); do
    # Rotate the order so no configuration always runs right after the same
    # neighbour (page cache, writeback and daemon state carry over).
    n=${#run_list[@]}
    for threads in 1 2; do
        for i in $(seq 0 $((n - 1))); do
            run_one "$rep" "${run_list[$(((i + rep) % n))]}" "$threads"
        done
    done
    echo "bench: repetition $rep/$REPS done" >&2
done

read -r BUSY1 STEAL1 TOTAL1 <<<"$(cpu_jiffies)"
LOAD1=$(cut -d' ' -f1 /proc/loadavg)

# ---- strobe trace -> OTF2 export of one run ---------------------------------
EXPORT=$RESULTS/export.tsv
printf 'status\tbytes\tevents_in_defs\texport_ns\n' >"$EXPORT"
if [ -z "$KEEP_STROBE_DIR" ]; then
    printf '%s\t-\t-\t-\n' "no strobe trace to export" >>"$EXPORT"
elif [ ! -x "$STROBE_CLI" ]; then
    printf '%s\t-\t-\t-\n' "not built ($STROBE_CLI missing)" >>"$EXPORT"
else
    t0=$(usec_now)
    if "$STROBE_CLI" export "$KEEP_STROBE_DIR" --format otf2 -o "$WORK/export" >"$WORK/export.log" 2>&1; then
        t1=$(usec_now)
        ev=-
        if command -v otf2-print >/dev/null; then
            ev=$({ otf2-print -G "$WORK/export/traces.otf2" 2>/dev/null || true; } |
                awk '/^LOCATION / { for (i = 1; i <= NF; i++) if ($i == "Events:") { gsub(",", "", $(i + 1)); s += $(i + 1) } } END { printf "%d\n", s }')
        fi
        printf 'ok\t%s\t%s\t%s\n' "$(sum_sizes "$WORK/export" -name '*.evt')" "$ev" "$(((t1 - t0) * 1000))" >>"$EXPORT"
    else
        printf '%s\t-\t-\t-\n' "strobe export failed: $(head -c 200 "$WORK/export.log" | tr '\t\n' '  ')" >>"$EXPORT"
    fi
fi

# ---- machine and tools ------------------------------------------------------
STROBE_CLOCK_USED=-
if [ -n "$KEEP_STROBE_DIR" ]; then
    defs=$(find "$KEEP_STROBE_DIR" -type f -name defs -print -quit)
    [ -z "$defs" ] || STROBE_CLOCK_USED=$("$B/strobe-bench-count-events" --clock "$defs" 2>/dev/null || echo unknown)
fi
INFO=$RESULTS/info.tsv
{
    printf 'date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf 'cpu\t%s\n' "$(strobe_bench_cpu_model)"
    printf 'nproc\t%s\n' "$NCPU"
    printf 'threads_per_core\t%s\n' "$(lscpu 2>/dev/null | awk -F: '/^Thread\(s\) per core/ { gsub(/ /, "", $2); print $2 }')"
    printf 'load\t%s -> %s\n' "$LOAD0" "$LOAD1"
    dt=$((TOTAL1 - TOTAL0 > 0 ? TOTAL1 - TOTAL0 : 1))
    printf 'steal_pct\t%s\n' "$(((STEAL1 - STEAL0) * 1000 / dt / 10)).$(((STEAL1 - STEAL0) * 1000 / dt % 10))"
    printf 'busy_pct\t%s\n' "$(((BUSY1 - BUSY0) * 1000 / dt / 10)).$(((BUSY1 - BUSY0) * 1000 / dt % 10))"
    printf 'clocksource\t%s\n' "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"
    printf 'kernel\t%s\n' "$(uname -r)"
    cc=$(sed -n '/^CMAKE_C_COMPILER:[A-Z]*=/{s///p;q}' "$BUILD/CMakeCache.txt")
    printf 'compiler\t%s\n' "$("${cc:-cc}" --version 2>/dev/null | sed -n 1p)"
    printf 'calls\t%s\n' "$CALLS"
    printf 'reps\t%s\n' "$REPS"
    printf 'cpu_pin\t%s\n' "$CPU"
    printf 'strobe_clock\t%s\n' "$STROBE_CLOCK_USED"
    printf 'strobe_env\t%s\n' "${STROBE_ENV:--}"
    printf 'lttng_version\t%s\n' "$(dpkg-query -W -f='${Version}' liblttng-ust1 2>/dev/null || echo unknown)"
    printf 'otf2_version\t%s\n' "$(dpkg-query -W -f='${Version}' libopen-trace-format2-dev 2>/dev/null || echo unknown)"
    printf 'uftrace_version\t%s\n' "$(uftrace --version 2>/dev/null | awk 'NR == 1 { print $2 }' || echo unknown)"
    for c in $CONFIGS; do printf 'status.%s\t%s\n' "$c" "${STATUS[$c]}"; done
} >"$INFO"

python3 "$SRC/table.py" "$RESULTS" | tee "$RESULTS/table.txt"
