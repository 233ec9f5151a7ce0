/* SPDX-License-Identifier: MIT */
/*
 * strobed's request server: answers HELLO/AUTH/DIR/UPDATE (proto.h) on
 * an nng rep0 socket, serving the daemon's published sets. UPDATE
 * requests with a wait are parked until a set they cover changes (push on
 * change) or their time is up.
 */
#ifndef STROBE_STROBED_SERVER_H
#define STROBE_STROBED_SERVER_H

#include <stddef.h>

struct strobe__daemon;
struct strobe__server;

int strobe__server_start(struct strobe__daemon *d, const char *addr, struct strobe__server **out,
                         char *err, size_t errlen);
void strobe__server_stop(struct strobe__server *s);

#endif
