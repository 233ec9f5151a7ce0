/* SPDX-License-Identifier: MIT */
/*
 * Writes the seed corpora of the protocol and metric-set fuzz targets
 * from the product's own encoders, so every seed is a real message:
 *  - set/: sections of sets from strobe_set_new (every type, arrays,
 *    strings, meta metrics) and of the fuzz daemon's sampled sets;
 *  - proto_request/: requests built as the client builds them;
 *  - proto_reply/: the server's answers to those requests from a real
 *    in-process daemon (strobe__server_answer), plus ERROR messages, and
 *    each no-secret answer again sealed as within a session (*_sealed).
 * Run by hand when the formats change (not by ctest):
 *   build/bin/fuzz_gen_corpus tests/fuzz/corpus
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_daemon.h"
#include "strobed/server.h"
#include "transport/proto.h"
#include "transport/session.h"
#include "fuzz_session.h"

static const char *out_dir;

static void put(const char *target, const char *name, const void *a, size_t alen, const void *b,
                size_t blen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", out_dir, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(a, 1, alen, f) != alen || (blen && fwrite(b, 1, blen, f) != blen) || fclose(f)) {
        perror(path);
        exit(1);
    }
}

/* fuzz_set input: u32 meta length, meta, data */
static void put_set(const char *name, const strobe_set *s)
{
    size_t ml, dl;
    const void *meta = strobe_set_meta(s, &ml), *data = strobe_set_data(s, &dl);
    uint8_t *buf = malloc(4 + ml);
    uint32_t l = (uint32_t)ml;
    memcpy(buf, &l, 4);
    memcpy(buf + 4, meta, ml);
    put("set", name, buf, 4 + ml, data, dl);
    free(buf);
}

static void gen_sets(struct strobe__daemon *d)
{
    strobe_schema *sc;
    strobe_set *s;
    if (strobe_schema_new("every_type", &sc) < 0)
        exit(1);
    for (int t = STROBE_MT_U8; t <= STROBE_MT_LAST; t++) {
        char name[32];
        snprintf(name, sizeof name, "%s_one", strobe_metric_type_name(t));
        strobe_schema_add(sc, name, "B", t, t == STROBE_MT_CHAR ? 16 : 1, 0);
        snprintf(name, sizeof name, "%s_array", strobe_metric_type_name(t));
        strobe_schema_add(sc, name, "", t, 5, 0);
        snprintf(name, sizeof name, "%s_meta", strobe_metric_type_name(t));
        strobe_schema_add(sc, name, "s", t, t == STROBE_MT_CHAR ? 8 : 1, STROBE_METRIC_META);
    }
    if (strobe_set_new(sc, "node1", NULL, &s) < 0)
        exit(1);
    put_set("every_type_fresh", s);
    strobe_set_begin(s);
    for (uint32_t i = 0; i < strobe_set_card(s); i++) {
        if (strobe_set_metric_type(s, i) == STROBE_MT_CHAR) {
            strobe_set_str(s, i, "hello");
            continue;
        }
        for (uint32_t j = 0; j < strobe_set_metric_count(s, i); j++)
            strobe_set_d64(s, i, j, (double)i * 3.5 - 20.0 * j);
    }
    strobe_set_valid(s, 2, 0);
    strobe_set_end_at(s, 1700000000000000000ull, 1234);
    put_set("every_type_written", s);
    strobe_set_free(s);
    strobe_schema_free(sc);

    if (strobe_schema_new("tiny", &sc) < 0 || strobe_schema_add(sc, "x", NULL, STROBE_MT_U64, 1, 0) < 0 ||
        strobe_set_new(sc, "p", "p/tiny", &s) < 0)
        exit(1);
    strobe_set_begin(s);
    strobe_set_u64(s, 0, 0, 42);
    strobe_set_end(s);
    put_set("tiny", s);
    strobe_set_free(s);
    strobe_schema_free(sc);

    if (strobe_schema_new("empty", &sc) < 0 || strobe_set_new(sc, "p", NULL, &s) < 0)
        exit(1);
    put_set("no_metrics", s);
    strobe_set_free(s);
    strobe_schema_free(sc);

    for (size_t i = 0; i < d->nsets; i++) {
        char name[64];
        snprintf(name, sizeof name, "daemon_set_%zu", i);
        put_set(name, d->sets[i].set);
    }
}

struct req {
    const char *name;
    struct strobe__wr w;
};

static struct req reqs[32];
static size_t nreqs;

static struct strobe__wr *req(const char *name, enum strobe__msg_type t, uint16_t flags)
{
    struct req *r = &reqs[nreqs++];
    r->name = name;
    strobe__msg_begin(&r->w, t, flags);
    return &r->w;
}

/* one UPDATE item as the client lists it */
static void listed(struct strobe__wr *w, const char *name, const strobe_set *s, int same_meta,
                   int same_data)
{
    strobe__wr_str(w, name);
    strobe__wr_u64(w, s && same_meta ? strobe_set_meta_gn(s) : 0);
    strobe__wr_u64(w, s && same_data ? strobe_set_data_gn(s) : 0);
    strobe__wr_u64(w, s ? strobe_set_schema_sum(s) : 0);
}

static void gen_requests(struct strobe__daemon *d)
{
    const strobe_set *a = d->sets[0].set, *b = d->sets[1].set;
    struct strobe__wr *w;
    uint8_t nonce[STROBE_PROTO_NONCE], mac[STROBE_PROTO_MAC];
    for (size_t i = 0; i < sizeof nonce; i++)
        nonce[i] = (uint8_t)(i * 37 + 1);
    memset(mac, 0xa5, sizeof mac);
    w = req("hello", STROBE_MSG_HELLO, 0);
    strobe__wr_bytes(w, nonce, sizeof nonce);
    w = req("auth", STROBE_MSG_AUTH, 0);
    strobe__wr_bytes(w, mac, sizeof mac);
    req("dir", STROBE_MSG_DIR, 0);
    w = req("update_all", STROBE_MSG_UPDATE, STROBE_UPDATE_ALL);
    strobe__wr_u32(w, 0);
    strobe__wr_u32(w, 0);
    w = req("update_all_known", STROBE_MSG_UPDATE, STROBE_UPDATE_ALL);
    strobe__wr_u32(w, 0);
    strobe__wr_u32(w, 2);
    listed(w, strobe_set_instance(a), a, 1, 1);
    listed(w, strobe_set_instance(b), b, 1, 0);
    w = req("update_named", STROBE_MSG_UPDATE, 0);
    strobe__wr_u32(w, 0);
    strobe__wr_u32(w, 3);
    listed(w, strobe_set_instance(a), a, 0, 0);
    listed(w, strobe_set_instance(b), b, 1, 0);
    listed(w, "fz/no-such-set", NULL, 0, 0);
    w = req("update_wait", STROBE_MSG_UPDATE, 0);
    strobe__wr_u32(w, 5000);
    strobe__wr_u32(w, 1);
    listed(w, strobe_set_instance(a), a, 1, 1);
    w = req("update_bad_count", STROBE_MSG_UPDATE, 0);
    strobe__wr_u32(w, 0);
    strobe__wr_u32(w, 1000);
    w = req("ctl", STROBE_MSG_CTL, 0);
    strobe__wr_u16(w, 3);
    strobe__wr_str(w, "sampler");
    strobe__wr_str(w, "remove");
    strobe__wr_str(w, "s2");
    w = req("not_a_request", STROBE_MSG_OK, 0);
    for (size_t i = 0; i < nreqs; i++)
        if (strobe__msg_finish(&reqs[i].w) < 0)
            exit(1);
    w = req("bad_version", STROBE_MSG_DIR, 0);
    strobe__msg_finish(w);
    w->buf[4] = STROBE_PROTO_VERSION + 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_gen_corpus CORPUS_DIR\n");
        return 2;
    }
    out_dir = argv[1];
    struct strobe__daemon *d = fuzz_daemon_new();
    pthread_mutex_lock(&d->lock);
    gen_sets(d);
    pthread_mutex_unlock(&d->lock);
    gen_requests(d);
    static char secret[] = "fuzz-shared-secret";
    for (int with_secret = 0; with_secret < 2; with_secret++) {
        d->secret = with_secret ? secret : NULL;
        for (size_t i = 0; i < nreqs; i++) {
            struct strobe__server *s;
            struct strobe__wr w = { 0 };
            uint32_t wait_ms;
            struct strobe__seal seal;
            char name[96];
            if (!with_secret)
                put("proto_request", reqs[i].name, reqs[i].w.buf, reqs[i].w.len, NULL, 0);
            if (strobe__server_new(d, &s) < 0)
                return 1;
            if (strobe__server_answer(s, 1, reqs[i].w.buf, reqs[i].w.len, &w, &wait_ms, &seal) == 1)
                pthread_mutex_unlock(&d->lock);
            snprintf(name, sizeof name, "%s%s", reqs[i].name, with_secret ? "_secret" : "");
            put("proto_reply", name, w.buf, w.len, NULL, 0);
            if (!with_secret) {
                /* the same reply as it comes within an authenticated connection */
                snprintf(name, sizeof name, "%s_sealed", reqs[i].name);
                if (strobe__session_seal(&w, fuzz_session_key, STROBE_SESSION_TO_CLIENT, 7) < 0)
                    return 1;
                put("proto_reply", name, w.buf, w.len, NULL, 0);
            }
            strobe__wr_free(&w);
            strobe__server_stop(s);
        }
    }
    d->secret = NULL;
    struct strobe__wr w = { 0 };
    strobe__msg_error(&w, -13, "authenticate first (HELLO, AUTH)");
    put("proto_reply", "error_eacces", w.buf, w.len, NULL, 0);
    strobe__wr_free(&w);
    for (size_t i = 0; i < nreqs; i++)
        strobe__wr_free(&reqs[i].w);
    strobe__daemon_free(d);
    return 0;
}
