/*
 * h5same.c - are the datasets of two HDF5 files byte-identical?
 *
 *   h5same A.h5 B.h5
 *
 * Visits every dataset of A (H5Ovisit), checks B has the same set, and
 * compares each one's raw bytes read in its own type: the check of
 * scripts/sweep_diff.sh (root attributes are not compared), in a fraction
 * of h5diff's time on files of hundreds of MB (the job tests compare
 * several such files). Exit status 0 when identical, 1 otherwise.
 */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#include "h5read.h"

typedef struct h5same_list {
    char names[64][256];
    int n;
} h5same_list;

static herr_t h5same_visit(hid_t o, const char *name, const H5O_info_t *info,
                           void *arg)
{
    (void)o;
    h5same_list *l = arg;
    if (info->type == H5O_TYPE_DATASET && l->n < 64)
        snprintf(l->names[l->n++], 256, "%s", name);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: h5same A.h5 B.h5\n");
        return 2;
    }
    hid_t f[2];
    h5same_list l[2];
    for (int i = 0; i < 2; i++) {
        memset(&l[i], 0, sizeof l[i]);
        f[i] = H5Fopen(argv[i + 1], H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f[i] < 0 || H5Ovisit(f[i], H5_INDEX_NAME, H5_ITER_INC, h5same_visit,
                                 &l[i]) < 0) {
            fprintf(stderr, "h5same: cannot read %s\n", argv[i + 1]);
            return 1;
        }
    }
    int status = 0;
    if (l[0].n != l[1].n) {
        printf("DIFFERENT: the files hold %d and %d datasets\n", l[0].n, l[1].n);
        status = 1;
    }
    for (int k = 0; k < l[0].n; k++) {
        int same = h5read_same(f[0], f[1], l[0].names[k]);
        printf("%s: /%s\n", same ? "identical" : "DIFFERENT", l[0].names[k]);
        status |= !same;
    }
    H5Fclose(f[0]);
    H5Fclose(f[1]);
    return status;
}
