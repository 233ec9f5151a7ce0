/* SPDX-License-Identifier: MIT */
/*
 * Names an atomic block of the running program for the STM's fatal error
 * messages: its source file and line, as the user wrote them.
 */
#ifndef STROBE_TM_SITE_H
#define STROBE_TM_SITE_H

#include <stddef.h>
#include <stdint.h>

#include "tm/tx.h"

/* Writes "FILE:LINE (FUNCTION)" for the code at the return address ret
 * (the instruction after the call to _ITM_beginTransaction) into buf,
 * or as much of it as can be found: "FUNCTION+0xOFF in MODULE" without
 * debug information, the bare address without symbols. */
TM_HIDDEN void strobe__tm_describe_site(uintptr_t ret, char *buf, size_t size);

#endif /* STROBE_TM_SITE_H */
