/*
 * test_sha256.c - worker/sha256 (libcrypto's SHA-256 behind madsweep's
 * wrapper) against the FIPS 180-2 examples and
 * coreutils' sha256sum.
 *
 * Reference digests: FIPS 180-2 (with change notice 1), appendix B.1
 * ("abc"), B.2 (the 448-bit two-block message) and B.3 (one million
 * 'a'); the empty message from NIST's "SHA256.pdf" example set. Messages
 * of every length around the padding boundaries (55, 56, 63, 64, 65,
 * 119, 120 bytes...) are checked against `sha256sum`, an independent
 * implementation, and incremental updates in odd pieces must equal the
 * one-shot digest.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../worker/sha256.h"
#include "unit.h"

static void test_fips_vectors(void)
{
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex("abc", 3, hex);
    CU_ASSERT_STRING_EQUAL(hex, "ba7816bf8f01cfea414140de5dae2223"
                                "b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(two, strlen(two), hex);
    CU_ASSERT_STRING_EQUAL(hex, "248d6a61d20638b8e5c026930c3e6039"
                                "a33ce45964ff2167f6ecedd419db06c1");
    sha256_hex("", 0, hex);
    CU_ASSERT_STRING_EQUAL(hex, "e3b0c44298fc1c149afbf4c8996fb924"
                                "27ae41e4649b934ca495991b7852b855");
    /* one million 'a', fed in pieces of 1000 */
    char a[1000];
    memset(a, 'a', sizeof a);
    sha256_ctx c;
    sha256_init(&c);
    for (int i = 0; i < 1000; i++)
        sha256_update(&c, a, sizeof a);
    unsigned char d[32];
    sha256_final(&c, d);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    CU_ASSERT_STRING_EQUAL(hex, "cdc76e5c9914fb9281a1c7e284d73e67"
                                "f1809a48a497200e046d39ccc7112cd0");
}

/* Every length 0..130 against sha256sum; pieces of 7 against one shot. */
static void test_against_sha256sum(void)
{
    char msg[131];
    for (int i = 0; i < (int)sizeof msg; i++)
        msg[i] = (char)('A' + (i * 7) % 26);
    for (int len = 0; len <= 130; len++) {
        char path[512], cmd[1100], out[256], hex[SHA256_HEX_LEN + 1];
        char text[132];
        memcpy(text, msg, (size_t)len);
        text[len] = '\0';
        CU_ASSERT_PTR_NOT_NULL_FATAL(
            unit_write_file("sha256_msg.txt", text, path, sizeof path));
        snprintf(cmd, sizeof cmd, "sha256sum %s", path);
        CU_ASSERT_EQUAL_FATAL(unit_run_command(cmd, out, sizeof out), 0);
        sha256_hex(msg, (size_t)len, hex);
        if (strncmp(out, hex, SHA256_HEX_LEN) != 0)
            fprintf(stderr, "length %d: %s vs %.64s\n", len, hex, out);
        CU_ASSERT(strncmp(out, hex, SHA256_HEX_LEN) == 0);
        sha256_ctx c;
        sha256_init(&c);
        for (int at = 0; at < len; at += 7)
            sha256_update(&c, msg + at, (size_t)(len - at < 7 ? len - at : 7));
        unsigned char d[32];
        sha256_final(&c, d);
        char inc[SHA256_HEX_LEN + 1];
        for (int i = 0; i < 32; i++)
            snprintf(inc + 2 * i, 3, "%02x", d[i]);
        CU_ASSERT_STRING_EQUAL(inc, hex);
    }
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("sha256", NULL, NULL);
    CU_add_test(s, "FIPS 180-2 examples", test_fips_vectors);
    CU_add_test(s, "every length around the padding, against sha256sum",
                test_against_sha256sum);
    return unit_run();
}
