/*
 * digest.h - 64-bit digests that tell a damaged sweep file from a good one.
 *
 * A digest is a non-cryptographic 64-bit hash (word-wise multiply-rotate
 * mixing with a final avalanche; any change of one 64-bit word of the
 * input always changes it, other damage with probability 1 - 2^-64). It
 * guards against corruption (bad disks, truncation, a stray write), not
 * against an adversary. Tables are digested as the bytes they hold in
 * the file (little-endian; the build refuses big-endian hosts, whose
 * native rows differ from the file bytes). A chunk of rows is digested
 * row by row as stored (its /results row, then its part row: output.h),
 * so a reader can stream rows in blocks of any size:
 *   d = DIGEST_SEED; for each row: d = digest_row(d, row, size)
 *   (and d = digest_row(d, part_row, part_size) for a row with a part).
 * The digest of an empty chunk is DIGEST_SEED.
 */
#ifndef MADSWEEP_DIGEST_H
#define MADSWEEP_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define DIGEST_SEED UINT64_C(0x6d61647377656570) /* "madsweep" */

/* Digest of n bytes. */
uint64_t digest_bytes(const void *p, size_t n);

/* Folds one row of `size` bytes into a running chunk digest. */
uint64_t digest_row(uint64_t d, const void *row, size_t size);

/* Digest of n rows of `size` bytes, as digest_row over each. */
uint64_t digest_rows(const void *rows, int64_t n, size_t size);

#endif
