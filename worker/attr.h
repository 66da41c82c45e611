/*
 * attr.h - scalar HDF5 attributes of the sweep file (strings and
 * numbers) that replace an attribute of the same name. Every call is
 * checked (check.h): an HDF5 failure ends the job with the call named.
 * Collective in a parallel file: every rank calls with the same values.
 */
#ifndef MADSWEEP_ATTR_H
#define MADSWEEP_ATTR_H

#include <stdint.h>

#include <hdf5.h>

/* Deletes attribute `name` of loc when it exists. */
void attr_delete(hid_t loc, const char *name);

/* Sets a NUL-terminated fixed-length string attribute. */
void attr_str(hid_t loc, const char *name, const char *v);

/* Sets a one-dimensional attribute of n fixed-width strings: v holds n
 * NUL-terminated strings of `width` bytes each, back to back. */
void attr_strs(hid_t loc, const char *name, const char *v, int n, size_t width);

/* Sets a scalar attribute of file type ftype from *v of memory type mtype. */
void attr_num(hid_t loc, const char *name, hid_t ftype, hid_t mtype,
              const void *v);

/* Little-endian int64 and IEEE double scalars. */
void attr_i64(hid_t loc, const char *name, int64_t v);
void attr_f64(hid_t loc, const char *name, double v);

#endif
