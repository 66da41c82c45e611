/*
 * sha256.h - SHA-256 (FIPS 180-4), for the provenance of sweep files,
 * computed by OpenSSL's libcrypto (EVP interface).
 *
 * A sweep file stores the SHA-256 of every catalogue it read, so that
 * `--resume` can tell a changed catalogue from an unchanged one and name
 * it. Incremental (init, update..., final) or in one call (sha256_hex).
 * Invariant: every sha256_init is followed by one sha256_final, which
 * releases the context (libcrypto allocates it); a failure of libcrypto
 * (out of memory) ends the job through check_die. Tested against the
 * FIPS 180-2 example vectors and sha256sum (tests/test_sha256.c).
 */
#ifndef MADSWEEP_SHA256_H
#define MADSWEEP_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX_LEN 64 /* hex digits; buffers need one more for NUL */

typedef struct sha256_ctx {
    void *md; /* libcrypto's EVP_MD_CTX */
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* Writes the 32-byte digest and releases the context (init again to reuse). */
void sha256_final(sha256_ctx *c, uint8_t digest[32]);

/* Digest of data[0..n) as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t n, char hex[SHA256_HEX_LEN + 1]);

#endif
