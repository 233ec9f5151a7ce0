/* SPDX-License-Identifier: MIT */
/*
 * The session key of the fuzz targets' authenticated connections: the
 * seeds gen_corpus.c seals with it are the ones fuzz_proto_reply.c can
 * open, as a client within a session does.
 */
#ifndef STROBE_TESTS_FUZZ_SESSION_H
#define STROBE_TESTS_FUZZ_SESSION_H

#include <stdint.h>

#include "transport/session.h"

static const uint8_t fuzz_session_key[STROBE_SESSION_KEY] = { 's', 't', 'r', 'o', 'b', 'e', '-', 'f', 'u',
                                                              'z', 'z' };

#endif
