#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make bench`: strobe instrument and OPARI2 2.0.7 (Debian opari2) on the
# tricky OpenMP sources of tests/instrument/tricky/ (docs/instrument.md,
# "Compared with OPARI2"). For each source and each tool:
#   instr  the tool instruments it (exit status 0);
#   cc     the output compiles and links with gcc -fopenmp;
#   same   the program prints what the uninstrumented build prints
#          (which includes __LINE__ values);
#   line   a compile error in the instrumented file names the original file
#          and line: the line of LINE_PROBE built with -DTRICKY_ERROR
#          (tricky/probe.h), or for line_error.c, whose error is
#          unconditional, the line of `undeclared_in_region` (the tool's
#          own message counts when the tool stops on it);
#   dirs   k/N: of the N source lines holding an OpenMP directive (#pragma,
#          _Pragma, or the use of a macro whose body is an OpenMP _Pragma),
#          the k lines the tool made a region for (`omp section` lines are
#          not counted: OPARI2 reports sections under their `omp sections`
#          region, strobe makes a region of each);
#   warn   warnings of -Wall -Wextra on the instrumented file minus those on
#          the original, gcc/clang (clang only when installed).
# OPARI2's output is built as its documentation says (opari2_link in
# bench/lib.sh), with the null POMP2 library bench/pomp2_null.c.
# Nothing is written in the source tree (OPARI2 writes FILE.opari.inc next to
# FILE.c, so the sources are copied to a scratch folder first).
#
#   tests/instrument/opari2_compare.sh BUILD_DIR
#
# Environment: STROBE_COMPARE_KEEP=DIR keeps every output, build log and
# program output there (for looking into a "no").
BENCH_NAME=opari2-compare
. "$(dirname "$0")/../../bench/lib.sh"

[ $# -eq 1 ] || die "usage: tests/instrument/opari2_compare.sh BUILD_DIR"
BUILD=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
STROBE=$BUILD/bin/strobe
[ -x "$STROBE" ] || die "$STROBE missing: build first"
command -v gcc >/dev/null || die "gcc not found"
TOOLS="strobe"
if command -v opari2 >/dev/null && command -v opari2-config >/dev/null; then
    TOOLS="strobe opari2"
else
    echo "$BENCH_NAME: opari2 not installed (scripts/install-deps.sh): only strobe instrument is tried"
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cp "$ROOT"/tests/instrument/tricky/*.[ch] "$W"/
gcc -O2 -fopenmp -c "$ROOT/bench/pomp2_null.c" -o "$W/pomp2_null.o"
CFLAGS=(-O2 -fopenmp -I"$W" -I"$ROOT/include")

HAVE_CLANG=yes
command -v clang >/dev/null || HAVE_CLANG=no
warnings() { # compiler file.c: number of warnings of -Wall -Wextra
    "$1" "${CFLAGS[@]}" -Wall -Wextra -fsyntax-only "$2" 2>&1 | grep -c 'warning:' || true
}

directive_lines() { # file.c: the lines holding an OpenMP directive, sorted as text
    local macros
    macros=$(sed -n 's/^#define \([A-Za-z_0-9]*\) _Pragma("omp.*/\1/p' "$1" | paste -sd'|')
    { grep -n -e '^ *#pragma omp' -e '_Pragma("omp' "$1" | grep -v -e '^[0-9]*:#define' -e 'omp section *$' || true
      [ -z "$macros" ] || grep -n -E "^ *($macros) *\$" "$1" || true; } | cut -d: -f1 | sort -u
}

region_lines() { # tool out.c src.c: the lines the tool's regions name, sorted as text
    case $1 in
    strobe) sed -n 's/^{ static strobe_region_t r = {"omp [^"]*", "[^"]*", \([0-9]*\), 0}; return &r; }$/\1/p' "$2" ;;
    opari2) { grep -o 'sscl=[^:]*:[0-9]*' "$3.opari.inc" || true; } | cut -d: -f2 ;;
    esac | sort -u
}

# instrument TOOL SRC OUT.c: 0 if the tool instrumented SRC (its messages in OUT.c.log)
instrument() {
    case $1 in
    strobe) "$STROBE" instrument "$2" -o "$3" -- -fopenmp -I"$W" >"$3.log" 2>&1 ;;
    opari2) (cd "$W" && opari2 "$2" "$3") >"$3.log" 2>&1 ;;
    esac
}

# build TOOL OUT.c EXE [flags]: compile and link an instrumented file
build() {
    local tool=$1 src=$2 exe=$3
    shift 3
    case $tool in
    strobe) gcc "${CFLAGS[@]}" "$@" "$src" -o "$exe" ;;
    opari2)
        gcc "${CFLAGS[@]}" "$@" -c "$src" -o "$exe.o" && opari2_link "$exe" "$W/pomp2_null.o" "$exe.o"
        ;;
    esac
}

TABLE=$W/table
printf '%-18s %-7s %-5s %-7s %-5s %-5s %-6s %s\n' file tool instr cc same line dirs warn >"$TABLE"
for src in "$W"/*.c; do
    f=$(basename "$src" .c)
    [ "$f" != pomp2_null ] || continue
    if [ "$f" = line_error ]; then
        want=$(grep -n 's += undeclared_in_region' "$src" | cut -d: -f1)
        expect_build=no
    else
        want=$(grep -n 'LINE_PROBE;' "$src" | head -1 | cut -d: -f1)
        expect_build=yes
        gcc "${CFLAGS[@]}" "$src" -o "$W/$f.plain" || die "$f.c does not build uninstrumented"
        OMP_NUM_THREADS=2 "$W/$f.plain" >"$W/$f.plain.out"
    fi
    base_gcc=$(warnings gcc "$src")
    [ "$HAVE_CLANG" = no ] || base_clang=$(warnings clang "$src")
    for tool in $TOOLS; do
        out=$W/$f.$tool.c
        instr=yes cc=- same=- line=no warn=- dirs=-
        if ! instrument "$tool" "$src" "$out"; then
            instr=no
            # a tool that refuses a file with a compile error must say where
            [ "$expect_build" = yes ] || ! grep -q "$f\.c:$want:[0-9]*: error" "$out.log" || line=yes
        else
            warn=$(($(warnings gcc "$out") - base_gcc))/-
            [ "$HAVE_CLANG" = no ] || warn=${warn%-}$(($(warnings clang "$out") - base_clang))
            dirs="$(comm -12 <(directive_lines "$src") <(region_lines "$tool" "$out" "$src") | wc -l)/$(directive_lines "$src" | wc -l)"
            if [ "$expect_build" = yes ]; then
                cc=no
                if build "$tool" "$out" "$W/$f.$tool" >"$out.cc.log" 2>&1; then
                    cc=yes
                    same=no
                    OMP_NUM_THREADS=2 timeout 20 "$W/$f.$tool" >"$W/$f.$tool.out" 2>&1 &&
                        cmp -s "$W/$f.plain.out" "$W/$f.$tool.out" && same=yes
                fi
                build "$tool" "$out" "$W/$f.$tool.err" -DTRICKY_ERROR >"$out.err.log" 2>&1 || true
            else
                cc=yes
                build "$tool" "$out" "$W/$f.$tool.err" >"$out.err.log" 2>&1 && cc="yes (!)" || cc="no (ok)"
            fi
            # the first diagnostic at a place of FILE.c (gcc names the
            # macro's use for LINE_PROBE in a note) must name the line
            [ "$(grep -o -m1 "$f\.c:[0-9]*:[0-9]*:" "$out.err.log" | head -1 | cut -d: -f2)" != "$want" ] || line=yes
        fi
        printf '%-18s %-7s %-5s %-7s %-5s %-5s %-6s %s\n' "$f.c" "$tool" "$instr" "$cc" "$same" "$line" "$dirs" "$warn" >>"$TABLE"
        if [ -n "${STROBE_COMPARE_KEEP:-}" ]; then
            mkdir -p "$STROBE_COMPARE_KEEP"
            cp "$W"/"$f".* "$STROBE_COMPARE_KEEP"/
        fi
    done
done
echo "strobe instrument vs OPARI2 $(dpkg-query -W -f='${Version}' opari2 2>/dev/null || echo '?') on tests/instrument/tricky (gcc $(gcc -dumpfullversion), 2 threads)"
cat "$TABLE"
