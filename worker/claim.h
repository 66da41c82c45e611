/*
 * claim.h - one writer per sweep file, and never over an input.
 *
 * Before any rank touches the output, rank 0 claims it:
 *   - the output may not be one of the inputs (same device and inode as
 *     the spec or a catalogue: `sweep S -o S` is refused);
 *   - a fresh sweep only replaces a file that is empty or an HDF5 file
 *     (its signature at offset 0, 512, 1024, ...): anything else is
 *     probably an input or someone's data, and is refused;
 *   - the file is opened without truncation and write-locked with an
 *     open-file-description lock (fcntl F_OFD_SETLK, whole file) that is
 *     held until claim_release(): a second sweep on a file that a
 *     running sweep holds is refused before it changes a byte. The
 *     kernel drops the lock when the holder dies, so a killed sweep
 *     never leaves a stale lock. On a file system without lock support
 *     (some NFS and Lustre mounts) the claim proceeds with a warning.
 *   - a file is resumable from the moment it exists: it is created with
 *     a zeroed user block of CLAIM_USERBLOCK bytes before HDF5's
 *     superblock, and claim_born() writes a text there once the file is
 *     laid out and flushed. A claimed file whose user block is still
 *     zero (killed, stopped or out of space while being created) counts
 *     as empty: --resume starts it over.
 * Serial: only rank 0 calls these; the sweep broadcasts the outcome.
 */
#ifndef MADSWEEP_CLAIM_H
#define MADSWEEP_CLAIM_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes before HDF5's superblock in a sweep file (H5Pset_userblock). */
#define CLAIM_USERBLOCK 512

typedef struct claim {
    int fd; /* -1 when nothing is held */
} claim;

typedef enum claim_rc {
    CLAIM_OK = 0,         /* claimed and locked */
    CLAIM_NO_LOCKS = 1,   /* claimed, but the file system does not lock */
    CLAIM_BUSY = -1,      /* another running sweep holds it (msg) */
    CLAIM_REFUSED = -2,   /* an input or a foreign file (msg) */
    CLAIM_IO = -3,        /* cannot be opened for writing (msg) */
} claim_rc;

/* Claims `path`. fresh: a new sweep will replace it (created empty
 * when absent); otherwise --resume (an absent file is refused). *empty
 * tells whether the file is empty or was never laid out (a resume then
 * starts afresh). `inputs` are the
 * files that must not be the output (NULL-terminated; absent ones are
 * ignored). msg is set for every code but CLAIM_OK. */
claim_rc claim_take(claim *c, const char *path, bool fresh,
                    const char *const *inputs, bool *empty, char *msg,
                    size_t size);

/* Marks the claimed file as laid out (after its layout was flushed);
 * 0, or -1 when the write failed. */
int claim_born(claim *c);

/* Drops the lock (closes the descriptor). */
void claim_release(claim *c);

#endif
