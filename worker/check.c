/*
 * check.c - failure paths of the checked-call macros (see check.h).
 */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

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

static void check_h5_fail(const char *call, const char *file, int line)
{
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
