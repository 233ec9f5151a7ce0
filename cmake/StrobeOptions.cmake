# SPDX-License-Identifier: MIT
# The optional parts of strobe and their switches (docs/install.md, "Build
# options"). STROBE_WITH_<PART>=ON (the default) builds the part and stops
# the configuration, naming the Debian package, when its dependency is
# missing; OFF leaves the part out, and whatever would use it says so in one
# line. The three parts on LLVM 14 (STROBE_WITH_CC, _INSTRUMENT, _OMPT), the
# manual pages (STROBE_WITH_MAN, pandoc) and petra-bench's PMDK baseline
# (STROBE_WITH_PMEMOBJ, libpmemobj) default to AUTO, built when
# their dependency is there as before; a package build
# (Spack, packaging/spack) sets every switch to ON or OFF so that what it
# builds does not depend on what the machine happens to have.
# The switches reach C code as 0/1 macros of common/build_config.h.
option(STROBE_WITH_MPI "the MPI profiler libstrobe-mpi (strobe run --mpi)" ON)
option(STROBE_WITH_TM "the transactional memory libstrobe-tm (strobe run --tm)" ON)
option(STROBE_WITH_PETRA "libstrobe-petra, strobed's petra store, strobe petra, petra-bench, petra-crash" ON)
option(STROBE_WITH_OTF2 "the OTF2 export (strobe export --format otf2)" ON)
option(STROBE_WITH_SYSTEMD "strobed's readiness notification to systemd (sd_notify)" ON)
option(STROBE_WITH_REMOTE_WRITE "strobed's remote_write store (protobuf-c, snappy, libcurl)" ON)
option(STROBE_WITH_INFLUX "strobed's influx store (libcurl)" ON)
option(STROBE_WITH_POSTGRES "strobed's postgres store (libpq)" ON)
foreach(part CC INSTRUMENT OMPT MAN PMEMOBJ)
  set(STROBE_WITH_${part} AUTO CACHE STRING "AUTO, ON or OFF")
  set_property(CACHE STROBE_WITH_${part} PROPERTY STRINGS AUTO ON OFF)
  if(NOT STROBE_WITH_${part} MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "STROBE_WITH_${part} must be AUTO, ON or OFF, not '${STROBE_WITH_${part}}'")
  endif()
endforeach()

# strobe_require(PART FOUND WHAT DEBIAN_PACKAGES): the configuration error
# of part STROBE_WITH_<PART> set to ON while its dependency WHAT is not
# found (FOUND false).
function(strobe_require part found what packages)
  if(STROBE_WITH_${part} AND NOT STROBE_WITH_${part} STREQUAL "AUTO" AND NOT found)
    message(FATAL_ERROR "STROBE_WITH_${part}=ON: ${what} not found (Debian: ${packages}); "
      "install it or configure with -DSTROBE_WITH_${part}=OFF")
  endif()
endfunction()
