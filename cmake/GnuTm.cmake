# SPDX-License-Identifier: MIT
# strobe_gnu_tm(TARGET): builds TARGET, C or C++, as a GCC transactional-
# memory program (-fgnu-tm), for the examples, tests and benchmarks of
# libstrobe-tm. STROBE_HAVE_GNU_TM (C) and STROBE_HAVE_GNU_TM_CXX (C++) say
# whether the compilers can (clang, used for `make fuzz`, cannot: those
# targets are then not built).
#
# GCC 12 refuses -fgnu-tm together with ASan, and crashes (internal
# compiler error) instrumenting transactional clones for UBSan or TSan. In
# the sanitizer builds such programs are therefore compiled without the
# sanitizers (but linked with them, so the sanitized libstrobe-tm and
# libstrobe load into them); the runtime under test keeps every check.
# -Wno-clobbered: GCC warns about each variable live across
# _ITM_beginTransaction (a returns_twice call); its TM lowering restores
# them itself. GCC 12 also crashes (in expand_call_tm) on a catch clause
# inside an atomic block at -O0, so C++ is compiled with -O1 in Debug.
include(CheckCCompilerFlag)
include(CheckCXXCompilerFlag)
check_c_compiler_flag(-fgnu-tm STROBE_HAVE_GNU_TM)
check_cxx_compiler_flag(-fgnu-tm STROBE_HAVE_GNU_TM_CXX)

function(strobe_gnu_tm target)
  target_compile_options(${target} PRIVATE -fgnu-tm -Wno-clobbered
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Debug>>:-O1>)
  target_link_options(${target} PRIVATE -fgnu-tm)
  if(STROBE_SANITIZE)
    target_compile_options(${target} PRIVATE -fno-sanitize=all)
  endif()
endfunction()
