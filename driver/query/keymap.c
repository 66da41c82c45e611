/*
 * keymap.c - byte-string keys to int64 values (see keymap.h).
 *
 * Invariant: cap >= 2 n, so probing always ends at an empty slot.
 */
#include "keymap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t keymap_hash(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = 14695981039346656037ull; /* FNV-1a 64 offset basis */
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull; /* FNV prime */
    }
    return h;
}

int keymap_init(keymap *m)
{
    memset(m, 0, sizeof *m);
    m->cap = 64;
    m->slot = malloc(m->cap * sizeof *m->slot);
    if (!m->slot)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        m->slot[i] = -1;
    return 0;
}

void keymap_free(keymap *m)
{
    free(m->slot);
    free(m->hash);
    free(m->koff);
    free(m->klen);
    free(m->val);
    free(m->arena);
    memset(m, 0, sizeof *m);
}

static int keymap_grow(keymap *m)
{
    size_t cap = 2 * m->cap;
    int64_t *slot = malloc(cap * sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < cap; i++)
        slot[i] = -1;
    for (int64_t e = 0; e < m->n; e++) {
        size_t i = (size_t)m->hash[e] & (cap - 1);
        while (slot[i] >= 0)
            i = (i + 1) & (cap - 1);
        slot[i] = e;
    }
    free(m->slot);
    m->slot = slot;
    m->cap = cap;
    return 0;
}

static int keymap_reserve(keymap *m, size_t len)
{
    if (m->n == m->ecap) {
        int64_t ec = m->ecap ? 2 * m->ecap : 64;
        uint64_t *h = realloc(m->hash, (size_t)ec * sizeof *h);
        if (!h)
            return -1;
        m->hash = h;
        size_t *ko = realloc(m->koff, (size_t)ec * sizeof *ko);
        if (!ko)
            return -1;
        m->koff = ko;
        size_t *kl = realloc(m->klen, (size_t)ec * sizeof *kl);
        if (!kl)
            return -1;
        m->klen = kl;
        int64_t *v = realloc(m->val, (size_t)ec * sizeof *v);
        if (!v)
            return -1;
        m->val = v;
        m->ecap = ec;
    }
    if (m->used + len > m->acap) {
        size_t ac = m->acap ? m->acap : 4096;
        while (ac < m->used + len)
            ac *= 2;
        char *a = realloc(m->arena, ac);
        if (!a)
            return -1;
        m->arena = a;
        m->acap = ac;
    }
    return 0;
}

int keymap_get(keymap *m, const void *key, size_t len, int64_t val,
               int64_t *out, int *is_new)
{
    uint64_t h = keymap_hash(key, len);
    size_t i = (size_t)h & (m->cap - 1);
    for (; m->slot[i] >= 0; i = (i + 1) & (m->cap - 1)) {
        int64_t e = m->slot[i];
        if (m->hash[e] == h && m->klen[e] == len &&
            (len == 0 || memcmp(m->arena + m->koff[e], key, len) == 0)) {
            *out = m->val[e];
            if (is_new)
                *is_new = 0;
            return 0;
        }
    }
    if (keymap_reserve(m, len) != 0)
        return -1;
    int64_t e = m->n++;
    m->hash[e] = h;
    m->koff[e] = m->used;
    m->klen[e] = len;
    m->val[e] = val;
    if (len)
        memcpy(m->arena + m->used, key, len);
    m->used += len;
    m->slot[i] = e;
    *out = val;
    if (is_new)
        *is_new = 1;
    if ((size_t)m->n * 2 > m->cap && keymap_grow(m) != 0)
        return -1;
    return 0;
}
