/* SPDX-License-Identifier: MIT */
/*
 * Test-only reader of a pprof profile written by strobe_export_pprof: the
 * file is gunzipped with zlib and unpacked with the protobuf-c code
 * generated from src/export/profile.proto, every reference is checked
 * (string indices in the table, whose entry 0 is "", location, function
 * and mapping ids defined, one value per sample type), and the profile is
 * rendered in the canonical text of check_pprof.py, which decodes the same
 * file with protoc: the test compares both with one expectation.
 */
#ifndef STROBE_TESTS_EXPORT_PPROF_DECODE_H
#define STROBE_TESTS_EXPORT_PPROF_DECODE_H

#include <stddef.h>

/* 0 and *text (malloc'd, the lines of check_pprof.py), or -1 with a
 * message in err. */
int pprof_dump(const char *path, char **text, char *err, size_t errsize);

#endif
