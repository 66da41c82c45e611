/*
 * verify.h - is a sweep file what it claims to be?
 *
 * Every reader of a sweep file (`best`, `sweep --resume`) checks it
 * here before it uses a byte of it as data. A damaged, truncated or
 * foreign file is reported as such (msg names the object and what is
 * wrong), never read as rows. Checked:
 *   - the root counts (points_total, points_valid, chunk_ids, chunks):
 *     present, integers, consistent with each other and with the
 *     extents of /results, /progress and /digests;
 *   - every table of /axes and /skipped: one-dimensional, its `digest`
 *     attribute equal to the digest of its bytes (digest.h), and the
 *     axis sizes multiply exactly to points_total;
 *   - the rows of a chunk: the columns id, status and *_idx are
 *     integers of the written widths, ids strictly increase inside the
 *     chunk's id range, every *_idx is the id's own mixed-radix index
 *     (so it lies inside its axis table), the status is a known code,
 *     and the digest of the rows equals the chunk's /digests entry.
 * The HDF5 1.10 format (checksummed metadata) catches most damage to
 * the file's structure first: such a file fails to open or to read.
 * Functions are local to one process (no MPI); under MPI each rank
 * checks its own share of the chunks on a file opened with MPI-IO.
 */
#ifndef MADSWEEP_VERIFY_H
#define MADSWEEP_VERIFY_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "../driver/space.h"

#define VERIFY_MSG 512

/* The root counts and axis sizes of a file. */
typedef struct verify_shape {
    int64_t total, valid, chunk, nchunks;
    int64_t radix[SPACE_NAXES];
} verify_shape;

/* Reads and checks the counts, the tables and the extents of /results,
 * /progress and /digests; 0, or -1 with msg set. */
int verify_shape_read(hid_t f, verify_shape *v, char *msg, size_t size);

/* A reader of the chunks of /results. */
typedef struct verify_rows {
    hid_t results, type; /* the dataset and its own (file) row type */
    size_t size;         /* bytes per row */
    size_t id, status, idx[SPACE_NAXES]; /* column offsets */
    verify_shape shape;
    char *buf;           /* one block of rows */
    int64_t cap;         /* rows in buf */
} verify_rows;

/* Opens /results and finds its columns; 0, or -1 with msg set. */
int verify_rows_open(verify_rows *v, hid_t f, const verify_shape *shape,
                     char *msg, size_t size);
void verify_rows_close(verify_rows *v);

/* Checks chunk c, whose rows are [row0, row0 + n), against its digest
 * `want`; 0, or -1 with msg set. */
int verify_chunk(verify_rows *v, int64_t c, int64_t row0, int64_t n,
                 uint64_t want, char *msg, size_t size);

/* Reads /progress and /digests (nchunks each) into the caller's arrays
 * (either may be NULL); 0, or -1 with msg set. */
int verify_read_progress(hid_t f, int64_t nchunks, uint8_t *done,
                         uint64_t *digests, char *msg, size_t size);

/* A finished file as a whole (serial): the shape, every progress byte
 * set, and every chunk's rows (streamed in blocks: memory is one block
 * plus the per-chunk arrays). 0, or -1 with msg set. */
int verify_file(hid_t f, char *msg, size_t size);

#endif
