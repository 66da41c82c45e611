/*
 * verify.h - is a sweep file what it claims to be?
 *
 * Every reader of a sweep file (`best`, `point`, `sweep --resume`)
 * checks it here before it uses a byte of it as data. A damaged,
 * truncated or foreign file is reported as such (msg names the object
 * and what is wrong), never read as rows. Checked:
 *   - the root counts (points_total, points_valid, chunks, chunk_ids):
 *     present, integers, consistent with each other and with the extents
 *     of /results, /progress, /digests and /chunk_starts;
 *   - the file format (format_version: 1 or 2) and, format 2, its parts
 *     (worker/results.h: the logical row type, /parts/kind_of, the part
 *     tables and /parts/index);
 *   - every table of /axes and /skipped, /chunk_starts, /parts/kind_of,
 *     /groups and the checkpoints of /keep: one-dimensional, its `digest`
 *     attribute equal to the digest of its bytes (digest.h); the axis
 *     sizes multiply exactly to points_total; /chunk_starts starts at 0,
 *     increases and ends at points_valid;
 *   - /provenance: the catalogues table's digest and every stored
 *     catalogue text against its sha256 (provenance_verify);
 *   - the rows: the columns id, status and *_idx are integers of the
 *     written widths; ids strictly increase (keep = "all": row i is id
 *     i) below points_valid; every *_idx lies inside its axis table; the
 *     status is a known code; the digest of each chunk's rows as stored
 *     (the rows whose ids lie in the chunk's range of /chunk_starts: each
 *     one's /results row, then its part row) equals the chunk's /digests
 *     entry; and
 *     each chunk's /parts/index entry names the row and part rows it
 *     starts at.
 * The HDF5 1.10 format (checksummed metadata) catches most damage to
 * the file's structure first: such a file fails to open or to read.
 * Functions are local to one process (no MPI); under MPI every rank makes
 * the same opens (the file is opened with MPI-IO) and reads its share.
 */
#ifndef MADSWEEP_VERIFY_H
#define MADSWEEP_VERIFY_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "results.h"
#include "space.h"

#define VERIFY_MSG 512

/* The root counts, axis sizes and chunk cut of a laid-out file. */
typedef struct verify_shape {
    int64_t total, valid, nchunks;
    int64_t rows;      /* extent of /results */
    bool keep_all;     /* keep = "all": row i is point i */
    int64_t radix[SPACE_NAXES];
    int64_t *lo;       /* [nchunks + 1] /chunk_starts (malloc'ed) */
} verify_shape;

/* Reads and checks the counts, the extents and /chunk_starts; with
 * `tables`, also reads every table and checks its digest (else only
 * their extents: the opens are the same). 0, or -1 with msg set. */
int verify_shape_read(hid_t f, bool tables, verify_shape *v, char *msg, size_t size);
void verify_shape_free(verify_shape *v);

/* Checks the `digest` of table `name` (read when `read`; else only
 * opened); its row count in *n. 0, or -1 with msg set. */
int verify_table(hid_t f, const char *name, bool read, int64_t *n, char *msg,
                 size_t size);

/* A reader of the rows of a sweep file as stored. */
typedef struct verify_rows {
    results res;         /* the rows (results.h), fetched a block at a time */
    size_t size;         /* bytes per /results row */
    size_t id, status, idx[SPACE_NAXES]; /* column offsets in a /results row */
    const verify_shape *shape;
    int64_t cap;         /* rows per block */
} verify_rows;

/* Opens the rows and finds their columns; 0, or -1 with msg set. */
int verify_rows_open(verify_rows *v, hid_t f, const verify_shape *shape,
                     char *msg, size_t size);
void verify_rows_close(verify_rows *v);

/* keep = "all": checks chunk c, rows [lo[c], lo[c + 1]), against its
 * digest `want`; 0, or -1 with msg set. */
int verify_chunk(verify_rows *v, int64_t c, uint64_t want, char *msg, size_t size);

/* Streams rows [0, nrows), which must all belong to chunks [0, nch),
 * checking every row and the digest of each of those chunks against
 * dg[]; 0, or -1 with msg set. */
int verify_stream(verify_rows *v, int64_t nrows, int64_t nch, const uint64_t *dg,
                  char *msg, size_t size);

/* Reads /progress and /digests (nchunks each) into the caller's arrays
 * (either may be NULL); 0, or -1 with msg set. */
int verify_read_progress(hid_t f, int64_t nchunks, uint8_t *done,
                         uint64_t *digests, char *msg, size_t size);

/* A finished file as a whole (serial): the shape and tables, the
 * provenance, every progress byte set, and every row and chunk
 * (streamed in blocks: memory is one block plus the per-chunk arrays).
 * 0, or -1 with msg set. */
int verify_file(hid_t f, char *msg, size_t size);

#endif
