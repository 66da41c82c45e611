/*
 * keymap.h - a hash map from byte strings to int64 values.
 *
 * Used where a query meets values it cannot index by position: `best`
 * groups rows by the bytes of their group columns, and the frame finds
 * the first axis row of each value. Open addressing (linear probing,
 * FNV-1a hashes, grown at half load); keys are copied into an arena.
 * Insertion order is kept: entry i is the i-th distinct key.
 */
#ifndef MADSWEEP_KEYMAP_H
#define MADSWEEP_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct keymap {
    size_t cap;       /* slots, a power of two */
    int64_t *slot;    /* entry index or -1 */
    int64_t n;        /* entries */
    int64_t ecap;
    uint64_t *hash;   /* per entry */
    size_t *koff, *klen;
    int64_t *val;
    char *arena;
    size_t used, acap;
} keymap;

int keymap_init(keymap *m);
void keymap_free(keymap *m);

/* Puts the value of `key` in *out; when the key is absent it is
 * inserted with value `val` first and *is_new (may be NULL) is set to 1.
 * Returns 0, or -1 when out of memory. */
int keymap_get(keymap *m, const void *key, size_t len, int64_t val,
               int64_t *out, int *is_new);

#endif
