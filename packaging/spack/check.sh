#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds this checkout with Spack (packaging/spack, docs/install.md
# "Spack") on a Debian 12 machine, every dependency taken from the system
# (packages-debian12.yaml), in two configurations: +mpi+tm+petra+otf2 and
# ~mpi~tm~petra~otf2. Each is built by `spack dev-build --test=root` (the
# recipe's install-time smoke test: strobe --version and the demo under
# strobe run), then run again from its Spack prefix with a clean
# environment: the demo measured and reported, and in the build without the
# optional parts the one line each of them answers.
#
# Usage: STROBE_SPACK_DIR=/path/to/spack packaging/spack/check.sh
# Spack's own state (configuration, install tree, caches, stage) goes to
# STROBE_SPACK_STATE (default: $TMPDIR/strobe-spack), never to ~/.spack or
# into this checkout. Tried with Spack 0.21.2 offline: without clingo
# there, Spack's original concretizer is used (Spack 0.22 and later have
# only clingo, which they bootstrap from the network).
# Exit status: 0 passed, 77 skipped (no Spack given), else failed.
set -eu
if [ -z "${STROBE_SPACK_DIR:-}" ]; then
    echo "skipped: set STROBE_SPACK_DIR to a Spack checkout"
    exit 77
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
state=${STROBE_SPACK_STATE:-${TMPDIR:-/tmp}/strobe-spack}
export SPACK_ROOT="$STROBE_SPACK_DIR"
export SPACK_USER_CONFIG_PATH="$state/config" SPACK_USER_CACHE_PATH="$state/cache"
export SPACK_SYSTEM_CONFIG_PATH="$state/system"
spack="$SPACK_ROOT/bin/spack"
mkdir -p "$SPACK_USER_CONFIG_PATH" "$SPACK_SYSTEM_CONFIG_PATH"
concretizer=clingo
"$spack" python -c 'import clingo' >/dev/null 2>&1 || concretizer=original
cat >"$SPACK_USER_CONFIG_PATH/config.yaml" <<YAML
config:
  concretizer: $concretizer
  install_tree:
    root: $state/install
  build_stage: [$state/stage]
  source_cache: $state/cache/source
  misc_cache: $state/cache/misc
  build_jobs: ${STROBE_SPACK_JOBS:-2}
YAML
cp "$top/packaging/spack/packages-debian12.yaml" "$SPACK_USER_CONFIG_PATH/packages.yaml"
"$spack" compiler find --scope user >/dev/null
"$spack" repo list | grep -q "$top/packaging/spack" || "$spack" repo add --scope user "$top/packaging/spack" >/dev/null
echo "spack $("$spack" --version), concretizer $concretizer, state in $state"

clean="env -i PATH=/usr/bin:/bin HOME=/nonexistent"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -g -finstrument-functions -pthread "$top/examples/demo/demo.c" -o "$work/demo"
for variants in +mpi+tm+petra+otf2 ~mpi~tm~petra~otf2; do
    spec="strobe@develop$variants"
    "$spack" uninstall -y "$spec" >/dev/null 2>&1 || true
    start=$(date +%s)
    "$spack" dev-build -q --test=root -d "$top" "$spec"
    prefix=$("$spack" location -i "$spec")
    echo "$spec: built and installed in $(($(date +%s) - start)) s into $prefix"
    $clean "$prefix/bin/strobe" --version
    (cd "$work" && rm -rf "exp$variants" &&
        $clean "$prefix/bin/strobe" run -o "exp$variants" -- ./demo >/dev/null 2>&1 &&
        $clean "$prefix/bin/strobe" report "exp$variants" --format json |
        python3 -c 'import json, sys; d = json.load(sys.stdin); r = d["regions"];
print("demo:", *sorted(r[f["region"]]["name"] + " " + str(f["visits"]) for f in d["flat"]))')
    case $variants in
    ~*)
        for cmd in "run --tm -- true" "run --mpi -- true" "export x --format otf2 -o y" "petra x ls"; do
            # shellcheck disable=SC2086
            if $clean "$prefix/bin/strobe" $cmd >"$work/out" 2>&1; then
                echo "strobe $cmd: succeeded in a build without it" >&2
                exit 1
            fi
            cat "$work/out"
        done
        for f in libstrobe-tm.so.0 libstrobe-petra.so.0 libstrobe-mpi.so.0; do
            if [ -e "$prefix/lib/$f" ]; then
                echo "$prefix/lib/$f: installed by a build without it" >&2
                exit 1
            fi
        done
        ;;
    esac
done
echo "spack check: passed"
