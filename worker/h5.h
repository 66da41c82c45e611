/*
 * h5.h - the HDF5 patterns the sweep file repeats, written once: a
 * one-dimensional transfer of rows [at, at + n) (independent or
 * collective; a rank with nothing to write joins a collective one with
 * an empty selection), the rank-0 write of a whole table in a parallel
 * file (every rank calls, rank 0 alone transfers), the `digest`
 * attribute of a table (rank 0's digest, the same on every rank), and
 * reads of scalar attributes that report a missing or damaged attribute
 * instead of aborting (a damaged file is an input error).
 * Collective calls follow HDF5's rule for parallel metadata: every rank
 * calls with the same arguments (buffers aside).
 */
#ifndef MADSWEEP_H5_H
#define MADSWEEP_H5_H

#include <hdf5.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes rows [at, at + n) of the one-dimensional dataset d from buf (in
 * memory type mtype); at < 0: the whole dataset (also a scalar one).
 * n = 0 writes nothing (and joins a collective transfer). Returns
 * H5Dwrite's status (the caller decides what a failed write means). */
herr_t h5_write(hid_t d, hid_t mtype, int64_t at, int64_t n, const void *buf,
                bool collective);

/* Collective: rank 0 writes rows [at, at + n) of d (at < 0: all of it),
 * the other ranks join with nothing. Checked (check.h). */
void h5_write_root(hid_t d, hid_t mtype, int64_t at, int64_t n, const void *buf,
                   int rank);

/* Collective: attribute `digest` (uint64) of obj, rank 0's digest of
 * `bytes` bytes at p (worker/digest.h). */
void h5_attr_digest(hid_t obj, const void *p, size_t bytes, MPI_Comm comm, int rank);

/* A scalar integer attribute of loc: 0, or -1 when absent, damaged or of
 * another kind (never aborts). */
int h5_attr_get_i64(hid_t loc, const char *name, int64_t *v);

/* A fixed-length string attribute of loc in a calloc'ed buffer, or NULL
 * when absent, damaged or of another kind (never aborts). */
char *h5_attr_get_str(hid_t loc, const char *name);

#endif
