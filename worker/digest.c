/*
 * digest.c - the 64-bit digest of sweep tables and rows (see digest.h).
 *
 * Each 8-byte little-endian word w is folded as h = rotl(h ^ (w * K1),
 * 31) * K2: for a fixed state, w -> h is a bijection (K1 and K2 odd), so
 * changing one word changes the state, and later steps (bijections of
 * the state) keep it changed. A tail shorter than 8 bytes is zero-padded
 * and the length is mixed in before the final avalanche (murmur3's
 * fmix64), so inputs that differ only by trailing zeros differ too.
 */
#include "digest.h"

#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "madsweep writes little-endian rows and digests their native bytes"
#endif

#define DIGEST_K1 UINT64_C(0x9e3779b97f4a7c15)
#define DIGEST_K2 UINT64_C(0xc2b2ae3d27d4eb4f)

static uint64_t digest_rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t digest_fmix(uint64_t h)
{
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

static uint64_t digest_fold(uint64_t h, uint64_t w)
{
    return digest_rotl(h ^ (w * DIGEST_K1), 31) * DIGEST_K2;
}

static uint64_t digest_seeded(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = digest_fold(h, w);
    }
    if (i < n) {
        uint64_t w = 0;
        memcpy(&w, b + i, n - i);
        h = digest_fold(h, w);
    }
    return digest_fmix(h ^ (uint64_t)n);
}

uint64_t digest_bytes(const void *p, size_t n)
{
    return digest_seeded(DIGEST_SEED, p, n);
}

uint64_t digest_row(uint64_t d, const void *row, size_t size)
{
    return digest_seeded(d, row, size);
}

uint64_t digest_rows(const void *rows, int64_t n, size_t size)
{
    uint64_t d = DIGEST_SEED;
    const char *r = rows;
    for (int64_t i = 0; i < n; i++)
        d = digest_row(d, r + (size_t)i * size, size);
    return d;
}
