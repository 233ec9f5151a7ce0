/* SPDX-License-Identifier: MIT */
/*
 * strobe_petra_verify: the structural invariants the crash tests check
 * after every recovery. Every level of every structure is sorted without
 * duplicates, upper levels hold only nodes of level 0, map keys sit in
 * their bucket, no reachable node is marked or still names a transaction
 * descriptor (every transaction has ended and been settled), and every
 * 16-byte granule of the arena is exactly one of: a reachable node or
 * info, a free-list object, or unused bump space (no leak, no double use).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "petra/checkpoint.h"
#include "petra/ebr.h"
#include "petra/heap.h"
#include "petra/skiplist.h"
#include "petra/tx.h"

struct vstate {
    struct strobe_petra *h;
    uint8_t *used;  /* one bit per granule of the data region */
    uint8_t *start; /* one bit per granule: a reachable node starts here */
    char *why;
    size_t why_len;
};

static int bit(const uint8_t *m, uint64_t i) { return (m[i >> 3] >> (i & 7)) & 1; }
static void set_bit(uint8_t *m, uint64_t i) { m[i >> 3] |= (uint8_t)(1u << (i & 7)); }

static int claim(struct vstate *v, pref off, uint64_t bytes, const char *what)
{
    struct strobe_petra *h = v->h;
    if (off < h->data_off || off % PETRA_GRAIN || bytes > h->nchunks * PETRA_CHUNK ||
        off - h->data_off > h->nchunks * PETRA_CHUNK - bytes ||
        h->chunk_use[(off - h->data_off) / PETRA_CHUNK] != 1) {
        strobe__petra_why(v->why, v->why_len, "%s at offset %llu is outside the arena", what,
                          (unsigned long long)off);
        return STROBE_ERR_FORMAT;
    }
    uint64_t g = (off - h->data_off) / PETRA_GRAIN;
    for (uint64_t i = 0; i < bytes / PETRA_GRAIN; i++) {
        if (bit(v->used, g + i)) {
            strobe__petra_why(v->why, v->why_len, "%s at offset %llu overlaps another object", what,
                              (unsigned long long)off);
            return STROBE_ERR_FORMAT;
        }
        set_bit(v->used, g + i);
    }
    return 0;
}

static int check_level0(struct vstate *v, int id, const struct petra_struct *ps, uint32_t b)
{
    struct strobe_petra *h = v->h;
    pref head = ps->heads + (uint64_t)b * ps->head_size;
    pref c = atomic_load(petra_next(h, head, 0));
    uint64_t prev = 0;
    while (c) {
        if (petra_marked(c)) {
            strobe__petra_why(v->why, v->why_len, "structure %d: a removed node is still linked", id);
            return STROBE_ERR_FORMAT;
        }
        int rc = claim(v, c, (strobe__tx_node_class(1) + 1) * (uint64_t)PETRA_GRAIN, "node");
        if (rc)
            return rc;
        struct petra_node *N = petra_node(h, c);
        /* claim the rest of a tall node now that its height is readable */
        if (N->height < 1 || N->height > ps->height) {
            strobe__petra_why(v->why, v->why_len, "structure %d: node %llu has height %u", id,
                              (unsigned long long)N->key, N->height);
            return STROBE_ERR_FORMAT;
        }
        uint64_t full = (strobe__tx_node_class(N->height) + 1) * (uint64_t)PETRA_GRAIN;
        uint64_t first = (strobe__tx_node_class(1) + 1) * (uint64_t)PETRA_GRAIN;
        if (full > first && (rc = claim(v, c + first, full - first, "node")))
            return rc;
        set_bit(v->start, (c - h->data_off) / PETRA_GRAIN);
        if (N->key < STROBE_PETRA_KEY_MIN || N->key > STROBE_PETRA_KEY_MAX || N->key <= prev) {
            strobe__petra_why(v->why, v->why_len,
                              "structure %d: keys not strictly increasing (%llu after %llu)", id,
                              (unsigned long long)N->key, (unsigned long long)prev);
            return STROBE_ERR_FORMAT;
        }
        prev = N->key;
        if (ps->kind == STROBE_PETRA_MAP && strobe__tx_head(h, ps, N->key) != head) {
            strobe__petra_why(v->why, v->why_len, "structure %d: key %llu in the wrong bucket", id,
                              (unsigned long long)N->key);
            return STROBE_ERR_FORMAT;
        }
        pref info = atomic_load(&N->info);
        if (petra_marked(info)) {
            strobe__petra_why(v->why, v->why_len, "structure %d: key %llu is marked deleted but linked",
                              id, (unsigned long long)N->key);
            return STROBE_ERR_FORMAT;
        }
        if ((rc = claim(v, info, sizeof(struct petra_info), "info")))
            return rc;
        const struct petra_info *I = petra_info(h, info);
        if (I->node != c) {
            strobe__petra_why(v->why, v->why_len, "structure %d: key %llu carries another node's info",
                              id, (unsigned long long)N->key);
            return STROBE_ERR_FORMAT;
        }
        if (I->desc) {
            /* quiescent: every transaction has ended and its owner settled
             * its nodes, so none may still name a descriptor */
            strobe__petra_why(v->why, v->why_len,
                              "structure %d: key %llu still names a transaction descriptor", id,
                              (unsigned long long)N->key);
            return STROBE_ERR_FORMAT;
        }
        c = atomic_load(&N->next[0]);
    }
    for (unsigned l = 1; l < ps->height; l++) {
        prev = 0;
        for (pref u = atomic_load(petra_next(h, head, l)); u; u = atomic_load(petra_next(h, u, l))) {
            if (petra_marked(u) || u < h->data_off || !bit(v->start, (u - h->data_off) / PETRA_GRAIN)) {
                strobe__petra_why(v->why, v->why_len,
                                  "structure %d: level %u links a node that is not in level 0", id, l);
                return STROBE_ERR_FORMAT;
            }
            struct petra_node *N = petra_node(h, u);
            if (N->height <= l || N->key <= prev) {
                strobe__petra_why(v->why, v->why_len, "structure %d: level %u is not sorted", id, l);
                return STROBE_ERR_FORMAT;
            }
            prev = N->key;
        }
    }
    return 0;
}

STROBE_API int strobe_petra_verify(strobe_petra *h, char *why, size_t why_len)
{
    if (!h)
        return -EINVAL;
    pthread_mutex_lock(&h->ckpt_lock);
    uint64_t granules = h->nchunks * (PETRA_CHUNK / PETRA_GRAIN);
    struct vstate v = { h, calloc(granules / 8 + 1, 1), calloc(granules / 8 + 1, 1), why, why_len };
    int rc = v.used && v.start ? 0 : -ENOMEM;
    /* quiescent: nothing retired can still be referenced */
    for (unsigned i = 0; i <= h->max_threads && !rc; i++)
        strobe__ebr_drain(&h->threads[i]);
    if (!rc)
        rc = strobe__ckpt_check_logs(h, why, why_len);
    for (int id = 0; id < STROBE_PETRA_MAX_STRUCTURES && !rc; id++) {
        const struct petra_struct *ps = &h->structs[id];
        if (!ps->used)
            continue;
        for (uint32_t b = 0; b < ps->buckets && !rc; b++)
            rc = check_level0(&v, id, ps, b);
    }
    for (unsigned i = 0; i <= h->max_threads && !rc; i++) {
        struct strobe_petra_thread *t = &h->threads[i];
        for (unsigned c = 0; c < PETRA_NCLASS && !rc; c++)
            for (pref f = t->freelist[c]; f && !rc; memcpy(&f, h->base + f, sizeof f))
                rc = claim(&v, f, (c + 1) * (uint64_t)PETRA_GRAIN, "free object");
        if (!rc && t->bump < t->bump_end)
            rc = claim(&v, t->bump, t->bump_end - t->bump, "unused arena space");
    }
    for (uint64_t c = 0; c < h->nchunks && !rc; c++) {
        if (h->chunk_use[c] != 1)
            continue;
        for (uint64_t g = c * (PETRA_CHUNK / PETRA_GRAIN); g < (c + 1) * (PETRA_CHUNK / PETRA_GRAIN); g++)
            if (!bit(v.used, g)) {
                strobe__petra_why(why, why_len,
                                  "leak: arena granule at offset %llu is neither reachable nor free",
                                  (unsigned long long)(h->data_off + g * PETRA_GRAIN));
                rc = STROBE_ERR_FORMAT;
                break;
            }
    }
    free(v.used);
    free(v.start);
    pthread_mutex_unlock(&h->ckpt_lock);
    return rc;
}
