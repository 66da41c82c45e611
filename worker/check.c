/*
 * check.c - failure paths of the checked-call macros (see check.h).
 */
#define _GNU_SOURCE /* EDQUOT */
#include "check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/statvfs.h>

_Noreturn void check_die(const char *msg, const char *file, int line)
{
    fprintf(stderr, "madsweep: %s:%d: %s\n", file, line, msg);
    fflush(stderr);
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down)
        MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

void check_mpi(int rc, const char *call, const char *file, int line)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING + 512];
    char why[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, why, &len) != MPI_SUCCESS)
        snprintf(why, sizeof why, "MPI error %d", rc);
    snprintf(text, sizeof text, "%s failed: %s", call, why);
    check_die(text, file, line);
}

/* H5Ewalk2 callback: is an entry a file write of the low-level driver? */
static herr_t check_h5_is_write(unsigned n, const H5E_error2_t *e, void *arg)
{
    (void)n;
    if (e->maj_num == H5E_IO && e->min_num == H5E_WRITEERROR && e->func_name &&
        strncmp(e->func_name, "H5FD_", 5) == 0)
        *(int *)arg = 1;
    return 0;
}

static void check_h5_fail(const char *call, const char *file, int line)
{
    int write = errno == ENOSPC || errno == EDQUOT;
    if (!write)
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, check_h5_is_write, &write);
    if (write) {
        /* a full disk at any phase (the axis tables, the layout, a
         * checkpoint) says so, without a stack: the file stays resumable
         * (claim.h, kept.h) */
        fprintf(stderr, "madsweep: %s:%d: cannot write the sweep file: the file "
                "system refused a write (%s); the file stays resumable: once "
                "the cause is gone, `madsweep sweep SPEC -o OUT --resume` "
                "finishes it\n", file, line,
                errno == ENOSPC || errno == EDQUOT ? strerror(errno)
                                                   : "full, over quota or failing");
        check_die("write failed", file, line);
    }
    fprintf(stderr, "madsweep: %s:%d: %s failed; HDF5 error stack:\n", file,
            line, call);
    H5Eprint2(H5E_DEFAULT, stderr);
    check_die("HDF5 call failed", file, line);
}

void check_h5(herr_t rc, const char *call, const char *file, int line)
{
    if (rc < 0)
        check_h5_fail(call, file, line);
}

hid_t check_h5id(hid_t id, const char *call, const char *file, int line)
{
    if (id < 0)
        check_h5_fail(call, file, line);
    return id;
}

_Noreturn void check_write_die(const char *path, int rank, const char *what,
                               const char *file, int line)
{
    struct statvfs fs;
    int full = path && statvfs(path, &fs) == 0 &&
               (unsigned long long)fs.f_bavail * fs.f_frsize < (1ull << 20);
    fprintf(stderr, "madsweep: rank %d: cannot write %s to %s: %s; the file "
            "keeps complete = 0 and the chunks written so far: once the "
            "cause is gone, `madsweep sweep SPEC -o %s --resume` finishes it\n",
            rank, what, path ? path : "the sweep file",
            full ? "the file system is full (No space left on device)"
                 : "the file system refused the write (full, over quota or "
                   "failing; the HDF5 error stack follows)",
            path ? path : "OUT");
    if (!full)
        H5Eprint2(H5E_DEFAULT, stderr);
    check_die("write failed", file, line);
}
