/*
 * attr.c - scalar HDF5 attributes that replace an old value (see attr.h).
 */
#include "attr.h"

#include <string.h>

#include "check.h"

void attr_delete(hid_t loc, const char *name)
{
    htri_t e = H5Aexists(loc, name);
    CHECK_H5(e);
    if (e > 0)
        CHECK_H5(H5Adelete(loc, name));
}

void attr_str(hid_t loc, const char *name, const char *v)
{
    attr_delete(loc, name);
    hid_t t = CHECK_H5ID(H5Tcopy(H5T_C_S1));
    CHECK_H5(H5Tset_size(t, strlen(v) + 1));
    CHECK_H5(H5Tset_strpad(t, H5T_STR_NULLTERM));
    hid_t sp = CHECK_H5ID(H5Screate(H5S_SCALAR));
    hid_t a = CHECK_H5ID(H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_H5(H5Awrite(a, t, v));
    CHECK_H5(H5Aclose(a));
    CHECK_H5(H5Sclose(sp));
    CHECK_H5(H5Tclose(t));
}

void attr_strs(hid_t loc, const char *name, const char *v, int n, size_t width)
{
    attr_delete(loc, name);
    hsize_t dims[1] = {(hsize_t)n};
    hid_t t = CHECK_H5ID(H5Tcopy(H5T_C_S1));
    CHECK_H5(H5Tset_size(t, width));
    CHECK_H5(H5Tset_strpad(t, H5T_STR_NULLTERM));
    hid_t sp = CHECK_H5ID(H5Screate_simple(1, dims, NULL));
    hid_t a = CHECK_H5ID(H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_H5(H5Awrite(a, t, v));
    CHECK_H5(H5Aclose(a));
    CHECK_H5(H5Sclose(sp));
    CHECK_H5(H5Tclose(t));
}

void attr_num(hid_t loc, const char *name, hid_t ftype, hid_t mtype,
              const void *v)
{
    attr_delete(loc, name);
    hid_t sp = CHECK_H5ID(H5Screate(H5S_SCALAR));
    hid_t a = CHECK_H5ID(H5Acreate2(loc, name, ftype, sp, H5P_DEFAULT,
                                    H5P_DEFAULT));
    CHECK_H5(H5Awrite(a, mtype, v));
    CHECK_H5(H5Aclose(a));
    CHECK_H5(H5Sclose(sp));
}

void attr_i64(hid_t loc, const char *name, int64_t v)
{
    attr_num(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

void attr_f64(hid_t loc, const char *name, double v)
{
    attr_num(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}
