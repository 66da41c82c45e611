/*
 * check.h - checked calls of MPI and HDF5.
 *
 * Every MPI and HDF5 call of the sweep goes through one of these macros:
 * on failure they print "FILE:LINE: the call: the library's error text"
 * (the HDF5 error stack, or MPI_Error_string) to stderr and abort the
 * whole job with MPI_Abort, so no rank is left waiting in a collective.
 * Failures the user can cause and fix (a missing file, a bad spec) are
 * checked explicitly before, with a normal message and exit code.
 */
#ifndef MADSWEEP_CHECK_H
#define MADSWEEP_CHECK_H

#include <hdf5.h>
#include <mpi.h>

#define CHECK_MPI(call) check_mpi((call), #call, __FILE__, __LINE__)
#define CHECK_H5(call) check_h5((herr_t)(call), #call, __FILE__, __LINE__)
#define CHECK_H5ID(call) check_h5id((call), #call, __FILE__, __LINE__)

void check_mpi(int rc, const char *call, const char *file, int line);
void check_h5(herr_t rc, const char *call, const char *file, int line);
hid_t check_h5id(hid_t id, const char *call, const char *file, int line);

/* A write to the sweep file `path` failed: prints which (`what`), and
 * that the file system is full when statvfs says so (else the HDF5
 * error stack), notes that the file stays resumable, and aborts. */
_Noreturn void check_write_die(const char *path, int rank, const char *what,
                               const char *file, int line);

/* Prints "FILE:LINE: msg" and aborts the job (MPI_Abort when MPI is up). */
_Noreturn void check_die(const char *msg, const char *file, int line);

#endif
