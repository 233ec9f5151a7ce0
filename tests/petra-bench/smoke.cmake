# SPDX-License-Identifier: MIT
# Runs one petra-bench smoke run (cmake -DBENCH=... -DARGS="..." -P
# smoke.cmake) and passes only if it exits 0 *and* its result line shows
# committed operations. ctest's PASS_REGULAR_EXPRESSION alone would ignore
# the exit status, and petra-bench exits 1 after printing its numbers when
# its consistency check fails (check=FAIL).
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${BENCH} ${args} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status STREQUAL "0")
  message(FATAL_ERROR "petra-bench exited with status ${status}")
endif()
if(NOT out MATCHES "ops_per_s=[1-9]")
  message(FATAL_ERROR "petra-bench committed nothing (no ops_per_s=[1-9] in its output)")
endif()
