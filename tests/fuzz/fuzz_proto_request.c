/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: one request message as strobed receives it, answered by
 * the server's own request handling without nng (strobe__server_answer:
 * header, HELLO/AUTH per connection, DIR, UPDATE decoding and the UPDATE
 * reply built from the daemon's sets, CTL decoding: control itself is
 * refused, for want of a secret or of authentication). The daemon (fuzz_daemon.h) is built
 * once and sampled once; each input gets a fresh server, so connection
 * state does not leak between inputs. The input is answered twice: with no
 * shared secret (DIR/UPDATE are reached) and with one (HELLO makes proofs,
 * AUTH checks them, the rest is refused). Every answer must be a
 * well-formed message, and every item of an UPDATE answer must apply to a
 * client mirror (strobe__mirror_apply) that starts empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_daemon.h"
#include "strobed/server.h"
#include "transport/client.h"
#include "transport/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Applies one item of the server's UPDATE answer to the mirror; only a
 * DATA item for a set the (initially empty) mirror lacks may be refused. */
static int apply_item(void *ctx, const struct strobe__update_item *it)
{
    struct strobe__mirror *m = ctx;
    int known = 0;
    for (size_t i = 0; i < m->n; i++)
        known |= strcmp(strobe_set_instance(m->sets[i]), it->name) == 0;
    int rc = strobe__mirror_apply(m, it, NULL, NULL);
    if (rc != 0 && !(rc == STROBE_ERR_FORMAT && it->status == STROBE_UPD_DATA && !known))
        abort();
    return 0;
}

static void answer(struct strobe__daemon *d, const uint8_t *data, size_t size)
{
    struct strobe__server *s;
    struct strobe__wr w = { 0 };
    uint32_t wait_ms;
    if (strobe__server_new(d, &s) < 0)
        abort();
    if (strobe__server_answer(s, 1, data, size, &w, &wait_ms) == 1)
        pthread_mutex_unlock(&d->lock); /* would be parked; the answer so far is in w */
    struct strobe__rd r;
    uint8_t type;
    uint16_t flags;
    if (w.err || strobe__msg_open(&r, w.buf, w.len, &type, &flags) != 0)
        abort(); /* the server must always answer with a valid message */
    if (type == STROBE_MSG_UPDATE) {
        struct strobe__mirror m = { 0 };
        if (strobe__update_reply_walk(&r, apply_item, &m) != 0)
            abort();
        strobe__mirror_free(&m);
    } else if (type == STROBE_MSG_ERROR) {
        int code;
        char text[256];
        if (strobe__msg_read_error(&r, &code, text, sizeof text) != 0)
            abort();
    }
    strobe__wr_free(&w);
    strobe__server_stop(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct strobe__daemon *d;
    static char secret[] = "fuzz-shared-secret";
    if (!d)
        d = fuzz_daemon_new();
    answer(d, data, size);
    d->secret = secret;
    answer(d, data, size);
    d->secret = NULL;
    return 0;
}
