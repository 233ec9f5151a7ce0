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
