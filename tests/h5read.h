/*
 * h5read.h - whole-file reads of sweep files for the tests and h5same.
 *
 * Plain HDF5, no MPI, no CUnit: a dataset's raw bytes in its own file
 * type (what "byte-identical datasets" means for sweep files, as
 * scripts/sweep_diff.sh checks), and root attributes as the tests read
 * them. Every function returns a failure value instead of asserting, so
 * the caller decides what a missing dataset or attribute means.
 */
#ifndef MADSWEEP_H5READ_H
#define MADSWEEP_H5READ_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

/* Dataset `name` of f, read whole in its own type: a calloc'ed buffer of
 * *size bytes (and one more, zero), or NULL when it does not open or read. */
char *h5read_dataset(hid_t f, const char *name, size_t *size);

/* 1 when dataset `name` reads in both a and b and holds the same bytes. */
int h5read_same(hid_t a, hid_t b, const char *name);

/* Integer root attribute `name` of the file at `path`: -2 when the file
 * does not open, -1 when the attribute does not read. */
int64_t h5read_attr_i64(const char *path, const char *name);

/* String attribute `name` of loc in a calloc'ed buffer, or NULL. */
char *h5read_attr_str(hid_t loc, const char *name);

#endif
