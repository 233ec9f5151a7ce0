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
#include <stdint.h>

struct strobe__daemon;
struct strobe__server;
struct strobe__wr;

int strobe__server_start(struct strobe__daemon *d, const char *addr, struct strobe__server **out,
                         char *err, size_t errlen);
void strobe__server_stop(struct strobe__server *s);

/* A server without a socket: strobe__server_answer is its only use
 * (tests, and the fuzz target tests/fuzz/fuzz_proto_request.c, which
 * exercise request handling without nng). Freed by strobe__server_stop. */
int strobe__server_new(struct strobe__daemon *d, struct strobe__server **out);

/* Answers one request message (header included) received on connection
 * pipe_id into w: HELLO/AUTH per connection, DIR, UPDATE, or an ERROR.
 * Returns 0 when w holds the answer. Returns 1 for an UPDATE that changed
 * nothing and asks to wait *wait_ms: w holds the (empty) answer and the
 * daemon's lock is still held, so the caller can park the request without
 * missing a change; it must unlock d->lock. Within an authenticated
 * connection the request must carry its MAC (session.h): the answer in w
 * is not sealed yet, *seal says with what it must be (seal->on = 0
 * outside a session), and a request failing its MAC or sequence number
 * gives -EBADMSG (logged at warn, the session ended, nothing in w): the
 * caller closes the connection. Takes the daemon's lock; thread-safe
 * otherwise. */
struct strobe__seal;
int strobe__server_answer(struct strobe__server *s, uint32_t pipe_id, const void *req, size_t len,
                          struct strobe__wr *w, uint32_t *wait_ms, struct strobe__seal *seal);

#endif
