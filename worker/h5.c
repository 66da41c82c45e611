/*
 * h5.c - transfers and attributes the sweep file repeats (see h5.h).
 */
#include "h5.h"

#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "digest.h"

herr_t h5_write(hid_t d, hid_t mtype, int64_t at, int64_t n, const void *buf,
                bool collective)
{
    hid_t fs = CHECK_H5ID(H5Dget_space(d));
    hid_t ms;
    if (at < 0) {
        ms = CHECK_H5ID(H5Scopy(fs));
    } else {
        hsize_t start[1] = {(hsize_t)at}, count[1] = {(hsize_t)(n > 0 ? n : 1)};
        ms = CHECK_H5ID(H5Screate_simple(1, count, NULL));
        if (n > 0)
            CHECK_H5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
    }
    if (n <= 0) {
        CHECK_H5(H5Sselect_none(fs));
        CHECK_H5(H5Sselect_none(ms));
    }
    hid_t x = H5P_DEFAULT;
    if (collective) {
        x = CHECK_H5ID(H5Pcreate(H5P_DATASET_XFER));
        CHECK_H5(H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE));
    }
    herr_t rc = n > 0 || collective ? H5Dwrite(d, mtype, ms, fs, x, n > 0 ? buf : NULL) : 0;
    /* a failed write keeps its error stack and errno through the
     * closes, for the caller's check (check.h tells a full disk by them) */
    hid_t stack = rc < 0 ? H5Eget_current_stack() : -1;
    int err = errno;
    if (collective)
        H5Pclose(x);
    H5Sclose(ms);
    H5Sclose(fs);
    if (stack >= 0)
        H5Eset_current_stack(stack);
    errno = err;
    return rc;
}

void h5_write_root(hid_t d, hid_t mtype, int64_t at, int64_t n, const void *buf,
                   int rank)
{
    /* the whole dataset (at < 0) counts as n = 1 for the selection rule */
    int64_t mine = rank == 0 ? (at < 0 ? 1 : n) : 0;
    CHECK_H5(h5_write(d, mtype, at, mine, buf, true));
}

void h5_attr_digest(hid_t obj, const void *p, size_t bytes, MPI_Comm comm, int rank)
{
    uint64_t dg = rank == 0 ? digest_bytes(p, bytes) : 0;
    CHECK_MPI(MPI_Bcast(&dg, 1, MPI_UINT64_T, 0, comm));
    hid_t sp = CHECK_H5ID(H5Screate(H5S_SCALAR));
    htri_t e = H5Aexists(obj, "digest");
    CHECK_H5(e);
    if (e > 0)
        CHECK_H5(H5Adelete(obj, "digest"));
    hid_t a = CHECK_H5ID(H5Acreate2(obj, "digest", H5T_STD_U64LE, sp, H5P_DEFAULT,
                                    H5P_DEFAULT));
    CHECK_H5(H5Awrite(a, H5T_NATIVE_UINT64, &dg));
    CHECK_H5(H5Aclose(a));
    CHECK_H5(H5Sclose(sp));
}

int h5_attr_get_i64(hid_t loc, const char *name, int64_t *v)
{
    if (H5Aexists(loc, name) <= 0)
        return -1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    int rc = t >= 0 && s >= 0 && H5Tget_class(t) == H5T_INTEGER &&
                     H5Sget_simple_extent_npoints(s) == 1 &&
                     H5Aread(a, H5T_NATIVE_INT64, v) >= 0
                 ? 0
                 : -1;
    if (s >= 0)
        H5Sclose(s);
    if (t >= 0)
        H5Tclose(t);
    H5Aclose(a);
    return rc;
}

char *h5_attr_get_str(hid_t loc, const char *name)
{
    if (H5Aexists(loc, name) <= 0)
        return NULL;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : -1;
    char *buf = NULL;
    if (t >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) == 0) {
        size_t n = H5Tget_size(t);
        hid_t mt = H5Tcopy(H5T_C_S1);
        buf = n < (1u << 30) ? calloc(n + 1, 1) : NULL;
        if (!buf || mt < 0 || H5Tset_size(mt, n + 1) < 0 || H5Aread(a, mt, buf) < 0) {
            free(buf);
            buf = NULL;
        }
        if (mt >= 0)
            H5Tclose(mt);
    }
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return buf;
}
