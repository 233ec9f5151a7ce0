#!/bin/sh
# SPDX-License-Identifier: MIT
# `make check-packages` (docs/install.md): builds strobe's Debian packages
# from this tree with dpkg-buildpackage, checks them with lintian (an error
# fails, warnings are listed), installs them with apt into a throw-away
# Debian 12 root made by debootstrap, and there, from the installed files
# only: measures the demo, built by gcc and by strobe cc, and checks its
# visit counts, builds a program
# against the -dev package through pkg-config and CMake, checks strobed's
# default configuration as the service user, and lists the manual pages.
# Needs root (debootstrap, chroot, mount) and Debian's package archive.
#
# Usage: scripts/check-packages.sh [WORKDIR]
#   WORKDIR  where the packages, the logs and the root go (default: a new
#            temporary folder, removed at the end); the .deb files stay
#            there when it is given.
# STROBE_DEBIAN_MIRROR  the archive debootstrap and apt use
#                       (default http://deb.debian.org/debian)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
mirror=${STROBE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
say() { echo "check-packages: $*" >&2; }
die() { say "$*"; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot); run as root or under sudo"
for t in dpkg-buildpackage lintian debootstrap; do
    command -v $t >/dev/null || die "$t not found (run scripts/install-deps.sh as root)"
done

if [ $# -ge 1 ]; then
    work=$1
    keep=1
    mkdir -p "$work"
    work=$(cd "$work" && pwd)
else
    work=$(mktemp -d /tmp/strobe-packages.XXXXXX)
    keep=0
fi
root=$work/root
cleanup() {
    for m in "$root/dev/pts" "$root/dev" "$root/proc"; do
        mountpoint -q "$m" 2>/dev/null && umount -l "$m"
    done
    [ "$keep" -eq 1 ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
now() { date +%s; }

# 1. build, from the tracked and new files of this tree only (not its build
# folders); the packages land in $work
t0=$(now)
rm -rf "$work/src" "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo
mkdir -p "$work/src"
(cd "$src" && git ls-files -co --exclude-standard | tar -cf - -T -) | tar -xf - -C "$work/src"
(cd "$work/src" && dpkg-buildpackage -b -us -uc -j"$(nproc)") >"$work/build.log" 2>&1 || {
    tail -30 "$work/build.log" >&2
    die "dpkg-buildpackage failed (whole log: $work/build.log)"
}
t1=$(now)
say "built $(ls "$work"/*.deb | wc -l) packages in $((t1 - t0)) s: $(cd "$work" && ls ./*.deb | sed 's|^\./||' | tr '\n' ' ')"

# 2. lintian: errors fail, the rest is shown
changes=$(ls "$work"/*.changes)
if ! lintian --fail-on error --tag-display-limit 0 "$changes" >"$work/lintian.log" 2>&1; then
    cat "$work/lintian.log" >&2
    die "lintian found errors"
fi
say "lintian: no errors, $(grep -c '^W:' "$work/lintian.log" || true) warnings, $(grep -c '^I:' "$work/lintian.log" || true) notes"
grep -v 'root privileges is not recommended' "$work/lintian.log" | sed 's/^/    /' >&2 || true

# 3. a fresh Debian 12, with the packages installed by apt
rm -rf "$root"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -20 "$work/debootstrap.log" >&2
    die "debootstrap failed (whole log: $work/debootstrap.log)"
}
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mkdir -p "$root/debs"
cp "$work"/*.deb "$root/debs/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 /bin/sh -ec "$1"; }
t2=$(now)
in_root "export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq ./debs/*.deb gcc libc6-dev pkg-config cmake make man-db >/dev/null" \
    >"$work/install.log" 2>&1 || {
    tail -30 "$work/install.log" >&2
    die "apt install ./*.deb failed in the fresh root (whole log: $work/install.log)"
}
t3=$(now)
say "installed into a fresh Debian 12 root in $((t2 - t1)) s (debootstrap) + $((t3 - t2)) s (apt)"

# 4. the demo and a downstream program, from the installed files
out=$(in_root '
cd /tmp
ex=/usr/share/doc/strobe/examples
gcc -g -finstrument-functions -pthread $ex/demo/demo.c -o demo
strobe run -o demo-exp -- ./demo >/dev/null
strobe report demo-exp >report.txt
# the visits of a function in the flat profile: the first whole number after a time
visits() {
  for f in fib sample; do
    awk -v f="$f" "NF > 2 && \$(NF-1) == f { for (i = 2; i <= NF; i++) if (\$i ~ /^[0-9]+\$/ && \$(i-1) ~ /s\$/) { print p f, \$i; exit } }" p="$1" report.txt
  done
}
visits ""
# strobe cc: clang-14 (a recommendation of strobe) with the plugin and headers
strobe cc -pthread $ex/demo/demo.c -o democc
readelf -S democc | grep -q strobe_blame && echo "blame table ok"
strobe run -o cc-exp -- ./democc >/dev/null
strobe report cc-exp >report.txt
visits "cc "
cc $ex/annotate/annotate.c -o annotate $(pkg-config --cflags --libs strobe) && ./annotate >/dev/null && echo "pkg-config ok"
mkdir -p cm && cd cm && printf "%s\n" "cmake_minimum_required(VERSION 3.20)" "project(d C)" \
  "find_package(strobe REQUIRED)" "add_executable(annotate $ex/annotate/annotate.c)" \
  "target_link_libraries(annotate PRIVATE strobe::strobe)" >CMakeLists.txt
cmake -S . -B b >/dev/null && cmake --build b >/dev/null && ./b/annotate >/dev/null && echo "cmake ok"
getent passwd strobe | cut -d: -f1,6
sed "s|/var/log/strobe/|/tmp/|" /etc/strobe/strobed.yaml >/tmp/strobed.yaml
setpriv --reuid=strobe --regid=strobe --clear-groups strobed --check -c /tmp/strobed.yaml >/dev/null && echo "strobed check ok"
test -f /lib/systemd/system/strobed.service && test -f /lib/systemd/system/strobed@.service && echo "units ok"
for p in strobe strobe-run strobe-report strobe-filter strobed strobed.yaml; do man -w $p >/dev/null || echo "no page $p"; done
echo pages ok
') || die "the installed packages failed in the fresh root"
t4=$(now)
expected="fib 177
sample 25000
blame table ok
cc fib 177
cc sample 25000
pkg-config ok
cmake ok
strobe:/var/lib/strobe
strobed check ok
units ok
pages ok"
if [ "$out" != "$expected" ]; then
    printf '%s\n' "expected:" "$expected" "got:" "$out" >&2
    die "the installed packages did not behave as expected"
fi
say "demo, downstream builds, service user and configuration, pages: ok in the fresh root ($((t4 - t3)) s)"
say "total $((t4 - t0)) s"
