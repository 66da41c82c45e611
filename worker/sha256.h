/*
 * sha256.h - SHA-256 (FIPS 180-4), for the provenance of sweep files.
 *
 * A sweep file stores the SHA-256 of every catalogue it read, so that
 * `--resume` can tell a changed catalogue from an unchanged one and name
 * it. Incremental (init, update..., final) or in one call (sha256_hex).
 * Pure C, no allocation; tested against the FIPS 180-2 example vectors
 * (tests/test_sha256.c).
 */
#ifndef MADSWEEP_SHA256_H
#define MADSWEEP_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX_LEN 64 /* hex digits; buffers need one more for NUL */

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t bytes;   /* message length so far */
    uint8_t block[64];
    size_t used;      /* bytes waiting in block */
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* Writes the 32-byte digest; the context must be re-initialized after. */
void sha256_final(sha256_ctx *c, uint8_t digest[32]);

/* Digest of data[0..n) as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t n, char hex[SHA256_HEX_LEN + 1]);

#endif
