# SPDX-License-Identifier: MIT
"""Spack recipe of strobe (docs/install.md, "Spack").

strobe has no public address yet: `git` below is the checkout this recipe
is kept in, so `spack install strobe@develop` builds that checkout's branch
main, and `spack dev-build -d CHECKOUT strobe@develop` (or `spack develop`
in an environment) builds a working tree as it is. Every STROBE_WITH_*
switch of cmake/StrobeOptions.cmake is passed explicitly, so that what is
built depends on the spec, never on what the machine happens to have.
"""

import os
import tempfile

from spack.package import *

# packaging/spack/packages/strobe/package.py -> the checkout's top folder
_CHECKOUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 4))

class Strobe(CMakePackage):
    """Performance toolkit for parallel C/C++ programs: a runtime preloaded
    by `strobe run` records calls, threads, locks, transactions and MPI; the
    `strobe` command reports and exports (OTF2, Chrome, Perfetto, Cube4,
    pprof, Paraver); the strobed daemon monitors metric sets live."""

    homepage = "file://" + _CHECKOUT
    git = "file://" + _CHECKOUT

    version("develop", branch="main")

    variant("mpi", default=True, description="MPI profiler libstrobe-mpi (strobe run --mpi)")
    variant("tm", default=True, description="transactional memory libstrobe-tm (strobe run --tm)")
    variant(
        "petra",
        default=True,
        description="libstrobe-petra, the petra store of strobed, strobe petra, petra-bench, petra-crash",
    )
    variant("otf2", default=True, description="OTF2 export (strobe export --format otf2)")
    variant("systemd", default=False, description="readiness notification of strobed to systemd")
    variant("cc", default=False, description="clang pass plugin of strobe cc (LLVM 14)")
    variant("instrument", default=False, description="strobe instrument, on libclang 14")
    variant("ompt", default=False, description="OpenMP adapter libstrobe-ompt (LLVM 14's omp-tools.h)")
    variant("man", default=False, description="manual pages (pandoc)")
    variant("pmemobj", default=False, description="petra-bench's PMDK libpmemobj baseline")
    variant("remote_write", default=True, description="the remote_write store of strobed (snappy, libcurl)")
    variant("influx", default=True, description="the influx store of strobed (libcurl)")
    variant("postgres", default=False, description="the postgres store of strobed (libpq)")

    depends_on("cmake@3.20:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("python@3:", type="build", when="+mpi")
    depends_on("python@3:", type="build", when="+man")
    depends_on("pandoc", type="build", when="+man")

    depends_on("elfutils")  # libdw, libelf
    depends_on("libunwind")
    depends_on("protobuf-c")  # libprotobuf-c and protoc-c
    depends_on("zlib-api")
    depends_on("nng")
    depends_on("openssl")
    depends_on("libyaml")
    depends_on("otf2", when="+otf2")
    depends_on("mpi", when="+mpi")
    depends_on("systemd", when="+systemd")
    depends_on("llvm@14", type=("build", "link", "run"), when="+cc")
    depends_on("llvm@14+clang", when="+instrument")
    depends_on("llvm@14+clang", when="+ompt")
    depends_on("pmdk", when="+pmemobj")
    depends_on("snappy", when="+remote_write")
    depends_on("curl", when="+remote_write")
    depends_on("curl", when="+influx")
    depends_on("postgresql", when="+postgres")  # libpq

    def cmake_args(self):
        args = [
            # only what is installed: no test or benchmark programs
            self.define("BUILD_TESTING", False),
            self.define("CMAKE_INSTALL_LIBDIR", "lib"),
        ]
        for variant in ("mpi", "tm", "petra", "otf2", "systemd", "cc", "instrument", "ompt", "man", "pmemobj",
                        "remote_write", "influx", "postgres"):
            args.append(self.define_from_variant("STROBE_WITH_" + variant.upper(), variant))
        return args

    def _smoke(self):
        """strobe --version, then the demo measured by strobe run and
        reported by strobe report, all from the installed prefix."""
        strobe = which(self.prefix.bin.strobe)
        out = strobe("--version", output=str)
        assert out.startswith("strobe "), out
        demo = join_path(self.prefix.share.doc.strobe.examples.demo, "demo.c")
        cc = which(os.environ.get("CC", "cc"))
        cc("-g", "-finstrument-functions", "-pthread", demo, "-o", "strobe-demo")
        strobe("run", "-o", "strobe-demo-exp", "--", "./strobe-demo", output=str, error=str)
        report = strobe("report", "strobe-demo-exp", output=str)
        assert "main" in report, report

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_install(self):
        # not in the stage: with dev-build, that is the user's source tree
        with tempfile.TemporaryDirectory(prefix="strobe-smoke-") as tmp:
            with working_dir(tmp):
                self._smoke()

    def test_smoke(self):
        """strobe --version, and the installed demo measured with strobe run and strobe report"""
        self._smoke()
