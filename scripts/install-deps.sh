#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages strobe needs to build, test and benchmark.
# As root, missing packages are installed with apt-get; otherwise the
# missing ones are listed and the script fails.
set -eu
pkgs="build-essential cmake pkg-config clang libclang-rt-14-dev libclang-14-dev llvm-14 llvm-14-dev python3 lttng-tools
libdw-dev libelf-dev libomp-dev libopen-trace-format2-dev otf2-tools libunwind-dev
liblttng-ust-dev uftrace libnng-dev libsystemd-dev libmbedtls-dev libssl-dev libyaml-dev libopenmpi-dev openmpi-bin
mpich libmpich-dev prometheus gdb libpmemobj-dev libprotobuf-c-dev protobuf-c-compiler m4
protobuf-compiler zlib1g-dev chromium opari2 pandoc environment-modules
dpkg-dev debhelper fakeroot lintian debootstrap
libsnappy-dev libcurl4-openssl-dev victoria-metrics curl influxdb
libpq-dev postgresql-15"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "strobe: missing Debian packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
    exit 1
fi
echo "strobe: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
# MPICH is there for the second copy of the MPI wrappers and its tests
# (docs/mpi.md): mpicc and mpirun stay Open MPI's, the MPI strobe builds
# against by default, whatever the order the packages came in
for alt in mpi mpirun; do
    target=$(update-alternatives --list $alt 2>/dev/null | grep openmpi || true)
    if [ -n "$target" ]; then update-alternatives --set $alt "$target" >/dev/null; fi
done
