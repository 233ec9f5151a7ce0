/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: one strobed reply message as a client receives it
 * (docs/formats/protocol.md). The header is opened with strobe__msg_open;
 * an UPDATE body is walked and applied to a set mirror by the client's own
 * code (strobe__client_update_apply with no connection), keeping the
 * mirror across items and reading every set it reports; a DIR body goes
 * through strobe__dir_decode (what strobe__client_dir does); an ERROR
 * through strobe__msg_read_error, whose text must come back printable and
 * terminated; a HELLO reply is checked like the handshake does. An input
 * that carries a valid MAC trailer under FUZZ_SESSION_KEY (seeds written
 * by gen_corpus.c: what a client receives within an authenticated
 * connection) is decoded without it, as the client does after checking it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/client.h"
#include "transport/proto.h"
#include "transport/session.h"
#include "fuzz_session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

/* every change the mirror reports: the set must be readable throughout */
static void on_change(void *ctx, strobe_set *s, enum strobe__mirror_event ev)
{
    char buf[64];
    (void)ctx;
    sink += strlen(strobe_set_instance(s)) + strobe_set_data_gn(s) + (uint64_t)ev;
    for (uint32_t i = 0; i < strobe_set_card(s); i++) {
        sink += strlen(strobe_set_metric_name(s, i)) + strlen(strobe_set_metric_unit(s, i));
        if (strobe_set_format_value(s, i, 0, buf, sizeof buf) == 0)
            sink += strlen(buf);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct strobe__rd r;
    uint8_t type;
    uint16_t flags;
    uint64_t seq;
    size_t len;
    if (strobe__session_open(fuzz_session_key, STROBE_SESSION_TO_CLIENT, data, size, &seq, &len) == 0)
        size = len;
    if (strobe__msg_open(&r, data, size, &type, &flags) < 0)
        return 0;
    switch (type) {
    case STROBE_MSG_UPDATE: {
        struct strobe__mirror m = { 0 };
        strobe__client_update_apply(NULL, &m, &r, on_change, NULL);
        for (size_t i = 0; i < m.n; i++)
            on_change(NULL, m.sets[i], STROBE_MIRROR_UPDATED);
        strobe__mirror_free(&m);
        break;
    }
    case STROBE_MSG_DIR: {
        struct strobe__dir_entry *v;
        size_t n;
        if (strobe__dir_decode(&r, &v, &n) == 0) {
            for (size_t i = 0; i < n; i++)
                if (!v[i].name[0] || strlen(v[i].name) > STROBE_SET_NAME_MAX)
                    abort();
            free(v);
        }
        break;
    }
    case STROBE_MSG_ERROR: {
        int code;
        char text[512];
        if (strobe__msg_read_error(&r, &code, text, sizeof text) == 0) {
            size_t n = strnlen(text, sizeof text);
            if (n == sizeof text || code >= 0)
                abort();
            for (size_t i = 0; i < n; i++)
                if (text[i] < 0x20 || text[i] > 0x7e)
                    abort();
        }
        break;
    }
    case STROBE_MSG_HELLO:
        sink += (uintptr_t)strobe__rd_bytes(&r, STROBE_PROTO_NONCE);
        sink += (uintptr_t)strobe__rd_bytes(&r, STROBE_PROTO_MAC);
        sink += r.n + (uint64_t)r.err;
        break;
    default:
        break;
    }
    return 0;
}
