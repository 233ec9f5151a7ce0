/* SPDX-License-Identifier: MIT */
/* Byte-string -> uint32_t hash map with linear probing (see keymap.h). */
#include "analysis/keymap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct strobe__keymap_slot {
    uint64_t hash; /* 0 = empty */
    void *key;
    size_t len;
    uint32_t val;
};

static uint64_t hash_bytes(const void *key, size_t len)
{
    /* FNV-1a, finished with a multiply-xorshift so short keys spread */
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h ? h : 1;
}

static int rehash(struct strobe__keymap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    struct strobe__keymap_slot *s = calloc(cap, sizeof *s);
    if (!s)
        return -ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].hash)
            continue;
        size_t j = m->slots[i].hash & (cap - 1);
        while (s[j].hash)
            j = (j + 1) & (cap - 1);
        s[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = s;
    m->cap = cap;
    return 0;
}

int strobe__keymap_get_or_put(struct strobe__keymap *m, const void *key, size_t len, uint32_t *val)
{
    if ((m->count + 1) * 4 > m->cap * 3 && rehash(m))
        return -ENOMEM;
    uint64_t h = hash_bytes(key, len);
    size_t j = h & (m->cap - 1);
    for (; m->slots[j].hash; j = (j + 1) & (m->cap - 1)) {
        struct strobe__keymap_slot *s = &m->slots[j];
        if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) {
            *val = s->val;
            return 1;
        }
    }
    void *copy = malloc(len ? len : 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, key, len);
    m->slots[j] = (struct strobe__keymap_slot){ h, copy, len, *val };
    m->count++;
    return 0;
}

int strobe__keymap_get(const struct strobe__keymap *m, const void *key, size_t len, uint32_t *val)
{
    if (!m->cap)
        return 0;
    uint64_t h = hash_bytes(key, len);
    for (size_t j = h & (m->cap - 1); m->slots[j].hash; j = (j + 1) & (m->cap - 1)) {
        const struct strobe__keymap_slot *s = &m->slots[j];
        if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) {
            *val = s->val;
            return 1;
        }
    }
    return 0;
}

void strobe__keymap_free(struct strobe__keymap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->slots[i].key);
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

int strobe__grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}
