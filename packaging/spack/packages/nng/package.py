# SPDX-License-Identifier: MIT
"""nng (nanomsg-next-generation), strobe's transport (src/transport). Spack's
builtin repository has no nng; this recipe builds the release Debian 12
ships (libnng-dev 1.5.2) from its git tag."""

from spack.package import *


class Nng(CMakePackage):
    """Lightweight messaging library: request/reply, pub/sub and pipeline
    patterns over TCP, IPC and in-process transports."""

    homepage = "https://nng.nanomsg.org"
    git = "https://github.com/nanomsg/nng.git"

    version("1.5.2", tag="v1.5.2", commit="169221da8d53b2ca4fda76f894bee8505887a7c6")

    variant("tls", default=False, description="TLS transport through mbedtls")

    depends_on("cmake@3.13:", type="build")
    depends_on("mbedtls", when="+tls")

    def cmake_args(self):
        return [
            self.define("BUILD_SHARED_LIBS", True),
            self.define("NNG_TESTS", False),
            self.define("NNG_TOOLS", False),
            self.define_from_variant("NNG_ENABLE_TLS", "tls"),
        ]
