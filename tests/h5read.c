/*
 * h5read.c - whole-file reads of sweep files for the tests and h5same
 * (see h5read.h).
 */
#include "h5read.h"

#include <stdlib.h>
#include <string.h>

char *h5read_dataset(hid_t f, const char *name, size_t *size)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0)
        return NULL;
    hid_t t = H5Dget_type(d);
    hid_t s = H5Dget_space(d);
    *size = (size_t)H5Sget_simple_extent_npoints(s) * H5Tget_size(t);
    char *buf = calloc(*size + 1, 1);
    if (buf && *size && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        free(buf);
        buf = NULL;
    }
    H5Sclose(s);
    H5Tclose(t);
    H5Dclose(d);
    return buf;
}

int h5read_same(hid_t a, hid_t b, const char *name)
{
    size_t na = 0, nb = 0;
    char *x = h5read_dataset(a, name, &na);
    char *y = h5read_dataset(b, name, &nb);
    int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

int64_t h5read_attr_i64(const char *path, const char *name)
{
    int64_t v = -1;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return -2;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    if (a >= 0) {
        H5Aread(a, H5T_NATIVE_INT64, &v);
        H5Aclose(a);
    }
    H5Fclose(f);
    return v;
}

char *h5read_attr_str(hid_t loc, const char *name)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return NULL;
    hid_t t = H5Aget_type(a);
    size_t n = H5Tget_size(t);
    char *v = calloc(n + 1, 1);
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, n + 1);
    if (v && H5Aread(a, mt, v) < 0) {
        free(v);
        v = NULL;
    }
    H5Tclose(mt);
    H5Tclose(t);
    H5Aclose(a);
    return v;
}
