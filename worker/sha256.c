/*
 * sha256.c - SHA-256 through OpenSSL's libcrypto (see sha256.h).
 *
 * libcrypto is Debian's libssl-dev (already loaded by the HDF5 and MPI
 * libraries of most builds); its EVP digest interface is the one OpenSSL
 * 3 keeps undeprecated. Every libcrypto call is checked: a failure can
 * only be an allocation, and ends the job (check_die).
 */
#include "sha256.h"

#include <openssl/evp.h>
#include <stdio.h>

#include "check.h"

static void sha256_ok(int ok, const char *what, int line)
{
    if (!ok)
        check_die(what, __FILE__, line);
}

void sha256_init(sha256_ctx *c)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    sha256_ok(md != NULL, "libcrypto: EVP_MD_CTX_new failed (out of memory)", __LINE__);
    sha256_ok(EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1,
              "libcrypto: EVP_DigestInit_ex(SHA-256) failed", __LINE__);
    c->md = md;
}

void sha256_update(sha256_ctx *c, const void *data, size_t n)
{
    sha256_ok(EVP_DigestUpdate(c->md, data, n) == 1, "libcrypto: EVP_DigestUpdate failed",
              __LINE__);
}

void sha256_final(sha256_ctx *c, uint8_t digest[32])
{
    unsigned int len = 0;
    sha256_ok(EVP_DigestFinal_ex(c->md, digest, &len) == 1 && len == 32,
              "libcrypto: EVP_DigestFinal_ex failed", __LINE__);
    EVP_MD_CTX_free(c->md);
    c->md = NULL;
}

void sha256_hex(const void *data, size_t n, char hex[SHA256_HEX_LEN + 1])
{
    uint8_t d[32];
    unsigned int len = 0;
    sha256_ok(EVP_Digest(data, n, d, &len, EVP_sha256(), NULL) == 1 && len == 32,
              "libcrypto: EVP_Digest(SHA-256) failed", __LINE__);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}
