# SPDX-License-Identifier: MIT
#
# Sourced first by every bench script (bench/*.sh, bench/*/*.sh): strict
# mode, and a script that stops always says where and why. Without the ERR
# trap, `set -e` ends a script silently, e.g. with status 141 when a reader
# in a pipeline stops early and pipefail reports its writer's SIGPIPE.
set -Eeuo pipefail

strobe_bench_failed() { # status file line command
    local why="status $1"
    [ "$1" -le 128 ] || why="killed by SIG$(kill -l "$(($1 - 128))" 2>/dev/null || echo "$(($1 - 128))")"
    echo "${0##*/}: stopped at ${2##*/} line $3: \`$4' failed ($why)" >&2
}
trap 'strobe_bench_failed $? "${BASH_SOURCE[0]}" "$LINENO" "$BASH_COMMAND"' ERR
trap 'echo "${0##*/}: interrupted" >&2; exit 130' INT TERM

strobe_bench_cpu_model() { # the CPU's model name, as lscpu prints it
    lscpu 2>/dev/null | awk '/^Model name:/ && !n++ { sub(/^Model name: */, ""); print }'
}

# strobe_bench_median: the median of the numbers on stdin, one per line
strobe_bench_median() {
    sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# die MESSAGE: "$BENCH_NAME: MESSAGE" on stderr, exit status 1
die() {
    echo "${BENCH_NAME:-${0##*/}}: $*" >&2
    exit 1
}

# optional_sources VAR WHAT HOWTO: a benchmark of third-party sources named
# by the environment variable VAR ends here, successfully, with one line
# saying so, when VAR is not set
optional_sources() {
    [ -z "${!1:-}" ] || return 0
    echo "${BENCH_NAME:-${0##*/}}: $1 is not set: $2 not measured ($3)"
    exit 0
}

# splash3_codes DIR: prints the codes/ folder of the SPLASH-3 checkout DIR
# (its top folder or its codes/ folder), or dies saying what is wrong
splash3_codes() {
    local s3
    s3=$(cd "$1" 2>/dev/null && pwd) || die "STROBE_SPLASH3_DIR=$1: no such folder"
    [ -f "$s3/codes/Makefile.config" ] && s3=$s3/codes
    [ -f "$s3/Makefile.config" ] && [ -f "$s3/pthread_macros/pthread.m4.stougie" ] ||
        die "$s3: not a SPLASH-3 checkout (no codes/Makefile.config or pthread_macros/pthread.m4.stougie)"
    echo "$s3"
}

# splash3_build CODES DEST LOG MAKE-VARIABLES... -- FOLDER...: copies each
# program FOLDER (under CODES, e.g. kernels/fft) with SPLASH-3's makefile
# configuration and m4 macros to DEST (emptied first; CODES is never
# written) and builds it there with SPLASH-3's own makefile, passing the
# MAKE-VARIABLES (CC=..., CFLAGS=...); dies with the end of LOG on failure
splash3_build() {
    local codes=$1 dest=$2 log=$3 d
    shift 3
    local -a vars=()
    while [ "$1" != -- ]; do
        vars+=("$1")
        shift
    done
    shift
    rm -rf "${dest:?}"
    mkdir -p "$dest"
    cp -r "$codes/Makefile.config" "$codes/pthread_macros" "$dest/"
    for d in "$@"; do
        mkdir -p "$dest/$(dirname "$d")"
        cp -r "$codes/$d" "$dest/$d"
        make -s -C "$dest/$d" clean >/dev/null
        make -s -C "$dest/$d" "${vars[@]}" >"$log" 2>&1 ||
            die "$d ($dest): build failed: $(tail -3 "$log" | tr '\n' ' ')"
    done
}

# opari2_link EXE NULL.o OBJ...: links objects compiled from OPARI2's output
# as OPARI2's documentation says: `opari2-config --nm` on them, piped into
# `opari2-config --region-initialization`, makes EXE.init.c (the
# POMP2_Init_regions() that registers every region), linked with the null
# POMP2 library NULL.o (bench/pomp2_null.c); returns gcc's status
opari2_link() {
    local exe=$1 null=$2
    shift 2
    $(opari2-config --nm) "$@" | $(opari2-config --region-initialization) >"$exe.init.c" &&
        gcc -O2 -fopenmp -c "$exe.init.c" -o "$exe.init.o" &&
        gcc -fopenmp "$@" "$exe.init.o" "$null" -o "$exe"
}
